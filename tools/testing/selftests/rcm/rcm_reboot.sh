#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=both,both devices=2 timeout=1200
# rcm-test: work in progress, not in TEST_PROGS: on rxe the new QPs did not
# get the old QP numbers, so no REJ 10 was provoked yet (issue 30 part 5b).
#
# Recovery from a peer whose RDMA stack rebooted while the other side still
# holds its connections. This guest is the NVMe-oF host and rping client,
# the peer the target (nvmet-rdma) and a persistent rping server, over
# rxe1 on the second wire (the test's agent stays on the first). With
# NVMe-oF I/O and an rping connection live, this guest's stack "reboots":
# eth1 goes down (nothing it sends reaches the peer: no DREQ, no
# keep-alive), rping is killed, rxe1 is deleted, then eth1 comes up and a
# new rxe1 (the same GID and node GUID, QP numbers counted from the start
# again) is added. The peer's CM still holds the old connections, so the
# host's first REQs name QPs it believes connected: it answers REJ 10
# (stale connection) and sends the old connection a DREQ, which the new
# stack answers with a DREP; the host, as a host at boot does, retries
# nvme connect every 0.5 s and then rping until both work.
#
# Both guests run in CM mode both (the C modules, rcm.ko aside): the first
# point runs the C CM on both sides (the reference), the second rcm on
# both, the third and fourth one of each (rcm holding the stale
# connections, then rcm rebooted). Each must recover within
# REBOOT_BOUND_MS of the new rxe1's port being ACTIVE and with every stale
# connection found, and leave no connection behind on the peer.
PEER1=${RCM_PEER1:-10.0.1.2}
NVME_ADDR=$PEER1
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"

RCM_KO=/usr/lib/rcm/rcm.ko
C_STACK="rdma_ucm rdma_cm ib_cm"
CONSUMERS="nvme_rdma nvmet_rdma"
REBOOT_BOUND_MS=30000
# The host's keep-alive timeout: long enough that the target still holds
# its queues when the host's stack is back (its removal with eth1 down
# waits about 60 s for nvme-rdma's shutdown command).
KATO=180
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

# The commands that put a guest on CM <c|rcm> (its RDMA consumers unloaded
# first); the same text runs on the peer.
cm_switch_cmd() {
	local unload="for m in $CONSUMERS nvme_fabrics; do rmmod \$m 2>/dev/null; done"
	case $1 in
	rcm) echo "$unload; lsmod | grep -q '^rcm ' ||
		{ for m in $C_STACK; do rmmod \$m 2>/dev/null; done; insmod $RCM_KO ucma=1; }" ;;
	c) echo "$unload; rmmod rcm 2>/dev/null; for m in $C_STACK; do modprobe \$m || exit 1; done" ;;
	esac
}

# The commands that load module <name> on CM <c|rcm>: on rcm its
# dependencies one by one, less the C CM modules (depmod resolves their
# symbols to them in mode both; rcm exports the same).
load_on_cm_cmd() { # <c|rcm> <module>
	if [ "$1" = c ]; then
		echo "modprobe $2"
		return
	fi
	echo "modprobe --show-depends $2 | while read -r how path args; do
		[ \"\$how\" = insmod ] || continue
		case \${path##*/} in ib_cm.ko* | rdma_cm.ko*) continue ;; esac
		name=\${path##*/}; name=\${name%%.ko*}
		[ -d /sys/module/\${name//-/_} ] || insmod \$path \$args || exit 1
	done"
}

# The peer's connected rdma_cm ids on rxe1.
peer_connected() {
	peer_run "rdma res show cm_id | grep 'link rxe1/' | grep -c 'state CONNECT'" | tail -1
}

rxe1_active() {
	local i
	for ((i = 0; i < 300; i++)); do
		rdma link show rxe1/1 2> /dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
	done
	echo "rxe1 is not ACTIVE 30 s after rdma link add"
	return 1
}

# reboot_recovery <peer's CM> <this guest's CM>
reboot_recovery() {
	local holder=$1 mine=$2 rc=0 pid held t_back t_nvme t_rping tries=0 rtries=0
	local rej0 rej stale out start deleted i
	rm -f "$NOTES"
	bash -c "$(cm_switch_cmd "$mine")" || { echo "this guest does not switch to $mine"; return 1; }
	peer_run "$(cm_switch_cmd "$holder")" || { echo "the peer does not switch to $holder"; return 1; }
	bash -c "$(load_on_cm_cmd "$mine" nvme-rdma)" || { echo "nvme-rdma does not load on $mine"; return 1; }
	peer_run "$(load_on_cm_cmd "$holder" nvmet-rdma)" ||
		{ echo "nvmet-rdma does not load on $holder"; return 1; }
	nvme_target_up > /dev/null || { echo "the target is not up"; return 1; }
	peer_start reboot_rping "rping -s -P -a $PEER1" > /dev/null
	nvme_connect_live 2 --keep-alive-tmo=$KATO || { echo "the first nvme connect failed"; rc=1; }
	nvme_pattern_round_trip 256 || { echo "I/O before the reboot failed"; rc=1; }
	rm -f "$RPING_LOG"
	# (no probing connection: the QPs made after the reboot must get the
	# old ones' numbers again)
	rcm_retry 20 peer_run "rdma res show cm_id | grep 'link rxe1/' | grep -q 'state LISTEN.*rping'" ||
		{ echo "the peer's rping server does not listen"; rc=1; }
	rping -c -a "$PEER1" -S 64 -v > "$RPING_LOG" 2>&1 < /dev/null &
	pid=$!
	sleep 2
	[ "$(grep -c '^ping data' "$RPING_LOG")" -gt 0 ] || { echo "rping moves no data"; rc=1; }
	held=$(peer_connected)
	note "before: the peer ($holder) holds $held connections (NVMe-oF admin and 2 I/O queues, rping)"

	# The reboot: silent on the wire.
	ip link set eth1 down
	kill -9 "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	start=$(now_ms)
	timeout 120 rdma link delete rxe1 || { echo "rdma link delete rxe1 did not finish"; rc=1; }
	deleted=$(($(now_ms) - start))
	nvme_ctrl > /dev/null && { echo "the controller outlived rxe1"; rc=1; }
	ip link set eth1 up
	rdma link add rxe1 type rxe netdev eth1 || { echo "rdma link add rxe1 failed"; return 1; }
	rxe1_active || return 1
	t_back=$(now_ms)
	stale=$(peer_connected)
	note "the reboot: rxe1 deleted in $deleted ms with eth1 down; back, the peer still holds $stale of them"
	[ "$stale" -ge 1 ] || { echo "the peer dropped its connections: nothing stale to recover from"; rc=1; }

	# Recovery, as a host at boot: nvme connect every 0.5 s, then rping.
	dmesg -c > /dev/null
	rej0=$(peer_run "cat $PEER_CNT/cm_tx_msgs/rej" | tail -1)
	while [ $(($(now_ms) - t_back)) -lt $REBOOT_BOUND_MS ]; do
		tries=$((tries + 1))
		out=$(timeout 30 nvme connect $NVME_ARGS -n $NQN -i 2 --keep-alive-tmo=$KATO 2>&1) &&
			nvme_wait_live 10 > /dev/null && break
		sleep 0.5
	done
	t_nvme=$(($(now_ms) - t_back))
	nvme_wait_live 1 > /dev/null || { echo "NVMe-oF not live ${t_nvme} ms after the reboot ($tries tries): $out"; rc=1; }
	while [ $(($(now_ms) - t_back)) -lt $REBOOT_BOUND_MS ]; do
		rtries=$((rtries + 1))
		timeout 10 rping -c -a "$PEER1" -C 10 -S 64 -v 2>&1 | grep -c '^ping data' | grep -qx 10 && break
		sleep 0.5
	done
	t_rping=$(($(now_ms) - t_back))
	rej=$(($(peer_run "cat $PEER_CNT/cm_tx_msgs/rej" | tail -1) - rej0))
	note "holder $holder, rebooted $mine: NVMe-oF live $t_nvme ms after rxe1 was back ($tries nvme connects, $(dmesg | grep -c 'Connect rejected: status 10') REJ 10 seen by nvme-rdma); rping $t_rping ms ($rtries tries); the peer sent $rej REJs"
	[ "$t_rping" -lt $REBOOT_BOUND_MS ] || { echo "rping did not recover within $REBOOT_BOUND_MS ms"; rc=1; }
	nvme_pattern_round_trip 256 || { echo "I/O after the reboot failed"; rc=1; }

	nvme_disconnect_all > /dev/null || rc=1
	peer_run 'pkill rping' > /dev/null
	peer_wait reboot_rping 10 > /dev/null
	for ((i = 0; i < 100; i++)); do
		[ "$(peer_connected)" = 0 ] && break
		sleep 0.2
	done
	held=$(peer_connected)
	[ "$held" = 0 ] || { echo "the peer still holds $held connections"; rc=1; }
	nvme_target_down > /dev/null
	return $rc
}

POINTS=(
	"c c|the C CM on both sides (the reference): the host reconnects NVMe-oF and rping within $REBOOT_BOUND_MS ms of its stack's reboot"
	"rcm rcm|rcm on both sides: the same within $REBOOT_BOUND_MS ms"
	"rcm c|rcm holds the stale connections, the C CM rebooted: the same"
	"c rcm|the C CM holds them, rcm rebooted: the same"
)

reboot() {
	local p
	rcm_step rcm_modprobe nvme-core
	for p in "${POINTS[@]}"; do
		rcm_expect "${p#*|}" reboot_recovery ${p%%|*}
		rcm_step rcm_log_file "$NOTES"
	done
}
rcm_two_guests_run reboot
