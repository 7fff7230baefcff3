#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make run`: build what is needed, start the two-guest fabric and show one
# connection's life cycle and an NVMe-oF session in plain words, as they
# happen. MODE picks the CM in both guests: ucma (default: rcm.ko alone,
# its own /dev/infiniband/rdma_cm included), rcm (the in-tree rdma_ucm on
# rcm), hybrid (rcm's ib_cm under the in-tree rdma_cm) or c.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mode=${MODE:-ucma}
out=$RCM_ROOT/out
log=$out/demo-setup.log
mkdir -p "$out"
: > "$log"
RCM_SAY="rcm demo: "
fail() { echo "rcm demo: setup failed; the whole log: $log"; exit 1; }
echo "rcm demo: preparing the toolchain, a $RCM_FLAVOR kernel, rcm.ko and the guest image (each cached after its first run)"
rcm_setup_step "toolchain (Debian packages, bindgen)" toolchain "$log" -- \
	"$RCM_ROOT/scripts/install-toolchain.sh" || fail
rcm_kernel_step "$RCM_FLAVOR" "$log" || fail
rcm_setup_step "rcm.ko (and its ib_cm-only variant)" module "$log" -- \
	"$RCM_ROOT/scripts/build-module.sh" "$RCM_FLAVOR" || fail
rcm_setup_step "kselftests and test modules" selftests "$log" -- \
	"$RCM_ROOT/scripts/build-selftests.sh" || fail
rcm_setup_step "guest image" guest "$log" -- \
	"$RCM_ROOT/scripts/mkguest.sh" "$RCM_FLAVOR" "$out/initrd" || fail
kdir=$(rcm_kernel_dir "$RCM_FLAVOR")
echo "rcm demo: starting two guests (CM mode $mode in both); what they do follows as it happens"
exec "$RCM_ROOT/scripts/rcm-vm.py" --kernel "$kdir/bzImage" --initrd "$out/initrd" \
	--guests 2 --modes "$mode,$mode" --timeout 300 --guest-exec rcm-demo.sh --logdir "$out/demo"
