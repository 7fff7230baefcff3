// SPDX-License-Identifier: GPL-2.0

//! One `write()` to the rdma_ucm device into the frame check and the
//! command parser (see `rcm_core_fuzz::ucma`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rcm_core_fuzz::ucma::command(data);
});
