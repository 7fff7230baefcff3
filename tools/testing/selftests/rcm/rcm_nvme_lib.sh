#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics (RDMA) between the guests: the peer is the target
# (nvmet-rdma, configured through configfs, a file-backed namespace), this
# guest the host (nvme-rdma through nvme-cli). The CM modes in the test's
# header decide which rdma_cm each side runs; the kernel consumers are the
# in-tree ones, unmodified.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_lib.sh"

NQN=rcm-test
NVME_PORT=4420
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5c3c4a2e-9a55-4a52-9d1c-72636d746573
HOSTID=5c3c4a2e-9a55-4a52-9d1c-72636d746573
# The target's address (a test may set another of the peer's before
# sourcing this file).
NVME_ADDR=${NVME_ADDR:-$RCM_PEER}
NVME_ARGS="-t rdma -a $NVME_ADDR -s $NVME_PORT --hostnqn=$HOSTNQN --hostid=$HOSTID"

# The target: subsystem $NQN with a 64 MiB file namespace on port 1.
nvme_target_up() {
	peer_run "set -e
		modprobe nvmet-rdma
		grep -q " /sys/kernel/config " /proc/mounts || mount -t configfs none /sys/kernel/config
		truncate -s 64M /tmp/ns.img
		cd /sys/kernel/config/nvmet
		mkdir subsystems/$NQN
		echo 1 > subsystems/$NQN/attr_allow_any_host
		mkdir subsystems/$NQN/namespaces/1
		echo -n /tmp/ns.img > subsystems/$NQN/namespaces/1/device_path
		echo 1 > subsystems/$NQN/namespaces/1/buffered_io
		echo 1 > subsystems/$NQN/namespaces/1/enable
		mkdir ports/1
		echo rdma > ports/1/addr_trtype
		echo ipv4 > ports/1/addr_adrfam
		echo $NVME_ADDR > ports/1/addr_traddr
		echo $NVME_PORT > ports/1/addr_trsvcid
		ln -s /sys/kernel/config/nvmet/subsystems/$NQN ports/1/subsystems/$NQN
		dmesg | tail -n 3"
}

# The target's port goes (the host's controller loses its connections).
nvme_target_port_down() {
	peer_run "rm /sys/kernel/config/nvmet/ports/1/subsystems/$NQN"
}

nvme_target_port_up() {
	peer_run "ln -s /sys/kernel/config/nvmet/subsystems/$NQN /sys/kernel/config/nvmet/ports/1/subsystems/$NQN"
}

# Everything of the target removed again.
nvme_target_down() {
	peer_run "cd /sys/kernel/config/nvmet
		rm -f ports/1/subsystems/$NQN; rmdir ports/1
		echo 0 > subsystems/$NQN/namespaces/1/enable
		rmdir subsystems/$NQN/namespaces/1; rmdir subsystems/$NQN
		rmmod nvmet_rdma nvmet"
}

nvme_discover_lists_subsystem() {
	local out
	out=$(timeout 60 nvme discover $NVME_ARGS 2>&1)
	printf '%s\n' "$out" | grep -q "subnqn: *$NQN" || { printf '%s\n' "$out" | tail -20; return 1; }
}

# The controller of $NQN (nvmeN), once it is live.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] && { basename "$c"; return 0; }
	done
	return 1
}

# Waits up to $1 s for the controller to be live with its namespace.
nvme_wait_live() {
	local i c
	for ((i = 0; i < $1 * 10; i++)); do
		c=$(nvme_ctrl) && [ "$(cat "/sys/class/nvme/$c/state")" = live ] &&
			[ -b "/dev/${c}n1" ] && return 0
		sleep 0.1
	done
	echo "controller: ${c:-none}, state $(cat "/sys/class/nvme/$c/state" 2>/dev/null)"
	return 1
}

# nvme connect with $1 I/O queues (and the further nvme connect options
# given): it returns once the admin and I/O queues are connected.
nvme_connect_queues() {
	local out n=$1
	shift
	out=$(timeout 60 nvme connect $NVME_ARGS -n $NQN -i "$n" "$@" 2>&1) || { echo "$out"; return 1; }
}

# As nvme_connect_queues; then the controller comes up live.
nvme_connect_live() {
	nvme_connect_queues "$@" || return 1
	nvme_wait_live 30
}

# The live controller has at least $1 I/O queues (its block device's
# hardware queues).
nvme_io_queues_at_least() {
	local c n
	c=$(nvme_ctrl) || return 1
	n=$(ls -d /sys/block/${c}n1/mq/* 2>/dev/null | wc -l)
	echo "$n hardware queues"
	[ "$n" -ge "$1" ]
}

# $1 KiB (default 4 MiB) of random data written to the namespace and read
# back the same.
nvme_pattern_round_trip() {
	local c dev kib=${1:-4096}
	c=$(nvme_ctrl) || return 1
	dev=/dev/${c}n1
	dd if=/dev/urandom of=/tmp/pattern bs=64k count=$((kib / 64)) status=none &&
		dd if=/tmp/pattern of="$dev" bs=64k oflag=direct status=none &&
		dd if="$dev" of=/tmp/readback bs=64k count=$((kib / 64)) iflag=direct status=none &&
		cmp /tmp/pattern /tmp/readback
}

nvme_disconnect_all() {
	local out
	out=$(timeout 60 nvme disconnect -n $NQN 2>&1)
	printf '%s\n' "$out" | grep -q 'disconnected 1 controller' || { echo "$out"; return 1; }
	! nvme_ctrl
}

# $1 rounds of connect, I/O, disconnect.
nvme_rounds() {
	local i
	for ((i = 1; i <= $1; i++)); do
		nvme_connect_live 2 || { echo "round $i: connect"; return 1; }
		nvme_pattern_round_trip 256 || { echo "round $i: I/O"; return 1; }
		nvme_disconnect_all || { echo "round $i: disconnect"; return 1; }
	done
}

# The port leaves while the host is connected and comes back: the host
# reconnects on its own (trying every second) and I/O works again.
nvme_port_bounce() {
	nvme_connect_live 2 --reconnect-delay=1 --ctrl-loss-tmo=60 || return 1
	nvme_target_port_down || return 1
	sleep 3
	nvme_target_port_up || return 1
	nvme_wait_live 60 || return 1
	nvme_pattern_round_trip 256 || return 1
	nvme_disconnect_all
}

# The host's device goes under a live controller (nvme-rdma deletes its
# controllers on it, rdma_cm waits for their ids): the removal finishes
# and the controller is gone; with the device back, a new one connects.
nvme_host_link_delete() {
	local i
	nvme_connect_live 2 || return 1
	timeout 120 rdma link delete rxe0 || { echo "rdma link delete did not finish"; return 1; }
	for ((i = 0; i < 300; i++)); do
		nvme_ctrl > /dev/null || break
		sleep 0.1
	done
	nvme_ctrl > /dev/null && { echo "the controller outlived its device"; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || return 1
	rcm_retry 20 nvme_connect_live 2 || { echo "$RCM_RETRY_OUT"; return 1; }
	nvme_pattern_round_trip 256 && nvme_disconnect_all
}

# The target's device goes under a live controller: nvmet-rdma hears
# DEVICE_REMOVAL on its queues and on its listener, which it gives up (as
# on 6.12's rdma_cm: nvmet-rdma repairs a port only on ADDR_CHANGE), and
# the removal finishes. With the device back the port is re-enabled, and
# the host, still trying, reconnects on its own.
nvme_target_link_delete() {
	nvme_connect_live 2 --reconnect-delay=1 --ctrl-loss-tmo=120 || return 1
	peer_run "timeout 120 rdma link delete rxe0" ||
		{ echo "the target's rdma link delete did not finish"; return 1; }
	peer_run "rdma link add rxe0 type rxe netdev eth0" || return 1
	if peer_run "rdma res show cm_id | grep -q 'state LISTEN'"; then
		echo "the listener outlived its device"
		return 1
	fi
	nvme_target_port_down > /dev/null
	nvme_target_port_up || return 1
	nvme_wait_live 90 || return 1
	nvme_pattern_round_trip 256 && nvme_disconnect_all
}

# The device removals under a live controller: with rcm on both sides in
# make test, every pairing in make test-full (the CI budget).
nvme_removals() {
	rcm_full || [ "$1/$2" = rcm/rcm ]
}

# nvme_scenarios <this guest's mode> <peer's mode>
nvme_scenarios() {
	local mine=$1 theirs=$2
	rcm_step rcm_modprobe nvme-rdma
	rcm_expect "the target ($theirs) exports $NQN on rdma port $NVME_PORT" nvme_target_up
	rcm_expect "nvme-rdma ($mine) holds the rdma_cm in use" \
		sh -c "[ -d /sys/module/$([ "$mine" = rcm ] && echo rcm || echo rdma_cm)/holders/nvme_rdma ]"
	rcm_expect "nvme discover lists $NQN" nvme_discover_lists_subsystem
	rcm_expect "nvme connect with 2 I/O queues: controller live" nvme_connect_live 2
	rcm_expect "the controller runs at least 2 I/O queues" nvme_io_queues_at_least 2
	rcm_expect "4 MiB written and read back unchanged" nvme_pattern_round_trip
	rcm_expect "nvme disconnect" nvme_disconnect_all
	local rounds
	rounds=$(rcm_repeats 10 2)
	rcm_expect "$rounds rounds of connect, I/O, disconnect" nvme_rounds "$rounds"
	rcm_expect "target port removed and restored while connected: the host reconnects" \
		nvme_port_bounce
	if nvme_removals "$mine" "$theirs"; then
		rcm_expect "rdma link delete on the host under a live controller, then a new one" \
			nvme_host_link_delete
		rcm_expect "rdma link delete on the target under a live controller: the host reconnects" \
			nvme_target_link_delete
	fi
	rcm_step nvme_target_down > /dev/null
}
