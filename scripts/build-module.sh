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
	# rcm.ko alone (stripped, signed and compressed as the kernel's config
	# says): the module's own directory as the external module, so that
	# the test modules and samples the whole tree builds stay out. kbuild
	# installs it into a staging tree; it goes to /usr/lib/rcm/<release>/,
	# outside the module tree, until scripts/rcm-system-cm.sh switches the
	# system to it (in the module tree depmod would resolve the C CM's
	# symbols to it with nothing to stop ib_cm loading beside it).
	mod=$RCM_ROOT/drivers/infiniband/rcm
	make -C "$kbuild" M="$mod" "${kmake_args[@]}" -j"$(nproc)" modules
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	make -C "$kbuild" M="$mod" "${kmake_args[@]}" INSTALL_MOD_PATH="$stage" DEPMOD=true \
		modules_install "$@"
	ko=$(find "$stage/lib/modules" -name 'rcm.ko*' -print -quit)
	[ -n "$ko" ] || { echo "kbuild installed no rcm.ko"; exit 1; }
	krel=${ko#"$stage"/lib/modules/}
	krel=${krel%%/*}
	dest=${INSTALL_MOD_PATH:-}/usr/lib/rcm/$krel
	rm -f "$dest"/rcm.ko*
	install -D -m 644 "$ko" "$dest/${ko##*/}"
	echo "rcm.ko installed in $dest (outside the module tree)"
	"$RCM_ROOT/scripts/rcm-system-cm.sh" --kernel "$krel" --root "${INSTALL_MOD_PATH:-/}" refresh
	exit
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
