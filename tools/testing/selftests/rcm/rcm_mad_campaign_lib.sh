#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Malformed-MAD campaign against rcm: this guest has no CM (none loaded),
# so rcm_mad_inject owns the CM class on umad0, sends 1,000 (make
# test-full: 10,000) crafted CM MADs to the rcm guest (random bytes in
# every field, wrong class versions, unknown attributes, response
# methods, bogus and reused comm ids, mismatched QPNs, bursts of REQs) and
# checks every answer: REJ 8 for each REQ, REJ 6 for REP/RTU to unknown
# ids, DREP for DREQs, SIDR_REP status 1 for SIDR_REQs, silence for
# everything else. The rcm guest must stay clean (no splat, no leak) and
# keep answering correctly afterwards.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_lib.sh"

INJECT=$RCM_TEST_DIR/rcm_mad_inject
PORT=/sys/class/infiniband/rxe0/ports/1

counted() {
	local rx
	rx=$(peer_run "cat $PORT/cm_rx_msgs/req")
	echo "REQs counted by rcm: $((rx - rx_before)), well-formed REQs sent: ${sent_reqs:-?}"
	[ -n "$sent_reqs" ] && [ $((rx - rx_before)) -eq "$sent_reqs" ]
}

# A consumer on rcm is still served: the sample listens, 100 REQs for its
# service each get its REJ 28 (or REJ 18 from the CM, as 6.12 on RoCE,
# for those that name an alternate path); unloaded, its service is gone
# (REJ 8).
consumer_served() {
	peer_run 'modprobe rcm_sample_reject' > /dev/null || return 1
	"$INJECT" /dev/infiniband/umad0 "$dgid" "$sgid_index" 100 2 0x1061c20 28 || return 1
	peer_run 'rmmod rcm_sample_reject' > /dev/null || return 1
	"$INJECT" /dev/infiniband/umad0 "$dgid" "$sgid_index" 20 3 0x1061c20 8
}

# A duplicate REQ and a stale connection, against a listener that accepts:
# the duplicate gets the same REP again, a REQ from the QP of the
# established connection gets REJ 10 and the old connection a DREQ.
dup_and_stale() {
	local sample=/lib/modules/$(uname -r)/extra/rcm_test_conn.ko d0 d1 out rc
	peer_run "insmod $sample role=server" > /dev/null || return 1
	d0=$(peer_run "cat $PORT/cm_rx_duplicates/req")
	out=$("$INJECT" /dev/infiniband/umad0 "$dgid" "$sgid_index" dup-stale 0x1061c21 2>&1)
	rc=$?
	d1=$(peer_run "cat $PORT/cm_rx_duplicates/req")
	sleep 1
	peer_run 'rmmod rcm_test_conn' > /dev/null
	printf '%s\n' "$out"
	echo "rcm counted $((d1 - d0)) duplicate REQ(s)"
	[ $rc = 0 ] && [ $((d1 - d0)) = 1 ] &&
		peer_run dmesg | grep 'server stopped' | tail -1 | grep -q '1 accepted, .* 0 live at stop'
}

# And a normal connection: with the injector gone this guest loads the C CM
# (insmod: modprobe is blocked in mode none) and connects to the sample
# server on rcm, 10 messages echoed, then disconnects.
normal_connection() {
	local ko rc sample=/lib/modules/$(uname -r)/extra/rcm_test_conn.ko
	ko=$(find "/lib/modules/$(uname -r)/kernel" -name 'ib_cm.ko*' | head -1)
	[ -n "$ko" ] && insmod "$ko" || return 1
	peer_run "insmod $sample role=server" > /dev/null || return 1
	insmod "$sample" role=client peer="$RCM_PEER" messages=10
	rc=$?
	rmmod rcm_test_conn 2> /dev/null
	peer_run 'rmmod rcm_test_conn' > /dev/null
	dmesg | grep 'rcm_test_conn: client' | tail -1
	return $rc
}

# The campaign itself: $mads crafted MADs from seed $seed, each answer
# checked by the injector; sets sent_reqs for `counted`.
crafted_mads() {
	local out rc
	rx_before=$(peer_run "cat $PORT/cm_rx_msgs/req")
	rcm_log "campaign seed $seed (replay: RCM_CAMPAIGN_SEED=$seed)"
	out=$("$INJECT" /dev/infiniband/umad0 "$dgid" "$sgid_index" $mads "$seed" 2>&1)
	rc=$?
	printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
	ktap_test_result "$mads crafted MADs: every answer right, nothing unexpected" [ $rc = 0 ]
	# Every well-formed REQ reaches rcm's agent once (the answers above prove
	# none was lost), so the counter must grow by exactly that many.
	sent_reqs=$(printf '%s\n' "$out" | sed -n 's/^well-formed REQs sent: //p')
}

mad_campaign_scenarios() {
	# The GID of our IPv4 address, and the peer's (IPv4-mapped).
	my_gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo "$RCM_ADDR" | tr . ' '))
	sgid_index=
	for g in "$PORT"/gids/*; do
		[ "$(cat "$g")" = "$my_gid" ] && sgid_index=${g##*/} && break
	done
	dgid="::ffff:$RCM_PEER"
	rcm_expect "this guest has no CM; the peer runs rcm; our IPv4 GID is at index ${sgid_index:-?}" \
		sh -c "! grep -qE '^(ib_cm|rcm) ' /proc/modules && [ -n '$sgid_index' ]"
	# RCM_CAMPAIGN_SEED replays a run (the seed is printed either way).
	seed=${RCM_CAMPAIGN_SEED:-$RANDOM}
	# make test sends 1,000 (every CI run draws a new seed), make test-full
	# 10,000: the CI budget.
	mads=$(rcm_repeats 10000 1000)
	rcm_point crafted_mads
	rcm_expect "rcm counted the REQs it received" counted
	rcm_expect "rcm still answers correctly afterwards (200 more)" \
		"$INJECT" /dev/infiniband/umad0 "$dgid" "$sgid_index" 200 1
	rcm_expect "afterwards a consumer on rcm is served: 100 REQs, each its REJ 28 (18 with an alternate path)" consumer_served
	rcm_expect "duplicate REQ: the same REP again; stale REQ: REJ 10 and DREQ" dup_and_stale
	rcm_expect "afterwards a normal RC connection to rcm works (10 messages)" normal_connection
}
