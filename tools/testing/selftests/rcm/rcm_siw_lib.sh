#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma_cm over soft-iWARP (siw): both guests swap rxe0 for siw0 on the
# same wire, so connections go through the in-tree iw_cm (TCP and MPA), not
# CM MADs. This guest runs rcm's rdma_cm; the peer the mode the test's
# header names. The consumers are librdmacm's tools (rping, ucmatose:
# through the in-tree rdma_ucm, or in CM mode ucma rcm's own device) and
# nvme-rdma / nvmet-rdma, unmodified.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_tools_lib.sh"
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_nvme_lib.sh"

SIW_UP='rdma link delete rxe0 && modprobe siw && rdma link add siw0 type siw netdev eth0'

# siw's own race, on either CM: a responder may send right after its MPA
# reply (ucmatose's server does once all its connections are up), and an
# initiator whose reply work runs after those bytes arrived reads more than
# the reply and fails the connect (CONNECT_REPLY -EINVAL: ucmatose prints
# CONNECT_ERROR, error: -22). Measured with ucmatose -c 2 in both
# directions: 1 in 20 pairs on the C stack, 2 in 16 on rcm. Such a client
# gets a fresh server, as a refused one does (run_pair). Not retried: a
# connection that comes up and then moves no data (seen once on rcm,
# 2026-11-26, rping to the peer: the server waited for its first
# RDMA_READ_COMPLETE until the client was killed; no kernel message).
PAIR_RETRY_RE="$REFUSED_RE|RDMA_CM_EVENT_CONNECT_ERROR, error: -22"

# This guest's and the peer's RDMA device is siw0 alone.
siw_only() {
	sh -c "$SIW_UP" && peer_run "$SIW_UP" > /dev/null || return 1
	rdma link show
	[ "$(rdma link show | grep -c .)" = 1 ] && rdma link show | grep -q 'siw0/1 state ACTIVE'
}

# rcm served siw0, iWARP goes through iw_cm (neither ib_cm nor rdma_cm is
# loaded), and librdmacm runs on rcm: through the in-tree rdma_ucm on rcm's
# rdma_cm, or in CM mode ucma through rcm's own device.
stack_is_rcm_over_iw_cm() {
	[ -d /sys/module/iw_cm ] && [ ! -d /sys/module/rdma_cm ] && [ ! -d /sys/module/ib_cm ] ||
		return 1
	if [ "$RCM_MODE" = ucma ]; then
		[ ! -d /sys/module/rdma_ucm ] && [ -c /dev/infiniband/rdma_cm ]
	else
		[ -d /sys/module/rcm/holders/rdma_ucm ]
	fi
}
librdmacm_words() {
	[ "$RCM_MODE" = ucma ] && echo "rcm's own rdma_cm device" ||
		echo "rdma_ucm on rcm's rdma_cm"
}

# While the peer's rping client is connected to this guest, rcm's ids on
# siw0 are in ib_core's resource tracking (listener and connection). The
# client starts once the server listens, and both are bounded in time: a
# client that fails is tried again twice (rping hangs after a refused
# connect, hence each try's 40 s), and its output goes to the test's log
# (RES_CLIENT_NOTE) even when the listing passes.
RES_CLIENT_NOTE=/tmp/rping-res.note
res_lists_siw_ids() {
	local i out pid client
	rm -f "$RES_CLIENT_NOTE"
	timeout 90 rping -s -a "$RCM_ADDR" -C 40 -v > /tmp/rping-res.out 2>&1 &
	pid=$!
	rcm_retry 20 sh -c "$LISTENING"
	peer_start res "for i in 1 2 3; do timeout 40 rping -c -a $RCM_ADDR -C 40 -v > /tmp/res.\$i 2>&1 && exit 0
		echo \"client try \$i failed (status \$?):\"; tail -5 /tmp/res.\$i; sleep 1; done; exit 1"
	for ((i = 0; i < 50; i++)); do
		out=$(rdma res show cm_id dev siw0 2>&1)
		[ "$(printf '%s\n' "$out" | grep -c 'state CONNECT')" -ge 1 ] && break
		sleep 0.2
	done
	printf '%s\n' "$out"
	client=$(peer_wait res 150) ||
		printf '%s\n' "server:" "$(tail -5 /tmp/rping-res.out)" > "$RES_CLIENT_NOTE"
	[ -z "$client" ] || printf '%s\n' "$client" >> "$RES_CLIENT_NOTE"
	wait "$pid"
	printf '%s\n' "$out" | grep -q 'state LISTEN' &&
		printf '%s\n' "$out" | grep -q 'state CONNECT.*ps TCP'
}

# A listener on the wildcard address (ucmatose's server binds none) is
# listed on siw0 in state LISTEN with its port space, as 6.12 lists its
# per-device listen ids, and its row goes with it.
wildcard_listener_listed() {
	local pid out
	timeout 60 ucmatose -c 1 > /tmp/ucmatose-rows.out 2>&1 &
	pid=$!
	rcm_retry 20 sh -c "rdma res show cm_id dev siw0 | grep -q 'state LISTEN'"
	out=$(rdma res show cm_id)
	kill "$pid"
	wait "$pid"
	printf '%s\n' "$out"
	echo "after the server ended: $(rdma res show cm_id | grep -c .) id(s) listed"
	[ "$(printf '%s\n' "$out" | grep 'state LISTEN' | grep 'ps TCP' | grep -c '0\.0\.0\.0:7471')" = 1 ] &&
		[ -z "$(rdma res show cm_id)" ]
}

# A connect to a port nobody listens on: the peer's TCP answers with a
# reset, which siw reports while connecting (rdma_connect fails) or as
# REJECTED with -ECONNREFUSED. rping itself then hangs on either stack
# (seen on the C stack: killed after 30 s), so it gets 10 s.
reject_no_listener_iw() {
	local out
	out=$(timeout 10 rping -c -a "$RCM_PEER" -p 7174 -C 1 -v 2>&1)
	printf '%s\n' "$out" | tail -5
	printf '%s\n' "$out" | grep -Eq 'rdma_connect: Connection refused|RDMA_CM_EVENT_REJECTED, error -111'
}

# An rping server listening on the wildcard address: siw0 goes away under
# it (the removal completes; the listener, bound to no device, stays) and
# comes back, and the new device listens for it: the peer connects. On a
# port of its own (WILDCARD_PORT), so that no client of an earlier point
# that outlived it reaches this server (it serves one connection).
WILDCARD_PORT=7175
wildcard_listener_across_device_changes() {
	local pid rc=0
	rm -f /tmp/rping-any.account
	timeout 240 rping -s -a 0.0.0.0 -p $WILDCARD_PORT -C 2 -v > /tmp/rping-any.out 2>&1 &
	pid=$!
	sleep 2
	timeout 60 rdma link delete siw0 || { echo "rdma link delete siw0 did not finish"; rc=1; }
	kill -0 "$pid" 2> /dev/null || { echo "the wildcard rping server ended"; rc=1; }
	rdma link add siw0 type siw netdev eth0 || rc=1
	[ $rc = 0 ] && { peer_run "i=0; until timeout 30 rping -c -a $RCM_ADDR -p $WILDCARD_PORT -C 2 -v; do i=\$((i+1)); [ \$i -ge 10 ] && exit 1; sleep 1; done" || rc=1; }
	local alive=no
	kill -0 "$pid" 2> /dev/null && alive=yes
	# Taken while the server still runs: its listener and any connection
	# it was given are in rdma_cm's ids and siw's sockets only until then.
	[ $rc = 0 ] || {
		wildcard_failure_account "$alive" > /tmp/rping-any.account 2>&1
		siw_diagnostics > "$SIW_DIAGNOSTICS" 2>&1
	}
	kill "$pid" 2> /dev/null
	wait "$pid"
	cat /tmp/rping-any.out
	[ "$(grep -c '^server ping data: rdma-ping-' /tmp/rping-any.out)" = 2 ] || rc=1
	[ $rc = 0 ] || {
		[ -f /tmp/rping-any.account ] || siw_diagnostics > "$SIW_DIAGNOSTICS" 2>&1
		cat /tmp/rping-any.account 2> /dev/null
	}
	return $rc
}

# The last lines of a failed wildcard point (rcm_expect keeps the tail):
# whether its server still ran when the clients gave up, who listens on
# its port on each guest (TCP, in /proc/net/tcp: siw's listeners are
# kernel sockets), and rcm's warnings.
wildcard_failure_account() { # <server alive: yes|no>
	local hex listeners
	hex=$(printf '%04X' $WILDCARD_PORT)
	listeners="awk '\$2 ~ /:$hex\$/ && \$4 == \"0A\" { n++ } END { print n + 0 }' /proc/net/tcp"
	echo "the wildcard rping server still ran when the peer gave up: $1"
	echo "TCP listeners on port $WILDCARD_PORT: this guest $(sh -c "$listeners"), the peer $(peer_run "$listeners")"
	echo "rcm's 'no iWARP listener' warnings in this boot: $(dmesg | grep -c 'rcm: .*no iWARP listener')"
	dmesg | grep 'rcm: ' | tail -4
}

# (Seen in make test 2026-11-26 and 2026-12-02: all 10 of the peer's
# connects timed out waiting for the MPA reply, UNREACHABLE -110, with the
# server running and its TCP listener up, so a listener took the TCP
# connection and nobody answered it; not reproduced in 12 runs of the
# point alone nor 5 of the whole siw set. The diagnostics are now taken
# before the server is stopped.)
# What both guests hold when a connection over siw failed: TCP sockets
# (siw's listeners and connections are kernel sockets), rdma_cm's ids, and
# the stacks of blocked tasks (an iw_cm work that never returns stalls
# every iWARP event after it). Written to a file that siw_scenarios prints
# whole (rcm_expect keeps the last 40 lines of a failed point's output).
SIW_DIAGNOSTICS=/tmp/siw-diagnostics.note
siw_diagnostics() {
	local cmd='cat /proc/net/tcp; rdma res show cm_id; dmesg | tail -30
		for p in /proc/[0-9]*; do grep -q "^State:.*D" $p/status 2> /dev/null &&
			{ echo "blocked: $(cat $p/comm)"; cat $p/stack; }; done'
	echo "# this guest:"
	sh -c "$cmd" 2>&1 | sed 's/^/#   /'
	echo "# the peer:"
	peer_run "$cmd" 2>&1 | sed 's/^/#   /'
}

# siw_scenarios <peer mode>
siw_scenarios() {
	local peer_mode=$1 dir
	# (CM mode ucma blocks rdma_ucm: librdmacm opens rcm's device)
	[ "$RCM_MODE" = ucma ] || rcm_step modprobe rdma_ucm
	[ "$peer_mode" = ucma ] || rcm_step peer_run 'modprobe rdma_ucm' > /dev/null

	rcm_expect "both guests: siw0 (soft-iWARP) instead of rxe0" siw_only
	rcm_expect "librdmacm on $(librdmacm_words), iWARP through iw_cm" stack_is_rcm_over_iw_cm
	for dir in to_peer from_peer; do
		check_rping "$dir"
		check_ucmatose "$dir" 2
	done
	rcm_expect "connect to a port with no listener: REJECTED, -ECONNREFUSED" reject_no_listener_iw
	rcm_expect "rdma res show cm_id lists rcm's listener and connection on siw0" res_lists_siw_ids
	rcm_step rcm_log_file "$RES_CLIENT_NOTE" "the listing's rping client:"
	rcm_expect "a wildcard listener is listed on siw0 (state LISTEN), and gone after it" \
		wildcard_listener_listed
	rcm_step rm -f "$SIW_DIAGNOSTICS"
	rcm_expect "a wildcard listener: siw0 removed and added under it, then a connection" \
		wildcard_listener_across_device_changes
	rcm_step rcm_log_file "$SIW_DIAGNOSTICS" "both guests after the failure:"

	rcm_step rcm_modprobe nvme-rdma
	rcm_expect "the target ($peer_mode) exports $NQN over siw" nvme_target_up
	rcm_expect "nvme connect over siw with 2 I/O queues: controller live" nvme_connect_live 2
	rcm_expect "1 MiB written and read back unchanged" nvme_pattern_round_trip 1024
	rcm_expect "nvme disconnect" nvme_disconnect_all
	local rounds
	rounds=$(rcm_repeats 3 1)
	rcm_expect "$rounds round(s) of connect, I/O, disconnect" nvme_rounds "$rounds"
	rcm_step nvme_target_down > /dev/null
}

# run_siw_scenarios <peer mode>: one boot of its own.
run_siw_scenarios() {
	rcm_two_guests_run siw_scenarios "$1"
}
