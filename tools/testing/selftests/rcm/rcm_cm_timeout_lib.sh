#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A silent peer: the other guest has an RDMA device but no CM, so REQs and
# SIDR_REQs to it are dropped without an answer. The sample client on rcm
# (or on the C CM, in rcm_cm_timeout_c.sh, the reference) must get
# IB_CM_REQ_ERROR (SIDR_REQ_ERROR) after exactly the configured retries:
# max_cm_retries + 1 sends, each waiting 2 packet lifetimes plus the
# remote CM response time (the C CM's arithmetic, 2^(x-8) ms per IBA
# time x). Checked on the wire too: the counters show the retries.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_lib.sh"
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_trace_lib.sh"

SAMPLE_KO=/lib/modules/$(uname -r)/extra/rcm_test_conn.ko
CNT=/sys/class/infiniband/rxe0/ports/1
PLT=14 # the sample's packet lifetime

# <cm_timeout> <retries>: one REQ into the void; elapsed time within
# [expected - 5%, expected * 1.5 + 300 ms] (TCG guests run late, never early).
timeout_after() {
	local t=$1 r=$2 per expected ms tx0 tx1 rt0 rt1
	per=$(( (1 << (PLT - 8)) * 2 + (1 << (t > 8 ? t - 8 : 0)) ))
	expected=$(( per * (r + 1) ))
	tx0=$(cat $CNT/cm_tx_msgs/req) rt0=$(cat $CNT/cm_tx_retries/req)
	dmesg -c > /dev/null
	insmod "$SAMPLE_KO" role=client peer="$RCM_PEER" expect=timeout \
		cm_timeout="$t" retries="$r" || { dmesg | tail -3; return 1; }
	rmmod rcm_test_conn
	ms=$(dmesg | sed -n 's/.*REQ timed out after \([0-9]*\) ms/\1/p' | tail -1)
	tx1=$(cat $CNT/cm_tx_msgs/req) rt1=$(cat $CNT/cm_tx_retries/req)
	echo "cm_timeout $t, $r retries: REQ_ERROR after ${ms:-?} ms (expected $expected);" \
		"$((tx1 - tx0)) REQs sent, $((rt1 - rt0)) of them retries"
	[ -n "$ms" ] && [ "$ms" -ge $((expected * 95 / 100)) ] &&
		[ "$ms" -le $((expected * 3 / 2 + 300)) ] &&
		[ $((tx1 - tx0)) = $((r + 1)) ] && [ $((rt1 - rt0)) = "$r" ]
}

sidr_timeout() {
	local tx0 tx1
	tx0=$(cat $CNT/cm_tx_msgs/sidr_req)
	insmod "$SAMPLE_KO" role=client peer="$RCM_PEER" expect=sidr retries=2 2> /dev/null
	rmmod rcm_test_conn 2> /dev/null
	tx1=$(cat $CNT/cm_tx_msgs/sidr_req)
	echo "$((tx1 - tx0)) SIDR_REQs sent"
	dmesg | grep -q 'conn 0: QP 0x[0-9a-f]*, result -110' && [ $((tx1 - tx0)) = 3 ]
}

# A consumer blocking in its handler holds up no other id's protocol: while
# another id's handler sleeps 4 s, the REQ's retries (at 0, 0.4, 0.8 and
# 1.2 s) are all on the wire 2.5 s in; its REQ_ERROR still arrives.
blocked_handler() {
	local tx0 mid end pid rc=0
	tx0=$(cat $CNT/cm_tx_msgs/req)
	dmesg -c > /dev/null
	insmod "$SAMPLE_KO" role=client peer="$RCM_PEER" expect=timeout \
		cm_timeout=16 retries=3 stall_ms=4000 &
	pid=$!
	sleep 2.5
	mid=$(cat $CNT/cm_tx_msgs/req)
	wait $pid || rc=1
	rmmod rcm_test_conn
	end=$(cat $CNT/cm_tx_msgs/req)
	echo "REQs sent while a handler blocked: $((mid - tx0)) of 4 after 2.5 s, $((end - tx0)) in all"
	dmesg | grep -q 'stall: event' || { echo "the blocking handler never ran"; rc=1; }
	[ $rc = 0 ] && [ $((mid - tx0)) = 4 ] && [ $((end - tx0)) = 4 ]
}

# rcm.peer_window=4 and 12 connects at once to the silent peer: the
# window's 4 REQs go out, the rest wait for room. A request leaves the
# window at its first retry (2176 ms in with cm_timeout 19), so the 12 go
# out 4 at a time, a timeout apart, each still sent twice before its
# REQ_ERROR. Sampled by the counters, not the clock: until the first retry
# is counted the REQs on the wire rise to exactly 4 (the 12 callers post
# theirs one by one, so a sample may land between the first and the
# fourth) and never past it. The samples are bash builtins (read from the
# counter files, a timed read on a fifo for the pause), so a slow guest
# still samples many times a second: forking a cat per read let a slow
# guest miss the whole window. A shell starved past the first retry takes
# no sample; that try says so and the storm runs again (3 tries), while
# any sample of more than 4 fails at once.
paced_storm_once() {
	local tx0 rt0 r1 m r2 end pid rc=0 i pause fifo
	PACED_FIRST=none PACED_SAMPLES=0
	fifo=/tmp/paced_storm.fifo
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	exec {pause}<> "$fifo"
	read -r tx0 < $CNT/cm_tx_msgs/req
	read -r rt0 < $CNT/cm_tx_retries/req
	dmesg -c > /dev/null
	insmod "$SAMPLE_KO" role=client peer="$RCM_PEER" expect=timeout conns=12 parallel=12 \
		cm_timeout=19 retries=1 &
	pid=$!
	for ((i = 0; i < 2000; i++)); do
		# Retries read on both sides of the sends: a sample counts only if
		# no retry was counted around it.
		read -r r1 < $CNT/cm_tx_retries/req
		read -r m < $CNT/cm_tx_msgs/req
		read -r r2 < $CNT/cm_tx_retries/req
		[ "$r2" != "$rt0" ] && break
		if [ "$r1" = "$rt0" ] && [ "$m" != "$tx0" ]; then
			# The most seen on the wire before the first retry.
			if [ "$PACED_FIRST" = none ] || [ $((m - tx0)) -gt "$PACED_FIRST" ]; then
				PACED_FIRST=$((m - tx0))
			fi
			PACED_SAMPLES=$((PACED_SAMPLES + 1))
		fi
		read -rt 0.01 -u "$pause" _
	done
	exec {pause}>&-
	rm -f "$fifo"
	wait $pid || rc=1
	rmmod rcm_test_conn
	end=$(($(cat $CNT/cm_tx_msgs/req) - tx0))
	echo "12 connects behind a window of 4: at most $PACED_FIRST REQs on the wire before the first retry" \
		"($PACED_SAMPLES samples), $end in all" | tee -a "$PACED_LOG"
	[ $rc = 0 ] && [ $end = 24 ]
}

# The tries' summaries, reported whether the point passes or not.
PACED_LOG=/tmp/paced_storm.log

paced_storm() {
	local param=/sys/module/rcm/parameters/peer_window old try rc=1
	old=$(cat $param)
	echo 4 > $param
	for try in 1 2 3; do
		paced_storm_once || break
		[ "$PACED_FIRST" = none ] && continue
		[ "$PACED_FIRST" = 4 ] && rc=0
		break
	done
	echo "$old" > $param
	return $rc
}

# This guest runs a CM ($1), the peer none.
cm_alone() {
	[ -n "$1" ] && ! peer_run cat /proc/modules | grep -qE '^(ib_cm|rcm) '
}

# timeout_scenarios: this guest's CM (rcm or the C one) against a peer
# without one.
timeout_scenarios() {
	local CM
	CM=$(grep -oE '^(rcm|ib_cm) ' /proc/modules | head -1)
	rcm_expect "this guest runs ${CM:-no CM}, the peer has no CM" \
		cm_alone "$CM"
	rcm_expect "REQ_ERROR after 3 retries of 384 ms each (1536 ms)" timeout_after 16 3
	rcm_expect "REQ_ERROR after 1 retry of 1152 ms each (2304 ms)" timeout_after 18 1
	rcm_expect "SIDR_REQ_ERROR after 2 retries (3 SIDR_REQs on the wire)" sidr_timeout
	if [ "${CM%% *}" = ib_cm ]; then
		rcm_skip "trace events: a REQ's 3 resends and its REQ_ERROR (rcm's own events; C CM: none)"
	else
		rcm_expect "trace events: a REQ's 3 resends and its REQ_ERROR (rcm's own events)" timeout_traced
	fi
	if [ "${CM%% *}" = ib_cm ]; then
		# The C CM counts a request once its MAD completes, after the last
		# retry, so its counters cannot show retries in flight.
		rcm_skip "a handler blocked 4 s holds up no retransmission of another id (C CM: counters only at completion)"
	else
		rcm_expect "a handler blocked 4 s holds up no retransmission of another id" blocked_handler
	fi
	if [ "${CM%% *}" = ib_cm ]; then
		rcm_skip "a storm waits behind the window of requests per peer (rcm.peer_window)"
	else
		rcm_step rm -f "$PACED_LOG"
		rcm_expect "12 REQs at once to a silent peer go out 4 at a time (rcm.peer_window=4)" paced_storm
		rcm_step rcm_log_file "$PACED_LOG"
	fi
}
