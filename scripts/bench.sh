#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: connection setup/teardown rate through the in-tree C CM and
# through rcm, in the same boot of the release kernel (no checkers), two
# TCG guests; prints each run and the rcm/C ratio. RCM_BENCH_CONNS sets
# the connections per run (default 300). TCG on shared cores is noisy:
# compare ratios from one run, not absolute rates across runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavor=${RCM_BENCH_FLAVOR:-release}
out=$RCM_ROOT/out
mkdir -p "$out"
echo "rcm bench: preparing the $flavor kernel, module and guest image (cached after the first run)"
{
	"$RCM_ROOT/scripts/install-toolchain.sh"
	"$RCM_ROOT/scripts/build-kernel.sh" "$flavor"
	"$RCM_ROOT/scripts/build-module.sh" "$flavor"
	"$RCM_ROOT/scripts/build-selftests.sh"
	"$RCM_ROOT/scripts/mkguest.sh" "$flavor" "$out/bench-initrd" --profiler
} > "$out/bench-setup.log" 2>&1 || { tail -30 "$out/bench-setup.log"; exit 1; }
kdir=$(rcm_kernel_dir "$flavor")
exec "$RCM_ROOT/scripts/rcm-vm.py" --kernel "$kdir/bzImage" --initrd "$out/bench-initrd" \
	--guests 2 --modes both,both --timeout "${RCM_BENCH_TIMEOUT:-5400}" --guest-exec rcm-bench.sh --logdir "$out/bench"
