#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Records the in-tree C CM's MADs between two guests (CM mode c) into a
# pcap: rping, ucmatose, a REJ for a missing listener, udaddy (SIDR). The
# result is the source of the "real MAD" conformance vectors in
# drivers/infiniband/rcm/core/tests/captures/.
#
# usage: scripts/capture-cm.sh [output.pcap]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pcap=$(realpath -m "${1:-$RCM_ROOT/drivers/infiniband/rcm/core/tests/captures/c-cm.pcap}")
out=$RCM_ROOT/out
mkdir -p "$out" "$(dirname "$pcap")"
"$RCM_ROOT/scripts/build-kernel.sh" debug
"$RCM_ROOT/scripts/build-module.sh" debug
"$RCM_ROOT/scripts/build-selftests.sh"
"$RCM_ROOT/scripts/mkguest.sh" debug "$out/initrd"
kdir=$(rcm_kernel_dir debug)
rm -f "$pcap"
"$RCM_ROOT/scripts/rcm-vm.py" --kernel "$kdir/bzImage" --initrd "$out/initrd" \
	--guests 2 --modes c,c --timeout 300 --guest-exec rcm-capture.sh \
	--logdir "$out/capture" --pcap "$pcap"
echo "capture-cm: $(stat -c %s "$pcap") bytes in $pcap"
