#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The rdma-core tools between the two guests, in either direction: each
# check runs a tool's server on one side and its client on the other and
# verifies both outputs. Sourced by the fabric, hybrid and (later) ucma
# tests; the CM modes of the guests decide what is under test.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_lib.sh"

PINGS=10

# rcm's CM message counters of rxe0's port.
CNT=/sys/class/infiniband/rxe0/ports/1

count() { cat "$CNT/$1"; }

# At least $1 REQs sent, $2 received and $3 SIDR_REQs sent since the
# counts in $before.
carried_by_rcm() {
	local tx rx sidr
	tx=$(($(count cm_tx_msgs/req) - before_tx))
	rx=$(($(count cm_rx_msgs/req) - before_rx))
	sidr=$(($(count cm_tx_msgs/sidr_req) - before_sidr))
	echo "REQs sent $tx, REQs received $rx, SIDR_REQs sent $sidr"
	[ $tx -ge "$1" ] && [ $rx -ge "$2" ] && [ $sidr -ge "$3" ]
}

# run_pair <to_peer|from_peer> <job> <server cmd> <client cmd>: @SERVER@ in
# either command is the server's address. The client is retried while the
# server starts; each try may take $CLIENT_TIMEOUT s, so a hung connection
# fails the check instead of the whole test. Sets PAIR_CLIENT_OUT and
# PAIR_SERVER_OUT; fails if either side failed.
CLIENT_TIMEOUT=60
run_pair() {
	local dir=$1 job=$2 srv=$3 cli="timeout $CLIENT_TIMEOUT $4" addr rc=0 pid
	if [ "$dir" = to_peer ]; then
		addr=$RCM_PEER
		peer_start "$job" "${srv//@SERVER@/$addr}"
		rcm_retry 20 sh -c "${cli//@SERVER@/$addr}" || rc=1
		PAIR_CLIENT_OUT=$RCM_RETRY_OUT
		PAIR_SERVER_OUT=$(peer_wait "$job" 60) || rc=1
	else
		addr=$RCM_ADDR
		timeout 90 sh -c "${srv//@SERVER@/$addr}" > "/tmp/pair.$job.out" 2>&1 &
		pid=$!
		PAIR_CLIENT_OUT=$(peer_run "i=0; while :; do out=\$(${cli//@SERVER@/$addr} 2>&1) && { echo \"\$out\"; exit 0; }; i=\$((i+1)); [ \$i -ge 20 ] && { echo \"\$out\"; exit 1; }; sleep 1; done") || rc=1
		wait "$pid" || rc=1
		PAIR_SERVER_OUT=$(cat "/tmp/pair.$job.out")
	fi
	return $rc
}

pair_failed() { # print both outputs as diagnostics
	printf '%s\n' "client:" "$PAIR_CLIENT_OUT" "server:" "$PAIR_SERVER_OUT" | tail -40 | sed 's/^/# /'
}

# The words for a direction in test point names.
pair_words() { [ "$1" = to_peer ] && echo "this guest -> peer" || echo "peer -> this guest"; }

# rping: an RC connection, $PINGS RDMA ping iterations verified by both sides.
check_rping() {
	local dir=$1 rc=0 n
	run_pair "$dir" rping "rping -s -a @SERVER@ -C $PINGS -v" "rping -c -a @SERVER@ -C $PINGS -v" || rc=1
	n=$(printf '%s\n' "$PAIR_CLIENT_OUT" | grep -c '^ping data: rdma-ping-')
	[ "$n" = "$PINGS" ] || { rcm_log "client saw $n pings, expected $PINGS"; rc=1; }
	n=$(printf '%s\n' "$PAIR_SERVER_OUT" | grep -c '^server ping data: rdma-ping-')
	[ "$n" = "$PINGS" ] || { rcm_log "server saw $n pings, expected $PINGS"; rc=1; }
	[ $rc = 0 ] || pair_failed
	ktap_test_result "rping -C $PINGS ($(pair_words "$dir")): connect, data, disconnect" [ $rc = 0 ]
}

# A librdmacm example that ends both sides with "test complete":
# check_complete <dir> <job> <server cmd> <client cmd> <what it did>.
check_complete() {
	local dir=$1 job=$2 rc=0
	run_pair "$dir" "$job" "$3" "$4" || rc=1
	printf '%s\n' "$PAIR_CLIENT_OUT" | grep -q '^test complete' || rc=1
	printf '%s\n' "$PAIR_SERVER_OUT" | grep -q '^test complete' || rc=1
	[ $rc = 0 ] || pair_failed
	ktap_test_result "$job ($(pair_words "$dir")): $5" [ $rc = 0 ]
}

# ucmatose: $2 RC connections on one event channel, messages both ways.
check_ucmatose() {
	local conns=${2:-2}
	check_complete "$1" ucmatose "ucmatose -c $conns -C 5" "ucmatose -s @SERVER@ -c $conns -C 5" \
		"$conns connections, 5 messages each way"
}

# udaddy: UD service id resolution (SIDR) and datagrams.
check_udaddy() {
	check_complete "$1" udaddy "udaddy -c 1 -C 5" "udaddy -s @SERVER@ -c 1 -C 5" \
		"SIDR resolution and UD messages"
}

# A connect to a port nobody listens on is rejected by the peer's CM with
# reason 8 (invalid service id).
check_reject_no_listener() {
	local out
	out=$(timeout 30 rping -c -a "$RCM_PEER" -p 7174 -C 1 -v 2>&1)
	if printf '%s\n' "$out" | grep -q 'RDMA_CM_EVENT_REJECTED, error 8'; then
		ktap_test_pass "connect to a port with no listener: REJECTED, reason 8"
	else
		printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
		ktap_test_fail "connect to a port with no listener: REJECTED, reason 8"
	fi
}
