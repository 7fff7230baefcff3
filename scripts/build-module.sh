#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build rcm.ko and the samples against the cached kernel tree of a flavor,
# and the ib_cm-only rcm.ko (no rdma_cm exports, for CM mode "hybrid") in a
# copy of the sources under out/ibcm-only. Extra arguments go to kbuild
# (e.g. clean, V=1, modules_install).
#
# KDIR=<a kernel build tree> builds against that tree instead (a kernel the
# project did not build): scripts/check-kdir.sh checks it first and picks
# the rustc that built it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavor=${1:-$RCM_FLAVOR}
shift || true
if [ -n "${KDIR:-}" ]; then
	rustc=$("$RCM_ROOT/scripts/check-kdir.sh" "$KDIR")
	kbuild=$(readlink -f "$KDIR")
	kmake_args=(LLVM=1 RUSTC="$rustc" BINDGEN="${BINDGEN:-bindgen}")
else
	kdir=$(rcm_kernel_dir "$flavor")
	[ -f "$kdir/.complete" ] || "$RCM_ROOT/scripts/build-kernel.sh" "$flavor"
	kbuild=$kdir/build
	kmake_args=("${RCM_KMAKE_ARGS[@]}")
fi
goal=${1:-modules}
[ $# -gt 0 ] && shift
if [ "$goal" = modules_install ]; then
	# rcm.ko alone (stripped and signed as the kernel's config says): the
	# module's own directory as the external module, so that the test
	# modules and samples the whole tree builds stay out.
	mod=$RCM_ROOT/drivers/infiniband/rcm
	make -C "$kbuild" M="$mod" "${kmake_args[@]}" -j"$(nproc)" modules
	exec make -C "$kbuild" M="$mod" "${kmake_args[@]}" modules_install "$@"
fi
make -C "$kbuild" M="$RCM_ROOT" "${kmake_args[@]}" -j"$(nproc)" "$goal" "$@"
if [ "$goal" = modules ]; then
	variant=$RCM_ROOT/out/ibcm-only
	mkdir -p "$variant"
	# Sources only (kbuild's objects of the full build stay out).
	tar -C "$RCM_ROOT" --exclude=target --exclude=fuzz --exclude='*.o' \
		--exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod*' \
		--exclude='*_generated.rs' -cf - drivers rust include |
		tar -C "$variant" -xf -
	echo 'obj-m += drivers/infiniband/rcm/' > "$variant/Kbuild"
	make -C "$kbuild" M="$variant" "${kmake_args[@]}" RCM_IBCM_ONLY=y \
		-j"$(nproc)" modules "$@"
fi
