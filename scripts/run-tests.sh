#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make test`: everything from a fresh clone. Installs what is missing,
# builds (or reuses) the debug kernel, builds rcm.ko and the kselftests,
# runs the host unit tests and then every kselftest in QEMU guests. Prints
# one TAP line per test and a final "N passed, N failed" line; exits
# non-zero if anything failed or could not run.
#
#   --host-only     only the host unit tests
#   TESTS="a.sh b.sh" restricts the kselftests run (and leaves out the
#                   deliberate stall check, unless RCM_STALL_CHECK=1)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

host_only=0
[ "${1:-}" = --host-only ] && host_only=1
out=$RCM_ROOT/out
mkdir -p "$out"
passed=0 failed=0 skipped=0 n=0
t0=$(date +%s)

result() { # <status 0|1|4> <description>
	n=$((n + 1))
	case $1 in
	0) echo "ok $n $2"; passed=$((passed + 1)) ;;
	4) echo "ok $n $2 # SKIP"; skipped=$((skipped + 1)) ;;
	*) echo "not ok $n $2"; failed=$((failed + 1)) ;;
	esac
}

finish() {
	echo "# total time $(($(date +%s) - t0)) s"
	if [ $skipped -gt 0 ]; then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	[ $failed -eq 0 ] && [ $n -gt 0 ]
	exit
}

# Run a setup step, announced with how long it usually takes and its log;
# on failure report it as a failed test and stop.
RCM_SAY="# "
step() { # <description> <usual-key> <cmd...>
	local desc=$1 usual=$2 log
	shift 2
	log=$out/$(echo "$desc" | tr -c 'a-zA-Z0-9\n' '-').log
	: > "$log"
	if ! rcm_setup_step "$desc" "$usual" "$log" -- "$@"; then
		result 1 "$desc (log: $log)"
		finish
	fi
}

echo "TAP version 13"
step "install toolchain" toolchain "$RCM_ROOT/scripts/install-toolchain.sh"

# A host check as one test point: <name> <cmd...>; output kept in out/.
host_check() {
	local name=$1 log
	shift
	log=$out/host-$(echo "$name" | tr -c 'a-zA-Z0-9\n' '-').log
	if (cd "$RCM_ROOT" && "$@") > "$log" 2>&1; then
		grep -E '^test result:|^cm simulation:|^  [a-z_]+ +[0-9]+ execs' "$log" | sed 's/^/# /'
		result 0 "host: $name"
	else
		tail -60 "$log" | sed 's/^/# /'
		result 1 "host: $name (log: $log)"
	fi
}

# Kernel-side Rust files, formatted with the kernel's rustfmt settings.
module_rs() {
	find "$RCM_ROOT/drivers/infiniband/rcm" "$RCM_ROOT/rust" -name '*.rs' \
		-not -path '*/core/*' -not -name '*_generated.rs'
}

# Unit, vector, property and exchange tests, and the deterministic
# simulation over RCM_SIM_SEEDS seeds, optimized with overflow checks on.
export RCM_SIM_SEEDS=${RCM_SIM_SEEDS:-20000}
host_check "cargo test (simulation: $RCM_SIM_SEEDS seeds)" cargo test --workspace --profile sim --quiet -- --nocapture
host_check "layering (scripts/check-layers.py)" python3 "$RCM_ROOT/scripts/check-layers.py"
host_check "kselftest plans counted without effects (scripts/list-test-points.sh)" sh -c \
	"'$RCM_ROOT/scripts/list-test-points.sh' --quiet && '$RCM_ROOT/scripts/list-test-points.sh' --quiet --full"
host_check "bench host meter (scripts/test-host-meter.py)" python3 "$RCM_ROOT/scripts/test-host-meter.py"
host_check "rustfmt" sh -c "cargo fmt --all --check && rustfmt --check --edition 2021 $(module_rs | tr '\n' ' ')"
host_check "clippy" cargo clippy --workspace --all-targets --quiet -- -D warnings
# A short libFuzzer run of every rcm-core target from its seed corpus
# (make fuzz runs longer); fails on any crash.
host_check "fuzz: ${RCM_FUZZ_SECONDS:-20} s per target" "$RCM_ROOT/scripts/fuzz.sh" "${RCM_FUZZ_SECONDS:-20}"
[ $host_only = 1 ] && finish

klog=$out/build-$RCM_FLAVOR-kernel.log
: > "$klog"
rcm_kernel_step "$RCM_FLAVOR" "$klog" || { result 1 "build $RCM_FLAVOR kernel (log: $klog)"; finish; }
step "build rcm.ko" module "$RCM_ROOT/scripts/build-module.sh" "$RCM_FLAVOR"
# No function a user's call runs sets up a stack frame over 2 KiB, on the
# real build (rustc has no -Wframe-larger-than).
log=$out/check-stack.log
if python3 "$RCM_ROOT/scripts/check-stack.py" "$RCM_ROOT/drivers/infiniband/rcm/rcm.ko" 2048 \
	> "$log" 2>&1; then
	tail -1 "$log" | sed 's/^/# /'
	result 0 "module: stack frames of user paths within 2 KiB (scripts/check-stack.py)"
else
	tail -15 "$log" | sed 's/^/# /'
	result 1 "module: stack frames of user paths within 2 KiB (log: $log)"
fi
step "install kselftests" selftests "$RCM_ROOT/scripts/build-selftests.sh"
step "build guest image" guest "$RCM_ROOT/scripts/mkguest.sh" "$RCM_FLAVOR" "$out/initrd"

kdir=$(rcm_kernel_dir "$RCM_FLAVOR")
# The installed list is what the kselftest runner itself uses.
tests=${TESTS:-$(sed -n 's/^rcm://p' "$RCM_CACHE/selftests/install/kselftest-list.txt")}
[ -n "$tests" ] || { result 1 "no kselftests found"; finish; }
vm_ran=0
for t in $tests; do
	name=${t%.sh}
	# Scenarios marked full-only run in make test-full (the CI budget).
	if [ "${RCM_TEST_FULL:-0}" != 1 ] &&
		grep -q '^# rcm-test: full-only' "$RCM_ROOT/tools/testing/selftests/rcm/$t"; then
		echo "# vm: $name: make test-full only"
		continue
	fi
	rm -rf "$out/tests/$name"
	"$RCM_ROOT/scripts/rcm-vm.py" --kernel "$kdir/bzImage" --initrd "$out/initrd" \
		--logdir "$out/tests/$name" "$RCM_ROOT/tools/testing/selftests/rcm/$t"
	rc=$?
	[ $rc = 4 ] || vm_ran=$((vm_ran + 1))
	result $rc "vm: $name"
done
# A run in which every VM test skipped tested nothing in the kernel.
[ $vm_ran -gt 0 ] || result 1 "vm: every kselftest skipped"
# The stall detectors, sized for TCG on a busy host, still catch a real
# stall: a deliberate one must be reported in the guest and fail the run.
if [ -z "${TESTS:-}" ] || [ "${RCM_STALL_CHECK:-0}" = 1 ]; then
	log=$out/stall-check.log
	"$RCM_ROOT/scripts/rcm-vm.py" --kernel "$kdir/bzImage" --initrd "$out/initrd" \
		--guests 1 --timeout 600 --guest-exec rcm-stall.sh --logdir "$out/tests/stall" > "$log" 2>&1
	rc=$?
	grep -E 'rcm-stall:|first kernel report|rcm-vm: rcm-stall.sh:' "$log" | sed 's/^ */# /'
	if [ $rc = 1 ] && grep -q 'rcm-stall: all three reported' "$log" &&
		grep -q "FAIL (kernel bug report in the driver guest's log)" "$log"; then
		result 0 "vm: a deliberate stall is reported and fails its run"
	else
		result 1 "vm: a deliberate stall is reported and fails its run (log: $log)"
	fi
fi
# The demo (make run: rping and NVMe-oF on rcm alone) keeps working; it
# fails on any step it narrates. make test-full only (the CI budget):
# make test runs its rping and NVMe steps in rcm_ucma_dev, on the same
# helpers (rcm_nvme_lib.sh).
if [ -z "${TESTS:-}" ] && [ "${RCM_TEST_FULL:-0}" = 1 ]; then
	log=$out/demo-run.log
	if "$RCM_ROOT/scripts/demo.sh" > "$log" 2>&1; then
		result 0 "vm: make run (the demo on rcm)"
	else
		grep -v '^#   \[' "$log" | tail -30 | sed 's/^/# /'
		result 1 "vm: make run (the demo on rcm) (log: $log)"
	fi
fi
finish
