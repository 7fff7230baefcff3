#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The other in-tree rdma_cm consumers between the guests, unmodified, the
# peer serving and this guest the client: SRP (ib_srpt with a RAM disk
# through LIO's configfs, ib_srp logging in by IP through rdma_cm), RDS
# over RDMA (rds_rdma, messages both ways) and NFSv3 over RDMA (nfsd on
# rdma port 20049, a client mount with proto=rdma). The CM modes in the
# test's header decide which rdma_cm each side runs.
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rcm_lib.sh"

SRP_PORT=5555
RDS_PORT=4000
NFS_RDMA_PORT=20049
TARGET=/sys/kernel/config/target

# A port's GID 0 (the link-local GID rxe derives from the MAC) as 32 hex
# digits: the SRP port names and ids are built from it.
gid0_hex() { # [command runner]
	"$@" cat /sys/class/infiniband/rxe0/ports/1/gids/0 | tr -d ':\n'
}

# ---- SRP ----

# The target: a 64 MiB RAM disk as LUN 0 behind ib_srpt's port named by
# its GID, visible to this guest's initiator port only, and ib_srpt's
# rdma_cm listener on $SRP_PORT.
srp_target_up() {
	local port=0x$(gid0_hex peer_run) initiator=0x0000000000000000$(gid0_hex | cut -c17-)
	peer_run "set -e
		modprobe ib_srpt
		grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
		cd $TARGET
		mkdir -p core/rd_mcp_0/ram0
		echo rd_pages=16384 > core/rd_mcp_0/ram0/control
		echo 1 > core/rd_mcp_0/ram0/enable
		mkdir -p srpt/$port/tpgt_1/lun/lun_0
		ln -s $TARGET/core/rd_mcp_0/ram0 srpt/$port/tpgt_1/lun/lun_0/ram0
		mkdir -p srpt/$port/tpgt_1/acls/$initiator/lun_0
		ln -s $TARGET/srpt/$port/tpgt_1/lun/lun_0 srpt/$port/tpgt_1/acls/$initiator/lun_0/lun_0
		echo 1 > srpt/$port/tpgt_1/enable
		echo $SRP_PORT > srpt/discovery_auth/rdma_cm_port"
}

srp_target_down() {
	local port=0x$(gid0_hex peer_run) initiator=0x0000000000000000$(gid0_hex | cut -c17-)
	peer_run "cd $TARGET
		echo 0 > srpt/discovery_auth/rdma_cm_port
		echo 0 > srpt/$port/tpgt_1/enable
		rm -f srpt/$port/tpgt_1/acls/$initiator/lun_0/lun_0
		rmdir srpt/$port/tpgt_1/acls/$initiator/lun_0 srpt/$port/tpgt_1/acls/$initiator
		rm -f srpt/$port/tpgt_1/lun/lun_0/ram0
		rmdir srpt/$port/tpgt_1/lun/lun_0 srpt/$port/tpgt_1 srpt/$port srpt
		rmdir core/rd_mcp_0/ram0 core/rd_mcp_0
		rmmod ib_srpt"
}

# The SCSI disk the SRP target exports here (sdX), if any.
srp_disk() {
	local d
	for d in /sys/block/sd*; do
		[ -e "$d/device/vendor" ] && grep -q LIO-ORG "$d/device/vendor" &&
			{ basename "$d"; return 0; }
	done
	return 1
}

# ib_srp logs in to the target by IP through rdma_cm (the target port id
# is ib_srpt's service GUID: the target's node GUID); the LUN appears.
srp_login() {
	local guid i
	guid=$(peer_run cat /sys/class/infiniband/rxe0/node_guid | tr -d ':\n')
	echo "id_ext=$guid,ioc_guid=$guid,dest=$RCM_PEER:$SRP_PORT" \
		> /sys/class/infiniband_srp/srp-rxe0-1/add_target || return 1
	for ((i = 0; i < 100; i++)); do
		srp_disk > /dev/null && [ -b "/dev/$(srp_disk)" ] && return 0
		sleep 0.1
	done
	echo "no SRP disk after the login"
	dmesg | grep -iE 'srp' | tail -5
	return 1
}

srp_logout() {
	local p i
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 > "$p/delete"
	done
	for ((i = 0; i < 100; i++)); do
		srp_disk > /dev/null || return 0
		sleep 0.1
	done
	echo "the SRP disk outlived its logout"
	return 1
}

# $1 KiB of random data written to the SRP disk and read back the same.
srp_pattern_round_trip() {
	local dev kib=${1:-4096}
	dev=/dev/$(srp_disk) || return 1
	dd if=/dev/urandom of=/tmp/srp.pattern bs=64k count=$((kib / 64)) status=none &&
		dd if=/tmp/srp.pattern of="$dev" bs=64k oflag=direct status=none &&
		dd if="$dev" of=/tmp/srp.readback bs=64k count=$((kib / 64)) iflag=direct status=none &&
		cmp /tmp/srp.pattern /tmp/srp.readback
}

srp_relogin_rounds() {
	local i
	for ((i = 1; i <= $1; i++)); do
		srp_login || { echo "round $i: login"; return 1; }
		srp_pattern_round_trip 256 || { echo "round $i: I/O"; return 1; }
		srp_logout || { echo "round $i: logout"; return 1; }
	done
}

srp_scenarios() { # <this guest's mode> <peer's mode>
	rcm_step rcm_modprobe ib_srp
	rcm_expect "SRP target ($2): ib_srpt exports a RAM disk, rdma_cm port $SRP_PORT" srp_target_up
	rcm_expect "ib_srp ($1) logs in through rdma_cm: the LUN appears" srp_login
	rcm_expect "SRP: 4 MiB written and read back unchanged" srp_pattern_round_trip
	rcm_expect "SRP: logout removes the disk" srp_logout
	local rounds
	rounds=$(rcm_repeats 3 1)
	rcm_expect "SRP: $rounds more round(s) of login, I/O, logout" srp_relogin_rounds "$rounds"
	rcm_step srp_target_down > /dev/null
	rcm_step rmmod ib_srp 2> /dev/null
}

# ---- RDS ----

RDS_ECHO=$RCM_TEST_DIR/rcm_rds_echo
RDS_MESSAGES=50

# Waits up to 10 s for an echo server's "ready" in file $1 (its socket is
# bound; a message sent before that would be dropped): [command runner].
rds_wait_ready() { # <file> [command runner]
	local file=$1 i
	shift
	for ((i = 0; i < 100; i++)); do
		"$@" grep -q ready "$file" 2> /dev/null && return 0
		sleep 0.1
	done
	echo "the echo server did not bind"
	return 1
}

# $1 serves (echoes) the messages the other guest sends: peer or here.
rds_round() {
	local server
	if [ "$1" = peer ]; then
		peer_start rds "$RDS_ECHO serve $RCM_PEER $RDS_PORT $RDS_MESSAGES 90" &&
			rds_wait_ready /tmp/job.rds.out peer_run || { peer_wait rds 1; return 1; }
		"$RDS_ECHO" ping "$RCM_ADDR" $((RDS_PORT + 1)) "$RCM_PEER" $RDS_PORT $RDS_MESSAGES ||
			{ peer_wait rds 1; return 1; }
		peer_wait rds 30
	else
		"$RDS_ECHO" serve "$RCM_ADDR" $RDS_PORT $RDS_MESSAGES 90 > /tmp/rds.serve 2>&1 &
		server=$!
		rds_wait_ready /tmp/rds.serve || { kill $server; cat /tmp/rds.serve; return 1; }
		peer_run "$RDS_ECHO ping $RCM_PEER $((RDS_PORT + 1)) $RCM_ADDR $RDS_PORT $RDS_MESSAGES" ||
			{ kill $server; cat /tmp/rds.serve; return 1; }
		wait $server || { cat /tmp/rds.serve; return 1; }
	fi
}

rds_load() { rcm_modprobe rds_rdma && peer_run modprobe rds_rdma; }

rds_scenarios() { # <this guest's mode> <peer's mode>
	local server
	rcm_expect "rds_rdma loads here ($1) and on the peer ($2)" rds_load
	# RDS keeps one connection per address pair, set up by whoever sends
	# first; the other side's CONNECT_REQUEST handler binds and destroys
	# an id of its own, for which the C rdma_cm (which holds the
	# listener's and the new id's handler locks then) draws a lockdep
	# report. So a C side sends first; rcm's side takes the request.
	for server in $([ "$2" = c ] && echo here peer || echo peer here); do
		if [ "$server" = peer ]; then
			rcm_expect "RDS: $RDS_MESSAGES messages to the peer, each echoed back unchanged" \
				rds_round peer
		else
			rcm_expect "RDS: $RDS_MESSAGES messages from the peer, each echoed back unchanged" \
				rds_round here
		fi
	done
	# RDS keeps its connections; unloading it ends them and its listeners.
	rcm_step rmmod rds_rdma rds 2> /dev/null
	rcm_step peer_run 'rmmod rds_rdma rds' > /dev/null 2>&1
}

# ---- NFS ----

NFS_EXPORT=/srv/nfs
NFS_MNT=/mnt/nfs
NFS_MOUNTD_PORT=20048

# The server: rpcbind, mountd and nfsd (NFSv3; the lean guest kernel has
# no NFSv4 server) with an RDMA listener on $NFS_RDMA_PORT, exporting a
# tmpfs to this guest. mountd listens on a fixed port, which the client
# names: its queries of the server's rpcbind were refused (an RPC
# authentication error) in the guests.
nfs_server_up() {
	peer_run "set -e
		modprobe nfsd
		modprobe rpcrdma
		mkdir -p $NFS_EXPORT /run/rpcbind /var/lib/nfs
		mount -t tmpfs tmpfs $NFS_EXPORT
		grep -q ' /proc/fs/nfsd ' /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd
		echo '$NFS_EXPORT $RCM_ADDR(rw,no_root_squash,fsid=1,no_subtree_check,insecure)' > /etc/exports
		rpcbind
		exportfs -ra
		rpc.mountd -p $NFS_MOUNTD_PORT
		rpc.nfsd -N 4 --rdma=$NFS_RDMA_PORT 4
		grep -q 'rdma $NFS_RDMA_PORT' /proc/fs/nfsd/portlist"
}

nfs_server_down() {
	peer_run "rpc.nfsd 0; exportfs -ua; killall rpc.mountd rpcbind; umount $NFS_EXPORT"
}

nfs_mount() {
	rcm_modprobe rpcrdma || return 1
	mkdir -p $NFS_MNT
	[ -e /etc/mtab ] || ln -s /proc/mounts /etc/mtab
	timeout 60 mount.nfs "$RCM_PEER:$NFS_EXPORT" $NFS_MNT \
		-o vers=3,proto=rdma,port=$NFS_RDMA_PORT,nolock,mountproto=tcp,mountport=$NFS_MOUNTD_PORT || {
		peer_run "cat /proc/fs/nfsd/portlist; dmesg | tail -5"
		return 1
	}
	grep " $NFS_MNT " /proc/mounts
	grep " $NFS_MNT " /proc/mounts | grep -q 'proto=rdma'
}

# A file written here arrives on the server unchanged; one written on the
# server reads back here unchanged.
nfs_round_trip() {
	local here there
	dd if=/dev/urandom of=/tmp/nfs.pattern bs=64k count=16 status=none || return 1
	cp /tmp/nfs.pattern $NFS_MNT/from-client && sync || return 1
	here=$(sha256sum < /tmp/nfs.pattern)
	there=$(peer_run "sha256sum < $NFS_EXPORT/from-client")
	[ "$here" = "$there" ] || { echo "server has $there, client wrote $here"; return 1; }
	there=$(peer_run "dd if=/dev/urandom of=$NFS_EXPORT/from-server bs=64k count=16 status=none &&
		sha256sum < $NFS_EXPORT/from-server") || return 1
	here=$(sha256sum < $NFS_MNT/from-server)
	[ "$here" = "$there" ] || { echo "client read $here, server wrote $there"; return 1; }
}

nfs_umount() {
	timeout 60 umount $NFS_MNT && ! grep -q " $NFS_MNT " /proc/mounts
}

nfs_scenarios() { # <this guest's mode> <peer's mode>
	rcm_expect "NFS server ($2): nfsd listens on rdma $NFS_RDMA_PORT" nfs_server_up
	rcm_expect "NFS client ($1): mount with proto=rdma" nfs_mount
	rcm_expect "NFS: 1 MiB each way, unchanged" nfs_round_trip
	rcm_expect "NFS: umount" nfs_umount
	rcm_step nfs_server_down > /dev/null 2>&1
}

# storage_scenarios <this guest's mode> <peer's mode>
storage_scenarios() {
	srp_scenarios "$1" "$2"
	rds_scenarios "$1" "$2"
	nfs_scenarios "$1" "$2"
}
