#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=ucma,c timeout=1200
#
# rcm alone on this guest, its own rdma_cm device included, the C stack
# on the peer: the rdma-core tools both ways through librdmacm, and the
# raw command checks on both stacks, the C one the reference
# (rcm_ucma_dev_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_dev_lib.sh"
rcm_two_guests_start $(ucma_dev_points c)
ucma_dev_scenarios c
rcm_two_guests_finish
