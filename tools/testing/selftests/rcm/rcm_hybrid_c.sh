#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=hybrid,c timeout=600
#
# The in-tree rdma_cm and rdma_ucm on rcm's ib_cm against the all-C stack
# on the peer, each side client and server once.
. "$(dirname "$(readlink -f "$0")")/rcm_hybrid_lib.sh"
run_hybrid_scenarios c
