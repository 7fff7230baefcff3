#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Lists every kselftest's points as its KTAP results will number them,
# without a guest: each test runs in counting mode (RCM_LIST_POINTS=1,
# see rcm_lib.sh), in make test's configuration and, with --full, make
# test-full's. Counting must have no effect (a scenario function's
# commands run only through rcm_step), so the commands that change a
# system are stubbed here and any call of one fails the listing, as does
# a test that lists no point.
#   scripts/list-test-points.sh [--full] [--quiet] [test.sh ...]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
full=0 quiet=0
while [ $# -gt 0 ]; do
	case $1 in
	--full) full=1 ;;
	--quiet) quiet=1 ;;
	*) break ;;
	esac
	shift
done
src=$RCM_ROOT/tools/testing/selftests/rcm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/rcm" "$tmp/kselftest" "$tmp/bin"
cp "$src"/*.sh "$tmp/rcm/"
# The KTAP helpers the listing reaches (it prints no result).
cat > "$tmp/kselftest/ktap_helpers.sh" <<'KTAP'
KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
KTAP_CNT_PASS=0 KTAP_CNT_FAIL=0 KTAP_CNT_SKIP=0
ktap_print_header() { :; }
ktap_print_msg() { :; }
ktap_set_plan() { :; }
ktap_skip_all() { :; }
ktap_test_pass() { :; }
ktap_test_fail() { :; }
ktap_test_skip() { :; }
ktap_test_result() { :; }
ktap_finished() { :; }
KTAP
for c in modprobe rmmod insmod rdma ip socat nvme nvmetcli mount umount sysctl rping \
	ucmatose udaddy mckey cmtime rstream riostream rdma_server rdma_client exportfs; do
	printf '#!/bin/sh\necho "%s $*" >> "%s/effects"\n' "$c" "$tmp" > "$tmp/bin/$c"
	chmod +x "$tmp/bin/$c"
done
[ $# -gt 0 ] || set -- $(cd "$src" && grep -l '^# rcm-vm:' rcm_*.sh)
rc=0 total=0
for t in "$@"; do
	t=${t##*/}
	rm -f "$tmp/effects"
	list=$(cd "$tmp" && PATH="$tmp/bin:$PATH" RCM_LIST_POINTS=1 RCM_TEST_FULL=$full \
		RCM_PEER=10.0.0.2 RCM_MODE=rcm bash "rcm/$t" 2>&1 > /dev/null)
	n=$(printf '%s\n' "$list" | grep -c '^[0-9]* ')
	total=$((total + n))
	echo "$t: $n points"
	[ $quiet = 1 ] || printf '%s\n' "$list" | sed 's/^/  /'
	if [ "$n" = 0 ]; then
		echo "  no point listed"
		rc=1
	fi
	if [ -s "$tmp/effects" ]; then
		echo "  counting ran commands with effects (use rcm_step):"
		sed 's/^/    /' "$tmp/effects"
		rc=1
	fi
done
echo "$total points in $# tests"
exit $rc
