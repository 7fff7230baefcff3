#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,rcm timeout=900
#
# Two scenario sets against the in-tree C CM in one boot (the CI budget).
#
# rcm on the wire against the in-tree C CM: the peer guest runs rcm.ko
# (no listener), this guest the C CM. Without a CM MAD agent on the peer a
# REQ would go unanswered and the connect would time out as UNREACHABLE;
# rcm must answer each REQ with REJ reason 8 (invalid service id) and each
# SIDR_REQ with a SIDR_REP, and stay clean doing it.
#
# A kernel consumer of rcm's exported ib_cm API (samples/rcm/
# rcm_sample_reject.ko: ib_create_cm_id, ib_cm_listen, REQ_RECEIVED,
# ib_send_cm_rej with private data, a non-zero handler return, then
# ib_destroy_cm_id) on the peer guest, against this guest's C CM: every
# connect is rejected with reason 28 (consumer defined); once the sample is
# unloaded the service is gone again (REJ 8).
#
# rcm's trace events against the C CM's (rcm_trace_lib.sh): their formats,
# a connection to rping's server on the peer, a REJ.
#
# Last this guest's C CM unloads and the malformed-MAD campaign runs
# against the same rcm (rcm_mad_campaign_lib.sh).
. "$(dirname "$(readlink -f "$0")")/rcm_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_mad_campaign_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_trace_lib.sh"

server=$RCM_PEER
PORT_NUM=7200

# REQ to a service nobody listens on.
rejected_by_rcm() {
	local out
	out=$(timeout 60 rping -c -a "$server" -p 7174 -C 1 -v 2>&1)
	printf '%s\n' "$out" | grep -q 'RDMA_CM_EVENT_REJECTED, error 8' || {
		printf '%s\n' "$out" | tail -5
		return 1
	}
}

many_rejects() {
	local i
	for ((i = 0; i < $1; i++)); do
		rejected_by_rcm || { echo "connect $i"; return 1; }
	done
}
rejects=$(rcm_repeats 20 5)

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

# The message counters in sysfs, where the 6.12 C CM keeps them, agree
# across the wire with this guest's C CM.
CNT=/sys/class/infiniband/rxe0/ports/1
counters_agree() {
	local c_tx_req c_rx_rej r_rx_req r_tx_rej r_rx_sidr r_tx_sidr
	c_tx_req=$(cat $CNT/cm_tx_msgs/req) c_rx_rej=$(cat $CNT/cm_rx_msgs/rej)
	r_rx_req=$(peer_run "cat $CNT/cm_rx_msgs/req") r_tx_rej=$(peer_run "cat $CNT/cm_tx_msgs/rej")
	r_rx_sidr=$(peer_run "cat $CNT/cm_rx_msgs/sidr_req") r_tx_sidr=$(peer_run "cat $CNT/cm_tx_msgs/sidr_rep")
	echo "C: tx req $c_tx_req, rx rej $c_rx_rej; rcm: rx req $r_rx_req, tx rej $r_tx_rej, rx sidr_req $r_rx_sidr, tx sidr_rep $r_tx_sidr"
	[ "$r_rx_req" -ge $((rejects + 1)) ] && [ "$r_rx_req" = "$c_tx_req" ] &&
		[ "$r_tx_rej" = "$r_rx_req" ] && [ "$c_rx_rej" = "$r_tx_rej" ] &&
		[ "$r_rx_sidr" -ge 1 ] && [ "$r_tx_sidr" = "$r_rx_sidr" ]
}

# The sample consumer on the peer's rcm (the counters above are done).

rejected_with() { # <reason>
	local out
	out=$(timeout 60 rping -c -a "$server" -p $PORT_NUM -C 1 -v 2>&1)
	printf '%s\n' "$out" | grep -q "RDMA_CM_EVENT_REJECTED, error $1" || {
		printf '%s\n' "$out" | tail -5
		return 1
	}
}

ten_more() {
	local i
	for ((i = 0; i < 10; i++)); do
		rejected_with 28 || { echo "connect $i"; return 1; }
	done
}

consumer_saw_them() {
	local n
	n=$(peer_run 'dmesg' | grep -c 'rcm_sample: REQ for 0x1061c20 .*: consumer defined (0)')
	echo "the sample logged $n rejections"
	[ "$n" = 11 ]
}

# ib_send_cm_mra: the sample acknowledges each REQ, then rejects it; the
# C peer counts the MRAs it received.
CNT=/sys/class/infiniband/rxe0/ports/1
mra_then_reject() {
	local before after i sent
	before=$(cat $CNT/cm_rx_msgs/mra)
	peer_run 'modprobe rcm_sample_reject mra=1' > /dev/null || return 1
	for ((i = 0; i < 3; i++)); do
		rejected_with 28 || return 1
	done
	after=$(cat $CNT/cm_rx_msgs/mra)
	sent=$(peer_run "cat $CNT/cm_tx_msgs/mra")
	peer_run 'rmmod rcm_sample_reject' > /dev/null
	echo "MRAs: rcm sent $sent, the C peer received $((after - before))"
	[ "$sent" = 3 ] && [ $((after - before)) = 3 ]
}

# SIDR: the sample listens on udaddy's service id (UDP port space, port
# 7174) and answers each SIDR_REQ with status "reject" (2), which rdma_cm
# reports as UNREACHABLE with error 2 (no listener would give 1).
sidr_rejected() {
	local out
	peer_run 'modprobe rcm_sample_reject service_id=0x1111c06' > /dev/null || return 1
	out=$(timeout 60 udaddy -s "$server" -c 1 -C 1 2>&1)
	peer_run 'rmmod rcm_sample_reject' > /dev/null
	printf '%s\n' "$out" | grep -q 'UNREACHABLE, error: 2' || { printf '%s\n' "$out" | tail -5; return 1; }
	peer_run 'dmesg' | grep -q 'rcm_sample: SIDR_REQ for 0x1111c06 (port 1) answered: reject (0)'
}

# The points, in order.
wire_points() {
	rcm_expect "the peer runs rcm with a CM agent on rxe0" \
		peer_run 'grep -q "^rcm " /proc/modules && dmesg | grep -q "rcm: rxe0: CM on 1 port"'
	rcm_step peer_run 'echo clear > /sys/kernel/debug/kmemleak' > /dev/null
	rcm_expect "rping to rcm without listener: REJECTED, reason 8" rejected_by_rcm
	rcm_expect "$rejects more connects, each rejected" many_rejects "$rejects"
	rcm_expect "udaddy to rcm without listener: answered, not timed out" sidr_answered
	rcm_expect "cm_rx_msgs/cm_tx_msgs counters agree with the C peer's" counters_agree
	rcm_step peer_run 'echo clear > /sys/kernel/debug/kmemleak' > /dev/null
	rcm_expect "the sample consumer loads on rcm and listens" \
		peer_run 'modprobe rcm_sample_reject && grep -q "^rcm_sample_reject " /proc/modules &&
			dmesg | grep -q "rcm_sample: rxe0: listening on 0x1061c20"'
	rcm_expect "rping to the sample: REJECTED, reason 28 (consumer defined)" rejected_with 28
	rcm_expect "10 more connects, each rejected by the consumer" ten_more
	rcm_expect "the sample got 11 REQ_RECEIVED events, its ib_send_cm_rej returned 0" consumer_saw_them
	rcm_expect "the sample unloads (ib_destroy_cm_id of its listener)" \
		peer_run 'rmmod rcm_sample_reject && dmesg | grep -q "rcm_sample: rxe0: stopped"'
	rcm_expect "after rmmod the service is unknown again: REJECTED, reason 8" rejected_with 8
	rcm_expect "with mra=1: 3 MRAs on the wire, then REJ 28" mra_then_reject
	rcm_expect "SIDR: the sample answers udaddy with SIDR_REP status 2" sidr_rejected
	trace_scenarios
	rcm_expect "this guest's C CM unloads (rdma_ucm, rdma_cm, iw_cm, ib_cm)" \
		rmmod rdma_ucm rdma_cm iw_cm ib_cm
	mad_campaign_scenarios
	rcm_check_kmemleak_peer
	rcm_check_dmesg_clean
}
rcm_needs_peer
rcm_run wire_points
