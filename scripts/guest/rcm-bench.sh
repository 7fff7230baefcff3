#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`, inside the driver guest (both guests in CM mode "both"):
# connection setup and teardown through the C CM and through rcm in the
# same boot of the same kernel, alternating C, rcm, C, rcm on both guests
# (round by round; the rdma_cm runs point by point), client here, server
# on the peer: ib_cm with tools/testing/selftests/rcm/modules/rcm_test_conn
# (connect, one message, disconnect), rdma_cm with rcm_sample_rdma
# (resolve, connect, disconnect; without and with QPs; and 10,000 held up
# at once for the memory per id, then disconnected at once), the wall time
# of `nvme connect` with 4 I/O queues to an nvmet-rdma target on the peer,
# and cmtime's steps through librdmacm (the C rdma_ucm; rcm's own device
# with rcm.ucma=1; and, as "rcmk", the in-tree rdma_ucm on rcm's rdma_cm)
# with what each side's CM sent per connection.
# librdmacm's per-command steps (each also profiled with perf) on C, on
# rcm's own device and on rcm under the in-tree rdma_ucm.
# Prints each run and the rcm/C ratio of the summed times. RCM_BENCH_ONLY
# picks runs (ib_cm,steps,rdma_cm,hold,nvme,commands,cmtime),
# RCM_BENCH_ROUNDS the rounds;
# RCM_BENCH_STEP_CONNS, RCM_BENCH_RDMA_POINTS (<connections>:<in flight>,
# comma-separated), RCM_BENCH_HOLD_CONNS and RCM_BENCH_CMTIME_POINTS the
# sizes.
. /kselftest/rcm/rcm_nvme_lib.sh
. /kselftest/rcm/rcm_cm_switch_lib.sh
. /usr/lib/rcm/rcm-bench-trace.sh

SAMPLE=/lib/modules/$(uname -r)/extra/rcm_test_conn.ko
RDMA_SAMPLE=/lib/modules/$(uname -r)/extra/rcm_sample_rdma.ko
# rdma_cm runs, "<connections>:<in flight>" each.
RDMA_POINTS=$(echo "${RCM_BENCH_RDMA_POINTS:-1000:1,1000:100,1000:1000,10000:100,10000:1000}" | tr , ' ')
# The hold run: this many connections up at once (memory per id), then
# disconnected at once (lost DREPs show as DREQ timeouts).
HOLD_CONNS=${RCM_BENCH_HOLD_CONNS:-10000}
CONNS=${RCM_BENCH_CONNS:-300}
NVME_CONNECTS=${RCM_BENCH_NVME_CONNECTS:-10}
# cmtime runs: connections per run.
CMTIME_POINTS=$(echo "${RCM_BENCH_CMTIME_POINTS:-1000,10000}" | tr , ' ')
# Timed cmtime runs per round of a point of at most 1,000 connections:
# its steps take 10 to 40 ms, where one round's run differs from the next
# by half (a few seconds a run); larger points run once.
CMTIME_SMALL_RUNS=${RCM_BENCH_CMTIME_SMALL_RUNS:-3}
ROUNDS=${RCM_BENCH_ROUNDS:-2}
# A baseline rcm.ko (RCM_BENCH_BASELINE_KO on the host, put in the image
# by mkguest.sh): the commands run adds it as stack "base", on its own
# device as "rcm", and prints rcm/baseline per step (an A/B in one boot);
# the ib_cm, rdma_cm and steps runs add it beside C and rcm.
BASELINE_KO=/usr/lib/rcm/rcm-baseline.ko
# The CMs the connection runs compare: C, rcm and the baseline if any.
CONN_STACKS="c rcm"
[ -f $BASELINE_KO ] && CONN_STACKS="c rcm base"
# RCM_BENCH_PEER_WINDOW=<n>: rcm.peer_window on rcm (default: the
# module's own, 128).
PEER_WINDOW=${RCM_BENCH_PEER_WINDOW:-}
# Which runs (RCM_BENCH_ONLY, comma-separated; default all).
ONLY=${RCM_BENCH_ONLY:-ib_cm,steps,rdma_cm,hold,nvme,commands,cmtime}
wanted() { [[ ",$ONLY," == *",$1,"* ]]; }

# The script's own output, for lines that callers capturing stdout must
# not swallow.
exec 3>&1
# Has the host measure its CPU over a step (scripts/rcm-vm.py, HostMeter):
# "begin" before it, "end <items>" after; the host prints how busy its CPUs
# were and each guest's QEMU CPU per item in place of a later "report".
host_mark() { echo "RCM-HOST-MARK $*" >&3; }

# Put this guest on CM <c|rcm|rcmk>; the same command runs on the peer.
# rcm provides /dev/infiniband/rdma_cm itself (CM mode ucma); rcmk is rcm
# under the in-tree rdma_ucm (CM mode rcm: librdmacm's commands reach
# rcm's rdma_cm exports through the C module), for cmtime only.
switch_cm() {
	local window=
	# rcm.peer_window as RCM_BENCH_PEER_WINDOW asks (development: what
	# pacing costs a point; 0 is unpaced), on rcm in either mode.
	[ -n "$PEER_WINDOW" ] && window="; echo $PEER_WINDOW > /sys/module/rcm/parameters/peer_window"
	case $1 in
	rcmk) echo "$(rcm_cm_out_cmd); insmod $RCM_KO && insmod \$(modinfo -n rdma_ucm)$window" ;;
	base) echo "$(rcm_cm_out_cmd); insmod $BASELINE_KO ucma=1" ;;
	rcm) echo "$(rcm_cm_switch_cmd rcm)$window" ;;
	*) rcm_cm_switch_cmd "$1" ;;
	esac
}

# One measurement: <conns> <parallel>; prints the client's milliseconds.
measure() {
	local ms
	dmesg -c > /dev/null
	insmod "$SAMPLE" role=client peer="$RCM_PEER" conns="$1" parallel="$2" messages=1 ||
		{ dmesg | tail -3 >&2; return 1; }
	rmmod rcm_test_conn
	ms=$(dmesg | sed -n 's/.*client: .* \([0-9]*\) ms$/\1/p' | tail -1)
	[ -n "$ms" ] && echo "$ms"
}

declare -A total
run_cm() { # <c|rcm> <round>
	local cm=$1 seq par
	peer_run "insmod $SAMPLE role=server" > /dev/null || return 1
	seq=$(measure "$CONNS" 1) || return 1
	par=$(measure "$CONNS" 50) || return 1
	cm_share "$cm" "$2" "ib_cm, $CONNS connections one at a time" "$CONNS" measure "$CONNS" 1 || return 1
	cm_share "$cm" "$2" "ib_cm, $CONNS connections 50 at a time" "$CONNS" measure "$CONNS" 50 || return 1
	count_run "$cm" "$2" "ib_cm, $COUNT_CONNS connections one at a time" "$COUNT_CONNS" measure "$COUNT_CONNS" 1 || return 1
	count_run "$cm" "$2" "ib_cm, $COUNT_CONNS connections 50 at a time" "$COUNT_CONNS" measure "$COUNT_CONNS" 50 || return 1
	peer_run 'rmmod rcm_test_conn' > /dev/null
	awk -v cm="$cm" -v r="$2" -v n="$CONNS" -v s="$seq" -v p="$par" 'BEGIN {
		printf "%-4s round %d: %d connections one at a time %6d ms (%5.1f/s), 50 at a time %6d ms (%5.1f/s)\n",
			cm, r, n, s, n * 1000 / s, p, n * 1000 / p }'
	total[$cm-seq]=$(( ${total[$cm-seq]:-0} + seq ))
	total[$cm-par]=$(( ${total[$cm-par]:-0} + par ))
}

# One rdma_cm measurement: <connections> <in flight> <qp 0|1>; the
# client's milliseconds.
measure_rdma() {
	local ms
	dmesg -c > /dev/null
	host_mark begin
	insmod "$RDMA_SAMPLE" role=client peer="$RCM_PEER" conns="$1" parallel="$2" qp="$3" ||
		{ dmesg | tail -3 >&2; return 1; }
	host_mark end "$1"
	rmmod rcm_sample_rdma
	ms=$(dmesg | sed -n 's/.*client: .*: \([0-9]*\) ms$/\1/p' | tail -1)
	[ -n "$ms" ] && echo "$ms"
}

# An rdma_cm run as measure_rdma's, untimed and unmarked (for cm_share).
rdma_once() { # <connections> <in flight> <qp 0|1>
	insmod "$RDMA_SAMPLE" role=client peer="$RCM_PEER" conns="$1" parallel="$2" qp="$3" &&
		rmmod rcm_sample_rdma
}

# The client's mean time per step of the last run (the sample's own
# clock, no tracing), on one line: where a connection waits.
client_steps() {
	dmesg | sed -n 's/.*client: step \([a-z_]*\): \([0-9]*\) us mean.*/\1 \2/p' |
		awk '{ printf "%s%s %d us", (NR > 1 ? ", " : ""), $1, $2 }'
}

# rcm's lock meters on this guest (/sys/module/rcm/lock_times: how long
# rdma_cm's core and the CM endpoint are waited for and held): "on"
# starts them from zero, "off" stops them and prints a line per lock.
# RCM_BENCH_LOCK_TIMES=0 leaves them off (each metered acquisition reads
# the clock three times).
lock_times() { # <on|off>
	local f=/sys/module/rcm/lock_times
	[ -w $f ] || return 0
	if [ "$1" = on ]; then
		echo 1 > $f
	else
		echo 0 > $f
		grep -v '^metering' $f
	fi
}
LOCK_TIMES=${RCM_BENCH_LOCK_TIMES:-1}

# The bound of a point: one more run of it in round 1 with perf sampling
# both vCPUs of both guests (cpu-clock at PROFILE_HZ), split by module.
# The CM's own CPU is the samples in its modules (C: ib_cm, rdma_cm,
# rdma_ucm, iw_cm; rcm: rcm.ko, with the in-tree rdma_ucm for rcmk), the
# busy CPU all samples but the idle task's. A CM that cost nothing would
# leave C's busy CPU without C's CM part, so if the point's time follows
# its busy CPU it would reach busy / (busy - CM) times C's speed: the
# ratio printed on C's line. RCM_BENCH_CM_SHARES=0 leaves these runs out.
CM_SHARES=${RCM_BENCH_CM_SHARES:-1}
PROFILE_HZ=4000

# Whether round <r> has the profiled runs.
shares_on() { [ "$CM_SHARES" = 1 ] && [ "$1" = 1 ] && command -v perf > /dev/null; }

# The modules of CM <cm> (C: ib_cm, rdma_cm, rdma_ucm, iw_cm; rcm:
# rcm.ko, with the in-tree rdma_ucm for rcmk).
cm_modules() {
	case $1 in
	c) echo ib_cm rdma_cm rdma_ucm iw_cm ;;
	rcmk) echo rcm rdma_ucm ;;
	*) echo rcm ;;
	esac
}

# Work items per item (cm_counts) on both guests over one
# more run in round 1: <cm> <round> <label> <items> <command...> (its
# output dropped). RCM_BENCH_CM_COUNTS=0 leaves these runs out; they run
# RCM_BENCH_COUNT_CONNS connections (100).
CM_COUNTS=${RCM_BENCH_CM_COUNTS:-1}
COUNT_CONNS=${RCM_BENCH_COUNT_CONNS:-100}
COUNT_FUNCS="rcm_tracefs short_name_awk work_functions per_item_line probe_group cm_counts"
count_run() {
	local cm=$1 r=$2 label=$3 items=$4 ok=0
	shift 4
	[ "$CM_COUNTS" = 1 ] && [ "$r" = 1 ] || return 0
	peer_run "$(declare -f $COUNT_FUNCS); TRACE=$TRACE; TRACE_KB=$TRACE_KB; cm_counts on $cm" > /dev/null &&
		cm_counts on "$cm" && "$@" > /dev/null 2>&1 && ok=1
	cm_counts off "$items" "$cm  round 1: $label, client"
	peer_run "$(declare -f $COUNT_FUNCS); TRACE=$TRACE; TRACE_KB=$TRACE_KB; cm_counts off $items '$cm  round 1: $label, server'"
	[ $ok = 1 ] || { echo "$label: the counted run failed" >&2; return 1; }
}

# One profiled run: <cm> <round> <label> <items> <command...> (its
# output dropped); prints the busy CPU of both guests and the CM's part,
# and with RCM_BENCH_SHARE_TOP=N (the run then records call graphs) each
# guest's N functions that spent the most themselves and the CM's N whose
# calls took the most, microseconds per item (connection).
SHARE_TOP=${RCM_BENCH_SHARE_TOP:-0}
# RCM_BENCH_CALLERS_OF=<functions> (comma-separated; with SHARE_TOP):
# the client's CM functions that call each (callers_of), per item.
CALLERS_OF=${RCM_BENCH_CALLERS_OF:-}
# RCM_BENCH_CALLEES_OF=<functions> (comma-separated): what each of the
# client's functions of those names calls, as a tree, per item
# (callees_of), in the points' profiled runs with SHARE_TOP and in each
# profiled step of the commands run.
CALLEES_OF=${RCM_BENCH_CALLEES_OF:-}
# RCM_BENCH_HOT_OFFSETS=<mangled symbols> (comma-separated; with
# SHARE_TOP): where inside each of the client's functions its own samples
# fell (hot_offsets), per item (development).
HOT_OFFSETS=${RCM_BENCH_HOT_OFFSETS:-}
cm_share() {
	local cm=$1 r=$2 label=$3 items=$4 mods here there pid f graph=
	shift 4
	[ "$SHARE_TOP" -gt 0 ] && graph=-g
	shares_on "$r" || return 0
	mods=$(cm_modules "$cm")
	echo 0 > /proc/sys/kernel/kptr_restrict
	peer_run "echo 0 > /proc/sys/kernel/kptr_restrict; rm -f /tmp/share.data
		perf record -q -a $graph -e cpu-clock -F $PROFILE_HZ -o /tmp/share.data > /dev/null 2>&1 < /dev/null &
		echo \$! > /tmp/share.pid" > /dev/null || return 1
	rm -f /tmp/share.data
	perf record -q -a $graph -e cpu-clock -F "$PROFILE_HZ" -o /tmp/share.data > /dev/null 2>&1 < /dev/null &
	pid=$!
	# perf's own start, before the run.
	sleep 1
	"$@" > /dev/null 2>&1 || { kill -INT $pid; wait $pid; echo "$label: the profiled run failed" >&2; return 1; }
	kill -INT $pid
	wait $pid
	peer_run 'p=$(cat /tmp/share.pid); kill -INT $p; while kill -0 $p 2> /dev/null; do sleep 0.1; done' > /dev/null
	here=$(share_of /tmp/share.data "$mods")
	there=$(peer_run "$(declare -f module_symbols share_of); share_of /tmp/share.data '$mods'")
	if [ "$SHARE_TOP" -gt 0 ]; then
		symbol_top /tmp/share.data self "$SHARE_TOP" "$items" "$cm  round 1: $label, client self us per item:"
		symbol_top /tmp/share.data inclusive "$SHARE_TOP" "$items" "$cm  round 1: $label, client CM inclusive us per item:" "$mods"
		for f in ${CALLERS_OF//,/ }; do
			callers_of /tmp/share.data "$f" "$items" "$cm  round 1: $label, client callers of $f, us per item:" "$mods"
		done
		[ -n "$CALLEES_OF" ] && callees_of /tmp/share.data "$CALLEES_OF" "$items" "$cm  round 1: $label, client callees, us per item:"
		[ "$cm" = c ] || layer_split /tmp/share.data "$items" "$cm  round 1: $label, client CM self by layer, us per item:" "$mods"
		for f in ${HOT_OFFSETS//,/ }; do
			hot_offsets /tmp/share.data "$f" "$items" "$cm  round 1: $label, client offsets in $f, us per item:"
		done
		peer_run "$(declare -f module_symbols short_name_awk symbol_top top_line layer_split); PROFILE_HZ=$PROFILE_HZ
			symbol_top /tmp/share.data self $SHARE_TOP $items '$cm  round 1: $label, server self us per item:'
			symbol_top /tmp/share.data inclusive $SHARE_TOP $items '$cm  round 1: $label, server CM inclusive us per item:' '$mods'
			[ $cm = c ] || layer_split /tmp/share.data $items '$cm  round 1: $label, server CM self by layer, us per item:' '$mods'"
	fi
	rm -f /tmp/share.data
	peer_run 'rm -f /tmp/share.data /tmp/share.pid' > /dev/null
	awk -v cm="$cm" -v label="$label" -v hz="$PROFILE_HZ" -v a="$here" -v b="$there" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		busy = (x[1] - x[2] + y[1] - y[2]) * 1000 / hz
		own = (x[3] + y[3]) * 1000 / hz
		line = sprintf("%-4s round 1: %s, profiled: both guests busy %.0f ms, the CM'\''s own %.0f ms (%.1f%%)",
			cm, label, busy, own, busy > 0 ? 100 * own / busy : 0)
		if (cm == "c" && busy > own)
			line = line sprintf("; a CM that cost nothing: %.2f x C", busy / (busy - own))
		print line
	}'
}

# One rdma_cm point on the CM in place: <c|rcm> <round> <qp 0|1> <point>.
run_rdma_point() {
	local cm=$1 q=$3 point=$4 n par ms cb sb rb meter=0
	n=${point%%:*} par=${point##*:}
	[ "$cm" = rcm ] && [ "$LOCK_TIMES" = 1 ] && [ "$2" = 1 ] && meter=1
	peer_run "insmod $RDMA_SAMPLE role=server qp=$q" > /dev/null || return 1
	cb=$(cm_counters); sb=$(peer_run "$(declare -f cm_counters); cm_counters")
	rb=$(peer_run "$(declare -f rxe_counters); rxe_counters")
	ms=$(measure_rdma "$n" "$par" "$q") || return 1
	awk -v cm="$cm" -v r="$2" -v n="$n" -v p="$par" -v q="$q" -v ms="$ms" 'BEGIN {
		printf "%-4s round %d: rdma_cm, %5d connections, %4d in flight, %s: %7d ms (%6.1f/s)\n",
			cm, r, n, p, q ? "with QPs" : "no QPs  ", ms, n * 1000 / ms }'
	host_mark report
	printf '%-4s round %d:   client steps: %s\n' "$cm" "$2" "$(client_steps)"
	printf '%-4s round %d:   client per connection: %s\n' "$cm" "$2" \
		"$(counters_per_conn "$cb" "$(cm_counters)" "$n")"
	printf '%-4s round %d:   server per connection: %s\n' "$cm" "$2" \
		"$(counters_per_conn "$sb" "$(peer_run "$(declare -f cm_counters); cm_counters")" "$n")"
	printf '%-4s round %d:   server rxe counters: %s\n' "$cm" "$2" \
		"$(rxe_changed "$rb" "$(peer_run "$(declare -f rxe_counters); rxe_counters")")"
	# The meters read the clock three times per acquisition: on for an
	# untimed run only (the profiled one when there is one).
	if [ $meter = 1 ]; then
		lock_times on
		peer_run "$(declare -f lock_times); lock_times on" > /dev/null
	fi
	if shares_on "$2"; then
		cm_share "$cm" "$2" "rdma_cm, $n connections, $par in flight, $([ "$q" = 1 ] && echo with || echo no) QPs" "$n" \
			rdma_once "$n" "$par" "$q" || return 1
	elif [ $meter = 1 ]; then
		rdma_once "$n" "$par" "$q" > /dev/null 2>&1 || return 1
	fi
	if [ $meter = 1 ]; then
		lock_times off | sed "s/^/rcm  round $2:   client lock (untimed run) /"
		peer_run "$(declare -f lock_times); lock_times off" | sed "s/^/rcm  round $2:   server lock (untimed run) /"
	fi
	if [ "$n" = 1000 ] && [ "$par" -le 100 ]; then
		count_run "$cm" "$2" "rdma_cm, $COUNT_CONNS connections, $par in flight, $([ "$q" = 1 ] && echo with || echo no) QPs" \
			"$COUNT_CONNS" rdma_once "$COUNT_CONNS" "$par" "$q" || return 1
	fi
	peer_run 'rmmod rcm_sample_rdma' > /dev/null
	total[$cm-rdma-$q-$point]=$(( ${total[$cm-rdma-$q-$point]:-0} + ms ))
	pair_ms[$cm]=$ms
}

# The rdma_cm runs alternate the CMs point by point, in the order C rcm,
# rcm C, C rcm, ... (one switch per point), so that a machine that slows
# down or speeds up during the runs weighs on both CMs alike: a whole
# sweep per CM takes minutes, and the shared host drifts on that scale.
# With a baseline the three go C rcm base, base rcm C, ...: rcm in the
# middle, so that neither of the others is always nearer to it in time.
run_rdma_cm_alternating() {
	local round q point cm order=$CONN_STACKS
	declare -A pair_ms
	for ((round = 1; round <= ROUNDS; round++)); do
		for q in 0 1; do
			for point in $RDMA_POINTS; do
				for cm in $order; do
					use_cm "$cm" || return 1
					run_rdma_point "$cm" "$round" "$q" "$point" || return 1
				done
				order=$(echo "$order" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "") }')
				echo "     round $round: rcm/C of this pair: $(awk -v c="${pair_ms[c]}" -v r="${pair_ms[rcm]}" 'BEGIN { printf "%.2f", c / r }')"
				# (an if, not &&: the loop's last status is the function's)
				if [ -n "${pair_ms[base]:-}" ]; then
					echo "     round $round: rcm/baseline of this point: $(awk -v b="${pair_ms[base]}" -v r="${pair_ms[rcm]}" 'BEGIN { printf "%.2f", b / r }')"
				fi
			done
		done
	done
}

# One connection's life in steps, <conns> one at a time without and with
# QPs: the client's calls to events (the sample's step times) and, from
# the MAD tracepoints of both guests, each side's turnaround from a MAD
# received to its answer posted and the round trips the client sees; on
# the server, that turnaround split at the consumer's handler and calls
# (kprobes; RDMA_CM_EVENT_CONNECT_REQUEST is 4, DISCONNECTED 10).
STEP_CONNS=${RCM_BENCH_STEP_CONNS:-200}
# RCM_BENCH_SCHED=1 (development): the client's steps also split their
# calls' wall time by the scheduler's and interrupts' tracepoints and the
# kprobes inside rdma_resolve_ip (sched_window), and the commands run
# its destroy's commands (command_sched). Enabling tracepoints and
# probes in functions the other vCPU runs can oops a TCG guest (an int3
# seen on process_one_work's workqueue tracepoint): not part of make bench.
SCHED=${RCM_BENCH_SCHED:-}
client_pairs() {
	printf '%s\n' 'tx:10 rx:13 client REQ posted -> REP received (wire + server)' \
		'rx:13 tx:14 client REP received -> RTU posted' \
		'tx:15 rx:16 client DREQ posted -> DREP received (wire + server)'
}
# The client's steps split at its calls and the CMs' work (client_probes;
# RDMA_CM_EVENT_ADDR_RESOLVED is 0, ROUTE_RESOLVED 2, CONNECT_RESPONSE 5,
# ESTABLISHED 9, DISCONNECTED 10).
client_marker_pairs() {
	printf '%s\n' 'resolve_addr handler:0 client rdma_resolve_addr called -> ADDR_RESOLVED delivered' \
		'resolve_addr resolve_ip client  rdma_resolve_addr called -> rdma_resolve_ip called' \
		'resolve_ip resolved_ip client  rdma_resolve_ip (ib_core)' \
		'resolved_ip resolved_addr client  rdma_resolve_ip returned -> rdma_resolve_addr returned' \
		'resolve_ip addr_work client  rdma_resolve_ip called -> address work started' \
		'addr_work addr_cb client  address work started -> CM callback' \
		'addr_cb handler:0 client  CM callback -> ADDR_RESOLVED delivered' \
		'handler:0 resolve_route client ADDR_RESOLVED delivered -> rdma_resolve_route called' \
		'resolve_route handler:2 client rdma_resolve_route called -> ROUTE_RESOLVED delivered' \
		'resolve_route resolved_route client  rdma_resolve_route call' \
		'resolved_route event_work client  call returned -> event work started' \
		'event_work handler:2 client  event work started -> ROUTE_RESOLVED delivered' \
		'handler:2 connect client ROUTE_RESOLVED delivered -> rdma_connect called' \
		'connect tx:10 client rdma_connect called -> REQ posted' \
		'connect ah client  rdma_connect called -> address handle asked' \
		'ah ahed client  address handle (rdma_create_ah)' \
		'ahed post client  address handle -> ib_post_send_mad' \
		'post tx:10 client  ib_post_send_mad -> REQ posted' \
		'rx:13 handler:5 client REP received -> CONNECT_RESPONSE delivered' \
		'tx:14 handler:9 client RTU posted -> ESTABLISHED delivered' \
		'disconnect tx:15 client rdma_disconnect called -> DREQ posted' \
		'disconnect post client  rdma_disconnect called -> ib_post_send_mad' \
		'rx:16 handler:10 client DREP received -> DISCONNECTED delivered'
}
server_pairs() {
	printf '%s\n' 'rx:10 tx:13 server REQ received -> REP posted' \
		'rx:10 handler:4 server  REQ received -> CONNECT_REQUEST delivered' \
		'rx:10 work server   REQ received -> MAD work started' \
		'work path server   MAD work started -> reply path asked' \
		'path pathed server   reply path (ib_init_ah_attr_from_wc)' \
		'pathed handler:4 server   reply path -> CONNECT_REQUEST delivered' \
		'handler:4 accept server  CONNECT_REQUEST delivered -> rdma_accept called' \
		'create_qp created_qp server   rdma_create_qp' \
		'accept tx:13 server  rdma_accept called -> REP posted' \
		'accept ah server   rdma_accept called -> address handle asked' \
		'ah ahed server   address handle (rdma_create_ah)' \
		'ahed post server   address handle -> ib_post_send_mad' \
		'post tx:13 server   ib_post_send_mad -> REP posted' \
		'rx:15 tx:16 server DREQ received -> DREP posted' \
		'rx:15 handler:10 server  DREQ received -> DISCONNECTED delivered' \
		'handled:10 tx:16 server  handler returned (id destroyed) -> DREP posted'
}
# CPU time this guest spent busy (user, system, irq, softirq), in ticks
# of /proc/stat (USER_HZ), its interrupts and context switches.
# Then the IPIs all CPUs took: rescheduling and function calls (the
# remote wakeups; each an APIC write QEMU emulates, costly under TCG).
cpu_ticks() {
	awk '/^cpu / { b = $2 + $3 + $4 + $7 + $8 } /^intr / { i = $2 } /^ctxt / { c = $2 } END { printf "%s %s %s ", b, i, c }' /proc/stat
	awk '$1 == "RES:" || $1 == "CAL:" { for (f = 2; f <= NF && $f ~ /^[0-9]+$/; f++) n[$1] += $f } END { print n["RES:"] + 0, n["CAL:"] + 0 }' /proc/interrupts
}
# "busy <ticks> irqs <n> switches <n> IPIs <resched> + <calls>" between
# two cpu_ticks outputs.
cpu_delta() { echo "$1 $2" | awk '{ printf "busy %d irqs %d switches %d IPIs %d + %d", $6 - $1, $7 - $2, $8 - $3, $9 - $4, $10 - $5 }'; }

run_steps() { # <c|rcm> <round>
	local cm=$1 q c0 p0 c1 p1
	c0=$(cpu_ticks) p0=$(peer_run "$(declare -f cpu_ticks); cpu_ticks")
	sleep 3
	c1=$(cpu_ticks) p1=$(peer_run "$(declare -f cpu_ticks); cpu_ticks")
	printf '%-4s round %d: steps, idle 3 s: client %s, server %s\n' "$cm" "$2" "$(cpu_delta "$c0" "$c1")" "$(cpu_delta "$p0" "$p1")"
	for q in 0 1; do
		peer_run "insmod $RDMA_SAMPLE role=server qp=$q" > /dev/null || return 1
		peer_run "$(declare -f rcm_tracefs mad_trace probe_group server_probes); TRACE=$TRACE; mad_trace on && server_probes on $cm" > /dev/null ||
			return 1
		mad_trace on && client_probes on $cm || return 1
		[ -n "$SCHED" ] && sched_trace on
		dmesg -c > /dev/null
		c0=$(cpu_ticks) p0=$(peer_run "$(declare -f cpu_ticks); cpu_ticks")
		insmod "$RDMA_SAMPLE" role=client peer="$RCM_PEER" conns="$STEP_CONNS" parallel=1 qp="$q" ||
			{ dmesg | tail -3 >&2; return 1; }
		c1=$(cpu_ticks) p1=$(peer_run "$(declare -f cpu_ticks); cpu_ticks")
		printf '%-4s round %d: steps, qp %d: client %s, server %s; QPs left: client %s, server %s\n' "$cm" "$2" $q \
			"$(cpu_delta "$c0" "$c1")" "$(cpu_delta "$p0" "$p1")" "$(rdma res show qp | grep -vc 'qp-type GSI\|qp-type SMI')" \
			"$(peer_run "rdma res show qp | grep -vc 'qp-type GSI\|qp-type SMI'")"
		mad_trace off
		peer_run "$(declare -f rcm_tracefs mad_trace); TRACE=$TRACE; mad_trace off" > /dev/null
		rmmod rcm_sample_rdma
		{
			dmesg | sed -n 's/.*client: step \(.*\)/client \1/p'
			client_pairs | mad_steps | sed 's/^/mad /'
			client_marker_pairs | marker_steps | sed 's/^/mad /'
			if [ -n "$SCHED" ]; then
				printf '%s\n' 'resolve_ip ar client  rdma_resolve_ip called -> addr_resolve' \
					'ar ard client  addr_resolve' 'rt rtd client  ip_route_output_flow' \
					'ard resolved_ip client  addr_resolve returned -> rdma_resolve_ip returned' \
					'mdw mdwd client  mod_delayed_work_on' 'ard mdw client  addr_resolve returned -> mod_delayed_work_on' \
					'mdw qw client  mod_delayed_work_on -> __queue_work' 'qw qwd client  __queue_work' \
					'qw kp client  __queue_work -> kick_pool' 'kp kpd client  kick_pool' \
					'qwd mdwd client  __queue_work returned -> mod_delayed_work_on returned' \
					'mdwd resolved_ip client  mod_delayed_work_on returned -> rdma_resolve_ip returned' | marker_steps
				sched_window resolve_ip resolved_ip "client rdma_resolve_ip:"
				sched_window resolve_addr resolved_addr "client rdma_resolve_addr:"
				sched_window resolve_route resolved_route "client rdma_resolve_route:"
				sched_window ah ahed "client rdma_create_ah:"
				sched_trace off
			fi
			client_probes off
			peer_run "$(declare -f marker_steps server_pairs probe_group server_probes); TRACE=$TRACE
				server_pairs | marker_steps; server_probes off; rmmod rcm_sample_rdma" | sed 's/^/mad /'
		} | while read -r line; do
			printf '%-4s round %d: steps, %s: %s\n' "$cm" "$2" "$([ $q = 1 ] && echo "with QPs" || echo "no QPs  ")" "$line"
		done
	done
}

# Unreclaimable slab memory in kB (what kmalloc'ed ids occupy).
slab_kb() { awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo; }

# Bytes in use per slab cache, "<cache> <bytes>" lines (caches merged by
# SLUB show under one name).
slab_caches() { awk 'NR > 2 { print $1, $2 * $4 }' /proc/slabinfo; }

# The caches that grew most between two slab_caches outputs, per id.
slab_growth() { # <before> <after> <ids>
	printf '%s\n--\n%s\n' "$1" "$2" |
		awk '$0 == "--" { after = 1; next } !after { b[$1] = $2; next } $2 > b[$1] { print $2 - b[$1], $1 }' |
		sort -rn | head -6 | awk -v n="$3" '{ printf "%s%s %.0f B", (NR > 1 ? ", " : ""), $2, $1 / n }'
}

# Brings HOLD_CONNS connections up (1,000 in flight) and returns once
# they all are, leaving the sample holding them for <ms> and then
# disconnecting them: its insmod's pid in HOLD_CLIENT, its "holding" line
# in HOLD_LINE. Non-zero if they never all came up.
hold_bring_up() { # <ms>
	local i
	HOLD_LINE=
	dmesg -c > /dev/null
	insmod "$RDMA_SAMPLE" role=client peer="$RCM_PEER" conns="$HOLD_CONNS" parallel=1000 hold="$1" &
	HOLD_CLIENT=$!
	for ((i = 0; i < 6000; i++)); do
		HOLD_LINE=$(dmesg | grep 'client: .* holding' | tail -1)
		[ -n "$HOLD_LINE" ] && return 0
		kill -0 "$HOLD_CLIENT" 2> /dev/null || return 1
		sleep 0.1
	done
	return 1
}

# HOLD_CONNS rdma_cm connections (no QPs) up at once: the slab memory
# each side's CM uses per connected id, then all disconnected at once:
# how long that takes and how many DREQs got no DREP.
run_hold() { # <c|rcm> <round>
	local cm=$1 before pbefore during pduring line ms timeouts retries
	peer_run "insmod $RDMA_SAMPLE role=server" > /dev/null || return 1
	before=$(slab_kb)
	pbefore=$(peer_run "$(declare -f slab_kb); slab_kb")
	local caches pcaches; caches=$(slab_caches)
	pcaches=$(peer_run "$(declare -f slab_caches); slab_caches")
	local cbefore; cbefore=$(cm_counters)
	# An incomplete bring-up shows below as no result.
	hold_bring_up 5000
	line=$HOLD_LINE
	during=$(slab_kb)
	pduring=$(peer_run "$(declare -f slab_kb); slab_kb")
	caches=$(slab_growth "$caches" "$(slab_caches)" "$HOLD_CONNS")
	pcaches=$(slab_growth "$pcaches" "$(peer_run "$(declare -f slab_caches); slab_caches")" "$HOLD_CONNS")
	wait "$HOLD_CLIENT" || { dmesg | tail -3 >&2; return 1; }
	rmmod rcm_sample_rdma
	# The bring-up alone, the step timed above (the teardown runs after
	# the profile).
	HOLD_CLIENT=
	cm_share "$cm" "$2" "hold, $HOLD_CONNS connections brought up" "$HOLD_CONNS" hold_bring_up 1000 || return 1
	if [ -n "$HOLD_CLIENT" ]; then
		wait "$HOLD_CLIENT" || { dmesg | tail -3 >&2; return 1; }
	fi
	rmmod rcm_sample_rdma 2> /dev/null
	peer_run 'rmmod rcm_sample_rdma' > /dev/null
	ms=$(printf '%s\n' "$line" | sed -n 's/.*: \([0-9]*\) ms, holding$/\1/p')
	line=$(dmesg | grep 'disconnected at once' | tail -1)
	local down; down=$(printf '%s\n' "$line" | sed -n 's/.*at once: \([0-9]*\) ms,.*/\1/p')
	timeouts=$(printf '%s\n' "$line" | sed -n 's/.*, \([0-9]*\) DREQ timeouts$/\1/p')
	retries=$(counters_per_conn "$cbefore" "$(cm_counters)" "$HOLD_CONNS" | sed -n 's/.*DREQ sent [0-9.]* (retries \([0-9.]*\)).*/\1/p')
	[ -n "$ms" ] && [ -n "$down" ] && [ -n "$timeouts" ] || { echo "hold run: no result in the log" >&2; return 1; }
	awk -v cm="$cm" -v r="$2" -v n="$HOLD_CONNS" -v ms="$ms" -v down="$down" -v c="$((during - before))" \
		-v s="$((pduring - pbefore))" -v t="$timeouts" -v d="${retries:-0}" 'BEGIN {
		printf "%-4s round %d: %d connections held (1000 in flight): up in %d ms; slab per connected id: client %.0f B, server %.0f B; all disconnected at once in %d ms, %d DREQ timeouts, %.2f DREQ retries per connection\n",
			cm, r, n, ms, c * 1024 / n, s * 1024 / n, down, t, d }'
	printf '%-4s round %d: slab caches grown per id: client %s; server %s\n' "$cm" "$2" "$caches" "$pcaches"
	total[$cm-hold-mem]=$(( ${total[$cm-hold-mem]:-0} + during - before + pduring - pbefore ))
	total[$cm-hold-timeouts]=$(( ${total[$cm-hold-timeouts]:-0} + timeouts ))
}

# `nvme connect -i 4` until the controller is live with its namespace,
# $NVME_CONNECTS times (each followed by a disconnect); the consumers are
# unloaded again so that the CM can be swapped.
run_nvme() { # <c|rcm> <round>
	local i t0 t1 one each= cmd=0 ms=0
	peer_run "$(declare -f rcm_load_on_cm); rcm_load_on_cm $1 nvmet-rdma" > /dev/null || return 1
	nvme_target_up > /dev/null || return 1
	rcm_load_on_cm "$1" nvme-rdma || return 1
	for ((i = 0; i < NVME_CONNECTS; i++)); do
		t0=$EPOCHREALTIME
		# The namespace's block device appears after the command returns
		# (polled every 0.1 s).
		nvme_connect_queues 4 > /dev/null || return 1
		t1=$EPOCHREALTIME
		nvme_wait_live 30 > /dev/null || return 1
		one=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
		ms=$((ms + one))
		cmd=$(awk -v a="$t0" -v b="$t1" -v m="$cmd" 'BEGIN { printf "%.1f", m + (b - a) * 1000 }')
		each="$each${each:+, }$one"
		nvme_disconnect_all > /dev/null || return 1
	done
	rmmod nvme_rdma || return 1
	nvme_target_down > /dev/null || return 1
	awk -v cm="$1" -v r="$2" -v n="$NVME_CONNECTS" -v ms="$ms" -v cmd="$cmd" -v each="$each" 'BEGIN {
		printf "%-4s round %d: nvme connect -i 4 until live, mean of %d: %6.0f ms (each: %s; the command alone: %.0f ms)\n",
			cm, r, n, ms / n, each, cmd / n }'
	total[$1-nvme]=$(( ${total[$1-nvme]:-0} + ms ))
}

# The CM's message counters of rxe0 (sysfs, same files for both CMs):
# "<group>/<message> <value>" per line.
# The soft-RoCE device's own counters, "<name> <value>" lines.
rxe_counters() {
	local f
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do echo "${f##*/} $(cat "$f")"; done
}

# The rxe counters that changed between two rxe_counters snapshots.
rxe_changed() { # <before> <after>
	awk 'NR == FNR { b[$1] = $2; next } $2 != b[$1] { printf "%s%s +%d", sep, $1, $2 - b[$1]; sep = ", " }' \
		<(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

cm_counters() {
	local d=/sys/class/infiniband/rxe0/ports/1 g m
	for g in cm_tx_msgs cm_tx_retries cm_rx_duplicates cm_rx_msgs; do
		for m in req rep rej dreq drep; do
			echo "$g/$m $(cat "$d/$g/$m" 2> /dev/null || echo 0)"
		done
	done
}
# What changed between two cm_counters snapshots, per connection:
# "REQs sent 1.00 (retried 0.00), DREQs 1.00 (retried 0.00), ...".
counters_per_conn() { # <before> <after> <connections>
	awk -v n="$3" 'NR == FNR { b[$1] = $2; next } { d[$1] = $2 - b[$1] } END {
		printf "REQ sent %.2f (retries %.2f), REP sent %.2f, REJ sent %.2f, duplicate REQs received %.2f, DREQ sent %.2f (retries %.2f), DREP sent %.2f; received REQ %.2f REP %.2f REJ %.2f DREQ %.2f DREP %.2f\n",
			d["cm_tx_msgs/req"] / n, d["cm_tx_retries/req"] / n, d["cm_tx_msgs/rep"] / n,
			d["cm_tx_msgs/rej"] / n, d["cm_rx_duplicates/req"] / n, d["cm_tx_msgs/dreq"] / n,
			d["cm_tx_retries/dreq"] / n, d["cm_tx_msgs/drep"] / n, d["cm_rx_msgs/req"] / n,
			d["cm_rx_msgs/rep"] / n, d["cm_rx_msgs/rej"] / n, d["cm_rx_msgs/dreq"] / n,
			d["cm_rx_msgs/drep"] / n }' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# cmtime (rdma-core 44) through librdmacm: the C stack's rdma_ucm or rcm's
# own device; client here, server on the peer. Prints its per-step times
# and what each side's CM sent per connection.
# A cmtime run as run_cmtime's, untimed (for cm_share): <connections>.
cmtime_once() {
	peer_start cmtime "timeout 1800 cmtime -b $RCM_PEER -c $1" > /dev/null
	rcm_retry 20 peer_run "rdma res show cm_id | grep -q 'state LISTEN'" > /dev/null || return 1
	timeout 1800 cmtime -s "$RCM_PEER" -c "$1" > /dev/null 2>&1 || return 1
	peer_run 'pkill cmtime' > /dev/null
	peer_wait cmtime 10 > /dev/null
	return 0
}

run_cmtime() { # <c|rcm> <round>
	local cm=$1 n runs run out before after pbefore pafter step ms
	for n in $CMTIME_POINTS; do
		runs=1
		[ "$n" -le 1000 ] && runs=$CMTIME_SMALL_RUNS
		before=$(cm_counters)
		pbefore=$(peer_run "$(declare -f cm_counters); cm_counters")
		# cmtime's server listens with the default backlog, the sysctl's
		# (1,024 in 6.12): a CM that queues requests faster than cmtime
		# accepts them would turn the rest away (REJ 28). Room for all of
		# them, on either CM.
		peer_run "sysctl -qw net.rdma_ucm.max_backlog=$n" > /dev/null || return 1
		for ((run = 1; run <= runs; run++)); do
			peer_start cmtime "timeout 1800 cmtime -b $RCM_PEER -c $n" > /dev/null
			rcm_retry 20 peer_run "rdma res show cm_id | grep -q 'state LISTEN'" > /dev/null || return 1
			out=$(timeout 1800 cmtime -s "$RCM_PEER" -c "$n" 2>&1) || { echo "$out" | tail -5 >&2; return 1; }
			peer_run 'pkill cmtime' > /dev/null
			peer_wait cmtime 10 > /dev/null
			# cmtime 44: "<step> : <total ms> <max ms> <min us> <us per connection>"
			while read -r step ms; do
				printf '%-4s round %d: cmtime -c %5d, run %d, %-14s %10.1f ms\n' "$cm" "$2" "$n" "$run" "$step" "$ms"
				total[$cm-cmtime-$n-$step]=$(awk -v a="${total[$cm-cmtime-$n-$step]:-0}" -v b="$ms" 'BEGIN { print a + b }')
			done < <(printf '%s\n' "$out" | awk -F: 'NF == 2 && $2 ~ /[0-9]/ { gsub(/ /, "", $1); split($2, v, " "); print $1, v[1] }')
			# cmtime reports failed connections on lines of their own.
			printf '%s\n' "$out" | grep -iE 'error|reject|fail|unreach|timed? ?out' | sort | uniq -c | head -5 |
				sed "s/^/$cm  round $2: cmtime -c $n says: /"
		done
		after=$(cm_counters)
		pafter=$(peer_run "$(declare -f cm_counters); cm_counters")
		echo "$cm  round $2: cmtime -c $n, client's CM per connection: $(counters_per_conn "$before" "$after" $((n * runs)))"
		echo "$cm  round $2: cmtime -c $n, server's CM per connection: $(counters_per_conn "$pbefore" "$pafter" $((n * runs)))"
		cm_share "$cm" "$2" "cmtime -c $n" "$n" cmtime_once "$n" || return 1
	done
}

# librdmacm's per-command steps one after the other on one thread
# (tools/testing/selftests/rcm/rcm_ucma_steps.c): create COMMAND_IDS ids,
# resolve their addresses, then routes, destroy them; ms per step on C,
# on rcm with its own device (rcm) and on rcm under the in-tree rdma_ucm
# (rcmk). Round 1 also profiles each step (perf, 4 kHz, both vCPUs) and
# splits its CPU time per id.
COMMAND_IDS=${RCM_BENCH_COMMAND_IDS:-10000}
COMMAND_STEPS="createid resolveaddr resolveroute destroy"
STEPS_BIN=/kselftest/rcm/rcm_ucma_steps

# The functions whose inclusive share splits a profiled step, as
# "<part>=<symbol>" words: <cm> <step>. rcm's are its mangled Rust names
# (the kernel knows no other), matched by their tail.
split_parts() {
	local cm=$1 step=$2 own rdma result
	case $step in
	createid) own=(ucma_create_id UcmaAbi9create_id) rdma=(rdma_create_user_id RdmaCmAbi9create_id) ;;
	resolveaddr) own=(ucma_resolve_addr UcmaAbi12resolve_addr) rdma=(rdma_resolve_addr RdmaCmAbi12resolve_addr)
		result=(addr_handler address_resolved) ;;
	resolveroute) own=(ucma_resolve_route UcmaAbi13resolve_route) rdma=(rdma_resolve_route RdmaCmAbi13resolve_route)
		result=(cma_work_handler deliver_pending) ;;
	destroy) own=(ucma_destroy_id UcmaAbi10destroy_id) rdma=(_destroy_id RdmaCmAbi7destroy) ;;
	esac
	# Index 0: the C module's function, 1: rcm's.
	local u=0 r=0
	[ "$cm" = rcm ] || [ "$cm" = base ] && u=1
	[ "$cm" = c ] || r=1
	if [ "$u" = 1 ]; then
		echo -n "write=UcmaFileOps5write get_event=UcmaAbi9get_event query=UcmaAbi5query "
	else
		echo -n "write=ucma_write get_event=ucma_get_event query=ucma_query "
	fi
	echo -n "command=${own[$u]} rdma_cm=${rdma[$r]} "
	[ -n "${result[*]}" ] && echo -n "result=${result[$r]} "
	echo "lock_spin=mutex_spin_on_owner switches=finish_task_switch"
}

# Where a profiled step's CPU went, microseconds per id: <cm> <step>
# <perf.data>. Each part is a function's inclusive share of all samples
# (both vCPUs, idle included) times the samples' time per id.
profile_split() {
	local cm=$1 step=$2 data=$3 total idle
	# All samples, and the idle task's.
	read -r total idle < <(perf report -i "$data" --stdio -n --no-children --sort comm -g none 2> /dev/null |
		tr -d '\r' | awk '!/^#/ && NF >= 3 { s += $2; if ($NF == "swapper") i = $2 } END { print s + 0, i + 0 }')
	perf report -i "$data" --stdio --children --sort sym -g none 2> /dev/null | tr -d '\r' |
		awk -v total="$total" -v n="$COMMAND_IDS" -v hz="$PROFILE_HZ" -v parts="$(split_parts "$cm" "$step")" \
			-v head="$cm  round 1: commands, $step, us per id:" "$(symbol_names_awk)"'
		BEGIN { np = split(parts, p, " ") }
		!/^#/ && NF >= 4 {
			sym = $NF
			share = $1
			sub(/%/, "", share)
			for (i = 1; i <= np; i++) {
				split(p[i], kv, "=")
				if (!(i in got) && names(sym, kv[2]))
					got[i] = share
			}
		}
		END {
			us = total / hz / n * 1e6
			line = sprintf("%s both vCPUs %.1f", head, us)
			for (i = 1; i <= np; i++) {
				split(p[i], kv, "=")
				line = line sprintf(", %s %.1f", kv[1], (i in got ? got[i] : 0) / 100 * us)
			}
			print line
		}'
	awk -v i="$idle" -v t="$total" -v head="$cm  round 1: commands, $step, idle:" \
		'BEGIN { printf "%s %.2f%%\n", head, t ? 100 * i / t : 0 }'
}

# The functions that spent most of a profiled step's samples themselves
# (RCM_BENCH_PROFILE_TOP of them), and those whose calls took most
# (RCM_BENCH_PROFILE_INCLUSIVE), microseconds per id, and the callee
# trees of RCM_BENCH_CALLEES_OF: <cm> <step> <perf.data>. None by default.
PROFILE_TOP=${RCM_BENCH_PROFILE_TOP:-0}
PROFILE_INCLUSIVE=${RCM_BENCH_PROFILE_INCLUSIVE:-0}
profile_top() {
	[ "$PROFILE_TOP" -gt 0 ] &&
		symbol_top "$3" self "$PROFILE_TOP" "$COMMAND_IDS" "$1  round 1: commands, $2, self us per id:"
	[ "$PROFILE_INCLUSIVE" -gt 0 ] &&
		symbol_top "$3" inclusive "$PROFILE_INCLUSIVE" "$COMMAND_IDS" "$1  round 1: commands, $2, inclusive us per id:"
	[ -n "$CALLEES_OF" ] && callees_of "$3" "$CALLEES_OF" "$COMMAND_IDS" "$1  round 1: commands, $2, callees, us per id:"
	return 0
}

# One CM's commands run: <c|rcm|rcmk> <round>.
run_commands() {
	local cm=$1 i step ms out
	for ((i = 1; i <= 3; i++)); do
		out=$("$STEPS_BIN" "$RCM_PEER" "$COMMAND_IDS") || { echo "$out" >&2; return 1; }
		printf '%-4s round %d: commands, %d ids, run %d: %s\n' "$cm" "$2" "$COMMAND_IDS" "$i" "$(echo $out)"
		while read -r step ms _; do
			total[$cm-commands-$step]=$(awk -v a="${total[$cm-commands-$step]:-0}" -v b="$ms" 'BEGIN { print a + b }')
		done <<< "$out"
	done
	[ "$2" = 1 ] || return 0
	if [ "$cm" != c ]; then
		# One more run, not timed, with rcm's lock meters on: how often
		# each step of an id takes rdma_cm's mutex.
		lock_times on
		"$STEPS_BIN" "$RCM_PEER" "$COMMAND_IDS" > /dev/null || return 1
		lock_times off | sed "s/^/$cm  round 1: commands, all four steps, lock /"
	fi
	if [ -n "$SCHED" ]; then
		command_sched "$cm" "$COMMAND_IDS" "$cm  round 1: commands, traced:" || return 1
	fi
	command -v perf > /dev/null || return 0
	echo 0 > /proc/sys/kernel/kptr_restrict
	for step in $COMMAND_STEPS; do
		rm -f /tmp/perf.ctl /tmp/perf.ack
		mkfifo /tmp/perf.ctl /tmp/perf.ack
		perf record -q -a -g -e cpu-clock -F "$PROFILE_HZ" -D -1 --control fifo:/tmp/perf.ctl,/tmp/perf.ack \
			-o /tmp/perf.data -- "$STEPS_BIN" "$RCM_PEER" "$COMMAND_IDS" "$step" /tmp/perf.ctl /tmp/perf.ack > /dev/null ||
			return 1
		profile_split "$cm" "$step" /tmp/perf.data
		profile_top "$cm" "$step" /tmp/perf.data
	done
	rm -f /tmp/perf.data /tmp/perf.ctl /tmp/perf.ack
}

echo "rcm bench: $(uname -r), TCG; ib_cm: connect + 1 message + disconnect;" \
	"rdma_cm: resolve + connect + disconnect; cmtime: its steps through librdmacm"
current=c
# Puts both guests on CM <c|rcm> unless they are on it.
use_cm() {
	[ "$1" = "$current" ] && return 0
	local cmd
	cmd=$(switch_cm "$1")
	bash -c "$cmd" && peer_run "$cmd" > /dev/null || { echo "switching to $1 failed"; return 1; }
	current=$1
}
for ((round = 1; round <= ROUNDS; round++)); do
	for cm in $CONN_STACKS; do
		use_cm "$cm" || exit 1
		if wanted ib_cm; then run_cm "$cm" "$round" || { echo "$cm round $round failed"; exit 1; }; fi
		if wanted steps; then run_steps "$cm" "$round" || { echo "$cm steps round $round failed"; exit 1; }; fi
		# The baseline is compared where connections are made one by one.
		[ "$cm" = base ] && continue
		if wanted hold; then run_hold "$cm" "$round" || { echo "$cm hold round $round failed"; exit 1; }; fi
		if wanted nvme; then run_nvme "$cm" "$round" || { echo "$cm nvme round $round failed"; exit 1; }; fi
		if wanted cmtime; then run_cmtime "$cm" "$round" || { echo "$cm cmtime round $round failed"; exit 1; }; fi
	done
	if wanted commands; then
		stacks="c rcm rcmk"
		# The A/B pair alternates its order round by round.
		if [ -f $BASELINE_KO ]; then
			((round % 2)) && stacks="c rcmk rcm base" || stacks="c rcmk base rcm"
		fi
		for cm in $stacks; do
			use_cm "$cm" && run_commands "$cm" "$round" || { echo "$cm commands round $round failed"; exit 1; }
		done
	fi
	if wanted cmtime; then
		use_cm rcmk && run_cmtime rcmk "$round" || { echo "rcmk cmtime round $round failed"; exit 1; }
	fi
done
if wanted rdma_cm; then run_rdma_cm_alternating || { echo "rdma_cm runs failed"; exit 1; }; fi
# rcm/C of the summed times <c total> <rcm total> <what>
ratio() { awk -v c="$1" -v r="$2" -v what="$3" 'BEGIN { printf "rcm/C %s: %.2f\n", what, c / r }'; }
# The same against the baseline: <baseline total> <rcm total> <what>
baseline_ratio() { ratio "$1" "$2" "$3, against the baseline" | sed 's/^rcm\/C/rcm\/baseline/'; }
echo "(ratios of summed times; above 1: rcm faster)"
if wanted ib_cm; then
	ratio "${total[c-seq]}" "${total[rcm-seq]}" "ib_cm sample connection rate, one at a time"
	ratio "${total[c-par]}" "${total[rcm-par]}" "ib_cm sample connection rate, 50 at a time"
	if [ -f $BASELINE_KO ]; then
		baseline_ratio "${total[base-seq]}" "${total[rcm-seq]}" "ib_cm sample connection rate, one at a time"
		baseline_ratio "${total[base-par]}" "${total[rcm-par]}" "ib_cm sample connection rate, 50 at a time"
	fi
fi
if wanted rdma_cm; then
	for q in 0 1; do
		for point in $RDMA_POINTS; do
			ratio "${total[c-rdma-$q-$point]}" "${total[rcm-rdma-$q-$point]}" \
				"rdma_cm connect + disconnect, $([ $q = 1 ] && echo "with QPs" || echo "no QPs"), ${point%%:*} connections, ${point##*:} in flight"
			[ -f $BASELINE_KO ] &&
				baseline_ratio "${total[base-rdma-$q-$point]}" "${total[rcm-rdma-$q-$point]}" \
					"rdma_cm connect + disconnect, $([ $q = 1 ] && echo "with QPs" || echo "no QPs"), ${point%%:*} connections, ${point##*:} in flight"
		done
	done
fi
if wanted hold; then
	awk -v c="${total[c-hold-mem]}" -v r="${total[rcm-hold-mem]}" 'BEGIN {
		printf "rcm/C slab memory per connected id: %.2f (below 1: rcm smaller)\n", r / c }'
	echo "DREQ timeouts with $HOLD_CONNS connections disconnected at once, all rounds: C ${total[c-hold-timeouts]}, rcm ${total[rcm-hold-timeouts]}"
fi
wanted nvme && ratio "${total[c-nvme]}" "${total[rcm-nvme]}" "nvme connect -i 4 wall time"
if wanted commands; then
	for step in $COMMAND_STEPS; do
		ratio "${total[c-commands-$step]}" "${total[rcm-commands-$step]}" "commands, $COMMAND_IDS ids, $step"
		ratio "${total[c-commands-$step]}" "${total[rcmk-commands-$step]}" "commands, $COMMAND_IDS ids, $step, in-tree rdma_ucm on rcm" |
			sed 's/^rcm\/C/rcmk\/C/'
		[ -f $BASELINE_KO ] &&
			baseline_ratio "${total[base-commands-$step]}" "${total[rcm-commands-$step]}" "commands, $COMMAND_IDS ids, $step"
	done
fi
if wanted cmtime; then
	for key in "${!total[@]}"; do
		[[ $key == c-cmtime-* ]] || continue
		rest=${key#c-cmtime-}
		ratio "${total[$key]}" "${total[rcm-${key#c-}]:-0}" "cmtime -c ${rest%%-*} ${rest#*-}"
		ratio "${total[$key]}" "${total[rcmk-${key#c-}]:-0}" "cmtime -c ${rest%%-*} ${rest#*-}, in-tree rdma_ucm on rcm" |
			sed 's/^rcm\/C/rcmk\/C/'
	done | sort -t' ' -k4,4n -k5
fi
