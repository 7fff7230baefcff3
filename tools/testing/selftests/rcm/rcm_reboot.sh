#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=both,both devices=2 timeout=1200
#
# Recovery from a peer whose RDMA stack rebooted while the other side still
# holds its connections. This guest is the NVMe-oF host and rping client,
# the peer the target (nvmet-rdma) and a persistent rping server, over
# rxe1 on the second wire (the test's agent stays on the first). With
# NVMe-oF I/O and an rping connection live, this guest's stack "reboots":
# eth1 goes down (nothing it sends reaches the peer: no DREQ, no
# keep-alive), rping is killed, rxe1 is deleted, then eth1 comes up and a
# new rxe1 (the same GID and node GUID) is added. rxe counts a device's QP
# numbers from the same start (each pairing begins on a fresh rxe1 too),
# so the host's first REQs after the reboot name QPs the peer's CM still
# believes connected: it answers REJ 10 (stale connection) and sends the
# stale connection a DREQ (the new stack answers with a DREP), so that its
# consumer drops it rather than wait for its own timeout (here nvmet's
# keep-alive). The host, as a host at boot does, retries nvme connect
# every 0.5 s and then rping until both work.
#
# Both guests run in CM mode both (the C modules, rcm.ko aside): rcm holds
# the stale connections of a rebooted C CM, then the C CM a rebooted rcm's
# (make test-full adds the C CM on both sides, the reference, and rcm on
# both). Each point must provoke at least one REJ 10 (or it tests
# nothing), recover within REBOOT_BOUND_MS of the new rxe1's port being
# ACTIVE, and leave no connection behind on the peer once the target is
# down; where rcm holds them, no stale connection may outlive the
# recovery.
PEER1=${RCM_PEER1:-10.0.1.2}
NVME_ADDR=$PEER1
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_cm_switch_lib.sh"

CONSUMERS="nvme_rdma nvmet_rdma nvme_fabrics"
# The controller's connections: its admin queue and I/O queues.
IO_QUEUES=2
CTRL_CONNS=$((IO_QUEUES + 1))
REBOOT_BOUND_MS=30000
# The host's keep-alive timeout: long enough that the target still holds
# its queues when the host's stack is back.
KATO=180
# nvme-core's admin command timeout on the host: rxe1's removal with eth1
# down waits that long for the controller's shutdown command (60 s by
# default; a real reboot does not wait at all).
ADMIN_TIMEOUT=5
NOTES=/tmp/reboot.notes
RPING_LOG=/tmp/reboot.rping.log
PEER_CNT=/sys/class/infiniband/rxe1/ports/1

note() {
	echo "$*"
	echo "$*" >> "$NOTES"
}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

if [ "${RCM_LIST_POINTS:-0}" != 1 ] && [ ! -f "$RCM_KO" ]; then
	ktap_print_header
	ktap_skip_all "needs CM mode both ($RCM_KO)"
	exit "$KSFT_SKIP"
fi

# The commands that put a guest on CM <c|rcm>, its RDMA consumers unloaded
# first; the same text runs on the peer.
cm_switch_cmd() {
	echo "for m in $CONSUMERS; do rmmod \$m 2>/dev/null; done; $(rcm_cm_switch_cmd "$1")"
}

# The peer's connected rdma_cm ids on rxe1.
peer_connected() {
	peer_run "rdma res show cm_id | grep 'link rxe1/' | grep -c 'state CONNECT'" | tail -1
}

rxe1_active() {
	local end=$((SECONDS + 30))
	while [ $SECONDS -lt $end ]; do
		rdma link show rxe1/1 2> /dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
	done
	echo "rxe1 is not ACTIVE 30 s after rdma link add"
	return 1
}

# This guest's RC QP numbers on rxe1.
rc_qpns() {
	rdma res show qp link rxe1/1 | sed -n 's/.* lqpn \([0-9]*\) .*type RC .*/\1/p' | tr '\n' ' '
}

# A new rxe1 on eth1, its port ACTIVE: QP numbers counted from the start.
rxe1_fresh() {
	rdma link delete rxe1 2> /dev/null
	rdma link add rxe1 type rxe netdev eth1 || { echo "rdma link add rxe1 failed"; return 1; }
	rxe1_active
}

# reboot_recovery <peer's CM> <this guest's CM>
reboot_recovery() {
	local holder=$1 mine=$2 rc=0 pid held qpns t_back t_nvme t_rping tries=0 rtries=0
	local rej0 rej rej10 after stale out start deleted i
	rm -f "$NOTES" "$RPING_LOG".*
	bash -c "$(cm_switch_cmd "$mine")" || { echo "this guest does not switch to $mine"; return 1; }
	peer_run "$(cm_switch_cmd "$holder")" || { echo "the peer does not switch to $holder"; return 1; }
	rcm_load_on_cm "$mine" nvme-rdma || { echo "nvme-rdma does not load on $mine"; return 1; }
	peer_run "$(declare -f rcm_load_on_cm); rcm_load_on_cm $holder nvmet-rdma" ||
		{ echo "nvmet-rdma does not load on $holder"; return 1; }
	rxe1_fresh || return 1
	nvme_target_up > /dev/null || { echo "the target is not up"; return 1; }
	peer_start reboot_rping "rping -s -P -a $PEER1" > /dev/null
	nvme_connect_live $IO_QUEUES --keep-alive-tmo=$KATO || { echo "the first nvme connect failed"; rc=1; }
	nvme_pattern_round_trip 256 || { echo "I/O before the reboot failed"; rc=1; }
	# (no probing connection: the QPs made after the reboot must get the
	# old ones' numbers again)
	rcm_retry 20 peer_run "rdma res show cm_id | grep 'link rxe1/' | grep -q 'state LISTEN.*rping'" ||
		{ echo "the peer's rping server does not listen"; rc=1; }
	rping -c -a "$PEER1" -S 64 -v > "$RPING_LOG.0" 2>&1 < /dev/null &
	pid=$!
	sleep 2
	[ "$(grep -c '^ping data' "$RPING_LOG.0")" -gt 0 ] || { echo "rping moves no data"; rc=1; }
	held=$(peer_connected)
	qpns=$(rc_qpns)
	note "before: the peer ($holder) holds $held connections (NVMe-oF admin and $IO_QUEUES I/O queues, rping); this guest's QPs: $qpns"

	# The reboot: silent on the wire.
	ip link set eth1 down
	kill -9 "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	start=$(now_ms)
	timeout 120 rdma link delete rxe1 || { echo "rdma link delete rxe1 did not finish"; rc=1; }
	deleted=$(($(now_ms) - start))
	nvme_ctrl > /dev/null && { echo "the controller outlived rxe1"; rc=1; }
	ip link set eth1 up
	rxe1_fresh || return 1
	t_back=$(now_ms)
	stale=$(peer_connected)
	note "the reboot: rxe1 deleted in $deleted ms with eth1 down; back, the peer still holds $stale of them"
	[ "$stale" -ge 1 ] || { echo "the peer dropped its connections: nothing stale to recover from"; rc=1; }

	# Recovery, as a host at boot: nvme connect every 0.5 s, then rping.
	dmesg -c > /dev/null
	rej0=$(peer_run "cat $PEER_CNT/cm_tx_msgs/rej" | tail -1)
	while [ $(($(now_ms) - t_back)) -lt $REBOOT_BOUND_MS ]; do
		tries=$((tries + 1))
		out=$(timeout 30 nvme connect $NVME_ARGS -n $NQN -i $IO_QUEUES --keep-alive-tmo=$KATO 2>&1) &&
			nvme_wait_live 10 > /dev/null && break
		sleep 0.5
	done
	t_nvme=$(($(now_ms) - t_back))
	nvme_wait_live 1 > /dev/null || { echo "NVMe-oF not live ${t_nvme} ms after the reboot ($tries tries): $out"; rc=1; }
	while [ $(($(now_ms) - t_back)) -lt $REBOOT_BOUND_MS ]; do
		rtries=$((rtries + 1))
		timeout 10 rping -c -a "$PEER1" -C 10 -S 64 -v > "$RPING_LOG.$rtries" 2>&1 < /dev/null
		[ "$(grep -c '^ping data' "$RPING_LOG.$rtries")" = 10 ] && break
		sleep 0.5
	done
	t_rping=$(($(now_ms) - t_back))
	rej=$(($(peer_run "cat $PEER_CNT/cm_tx_msgs/rej" | tail -1) - rej0))
	rej10=$(($(dmesg | grep -c 'Connect rejected: status 10') +
		$(cat "$RPING_LOG".* | grep -c 'REJECTED, error 10')))
	after=$(peer_connected)
	note "holder $holder, rebooted $mine: NVMe-oF live $t_nvme ms after rxe1 was back ($tries nvme connects), rping $t_rping ms ($rtries tries); $rej10 REJ 10 seen by nvme-rdma and rping, $rej REJs sent by the peer; this guest's QPs: $(rc_qpns); the peer holds $after connections ($CTRL_CONNS are the new controller's)"
	[ "$rej10" -ge 1 ] || { echo "no REJ 10: the new QPs did not meet a stale connection"; rc=1; }
	[ "$t_rping" -lt $REBOOT_BOUND_MS ] || { echo "rping did not recover within $REBOOT_BOUND_MS ms"; rc=1; }
	if [ "$holder" = rcm ] && [ "$after" != "$CTRL_CONNS" ]; then
		echo "rcm still holds $((after - CTRL_CONNS)) stale connections after the recovery"
		rc=1
	fi
	nvme_pattern_round_trip 256 || { echo "I/O after the reboot failed"; rc=1; }

	nvme_disconnect_all > /dev/null || rc=1
	peer_run 'pkill rping' > /dev/null
	peer_wait reboot_rping 10 > /dev/null
	nvme_target_down > /dev/null
	for ((i = 0; i < 100; i++)); do
		[ "$(peer_connected)" = 0 ] && break
		sleep 0.2
	done
	held=$(peer_connected)
	[ "$held" = 0 ] || { echo "the peer still holds $held connections with the target down"; rc=1; }
	return $rc
}

# make test runs rcm in each role against the C CM; make test-full also
# the C CM on both sides (the reference) and rcm on both.
POINTS=(
	"rcm c|rcm holds the stale connections, the C CM rebooted: the host reconnects NVMe-oF and rping within $REBOOT_BOUND_MS ms of its stack's reboot"
	"c rcm|the C CM holds them, rcm rebooted: the same"
)
FULL_POINTS=(
	"c c|the C CM on both sides (the reference): the same"
	"rcm rcm|rcm on both sides: the same"
)

reboot() {
	local p points=("${POINTS[@]}")
	rcm_full && points+=("${FULL_POINTS[@]}")
	rcm_step rcm_modprobe nvme-core
	rcm_step bash -c "echo $ADMIN_TIMEOUT > /sys/module/nvme_core/parameters/admin_timeout"
	for p in "${points[@]}"; do
		rcm_expect "${p#*|}" reboot_recovery ${p%%|*}
		rcm_step rcm_log_file "$NOTES"
	done
}
rcm_two_guests_run reboot
