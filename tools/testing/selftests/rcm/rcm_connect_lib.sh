#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The ib_cm connection scenarios (connect_scenarios, which rcm_ucma_c.sh,
# rcm_ucma_dev.sh and rcm_consumers_*.sh run): this guest runs the client
# side of modules/rcm_test_conn.ko, the peer the server side, each on
# the CM its rcm-vm mode gives it (rcm.ko or the in-tree ib_cm). The client
# does its whole run inside insmod and fails it unless every connection met
# the expectation; its summary line is checked too.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_lib.sh"

SAMPLE_KO=/lib/modules/$(uname -r)/extra/rcm_test_conn.ko
# insmod, not modprobe: the sample's modinfo depends on rcm (it was linked
# against rcm's exports), which must not load next to the C CM.
SERVER_LOAD="insmod $SAMPLE_KO role=server"

server() { # <sample parameters...>: (re)load the server on the peer
	peer_run "rmmod rcm_test_conn 2>/dev/null; $SERVER_LOAD $*"
}

# Runs the client with the given parameters; prints its summary; fails if
# insmod failed or the summary does not say "<conns>/<conns> as expected".
client() {
	local rc summary
	dmesg -c > /dev/null
	insmod "$SAMPLE_KO" role=client peer="$RCM_PEER" "$@"
	rc=$?
	rmmod rcm_test_conn 2> /dev/null
	summary=$(dmesg | grep 'rcm_test_conn' | tail -4)
	printf '%s\n' "$summary"
	[ $rc = 0 ] && printf '%s\n' "$summary" | grep -qE 'client: ([0-9]+)/\1 as expected' && return 0
	# A stale-connection REJ names a QP number the peer still connects
	# to: show the peer's QPs (rqpn) so the failure tells whose it is.
	printf '%s\n' "$summary" | grep -q 'reject reason 10 ' && peer_run 'rdma res show qp' | head -40
	return 1
}

# Runs a client holding <conns> connections for 8 s and, 5 s in, <peer
# command> on the peer; succeeds if the command did and every connection
# still ended as expected (the peer's DREQ is as good as our own).
client_during() { # <conns> <peer command> [sample parameters...]
	local pid rc=0 conns=$1 cmd=$2 i rtu0 rtu=/sys/class/infiniband/rxe0/ports/1/cm_tx_msgs/rtu
	shift 2
	rtu0=$(cat $rtu)
	insmod "$SAMPLE_KO" role=client peer="$RCM_PEER" conns="$conns" parallel="$conns" \
		messages=1 hold_ms=8000 "$@" &
	pid=$!
	# The command runs once every connection is up (this side sent its
	# RTU) and held; on loaded cores that can take more than a few seconds.
	for ((i = 0; i < 600; i++)); do
		[ $(($(cat $rtu) - rtu0)) -ge "$conns" ] && break
		sleep 0.1
	done
	sleep 1
	peer_run "$cmd" || rc=1
	wait $pid || rc=1
	rmmod rcm_test_conn 2> /dev/null
	echo "client with $conns connection(s) during '$cmd': $([ $rc = 0 ] && echo fine || echo failed)"
	return $rc
}

# The client's summary field <name> ("echoes", "MRAs") of the last run.
last_count() {
	dmesg | sed -n "s/.*client: .* \([0-9]*\) $1.*/\1/p" | tail -1
}

# The scale and removal half of the set (LAP/APR, sequential and
# concurrent connections, unloads and device removals under live
# connections) runs rcm to rcm in make test, in every pairing in make
# test-full (the CI budget).
connect_scale() { rcm_full || [ "$1/$2" = rcm/rcm ]; }

# This guest runs CM module $1, the peer $2.
cms_are() {
	grep -qE "^$1 " /proc/modules && peer_run cat /proc/modules | grep -qE "^$2 "
}

# What earlier scenario sets of this boot left on the peer: a QP still
# connected to one of ours could meet a reused QP number (REJ 10).
peer_leftovers() {
	rcm_log "the peer's QPs and rdma_cm ids before the connection scenarios:"
	peer_run 'rdma res show qp; rdma res show cm_id' | sed 's/^/# /'
}

# connect_scenarios <this guest's CM module> <the peer's>: rcm or ib_cm
connect_scenarios() {
	local mine=$1 theirs=$2
	rcm_step peer_leftovers
	rcm_expect "CMs: this guest (client) $mine, the peer (server) $theirs" cms_are "$mine" "$theirs"
	rcm_expect "the server loads on the peer and listens" server

	rcm_expect "connect, 10 messages echoed and checked, client disconnects" \
		client messages=10
	rcm_expect "connect, 10 messages echoed, the server disconnects" \
		client messages=10 server_disconnects=1

	reject_seen() {
		server reject=1 > /dev/null && client conns=3 expect=reject
	}
	rcm_expect "3 connects rejected: reason 28, the server's private data intact" \
		reject_seen

	mra_seen() {
		server mra=1 > /dev/null || return 1
		client conns=2 messages=1 || return 1
		local n
		n=$(last_count MRAs)
		echo "the client received $n MRA(s) for 2 REQs"
		[ "${n:-0}" -ge 2 ]
	}
	rcm_expect "with an MRA before each REP: MRA_RECEIVED, then connected" mra_seen

	# ib_cm_notify(IB_EVENT_COMM_EST) from atomic context right after the
	# REP, as a QP event handler would: USER_ESTABLISHED, no splat.
	user_established() { # <comm_est: 1 task, interrupts off; 2 hard IRQ>
		local line
		server comm_est="$1" > /dev/null || return 1
		client conns=3 messages=2 || return 1
		peer_run 'rmmod rcm_test_conn' > /dev/null
		line=$(peer_run dmesg | grep 'server stopped' | tail -1)
		echo "$line"
		printf '%s\n' "$line" | grep -qE '3 accepted, 6 echoed, [1-3] user established, 0 notify errors'
	}
	rcm_expect "ib_cm_notify(COMM_EST) in atomic context: USER_ESTABLISHED, data flows" \
		user_established 1

	# The same from hard IRQ (an irq_work), where the CM's lock may be
	# held by the task the interrupt stopped: no lockdep report, 0, and
	# the state changed at once or by the CM's work soon after. 6.12's
	# ib_cm takes cm_id_priv->lock there, which it also holds while it
	# takes the local id xarray's lock (an interrupt-unsafe lock):
	# lockdep reports an irq lock inversion, so the C server is left out.
	if [ "$theirs" = rcm ]; then
		rcm_expect "ib_cm_notify(COMM_EST) in hard IRQ: USER_ESTABLISHED, data flows" \
			user_established 2
	else
		rcm_skip "ib_cm_notify(COMM_EST) in hard IRQ (6.12's ib_cm: irq lock inversion with its id xarray)"
	fi

	sidr_resolves() {
		local qpn got
		server > /dev/null || return 1
		qpn=$(peer_run dmesg | sed -n 's/.*listening on .*, UD QP \(0x[0-9a-f]*\)$/\1/p' | tail -1)
		client expect=sidr || return 1
		got=$(dmesg | sed -n 's/.*SIDR_REP status 0: QP \(0x[0-9a-f]*\) .*/\1/p' | tail -1)
		echo "the server's UD QP is $qpn, SIDR_REP said $got"
		[ -n "$qpn" ] && [ "$qpn" = "$got" ]
	}
	rcm_expect "SIDR resolves the server's UD QP and Q_Key" sidr_resolves

	# A REQ with an alternate path: 6.12 resolves it from the path alone,
	# which never succeeds on RoCE, and rejects with reason 18 (invalid
	# alternate GID) before the server sees the REQ.
	rcm_expect "REQ with an alternate path: REJ 18 (invalid alt GID), as 6.12 on RoCE" \
		client conns=2 alt=1 expect=reject_alt
	if ! connect_scale "$mine" "$theirs"; then
		rcm_step peer_run 'rmmod rcm_test_conn' > /dev/null 2>&1
		return
	fi

	# LAP/APR: rcm's own export (6.12's ib_cm cannot send either, and
	# drops LAPs on RoCE). After the APR the client's QP takes the
	# alternate path (ib_cm_init_qp_attr for RTS: ALT_PATH and
	# PATH_MIG_STATE, applied with ib_modify_qp).
	lap_apr() {
		server > /dev/null || return 1
		client conns=2 messages=1 lap=1 || return 1
		local n
		n=$(last_count APRs)
		echo "the client received $n APR(s) for 2 LAPs"
		[ "${n:-0}" = 2 ] && peer_run dmesg | grep -q "conn 1: LAP for .* accepted (0)" &&
			dmesg | grep -q 'conn 1: RTS after the APR: mask 0x[0-9a-f]*, alternate path loaded'
	}
	if [ "$mine" = rcm ] && [ "$theirs" = rcm ]; then
		rcm_expect "LAP answered by APR (success); RTS after it loads the alternate path" lap_apr
	else
		rcm_skip "LAP/APR needs rcm on both sides"
	fi

	# make test-full: 1000 (about 4 min per pairing under the debug
	# kernel); make test: 100.
	local sequential
	sequential=$(rcm_repeats 1000 100)
	rcm_expect "$sequential sequential connections, one message each" \
		client conns=$sequential messages=1
	rcm_expect "200 concurrent connections, one message each" \
		client conns=200 parallel=200 messages=1

	# rcm sends at most rcm.peer_window requests to one peer before their
	# answers (the rest wait in rcm): 200 connects behind a window of 8
	# all connect, and none of their REQs is sent twice.
	windowed() {
		local param=/sys/module/rcm/parameters/peer_window old rc=0
		local cnt=/sys/class/infiniband/rxe0/ports/1 tx0 rt0 tx rt
		old=$(cat $param)
		tx0=$(cat $cnt/cm_tx_msgs/req) rt0=$(cat $cnt/cm_tx_retries/req)
		echo 8 > $param
		client conns=200 parallel=200 messages=1 > /dev/null || rc=1
		echo "$old" > $param
		tx=$(($(cat $cnt/cm_tx_msgs/req) - tx0)) rt=$(($(cat $cnt/cm_tx_retries/req) - rt0))
		echo "behind a window of 8: $tx REQs sent for 200 connections, $rt of them retries"
		[ $rc = 0 ] && [ $tx = 200 ] && [ $rt = 0 ]
	}
	if [ "$mine" = rcm ]; then
		rcm_expect "200 concurrent connections behind a window of 8 REQs: each REQ sent once" windowed
	else
		rcm_skip "the window of requests per peer is rcm's (rcm.peer_window)"
	fi

	# rcm works out a sender's reply path (on RoCE an address resolution:
	# ib_init_ah_attr_from_wc, counted by a kprobe on the peer) once and
	# reuses it for rcm.reply_path_ms unless the network changes; with 0,
	# only within one intake batch, so REQs one at a time get one each, as
	# with the C CM. The peer's neighbour entries are flushed
	# and the client's made permanent, so that only the test changes the
	# network (earlier scenarios' entries would age, each age a change).
	reply_paths() {
		local t=/sys/kernel/tracing param=/sys/module/rcm/parameters/reply_path_ms
		local mac rc=0 h0 h1 h2 h3 h4
		mac=$(cat /sys/class/net/eth0/address)
		hits() { peer_run "awk '\$1 == \"reply\" { print \$2 }' $t/kprobe_profile"; }
		neigh() { peer_run "ip neigh replace $RCM_ADDR lladdr $mac dev eth0 nud $1"; }
		server > /dev/null &&
			peer_run "$(declare -f rcm_tracefs); rcm_tracefs &&
				echo 'p:rcmt/reply ib_init_ah_attr_from_wc' >> $t/kprobe_events &&
				echo 1 > $t/events/rcmt/enable && echo 60000 > $param &&
				ip -4 neigh flush dev eth0 && ip -6 neigh flush dev eth0" > /dev/null &&
			neigh permanent || return 1
		h0=$(hits)
		client conns=50 parallel=10 messages=1 > /dev/null || rc=1
		h1=$(hits)
		# A neighbour update (permanent -> reachable -> permanent).
		neigh reachable && neigh permanent || rc=1
		client conns=1 messages=1 > /dev/null || rc=1
		h2=$(hits)
		client conns=1 messages=1 > /dev/null || rc=1
		h3=$(hits)
		peer_run "echo 0 > $param" > /dev/null || rc=1
		client conns=5 messages=1 > /dev/null || rc=1
		h4=$(hits)
		peer_run "echo 1000 > $param; ip neigh del $RCM_ADDR dev eth0
			echo 0 > $t/events/rcmt/enable; echo -:rcmt/reply >> $t/kprobe_events" > /dev/null
		echo "reply paths worked out: $((h1 - h0)) for 50 connections, $((h2 - h1)) after a neighbour update," \
			"$((h3 - h2)) for one more, $((h4 - h3)) for 5 with reply_path_ms=0"
		[ $rc = 0 ] && [ $((h1 - h0)) = 1 ] && [ $((h2 - h1)) = 1 ] && [ $((h3 - h2)) = 0 ] &&
			[ $((h4 - h3)) = 5 ]
	}
	# rcm's server keeps a path's address handle for rcm.reply_path_ms
	# (one per send with 0, as the C CM): handles made against MADs sent.
	# A send that finds no fresh handle retires the idle stale ones, and
	# the next send to complete destroys them: after the run with 0, no
	# handle made in the test is left (handles are matched by address:
	# the one rdma_create_ah returned, the one rdma_destroy_ah_user got).
	shared_ahs() {
		local t=/sys/kernel/tracing param=/sys/module/rcm/parameters/reply_path_ms
		local tx=/sys/class/infiniband/rxe0/ports/1/cm_tx_msgs rc=0 h0 h1 h2 s0 s1 s2 left
		made() { peer_run "awk '\$1 == \"ah\" { print \$2 }' $t/kprobe_profile"; }
		sent() { peer_run "cat $tx/* | awk '{ n += \$1 } END { print n }'"; }
		server > /dev/null &&
			peer_run "$(declare -f rcm_tracefs); rcm_tracefs &&
				echo 'r:rcmt/ah rdma_create_ah ah=\$retval:x64' >> $t/kprobe_events &&
				echo 'p:rcmt/ahgone rdma_destroy_ah_user ah=\$arg1:x64' >> $t/kprobe_events &&
				echo > $t/trace && echo 1 > $t/events/rcmt/enable" > /dev/null || return 1
		h0=$(made) s0=$(sent)
		client conns=50 parallel=10 messages=1 > /dev/null || rc=1
		h1=$(made) s1=$(sent)
		peer_run "echo 0 > $param" > /dev/null || rc=1
		client conns=5 messages=1 > /dev/null || rc=1
		sleep 1
		h2=$(made) s2=$(sent)
		left=$(peer_run "echo 0 > $t/events/rcmt/enable
			awk '/ ah: / { sub(/.*ah=/, \"\"); live[\$1] = 1 }
				/ ahgone: / { sub(/.*ah=/, \"\"); delete live[\$1] }
				END { n = 0; for (a in live) n++; print n }' $t/trace
			echo 1000 > $param; echo > $t/trace
			echo -:rcmt/ah >> $t/kprobe_events; echo -:rcmt/ahgone >> $t/kprobe_events")
		echo "server address handles made: $((h1 - h0)) for $((s1 - s0)) MADs sent," \
			"$((h2 - h1)) for $((s2 - s1)) with reply_path_ms=0; left after that: $left"
		[ $rc = 0 ] && [ $((s1 - s0)) -ge 100 ] && [ $((h1 - h0)) -le $(((s1 - s0) / 10)) ] &&
			[ $((s2 - s1)) -ge 10 ] && [ $((h2 - h1)) = $((s2 - s1)) ] && [ "$left" = 0 ]
	}
	if [ "$theirs" = rcm ]; then
		rcm_expect "one reply path per sender: 50 REQs, 1 resolution; again after a neighbour update; one per REQ one at a time with reply_path_ms=0" \
			reply_paths
		rcm_expect "address handles shared per path: 50 connections, a handle per 10 MADs sent at most; one per MAD with reply_path_ms=0, the stale shared ones freed" \
			shared_ahs
	else
		rcm_skip "reply paths reused: rcm's server only"
		rcm_skip "address handles shared: rcm's server only"
	fi

	# Unloading the server with live connections: it destroys them, the
	# CM disconnects each (DREQ), the client sees DREQ_RECEIVED.
	# The server's CM sends the DREQs (its counters), not the client's.
	unload_live() {
		local live tx0 tx1 cnt=/sys/class/infiniband/rxe0/ports/1/cm_tx_msgs/dreq
		tx0=$(peer_run "cat $cnt")
		client_during 5 'rmmod rcm_test_conn' || return 1
		tx1=$(peer_run "cat $cnt")
		live=$(peer_run dmesg | sed -n 's/.*server stopped: .*, \([0-9]*\) live at stop/\1/p' | tail -1)
		echo "the server had $live live connection(s) at stop; its CM sent $((tx1 - tx0)) DREQs"
		[ "$live" = 5 ] && [ $((tx1 - tx0)) -ge 5 ]
	}
	rcm_expect "server unloaded with 5 live connections: its CM sends the DREQs" unload_live

	# The CM module itself cannot go while a consumer is linked to it.
	cm_busy() {
		server > /dev/null || return 1
		! peer_run "rmmod $theirs" && peer_run "grep -q '^$theirs ' /proc/modules"
	}
	rcm_expect "rmmod $theirs with a consumer loaded is refused" cm_busy

	# rcm lets a departing device's DREPs arrive before ib_mad closes the
	# port (6.12's ib_mad_port_close completes MADs received then against
	# freed QPs), each DREQ for one more timeout (about 2.3 s here) and no
	# retries. The server's log says how long:
	# "rcm: rxe0: going: <n> DREQ(s) answered or timed out in <ms> ms".
	removal_lines() { peer_run dmesg | grep 'rcm: rxe0: going: [0-9]* DREQ'; }
	# removal_wait <lines before> <most DREQs> <fewest ms> <most ms>: one
	# more such line, for at most that many DREQs, within those times.
	removal_wait() {
		local lines line n ms
		lines=$(removal_lines)
		line=$(printf '%s\n' "$lines" | tail -1)
		echo "server: ${line:-no removal wait logged}"
		[ "$(printf '%s\n' "$lines" | grep -c .)" = $(($1 + 1)) ] || return 1
		n=$(printf '%s\n' "$line" | sed -n 's/.*going: \([0-9]*\) DREQ.*/\1/p')
		ms=$(printf '%s\n' "$line" | sed -n 's/.* in \([0-9]*\) ms$/\1/p')
		[ -n "$n" ] && [ "$n" -le "$2" ] && [ -n "$ms" ] && [ "$ms" -ge "$3" ] &&
			[ "$ms" -le "$4" ]
	}

	# Removing the server's RDMA device with live connections: the sample's
	# ib_client removal tears them down, the CM drops the device (rcm once
	# the DREPs to the DREQs still unanswered then arrived: any of the 3).
	link_delete_live() { # <conns> <fewest ms> [sample parameters...]
		local rc conns=$1 fewest=$2 before
		shift 2
		server > /dev/null || return 1
		before=$(removal_lines | grep -c .)
		client_during "$conns" 'rdma link delete rxe0' "$@"
		rc=$?
		peer_run 'rmmod rcm_test_conn; rdma link add rxe0 type rxe netdev eth0' || return 1
		[ $rc = 0 ] || return 1
		[ "$theirs" != rcm ] || removal_wait "$before" "$conns" "$fewest" 8000
	}
	rcm_expect "rdma link delete on the server with 3 live connections" link_delete_live 3 0

	# A client that answers 15 s late holds the removal one DREQ timeout
	# (about 2 s), not 15 s, nor the 37 s of 15 retries; and the removal
	# does wait for it.
	if [ "$theirs" = rcm ]; then
		rcm_expect "rdma link delete on the server, the client's DREP 15 s late: one DREQ timeout" \
			link_delete_live 1 1000 drep_delay_ms=15000
	else
		rcm_skip "the removal wait is rcm's (the C CM does not wait)"
	fi

	rcm_step peer_run 'rmmod rcm_test_conn' > /dev/null 2>&1
}
