#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,rcm timeout=900
# rcm-test: full-only
#
# NVMe over Fabrics (RDMA, rxe): the host on the in-tree C stack, the
# target on rcm's rdma_cm (make test-full; make test runs the other mixed
# direction).
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
run_nvme_scenarios c rcm
