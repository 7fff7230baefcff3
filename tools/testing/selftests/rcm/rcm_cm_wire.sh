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
ktap_set_plan 7

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

# The message counters in sysfs, where the 6.12 C CM keeps them, agree
# across the wire with this guest's C CM.
CNT=/sys/class/infiniband/rxe0/ports/1
counters_agree() {
	local c_tx_req c_rx_rej r_rx_req r_tx_rej r_rx_sidr r_tx_sidr
	c_tx_req=$(cat $CNT/cm_tx_msgs/req) c_rx_rej=$(cat $CNT/cm_rx_msgs/rej)
	r_rx_req=$(peer_run "cat $CNT/cm_rx_msgs/req") r_tx_rej=$(peer_run "cat $CNT/cm_tx_msgs/rej")
	r_rx_sidr=$(peer_run "cat $CNT/cm_rx_msgs/sidr_req") r_tx_sidr=$(peer_run "cat $CNT/cm_tx_msgs/sidr_rep")
	echo "C: tx req $c_tx_req, rx rej $c_rx_rej; rcm: rx req $r_rx_req, tx rej $r_tx_rej, rx sidr_req $r_rx_sidr, tx sidr_rep $r_tx_sidr"
	[ "$r_rx_req" -ge 21 ] && [ "$r_rx_req" = "$c_tx_req" ] &&
		[ "$r_tx_rej" = "$r_rx_req" ] && [ "$c_rx_rej" = "$r_tx_rej" ] &&
		[ "$r_rx_sidr" -ge 1 ] && [ "$r_tx_sidr" = "$r_rx_sidr" ]
}
rcm_expect "cm_rx_msgs/cm_tx_msgs counters agree with the C peer's" counters_agree

rcm_check_kmemleak_peer

rcm_check_dmesg_clean
ktap_finished
