#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the rcm kselftests: KTAP output, the peer guest's
# command agent, and checks of the kernel log for splats and leaks.

RCM_TEST_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
. "$RCM_TEST_DIR/../kselftest/ktap_helpers.sh"
[ -f /run/rcm.env ] && . /run/rcm.env
RCM_PEER=${RCM_PEER:-none}

# Keeps function $1's body under the name $2$1, so that $1 can be
# redefined as a wrapper calling it.
rcm_keep_function() { # <function> <prefix>
	eval "$2$(declare -f "$1")"
}

# Every test point reports how long it took (the CI budget is spent
# point by point): the KTAP result functions are wrapped to print it.
RCM_POINT_START=$SECONDS
for f in ktap_test_pass ktap_test_fail ktap_test_skip; do
	rcm_keep_function "$f" rcm_untimed_
	eval "$f() { ktap_print_msg \"point took \$((SECONDS - RCM_POINT_START)) s\"; rcm_untimed_$f \"\$@\"; RCM_POINT_START=\$SECONDS; }"
done
RCM_ADDR=${RCM_ADDR:-10.0.0.1}
RCM_AGENT_PORT=7777

# The CI budget: make test runs every scenario at least once, and its
# repeats (rounds, long counts, both directions of a tool) where rcm is on
# both sides; make test-full (RCM_TEST_FULL=1) runs the whole matrix.
rcm_full() { [ "${RCM_TEST_FULL:-0}" = 1 ]; }

# rcm_repeats <count in make test-full> <count in make test>: how often a
# repeated scenario runs (the CI budget).
rcm_repeats() {
	if rcm_full; then echo "$1"; else echo "$2"; fi
}

# Lines of dmesg that mean the kernel found a bug. Any of them fails a test.
RCM_SPLAT_RE='BUG:|WARNING:|KASAN:|Oops|general protection fault|Kernel panic|UBSAN:|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|list_(add|del) corruption|refcount_t:|panicked at|kernel BUG|Call Trace:|blocked for more than|detected stalls? on CPU'

rcm_log() { ktap_print_msg "$*"; }

# modprobe from /: kmod takes a name that exists as a path in the current
# directory for a module file, and the kselftest install has a directory
# called rcm right where the runner starts tests.
rcm_modprobe() { (cd / && modprobe "$@"); }

# Mounts tracefs if needed and turns off its recording of task names,
# which hooks the scheduler's sched_switch tracepoint each time a trace
# event is enabled or disabled: the code patch that takes (a static key in
# __schedule, replaced through a temporary int3) can be run stale by TCG's
# other vCPU, which then oopses on the int3 (seen twice in make bench).
rcm_tracefs() {
	local t=/sys/kernel/tracing
	[ -d $t/events ] || mount -t tracefs nodev $t || return 1
	echo 0 > $t/options/record-cmd
}

# Run a command on the peer guest; its output is printed, its status returned.
# The command travels base64-encoded on one line, so it may span lines and
# hold any quoting. The connection ends after RCM_PEER_IDLE s without a
# byte either way (600: peer_wait's longest wait is silent); a call that
# got no answer, or a slow one, is noted in this guest's kernel log with
# its time, so that a stalled test says where it stalled.
peer_run() {
	local out rc start=$SECONDS idle=${RCM_PEER_IDLE:-600} cmd="$*"
	out=$(printf '%s' "$*" | base64 -w0 | { cat; echo; } |
		socat -t "$idle" -T "$idle" - "TCP:$RCM_PEER:$RCM_AGENT_PORT,connect-timeout=5" 2>&1)
	rc=$(printf '%s\n' "$out" | sed -n 's/^__RC=\([0-9]*\)$/\1/p' | tail -n 1)
	printf '%s\n' "$out" | grep -v '^__RC=[0-9]*$'
	if [ -z "$rc" ] || [ $((SECONDS - start)) -ge 120 ]; then
		echo "rcm-test: peer_run ${rc:+(status $rc) }after $((SECONDS - start)) s: ${cmd:0:100}" |
			tr '\n' ' ' > /dev/kmsg 2> /dev/null
	fi
	[ -n "$rc" ] || { echo "peer_run: no answer from the peer's agent"; return 125; }
	return "$rc"
}

# Start a command on the peer in the background under a job name.
peer_start() {
	local name=$1
	shift
	peer_run "rm -f /tmp/job.$name.*; (sh -c '$*' > /tmp/job.$name.out 2>&1; echo \$? > /tmp/job.$name.rc) > /dev/null 2>&1 & echo \$! > /tmp/job.$name.pid"
}

# Wait up to $2 seconds for a peer job; print its output, return its status
# (124 after killing it on timeout).
peer_wait() {
	local name=$1 limit=${2:-60}
	peer_run "i=0; while [ ! -f /tmp/job.$name.rc ] && [ \$i -lt $((limit * 10)) ]; do sleep 0.1; i=\$((i+1)); done
		if [ -f /tmp/job.$name.rc ]; then cat /tmp/job.$name.out; exit \$(cat /tmp/job.$name.rc); fi
		tree() { local c; for c in \$(pgrep -P \$1); do tree \$c; done; echo \$1; }
		kill \$(tree \$(cat /tmp/job.$name.pid)) 2>/dev/null
		cat /tmp/job.$name.out; echo 'peer job $name timed out after ${limit}s'; exit 124"
}

# Retry a client command until it succeeds (the peer's server may still be
# starting): rcm_retry <attempts> <cmd...>. Output of the last try is kept
# in $RCM_RETRY_OUT.
rcm_retry() {
	local tries=$1 i
	shift
	for ((i = 1; i <= tries; i++)); do
		RCM_RETRY_OUT=$("$@" 2>&1) && return 0
		sleep 1
	done
	return 1
}

# Print the splat lines of a kernel log (and a little context) if any.
rcm_find_splats() {
	grep -E -A 25 "$RCM_SPLAT_RE"
}

# Test point: this guest's and the peer's kernel logs show no bug report.
rcm_check_dmesg_clean() {
	local report
	report=$(dmesg | rcm_find_splats)
	if [ "$RCM_PEER" != none ]; then
		report+=$(peer_run dmesg | rcm_find_splats | sed 's/^/peer: /')
	fi
	if [ -n "$report" ]; then
		printf '%s\n' "$report" | sed 's/^/# /'
		ktap_test_fail "kernel logs free of KASAN/lockdep/WARN/BUG/oops reports"
	else
		ktap_test_pass "kernel logs free of KASAN/lockdep/WARN/BUG/oops reports"
	fi
}

# kmemleak: forget everything allocated so far (boot, module loading)...
rcm_kmemleak_clear() {
	[ -w /sys/kernel/debug/kmemleak ] && echo clear > /sys/kernel/debug/kmemleak
}

# ...and later report objects that became unreferenced since. kmemleak only
# reports objects older than 5 s that stayed unreferenced over two scans:
# the scans start 6 s after the last scenario (RCM_QUIET_SINCE, set when
# the final checks begin), or 6 s from now.
rcm_check_kmemleak() {
	local report wait
	if [ ! -w /sys/kernel/debug/kmemleak ]; then
		ktap_test_skip "kmemleak finds no leak (kmemleak not available)"
		return
	fi
	wait=$((6 - (SECONDS - ${RCM_QUIET_SINCE:-$SECONDS})))
	[ $wait -le 0 ] || sleep $wait
	echo scan > /sys/kernel/debug/kmemleak
	echo scan > /sys/kernel/debug/kmemleak
	report=$(cat /sys/kernel/debug/kmemleak)
	if [ -n "$report" ]; then
		printf '%s\n' "$report" | head -60 | sed 's/^/# /'
		ktap_test_fail "kmemleak finds no leak"
	else
		ktap_test_pass "kmemleak finds no leak"
	fi
}

PEER_KMEMLEAK='sleep 6; echo scan > /sys/kernel/debug/kmemleak; echo scan > /sys/kernel/debug/kmemleak; cat /sys/kernel/debug/kmemleak'

# Starts the peer's kmemleak scans in the background, so that they run
# while this guest checks its own (the scans take tens of seconds under
# TCG); rcm_check_kmemleak_peer collects their result.
rcm_kmemleak_peer_start() {
	peer_start kmemleak "$PEER_KMEMLEAK" > /dev/null && RCM_KMEMLEAK_PEER_STARTED=1
}

# The same on the peer guest: a test point (kmemleak must be cleared there
# first, with peer_run 'echo clear > /sys/kernel/debug/kmemleak').
rcm_check_kmemleak_peer() {
	local report
	if [ "${RCM_KMEMLEAK_PEER_STARTED:-0}" = 1 ]; then
		report=$(peer_wait kmemleak 600)
	else
		report=$(peer_run "$PEER_KMEMLEAK")
	fi
	if [ -n "$report" ]; then
		printf '%s\n' "$report" | head -60 | sed 's/^/# /'
		ktap_test_fail "kmemleak finds no leak on the peer"
	else
		ktap_test_pass "kmemleak finds no leak on the peer"
	fi
}

# ---- points and plans ----
# A boot names its scenario functions once (rcm_two_guests_run): they run
# twice, first in a subshell only to count their points (the KTAP plan
# precedes the results; nobody counts by hand), then for real. So a
# scenario function reports only through rcm_expect, rcm_point and
# rcm_skip, runs any other command with effects through rcm_step, and
# branches only on the configuration (CM modes, make test-full), never on
# a result. A function that breaks this rule fails its boot: each point
# must report exactly one result, and ktap_finished holds the total to
# the plan.
RCM_COUNTING=0
RCM_COUNTED=0
rcm_counting() { [ "$RCM_COUNTING" = 1 ]; }

# Counts a point; with RCM_LIST_POINTS=1 also lists it (on fd 3, which
# rcm_points opens on its caller's stderr).
rcm_counted() { # <what the point is>
	RCM_COUNTED=$((RCM_COUNTED + 1))
	[ "${RCM_LIST_POINTS:-0}" != 1 ] || echo "$RCM_COUNTED $*" >&3
}

# A command with effects, run only for real.
rcm_step() { rcm_counting || "$@"; }

# A point skipped for a reason of the configuration.
rcm_skip() { # <description>
	if rcm_counting; then
		rcm_counted "$1 # SKIP"
	else
		ktap_test_skip "$1"
	fi
}

# A point whose function reports its own result (exactly one).
rcm_point() { # <function> [args...]
	local before reported
	if rcm_counting; then
		rcm_counted "$(rcm_point_name "$@")"
		return 0
	fi
	before=$((KTAP_CNT_PASS + KTAP_CNT_FAIL + KTAP_CNT_SKIP))
	"$@"
	reported=$((KTAP_CNT_PASS + KTAP_CNT_FAIL + KTAP_CNT_SKIP - before))
	[ $reported = 1 ] || rcm_log "BUG in the test: $1 reported $reported results, not one"
}

# Declares each named function a test point that reports its own result
# (the rdma-core tools' checks): calling it runs it through rcm_point.
rcm_each_a_point() { # <function...>
	local f
	for f; do
		rcm_keep_function "$f" rcm_point_body_
		eval "$f() { rcm_point rcm_point_body_$f \"\$@\"; }"
	done
}

# Prints a file's lines as KTAP messages, under a heading, if it has any.
rcm_log_file() { # <file> [heading]
	local line
	[ -s "$1" ] || return 0
	[ -z "${2:-}" ] || rcm_log "$2"
	while IFS= read -r line; do rcm_log "  $line"; done < "$1"
}

# How a point that reports its own result is listed: its function (less
# the wrapper's prefix) and arguments.
rcm_point_name() { echo "${1#rcm_point_body_}${2:+ ${*:2}}"; }

# The points "$@" (a scenario function and its arguments) reports.
rcm_points() {
	(
		RCM_COUNTING=1
		RCM_COUNTED=0
		"$@" 3>&2 > /dev/null 2>&1
		echo "$RCM_COUNTED"
	)
}

# A test of its own: the KTAP header, the plan counted from "$@" (a
# function and its arguments), its points, the verdict. With
# RCM_LIST_POINTS=1 it only lists the points, on stderr, numbered as the
# results will be.
rcm_run() { # <function> [args...]
	if [ "${RCM_LIST_POINTS:-0}" = 1 ]; then
		rcm_points "$@" > /dev/null
		exit 0
	fi
	ktap_print_header
	ktap_set_plan "$(rcm_points "$@")"
	"$@"
	ktap_finished
}

# Ends a test that needs the peer guest when there is none.
rcm_needs_peer() {
	[ "$RCM_PEER" != none ] || [ "${RCM_LIST_POINTS:-0}" = 1 ] && return 0
	ktap_print_header
	ktap_skip_all "needs a peer guest"
	exit "$KSFT_SKIP"
}

# Several scenario libraries may share one boot of two guests (the CI
# budget): rcm_two_guests_run runs a function that calls their scenario
# functions, with kmemleak cleared on both guests before and, after, the
# final points: both kernel logs, kmemleak here and on the peer.
rcm_two_guests_run() { # <function> [args...]
	rcm_needs_peer
	rcm_run rcm_two_guests "$@"
}
rcm_two_guests() {
	rcm_step rcm_kmemleak_clear
	rcm_step peer_run 'echo clear > /sys/kernel/debug/kmemleak' > /dev/null
	"$@"
	RCM_QUIET_SINCE=$SECONDS
	rcm_step rcm_kmemleak_peer_start
	rcm_check_dmesg_clean
	rcm_check_kmemleak
	rcm_check_kmemleak_peer
}

# Test point from a command's status, printing its output on failure.
rcm_expect() { # <description> <cmd...>
	local desc=$1 out
	shift
	if rcm_counting; then
		rcm_counted "$desc"
		return 0
	fi
	if out=$("$@" 2>&1); then
		ktap_test_pass "$desc"
	else
		printf '%s\n' "$out" | tail -40 | sed 's/^/# /'
		ktap_test_fail "$desc"
	fi
}

# The final checks are test points too.
rcm_each_a_point rcm_check_dmesg_clean rcm_check_kmemleak rcm_check_kmemleak_peer
