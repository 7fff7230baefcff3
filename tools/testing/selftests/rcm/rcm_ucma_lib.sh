#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-tree rdma_ucm on rcm's rdma_cm (CM mode "rcm"): the rdma-core
# tools (rping, ucmatose, udaddy, mckey) through ucma.c, the most demanding rdma_cm consumer in the tree,
# which nobody here wrote. Both directions against the peer, whose mode the
# test's header names. rcm's message counters prove rcm carried it.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_tools_lib.sh"

# The module graph: rdma_ucm links against rcm (rcm holds it); neither
# ib_cm nor rdma_cm is loaded. rcm cannot be unloaded under its consumer.
stack_is_rcm() {
	ls /sys/module/rcm/holders/
	[ -d /sys/module/rcm/holders/rdma_ucm ] && [ ! -d /sys/module/rdma_cm ] &&
		[ ! -d /sys/module/ib_cm ] || return 1
	rmmod rcm 2>&1 && { echo "rmmod rcm succeeded under rdma_ucm"; return 1; }
	grep -q '^rcm ' /proc/modules
}

# A listening rping server on this guest's address when its device goes:
# the server hears DEVICE_REMOVAL and ends, the removal completes (rcm
# waits for the id to be destroyed, by ucma here), and the device comes
# back and serves again.
device_removal_with_listener() {
	local pid i
	rping -s -a "$RCM_ADDR" -C 1 > /tmp/rping-removal.out 2>&1 &
	pid=$!
	sleep 2
	timeout 60 rdma link delete rxe0 || { echo "rdma link delete did not finish"; return 1; }
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	kill "$pid" 2> /dev/null && { echo "rping server still running"; return 1; }
	cat /tmp/rping-removal.out
	dmesg | grep -q 'rxe0: going: 1 rdma_cm id(s) released' || { dmesg | tail -5; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || return 1
	rcm_retry 20 sh -c "timeout 30 rping -c -a $RCM_PEER -C 2 -v"
}

# Whether any of the processes named is still running.
any_alive() {
	local p
	for p in "$@"; do kill -0 "$p" 2> /dev/null && return 0; done
	return 1
}

# Waits up to $1 s until this guest has $2 rdma_cm ids in state CONNECT
# (by the clock: each look under TCG can take most of a second).
wait_connected_ids() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		[ "$(rdma res show cm_id | grep -c 'state CONNECT')" -ge "$2" ] && return 0
		sleep 0.1
	done
	rdma res show cm_id
	return 1
}

# 6.12's neighbour-change behaviour, and C bug class 10 (neighbour work
# re-queued under a storm, then a destroy that never ended): the peer's
# neighbour entry flips 25 times between a foreign hardware address and
# its own under three connected rping clients. Each hears UNREACHABLE
# (-ETIMEDOUT) for its id, whose route named the old address, and ends;
# nothing hangs. rxe keeps sending to the address each QP was given, so
# without the event the clients would ping on.
neighbour_change_unreachable() {
	local real fake=02:00:00:00:00:99 pids="" p i rc=0
	real=$(ip neigh show "$RCM_PEER" dev eth0 | sed -n 's/.*lladdr \([0-9a-f:]*\).*/\1/p')
	[ -n "$real" ] || { echo "no neighbour entry for $RCM_PEER"; return 1; }
	peer_start neigh "rping -s -P -a $RCM_PEER"
	rcm_retry 20 peer_run "rdma res show cm_id | grep -q 'state LISTEN'" ||
		{ echo "the peer's rping server does not listen"; rc=1; }
	for i in 1 2 3; do
		rping -c -a "$RCM_PEER" > /tmp/rping-neigh.$i 2>&1 &
		pids="$pids $!"
	done
	if ! wait_connected_ids 30 3; then
		# What each side saw of the connection that did not last.
		echo "the rping clients did not connect; the peer's server said:"
		peer_run 'tail -20 /tmp/job.neigh.out; rdma res show cm_id'
		rc=1
	fi
	for ((i = 0; i < 25; i++)); do
		ip neigh replace "$RCM_PEER" lladdr $fake dev eth0 nud permanent
		ip neigh replace "$RCM_PEER" lladdr "$real" dev eth0 nud reachable
	done
	for ((i = 0; i < 300; i++)); do
		any_alive $pids || break
		sleep 0.1
	done
	for p in $pids; do
		kill "$p" 2> /dev/null && { echo "an rping client still runs 30 s after the change"; rc=1; }
	done
	for i in 1 2 3; do
		grep -q 'RDMA_CM_EVENT_UNREACHABLE, error -110' /tmp/rping-neigh.$i ||
			{ echo "client $i:"; cat /tmp/rping-neigh.$i; rc=1; }
	done
	peer_run 'pkill rping' > /dev/null
	peer_wait neigh 10 > /dev/null
	return $rc
}

RDMA_SAMPLE=/lib/modules/$(uname -r)/extra/rcm_sample_rdma.ko

# A kernel consumer of the rdma_cm API alone (samples/rcm/rcm_sample_rdma):
# 100 connections, 10 in flight, each resolved, connected from its
# ROUTE_RESOLVED handler (rdma_connect_locked), disconnected and destroyed
# by its handler's non-zero return; without QPs (a QP number in the
# parameters) and with QPs rdma_cm moves. The peer runs the server.
kernel_consumer_connects() {
	local q rc=0
	for q in 0 1; do
		peer_run "insmod $RDMA_SAMPLE role=server qp=$q" > /dev/null || return 1
		insmod "$RDMA_SAMPLE" role=client peer="$RCM_PEER" conns=100 parallel=10 qp="$q" || rc=1
		rmmod rcm_sample_rdma 2> /dev/null
		peer_run 'rmmod rcm_sample_rdma' > /dev/null || rc=1
		dmesg | grep 'rcm_sample_rdma: client' | tail -1
	done
	return $rc
}

DATA_SAMPLE=/lib/modules/$(uname -r)/extra/rcm_test_data.ko

# A kernel consumer of the rdma_cm API alone that moves data
# (modules/rcm_test_data): an RC connection with 10 messages the
# peer's server echoes, then a UD exchange whose peer QP and Q_Key come
# from SIDR (PS_UDP), 10 datagrams echoed; each echo checked byte for byte.
kernel_consumer_data() {
	local m rc=0 line
	for m in rc ud; do
		peer_run "insmod $DATA_SAMPLE role=server mode=$m" > /dev/null || return 1
		insmod "$DATA_SAMPLE" role=client mode=$m peer="$RCM_PEER" messages=10 || rc=1
		rmmod rcm_test_data 2> /dev/null
		peer_run 'rmmod rcm_test_data' > /dev/null || rc=1
		dmesg | grep 'rcm_test_data: client' | tail -2
		line=$(peer_run dmesg | grep 'rcm_test_data: server stopped' | tail -1)
		echo "peer: ${line#*: }"
		printf '%s\n' "$line" | grep -q 'server stopped: 10 echoed, 0 echo errors' || rc=1
	done
	return $rc
}

# The same sample in IP multicast group 239.1.2.4: the peer's server joins
# (a full member, its UD QP attached), this guest's client joins and sends
# 10 datagrams to the group, both leave; the server counts what arrived.
kernel_consumer_multicast() {
	local rc=0 line
	peer_run "insmod $DATA_SAMPLE role=server mode=mc local=$RCM_PEER" > /dev/null || return 1
	insmod "$DATA_SAMPLE" role=client mode=mc local="$RCM_ADDR" messages=10 || rc=1
	rmmod rcm_test_data 2> /dev/null
	peer_run 'rmmod rcm_test_data' > /dev/null || rc=1
	dmesg | grep 'rcm_test_data: client' | tail -1
	line=$(peer_run dmesg | grep 'rcm_test_data: server' | tail -2)
	printf 'peer: %s\n' "$line"
	printf '%s\n' "$line" | grep -q 'server: joined 239.1.2.4, QP attached' &&
		printf '%s\n' "$line" | grep -q 'server stopped: 10 datagrams received in 239.1.2.4, 0 errors' || rc=1
	return $rc
}

RDMA_MISUSE=/lib/modules/$(uname -r)/extra/rcm_test_rdma_misuse.ko
MISUSE_ARGS="silent=${RCM_ADDR%.*}.99"

# The misuse and teardown cases of the C rdma_cm's bug history
# (modules/rcm_test_rdma_misuse.c) on this guest's rdma_cm: the
# peer answers ARP, .99 of the subnet does not.
misuse_cases_pass() {
	local rc=0
	insmod "$RDMA_MISUSE" local="$RCM_ADDR" peer="$RCM_PEER" $MISUSE_ARGS || rc=1
	rmmod rcm_test_rdma_misuse 2> /dev/null
	dmesg | grep 'rcm_test_rdma_misuse:' | tail -20
	return $rc
}

# The same cases on the peer's C rdma_cm, the reference for their errnos.
misuse_cases_pass_on_c() {
	peer_run "insmod $RDMA_MISUSE local=$RCM_PEER peer=$RCM_ADDR $MISUSE_ARGS; rc=\$?
		rmmod rcm_test_rdma_misuse; dmesg | grep 'rcm_test_rdma_misuse:' | tail -20; exit \$rc"
}

# The misuse cases also run on the peer's C rdma_cm (the reference for
# their errnos) in make test-full: they are the C rdma_cm's bug classes,
# and a KASAN report on the peer fails the log check (Documentation/
# testing.rst: not yet passed with the fixed sample).
c_reference() { [ "$1" = c ] && rcm_full; }

# The directions of the tool pairs: this guest's clients in make test
# (the tools run both ways through rcm's own device, rcm to rcm in
# rcm_ucma_dev and against the C stack later in rcm_ucma_c), both in make
# test-full.
tool_dirs() {
	rcm_full && echo to_peer from_peer || echo to_peer
}

# ucma_scenarios <peer mode>
ucma_scenarios() {
	local peer_mode=$1 dir
	rcm_step modprobe rdma_ucm
	[ "$peer_mode" = rcm ] && rcm_step peer_run 'modprobe rdma_ucm' > /dev/null

	rcm_expect "this guest runs the in-tree rdma_ucm on rcm's rdma_cm (rmmod rcm refused)" stack_is_rcm

	rcm_step counts_before
	for dir in $(tool_dirs "$peer_mode"); do
		check_rping "$dir"
		check_ucmatose "$dir" 2
		check_udaddy "$dir"
		check_mckey "$dir"
	done
	check_reject_no_listener
	rcm_expect "a kernel rdma_cm consumer: 100 connections, 10 in flight, without and with QPs" \
		kernel_consumer_connects
	rcm_expect "a kernel rdma_cm consumer moves data: RC, 10 messages echoed; UD through SIDR, 10 datagrams echoed" \
		kernel_consumer_data
	rcm_expect "a kernel rdma_cm consumer in multicast group 239.1.2.4: join, 10 datagrams received, leave" \
		kernel_consumer_multicast
	rcm_expect "rdma_cm misuse cases (C bugs 2, 3, 4, 5, 6, 12, 14): errnos, no late event, no hang, no resolution held up by a blocked handler" \
		misuse_cases_pass
	c_reference "$peer_mode" && rcm_expect "the same cases on the C rdma_cm (the reference)" \
		misuse_cases_pass_on_c

	# Three connections each way the tools ran (rping, ucmatose x2; plus
	# the rejected one) and udaddy's service resolution went through rcm's
	# MAD agent.
	local received=0
	[ "$(tool_dirs "$peer_mode" | wc -w)" = 2 ] && received=3
	rcm_expect "rcm's counters: REQs sent and received, a SIDR_REQ sent" \
		carried_by_rcm 4 $received 1
	rcm_expect "the peer's hardware address changes 25 times under 3 connections: each hears UNREACHABLE" \
		neighbour_change_unreachable
	# The peer's rping server for the connect after the device is back.
	rcm_step peer_start removal "rping -s -a $RCM_PEER -C 2 -v" > /dev/null
	rcm_expect "rdma link delete under a listening id: DEVICE_REMOVAL, the id released, the device serves again" \
		device_removal_with_listener
	rcm_step peer_wait removal 60 > /dev/null
}
