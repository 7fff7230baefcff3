#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,rcm timeout=900
# rcm-test: full-only
#
# RC connections through the ib_cm API, client on ib_cm, server on rcm
# (scenarios in rcm_connect_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_connect_lib.sh"
run_connect_scenarios ib_cm rcm
