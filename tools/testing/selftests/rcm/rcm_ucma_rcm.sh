#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,rcm timeout=1500
# rcm-test: full-only
#
# rcm's rdma_cm on both guests under the in-tree rdma_ucm: the rdma-core
# tools both ways, the kernel samples and a device removal over soft-RoCE
# (rcm_ucma_lib.sh). make test-full only (the CI budget): make test runs
# the tools rcm to rcm through rcm's own device (rcm_ucma_dev), and the
# in-tree rdma_ucm, the samples and the removal on rcm against the C
# stack (rcm_ucma_c); its soft-iWARP set runs in rcm_ucma_dev (and in make test-full rcm_consumers_rcm).
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_lib.sh"
rcm_two_guests_run ucma_scenarios rcm
