#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,c timeout=240
#
# Baseline fabric: two guests, both with the in-tree C connection manager,
# talk over soft-RoCE with the real rdma-core tools. This proves the test
# fabric and is the reference every later interop test compares against.
. "$(dirname "$(readlink -f "$0")")/rcm_lib.sh"

PINGS=10
server=$RCM_PEER

ktap_print_header
if [ "$RCM_PEER" = none ]; then
	ktap_skip_all "needs a peer guest"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 5

# rping: RC connection, $PINGS RDMA ping iterations verified by both sides.
test_rping() {
	local client_out server_out rc=0 n
	peer_start rping "rping -s -a $server -C $PINGS -v"
	rcm_retry 20 rping -c -a "$server" -C "$PINGS" -v || rc=1
	client_out=$RCM_RETRY_OUT
	server_out=$(peer_wait rping 60) || rc=1
	n=$(printf '%s\n' "$client_out" | grep -c '^ping data: rdma-ping-')
	[ "$n" = "$PINGS" ] || { rcm_log "client saw $n pings, expected $PINGS"; rc=1; }
	n=$(printf '%s\n' "$server_out" | grep -c '^server ping data: rdma-ping-')
	[ "$n" = "$PINGS" ] || { rcm_log "server saw $n pings, expected $PINGS"; rc=1; }
	if [ $rc != 0 ]; then
		printf '%s\n' "client:" "$client_out" "server:" "$server_out" | tail -40 | sed 's/^/# /'
	fi
	ktap_test_result "rping -C $PINGS over rxe: connect, data, disconnect" [ $rc = 0 ]
}

# ucmatose: two RC connections on one event channel, messages both ways.
test_ucmatose() {
	local out server_out rc=0
	peer_start ucmatose "ucmatose -c 2 -C 5"
	rcm_retry 20 ucmatose -s "$server" -c 2 -C 5 || rc=1
	out=$RCM_RETRY_OUT
	server_out=$(peer_wait ucmatose 60) || rc=1
	printf '%s\n' "$out" | grep -q '^test complete' || rc=1
	printf '%s\n' "$server_out" | grep -q '^test complete' || rc=1
	[ $rc = 0 ] || printf '%s\n' "client:" "$out" "server:" "$server_out" | tail -40 | sed 's/^/# /'
	ktap_test_result "ucmatose: 2 connections, 5 messages each way" [ $rc = 0 ]
}

# udaddy: UD service id resolution (SIDR) and datagrams.
test_udaddy() {
	local out server_out rc=0
	peer_start udaddy "udaddy -c 1 -C 5"
	rcm_retry 20 udaddy -s "$server" -c 1 -C 5 || rc=1
	out=$RCM_RETRY_OUT
	server_out=$(peer_wait udaddy 60) || rc=1
	printf '%s\n' "$out" | grep -q '^test complete' || rc=1
	printf '%s\n' "$server_out" | grep -q '^test complete' || rc=1
	[ $rc = 0 ] || printf '%s\n' "client:" "$out" "server:" "$server_out" | tail -40 | sed 's/^/# /'
	ktap_test_result "udaddy: SIDR resolution and UD messages" [ $rc = 0 ]
}

# A connect to a port nobody listens on is rejected by the peer's CM with
# reason 8 (invalid service id).
test_reject_no_listener() {
	local out
	out=$(timeout 30 rping -c -a "$server" -p 7174 -C 1 -v 2>&1)
	if printf '%s\n' "$out" | grep -q 'RDMA_CM_EVENT_REJECTED, error 8'; then
		ktap_test_pass "connect to a port with no listener: REJECTED, reason 8"
	else
		printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
		ktap_test_fail "connect to a port with no listener: REJECTED, reason 8"
	fi
}

test_rping
test_ucmatose
test_udaddy
test_reject_no_listener
rcm_check_dmesg_clean
ktap_finished
