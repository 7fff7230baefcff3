// SPDX-License-Identifier: GPL-2.0

//! Arbitrary bytes into `CmMad::parse`; whatever parses must survive
//! `emit` and parse back to the same value (see `rcm_core_fuzz::roundtrip`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rcm_core_fuzz::roundtrip(data);
});
