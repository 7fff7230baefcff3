#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,rcm timeout=2400
# rcm-test: full-only
#
# make test runs these scenario sets in CM mode ucma (rcm_ucma_dev.sh);
# here in CM mode rcm, librdmacm on the in-tree rdma_ucm.
#
# The kernel consumers with rcm on both sides, in one boot: SRP, RDS and
# NFS over RDMA (rcm_storage_lib.sh); NVMe over Fabrics (discover,
# connect, I/O verified, disconnect, reconnect rounds, the target port
# bouncing under a live controller; rcm_nvme_lib.sh); the
# ib_cm connection scenarios of modules/rcm_test_conn
# (rcm_connect_lib.sh), which end with device removals on the peer; and
# last, both guests on soft-iWARP instead: the in-tree rdma_ucm's tools
# and NVMe over Fabrics through iw_cm (rcm_siw_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_storage_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_connect_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_siw_lib.sh"
consumers() {
	storage_scenarios rcm rcm
	nvme_scenarios rcm rcm
	connect_scenarios rcm rcm
	siw_scenarios rcm
}
rcm_two_guests_run consumers
