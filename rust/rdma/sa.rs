// SPDX-License-Identifier: GPL-2.0

//! rcm's client of ib_core's subnet administration (path queries for the
//! routes of IB ids).

use crate::bindings;

/// rcm's SA client, registered for as long as this value lives.
pub(crate) struct SaClient(());

impl SaClient {
    /// Registers the client.
    pub(crate) fn register() -> Self {
        // SAFETY: registers the helper's static client, once (module init).
        unsafe { bindings::rcm_h_sa_client_register() };
        SaClient(())
    }
}

impl Drop for SaClient {
    fn drop(&mut self) {
        // SAFETY: registered by `register`; waits for its queries to end.
        unsafe { bindings::rcm_h_sa_client_unregister() };
    }
}
