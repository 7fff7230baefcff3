# SPDX-License-Identifier: GPL-2.0
# Shared settings for rcm's scripts. Source it; do not run it.

RCM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RCM_CACHE=${RCM_CACHE:-/var/cache/rcm}
RCM_KVER=6.12.117
RCM_FLAVOR=${RCM_FLAVOR:-debug}
export PATH="$HOME/.cargo/bin:$PATH"

# Kernel and module builds always use Debian's rustc: it ships the matching
# library source (rust-web-src), which rustup's toolchain here lacks.
RCM_KMAKE_ARGS=(LLVM=1 RUSTC=/usr/bin/rustc BINDGEN=bindgen)

# Bump when scripts/build-kernel.sh changes what it produces (not for
# cosmetic edits: each bump costs a full kernel rebuild everywhere).
RCM_KERNEL_BUILD_REV=1

# The cache key of a kernel build: source version, flavor, build revision and
# config fragments. Toolchain versions are part of the key too, since a rustc
# change invalidates every .rmeta.
rcm_kernel_key() {
	local flavor=$1
	local h
	h=$( {
		echo "$RCM_KVER $flavor $RCM_KERNEL_BUILD_REV"
		cat "$RCM_ROOT/scripts/kconfig/base.config" "$RCM_ROOT/scripts/kconfig/$flavor.config"
		/usr/bin/rustc --version 2>/dev/null
		clang --version 2>/dev/null | head -1
		bindgen --version 2>/dev/null
	} | sha256sum | cut -c1-12)
	echo "$RCM_KVER-$flavor-$h"
}

# Directory of a finished kernel build for a flavor (may not exist yet).
rcm_kernel_dir() {
	echo "$RCM_CACHE/kernel/$(rcm_kernel_key "$1")"
}
