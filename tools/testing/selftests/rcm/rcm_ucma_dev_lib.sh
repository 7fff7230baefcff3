#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm's own /dev/infiniband/rdma_cm (CM mode "ucma": rcm.ucma=1, the
# in-tree rdma_ucm blocked): unmodified librdmacm and the rdma-core tools
# on rcm alone, both ways against the peer, whose mode the test's header
# names.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_siw_lib.sh"

# The device librdmacm opens is rcm's: no rdma_ucm module, the misc
# device answers ABI 4, and ib_core's chardev query names it.
device_is_rcm() {
	[ ! -d /sys/module/rdma_ucm ] || { echo "rdma_ucm is loaded"; return 1; }
	[ -c /dev/infiniband/rdma_cm ] || { echo "no /dev/infiniband/rdma_cm"; return 1; }
	[ "$(cat /sys/class/misc/rdma_cm/abi_version)" = 4 ] || return 1
	grep -q '^1$' /sys/module/rcm/parameters/ucma 2> /dev/null ||
		grep -q '^Y$' /sys/module/rcm/parameters/ucma
}

# CM mode rcm becomes ucma in the same boot (the CI budget): the in-tree
# rdma_ucm and rcm unload (nothing else may hold rcm), rdma_ucm is blocked
# as CM mode ucma blocks it, and rcm comes back with its own device and
# its CM agent on rxe0. The caller sets RCM_MODE=ucma after it.
own_device_replaces_rdma_ucm() {
	local i
	rmmod rdma_ucm && rmmod rcm || {
		grep -E '^(rcm|rdma_ucm) ' /proc/modules
		ls /sys/module/rcm/holders
		return 1
	}
	echo "install rdma_ucm /bin/false" >> /etc/modprobe.d/rcm-mode.conf
	rcm_modprobe rcm ucma=1 || return 1
	sed -i 's/^RCM_MODE=.*/RCM_MODE=ucma/' /run/rcm.env
	for ((i = 0; i < 100; i++)); do
		[ -r /sys/class/infiniband/rxe0/ports/1/cm_rx_msgs/req ] && return 0
		sleep 0.1
	done
	echo "rcm has no CM agent on rxe0"
	return 1
}
switch_to_own_device() {
	rcm_expect "rdma_ucm and rcm unload; rcm.ucma=1 loads with its own rdma_cm device" \
		own_device_replaces_rdma_ucm
	RCM_MODE=ucma
}

# Every command written raw on one guest (rcm_ucma_cmds.c), here on rcm's
# device; on the C stack of a peer in mode c, the reference.
CMDS=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_ucma_cmds
commands_on_rcm() { "$CMDS" "$RCM_ADDR"; }
commands_on_c_peer() { peer_run "$CMDS $RCM_PEER"; }

# The abuse campaign (rcm_ucma_abuse.c): named races, then 1,000,000
# random commands (200,000 in make test) from 4 threads on shared files
# and ids; the seed is printed (replay: rcm_ucma_abuse <seed> <commands>
# 4 <self> <peer>). The
# final log and kmemleak checks judge it; the device must serve after.
# Its seed and summary line (time, longest call) go to the test's output
# whatever the result.
ABUSE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_ucma_abuse
ABUSE_SUMMARY=/tmp/rcm_ucma_abuse.summary
ABUSE_COMMANDS=$(rcm_repeats 1000000 200000)
abuse_campaign() {
	local seed=${RCM_ABUSE_SEED:-${RCM_CAMPAIGN_SEED:-$(date +%s)}} out
	echo "abuse seed $seed ($ABUSE_COMMANDS commands)"
	out=$(timeout 900 "$ABUSE" "$seed" "$ABUSE_COMMANDS" 4 "$RCM_ADDR" "$RCM_PEER" 2>&1)
	local rc=$?
	echo "abuse (seed $seed): $(printf '%s\n' "$out" | tail -1)" > "$ABUSE_SUMMARY"
	# A hang (status 3) ends with the hung thread's kernel stack and each
	# thread's call: shown whole.
	printf '%s\n' "$out" | tail -"$([ $rc = 3 ] && echo 30 || echo 5)"
	# A signal (status over 128): the tool's own line names the thread, its
	# call and the address; the kernel's names the instruction.
	[ $rc -gt 128 ] && dmesg | grep -E "rcm_ucma_abuse.*(segfault|general protection|trap)" |
		tail -3
	[ $rc = 0 ] || { echo "the campaign ended with status $rc (seed $seed)"; return 1; }
	# Nothing of it is left: no id in resource tracking.
	[ "$(rdma res show cm_id | grep -c .)" = 0 ] || { rdma res show cm_id | head; return 1; }
	dmesg | grep -E "$RCM_SPLAT_RE" && { echo "seed $seed"; return 1; }
	return 0
}

# The rest of the rdma-core tools in one direction; make test-full adds
# ucmatose with 100 connections on one channel and mckey's send-only
# sender, and cmtime sets up 1,000 connections instead of 100 (the CI
# budget).
more_tools() {
	check_rping_own_qp "$1"
	rcm_full && check_ucmatose_many "$1"
	check_ucmatose_options "$1"
	check_rsocket "$1" rstream
	check_rsocket "$1" riostream
	check_rdma_server "$1"
	rcm_full && check_mckey "$1" send-only
	check_cmtime "$1" "$(rcm_repeats 1000 100)"
}

# Which directions get more_tools: rcm to rcm this guest's clients in
# make test and both in make test-full; against the C stack make test-full
# only (the CI budget).
more_tools_dirs() {
	if rcm_full; then
		echo to_peer from_peer
	elif [ "$1" != c ]; then
		echo to_peer
	fi
}

# Which directions the basic tools run: both against the C stack (rcm
# as client and as server); rcm to rcm only in make test-full, since
# make test runs them both ways against the C stack and the other tools
# rcm to rcm (the CI budget).
pair_dirs() {
	if rcm_full || [ "$1" = c ]; then
		echo to_peer from_peer
	fi
}

# ucma_dev_scenarios <peer mode>: on rxe0.
ucma_dev_scenarios() {
	local peer_mode=$1 dir
	[ "$peer_mode" = c ] && rcm_step peer_run 'modprobe rdma_ucm' > /dev/null

	rcm_expect "librdmacm opens rcm's rdma_cm device (ABI 4, no rdma_ucm module)" device_is_rcm
	[ "$peer_mode" = c ] &&
		rcm_expect "every command raw, on the peer's C stack (the reference)" commands_on_c_peer
	rcm_expect "every command raw, on rcm's device: 6.12's answers and events" commands_on_rcm
	for dir in $(pair_dirs "$peer_mode"); do
		check_rping "$dir"
		check_ucmatose "$dir" 2
		check_udaddy "$dir"
		check_mckey "$dir"
	done
	check_reject_no_listener
	for dir in $(more_tools_dirs "$peer_mode"); do
		more_tools "$dir"
	done
	if [ "$peer_mode" != c ]; then
		check_rping_ipv6 global
		check_rping_ipv6 link-local
		check_rping_netns
		rcm_step rm -f "$ABUSE_SUMMARY"
		rcm_expect "abuse: named races and $ABUSE_COMMANDS random commands from 4 threads" \
			abuse_campaign
		rcm_step rcm_log_file "$ABUSE_SUMMARY"
		check_rping to_peer
	fi
}

# ucma_dev_siw <peer mode>: last, as it takes rxe0 away: soft-iWARP,
# rcm's device over iw_cm.
ucma_dev_siw() {
	local dir
	rcm_expect "both guests: siw0 (soft-iWARP) instead of rxe0" siw_only
	for dir in $(pair_dirs "$1"); do
		check_rping "$dir"
	done
}
