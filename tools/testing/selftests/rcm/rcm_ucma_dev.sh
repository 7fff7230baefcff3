#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=ucma,ucma timeout=1200
#
# rcm alone on both guests, its own rdma_cm device included: the
# rdma-core tools through librdmacm, unmodified (rcm_ucma_dev_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_ucma_dev_lib.sh"
rcm_two_guests_start $(ucma_dev_points ucma)
ucma_dev_scenarios ucma
rcm_two_guests_finish
