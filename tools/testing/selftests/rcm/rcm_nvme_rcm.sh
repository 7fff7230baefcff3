#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,rcm timeout=900
#
# NVMe over Fabrics (RDMA, rxe) with rcm's rdma_cm on both host and
# target: discover, connect, I/O verified, disconnect, reconnect rounds,
# the target port bouncing under a live controller.
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
run_nvme_scenarios rcm rcm
