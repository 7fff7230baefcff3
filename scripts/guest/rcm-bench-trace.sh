#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench's tracing and profiling on a guest (sourced by rcm-bench.sh;
# the functions travel to the peer with declare -f): the MAD layer's
# tracepoints and kprobes on the samples' and CMs' calls, the steps read
# from them, the CM's share of perf's samples and its top functions, and
# the CM's work items per connection.

# The MAD layer's tracepoints (the same for both CMs) on this guest:
# "on" clears the buffer and records posts and receptions, "off" stops.
TRACE=/sys/kernel/tracing
# The trace buffer's size per CPU (kB) outside the runs that grow it.
TRACE_KB=1408
mad_trace() { # <on|off>
	local e v=0
	rcm_tracefs || return 1
	echo 0 > $TRACE/tracing_on
	if [ "$1" = on ]; then
		v=1
		echo 16384 > $TRACE/buffer_size_kb
		echo > $TRACE/trace
	fi
	for e in ib_mad_ib_send_mad ib_mad_recv_done_handler; do
		echo $v > $TRACE/events/ib_mad/$e/enable
	done
	echo $v > $TRACE/tracing_on
}

# Mean microseconds between two MADs of one transaction in this guest's
# trace, per pair "<rx|tx>:<attr> <rx|tx>:<attr> <label>" on stdin (the
# first post or reception of each; retransmissions are not steps).
mad_steps() {
	awk 'FNR == NR { pair[++np] = $0; next }
	/ib_mad_recv_done_handler|ib_mad_ib_send_mad/ {
		dir = /ib_mad_recv_done_handler/ ? "rx" : "tx"
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\.[0-9]+:$/) t = substr($i, 1, length($i) - 1)
			if ($i == "tid") { tid = $(i + 1); sub(/^0x0*/, "", tid) }
			if ($i == "attr_id") { a = $(i + 1); sub(/^0x0*/, "", a) }
		}
		k = dir ":" a " " tid
		if (!(k in at)) { at[k] = t; tids[tid] = 1 }
	}
	END {
		for (p = 1; p <= np; p++) {
			split(pair[p], f, " "); label = pair[p]; sub(/^[^ ]+ [^ ]+ /, "", label)
			sum = 0; n = 0
			for (tid in tids)
				if ((f[1] " " tid) in at && (f[2] " " tid) in at) {
					sum += at[f[2] " " tid] - at[f[1] " " tid]; n++
				}
			if (n) printf "%s: %.0f us mean of %d\n", label, sum * 1e6 / n, n
		}
	}' - $TRACE/trace
}

# Adds the kprobes given as "<p|r>:<name> <target>" pairs to the trace
# group <group> and enables them ("on"; the kernel's complaint on
# failure), or removes the group ("off"). Plain int3 probes: optimizing
# them patches kernel text from a background worker, which TCG's other
# vCPU can trip over.
probe_group() { # <on|off> <group> [<p|r>:<name> <target> ...]
	local k=$TRACE/kprobe_events g=$2 e
	if [ "$1" = on ]; then
		shift 2
		echo 0 > /proc/sys/debug/kprobes-optimization
		while [ $# -ge 2 ]; do
			echo "${1%%:*}:$g/${1#*:} $2" >> $k || { tail -4 $TRACE/error_log >&2; return 1; }
			shift 2
		done
		echo 1 > $TRACE/events/$g/enable
	else
		[ -d $TRACE/events/$g ] || return 0
		echo 0 > $TRACE/events/$g/enable
		for e in $(sed -n "s|^[pr][0-9]*:$g/\([^ ]*\) .*|\1|p" $k); do
			echo "-:$g/$e" >> $k
		done
	fi
}

# Kprobes on the server sample and the CM calls it makes, in the same
# trace as the MAD tracepoints: its event handler (with the event type)
# and its return, rdma_accept, and rdma_create_qp and its return; and
# inside the CM <c|rcm>: its MAD work starting (the C CM's per-MAD work,
# rcm's intake work), and the ib_core calls both make: the reply path
# from a received MAD (ib_init_ah_attr_from_wc), the address handle of
# a send (rdma_create_ah) and the post (ib_post_send_mad). "on" adds and
# enables them (run after the sample and the CM are loaded, so that the
# symbols resolve to the CM in place), "off" removes them.
server_probes() { # <on <c|rcm>|off>
	local work
	[ "$1" = on ] || { probe_group off rcmb; return; }
	if [ "$2" = c ]; then
		work=ib_cm:cm_work_handler # iw_cm has one too
	else
		work=$(awk '$3 ~ /timer3run.*MadIntake/ { print "rcm:" $3; exit }' /proc/kallsyms)
	fi
	[ -n "$work" ] || return 1
	probe_group on rcmb p:handler 'rcm_sample_rdma:server_handler event=+0($arg2):u32' \
		r:handled rcm_sample_rdma:server_handler p:accept rdma_accept \
		p:create_qp rdma_create_qp r:created_qp rdma_create_qp p:work "$work" \
		p:path ib_init_ah_attr_from_wc r:pathed ib_init_ah_attr_from_wc \
		p:ah rdma_create_ah r:ahed rdma_create_ah p:post ib_post_send_mad
}

# Kprobes on the client sample and the calls its steps make, in the same
# trace as the MAD tracepoints: its event handler (with the event type),
# rdma_resolve_addr and ib_core's rdma_resolve_ip (both with their
# returns) and ib_core's address work starting (process_one_req), the CM
# <c|rcm>'s address callback (C's addr_handler, rcm's address_done),
# rdma_resolve_route and its return, the CM's work that delivers the
# route's event (C's cma_work_handler; rcm's delivery work items' entry,
# one function for both, which has the handler inlined), and
# rdma_connect_locked and rdma_disconnect, and the address handle and
# post of the MADs they send. The handler's probe waits for
# the sample to load ("on" comes before insmod), so it reads the event
# from the second argument's register (x86-64) rather than $arg2, which a
# pending probe may not use; the others resolve to the CM in place.
# With SCHED set (RCM_BENCH_SCHED) also inside rdma_resolve_ip: its
# addr_resolve and route lookup, and the queueing of the address work down
# to the waking of its worker and the IPI that sends (kernel functions
# other CPUs run: their patching can oops a TCG guest, so only on asking).
# "off" removes them.
client_probes() { # <on <c|rcm>|off>
	local cb work
	[ "$1" = on ] || { probe_group off rcmc; return; }
	if [ "$2" = c ]; then
		cb=rdma_cm:addr_handler work=rdma_cm:cma_work_handler
	else
		cb=$(awk '$3 ~ /10resolution12address_done/ { print "rcm:" $3; exit }' /proc/kallsyms)
		work=$(awk '$3 ~ /timer3run.*10CallEvents/ { print "rcm:" $3; exit }' /proc/kallsyms)
	fi
	[ -n "$cb" ] && [ -n "$work" ] || return 1
	probe_group on rcmc p:handler 'rcm_sample_rdma:client_handler event=+0(%si):u32' \
		p:resolve_addr rdma_resolve_addr r:resolved_addr rdma_resolve_addr \
		p:resolve_ip rdma_resolve_ip r:resolved_ip rdma_resolve_ip \
		p:addr_work process_one_req p:addr_cb "$cb" \
		p:resolve_route rdma_resolve_route r:resolved_route rdma_resolve_route \
		p:event_work "$work" p:connect rdma_connect_locked p:disconnect rdma_disconnect \
		p:ah rdma_create_ah r:ahed rdma_create_ah p:post ib_post_send_mad \
		${SCHED:+p:ar ib_core:addr_resolve r:ard ib_core:addr_resolve p:rt ip_route_output_flow
		r:rtd ip_route_output_flow p:nes __neigh_event_send p:arp arp_solicit
		p:mdw mod_delayed_work_on r:mdwd mod_delayed_work_on p:qw __queue_work r:qwd __queue_work
		p:kp kick_pool r:kpd kick_pool p:ttwu try_to_wake_up r:ttwud try_to_wake_up
		p:twl ttwu_queue_wakelist r:twld ttwu_queue_wakelist p:ipi native_send_call_func_single_ipi
		r:ipid native_send_call_func_single_ipi p:sel select_task_rq_fair r:seld select_task_rq_fair}
}

# Mean microseconds between markers of this guest's trace that follow
# each other, per pair "<start> <end> <label>" on stdin, for connections
# made one at a time: each <end> closes the last <start> not yet closed.
# Markers: rx:<attr> / tx:<attr> (a CM MAD received / posted; attr in hex
# without leading zeros), handler:<event>, handled:<event of that call>,
# and the other probes of server_probes by name (a kprobe's line: "<name>:
# (<symbol>...").
marker_steps() {
	awk 'FNR == NR { n = split($0, f, " "); np++; from[np] = f[1]; to[np] = f[2]
		label[np] = $0; sub(/^[^ ]+ [^ ]+ /, "", label[np]); next }
	{
		m = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\.[0-9]+:$/) t = substr($i, 1, length($i) - 1)
			if ($i == "attr_id") { a = $(i + 1); sub(/^0x0*/, "", a) }
			if ($i ~ /^event=/) ev = substr($i, 7)
		}
		if (/ib_mad_recv_done_handler/) m = "rx:" a
		else if (/ib_mad_ib_send_mad/) m = "tx:" a
		else if (/ handler: /) { m = "handler:" ev; last = ev }
		else if (/ handled: /) m = "handled:" last
		else if (match($0, / [a-z_]+: \(/))
			m = substr($0, RSTART + 1, RLENGTH - 4)
		if (m == "") next
		for (p = 1; p <= np; p++) {
			if (m == to[p] && (p in open)) { sum[p] += t - open[p]; cnt[p]++; delete open[p] }
			if (m == from[p]) open[p] = t
		}
	}
	END { for (p = 1; p <= np; p++) if (cnt[p]) printf "%s: %.0f us mean of %d\n", label[p], sum[p] * 1e6 / cnt[p], cnt[p] }' - $TRACE/trace
}

# The functions /proc/kallsyms lists for the modules <names>
# (space-separated), one per line.
module_symbols() {
	awk -v mods=" $1 " 'NF >= 4 { m = $4; gsub(/\[|\]/, "", m); if (index(mods, " " m " ")) print $3 }' /proc/kallsyms
}

# "<all samples> <idle samples> <CM samples>" of <perf.data> for the
# modules <names> (space-separated). perf puts module code under the
# kernel's own object here, so a sample is the CM's when its function is
# one /proc/kallsyms lists for a CM module.
share_of() {
	module_symbols "$2" > /tmp/share.syms
	perf report -i "$1" --stdio -n --no-children --sort comm,sym 2> /dev/null | tr -d '\r' |
		awk 'FNR == NR { cm[$1] = 1; next }
		!/^#/ && NF >= 4 && $1 ~ /%$/ {
			all += $2
			if ($3 == "swapper") idle += $2
			if ($NF in cm) own += $2
		}
		END { print all + 0, idle + 0, own + 0 }' /tmp/share.syms -
	rm -f /tmp/share.syms
}

# The functions with the most samples of <perf.data>, microseconds per
# item, on one line after <head>: <perf.data> <self|inclusive> <count>
# <items> <head> [<modules>]. "self" counts the samples in a function
# itself, "inclusive" those in it and all it calls (where inside a step
# its time goes; the data needs call graphs); with <modules>
# (space-separated) only their functions are listed.
symbol_top() {
	local data=$1 children=--no-children total
	[ "$2" = inclusive ] && children=--children
	: > /tmp/top.syms
	[ -n "$6" ] && module_symbols "$6" > /tmp/top.syms
	total=$(perf report -i "$data" --stdio -n --no-children --sort comm -g none 2> /dev/null |
		tr -d '\r' | awk '!/^#/ && NF >= 3 { s += $2 } END { print s + 0 }')
	perf report -i "$data" --stdio -n $children --sort sym -g none 2> /dev/null | tr -d '\r' |
		awk -v total="$total" -v n="$4" -v hz="$PROFILE_HZ" -v top="$3" -v head="$5" -v only="${6:+1}" "$(short_name_awk)"'
		FILENAME == "/tmp/top.syms" { keep[$1] = 1; next }
		!/^#/ && NF >= 4 && shown < top && (!only || ($NF in keep)) {
			share = $1
			sub(/%/, "", share)
			sym = short_name($NF)
			line = line sprintf("%s %s %.2f", shown ? "," : "", sym, share / 100 * total / hz / n * 1e6)
			shown++
		}
		END { print head line }' /tmp/top.syms -
	rm -f /tmp/top.syms
}

# An awk function: whether symbol <sym> is <name>, a C name whole, a
# mangled Rust name (_R...) by its last identifier, which follows its
# length.
symbol_names_awk() {
	cat <<'AWK'
function names(sym, name,    tail) {
	if (sym == name)
		return 1
	tail = substr(sym, length(sym) - length(name) + 1)
	return sym ~ /^_R/ && tail == name &&
		substr(sym, length(sym) - length(name), 1) ~ /[0-9]/
}
AWK
}

# An awk function short_name(sym): a mangled Rust name by its last four
# identifiers (the name of a generic function comes before those of its
# arguments: <length><name>, a name starting with a letter and the length
# not part of a back reference, "B1a_"; anything else is stepped over a
# character at a time); other names as they are.
short_name_awk() {
	cat <<'AWK'
function short_name(sym,    rest, len, part, before, p1, p2, p3, p4) {
	if (sym !~ /^_R/) return sym
	rest = sym
	p1 = p2 = p3 = p4 = ""
	while (match(rest, /[0-9]+[A-Za-z_]/)) {
		len = substr(rest, RSTART, RLENGTH - 1) + 0
		part = substr(rest, RSTART + RLENGTH - 1, len)
		before = RSTART > 1 ? substr(rest, RSTART - 1, 1) : ""
		if (part ~ /^[A-Za-z]/ && length(part) == len && before != "B") {
			p4 = p3; p3 = p2; p2 = p1; p1 = part
			rest = substr(rest, RSTART + RLENGTH - 1 + len)
		} else {
			rest = substr(rest, RSTART + 1)
		}
	}
	sym = p1
	if (p2 != "") sym = p2 "::" sym
	if (p3 != "") sym = p3 "::" sym
	if (p4 != "") sym = p4 "::" sym
	return sym
}
AWK
}

# The work functions cm_counts counts for CM <c|rcm|rcmk>, as kprobe
# targets: the C CM's (ib_cm's and iw_cm's cm_work_handler, rdma_cm's
# works), rcm's work and timer entry points (its Work and Timer callbacks
# in rust/rdma/timer.rs; functions the compiler found identical share one
# symbol, such as the two delivery works), and ib_core's that both use (the
# address resolution's process_one_req, the completion polling of the MAD
# layer's queues, ib_cq_poll_work).
work_functions() {
	local wanted="ib_core:process_one_req ib_core:ib_cq_poll_work"
	[ "$1" = c ] && wanted="$wanted ib_cm:cm_work_handler iw_cm:cm_work_handler rdma_cm:cma_work_handler
		rdma_cm:cma_netevent_work_handler rdma_cm:cma_iboe_join_work_handler"
	# Those loaded, as <module>:<symbol>.
	awk -v wanted=" $(echo $wanted) " -v rcm="$([ "$1" = c ] || echo 1)" 'NF >= 4 {
		m = $4; gsub(/\[|\]/, "", m); t = m ":" $3
		if (index(wanted, " " t " ") || (rcm && m == "rcm" && $3 ~ /5timer(3run|4fire)/)) print t
	}' /proc/kallsyms | sort -u
}

# "<count> <what>" lines on stdin as one line after <head>: their sum, then
# the 12 largest, then the rest's sum.
per_item_line() {
	sort -nr | awk -v head="$1" '{ all += $1 }
		NR <= 12 { top = top sprintf(", %s %.2f", $2, $1); next }
		{ rest += $1 }
		END { printf "%s %.2f in all%s%s\n", head, all, top, (rest > 0 ? sprintf(", others %.2f", rest) : "") }'
}

# The work items of the CM on this guest, from kprobes on its work
# functions (work_functions; on the CM's and ib_core's own functions only:
# armed and removed while they are idle, unlike the kernel's lock or
# scheduler functions, whose patching TCG's other vCPU trips over, an
# int3 oops seen on _raw_spin_lock_irqsave): "on <cm>" arms them, "off
# <items> <head>" removes them and prints after <head> how many times each
# ran per item, most first. A trace that overflowed says what it lost.
cm_counts() {
	local f args= n=0 lost
	rcm_tracefs || return 1
	if [ "$1" = on ]; then
		echo 0 > $TRACE/tracing_on
		echo 16384 > $TRACE/buffer_size_kb
		echo > $TRACE/trace
		for f in $(work_functions "$2"); do
			args="$args p:w$n $f"
			n=$((n + 1))
		done
		# shellcheck disable=SC2086 # pairs of words
		probe_group on rcmw $args || return 1
		echo 1 > $TRACE/tracing_on
		return
	fi
	echo 0 > $TRACE/tracing_on
	lost=$(cat $TRACE/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n + 0 }')
	if [ "$lost" -gt 0 ]; then
		echo "$3 the trace lost $lost events (overrun): no counts"
	else
		# A kprobe's line: "... w<n>: (<symbol>+0x0/0x<size> [<module>])".
		sed -n 's/.* w[0-9]*: (\([^+]*\)+.*/\1/p' $TRACE/trace |
			awk -v n="$2" "$(short_name_awk)"'
			{ c[short_name($1)]++ }
			END { for (k in c) printf "%.2f %s\n", c[k] / n, k }' | per_item_line "$3 work items per item:"
	fi
	probe_group off rcmw
	echo $TRACE_KB > $TRACE/buffer_size_kb
}

# The scheduler's and interrupts' tracepoints on this guest ("on" after
# mad_trace on, "off" before reading): where a call's wall time goes
# when it is longer than its CPU time (sched_window).
SCHED_EVENTS="sched/sched_switch sched/sched_wakeup irq/softirq_entry irq/softirq_exit
	irq/irq_handler_entry irq/irq_handler_exit irq_vectors/local_timer_entry
	irq_vectors/local_timer_exit irq_vectors/call_function_single_entry
	irq_vectors/call_function_single_exit irq_vectors/reschedule_entry irq_vectors/reschedule_exit"
sched_trace() { # <on|off>
	local e v=0
	[ "$1" = on ] && v=1
	for e in $SCHED_EVENTS; do
		[ -f $TRACE/events/$e/enable ] && echo $v > $TRACE/events/$e/enable
	done
	return 0
}

# Where the wall time between kprobe markers <start> and <end> of one
# task goes (the first <end> of the task that hit <start>): its mean, the
# part the task was switched out (and who ran instead, how it left: R
# preempted, else asleep), the part in interrupts and softirqs on its CPU
# while it ran, the wakeups it made and on which CPU they landed, the
# other markers it hit on the way and the mean time from each to the
# next, and what the other CPUs ran while it was in kick_pool (markers
# kp/kpd: the waking of a workqueue's worker).
sched_window() { # <start> <end> <head>
	awk -v s="$1" -v e="$2" -v head="$3" '
	{
		t = ""; ev = ""
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1); ev = $(i + 1); sub(/:$/, "", ev); break }
		if (t == "") next
		task = $1; pid = task; sub(/.*-/, "", pid)
		cpu = $0; sub(/^[^[]*\[/, "", cpu); cpu = substr(cpu, 1, 3) + 0
	}
	ev == s && !(pid in open) { open[pid] = t; ocpu[pid] = cpu; next }
	ev == e && (pid in open) {
		wall += t - open[pid]; n++
		k = (pid in lastev ? lastev[pid] : s) " -> " ev
		seg[k] += t - (pid in lastat ? lastat[pid] : open[pid]); nseg[k]++
		delete open[pid]; delete offat[pid]; delete lastev[pid]; delete lastat[pid]
		next
	}
	ev == "sched_switch" {
		pp = $0; sub(/.* prev_pid=/, "", pp); sub(/ .*/, "", pp)
		np = $0; sub(/.* next_pid=/, "", np); sub(/ .*/, "", np)
		st = $0; sub(/.* prev_state=/, "", st); sub(/ .*/, "", st)
		nc = $0; sub(/.* next_comm=/, "", nc); sub(/ next_pid=.*/, "", nc); gsub(/[0-9]+/, "N", nc)
		if (pp in open) { offat[pp] = t; outs++; how[substr(st, 1, 1) == "R" ? "preempted" : "asleep"]++; ran[nc]++ }
		if ((np in open) && (np in offat)) { off += t - offat[np]; delete offat[np] }
		oncpu[cpu] = nc
		if (watch && cpu != wcpu) { pc = $0; sub(/.*prev_comm=/, "", pc); sub(/ prev_pid=.*/, "", pc); gsub(/[0-9]+/, "N", pc); other["switch " pc " (" substr(st, 1, 1) ") -> " nc]++ }
		next
	}
	ev == "sched_wakeup" {
		if (pid in open && !(pid in offat)) {
			tc = $0; sub(/.* target_cpu=/, "", tc); tc += 0
			wc = $0; sub(/.*comm=/, "", wc); sub(/ pid=.*/, "", wc); gsub(/[0-9]+/, "N", wc)
			wake[wc (tc == cpu ? " same cpu" : " other cpu")]++
		}
		next
	}
	/_entry/ && (pid in open) && !(pid in offat) { irqat[cpu] = t; irqname[cpu] = ev; next }
	ev !~ /_exit$|_entry$/ && (pid in open) {
		hits[ev]++
		k = (pid in lastev ? lastev[pid] : s) " -> " ev
		seg[k] += t - (pid in lastat ? lastat[pid] : open[pid]); nseg[k]++
		lastev[pid] = ev; lastat[pid] = t
		if (ev == "kp") { watch = 1; wcpu = cpu; for (c in oncpu) if (c != cpu) other["at kick_pool other cpu ran " oncpu[c]]++ }
		if (ev == "kpd") watch = 0
	}
	watch && cpu != wcpu && ev != "sched_switch" { other["other cpu " ev]++ }
	/_exit/ && (cpu in irqat) {
		for (q in open) if (ocpu[q] == cpu && !(q in offat)) { intr[irqname[cpu]] += t - irqat[cpu]; break }
		delete irqat[cpu]; next
	}
	END {
		if (!n) exit
		line = sprintf("%s %.0f us mean of %d; switched out %.2f per call, %.0f us off CPU", head, wall * 1e6 / n, n, outs / n, off * 1e6 / n)
		for (k in how) line = line sprintf(", %s %.2f", k, how[k] / n)
		for (k in ran) line = line sprintf("; ran instead %s %.2f", k, ran[k] / n)
		for (k in intr) line = line sprintf("; in %s %.0f us", k, intr[k] * 1e6 / n)
		for (k in wake) line = line sprintf("; woke %s %.2f", k, wake[k] / n)
		for (k in hits) line = line sprintf("; hit %s %.2f", k, hits[k] / n)
		for (k in other) line = line sprintf("; %s %.2f", k, other[k] / n)
		for (k in seg) line = line sprintf("; %s %.0f us x %.2f", k, seg[k] * 1e6 / nseg[k], nseg[k] / n)
		print line
	}' $TRACE/trace
}

# RCM_BENCH_SCHED: one more commands run (not timed) with each
# DESTROY_ID command's wall time split by the scheduler's tracepoints
# (sched_window), beside the run's own step times: whether a destroy
# step longer than its CPU waits inside the command or between commands.
# <c|rcm|rcmk> <ids> <head>
command_sched() {
	local fn out
	# rcm's own device (and a baseline's) runs its command in
	# UcmaAbi::destroy_id; C's and the in-tree rdma_ucm over rcm in
	# ucma_destroy_id.
	if [ "$1" = rcm ] || [ "$1" = base ]; then
		fn=$(awk '$3 ~ /UcmaAbi10destroy_id/ { print "rcm:" $3; exit }' /proc/kallsyms)
	else
		fn=rdma_ucm:ucma_destroy_id
	fi
	[ -n "$fn" ] && rcm_tracefs || return 1
	echo 0 > $TRACE/tracing_on
	echo 32768 > $TRACE/buffer_size_kb
	echo > $TRACE/trace
	probe_group on rcmd p:destroy "$fn" r:destroyed "$fn" || return 1
	sched_trace on
	echo 1 > $TRACE/tracing_on
	out=$("$STEPS_BIN" "$RCM_PEER" "$2") || { echo "$out" >&2; return 1; }
	echo 0 > $TRACE/tracing_on
	sched_trace off
	echo "$3 steps $(echo $out)"
	sched_window destroy destroyed "$3 DESTROY_ID:"
	probe_group off rcmd
	echo $TRACE_KB > $TRACE/buffer_size_kb
}

# Lines "<name>\t<value>" on stdin, the <count> largest values first, on
# one line after <head>: "<head> name value, name value, ...".
top_line() { # <count> <head>
	sort -t "$(printf '\t')" -k2 -nr | head -"$1" |
		awk -v head="$2" 'BEGIN { FS = "\t"; line = head } { line = line sprintf("%s %s %s", NR > 1 ? "," : "", $1, $2) } END { print line }'
}

# The CM modules' own samples of <perf.data> by the Rust module a function
# is defined in (the first name after the crate's in its mangled symbol:
# proto is the protocol core, shell, abi, rdma the layers around it);
# unmangled ones are the exported C symbols and the C shims. Microseconds
# per item, on one line after <head>: <perf.data> <items> <head> <modules>
layer_split() {
	module_symbols "$4" > /tmp/layer.syms
	perf report -i "$1" --stdio -n --no-children --sort sym -g none --no-demangle 2> /dev/null | tr -d '\r' |
		awk -v n="$2" -v hz="$PROFILE_HZ" '
		FILENAME == "/tmp/layer.syms" { cm[$1] = 1; next }
		!/^#/ && NF >= 4 && ($NF in cm) {
			layer = "unmangled"
			if (match($NF, /8rcm_main[0-9]+[a-z_]+/)) {
				layer = substr($NF, RSTART + 9, RLENGTH - 9)
				sub(/^[0-9]+/, "", layer)
			}
			c[layer] += $2
		}
		END { for (k in c) printf "%s\t%.2f\n", k, c[k] / hz / n * 1e6 }' /tmp/layer.syms - |
		top_line 100 "$3"
	rm -f /tmp/layer.syms
}

# The offsets inside one function where its own samples fell (the leaf
# frame, symbol+offset, as perf resolves it), the hottest first, us per
# item: where inside a function that spends much itself the time goes
# (the host maps an offset to its instruction with objdump on rcm.ko).
hot_offsets() { # <perf.data> <symbol> <items> <head>
	perf script -i "$1" -F ip,sym,symoff --no-demangle 2> /dev/null | tr -d '\r' |
		awk -v want="$2" -v n="$3" -v hz="$PROFILE_HZ" '
		NF == 0 { leaf = 0; next }
		$1 ~ /^[0-9a-f]+$/ && !leaf {
			leaf = 1; s = $2; o = s; sub(/\+0x[0-9a-f]+$/, "", s); sub(/^.*\+/, "", o)
			if (s == want) c[o]++
		}
		END { for (k in c) printf "%s\t%.2f\n", k, c[k] / hz / n * 1e6 }' |
		top_line 24 "$4"
}

# What <symbols> (comma-separated) call in <perf.data> (call graphs): for
# each function whose name is one of them (a mangled Rust name by its last
# identifier), its callees as perf report draws them, each with the
# microseconds per item spent in it and what it called (callees under
# 0.02 % of the samples left out); after <head>, at most 60 lines each.
callees_of() { # <perf.data> <symbols> <items> <head>
	perf report -i "$1" --stdio --children --sort sym --no-demangle \
		-g callee,0.02,caller,function,period 2> /dev/null | tr -d '\r' |
		awk -v want=",$2," -v n="$3" -v head="$4" "$(short_name_awk)$(symbol_names_awk)"'
		function wanted(sym,    k, w) {
			k = split(substr(want, 2, length(want) - 2), w, ",")
			for (; k > 0; k--)
				if (names(sym, w[k])) return 1
			return 0
		}
		/^# Event count/ { total = $NF }
		/^#/ || NF == 0 { next }
		/^ +[0-9.]+% +[0-9.]+% +\[/ {
			inb = wanted($NF); lines = 0
			if (inb) {
				pct = $1; sub(/%/, "", pct)
				printf "%s %s %.2f\n", head, short_name($NF), pct / 100 * total / 1000 / n
			}
			next
		}
		!inb || lines >= 60 || $0 ~ /^[ |]*$/ { next }
		match($0, /--[0-9]+--/) {
			ns = substr($0, RSTART + 2, RLENGTH - 4)
			sym = substr($0, RSTART + RLENGTH)
			printf "%s %s%.2f %s\n", head, substr($0, 1, RSTART - 1), ns / 1000 / n, short_name(sym)
			lines++
		}'
}

# Who calls <symbols> (comma-separated) in <perf.data> (call graphs):
# each sample whose own function is one of them counts for the nearest
# function up its stack that is the CM's (modules <names>); prints after
# <head> the microseconds per item in all and the 15 largest callers.
callers_of() { # <perf.data> <symbols> <items> <head> <modules>
	module_symbols "$5" > /tmp/callers.syms
	perf script -i "$1" -F ip,sym --no-demangle 2> /dev/null | tr -d '\r' |
		awk -v want=",$2," -v n="$3" -v hz="$PROFILE_HZ" "$(short_name_awk)"'
		FILENAME == "/tmp/callers.syms" { cm[$1] = 1; next }
		function close_sample(    i, who) {
			if (nf && index(want, "," frame[1] ",")) {
				who = "(outside the CM)"
				for (i = 2; i <= nf; i++) if (frame[i] in cm) { who = short_name(frame[i]); break }
				c[who]++; all++
			}
			nf = 0
		}
		NF == 0 { close_sample(); next }
		$1 ~ /^[0-9a-f]+$/ { s = $2; sub(/\+0x[0-9a-f]+$/, "", s); frame[++nf] = s }
		END {
			close_sample()
			printf "in all\t%.2f\n", all / hz / n * 1e6
			for (k in c) printf "%s\t%.2f\n", k, c[k] / hz / n * 1e6
		}' /tmp/callers.syms - | top_line 16 "$4"
	rm -f /tmp/callers.syms
}
