#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest kernel for a flavor (debug | release) out of tree from a
# pristine copy of Debian's linux-source-6.12, cached outside the repo under
# $RCM_CACHE/kernel/<version>-<flavor>-<config hash>/. A finished build is
# reused; only a change of config fragment, this script or toolchain rebuilds.
#
# Layout of a cache entry:
#   build/     the O= build tree (module builds need it whole: rust/*.rmeta)
#   mods/      modules_install output (lib/modules/<release>/...)
#   bzImage    the kernel image
#   build.log  full build log; build-seconds: wall time of the build
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavor=${1:-$RCM_FLAVOR}
case $flavor in debug | release) ;; *) echo "flavor must be debug or release" >&2; exit 2 ;; esac

out=$(rcm_kernel_dir "$flavor")
if [ -f "$out/.complete" ]; then
	echo "build-kernel: $flavor cached at $out"
	exit 0
fi

src=$RCM_CACHE/src/linux-source-6.12
if [ ! -f "$src/.rcm-pristine" ]; then
	echo "build-kernel: unpacking /usr/src/linux-source-6.12.tar.xz"
	rm -rf "$src"
	mkdir -p "$RCM_CACHE/src"
	tar -C "$RCM_CACHE/src" -xf /usr/src/linux-source-6.12.tar.xz
	touch "$src/.rcm-pristine"
fi

rm -rf "$out"
mkdir -p "$out/build"
exec > >(tee "$out/build.log") 2>&1
start=$(date +%s)
kmake() { make -C "$src" O="$out/build" "${RCM_KMAKE_ARGS[@]}" "$@"; }

kmake defconfig
kmake kvm_guest.config
"$src/scripts/kconfig/merge_config.sh" -m -O "$out/build" "$out/build/.config" \
	"$RCM_ROOT/scripts/kconfig/base.config" "$RCM_ROOT/scripts/kconfig/$flavor.config"
kmake olddefconfig

# Fail early if Kconfig dropped an option we asked for (unmet dependency).
missing=0
while read -r line; do
	case $line in
	CONFIG_*=*) grep -qx "$line" "$out/build/.config" || { echo "build-kernel: $line did not stick"; missing=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		grep -q "^$opt=[ym]" "$out/build/.config" && { echo "build-kernel: $opt should be off"; missing=1; } ;;
	esac
done < <(cat "$RCM_ROOT/scripts/kconfig/base.config" "$RCM_ROOT/scripts/kconfig/$flavor.config")
[ $missing = 0 ] || exit 1

kmake -j"$(($(nproc) + 1))" bzImage modules
kmake INSTALL_MOD_PATH="$out/mods" INSTALL_MOD_STRIP=1 modules_install
cp "$out/build/arch/x86/boot/bzImage" "$out/bzImage"
echo $(($(date +%s) - start)) > "$out/build-seconds"
touch "$out/.complete"
echo "build-kernel: $flavor built in $(cat "$out/build-seconds") s at $out"
