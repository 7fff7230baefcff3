#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make run`: build what is needed, start the two-guest fabric and show one
# connection's life cycle and an NVMe-oF session in plain words. MODE picks
# the CM in both guests: ucma (default: rcm.ko alone, its own
# /dev/infiniband/rdma_cm included), rcm (the in-tree rdma_ucm on rcm),
# hybrid (rcm's ib_cm under the in-tree rdma_cm) or c.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mode=${MODE:-ucma}
out=$RCM_ROOT/out
mkdir -p "$out"
trap 'echo "rcm demo: setup failed, see $out/demo-setup.log"; tail -30 "$out/demo-setup.log"' ERR
echo "rcm demo: preparing (toolchain, kernel, module, guest image; cached after the first run)"
"$RCM_ROOT/scripts/install-toolchain.sh" > "$out/demo-setup.log" 2>&1
"$RCM_ROOT/scripts/build-kernel.sh" "$RCM_FLAVOR" >> "$out/demo-setup.log" 2>&1
"$RCM_ROOT/scripts/build-module.sh" "$RCM_FLAVOR" >> "$out/demo-setup.log" 2>&1
"$RCM_ROOT/scripts/build-selftests.sh" >> "$out/demo-setup.log" 2>&1
"$RCM_ROOT/scripts/mkguest.sh" "$RCM_FLAVOR" "$out/initrd" >> "$out/demo-setup.log" 2>&1
kdir=$(rcm_kernel_dir "$RCM_FLAVOR")
exec "$RCM_ROOT/scripts/rcm-vm.py" --kernel "$kdir/bzImage" --initrd "$out/initrd" \
	--guests 2 --modes "$mode,$mode" --timeout 300 --guest-exec rcm-demo.sh --logdir "$out/demo"
