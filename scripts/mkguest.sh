#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest root as an initramfs: a cached base archive (busybox, the
# host's rdma-core tools with their library closure, the kernel's modules)
# and a small overlay archive rebuilt every time (rcm.ko, the kselftests,
# the guest init and helpers). Linux unpacks concatenated cpio archives in
# order, so the two are simply joined into one -initrd file. With
# --profiler (make bench) a third cached archive adds the host's perf.
#
# usage: mkguest.sh <flavor> <output initramfs> [--profiler]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavor=${1:-$RCM_FLAVOR}
out=$(realpath -m "${2:?output path}")
profiler=${3:-}
kdir=$(rcm_kernel_dir "$flavor")
[ -f "$kdir/.complete" ] || { echo "mkguest: no $flavor kernel at $kdir (run scripts/build-kernel.sh $flavor)" >&2; exit 1; }

# Userspace copied from the host, with everything ldd says they load.
GUEST_BINS=(
	/usr/bin/rping /usr/bin/ucmatose /usr/bin/udaddy /usr/bin/cmtime /usr/bin/mckey
	/usr/bin/rdma_server /usr/bin/rdma_client /usr/bin/rstream /usr/bin/riostream
	/usr/bin/udpong /usr/bin/rcopy
	/usr/bin/ib_send_bw /usr/bin/ib_send_lat /usr/bin/ib_write_bw
	/usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong
	/usr/bin/rdma /usr/sbin/ip /usr/sbin/nvme /usr/bin/socat /usr/bin/kmod /bin/bash
	/usr/bin/timeout /usr/bin/stdbuf
	# procps: Debian's busybox has no pgrep/pkill (the tests stop servers
	# that run until stopped, and whole job trees on the peer)
	/usr/bin/pgrep /usr/bin/pkill
	# NFSv3 over RDMA: the server's daemons and the client's mount helper
	/usr/sbin/rpcbind /usr/sbin/rpc.mountd /usr/sbin/rpc.nfsd /usr/sbin/exportfs
	/sbin/mount.nfs
)
GUEST_DLOPEN=(
	/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
	/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so
	# stdbuf's preload: tool output line by line, kept if a timeout kills it
	/usr/libexec/coreutils/libstdbuf.so
	# rping and friends abort at thread exit without the unwinder
	/lib/x86_64-linux-gnu/libgcc_s.so.1
)

base_key=$( {
	basename "$kdir"
	sha256sum "$0"
	for f in "${GUEST_BINS[@]}" "${GUEST_DLOPEN[@]}" /bin/busybox; do
		stat -Lc '%n %s %Y' "$f"
	done
} | sha256sum | cut -c1-12)
base=$RCM_CACHE/guest/base-$flavor-$base_key.cpio.gz

copy_with_libs() { # <root> <file>...
	local root=$1 f lib
	shift
	for f in "$@"; do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
		for lib in $(ldd "$f" 2>/dev/null | grep -oE '/[^ ]+\.so[^ ]*'); do
			[ -e "$root$lib" ] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
}

if [ ! -f "$base" ]; then
	echo "mkguest: building base archive $base"
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc/modprobe.d,proc,sys,dev,tmp,run,root,mnt,var/tmp,lib64}
	cp /bin/busybox "$stage/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
	done
	copy_with_libs "$stage" "${GUEST_BINS[@]}" "${GUEST_DLOPEN[@]}"
	for tool in modprobe insmod rmmod lsmod depmod modinfo; do
		ln -sf ../usr/bin/kmod "$stage/sbin/$tool"
	done
	mkdir -p "$stage/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/siw.driver "$stage/etc/libibverbs.d/"
	printf 'root:x:0:0:root:/root:/bin/sh\n_rpc:x:100:65534::/run/rpcbind:/bin/false\nnobody:x:65534:65534::/:/bin/false\n' \
		> "$stage/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$stage/etc/group"
	# libtirpc's transports, RPC program names, protocols and services
	# (rpcbind, mountd, mount.nfs)
	cp /etc/netconfig /etc/rpc /etc/protocols /etc/services "$stage/etc/"
	mkdir -p "$stage/var/lib/nfs"
	# the kernel registers RPC services with rpcbind at /var/run/rpcbind.sock
	ln -s ../run "$stage/var/run"
	printf '127.0.0.1 localhost\n10.0.0.1 guest-a\n10.0.0.2 guest-b\n' > "$stage/etc/hosts"
	cp -a "$kdir/mods/lib/modules" "$stage/lib/"
	mkdir -p "$(dirname "$base")"
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$base.tmp"
	mv "$base.tmp" "$base"
	rm -rf "$stage"
	trap - EXIT
fi

# The overlay: everything of ours, rebuilt on every run (a few hundred KiB).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
krel=$(cat "$kdir/build/include/config/kernel.release")
mkdir -p "$stage/usr/lib/rcm" "$stage/lib/modules/$krel/extra"
cp "$RCM_ROOT/scripts/guest/init" "$stage/init"
cp "$RCM_ROOT"/scripts/guest/rcm-*.sh "$stage/usr/lib/rcm/"
# the tool that switches a system's CM (tested as on a real root)
cp "$RCM_ROOT/scripts/rcm-system-cm.sh" "$stage/usr/lib/rcm/"
chmod +x "$stage/init" "$stage"/usr/lib/rcm/*.sh
if [ -f "$RCM_ROOT/drivers/infiniband/rcm/rcm.ko" ]; then
	cp "$RCM_ROOT/drivers/infiniband/rcm/rcm.ko" "$stage/lib/modules/$krel/extra/"
fi
# The ib_cm-only build, for CM mode "hybrid".
if [ -f "$RCM_ROOT/out/ibcm-only/drivers/infiniband/rcm/rcm.ko" ]; then
	cp "$RCM_ROOT/out/ibcm-only/drivers/infiniband/rcm/rcm.ko" \
		"$stage/usr/lib/rcm/rcm-ibcm-only.ko"
fi
# A baseline build of rcm (make bench's A/B of the commands run): another
# commit's rcm.ko, named by RCM_BENCH_BASELINE_KO.
if [ -n "${RCM_BENCH_BASELINE_KO:-}" ]; then
	cp "$RCM_BENCH_BASELINE_KO" "$stage/usr/lib/rcm/rcm-baseline.ko"
fi
# Sample consumers: they link against whichever CM the guest runs.
# and the kselftests' own modules.
for ko in "$RCM_ROOT"/samples/rcm/*.ko "$RCM_ROOT"/tools/testing/selftests/rcm/modules/*.ko; do
	[ -f "$ko" ] && cp "$ko" "$stage/lib/modules/$krel/extra/"
done
if [ -d "$RCM_CACHE/selftests/install" ]; then
	cp -a "$RCM_CACHE/selftests/install" "$stage/kselftest"
fi
(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$stage.overlay.cpio"
extra=()
if [ "$profiler" = --profiler ]; then
	# A versioned perf_<kernel version> (older Debian, where /usr/bin/perf
	# is a wrapper that picks one by the running kernel) goes in as perf.
	perf_bin=$(ls /usr/bin/perf_[0-9]* 2>/dev/null | sort -V | tail -1 || true)
	perf_bin=${perf_bin:-/usr/bin/perf}
	[ -x "$perf_bin" ] || { echo "mkguest: no perf on this machine (linux-perf)" >&2; exit 1; }
	prof=$RCM_CACHE/guest/profiler-$(stat -Lc '%n %s %Y' "$perf_bin" | sha256sum | cut -c1-12).cpio.gz
	if [ ! -f "$prof" ]; then
		pstage=$(mktemp -d)
		copy_with_libs "$pstage" "$perf_bin"
		[ "$perf_bin" = /usr/bin/perf ] || mv "$pstage$perf_bin" "$pstage/usr/bin/perf"
		(cd "$pstage" && find . | cpio -o -H newc --quiet | gzip -1) > "$prof.tmp"
		mv "$prof.tmp" "$prof"
		rm -rf "$pstage"
	fi
	extra=("$prof")
fi
cat "$base" "$stage.overlay.cpio" "${extra[@]}" > "$out"
rm -f "$stage.overlay.cpio"
