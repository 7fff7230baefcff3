#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,c timeout=600
#
# The in-tree rdma_ucm on rcm's rdma_cm against the all-C stack on the
# peer, each side client and server once.
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_lib.sh"
run_ucma_scenarios c
