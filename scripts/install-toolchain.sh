#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install everything rcm needs to build kernels, the module and the guest
# image, and to run the tests. Idempotent: installs only what is missing.
set -euo pipefail

PKGS=(
	# kernel source and the toolchain Rust-for-Linux 6.12 needs
	linux-source-6.12 rustc-web rust-web-src clang lld llvm libclang-dev
	flex bison bc libelf-dev libssl-dev cpio pahole make gcc xz-utils
	# guest image and VM runner
	busybox-static kmod qemu-system-x86 iproute2 socat rsync
	# RDMA userspace used inside the guests
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
	infiniband-diags nvme-cli
	# make bench: librdmacm's headers (its per-command driver) and perf
	# (profiles of each step inside the guests)
	librdmacm-dev linux-perf
	# NFS over RDMA inside the guests (rpcbind, mountd, nfsd, mount.nfs)
	nfs-kernel-server
	# packet dissection for wire-format cross checks
	tshark
)
BINDGEN_VERSION=0.69.5

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-toolchain: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture; answer once, silently.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections
	apt-get update -q
	# Never start a package's service on this machine (nfs-kernel-server's
	# would): a policy-rc.d that says no, unless one is already there.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

export PATH="$HOME/.cargo/bin:$PATH"
if ! bindgen --version 2>/dev/null | grep -q " $BINDGEN_VERSION"; then
	echo "install-toolchain: cargo install bindgen-cli $BINDGEN_VERSION"
	cargo install bindgen-cli --version "$BINDGEN_VERSION" --locked
fi

# Host side of the protocol core: rustfmt/clippy come with the rustup toolchain.
for comp in rustfmt clippy; do
	rustup component list --installed 2>/dev/null | grep -q "^$comp" ||
		rustup component add "$comp" || true
done

/usr/bin/rustc --version >/dev/null
echo "install-toolchain: ok"
