#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,c timeout=2400
#
# rcm on this guest, the C stack on the peer, one boot for every scenario
# set of this direction (the CI budget): the in-tree rdma_ucm with the
# rdma-core tools both ways, the kernel samples (the misuse cases also on
# the C rdma_cm, the reference), a neighbour storm and a device removal
# (rcm_ucma_lib.sh); SRP, RDS and NFS with rcm's clients and the C
# servers (rcm_storage_lib.sh); NVMe-oF with rcm's host and the C target
# (rcm_nvme_lib.sh); the ib_cm sample's connection scenarios, client on
# rcm (rcm_connect_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_storage_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_connect_lib.sh"
rcm_two_guests_start $(($(ucma_points c) + $(storage_points) + $(nvme_points rcm c) + $(connect_points)))
ucma_scenarios c
storage_scenarios rcm c
nvme_scenarios rcm c
connect_scenarios rcm ib_cm
rcm_two_guests_finish
