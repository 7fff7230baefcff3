#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,rcm timeout=600
#
# The in-tree rdma_ucm on rcm's rdma_cm in both guests: rping and
# ucmatose each way.
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_lib.sh"
run_ucma_scenarios rcm
