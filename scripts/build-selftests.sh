#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the rcm kselftests the way the kernel does: our directory is put
# beside a copy of the kernel's selftest framework (lib.mk, runner,
# ktap_helpers.sh) and installed with `make TARGETS=rcm install`, which
# also generates run_kselftest.sh and its test list. Output:
# $RCM_CACHE/selftests/install (copied into the guest as /kselftest).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ksrc=$RCM_CACHE/src/linux-source-6.12
tree=$RCM_CACHE/selftests/tree
inst=$RCM_CACHE/selftests/install
sel=$tree/tools/testing/selftests

rm -rf "$tree" "$inst"
mkdir -p "$sel"
# lib.mk and the selftests Makefile find the kernel's scripts/ from here.
ln -s "$ksrc/scripts" "$tree/scripts"
for f in Makefile lib.mk kselftest kselftest_install.sh run_kselftest.sh kselftest.h \
	kselftest_harness.h; do
	cp -a "$ksrc/tools/testing/selftests/$f" "$sel/"
done
cp -a "$RCM_ROOT/tools/testing/selftests/rcm" "$sel/rcm"
# rcm's uapi header, where the tests include it from in the repository.
mkdir -p "$tree/include/uapi/rdma"
cp "$RCM_ROOT/include/uapi/rdma/rcm_user_cm.h" "$tree/include/uapi/rdma/"
make -s -C "$sel" TARGETS=rcm INSTALL_PATH="$inst" install > "$RCM_CACHE/selftests/install.log" 2>&1 ||
	{ cat "$RCM_CACHE/selftests/install.log"; exit 1; }
[ -x "$inst/run_kselftest.sh" ] && [ -d "$inst/rcm" ] ||
	{ echo "build-selftests: install produced no runner"; exit 1; }
echo "build-selftests: installed $(grep -c '^rcm:' "$inst/kselftest-list.txt") tests to $inst"
