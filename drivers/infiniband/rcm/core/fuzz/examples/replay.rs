// SPDX-License-Identifier: GPL-2.0

//! Runs `endpoint` inputs outside libFuzzer, with the decoded program and
//! the fabric's trace (a crash's input, or a seed):
//!
//!     cargo run --example replay -- artifacts/endpoint/crash-...
//!
//! `RCM_FUZZ_TRACE` is set for you; the events delivered are printed last.

fn main() {
    std::env::set_var("RCM_FUZZ_TRACE", "1");
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let (setup, ops) = rcm_core_fuzz::endpoint::decode(&data);
        println!("{path}: {setup:?}");
        for (i, op) in ops.iter().enumerate() {
            println!("  {i:>3} {op:?}");
        }
        let events = rcm_core_fuzz::endpoint::run(&data);
        let names: Vec<String> = events.iter().map(|(n, e)| format!("{n}:{e}")).collect();
        println!("events: {}", names.join(" "));
    }
}
