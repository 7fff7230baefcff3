#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-tree rdma_ucm on rcm's rdma_cm (CM mode "rcm"): the rdma-core
# tools through ucma.c, the most demanding rdma_cm consumer in the tree,
# which nobody here wrote. Both directions against the peer, whose mode the
# test's header names. rcm's message counters prove rcm carried it.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_tools_lib.sh"

CNT=/sys/class/infiniband/rxe0/ports/1

count() { cat "$CNT/$1"; }

# The module graph: rdma_ucm links against rcm (rcm holds it); neither
# ib_cm nor rdma_cm is loaded.
stack_is_rcm() {
	ls /sys/module/rcm/holders/
	[ -d /sys/module/rcm/holders/rdma_ucm ] && [ ! -d /sys/module/rdma_cm ] &&
		[ ! -d /sys/module/ib_cm ]
}

# At least $1 REQs sent and $2 received since the counts in $before.
carried_by_rcm() {
	local tx rx
	tx=$(($(count cm_tx_msgs/req) - before_tx))
	rx=$(($(count cm_rx_msgs/req) - before_rx))
	echo "REQs sent $tx, REQs received $rx"
	[ $tx -ge "$1" ] && [ $rx -ge "$2" ]
}

# run_ucma_scenarios <peer mode>
run_ucma_scenarios() {
	local peer_mode=$1 dir
	ktap_print_header
	if [ "$RCM_PEER" = none ]; then
		ktap_skip_all "needs a peer guest"
		exit "$KSFT_SKIP"
	fi
	ktap_set_plan $(( $([ "$peer_mode" = rcm ] && echo 10 || echo 9) ))
	modprobe rdma_ucm
	[ "$peer_mode" = rcm ] && peer_run 'modprobe rdma_ucm' > /dev/null
	rcm_kmemleak_clear
	[ "$peer_mode" = rcm ] && peer_run 'echo clear > /sys/kernel/debug/kmemleak' > /dev/null

	rcm_expect "this guest runs the in-tree rdma_ucm on rcm's rdma_cm" stack_is_rcm

	before_tx=$(count cm_tx_msgs/req) before_rx=$(count cm_rx_msgs/req)
	for dir in to_peer from_peer; do
		check_rping "$dir"
		check_ucmatose "$dir" 2
	done
	check_reject_no_listener

	# Three connections each way (rping, ucmatose x2; plus the rejected
	# one) went through rcm's MAD agent.
	rcm_expect "rcm's counters: REQs sent and received" carried_by_rcm 4 3
	rcm_check_dmesg_clean
	rcm_check_kmemleak
	[ "$peer_mode" = rcm ] && rcm_check_kmemleak_peer
	ktap_finished
}
