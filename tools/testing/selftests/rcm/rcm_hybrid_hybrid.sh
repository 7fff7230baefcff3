#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=hybrid,hybrid timeout=600
# rcm-test: full-only
#
# The in-tree rdma_cm and rdma_ucm on rcm's ib_cm on both guests.
. "$(dirname "$(readlink -f "$0")")/rcm_hybrid_lib.sh"
run_hybrid_scenarios hybrid
