#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,rcm timeout=1500
#
# rcm's rdma_cm on both guests under the in-tree rdma_ucm, one boot for
# two scenario sets (the CI budget): the soft-iWARP set with NVMe-oF
# (rcm_siw_lib.sh), and in make test-full first the rdma-core tools, the
# kernel samples and a device removal over soft-RoCE (rcm_ucma_lib.sh).
# make test covers those elsewhere: the tools rcm to rcm through rcm's
# own device (rcm_ucma_dev), the in-tree rdma_ucm, samples and removal on
# rcm against the C stack (rcm_ucma_c).
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_siw_lib.sh"
if [ "${RCM_TEST_FULL:-0}" = 1 ]; then
	rcm_two_guests_start $(($(ucma_points rcm) + SIW_POINTS))
	ucma_scenarios rcm
else
	rcm_two_guests_start $SIW_POINTS
fi
siw_scenarios rcm
rcm_two_guests_finish
