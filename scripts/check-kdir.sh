#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Checks that a kernel build tree the project did not build can build
# rcm.ko (make modules KDIR=<tree>), before kbuild is started, and says
# what is missing in plain words. Prints the rustc to use on success.
#
#   check-kdir.sh <kernel build tree>
set -uo pipefail
kdir=${1:?usage: check-kdir.sh <kernel build tree>}
problems=0
problem() { echo "check-kdir: $*" >&2; problems=$((problems + 1)); }

config=$kdir/.config
if [ ! -f "$config" ] || [ ! -f "$kdir/Makefile" ]; then
	echo "check-kdir: $kdir is not a configured kernel build tree (no .config or Makefile)" >&2
	exit 1
fi
setting() { sed -n "s/^$1=//p" "$config" | tr -d '"'; }

release=$(cat "$kdir/include/config/kernel.release" 2> /dev/null)
case $release in
6.12.*) ;;
"") problem "no include/config/kernel.release: build the kernel first (make, or make modules_prepare)" ;;
*) problem "the tree is Linux $release; rcm is written against 6.12 (struct rdma_id_private, ib_cm's ABI)" ;;
esac
[ -f "$kdir/Module.symvers" ] ||
	problem "no Module.symvers: build the kernel's modules first, rcm links against ib_core's symbols"

# Options rcm needs: Rust, modules, ib_core with address translation (rdma_cm).
for opt in CONFIG_RUST CONFIG_MODULES CONFIG_INFINIBAND_ADDR_TRANS; do
	[ "$(setting $opt)" = y ] || problem "$opt is not y (rcm needs it)"
done
case $(setting CONFIG_INFINIBAND) in
y | m) ;;
*) problem "CONFIG_INFINIBAND is off: no ib_core to build against" ;;
esac
[ "$(setting CONFIG_CC_IS_CLANG)" = y ] ||
	problem "the kernel was not built with clang (LLVM=1): rcm's bindings are generated with the kernel's clang flags"
[ -f "$kdir/rust/libkernel.rmeta" ] ||
	problem "no rust/libkernel.rmeta: the kernel's Rust crates are not built"

# ib_core's private headers: rcm's rdma_cm ids are its struct rdma_id_private.
src=$kdir
[ -d "$kdir/source" ] && src=$(readlink -f "$kdir/source")
for h in cma_priv.h core_priv.h restrack.h; do
	[ -f "$src/drivers/infiniband/core/$h" ] ||
		problem "no $src/drivers/infiniband/core/$h: rcm needs ib_core's private headers (a full kernel source tree, not only the headers package)"
done

# The same rustc and bindgen as the kernel: its .rmeta files are rustc's.
want_rustc=$(setting CONFIG_RUSTC_VERSION_TEXT)
rustc=""
for candidate in ${RUSTC:-} /usr/bin/rustc "$(command -v rustc 2> /dev/null)"; do
	[ -n "$candidate" ] && [ -x "$candidate" ] || continue
	if [ "$("$candidate" --version 2> /dev/null)" = "$want_rustc" ]; then
		rustc=$candidate
		break
	fi
done
[ -n "$rustc" ] || problem "no rustc here is the kernel's ($want_rustc): set RUSTC=<that rustc>"
want_bindgen=$(setting CONFIG_BINDGEN_VERSION_TEXT)
have_bindgen=$(${BINDGEN:-bindgen} --version 2> /dev/null)
[ "$have_bindgen" = "$want_bindgen" ] ||
	problem "bindgen is '${have_bindgen:-missing}', the kernel was configured with '$want_bindgen' (set BINDGEN=)"

if [ $problems -gt 0 ]; then
	echo "check-kdir: $kdir cannot build rcm.ko ($problems problems above)" >&2
	exit 1
fi
echo "$rustc"
