#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=1 modes=both timeout=300
#
# The errnos of the ib_cm exports on misuse, the C CM's against rcm's, in
# one boot (CM mode both: the C modules loaded, rcm.ko kept aside at
# /usr/lib/rcm/rcm.ko). modules/rcm_test_errno calls every export
# with bad arguments and in wrong states and checks each errno against the
# 6.12 C ib_cm's. It runs on the C CM first, the reference: a failure there
# means the sample is wrong. Then the C modules go, rcm.ko takes their
# place, and the same module runs again; both runs must pass, and pass the
# same list of checks.
#
# In each of the two runs modules/rcm_test_qp_attr then connects RC,
# UC and XRC ids to a listener on the same device, with and without an
# alternate path, and logs what ib_cm_init_qp_attr returns for INIT, RTR
# and RTS on both sides at every stage, and each REJ (on RoCE 6.12 rejects
# an alternate path with reason 18): rcm's lines must be the C CM's. Each
# connection must end with the server's DREP.
#
# kmemleak: 6.12's ib_send_cm_drep returns -EINVAL for too much private
# data without freeing its copy of it, so after the C run kmemleak may
# report objects allocated under ib_send_cm_drep; nothing else may leak.
# That report is read while ib_cm is loaded (its frames resolve) and then
# cleared. The last check is for what the rcm run and rcm's unload leave
# behind: it ignores objects the C run's insmod allocated (the copy may
# have looked referenced, through a stale pointer, at the first scan).
. "$(dirname "$(readlink -f "$0")")/rcm_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_cm_switch_lib.sh"

SAMPLE_KO=/lib/modules/$(uname -r)/extra/rcm_test_errno.ko
QP_ATTR_KO=/lib/modules/$(uname -r)/extra/rcm_test_qp_attr.ko
KMEMLEAK=/sys/kernel/debug/kmemleak
OUT=/tmp/rcm_ib_cm_errno

if [ "${RCM_LIST_POINTS:-0}" != 1 ] && { [ ! -f "$RCM_KO" ] || [ ! -f "$SAMPLE_KO" ]; }; then
	ktap_print_header
	ktap_skip_all "needs CM mode both ($RCM_KO) and $SAMPLE_KO"
	exit "$KSFT_SKIP"
fi
mkdir -p "$OUT"
# Report (and so clear) what boot and module loading left unreferenced.
[ -w "$KMEMLEAK" ] && echo scan > "$KMEMLEAK"
rcm_kmemleak_clear

# A marker in the kernel log, and the log from the marker on.
mark() { echo "rcm_ib_cm_errno: $1" > /dev/kmsg; }
log_since() { dmesg | sed -n "/rcm_ib_cm_errno: $1\$/,\$p"; }

# run_sample <cm>: one insmod of the sample on the CM loaded now. Keeps
# insmod's pid ($OUT/<cm>.pid) and status ($OUT/<cm>.rc), the sample's
# log lines ($OUT/<cm>.log) and the names of its checks in order
# ($OUT/<cm>.names).
run_sample() {
	local cm=$1 rc=0 pid
	mark "run on $cm"
	insmod "$SAMPLE_KO" dev=rxe0 &
	pid=$!
	echo "$pid" > "$OUT/$cm.pid"
	wait "$pid" || rc=$?
	echo "$rc" > "$OUT/$cm.rc"
	if grep -q '^rcm_test_errno ' /proc/modules; then
		rmmod rcm_test_errno
	fi
	log_since "run on $cm" | grep 'rcm_test_errno: ' > "$OUT/$cm.log"
	sed -nE 's/.*rcm_test_errno: (ok|FAIL) ([A-Za-z0-9_]+).*/\2/p' \
		"$OUT/$cm.log" > "$OUT/$cm.names"
}

# sample_passed <cm>: insmod succeeded and the summary counts as many
# checks as were logged, none failed. Prints what is not "ok".
sample_passed() {
	local cm=$1 n rc summary
	rc=$(cat "$OUT/$cm.rc")
	n=$(($(wc -l < "$OUT/$cm.names")))
	summary=$(sed -nE 's/.*rcm_test_errno: ([0-9]+ checks, [0-9]+ failed)$/\1/p' \
		"$OUT/$cm.log" | tail -n 1)
	grep -v 'rcm_test_errno: ok ' "$OUT/$cm.log"
	echo "$cm: ${summary:-no summary line}; insmod status $rc; $n checks logged"
	[ "$rc" = 0 ] && [ "$n" -gt 0 ] && [ "$summary" = "$n checks, 0 failed" ]
}

# qp_attr_run <cm>: rcm_test_qp_attr on the CM loaded now; its
# attribute lines go to $OUT/<cm>.qp_attr. Succeeds if every scenario
# connected.
qp_attr_run() {
	local cm=$1 rc=0
	mark "qp_attr on $cm"
	insmod "$QP_ATTR_KO" dev=rxe0 || rc=$?
	if grep -q '^rcm_test_qp_attr ' /proc/modules; then
		rmmod rcm_test_qp_attr
	fi
	log_since "qp_attr on $cm" | sed -n 's/.*rcm_test_qp_attr: //p' > "$OUT/$cm.qp_attr.log"
	# The client's and the server's callbacks run concurrently, so their
	# lines interleave differently from run to run: group them by scenario
	# and side (a stable sort keeps each side's own order).
	grep ':.* \(mask\|errno\|av\|alt\|REJ\) ' "$OUT/$cm.qp_attr.log" |
		sort -s -k1,2 > "$OUT/$cm.qp_attr"
	echo "$cm: $(tail -n 1 "$OUT/$cm.qp_attr.log"); $(wc -l < "$OUT/$cm.qp_attr") attribute lines"
	[ "$rc" = 0 ] && [ -s "$OUT/$cm.qp_attr" ]
}

# 1. The reference: the C CM as CM mode both loaded it.
c_run() {
	grep -q '^rcm ' /proc/modules && { echo "rcm is loaded"; return 1; }
	grep -q '^ib_cm ' /proc/modules || rcm_modprobe ib_cm || return 1
	run_sample c
	sample_passed c
}

# The objects kmemleak reports now (objects older than 5 s, unreferenced
# over two scans), less those whose report matches the regex $1.
kmemleak_except() {
	sleep 6
	echo scan > "$KMEMLEAK"
	echo scan > "$KMEMLEAK"
	awk -v re="$1" 'function flush() {
			if (blk != "" && blk !~ re)
				printf "%s", blk
			blk = ""
		}
		/^unreferenced object/ { flush() }
		{ blk = blk $0 "\n" }
		END { flush() }' "$KMEMLEAK"
}

# Test point <desc>: kmemleak reports nothing whose record matches no
# <allowed> pattern (printed otherwise).
kmemleak_point() { # <desc> <allowed>
	local others
	others=$(kmemleak_except "$2")
	if [ -n "$others" ]; then
		printf '%s\n' "$others" | head -60 | sed 's/^/# /'
		ktap_test_fail "$1"
	else
		ktap_test_pass "$1"
	fi
}

# 2. kmemleak after the C run, less ib_send_cm_drep's known leak; then
# forget all it reported.
C_LEAK="kmemleak after the C run finds no leak but cm.c's in ib_send_cm_drep"
c_leaks() {
	kmemleak_point "$C_LEAK" ib_send_cm_drep
	rcm_log "kmemleak after the C run: $(grep -c '^unreferenced object' "$KMEMLEAK")" \
		"objects, $(grep -c ib_send_cm_drep "$KMEMLEAK") under ib_send_cm_drep"
	echo clear > "$KMEMLEAK"
}

# 3. The C stack out, rcm.ko in (as the bench does), until rcm has rxe0.
switch_to_rcm() {
	local m i
	for m in $C_STACK; do
		if grep -q "^$m " /proc/modules; then
			rmmod "$m" || return 1
		fi
	done
	mark "switch to rcm"
	insmod "$RCM_KO" || return 1
	for ((i = 0; i < 100; i++)); do
		log_since "switch to rcm" | grep -q 'rcm: rxe0: CM on' && return 0
		sleep 0.1
	done
	echo "rcm never took rxe0"
	log_since "switch to rcm" | tail -n 5
	return 1
}

# 4. The same module on rcm.
run_on_rcm() {
	grep -q '^rcm ' /proc/modules || { echo "rcm is not loaded"; return 1; }
	grep -q '^ib_cm ' /proc/modules && { echo "ib_cm is still loaded"; return 1; }
	run_sample rcm
	sample_passed rcm
}

# Every line the same: the scenario, side, CM state, QP state, mask and
# each attribute the mask names.
same_qp_attrs() {
	diff -u "$OUT/c.qp_attr" "$OUT/rcm.qp_attr"
}

# 5. Both runs went through the same checks, in the same order.
same_checks() {
	if [ ! -s "$OUT/c.names" ] || [ ! -s "$OUT/rcm.names" ]; then
		echo "checks logged: $(wc -l < "$OUT/c.names") on the C CM," \
			"$(wc -l < "$OUT/rcm.names") on rcm"
		return 1
	fi
	diff -u "$OUT/c.names" "$OUT/rcm.names"
}

# The points, in order.
errno_points() {
	# 1. The reference: the C CM as CM mode both loaded it.
	rcm_expect "errno checks pass on the C CM (the reference)" c_run
	rcm_expect "QP attributes of RC, UC and XRC connections logged on the C CM" qp_attr_run c
	# 2. kmemleak after the C run, less ib_send_cm_drep's known leak;
	# then forget all it reported.
	if [ -w "$KMEMLEAK" ]; then
		rcm_point c_leaks
	else
		rcm_skip "$C_LEAK (kmemleak not available)"
	fi
	# 3. The C stack out, rcm.ko in.
	rcm_expect "the C CM modules unload and rcm.ko loads in their place" switch_to_rcm
	# 4. The same module on rcm.
	rcm_expect "errno checks pass on rcm" run_on_rcm
	rcm_expect "QP attributes of RC, UC and XRC connections logged on rcm" qp_attr_run rcm
	rcm_expect "ib_cm_init_qp_attr on rcm: the C CM's attributes, field by field" same_qp_attrs
	# 5. Both runs went through the same checks, in the same order.
	rcm_expect "the same checks ran on both" same_checks
	# 6. rcm unloads: no id of the runs keeps it busy (and whatever it
	# still held becomes visible to kmemleak).
	rcm_expect "rmmod rcm after the runs" rmmod rcm
	# 7. As rcm_check_kmemleak, less what the C run's insmod allocated.
	if [ -w "$KMEMLEAK" ]; then
		rcm_point kmemleak_point "kmemleak finds no leak" ", pid $(cat "$OUT/c.pid" 2> /dev/null), "
	else
		rcm_skip "kmemleak finds no leak (kmemleak not available)"
	fi
	rcm_check_dmesg_clean
}
rcm_run errno_points
