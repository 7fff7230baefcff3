#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,c timeout=900
#
# NVMe over Fabrics (RDMA, rxe): the host on rcm's rdma_cm, the target on
# the in-tree C stack.
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
run_nvme_scenarios rcm c
