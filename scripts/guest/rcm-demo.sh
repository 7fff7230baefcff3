#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make run`, inside the driver guest: one RC connection's life cycle with
# the peer guest, told in plain words from the CM events rping reports.
. /kselftest/rcm/rcm_lib.sh

say() { printf '%s\n' "$*"; }

narrate() { # <who> reads rping -d -v output on stdin
	local who=$1 line
	while IFS= read -r line; do
		case $line in
		*RDMA_CM_EVENT_ADDR_RESOLVED*) say "[$who] address resolved: $server is reachable through rxe0 (IP -> GID)" ;;
		*RDMA_CM_EVENT_ROUTE_RESOLVED*) say "[$who] route resolved: path to the peer's GID built (RoCEv2, UDP 4791)" ;;
		*RDMA_CM_EVENT_CONNECT_REQUEST*) say "[$who] connection request arrived (REQ received), accepting (REP sent)" ;;
		*RDMA_CM_EVENT_ESTABLISHED*) say "[$who] connection established (REQ -> REP -> RTU complete)" ;;
		*RDMA_CM_EVENT_DISCONNECTED*) say "[$who] disconnected (DREQ/DREP exchanged)" ;;
		*RDMA_CM_EVENT_REJECTED*) say "[$who] connection rejected: $line" ;;
		*RDMA_CM_EVENT_*ERROR* | *RDMA_CM_EVENT_UNREACHABLE*) say "[$who] error: $line" ;;
		"ping data: "*) say "[$who] data: RDMA write/read round trip ${line#ping data: }" ;;
		"server ping data: "*) say "[$who] data: ${line#server ping data: }" ;;
		esac
	done
}

server=$RCM_PEER
say "rcm demo: two QEMU guests, soft-RoCE (rxe) on a private virtual wire"
say "  this guest (client): $RCM_ADDR, connection manager: $RCM_MODE"
say "  peer guest (server): $server, connection manager: $(peer_run 'cat /run/rcm.env' | sed -n 's/^RCM_MODE=//p')"
say "  RDMA devices here: $(rdma link show | tr '\n' ' ')"
say ""
say "The server listens; the client resolves the address and route, connects,"
say "exchanges 3 pings (RDMA send + RDMA read/write), then disconnects."
say ""
peer_start demo "rping -s -a $server -C 3 -v -d" > /dev/null
rcm_retry 20 rping -c -a "$server" -C 3 -v -d
rc=$?
printf '%s\n' "$RCM_RETRY_OUT" | narrate client
server_out=$(peer_wait demo 60)
src=$?
printf '%s\n' "$server_out" | narrate server
say ""
if [ $rc = 0 ] && [ $src = 0 ]; then
	say "demo: the connection went through its whole life cycle."
else
	say "demo: FAILED (client status $rc, server status $src)"
	printf '%s\n' "client:" "$RCM_RETRY_OUT" "server:" "$server_out" | tail -40
	exit 1
fi
