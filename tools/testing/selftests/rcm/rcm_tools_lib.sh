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

# The counts carried_by_rcm starts from.
counts_before() {
	before_tx=$(count cm_tx_msgs/req) before_rx=$(count cm_rx_msgs/req)
	before_sidr=$(count cm_tx_msgs/sidr_req)
}

# At least $1 REQs sent, $2 received and $3 SIDR_REQs sent since
# counts_before.
carried_by_rcm() {
	local tx rx sidr
	tx=$(($(count cm_tx_msgs/req) - before_tx))
	rx=$(($(count cm_rx_msgs/req) - before_rx))
	sidr=$(($(count cm_tx_msgs/sidr_req) - before_sidr))
	echo "REQs sent $tx, REQs received $rx, SIDR_REQs sent $sidr"
	[ $tx -ge "$1" ] && [ $rx -ge "$2" ] && [ $sidr -ge "$3" ]
}

# run_pair <to_peer|from_peer> <job> <server cmd> <client cmd>: @SERVER@ in
# either command is the server's address. The client starts once the
# server's listening id is in `rdma res show cm_id` (a wildcard listener
# too: 6.12 lists it per device; a server never listed fails the pair),
# and runs once: each try may take $CLIENT_TIMEOUT s, so a hung
# connection fails the check instead of the whole test. A listening id is
# not yet a listener on every device (a wildcard one on iWARP listens per
# device after it), so a client refused (REFUSED_RE, or PAIR_RETRY_RE a
# scenario set names) gets a fresh server and tries again, up to 3 times,
# each logged; any other failure fails the pair. A retried client alone
# could leave a server that counts connections with one from each try.
# Sets PAIR_CLIENT_OUT and PAIR_SERVER_OUT; fails if either side failed.
CLIENT_TIMEOUT=60
LISTENING="rdma res show cm_id | grep -q 'state LISTEN'"
# The same question to the peer, answered in seconds or asked again.
peer_listening() { RCM_PEER_IDLE=20 peer_run "$LISTENING"; }
REFUSED_RE='Connection refused|REJECTED, error (8|-111)'
PAIR_RETRY_RE=${PAIR_RETRY_RE:-$REFUSED_RE}
# What both guests show of a pair that has not finished: the kernel stacks
# of the client's and the server's processes (by program name) and the CM
# message counters, taken while a hung client still runs (a timeout
# would take its stack with it).
PAIR_SNAPSHOT=/tmp/pair.snapshot
pair_snapshot_cmd() { # <program...>
	local p
	for p in "$@"; do
		printf 'for p in $(pgrep -x %s); do echo "%s $p: $(grep State /proc/$p/status)"; cat /proc/$p/stack; done; ' "$p" "$p"
	done
	echo 'for d in /sys/class/infiniband/*/ports/1/cm_tx_msgs; do [ -d "$d" ] || continue; p=${d%/cm_tx_msgs}; for c in cm_tx_msgs cm_rx_msgs cm_tx_retries cm_rx_duplicates; do printf "%s %s:" "${p#/sys/class/infiniband/}" $c; for m in req rep rtu rej mra dreq drep; do printf " %s=%s" $m "$(cat $p/$c/$m)"; done; echo; done; done'
}
pair_snapshot() { # <client program> <server program>
	echo "$((CLIENT_TIMEOUT - 5)) s into the client:"
	echo "this guest:"
	sh -c "$(pair_snapshot_cmd "$@")"
	echo "peer:"
	RCM_PEER_IDLE=20 peer_run "$(pair_snapshot_cmd "$@")"
}

run_pair() {
	# Line-buffered: the output a timeout kills survives as diagnostics.
	local dir=$1 job=$2 srv="stdbuf -oL $3" cli="timeout $CLIENT_TIMEOUT stdbuf -oL $4" addr rc try pid watch
	local programs
	programs=$(printf '%s %s' "${4%% *}" "${3%% *}")
	[ "$dir" = to_peer ] && addr=$RCM_PEER || addr=$RCM_ADDR
	srv=${srv//@SERVER@/$addr}
	cli=${cli//@SERVER@/$addr}
	for try in 1 2 3; do
		rc=0
		rm -f "$PAIR_SNAPSHOT"
		# Its output goes nowhere: a caller that reads the pair's output
		# (rcm_expect) waits for every holder of it, and the sleep holds
		# it for its whole length once the kill below has ended its shell.
		# shellcheck disable=SC2086 # the two program names
		(sleep $((CLIENT_TIMEOUT - 5)) && pair_snapshot $programs > "$PAIR_SNAPSHOT" 2>&1) > /dev/null 2>&1 &
		watch=$!
		if [ "$dir" = to_peer ]; then
			peer_start "$job" "$srv"
			rcm_retry 20 peer_listening || { echo "# $job: the peer's server is not listed as listening"; rc=1; }
			PAIR_CLIENT_OUT=$(sh -c "$cli" 2>&1) || rc=1
		else
			timeout 90 sh -c "$srv" > "/tmp/pair.$job.out" 2>&1 &
			pid=$!
			rcm_retry 20 sh -c "$LISTENING" || { echo "# $job: this guest's server is not listed as listening"; rc=1; }
			PAIR_CLIENT_OUT=$(peer_run "$cli") || rc=1
		fi
		kill "$watch" 2> /dev/null
		wait "$watch" 2> /dev/null
		if [ $rc = 0 ] || ! printf '%s\n' "$PAIR_CLIENT_OUT" | grep -Eq "$PAIR_RETRY_RE" || [ $try = 3 ]; then
			break
		fi
		echo "# $job: client refused on try $try, a fresh server for the next:"
		printf '%s\n' "$PAIR_CLIENT_OUT" | grep -E "$PAIR_RETRY_RE" | head -2 | sed 's/^/#   /'
		if [ "$dir" = to_peer ]; then
			peer_wait "$job" 1 > /dev/null
		else
			kill "$pid" 2> /dev/null
			wait "$pid"
		fi
	done
	# A failed client's ids, and the server's, while the server still runs.
	PAIR_IDS=""
	[ $rc = 0 ] || PAIR_IDS=$(echo "this guest:"; rdma res show cm_id
		echo "peer:"; peer_run 'rdma res show cm_id'
		[ ! -s "$PAIR_SNAPSHOT" ] || cat "$PAIR_SNAPSHOT")
	if [ "$dir" = to_peer ]; then
		PAIR_SERVER_OUT=$(peer_wait "$job" 60) || rc=1
	else
		wait "$pid" || rc=1
		PAIR_SERVER_OUT=$(cat "/tmp/pair.$job.out")
	fi
	return $rc
}

pair_failed() { # print the end of both outputs as diagnostics
	{
		echo "client:"
		printf '%s\n' "$PAIR_CLIENT_OUT" | tail -20
		echo "server:"
		printf '%s\n' "$PAIR_SERVER_OUT" | tail -20
		[ -z "${PAIR_IDS:-}" ] || printf 'rdma_cm ids when the client failed:\n%s\n' "$PAIR_IDS"
	} | sed 's/^/# /'
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

# mckey: one guest joins IP multicast group 239.1.2.3 (RoCE v2: IGMP on
# eth0 and the group's address handle) and receives 3 datagrams the other
# sends to the group, in rounds of 5 until the receiver has them (UD: a
# round sent before the receiver is attached is lost). <to_peer|from_peer>:
# this guest sends or receives; with "send-only" the sender joins as a
# send-only full member (JOIN_MCAST's join flag: no IGMP join, no receive).
check_mckey() {
	local dir=$1 rc=0 recv_out send_out i pid
	local group=239.1.2.3 n=3 send="-s" what=""
	[ "${2:-}" = send-only ] && { send="-s -o"; what="send-only sender, "; }
	if [ "$dir" = to_peer ]; then
		peer_start mckey "timeout 90 mckey -m $group -b $RCM_PEER -C $n"
		for ((i = 0; i < 30; i++)); do
			sleep 2
			send_out=$(timeout 30 mckey -m $group -b "$RCM_ADDR" $send -C 5 2>&1) || rc=1
			peer_run "[ -f /tmp/job.mckey.rc ]" > /dev/null && break
		done
		recv_out=$(peer_wait mckey 90) || rc=1
	else
		timeout 90 mckey -m $group -b "$RCM_ADDR" -C $n > /tmp/mckey.out 2>&1 &
		pid=$!
		for ((i = 0; i < 30; i++)); do
			sleep 2
			send_out=$(peer_run "timeout 30 mckey -m $group -b $RCM_PEER $send -C 5") || rc=1
			kill -0 "$pid" 2> /dev/null || break
		done
		wait "$pid" || rc=1
		recv_out=$(cat /tmp/mckey.out)
	fi
	printf '%s\n' "$recv_out" | grep -q 'data transfers complete' || rc=1
	if [ $rc != 0 ]; then
		printf '%s\n' "sender:" "$send_out" "receiver:" "$recv_out" | tail -30 | sed 's/^/# /'
	fi
	ktap_test_result "mckey ($(pair_words "$dir")): ${what}join $group, $n datagrams received" [ $rc = 0 ]
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

# rping -q: the application creates and moves its own QP (INIT_QP_ATTR
# for each state) on both sides.
check_rping_own_qp() {
	local dir=$1 rc=0
	run_pair "$dir" rpingq "rping -s -q -a @SERVER@ -C 3 -v" "rping -c -q -a @SERVER@ -C 3 -v" || rc=1
	[ "$(printf '%s\n' "$PAIR_CLIENT_OUT" | grep -c '^ping data: rdma-ping-')" = 3 ] || rc=1
	[ $rc = 0 ] || pair_failed
	ktap_test_result "rping -q ($(pair_words "$dir")): the application's own QP" [ $rc = 0 ]
}

# ucmatose with many connections on one channel.
check_ucmatose_many() {
	check_complete "$1" ucmatose-100 "ucmatose -c 100 -C 2" "ucmatose -s @SERVER@ -c 100 -C 2" \
		"100 connections, 2 messages each way"
}

# ucmatose with its options: the server migrates each new id to a channel
# of its own (-m), type of service and ACK timeout set by SET_OPTION (-t,
# -a).
check_ucmatose_options() {
	check_complete "$1" ucmatose-m "ucmatose -c 4 -C 2 -m" "ucmatose -s @SERVER@ -c 4 -C 2 -t 32 -a 14" \
		"migrated ids, TOS and ACK timeout"
}

# rsockets: rstream and riostream move 100 transfers of 4 KiB; each
# socket is an rdma_cm id with a synchronous channel.
check_rsocket() { # <dir> <rstream|riostream>
	local dir=$1 tool=$2 rc=0
	run_pair "$dir" "$tool" "$tool -b @SERVER@ -S 4096 -C 100" "$tool -s @SERVER@ -S 4096 -C 100" || rc=1
	printf '%s\n' "$PAIR_CLIENT_OUT" | grep -q '^4k_lat\|^4k_bw\|4k' || rc=1
	[ $rc = 0 ] || pair_failed
	ktap_test_result "$tool ($(pair_words "$dir")): 100 transfers of 4 KiB over rsockets" [ $rc = 0 ]
}

# rdma_server / rdma_client: synchronous ids (rdma_create_ep), the
# request's id migrated in rdma_get_request, one message each way.
check_rdma_server() {
	local dir=$1 rc=0
	run_pair "$dir" rdma_server "rdma_server -s @SERVER@" "rdma_client -s @SERVER@" || rc=1
	printf '%s\n' "$PAIR_CLIENT_OUT" | grep -q 'rdma_client: end 0' || rc=1
	printf '%s\n' "$PAIR_SERVER_OUT" | grep -q 'rdma_server: end 0' || rc=1
	[ $rc = 0 ] || pair_failed
	ktap_test_result "rdma_server / rdma_client ($(pair_words "$dir")): synchronous ids" [ $rc = 0 ]
}

# Stops a server that runs until stopped (cmtime's) and checks that it
# went: a process left behind keeps its device (rxe cannot disassociate a
# user context, so removing the device waits for it to exit).
CMTIME_STOP='pkill -x cmtime; i=0
	while pgrep -x cmtime > /dev/null; do
		i=$((i + 1))
		if [ $i -ge 50 ]; then
			for p in $(pgrep -x cmtime); do
				echo "cmtime $p survived SIGTERM:"; grep -E "^(State|SigCgt)" /proc/$p/status
				cat /proc/$p/stack 2> /dev/null | head -12
			done
			pkill -9 -x cmtime; exit 1
		fi
		sleep 0.1
	done'

# cmtime: $2 connections set up at once and torn down, each step timed;
# its server runs until stopped.
check_cmtime() {
	local dir=$1 n=$2 rc=0 out stop pid
	if [ "$dir" = to_peer ]; then
		peer_start cmtime "timeout 300 cmtime -b $RCM_PEER -c $n"
		rcm_retry 20 peer_listening
		out=$(timeout 240 cmtime -s "$RCM_PEER" -c "$n" 2>&1) || rc=1
		stop=$(peer_run "$CMTIME_STOP") || rc=1
		peer_wait cmtime 10 > /dev/null
	else
		timeout 300 cmtime -b "$RCM_ADDR" -c "$n" > /tmp/cmtime.out 2>&1 &
		pid=$!
		rcm_retry 20 sh -c "$LISTENING"
		out=$(peer_run "timeout 240 cmtime -s $RCM_ADDR -c $n") || rc=1
		stop=$(sh -c "$CMTIME_STOP") || rc=1
		wait "$pid"
	fi
	[ -z "$stop" ] || printf '%s\n' "$stop" | sed 's/^/# /'
	printf '%s\n' "$out" | grep -q '^connect' && printf '%s\n' "$out" | grep -q '^disconnect' || rc=1
	printf '%s\n' "$out" | sed 's/^/# /'
	ktap_test_result "cmtime -c $n ($(pair_words "$dir")): every step of $n connections" [ $rc = 0 ]
}

# rping over IPv6 to the peer: a global address (fd00:7::/64, added to both
# eth0s) and the link-local one with its scope.
IPV6_NET=fd00:7
ipv6_up() {
	ip -6 addr replace "$IPV6_NET::${RCM_ADDR##*.}/64" dev eth0 nodad &&
		peer_run "ip -6 addr replace $IPV6_NET::${RCM_PEER##*.}/64 dev eth0 nodad" > /dev/null
}
peer_link_local() {
	peer_run "ip -6 addr show dev eth0 scope link" | sed -n 's/.*inet6 \(fe80[^/]*\)\/.*/\1/p' | head -1
}
check_rping_ipv6() {
	local which=$1 server rc=0
	if [ "$which" = global ]; then
		ipv6_up || rc=1
		server=$IPV6_NET::${RCM_PEER##*.}
	else
		server=$(peer_link_local)%eth0
	fi
	[ $rc = 0 ] && { run_pair to_peer "rping6" "rping -s -a $server -C 3 -v" \
		"rping -c -a $server -C 3 -v" || rc=1; }
	[ "$(printf '%s\n' "$PAIR_CLIENT_OUT" | grep -c '^ping data: rdma-ping-')" = 3 ] || rc=1
	[ $rc = 0 ] || pair_failed
	ktap_test_result "rping over IPv6 ($which: $server)" [ $rc = 0 ]
}

# rping between two network namespaces of this guest: a veth pair, an RDMA
# device on each end, each tool in its namespace, so each id resolves and
# binds in its own namespace. The devices are siw: 6.12's rxe sends and
# receives through UDP sockets of the initial namespace only, so RoCE
# between namespaces does not work in that kernel (with either CM).
check_rping_netns() {
	local rc=0 out
	ip netns add rcm1 && ip netns add rcm2 &&
		ip link add rcmv1 type veth peer name rcmv2 &&
		ip link set rcmv1 netns rcm1 && ip link set rcmv2 netns rcm2 &&
		ip -n rcm1 addr add 192.168.77.1/24 dev rcmv1 &&
		ip -n rcm2 addr add 192.168.77.2/24 dev rcmv2 &&
		ip -n rcm1 link set rcmv1 up && ip -n rcm2 link set rcmv2 up &&
		modprobe siw && ip netns exec rcm1 rdma link add swns1 type siw netdev rcmv1 &&
		ip netns exec rcm2 rdma link add swns2 type siw netdev rcmv2 || { rc=1; out="namespace setup failed"; }
	if [ $rc = 0 ]; then
		timeout 60 ip netns exec rcm2 rping -s -a 192.168.77.2 -C 3 -v > /tmp/rping-ns.out 2>&1 &
		rcm_retry 20 sh -c "$LISTENING"
		out=$(timeout 30 ip netns exec rcm1 rping -c -a 192.168.77.2 -C 3 -v 2>&1) || rc=1
		wait
		[ "$(printf '%s\n' "$out" | grep -c '^ping data: rdma-ping-')" = 3 ] || rc=1
		# The namespaces keep their addresses apart: from this one the
		# address does not resolve.
		timeout 10 rping -c -a 192.168.77.2 -C 1 > /dev/null 2>&1 && rc=1
	fi
	[ $rc = 0 ] || { printf '%s\n' "$out" | tail -10 | sed 's/^/# /'; sed 's/^/# /' /tmp/rping-ns.out 2> /dev/null | tail -10; }
	ip netns exec rcm1 rdma link delete swns1 2> /dev/null
	ip netns exec rcm2 rdma link delete swns2 2> /dev/null
	ip netns del rcm1 2> /dev/null
	ip netns del rcm2 2> /dev/null
	ktap_test_result "rping between two network namespaces (veth, a siw device in each)" [ $rc = 0 ]
}

# Each check above is one test point.
rcm_each_a_point check_rping check_ucmatose check_udaddy check_mckey check_reject_no_listener \
	check_rping_own_qp check_ucmatose_many check_ucmatose_options check_rsocket check_rdma_server \
	check_cmtime check_rping_ipv6 check_rping_netns
