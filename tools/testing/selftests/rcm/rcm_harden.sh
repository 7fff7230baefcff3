#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=ucma,c devices=2 timeout=1500
#
# Issue 27's hardening checks of rcm's /dev/infiniband/rdma_cm, in one boot
# of two guests with two RDMA devices each: rxe0 on eth0 (10.0.0.x) and
# rxe1 on eth1 (10.0.1.x), each pair on a wire of its own. This guest runs
# CM mode ucma (rcm.ko alone, its own rdma_cm device); the peer runs the
# in-tree C ib_cm/rdma_cm/rdma_ucm, the reference. The commands are written
# raw by rcm_harden (rcm_harden.c):
#  - a refused bind leaves the id without a device (on both stacks, their
#    answers compared), resource tracking and the kernel log stay clean;
#  - rxe1 removed while an id whose bind was refused exists, that id
#    destroyed afterwards;
#  - rxe1 removed and added back 20 times (5 in make test;
#    RCM_HARDEN_ROUNDS) while four
#    threads create, bind, resolve and listen on it and close files with
#    live ids, and rping connections and NVMe-oF I/O over rxe0 keep moving
#    data; then rxe1 serves again;
#  - rdma_rxe unloaded while threads churn ids on both devices;
#  - one user's GET_EVENT blocked on a userfaultfd page stalls no other
#    user's commands or connections;
#  - rdma_destroy_qp raced against rdma_cm's own QP moves;
#  - one user's multicast join waiting for rtnl stalls no other user's
#    commands;
#  - the abuse campaign on rxe1's addresses while rxe1 comes and goes;
#  - a user flapping neighbours in its own namespace beside 10,000 ids;
#  - a passive id is owned in resource tracking as its listener is;
#  - a user's ids are charged to its memory cgroup.
# First, issue 30's per-id CM response timeout and retry count against a
# silent RoCE peer, rcm beside the peer's C CM (rcm_cm_response_lib.sh).
# Every point also checks the kernel logs since it began (KASAN, lockdep,
# WARN, hung tasks); the final points check them whole, and kmemleak.
. "$(dirname "$(readlink -f "$0")")/rcm_tools_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_nvme_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_cm_response_lib.sh"

HARDEN=$RCM_TEST_DIR/rcm_harden	# the same path on the peer
ADDR1=${RCM_ADDR1:-10.0.1.1}
PEER1=${RCM_PEER1:-10.0.1.2}
ROUNDS=${RCM_HARDEN_ROUNDS:-$(rcm_repeats 20 5)}
CHURN_SECONDS=8
STALL_HOLD=25
BIND_PORT=7610
HOLD_PORT=7620
NOTES=/tmp/harden.notes

# ---- helpers ----

# The kernel logs of both guests are marked when a point begins; a point
# then checks what they logged since (or all of it if the mark is gone).
LOG_MARK=""
mark_logs() {
	LOG_MARK="rcm_harden: point $1 begins at $(date +%s)"
	echo "$LOG_MARK" > /dev/kmsg
	peer_run "echo '$LOG_MARK' > /dev/kmsg" > /dev/null
}
since_mark() {
	awk -v m="$LOG_MARK" '{ l[NR] = $0 } index($0, m) { s = NR } END { for (i = s + 1; i <= NR; i++) print l[i] }'
}
logs_clean_since_mark() {
	local report
	report=$({
		dmesg | since_mark | rcm_find_splats
		peer_run dmesg | since_mark | rcm_find_splats | sed 's/^/peer: /'
	})
	[ -z "$report" ] && return 0
	echo "kernel log reports since the point began:"
	printf '%s\n' "$report" | head -35
	return 1
}

# A line for the test's output also when the point passes.
note() {
	echo "$*"
	echo "$*" >> "$NOTES"
}

# wait_bounded <pid> <seconds>: the background job's status, 124 if it
# still runs after <seconds>.
wait_bounded() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2> /dev/null || { wait "$1"; return; }
		sleep 0.1
	done
	return 124
}

# wait_line <file> <line> <seconds>
wait_line() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -qx "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# Removes rxe1 in the background and waits up to $1 s: REMOVAL_MS is how
# long it took; a removal still running is left in REMOVAL_PID. Every
# background job here writes to a file: rcm_expect reads the point's
# output until no process holds it.
remove_rxe1() {
	local start rc
	start=$(now_ms)
	rdma link delete rxe1 > /tmp/harden.delete.out 2>&1 &
	REMOVAL_PID=$!
	wait_bounded "$REMOVAL_PID" "$1"
	rc=$?
	REMOVAL_MS=$(($(now_ms) - start))
	if [ $rc = 124 ]; then
		echo "rdma link delete rxe1 still runs after $1 s"
		return 1
	fi
	REMOVAL_PID=""
	[ $rc = 0 ] || { echo "rdma link delete rxe1 failed ($rc):"; cat /tmp/harden.delete.out; }
	return $rc
}

# rxe1 back on eth1 (unless it is still there), its port ACTIVE within 30 s.
add_rxe1() {
	local i
	if ! rdma link show rxe1/1 > /dev/null 2>&1; then
		rdma link add rxe1 type rxe netdev eth1 || { echo "rdma link add rxe1 failed"; return 1; }
	fi
	for ((i = 0; i < 300; i++)); do
		rdma link show rxe1/1 2> /dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
	done
	echo "rxe1 is not ACTIVE 30 s after rdma link add:"
	rdma link show
	return 1
}

# rping clients to $1, one a second until file $2 exists: a line "ok <n>"
# or "FAIL <n>" (and the end of its output) per client. The pause leaves
# the guest's two CPUs to the removals (back to back, the loops doubled a
# round's time).
rping_loop() {
	local n=0 out rc pings
	while [ ! -e "$2" ]; do
		n=$((n + 1))
		out=$(timeout 60 rping -c -a "$1" -C 20 -S 64 -v 2>&1)
		rc=$?
		pings=$(printf '%s\n' "$out" | grep -c '^ping data: rdma-ping-')
		if [ $rc = 0 ] && [ "$pings" = 20 ]; then
			echo "ok $n"
		else
			echo "FAIL $n: status $rc, $pings pings of 20"
			printf '%s\n' "$out" | tail -5
		fi
		sleep 1
	done
}

# ---- the points ----

has_rxe0_rxe1() { # the `rdma link show` of a guest on stdin
	local links
	links=$(cat)
	printf '%s\n' "$links"
	printf '%s\n' "$links" | grep -q 'rxe0/1 state ACTIVE' &&
		printf '%s\n' "$links" | grep -q 'rxe1/1 state ACTIVE'
}

fabric() {
	echo "this guest:"
	rdma link show | has_rxe0_rxe1 || return 1
	echo "peer:"
	peer_run 'rdma link show' | has_rxe0_rxe1 || return 1
	ip route get "$PEER1" | grep -q 'dev eth1' || { ip route get "$PEER1"; return 1; }
	timeout 30 ping -c 3 "$PEER1"
}

# The C stack's answers (rdma_ucm on the peer), kept for the next point.
C_BIND=/tmp/harden.bind.c
refused_bind_on_c() {
	local rc
	rm -f "$C_BIND"
	peer_run 'modprobe rdma_ucm' || { echo "modprobe rdma_ucm on the peer failed"; return 1; }
	peer_run "$HARDEN bind-refused --expect-no-device $RCM_PEER $PEER1 $BIND_PORT $ADDR1" > "$C_BIND"
	rc=$?
	grep -v -e '^ok:' -e '^cmp:' "$C_BIND"	# what QUERY reported, and failures
	return $rc
}

refused_bind_on_rcm() {
	local rc=0 ids
	if [ -d /sys/module/rdma_ucm ] || [ ! -c /dev/infiniband/rdma_cm ]; then
		echo "this guest's rdma_cm device is not rcm's"
		return 1
	fi
	"$HARDEN" bind-refused --expect-no-device "$RCM_ADDR" "$ADDR1" "$BIND_PORT" "$PEER1" \
		> /tmp/harden.bind.rcm 2>&1 || rc=1
	grep -v -e '^ok:' -e '^cmp:' /tmp/harden.bind.rcm
	grep '^cmp:' "$C_BIND" > /tmp/harden.cmp.c
	grep '^cmp:' /tmp/harden.bind.rcm > /tmp/harden.cmp.rcm
	if [ ! -s /tmp/harden.cmp.c ]; then
		echo "no answers of the C stack to compare with"
		rc=1
	elif ! cmp -s /tmp/harden.cmp.c /tmp/harden.cmp.rcm; then
		echo "the answers differ from the C stack's (- C, + rcm):"
		diff -u /tmp/harden.cmp.c /tmp/harden.cmp.rcm
		rc=1
	fi
	ids=$(rdma res show cm_id 2>&1) || { echo "rdma res show cm_id failed: $ids"; rc=1; }
	[ -z "$ids" ] || { echo "ids left in resource tracking:"; echo "$ids"; rc=1; }
	logs_clean_since_mark || rc=1
	return $rc
}

# hold-refused keeps an id on rxe1 and one whose bind was refused there
# while rxe1 is removed, then destroys both.
refused_bind_then_removal() {
	local fifo=/tmp/harden.fifo out=/tmp/harden.hold.out pid rc=0
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	"$HARDEN" hold-refused "$ADDR1" "$HOLD_PORT" "$fifo" > "$out" 2>&1 &
	pid=$!
	if ! wait_line "$out" ready 30; then
		echo "hold-refused is not ready:"
		cat "$out"
		kill "$pid" 2> /dev/null
		return 1
	fi
	remove_rxe1 60 || rc=1
	note "rdma link delete rxe1 beside a refused bind: $REMOVAL_MS ms"
	timeout 10 sh -c "echo go > $fifo" || { echo "hold-refused did not read the fifo"; rc=1; }
	wait_bounded "$pid" 60 || { echo "hold-refused ended with status $? (124: still running)"; rc=1; }
	cat "$out"
	if [ -n "$REMOVAL_PID" ]; then
		# It waited for the ids; they are destroyed now.
		wait_bounded "$REMOVAL_PID" 60 || { echo "rdma link delete rxe1 never ended"; return 1; }
		echo "rdma link delete rxe1 ended once the ids were destroyed"
	fi
	add_rxe1 || rc=1
	logs_clean_since_mark || rc=1
	return $rc
}

# NVMe-oF over rxe0 (this guest the host through rcm, the peer's C
# nvmet-rdma the target): 256 KiB written and read back in a loop until
# file $1 exists, one a second, a line "ok <n>" or "FAIL <n>" per round.
nvme_io_loop() {
	local n=0
	while [ ! -e "$1" ]; do
		n=$((n + 1))
		if nvme_pattern_round_trip 256 > /tmp/harden.nvme.round 2>&1; then
			echo "ok $n"
		else
			echo "FAIL $n: $(tail -3 /tmp/harden.nvme.round)"
		fi
		sleep 1
	done
}

# Counts a loop's log ($1, named $2): fails unless it ran and no round failed.
loop_clean() {
	LOOP_OK=$(grep -c '^ok' "$1")
	LOOP_FAILED=$(grep -c '^FAIL' "$1")
	[ "$LOOP_FAILED" = 0 ] && [ "$LOOP_OK" != 0 ] && return 0
	echo "$2: $LOOP_OK rounds ok, $LOOP_FAILED failed"
	grep -A5 '^FAIL' "$1" | tail -20
	return 1
}

removal_under_fire() {
	local r rc=0 max=0 max_add=0 max_wait=0 pid loop nvme churn_rc pings t added waited start
	local stop=/tmp/harden.rping.stop log=/tmp/harden.rping.log nlog=/tmp/harden.nvme.log
	peer_start fire "rping -s -P -a $RCM_PEER" > /dev/null
	rcm_retry 20 peer_listening || { echo "the peer's rping server does not listen"; return 1; }
	rcm_modprobe nvme-rdma || { echo "nvme-rdma does not load"; return 1; }
	nvme_target_up > /dev/null || { echo "the peer's NVMe-oF target is not up"; return 1; }
	nvme_connect_live 2 || { echo "nvme connect over rxe0 failed"; nvme_target_down > /dev/null; return 1; }
	rm -f "$stop"
	rping_loop "$RCM_PEER" "$stop" > "$log" 2>&1 &
	loop=$!
	nvme_io_loop "$stop" > "$nlog" 2>&1 &
	nvme=$!
	start=$(now_ms)
	for ((r = 1; r <= ROUNDS; r++)); do
		"$HARDEN" churn "$ADDR1" "$PEER1" "$CHURN_SECONDS" 4 > /tmp/harden.churn.$r 2>&1 &
		pid=$!
		sleep 1
		remove_rxe1 60 || rc=1
		[ "$REMOVAL_MS" -gt "$max" ] && max=$REMOVAL_MS
		t=$(now_ms)
		add_rxe1 || rc=1
		added=$(($(now_ms) - t))
		[ "$added" -gt "$max_add" ] && max_add=$added
		wait_bounded "$pid" $((CHURN_SECONDS + 90))
		churn_rc=$?
		waited=$(($(now_ms) - t - added))
		[ "$waited" -gt "$max_wait" ] && max_wait=$waited
		echo "round $r: rdma link delete rxe1 under fire took $REMOVAL_MS ms, adding it back $added ms, the churn ended $waited ms later"
		if [ $churn_rc != 0 ]; then
			echo "round $r: churn ended with status $churn_rc (124: still running):"
			tail -25 /tmp/harden.churn.$r
			rc=1
		fi
		[ $rc = 0 ] || break
	done
	grep -E '^(churn|event|error)' /tmp/harden.churn.$((r > ROUNDS ? ROUNDS : r))
	touch "$stop"
	wait_bounded "$loop" 90 || { echo "the rping loop did not end"; rc=1; }
	wait_bounded "$nvme" 90 || { echo "the NVMe-oF loop did not end"; rc=1; }
	peer_run 'pkill rping' > /dev/null
	peer_wait fire 10 > /dev/null
	loop_clean "$log" "rping over rxe0" || rc=1
	pings=$LOOP_OK
	loop_clean "$nlog" "NVMe-oF I/O over rxe0" || rc=1
	nvme_disconnect_all || rc=1
	nvme_target_down > /dev/null
	r=$((r > ROUNDS ? ROUNDS : r))
	note "$r rounds, $((($(now_ms) - start) / r)) ms each; the longest removal took $max ms, adding rxe1 back $max_add ms, the churn ending after that $max_wait ms; over rxe0 meanwhile: rping $pings clients ok, NVMe-oF $LOOP_OK rounds of 256 KiB ok"
	logs_clean_since_mark || rc=1
	return $rc
}

# rdma_rxe unloaded (both devices go at once) while four threads create,
# bind, resolve and listen on each device: the unload ends in bounded
# time, no id is left, and with the module and devices back rping serves
# on both wires.
rxe_unload_under_fire() {
	local pid0 pid1 start ms rc=0 i
	"$HARDEN" churn "$RCM_ADDR" "$RCM_PEER" "$CHURN_SECONDS" 4 > /tmp/harden.unload.churn0 2>&1 &
	pid0=$!
	"$HARDEN" churn "$ADDR1" "$PEER1" "$CHURN_SECONDS" 4 > /tmp/harden.unload.churn1 2>&1 &
	pid1=$!
	sleep 2
	start=$(now_ms)
	timeout 120 rmmod rdma_rxe || { echo "rmmod rdma_rxe failed or did not end within 120 s"; rc=1; }
	ms=$(($(now_ms) - start))
	wait_bounded "$pid0" $((CHURN_SECONDS + 90)) ||
		{ echo "churn on rxe0 ended with status $?"; tail -25 /tmp/harden.unload.churn0; rc=1; }
	wait_bounded "$pid1" $((CHURN_SECONDS + 90)) ||
		{ echo "churn on rxe1 ended with status $?"; tail -25 /tmp/harden.unload.churn1; rc=1; }
	grep -E '^churn' /tmp/harden.unload.churn0 /tmp/harden.unload.churn1
	note "rmmod rdma_rxe under fire on both devices: $ms ms"
	[ -z "$(rdma res show cm_id 2>&1)" ] || { echo "ids left:"; rdma res show cm_id | head; rc=1; }
	modprobe rdma_rxe || { echo "modprobe rdma_rxe failed"; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || { echo "rdma link add rxe0 failed"; rc=1; }
	add_rxe1 || rc=1
	for ((i = 0; i < 300; i++)); do
		rdma link show rxe0/1 2> /dev/null | grep -q 'state ACTIVE' && break
		sleep 0.1
	done
	run_pair to_peer unload0 "rping -s -a @SERVER@ -C 5 -v" "rping -c -a @SERVER@ -C 5 -v" ||
		{ pair_failed; rc=1; }
	run_pair to_peer unload1 "rping -s -a $PEER1 -C 5 -v" "rping -c -a $PEER1 -C 5 -v" ||
		{ pair_failed; rc=1; }
	logs_clean_since_mark || rc=1
	return $rc
}

second_device_serves() {
	local n
	run_pair to_peer rping1 "rping -s -a $PEER1 -C 10 -v" "rping -c -a $PEER1 -C 10 -v" ||
		{ pair_failed; return 1; }
	n=$(printf '%s\n' "$PAIR_CLIENT_OUT" | grep -c '^ping data: rdma-ping-')
	[ "$n" = 10 ] || { echo "$n pings of 10"; pair_failed; return 1; }
}

# uffd-stall holds a fault under GET_EVENT for $STALL_HOLD s; meanwhile
# another file's commands and an rping connection must run normally.
get_event_stall() {
	local out=/tmp/harden.uffd.out pid rc=0 start
	peer_start stall "rping -s -a $RCM_PEER -C 3 -v" > /dev/null
	"$HARDEN" uffd-stall "$RCM_ADDR" "$RCM_PEER" "$STALL_HOLD" > "$out" 2>&1 &
	pid=$!
	if ! wait_line "$out" stalled 30; then
		echo "uffd-stall did not stall:"
		cat "$out"
		kill "$pid" 2> /dev/null
		peer_run 'pkill rping' > /dev/null
		peer_wait stall 10 > /dev/null
		return 1
	fi
	timeout 120 "$HARDEN" cmds "$RCM_ADDR" 100 10000 || rc=1
	rcm_retry 20 peer_listening || { echo "the peer's rping server does not listen"; rc=1; }
	start=$(now_ms)
	timeout 20 rping -c -a "$RCM_PEER" -C 3 -v ||
		{ echo "rping failed beside the faulting GET_EVENT"; rc=1; }
	note "rping -C 3 beside the faulting GET_EVENT: $(($(now_ms) - start)) ms"
	kill -0 "$pid" 2> /dev/null ||
		note "(uffd-stall had already served its fault when rping ended)"
	wait_bounded "$pid" $((STALL_HOLD + 60)) ||
		{ echo "uffd-stall ended with status $? (124: still running)"; rc=1; }
	cat "$out"
	[ $rc = 0 ] || peer_run 'pkill rping' > /dev/null
	peer_wait stall 30 > /dev/null
	logs_clean_since_mark || rc=1
	return $rc
}

# A user's ids are charged to its memory cgroup (so a container's limit
# stops it, not the host's consumers): 5,000 ids raise the cgroup's
# memory.current by at least 1 KiB each over 10 ids' (without accounting
# they raise it by next to nothing: the memory is the kernel's).
CG=/sys/fs/cgroup
# fill_in_cgroup <cgroup> <ids>: memory.current with the ids held.
fill_in_cgroup() {
	local fifo=/tmp/harden.fill.fifo out=/tmp/harden.fill.$1 pid i cur
	mkdir -p "$CG/$1" || return 1
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	sh -c "echo \$\$ > $CG/$1/cgroup.procs && exec $HARDEN fill $2 $fifo" > "$out" 2>&1 &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		grep -qx filled "$out" && break
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	cur=$(cat "$CG/$1/memory.current")
	grep '^fill: [0-9]* ids, then' "$out" >&2
	timeout 10 sh -c "echo go > $fifo" 2> /dev/null
	wait_bounded "$pid" 60 > /dev/null
	rmdir "$CG/$1"
	grep -q "^fill: $2 ids, then the limit" "$out" || { echo "fill: $(cat "$out")" >&2; return 1; }
	echo "$cur"
}

ids_in_a_memory_cgroup() {
	local few many delta rc=0
	if [ ! -f $CG/cgroup.controllers ]; then
		mount -t cgroup2 none $CG || { echo "cannot mount cgroup2"; return 1; }
	fi
	echo +memory > $CG/cgroup.subtree_control || return 1
	few=$(fill_in_cgroup rcm_few 10) || return 1
	many=$(fill_in_cgroup rcm_many 5000) || return 1
	delta=$((many - few))
	note "memory.current with 5,000 ids: $many bytes; with 10: $few; $((delta / 5000)) bytes per id charged"
	[ "$delta" -ge $((5000 * 1024)) ] || { echo "5,000 ids charged only $delta bytes to their cgroup"; rc=1; }
	logs_clean_since_mark || rc=1
	return $rc
}

# The abuse campaign (rcm_ucma_abuse.c: random commands from 4 threads,
# response buffers that fault slowly among them) on the second wire's
# addresses while rxe1 is removed and added back every 2 s: the kernel
# logs stay clean, no id is left, every removal ends in bounded time.
ABUSE=$RCM_TEST_DIR/rcm_ucma_abuse
ABUSE_COMMANDS=$(rcm_repeats 200000 50000)
abuse_across_removals() {
	local seed=${RCM_ABUSE_SEED:-${RCM_CAMPAIGN_SEED:-$(date +%s)}} pid r=0 rc=0 max=0 status=0
	local out=/tmp/harden.abuse.out
	echo "abuse seed $seed (replay: rcm_ucma_abuse $seed $ABUSE_COMMANDS 4 $ADDR1 $PEER1)"
	timeout 900 "$ABUSE" "$seed" "$ABUSE_COMMANDS" 4 "$ADDR1" "$PEER1" > "$out" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		sleep 2
		remove_rxe1 60 || { rc=1; break; }
		[ "$REMOVAL_MS" -gt "$max" ] && max=$REMOVAL_MS
		add_rxe1 || { rc=1; break; }
		r=$((r + 1))
	done
	wait "$pid" || { status=$?; echo "the campaign ended with status $status (seed $seed)"; rc=1; }
	# A hang (status 3) ends with the hung thread's kernel stack and each
	# thread's call: shown whole.
	tail -"$([ $status = 3 ] && echo 30 || echo 4)" "$out"
	add_rxe1 || rc=1
	note "abuse on rxe1 (seed $seed): $r removals of rxe1 meanwhile, the longest $max ms"
	note "abuse: $(tail -1 "$out")"
	[ "$(rdma res show cm_id | grep -c .)" = 0 ] || { echo "ids left:"; rdma res show cm_id | head; rc=1; }
	logs_clean_since_mark || rc=1
	return $rc
}

# A user flapping neighbours in a network namespace of its own (200
# neighbour entries changing hardware address in a loop: every change
# reaches rcm's notifier, whatever the namespace) beside 10,000 ids of
# another user: a third user's commands and rping still take their normal
# time. The notifier coalesces into a bounded set, and a change reaches
# only the ids watching that neighbour (an index), never a walk of every
# id under rdma_cm's lock.
neighbour_flood() {
	local fifo=/tmp/harden.flood.fifo out=/tmp/harden.flood.fill batch=/tmp/harden.flood.batch
	local stop=/tmp/harden.flood.stop
	local fill flood rc=0 i start
	ip netns add rcm_flap || return 1
	ip link add rcm_fl0 type veth peer name rcm_fl1 netns rcm_flap || return 1
	ip -n rcm_flap link set rcm_fl1 up
	ip link set rcm_fl0 up
	: > "$batch"
	for ((i = 0; i < 200; i++)); do
		echo "neigh replace 10.9.0.$((i + 1)) lladdr 02:00:00:00:00:01 dev rcm_fl1 nud permanent"
		echo "neigh replace 10.9.0.$((i + 1)) lladdr 02:00:00:00:00:02 dev rcm_fl1 nud permanent"
	done > "$batch"
	rm -f "$fifo"
	mkfifo "$fifo"
	"$HARDEN" fill 10000 "$fifo" > "$out" 2>&1 &
	fill=$!
	wait_line "$out" filled 300 || { echo "fill did not finish"; rc=1; }
	# The flood lasts until the checks end (at most 120 s): a slow guest's
	# rping must still run beside it.
	rm -f "$stop"
	(end=$((SECONDS + 120)); while [ ! -e "$stop" ] && [ $SECONDS -lt $end ]; do
		ip -n rcm_flap -batch "$batch"; done) > /dev/null 2>&1 &
	flood=$!
	sleep 2
	timeout 120 "$HARDEN" cmds "$RCM_ADDR" 100 10000 || rc=1
	start=$(now_ms)
	run_pair to_peer flood "rping -s -a @SERVER@ -C 10 -v" "rping -c -a @SERVER@ -C 10 -v" ||
		{ pair_failed; rc=1; }
	note "rping -C 10 beside the neighbour flood and 10,000 ids: $(($(now_ms) - start)) ms"
	kill -0 "$flood" 2> /dev/null || { echo "the flood ended before the checks did"; rc=1; }
	touch "$stop"
	wait "$flood"
	timeout 10 sh -c "echo go > $fifo" 2> /dev/null
	wait_bounded "$fill" 120 > /dev/null
	ip netns del rcm_flap
	ip link del rcm_fl0 2> /dev/null
	logs_clean_since_mark || rc=1
	return $rc
}

# A passive id is owned in resource tracking as its listener is (6.12):
# by the listening process, so that a container's tools see its
# connections, not by the kworker that delivered the request.
passive_ids_owned_by_listener() {
	local rows rc=0 i pid out
	rping -s -a "$RCM_ADDR" -C 200 -S 64 > /tmp/harden.owner.out 2>&1 &
	pid=$!
	rcm_retry 20 sh -c "rdma res show cm_id | grep -q 'state LISTEN.*comm rping'" ||
		{ echo "no rping listener"; kill $pid; return 1; }
	peer_start owner "rping -c -a $RCM_ADDR -C 200 -S 64 -d > /dev/null"
	for ((i = 0; i < 100; i++)); do
		rows=$(rdma res show cm_id | grep -v 'state LISTEN' | grep "src-addr $RCM_ADDR")
		[ -n "$rows" ] && break
		sleep 0.2
	done
	printf '%s\n' "$rows"
	[ -n "$rows" ] || { echo "no passive id listed"; rc=1; }
	printf '%s\n' "$rows" | grep -v "pid $pid comm rping" | grep . &&
		{ echo "a passive id is not the listener's (pid $pid, rping)"; rc=1; }
	out=$(peer_wait owner 60) || { echo "the peer's rping failed:"; printf '%s\n' "$out" | tail -8; rc=1; }
	kill $pid 2> /dev/null
	wait $pid 2> /dev/null
	logs_clean_since_mark || rc=1
	return $rc
}

# rdma_destroy_qp raced against the moves rdma_cm makes on its own (a
# REJ's and a disconnect's to ERROR, a REP's to RTR and RTS), by
# rcm_test_qp_race.ko over loopback on rxe0: on the peer's C rdma_cm first
# (the reference for what the module expects), then on rcm. Under KASAN a
# move on a destroyed QP is a report in the log.
QP_RACE=/lib/modules/$(uname -r)/extra/rcm_test_qp_race.ko
QP_RACE_ROUNDS=100
qp_destroy_races() {
	local out rc=0
	out=$(peer_run "modprobe rdma_cm && insmod $QP_RACE local=$RCM_PEER rounds=$QP_RACE_ROUNDS
		rc=\$?; rmmod rcm_test_qp_race; dmesg | grep 'rcm_test_qp_race:' | tail -8; exit \$rc") ||
		{ echo "on the peer's C rdma_cm (the reference):"; printf '%s\n' "$out"; rc=1; }
	printf '%s\n' "$out" | grep -o 'qp race: .*' | sed 's/^/C: /'
	insmod "$QP_RACE" local="$RCM_ADDR" rounds=$QP_RACE_ROUNDS || rc=1
	rmmod rcm_test_qp_race 2> /dev/null
	dmesg | since_mark | grep 'rcm_test_qp_race:' | grep -E 'FAIL' | tail -10
	dmesg | since_mark | grep -o 'qp race: .*' | while read -r line; do note "rcm: $line"; done
	logs_clean_since_mark || rc=1
	return $rc
}

# One user's IGMP join waiting for rtnl (a test module holds it 10 s, as a
# busy network configuration can) makes no other user's rdma_cm calls
# wait: the join is applied once rdma_cm's lock is released.
RTNL_HOLD=/lib/modules/$(uname -r)/extra/rcm_test_rtnl_hold.ko
RTNL_SECONDS=10
join_beside_busy_rtnl() {
	local hold join rc=0 start ms
	insmod "$RTNL_HOLD" seconds=$RTNL_SECONDS > /tmp/harden.rtnl.out 2>&1 &
	hold=$!
	rcm_retry 10 sh -c "dmesg | grep -q 'rcm_test_rtnl_hold: holding rtnl'" ||
		{ echo "the module does not hold rtnl"; cat /tmp/harden.rtnl.out; return 1; }
	"$HARDEN" join "$RCM_ADDR" 239.7.7.7 $((RTNL_SECONDS + 30)) > /tmp/harden.join.out 2>&1 &
	join=$!
	wait_line /tmp/harden.join.out joining 10 || { echo "join did not start"; rc=1; }
	sleep 1		# JOIN_MCAST now waits for rtnl
	start=$(now_ms)
	timeout 60 "$HARDEN" cmds "$RCM_ADDR" 100 3000 || rc=1
	ms=$(($(now_ms) - start))
	kill -0 "$hold" 2> /dev/null ||
		{ echo "rtnl was released before the commands ended ($ms ms): no measurement"; rc=1; }
	note "100 command rounds beside a JOIN_MCAST waiting for rtnl: $ms ms (rtnl held ${RTNL_SECONDS} s)"
	wait_bounded "$hold" 60 || { echo "insmod did not end"; rc=1; }
	rmmod rcm_test_rtnl_hold 2> /dev/null
	wait_bounded "$join" 90 || { echo "join ended with status $? (124: still running)"; rc=1; }
	cat /tmp/harden.join.out
	logs_clean_since_mark || rc=1
	return $rc
}

# ---- the test ----

POINTS=(
	"fabric|both guests: rxe0 and rxe1 ACTIVE; $PEER1 answers over the second wire"
	"${CM_RESPONSE_POINTS[@]}"
	"refused_bind_on_c|a refused bind on the peer's C stack (the reference): no device kept; a resolution after it"
	"refused_bind_on_rcm|a refused bind on rcm: no device kept, the C stack's answers; no id left in rdma res; logs clean"
	"refused_bind_then_removal|rxe1 removed beside an id whose bind was refused, the id destroyed after: bounded, logs clean"
	"removal_under_fire|rxe1 removed and added back $ROUNDS times under 4 threads of ids: each removal within 60 s, rping and NVMe-oF I/O over rxe0 unharmed, logs clean"
	"second_device_serves|rxe1 serves again: rping -C 10 to $PEER1"
	"rxe_unload_under_fire|rdma_rxe unloaded under 4 threads of ids on each device: bounded, no id left; both devices serve again"
	"get_event_stall|a GET_EVENT faulting on a userfaultfd page for ${STALL_HOLD} s stalls no other user's commands or rping"
	"qp_destroy_races|rdma_destroy_qp against rdma_cm's own QP moves (REJ, disconnects, REP), $QP_RACE_ROUNDS rounds on the C stack and on rcm: logs clean"
	"join_beside_busy_rtnl|a JOIN_MCAST waiting for rtnl (held ${RTNL_SECONDS} s) stalls no other user's commands"
	"abuse_across_removals|the abuse campaign ($ABUSE_COMMANDS commands, slow-faulting buffers) on rxe1 while it is removed and added back every 2 s: logs clean, no id left"
	"neighbour_flood|a user flapping 200 neighbours in its own namespace beside 10,000 ids: another user's commands and rping take their normal time"
	"passive_ids_owned_by_listener|a passive id is owned in rdma res as its listener is (the listening process)"
	"ids_in_a_memory_cgroup|a user's ids are charged to its memory cgroup: at least 1 KiB each"
)

# RCM_ONLY=<point,...> (from the host's environment) runs those points
# after the fabric's, for a quick red or green; make test runs them all.
if [ -n "${RCM_ONLY:-}" ]; then
	kept=()
	for p in "${POINTS[@]}"; do
		[[ ",fabric,$RCM_ONLY," == *",${p%%|*},"* ]] && kept+=("$p")
	done
	POINTS=("${kept[@]}")
fi

harden() {
	local p
	for p in "${POINTS[@]}"; do
		rcm_step rm -f "$NOTES"
		rcm_step mark_logs "${p%%|*}"
		rcm_expect "${p#*|}" "${p%%|*}"
		rcm_step rcm_log_file "$NOTES"
	done
}
rcm_two_guests_run harden
