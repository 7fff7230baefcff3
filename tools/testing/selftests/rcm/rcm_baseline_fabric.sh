#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,c timeout=240
# rcm-test: full-only
#
# Baseline fabric: two guests, both with the in-tree C connection manager,
# talk over soft-RoCE with the real rdma-core tools. This proves the test
# fabric and is the reference every later interop test compares against.
# make test-full only (the CI budget): in make test the same tools run
# against the C stack on the peer in rcm_ucma_c, both ways.
. "$(dirname "$(readlink -f "$0")")/rcm_tools_lib.sh"

baseline() {
	check_rping to_peer
	check_ucmatose to_peer
	check_udaddy to_peer
	check_reject_no_listener
	rcm_check_dmesg_clean
}
rcm_needs_peer
rcm_run baseline
