#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench-host`: rcm-core's host benchmark, one core, no kernel or VM
# (drivers/infiniband/rcm/core/benches/host.rs): parse + emit of every CM
# message type, and two endpoints driven back to back through whole
# connection life cycles with 1,000 and 10,000 connections at once.
#
#   scripts/bench-host.sh            prints the table
#   RCM_BENCH_SECS=5 scripts/bench-host.sh   longer lines (default 3 s)
#
# Numbers depend on the machine and on what else runs on it: compare runs
# made on one idle machine.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RCM_ROOT"
cargo bench --quiet -p rcm-core --features std --bench host
command -v valgrind > /dev/null || { echo "rdma_cm cycle: no valgrind, not counted"; exit 0; }
conns=${RCM_CYCLE_CONNS:-200}
bin=$(cargo bench --quiet -p rcm-core --features std --bench rdma_cycle --no-run --message-format=json 2> /dev/null |
	sed -n 's/.*"executable":"\([^"]*rdma_cycle[^"]*\)".*/\1/p' | tail -1)
[ -x "$bin" ] || { echo "rdma_cycle: no benchmark binary" >&2; exit 1; }
out=$(mktemp -d)
valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" "$conns" > "$out/log" 2>&1 ||
	{ cat "$out/log" >&2; rm -rf "$out"; exit 1; }
ir=$(sed -n 's/^summary: *//p' "$out/cg")
rm -rf "$out"
echo "rdma_cm cycle ($conns connections one at a time, both sides and the simulation):" \
	"$((ir / conns)) instructions per connection"
