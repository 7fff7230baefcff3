#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,rcm timeout=1500
#
# rcm's rdma_cm on both guests, one boot for two scenario sets (the CI
# budget): the in-tree rdma_ucm with the rdma-core tools, the kernel
# samples and a device removal over soft-RoCE (rcm_ucma_lib.sh), then the
# same stack over soft-iWARP with NVMe-oF (rcm_siw_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_siw_lib.sh"
rcm_two_guests_start $(($(ucma_points rcm) + SIW_POINTS))
ucma_scenarios rcm
siw_scenarios rcm
rcm_two_guests_finish
