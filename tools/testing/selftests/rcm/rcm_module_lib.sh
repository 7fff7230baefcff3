#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm.ko in CM mode `rcm`: it is loaded in place of the C connection
# manager, sees rxe0 appear and disappear, unloads and reloads cleanly,
# answers the rdma_cm command frame as the in-tree rdma_ucm does, and
# takes any number of devices. Counts log lines from boot, so it runs
# first in its boot; leaves rcm loaded (plain) with rxe0.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_lib.sh"

FRAME=$RCM_TEST_DIR/rcm_ucma_frame

# Count kernel log lines matching a pattern.
log_count() { dmesg | grep -c -- "$1"; }

# Wait up to 10 s for the count of a log line to reach a value.
wait_log_count() { # <pattern> <count>
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(log_count "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "expected $2 x '$1' in dmesg, found $(log_count "$1")"
	dmesg | grep 'rcm:' | tail -20
	return 1
}

# The guest's init loaded rcm (CM mode rcm); the C modules it replaces must
# be gone and impossible to load. iw_cm, which rcm uses for iWARP, is
# loaded for it.
rcm_replaces_c_cm() {
	grep -q "^rcm " /proc/modules &&
		! grep -qE "^(ib_cm|rdma_cm|rdma_ucm) " /proc/modules &&
		[ -d /sys/module/iw_cm/holders/rcm ] &&
		! rcm_modprobe rdma_cm 2>/dev/null
}

# Unloading with a device present removes our client from it first.
unload_releases_device() {
	rmmod rcm && wait_log_count "rcm: device rxe0 removed" 2 &&
		! grep -q '^rcm ' /proc/modules
}

# Loading with a device already registered reports it at registration.
reload_sees_device() {
	rcm_modprobe rcm && wait_log_count "rcm: device rxe0 added" 3
}

# The rdma_ucm command frame: the in-tree rdma_ucm (on rcm's rdma_cm) is
# the reference; rcm's own device (rcm.ucma=1) must answer every check
# the same.
ucma_frame_in_tree() {
	rcm_modprobe rdma_ucm && "$FRAME" && rmmod rdma_ucm
}
ucma_frame_rcm() {
	rmmod rcm && rcm_modprobe rcm ucma=1 || return 1
	"$FRAME" || return 1
	rmmod rcm && rcm_modprobe rcm
}

# /sys/module/rcm/lock_times, rcm's lock meters (make bench reads them):
# off until 1 is written; then an rping that rcm itself refuses (nobody
# listens) counts acquisitions of rdma_cm's lock and of the CM endpoint's,
# with hold times, the longest holder and the holders with the most hold
# time; 0 stops them; other input is refused.
lock_times_metered() {
	local f=/sys/module/rcm/lock_times out rc=0
	grep -qx 'metering: off' $f || { cat $f; return 1; }
	echo 1 > $f || return 1
	rcm_modprobe rdma_ucm || return 1
	timeout 10 rping -c -a "$RCM_ADDR" -p 7999 -C 1 2>&1 | tail -2
	echo 0 > $f || return 1
	rmmod rdma_ucm
	out=$(cat $f)
	printf '%s\n' "$out"
	if (echo 2 > $f) 2> /dev/null; then
		echo "lock_times took 2"
		rc=1
	fi
	printf '%s\n' "$out" | grep -qx 'metering: off' &&
		printf '%s\n' "$out" | grep -Eq '^rdma_cm: [1-9][0-9]* acquisitions, wait mean [0-9]+ ns longest [0-9]+ ns, hold mean [0-9]+ ns longest [1-9][0-9]* ns \(.+\), holds of 10us\+ [0-9]+ 100us\+ [0-9]+ 1ms\+ [0-9]+ 10ms\+ [0-9]+; most held by ([^,]+ [1-9][0-9]* x [0-9]+ ns, )+others 0$' &&
		printf '%s\n' "$out" | grep -Eq '^cm_endpoint: [1-9][0-9]* acquisitions, .*; most held by [^,]+ [1-9][0-9]* x [0-9]+ ns,' &&
		return $rc
}

# No fixed limit on devices: ten more RoCE devices on veth pairs, each
# with its CM agent and counters, then all removed again.
many_devices() {
	local i ok=0
	for ((i = 0; i < 5; i++)); do
		ip link add "rcmva$i" type veth peer name "rcmvb$i" || return 1
		ip link set "rcmva$i" up && ip link set "rcmvb$i" up
		rdma link add "rxa$i" type rxe netdev "rcmva$i" || return 1
		rdma link add "rxb$i" type rxe netdev "rcmvb$i" || return 1
	done
	for ((i = 0; i < 5; i++)); do
		for d in "rxa$i" "rxb$i"; do
			wait_log_count "rcm: $d: CM on 1 port" 1 > /dev/null &&
				[ -r "/sys/class/infiniband/$d/ports/1/cm_rx_msgs/req" ] &&
				ok=$((ok + 1))
		done
	done
	echo "$ok of 10 added devices have a CM"
	for ((i = 0; i < 5; i++)); do
		rdma link delete "rxa$i"
		rdma link delete "rxb$i"
		ip link delete "rcmva$i"
	done
	[ $ok = 10 ]
}

module_scenarios() {
	rcm_expect "rcm is loaded (on iw_cm) and the C CM modules it replaces are not" rcm_replaces_c_cm
	rcm_expect "rcm saw rxe0 being added" wait_log_count "rcm: device rxe0 added" 1
	rcm_step rdma link delete rxe0
	rcm_expect "rcm saw rxe0 being removed (rdma link delete)" \
		wait_log_count "rcm: device rxe0 removed" 1
	rcm_step rdma link add rxe0 type rxe netdev eth0
	rcm_expect "rcm saw rxe0 come back (rdma link add)" \
		wait_log_count "rcm: device rxe0 added" 2
	rcm_expect "rmmod rcm: device released, module gone" unload_releases_device
	rcm_expect "modprobe rcm with rxe0 present sees it" reload_sees_device
	rcm_expect "rdma_cm frame checks on the in-tree rdma_ucm (reference)" ucma_frame_in_tree
	rcm_expect "the same checks on rcm's own /dev/infiniband/rdma_cm (rcm.ucma=1)" ucma_frame_rcm
	rcm_expect "lock_times meters rdma_cm's and the endpoint's lock while switched on" lock_times_metered
	rcm_expect "eleven devices, each with a CM and its counters" many_devices
}
