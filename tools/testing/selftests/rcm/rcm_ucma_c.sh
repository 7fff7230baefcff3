#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,c timeout=2400
#
# rcm on this guest, the C stack on the peer, one boot for every scenario
# set of this direction (the CI budget). First CM mode rcm: the in-tree
# rdma_ucm on rcm's rdma_cm with the rdma-core tools, the kernel samples
# (in make test-full the misuse cases also on the C rdma_cm, the
# reference), a neighbour storm and a device removal (rcm_ucma_lib.sh);
# in make test-full SRP, RDS and NFS with rcm's clients and the C servers
# (rcm_storage_lib.sh) and NVMe-oF with rcm's host and the C target
# (rcm_nvme_lib.sh); the ib_cm sample's connection scenarios, client on
# rcm (rcm_connect_lib.sh). Then this guest turns to CM mode ucma, rcm
# alone with its own rdma_cm device: the rdma-core tools both ways through
# librdmacm, the raw command checks on both stacks, the C one the
# reference, and last both on soft-iWARP (rcm_ucma_dev_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_storage_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_connect_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_dev_lib.sh"

ucma_c() {
	ucma_scenarios c
	# The storage consumers against the C servers in make test-full;
	# make test runs them rcm to rcm (rcm_ucma_dev.sh), the wire against
	# the C CM is the tools' and the ib_cm sample's here (the CI budget).
	if rcm_full; then
		storage_scenarios rcm c
		nvme_scenarios rcm c
	fi
	connect_scenarios rcm ib_cm
	switch_to_own_device
	ucma_dev_scenarios c
	ucma_dev_siw c
}
rcm_two_guests_run ucma_c
