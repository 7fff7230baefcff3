#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build rcm.ko and the samples against the cached kernel tree of a flavor,
# and the ib_cm-only rcm.ko (no rdma_cm exports, for CM mode "hybrid") in a
# copy of the sources under out/ibcm-only. Extra arguments go to kbuild
# (e.g. clean, V=1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavor=${1:-$RCM_FLAVOR}
shift || true
kdir=$(rcm_kernel_dir "$flavor")
[ -f "$kdir/.complete" ] || "$RCM_ROOT/scripts/build-kernel.sh" "$flavor"
goal=${1:-modules}
[ $# -gt 0 ] && shift
make -C "$kdir/build" M="$RCM_ROOT" "${RCM_KMAKE_ARGS[@]}" -j"$(nproc)" "$goal" "$@"
if [ "$goal" = modules ]; then
	variant=$RCM_ROOT/out/ibcm-only
	mkdir -p "$variant"
	# Sources only (kbuild's objects of the full build stay out).
	tar -C "$RCM_ROOT" --exclude=target --exclude=fuzz --exclude='*.o' \
		--exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod*' \
		--exclude='*_generated.rs' -cf - drivers rust include |
		tar -C "$variant" -xf -
	echo 'obj-m += drivers/infiniband/rcm/' > "$variant/Kbuild"
	make -C "$kdir/build" M="$variant" "${RCM_KMAKE_ARGS[@]}" RCM_IBCM_ONLY=y \
		-j"$(nproc)" modules "$@"
fi
