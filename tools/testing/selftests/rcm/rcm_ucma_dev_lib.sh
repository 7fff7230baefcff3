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

# Every command written raw on one guest (rcm_ucma_cmds.c), here on rcm's
# device; on the C stack of a peer in mode c, the reference.
CMDS=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_ucma_cmds
commands_on_rcm() { "$CMDS" "$RCM_ADDR"; }
commands_on_c_peer() { peer_run "$CMDS $RCM_PEER"; }

# The abuse campaign (rcm_ucma_abuse.c): named races, then 1,000,000
# random commands from 4 threads on shared files and ids; the seed is
# printed (replay: rcm_ucma_abuse <seed> 1000000 4 <self> <peer>). The
# final log and kmemleak checks judge it; the device must serve after.
ABUSE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_ucma_abuse
abuse_campaign() {
	local seed=${RCM_ABUSE_SEED:-$(date +%s)} out
	echo "abuse seed $seed"
	out=$(timeout 900 "$ABUSE" "$seed" 1000000 4 "$RCM_ADDR" "$RCM_PEER" 2>&1)
	local rc=$?
	printf '%s\n' "$out" | tail -5
	[ $rc = 0 ] || { echo "the campaign ended with status $rc (seed $seed)"; return 1; }
	# Nothing of it is left: no id in resource tracking.
	[ "$(rdma res show cm_id | grep -c .)" = 0 ] || { rdma res show cm_id | head; return 1; }
	dmesg | grep -E "$RCM_SPLAT_RE" && { echo "seed $seed"; return 1; }
	return 0
}

# The rest of the rdma-core tools in one direction (8 points): cmtime
# with 1,000 connections in make test-full, 100 in make test (the CI budget).
MORE_TOOLS_POINTS=8
more_tools() {
	check_rping_own_qp "$1"
	check_ucmatose_options "$1"
	check_rsockets "$1"
	check_rdma_server "$1"
	check_mckey "$1" send-only
	if rcm_full; then check_cmtime "$1" 1000; else check_cmtime "$1" 100; fi
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

# The test points of ucma_dev_scenarios <peer mode>.
ucma_dev_points() {
	local n=11 dirs
	dirs=$(more_tools_dirs "$1")
	n=$((n + MORE_TOOLS_POINTS * $(echo $dirs | wc -w)))
	[ "$1" = c ] && echo $((n + 1 + 3)) || echo $((n + 5 + 3))
}

# ucma_dev_scenarios <peer mode>
ucma_dev_scenarios() {
	local peer_mode=$1 dir
	[ "$peer_mode" = c ] && peer_run 'modprobe rdma_ucm' > /dev/null

	rcm_expect "librdmacm opens rcm's rdma_cm device (ABI 4, no rdma_ucm module)" device_is_rcm
	[ "$peer_mode" = c ] &&
		rcm_expect "every command raw, on the peer's C stack (the reference)" commands_on_c_peer
	rcm_expect "every command raw, on rcm's device: 6.12's answers and events" commands_on_rcm
	for dir in to_peer from_peer; do
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
		rcm_expect "abuse: named races and 1,000,000 random commands from 4 threads" abuse_campaign
		check_rping to_peer
	fi
	# Last, as it takes rxe0 away: soft-iWARP, rcm's device over iw_cm.
	rcm_expect "both guests: siw0 (soft-iWARP) instead of rxe0" siw_only
	check_rping to_peer
	check_rping from_peer
}
