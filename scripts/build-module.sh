#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build rcm.ko (and later the samples) against the cached kernel tree of a
# flavor. Extra arguments go to kbuild (e.g. clean, V=1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
flavor=${1:-$RCM_FLAVOR}
shift || true
kdir=$(rcm_kernel_dir "$flavor")
[ -f "$kdir/.complete" ] || "$RCM_ROOT/scripts/build-kernel.sh" "$flavor"
goal=${1:-modules}
[ $# -gt 0 ] && shift
make -C "$kdir/build" M="$RCM_ROOT" "${RCM_KMAKE_ARGS[@]}" -j"$(nproc)" "$goal" "$@"
