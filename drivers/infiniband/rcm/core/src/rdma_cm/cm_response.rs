// SPDX-License-Identifier: GPL-2.0

//! How long an id's peer may take to answer its REQ or SIDR_REQ and how
//! often the request is sent again: 6.12's rdma_cm fixes both
//! (`CMA_CM_RESPONSE_TIMEOUT`, `CMA_MAX_CM_RETRIES`), so that a connect to
//! an unreachable RoCE peer fails only after about 74 s. rcm keeps them per
//! id, settable by kernel consumers (`rcm_set_cm_response`) and through
//! `rdma_set_option` on rcm's own rdma_cm device.
//!
//! The REQ carries both values, so they also govern the rest of that
//! connection's exchanges: the peer waits for the RTU as long as the REQ
//! announced, and this side's DREQ is retried as its REQ was. A passive
//! id's exchanges follow the peer's REQ, as the IBA CM says.

use super::endpoint::{RdmaCm, RdmaCmError, RdmaId};
use crate::cm::store::Collections;
use crate::timer::IbaTime;

/// An id's CM response timeout and retry count.
///
/// INVARIANT: `timeout` fits the REQ's 5-bit field and `retries` its
/// 4-bit one (the constructor refuses anything else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmResponse {
    timeout: IbaTime,
    retries: u8,
}

impl CmResponse {
    /// rdma_cm's: 4.3 s (IBA time 20), 15 retries.
    pub const DEFAULT: Self = CmResponse {
        timeout: IbaTime::new(20),
        retries: 15,
    };
    /// The largest timeout exponent a REQ carries.
    pub const MAX_TIMEOUT: u8 = 31;
    /// The most retries a REQ can ask for.
    pub const MAX_RETRIES: u8 = 15;

    /// `timeout` (an IBA time exponent) and `retries`, if a REQ can carry
    /// them.
    pub const fn new(timeout: u8, retries: u8) -> Option<Self> {
        if timeout > Self::MAX_TIMEOUT || retries > Self::MAX_RETRIES {
            return None;
        }
        Some(CmResponse {
            timeout: IbaTime::new(timeout),
            retries,
        })
    }

    /// The CM response timeout the REQ announces, both ways.
    pub const fn timeout(self) -> IbaTime {
        self.timeout
    }

    /// How often a request is sent again before the id gives up.
    pub const fn retries(self) -> u8 {
        self.retries
    }

    /// The same retries with another timeout, if a REQ can carry it.
    pub const fn with_timeout(self, timeout: u8) -> Option<Self> {
        Self::new(timeout, self.retries)
    }

    /// The same timeout with another retry count, if a REQ can carry it.
    pub const fn with_retries(self, retries: u8) -> Option<Self> {
        Self::new(self.timeout.exponent(), retries)
    }

    /// How long a SIDR_REQ waits for its SIDR_REP: 6.12 takes its CM
    /// response timeout exponent x as 2^(x-8) ms.
    pub const fn sidr_timeout_ms(self) -> u32 {
        self.timeout.as_millis_approx()
    }
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// Sets `id`'s CM response timeout and retry count for the requests it
    /// sends from now on (a request already sent keeps its own).
    pub fn set_cm_response(&mut self, id: RdmaId, to: CmResponse) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        rec.cm_response = to;
        Ok(())
    }

    /// `id`'s CM response timeout and retry count.
    pub fn cm_response(&self, id: RdmaId) -> Option<CmResponse> {
        self.ids.get(&id).map(|rec| rec.cm_response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_req_carries() {
        assert_eq!(CmResponse::new(20, 15), Some(CmResponse::DEFAULT));
        assert!(CmResponse::new(31, 0).is_some());
        assert_eq!(CmResponse::new(32, 0), None);
        assert_eq!(CmResponse::new(0, 16), None);
    }

    #[test]
    fn sidr_waits_as_6_12_does() {
        assert_eq!(CmResponse::DEFAULT.sidr_timeout_ms(), 4096);
        assert_eq!(
            CmResponse::new(12, 1).map(CmResponse::sidr_timeout_ms),
            Some(16)
        );
        assert_eq!(
            CmResponse::new(3, 1).map(CmResponse::sidr_timeout_ms),
            Some(1)
        );
    }
}
