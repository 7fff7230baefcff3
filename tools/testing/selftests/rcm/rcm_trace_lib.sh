#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm's trace events, read through tracefs as perf, trace-cmd and bpftrace
# read them. The ib_cma and rdma_cma events must be the C CM's: the same
# names and the same fields (each event's format file, IDs aside, compared
# with the C CM's in the other guest), and they must fire with the state,
# reason and handler return of what happened. rcm's own events (system
# rcm) report what 6.12 does not trace: messages received, retransmissions,
# timed-out exchanges and ids' state changes.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_lib.sh"

TRACING=/sys/kernel/tracing
# The events both CMs have, as 6.12's ib_cm and rdma_cm name them.
SHARED_EVENTS="ib_cma/icm_send_req ib_cma/icm_send_rep ib_cma/icm_send_rtu
	ib_cma/icm_send_mra ib_cma/icm_send_rej ib_cma/icm_send_dreq ib_cma/icm_send_drep
	ib_cma/icm_send_sidr_req ib_cma/icm_send_sidr_rep ib_cma/icm_send_dup_req
	ib_cma/icm_send_dup_rep rdma_cma/cm_event_handler rdma_cma/cm_event_done"

# Commands that run on either guest: start recording the given systems
# afresh, and print what was recorded.
TRACE_START='t=/sys/kernel/tracing; [ -d $t/events ] || mount -t tracefs nodev $t
	echo 0 > $t/options/record-cmd; echo 0 > $t/tracing_on; echo > $t/trace
	for s in SYSTEMS; do echo 1 > $t/events/$s/enable; done; echo 1 > $t/tracing_on'
TRACE_STOP='t=/sys/kernel/tracing; echo 0 > $t/tracing_on; cat $t/trace
	for s in SYSTEMS; do echo 0 > $t/events/$s/enable; done'
trace_start() { sh -c "${TRACE_START//SYSTEMS/$*}"; }
trace_stop() { sh -c "${TRACE_STOP//SYSTEMS/$*}"; }
peer_trace_start() { peer_run "${TRACE_START//SYSTEMS/$*}"; }
peer_trace_stop() { peer_run "${TRACE_STOP//SYSTEMS/$*}"; }

# An event's format without its ID line: the fields and the output.
event_format() { # <system/event>
	sed '/^ID:/d' "$TRACING/events/$1/format"
}

# Every shared event exists on both sides with the same format (here the
# C CM's, on the peer rcm's).
formats_match() {
	local ev mine theirs bad=0
	rcm_tracefs || return 1
	peer_run 't=/sys/kernel/tracing; [ -d $t/events ] || mount -t tracefs nodev $t' > /dev/null
	for ev in $SHARED_EVENTS; do
		mine=$(event_format "$ev" 2>&1) || { echo "C CM: no $ev"; bad=1; continue; }
		theirs=$(peer_run "sed '/^ID:/d' $TRACING/events/$ev/format") ||
			{ echo "rcm: no $ev"; bad=1; continue; }
		if [ "$mine" != "$theirs" ]; then
			echo "$ev differs:"
			diff <(printf '%s\n' "$mine") <(printf '%s\n' "$theirs") | head -8
			bad=1
		fi
	done
	[ $bad = 0 ] && echo "$(echo $SHARED_EVENTS | wc -w) events, formats identical"
	return $bad
}

# <trace> <pattern...>: each pattern matches a line of the trace (tracefs
# names an event without its system).
trace_has() {
	local trace=$1 p missing=0
	shift
	for p in "$@"; do
		printf '%s\n' "$trace" | grep -q -E "$p" || { echo "no line matches: $p"; missing=1; }
	done
	[ $missing = 0 ] || printf '%s\n' "$trace" | grep -v '^#' | tail -25
	return $missing
}

# Each id's state changes in <trace> chain up: every change leaves the
# state the one before it entered.
states_chained() { # <trace>
	printf '%s\n' "$1" | awk '/icm_state: local_id=/ {
		match($0, /local_id=[0-9]+ [A-Z_]+ -> [A-Z_]+/)
		split(substr($0, RSTART + 9, RLENGTH - 9), f, " ")
		if ((f[1] in last) && last[f[1]] != f[2]) {
			print "id " f[1] " left " f[2] " after entering " last[f[1]]; bad = 1
		}
		last[f[1]] = f[4]; n++
	} END { if (n == 0) { print "no icm_state events"; bad = 1 } exit bad }'
}

# One rping connection from this guest's C CM to rping's server on the
# peer's rcm: rcm's side of it in its trace, message by message with the
# states the C CM's events would show, and every rdma_cm event its
# consumer (rdma_ucm, for rping) handled, with the handler's return.
connection_traced() {
	local trace
	peer_trace_start "ib_cma rdma_cma rcm" > /dev/null || return 1
	peer_start trace_srv "rping -s -a $RCM_PEER -p 7175 -C 2" > /dev/null
	rcm_retry 20 rping -c -a "$RCM_PEER" -p 7175 -C 2 || { echo "$RCM_RETRY_OUT" | tail -3; return 1; }
	peer_wait trace_srv 30 > /dev/null
	trace=$(peer_trace_stop "ib_cma rdma_cma rcm")
	trace_has "$trace" \
		'icm_recv: REQ local_id=[0-9]+ remote_id=[0-9]+ state=REQ_RCVD reason=0 handled' \
		'cm_event_handler: cm.id=[0-9]+ src=10\.0\.0\.2:7175 dst=10\.0\.0\.1:[0-9]+ tos=0 CONNECT_REQUEST \(4/0\)' \
		'cm_event_done: .* CONNECT_REQUEST consumer returns 0' \
		'icm_send_rep: local_id=[0-9]+ remote_id=[0-9]+ state=REP_SENT lap_state=LAP_UNINIT' \
		'icm_recv: RTU .*state=ESTABLISHED reason=0 handled' \
		'cm_event_handler: .* ESTABLISHED \(9/0\)' \
		'icm_recv: DREQ .*state=(DREQ_RCVD|TIMEWAIT) reason=0 handled|icm_send_dreq: .*state=DREQ_SENT' \
		'icm_send_drep: .*state=TIMEWAIT|icm_recv: DREP .*state=TIMEWAIT' \
		'cm_event_handler: .* DISCONNECTED \(10/0\)' \
		'icm_state: local_id=[0-9]+ IDLE -> LISTEN' \
		'icm_state: local_id=[0-9]+ IDLE -> REQ_RCVD' \
		'icm_state: local_id=[0-9]+ (REQ_RCVD|MRA_REQ_SENT) -> REP_SENT' \
		'icm_state: local_id=[0-9]+ REP_SENT -> ESTABLISHED' \
		'icm_state: local_id=[0-9]+ ESTABLISHED -> DREQ_(RCVD|SENT)' \
		'icm_state: local_id=[0-9]+ DREQ_(RCVD|SENT) -> TIMEWAIT' &&
		states_chained "$trace"
}

# A REQ to a service nobody listens on: rcm's REJ event names its reason.
reject_traced() {
	local trace
	peer_trace_start "ib_cma rcm" > /dev/null || return 1
	timeout 60 rping -c -a "$RCM_PEER" -p 7176 -C 1 > /dev/null 2>&1
	trace=$(peer_trace_stop "ib_cma rcm")
	trace_has "$trace" \
		'icm_recv: REQ local_id=0 remote_id=[0-9]+ state=- reason=0 answered \(no id\)' \
		'icm_send_rej: local_id=0 remote_id=[0-9]+ state=IDLE reason=REJ_INVALID_SERVICE_ID'
}

# The trace points against the C CM in the other guest.
trace_scenarios() {
	rcm_expect "trace events: ib_cma's and rdma_cma's formats are the C CM's" formats_match
	rcm_expect "trace events: a connection's messages, state changes and rdma_cm events on rcm's side" \
		connection_traced
	rcm_expect "trace events: rcm's REJ to an unknown service names reason 8" reject_traced
}

# A REQ into a silent peer (rcm_cm_timeout_lib.sh): each retransmission
# and the give-up in rcm's own events.
timeout_traced() {
	local trace n
	trace_start "ib_cma rcm"
	insmod "$SAMPLE_KO" role=client peer="$RCM_PEER" expect=timeout cm_timeout=16 retries=3 ||
		{ trace_stop "ib_cma rcm" > /dev/null; return 1; }
	rmmod rcm_test_conn
	trace=$(trace_stop "ib_cma rcm")
	n=$(printf '%s\n' "$trace" | grep -c 'icm_resend: REQ local_id=[0-9]* remote_id=0 state=REQ_SENT')
	echo "$n REQs resent"
	trace_has "$trace" 'icm_send_req: local_id=[0-9]+ remote_id=0 state=REQ_SENT' \
		'icm_timeout: local_id=[0-9]+ REQ_ERROR' && [ "$n" = 3 ]
}
