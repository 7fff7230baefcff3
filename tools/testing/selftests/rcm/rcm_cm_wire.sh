#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,rcm timeout=240
#
# rcm on the wire against the in-tree C CM: the peer guest runs rcm.ko
# (no listener), this guest the C CM. Without a CM MAD agent on the peer a
# REQ would go unanswered and the connect would time out as UNREACHABLE;
# rcm must answer each REQ with REJ reason 8 (invalid service id) and each
# SIDR_REQ with a SIDR_REP, and stay clean doing it.
. "$(dirname "$(readlink -f "$0")")/rcm_lib.sh"

server=$RCM_PEER

ktap_print_header
if [ "$RCM_PEER" = none ]; then
	ktap_skip_all "needs a peer guest"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 6

rcm_expect "the peer runs rcm with a CM agent on rxe0" \
	peer_run 'grep -q "^rcm " /proc/modules && dmesg | grep -q "rcm: rxe0: CM on 1 port"'

peer_run 'echo clear > /sys/kernel/debug/kmemleak' > /dev/null

# REQ to a service nobody listens on.
rejected_by_rcm() {
	local out
	out=$(timeout 60 rping -c -a "$server" -p 7174 -C 1 -v 2>&1)
	printf '%s\n' "$out" | grep -q 'RDMA_CM_EVENT_REJECTED, error 8' || {
		printf '%s\n' "$out" | tail -5
		return 1
	}
}
rcm_expect "rping to rcm without listener: REJECTED, reason 8" rejected_by_rcm

many_rejects() {
	local i
	for ((i = 0; i < 20; i++)); do
		rejected_by_rcm || { echo "connect $i"; return 1; }
	done
}
rcm_expect "20 more connects, each rejected" many_rejects

# SIDR_REQ to a service nobody listens on: a SIDR_REP with a non-success
# status, reported by librdmacm as UNREACHABLE (not a timeout).
sidr_answered() {
	local out start end
	start=$(date +%s)
	out=$(timeout 90 udaddy -s "$server" -c 1 -C 1 2>&1)
	end=$(date +%s)
	printf '%s\n' "$out" | grep -q 'UNREACHABLE' || { printf '%s\n' "$out" | tail -5; return 1; }
	# unanswered, rdma_cm retries its SIDR_REQ 15 times, 4 s apart
	[ $((end - start)) -lt 45 ] || { echo "took $((end - start)) s"; return 1; }
}
rcm_expect "udaddy to rcm without listener: answered, not timed out" sidr_answered

peer_kmemleak() {
	local report
	sleep 6
	report=$(peer_run 'echo scan > /sys/kernel/debug/kmemleak; echo scan > /sys/kernel/debug/kmemleak; cat /sys/kernel/debug/kmemleak')
	[ -z "$report" ] || { printf '%s\n' "$report" | head -40; return 1; }
}
rcm_expect "kmemleak finds no leak on the rcm guest" peer_kmemleak

rcm_check_dmesg_clean
ktap_finished
