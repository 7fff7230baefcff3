#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,rcm timeout=1800
# rcm-test: full-only
#
# The kernel consumers with this guest (the clients: NVMe host, SRP
# initiator, RDS, NFS client, the ib_cm sample's client) on the in-tree C
# stack and the peer (the servers) on rcm; rcm_ucma_c.sh runs the other
# mixed direction. make test-full only (the CI budget): in make test C
# clients meet rcm's servers through the rdma-core tools (rcm_ucma_c)
# and the C rdma_cm's tools and ib_cm (rcm_cm_wire).
. "$(dirname "$(readlink -f "$0")")/rcm_storage_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_connect_lib.sh"
consumers() {
	storage_scenarios c rcm
	nvme_scenarios c rcm
	connect_scenarios ib_cm rcm
}
rcm_two_guests_run consumers
