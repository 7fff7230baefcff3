#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make fuzz`: runs every libFuzzer target of rcm-core (cargo-fuzz crate
# drivers/infiniband/rcm/core/fuzz) for a while and reports what happened.
#
#   scripts/fuzz.sh [seconds-per-target]        default 60
#
# Installs cargo-fuzz if it is missing, builds the targets, and runs each
# one from its seeds (fuzz/corpus/<target>, kept in git) plus a working
# corpus (fuzz/work/<target>, not in git, grows from run to run). Prints
# one line per target: executions, exec/s, coverage, corpus size, and
# whether it crashed. A crashing input is copied to $RCM_FUZZ_CRASHES and
# the script exits non-zero; replay one with
#   (cd drivers/infiniband/rcm/core/fuzz && cargo run --example replay -- FILE)
# for endpoint inputs (or `cargo fuzz run <target> FILE` for either).
#
# Environment:
#   RCM_FUZZ_TARGETS     targets to run (default: all, from `cargo fuzz list`)
#   RCM_FUZZ_SANITIZER   none (default) or address. rcm-core is
#                        #![forbid(unsafe_code)], so AddressSanitizer can
#                        only catch bugs in std; it costs ~3x in speed.
#                        Debug assertions and overflow checks are always on.
#   RCM_FUZZ_CRASHES     where crashing inputs are copied
#                        (default out/fuzz-crashes)
#   RCM_FUZZ_ARGS        extra libFuzzer flags (e.g. "-jobs=2 -workers=2")
#
# cargo-fuzz wants a nightly compiler for its -Z flags; the stable rustc
# here accepts them with RUSTC_BOOTSTRAP=1 (set below, for these builds
# only). No nightly toolchain is needed or fetched.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

CARGO_FUZZ_VERSION=0.13.2
secs=${1:-60}
case $secs in
'' | *[!0-9]*)
	echo "usage: $0 [seconds-per-target]" >&2
	exit 2
	;;
esac
san=${RCM_FUZZ_SANITIZER:-none}
crashes=${RCM_FUZZ_CRASHES:-$RCM_ROOT/out/fuzz-crashes}
core=$RCM_ROOT/drivers/infiniband/rcm/core
fuzz=$core/fuzz
logs=$RCM_ROOT/out/fuzz
mkdir -p "$logs"

if ! cargo fuzz --version 2>/dev/null | grep -q " $CARGO_FUZZ_VERSION"; then
	echo "fuzz: cargo install cargo-fuzz $CARGO_FUZZ_VERSION"
	cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked || exit 1
fi

export RUSTC_BOOTSTRAP=1
cd "$core" || exit 1
echo "fuzz: building (sanitizer $san)"
if ! cargo fuzz build -s "$san" > "$logs/build.log" 2>&1; then
	tail -40 "$logs/build.log"
	echo "fuzz: build failed (log: $logs/build.log)"
	exit 1
fi
targets=${RCM_FUZZ_TARGETS:-$(cargo fuzz list)}
[ -n "$targets" ] || { echo "fuzz: no fuzz targets found" >&2; exit 1; }

failed=0
summary=()
for t in $targets; do
	mkdir -p "$fuzz/work/$t" "$fuzz/corpus/$t" "$fuzz/artifacts/$t"
	before=$(ls "$fuzz/artifacts/$t")
	log=$logs/$t.log
	echo "fuzz: $t for ${secs}s (log: $log)"
	start=$(date +%s)
	# New inputs go to the first corpus directory (work/), never to the
	# seeds. -timeout: one input running 10 s is a hang.
	# shellcheck disable=SC2086
	cargo fuzz run -s "$san" "$t" "$fuzz/work/$t" "$fuzz/corpus/$t" -- \
		-max_total_time="$secs" -timeout=10 -print_final_stats=1 \
		${RCM_FUZZ_ARGS:-} > "$log" 2>&1
	rc=$?
	wall=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
	[ -z "$execs" ] && execs=$(echo "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
	new=$(comm -13 <(echo "$before") <(ls "$fuzz/artifacts/$t"))
	status=ok
	if [ $rc -ne 0 ] || [ -n "$new" ]; then
		failed=1
		status="CRASH (exit $rc)"
		mkdir -p "$crashes/$t"
		for f in $new; do
			cp "$fuzz/artifacts/$t/$f" "$crashes/$t/"
			status="$status $crashes/$t/$f"
		done
		grep -E -m1 -A3 "panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer" "$log" | sed 's/^/  /'
	fi
	rate=$((${execs:-0} / (wall > 0 ? wall : 1)))
	summary+=("$(printf '%-10s %12s execs %8s/s %6ss  cov %-6s ft %-7s corpus %-12s %s' \
		"$t" "${execs:-?}" "$rate" "$wall" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$status")")
done

echo "fuzz: summary (sanitizer $san, ${secs}s per target)"
printf '  %s\n' "${summary[@]}"
if [ $failed -ne 0 ]; then
	echo "fuzz: crash found; inputs under $crashes"
	exit 1
fi
