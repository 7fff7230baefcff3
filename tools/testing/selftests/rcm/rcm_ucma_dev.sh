#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=ucma,ucma timeout=2400
#
# rcm alone on both guests, its own rdma_cm device included, one boot for
# every scenario set of this pairing (the CI budget): the rdma-core tools
# through librdmacm, unmodified, IPv6, namespaces and the abuse campaign
# (rcm_ucma_dev_lib.sh); the kernel consumers on rcm's rdma_cm: SRP, RDS and NFS over RDMA
# (rcm_storage_lib.sh), NVMe over Fabrics (discover, connect, I/O
# verified, disconnect, reconnect rounds, the target port bouncing and
# device removals under a live controller; rcm_nvme_lib.sh); the ib_cm
# connection scenarios of modules/rcm_test_conn (rcm_connect_lib.sh),
# which end with device removals on the peer; and last, both guests on
# soft-iWARP instead: the tools and NVMe over Fabrics through iw_cm
# (rcm_siw_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_dev_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_storage_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_connect_lib.sh"

ucma_dev() {
	ucma_dev_scenarios ucma
	storage_scenarios rcm rcm
	nvme_scenarios rcm rcm
	connect_scenarios rcm rcm
	siw_scenarios ucma
}
rcm_two_guests_run ucma_dev
