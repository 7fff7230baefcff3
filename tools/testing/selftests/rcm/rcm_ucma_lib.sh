#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-tree rdma_ucm on rcm's rdma_cm (CM mode "rcm"): the rdma-core
# tools (rping, ucmatose) through ucma.c, the most demanding rdma_cm consumer in the tree,
# which nobody here wrote. Both directions against the peer, whose mode the
# test's header names. rcm's message counters prove rcm carried it.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_tools_lib.sh"

# The module graph: rdma_ucm links against rcm (rcm holds it); neither
# ib_cm nor rdma_cm is loaded.
stack_is_rcm() {
	ls /sys/module/rcm/holders/
	[ -d /sys/module/rcm/holders/rdma_ucm ] && [ ! -d /sys/module/rdma_cm ] &&
		[ ! -d /sys/module/ib_cm ]
}

# A listening rping server on this guest's address when its device goes:
# the server hears DEVICE_REMOVAL and ends, the removal completes (rcm
# waits for the id to be destroyed, by ucma here), and the device comes
# back and serves again.
device_removal_with_listener() {
	local pid i
	rping -s -a "$RCM_ADDR" -C 1 > /tmp/rping-removal.out 2>&1 &
	pid=$!
	sleep 2
	timeout 60 rdma link delete rxe0 || { echo "rdma link delete did not finish"; return 1; }
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	kill "$pid" 2> /dev/null && { echo "rping server still running"; return 1; }
	cat /tmp/rping-removal.out
	dmesg | grep -q 'rxe0: going: 1 rdma_cm id(s) released' || { dmesg | tail -5; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || return 1
	rcm_retry 20 sh -c "timeout 30 rping -c -a $RCM_PEER -C 2 -v"
}

# run_ucma_scenarios <peer mode>
run_ucma_scenarios() {
	local peer_mode=$1 dir
	ktap_print_header
	if [ "$RCM_PEER" = none ]; then
		ktap_skip_all "needs a peer guest"
		exit "$KSFT_SKIP"
	fi
	ktap_set_plan $(( $([ "$peer_mode" = rcm ] && echo 11 || echo 10) ))
	modprobe rdma_ucm
	[ "$peer_mode" = rcm ] && peer_run 'modprobe rdma_ucm' > /dev/null
	rcm_kmemleak_clear
	[ "$peer_mode" = rcm ] && peer_run 'echo clear > /sys/kernel/debug/kmemleak' > /dev/null

	rcm_expect "this guest runs the in-tree rdma_ucm on rcm's rdma_cm" stack_is_rcm

	before_tx=$(count cm_tx_msgs/req) before_rx=$(count cm_rx_msgs/req)
	before_sidr=$(count cm_tx_msgs/sidr_req)
	for dir in to_peer from_peer; do
		check_rping "$dir"
		check_ucmatose "$dir" 2
	done
	check_reject_no_listener

	# Three connections each way (rping, ucmatose x2; plus the rejected
	# one) went through rcm's MAD agent.
	rcm_expect "rcm's counters: REQs sent and received" carried_by_rcm 4 3 0
	# The peer's rping server for the connect after the device is back.
	peer_start removal "rping -s -a $RCM_PEER -C 2 -v"
	rcm_expect "rdma link delete under a listening id: DEVICE_REMOVAL, the id released, the device serves again" \
		device_removal_with_listener
	peer_wait removal 60 > /dev/null
	rcm_check_dmesg_clean
	rcm_check_kmemleak
	[ "$peer_mode" = rcm ] && rcm_check_kmemleak_peer
	ktap_finished
}
