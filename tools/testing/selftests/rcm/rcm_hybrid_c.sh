#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=hybrid,c timeout=600
# rcm-test: full-only
#
# The in-tree rdma_cm and rdma_ucm on rcm's ib_cm against the all-C stack
# on the peer, each side client and server once. make test-full only (the
# CI budget): in make test rcm's ib_cm exports carry the ib_cm samples and
# ib_srpt (rcm_ucma_dev, rcm_ucma_c), and the wire against the C CM
# is checked both ways (rcm_cm_wire, rcm_ucma_c).
. "$(dirname "$(readlink -f "$0")")/rcm_hybrid_lib.sh"
run_hybrid_scenarios c
