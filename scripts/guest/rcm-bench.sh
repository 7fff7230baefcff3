#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`, inside the driver guest (both guests in CM mode "both"):
# connection setup and teardown through the C CM and through rcm in the
# same boot of the same kernel, alternating C, rcm, C, rcm on both guests,
# with samples/rcm/rcm_sample_conn (client here, server on the peer).
# Prints connections per second per run and the rcm/C ratio of the means.
. /kselftest/rcm/rcm_lib.sh

SAMPLE=/lib/modules/$(uname -r)/extra/rcm_sample_conn.ko
C_STACK="rdma_ucm rdma_cm iw_cm ib_cm"
CONNS=${RCM_BENCH_CONNS:-300}

# Put this guest on CM <c|rcm>; the same command runs on the peer.
switch_cm() {
	if [ "$1" = rcm ]; then
		echo "for m in $C_STACK; do rmmod \$m || exit 1; done; insmod /usr/lib/rcm/rcm.ko"
	else
		echo "rmmod rcm && for m in ib_cm iw_cm rdma_cm rdma_ucm; do modprobe \$m || exit 1; done"
	fi
}

# One measurement: <conns> <parallel>; prints the client's milliseconds.
measure() {
	local ms
	dmesg -c > /dev/null
	insmod "$SAMPLE" role=client peer="$RCM_PEER" conns="$1" parallel="$2" messages=1 ||
		{ dmesg | tail -3 >&2; return 1; }
	rmmod rcm_sample_conn
	ms=$(dmesg | sed -n 's/.*client: .* \([0-9]*\) ms$/\1/p' | tail -1)
	[ -n "$ms" ] && echo "$ms"
}

declare -A total
run_cm() { # <c|rcm> <round>
	local cm=$1 seq par
	peer_run "insmod $SAMPLE role=server" > /dev/null || return 1
	seq=$(measure "$CONNS" 1) || return 1
	par=$(measure "$CONNS" 50) || return 1
	peer_run 'rmmod rcm_sample_conn' > /dev/null
	awk -v cm="$cm" -v r="$2" -v n="$CONNS" -v s="$seq" -v p="$par" 'BEGIN {
		printf "%-4s round %d: %d connections one at a time %6d ms (%5.1f/s), 50 at a time %6d ms (%5.1f/s)\n",
			cm, r, n, s, n * 1000 / s, p, n * 1000 / p }'
	total[$cm-seq]=$(( ${total[$cm-seq]:-0} + seq ))
	total[$cm-par]=$(( ${total[$cm-par]:-0} + par ))
}

echo "rcm bench: $(uname -r), TCG, connect + 1 message + disconnect per connection"
current=c
for round in 1 2; do
	for cm in c rcm; do
		if [ "$cm" != "$current" ]; then
			cmd=$(switch_cm "$cm")
			bash -c "$cmd" && peer_run "$cmd" > /dev/null || { echo "switching to $cm failed"; exit 1; }
			current=$cm
		fi
		run_cm "$cm" "$round" || { echo "$cm round $round failed"; exit 1; }
	done
done
awk -v cs="${total[c-seq]}" -v rs="${total[rcm-seq]}" -v cp="${total[c-par]}" -v rp="${total[rcm-par]}" 'BEGIN {
	printf "rcm/C connection rate, one at a time: %.2f; 50 at a time: %.2f (above 1: rcm faster)\n",
		cs / rs, cp / rp }'
