#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make run`, inside the driver guest: one RC connection's life cycle with
# the peer guest, told in plain words from the CM events rping reports,
# then a short NVMe-oF session told from the kernel's messages and the
# CM's counters as each step ends.
. /kselftest/rcm/rcm_lib.sh
. /kselftest/rcm/rcm_nvme_lib.sh

say() { printf '%s\n' "$*"; }

# The CM's message counters (sysfs, where 6.12 keeps them): one line of
# "<msg> <sent> <received>" per message type.
COUNTERS='d=/sys/class/infiniband/rxe0/ports/1
for m in req mra rej rep rtu dreq drep sidr_req sidr_rep lap apr; do
	echo "$m $(cat $d/cm_tx_msgs/$m 2>/dev/null || echo 0) $(cat $d/cm_rx_msgs/$m 2>/dev/null || echo 0)"
done'

# What the CM sent and received of some message types between two
# snapshots: "sent REQ 1, RTU 1; received REP 1".
cm_did() { # <before> <after> <msg...>
	local before=$1 after=$2 m tx rx sent="" got="" b a
	shift 2
	for m in "$@"; do
		b=$(printf '%s\n' "$before" | grep "^$m ") a=$(printf '%s\n' "$after" | grep "^$m ")
		tx=$(( $(echo "$a" | cut -d' ' -f2) - $(echo "$b" | cut -d' ' -f2) ))
		rx=$(( $(echo "$a" | cut -d' ' -f3) - $(echo "$b" | cut -d' ' -f3) ))
		m=$(echo "$m" | tr a-z A-Z)
		[ $tx -gt 0 ] && sent+="${sent:+, }$m $tx"
		[ $rx -gt 0 ] && got+="${got:+, }$m $rx"
	done
	printf '%s' "${sent:+sent $sent}${sent:+${got:+; }}${got:+received $got}"
}

narrate() { # <who: client|server> <counters before>; reads rping -d -v output on stdin
	local who=$1 before=$2 line did
	# The CM's counters on the narrated side, read as an event is told.
	counters_now() { if [ "$who" = client ]; then sh -c "$COUNTERS"; else peer_run "$COUNTERS"; fi; }
	while IFS= read -r line; do
		case $line in
		*RDMA_CM_EVENT_ADDR_RESOLVED*) say "[$who] address resolved: $server is reachable through rxe0 (IP -> GID)" ;;
		*RDMA_CM_EVENT_ROUTE_RESOLVED*) say "[$who] route resolved: path to the peer's GID built (RoCEv2, UDP 4791)" ;;
		*RDMA_CM_EVENT_CONNECT_REQUEST*)
			say "[$who] connection request arrived (REQ received), accepting (REP sent)" ;;
		*RDMA_CM_EVENT_ESTABLISHED*)
			did=$(cm_did "$before" "$(counters_now)" req mra rej rep rtu)
			say "[$who] connection established (REQ -> REP -> RTU complete)${did:+; its CM $did}" ;;
		*RDMA_CM_EVENT_DISCONNECTED*)
			did=$(cm_did "$before" "$(counters_now)" dreq drep)
			say "[$who] disconnected (DREQ/DREP exchanged)${did:+; its CM $did}" ;;
		*RDMA_CM_EVENT_REJECTED*) say "[$who] connection rejected: $line" ;;
		*RDMA_CM_EVENT_*ERROR* | *RDMA_CM_EVENT_UNREACHABLE*) say "[$who] error: $line" ;;
		"ping data: "*) say "[$who] data: RDMA write/read round trip ${line#ping data: }" ;;
		"server ping data: "*) say "[$who] data: ${line#server ping data: }" ;;
		esac
	done
}

server=$RCM_PEER
# The connection manager of a CM mode, in words.
cm_words() {
	case $1 in
	hybrid) echo "rcm.ko's ib_cm under the in-tree rdma_cm and rdma_ucm" ;;
	rcm) echo "rcm.ko under the in-tree rdma_ucm" ;;
	ucma) echo "rcm.ko alone (ib_cm, rdma_cm and /dev/infiniband/rdma_cm)" ;;
	c) echo "the in-tree C modules" ;;
	*) echo "$1" ;;
	esac
}

say "rcm demo: two QEMU guests, soft-RoCE (rxe) on a private virtual wire"
say "  this guest (client): $RCM_ADDR, connection manager: $(cm_words "$RCM_MODE")"
say "  peer guest (server): $server, connection manager: $(cm_words "$(peer_run 'cat /run/rcm.env' | sed -n 's/^RCM_MODE=//p')")"
say "  RDMA devices here: $(rdma link show | tr '\n' ' ')"
say ""
say "The server listens; the client resolves the address and route, connects,"
say "exchanges 3 pings (RDMA send + RDMA read/write), then disconnects."
say ""
here0=$(sh -c "$COUNTERS") peer0=$(peer_run "$COUNTERS")
peer_start demo "stdbuf -oL rping -s -a $server -C 3 -v -d" > /dev/null
# The server's events, told as its rping logs them: the peer's agent
# streams the log until the server exits.
rcm_retry 20 peer_run "rdma res show cm_id | grep -q 'state LISTEN'"
printf '%s' "tail -f /tmp/job.demo.out & t=\$!; while [ ! -f /tmp/job.demo.rc ]; do sleep 0.2; done; sleep 0.5; kill \$t" |
	base64 -w0 | { cat; echo; } | socat -t 90 -T 90 - "TCP:$RCM_PEER:$RCM_AGENT_PORT,connect-timeout=5" 2> /dev/null |
	narrate server "$peer0" &
server_narrator=$!
stdbuf -oL rping -c -a "$server" -C 3 -v -d 2>&1 | tee /tmp/rping-client.out | narrate client "$here0"
rc=${PIPESTATUS[0]}
server_out=$(peer_wait demo 60)
src=$?
wait $server_narrator
say ""
if [ $rc != 0 ] || [ $src != 0 ]; then
	say "demo: FAILED (client status $rc, server status $src)"
	printf '%s\n' "client:" "$(cat /tmp/rping-client.out)" "server:" "$server_out" | tail -40
	exit 1
fi
say "demo: the connection went through its whole life cycle."

# The kernel's messages about NVMe and rcm since the last call, as told.
kmsg_seen=$(dmesg | wc -l)
kernel_says() {
	dmesg | tail -n +$((kmsg_seen + 1)) | grep -E 'nvme|rcm' |
		sed 's/^\[[ 0-9.]*\] /[client kernel] /'
	kmsg_seen=$(dmesg | wc -l)
}
step_failed() { say "demo: FAILED at: $1"; printf '%s\n' "$2" | tail -20; exit 1; }

say ""
say "NVMe over RDMA: the peer exports a 64 MiB namespace through nvmet-rdma;"
say "this guest connects with 2 I/O queues (an rdma_cm connection per queue,"
say "plus the admin queue), writes 1 MiB, reads it back, and disconnects."
say ""
here0=$(sh -c "$COUNTERS")
out=$(nvme_target_up 2>&1) || step_failed "target setup" "$out"
out=$(rcm_modprobe nvme-rdma 2>&1) || step_failed "loading nvme-rdma" "$out"
say "[server] nvmet-rdma listens on $server:$NVME_PORT (an rdma_cm listener on the peer)"
out=$(nvme_connect_live 2 2>&1) || step_failed "nvme connect" "$out"
kernel_says
here1=$(sh -c "$COUNTERS")
say "[client] controller $(nvme_ctrl) is live over $(rdma res show cm_id | grep -c 'state CONNECT') rdma_cm connections; its CM $(cm_did "$here0" "$here1" req rep rtu rej)"
out=$(nvme_pattern_round_trip 1024 2>&1) || step_failed "I/O" "$out"
say "[client] 1 MiB of random data written to /dev/$(nvme_ctrl)n1 and read back unchanged"
out=$(nvme_disconnect_all 2>&1) || step_failed "nvme disconnect" "$out"
kernel_says
here2=$(sh -c "$COUNTERS")
say "[client] disconnected: $(rdma res show cm_id | grep -c 'state CONNECT') connections left; its CM $(cm_did "$here1" "$here2" dreq drep)"
nvme_target_down > /dev/null 2>&1
say ""
say "demo: the NVMe-oF session connected, moved data and disconnected cleanly."
