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
