// SPDX-License-Identifier: GPL-2.0

//! Programs of API calls, raw and forged MADs and time steps over 2-3
//! endpoints on the simulated fabric, auditing every endpoint after every
//! step (see `rcm_core_fuzz::endpoint`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rcm_core_fuzz::endpoint::run(data);
});
