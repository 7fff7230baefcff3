#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,none timeout=300
# rcm-test: full-only
#
# The timeout set of rcm_module_load.sh (rcm_cm_timeout_lib.sh) with the
# in-tree C CM as the client: the reference for the retry count and
# intervals rcm must match.
. "$(dirname "$(readlink -f "$0")")/rcm_cm_timeout_lib.sh"
rcm_two_guests_run timeout_scenarios
