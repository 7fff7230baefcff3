// SPDX-License-Identifier: GPL-2.0

//! Harness code for rcm-core's libFuzzer targets, shared with the seed
//! corpus generator (`examples/gen_corpus.rs`):
//!
//! - [`roundtrip`]: a received MAD that parses must emit back to bytes that
//!   parse to the same value (target `parse_mad`).
//! - [`endpoint`]: the input is a program of API calls, raw and forged MADs
//!   and time steps over 2-3 endpoints on the simulated fabric; every
//!   endpoint's `audit()` runs after every operation (target `endpoint`).
//! - [`ucma::command`]: one `write()` to the rdma_ucm device into the
//!   frame check and command parser (target `ucma_command`).
//! - [`seeds`]: the seed images and programs.
//!
//! Nothing here panics on any input except when rcm-core breaks one of
//! its invariants.

pub mod endpoint;
pub mod input;
pub mod seeds;
pub mod ucma;

use rcm_core::wire::field::{Mad, MAD_SIZE};
use rcm_core::wire::CmMad;

/// `CmMad::parse` never panics; when it accepts `bytes`, `emit` gives a
/// MAD that parses to the same value and emits to the same bytes again.
/// An input that is not one whole MAD is also tried padded (or cut) to
/// 256 bytes, so that every input reaches the message parsers.
pub fn roundtrip(bytes: &[u8]) {
    check_one(bytes);
    if bytes.len() != MAD_SIZE {
        let mut mad = [0u8; MAD_SIZE];
        let n = bytes.len().min(MAD_SIZE);
        mad[..n].copy_from_slice(&bytes[..n]);
        check_one(&mad);
    }
}

fn check_one(bytes: &[u8]) {
    let Ok(parsed) = CmMad::parse(bytes) else {
        return;
    };
    let mut out: Mad = [0; MAD_SIZE];
    parsed.emit(&mut out);
    let again = match CmMad::parse(&out) {
        Ok(m) => m,
        Err(e) => panic!("emit of an accepted MAD does not parse: {e:?}\n{parsed:?}"),
    };
    assert_eq!(again, parsed, "parse(emit(x)) != x");
    let mut out2: Mad = [0; MAD_SIZE];
    again.emit(&mut out2);
    assert_eq!(out[..], out2[..], "emit is not stable");
    // Emission writes only what the fields hold: every byte it sets to a
    // non-zero value was non-zero in the input (reserved bits are cleared,
    // never invented).
    for (i, (&o, &b)) in out.iter().zip(bytes).enumerate() {
        assert_eq!(o & !b, 0, "emit set bits at byte {i} that the input lacks");
    }
}
