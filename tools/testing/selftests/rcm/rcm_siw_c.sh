#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,c timeout=900
# rcm-test: full-only
#
# rdma_cm over soft-iWARP, rcm on this guest and the C rdma_cm on the
# peer: rping and ucmatose each way, a refused connect, resource
# tracking, NVMe over Fabrics with rcm's host and the C target. make
# test-full only (the CI budget): make test runs this set rcm to rcm
# (rcm_ucma_dev) and rping over siw both ways against the C stack
# (rcm_ucma_c).
. "$(dirname "$(readlink -f "$0")")/rcm_siw_lib.sh"
run_siw_scenarios c
