#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-tree C rdma_cm and rdma_ucm on rcm's ib_cm exports (CM mode
# "hybrid"): rping, ucmatose and udaddy in both directions against the
# peer, whose mode the test's header names. cma.c is the most demanding
# ib_cm consumer in the tree and nobody here wrote it: if it works on rcm,
# the ib_cm ABI is right. rcm's message counters prove rcm carried it.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_tools_lib.sh"

# The module graph: rdma_cm links against rcm (rcm holds it), ib_cm is absent.
stack_is_hybrid() {
	ls /sys/module/rcm/holders/
	[ -d /sys/module/rcm/holders/rdma_cm ] && [ -d /sys/module/rdma_ucm ] &&
		[ ! -d /sys/module/ib_cm ]
}

run_hybrid_scenarios() { # <peer mode>
	rcm_needs_peer
	rcm_run hybrid_scenarios "$1"
}

hybrid_scenarios() {
	local peer_mode=$1 dir
	rcm_step rcm_kmemleak_clear
	[ "$peer_mode" = hybrid ] && rcm_step peer_run 'echo clear > /sys/kernel/debug/kmemleak' > /dev/null

	rcm_expect "this guest runs rcm under the in-tree rdma_cm and rdma_ucm, no ib_cm" \
		stack_is_hybrid

	rcm_step counts_before
	for dir in to_peer from_peer; do
		check_rping "$dir"
		check_ucmatose "$dir" 2
		check_udaddy "$dir"
	done
	check_reject_no_listener

	# Three connections each way (rping, ucmatose x2; plus the rejected
	# one) and a SIDR_REQ out: that many went through rcm's MAD agent.
	rcm_expect "rcm's counters: REQs sent and received, SIDR_REQ sent" carried_by_rcm 4 3 1
	[ "$peer_mode" = hybrid ] && rcm_step rcm_kmemleak_peer_start
	rcm_check_dmesg_clean
	rcm_check_kmemleak
	[ "$peer_mode" = hybrid ] && rcm_check_kmemleak_peer
}
