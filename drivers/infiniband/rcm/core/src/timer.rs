// SPDX-License-Identifier: GPL-2.0

//! Time values of the InfiniBand CM (IBTA Vol 1 ch. 12).
//!
//! On the wire a duration is a 5-bit exponent `x` meaning 4.096 us * 2^x
//! (packet lifetime, CM response timeout, local ACK timeout, MRA service
//! timeout). The CM turns those into its retry and timewait deadlines. The
//! millisecond arithmetic here reproduces the in-tree C CM, so rcm's timing
//! on the wire matches a C peer's expectations.

/// A 5-bit IBA time exponent: 4.096 us * 2^value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IbaTime(u8);

impl IbaTime {
    /// Largest encodable exponent (5 bits): about 2.4 hours.
    pub const MAX: IbaTime = IbaTime(31);

    /// The exponent `value`; bits above the 5-bit field are dropped, as a
    /// receiver of the field on the wire would.
    pub const fn new(value: u8) -> Self {
        IbaTime(value & 0x1f)
    }

    /// The raw 5-bit exponent.
    pub const fn exponent(self) -> u8 {
        self.0
    }

    /// The exact duration in nanoseconds: 4096 ns << exponent.
    pub const fn as_nanos(self) -> u64 {
        4096u64 << self.0
    }

    /// The duration in milliseconds as the C CM approximates it:
    /// 2^(x-8) ms (4.096 us * 2^8 is about 1 ms), at least 1 ms.
    pub const fn as_millis_approx(self) -> u32 {
        1u32 << self.0.saturating_sub(8)
    }

    /// The smallest exponent whose duration is at least `nanos`
    /// (saturating at [`IbaTime::MAX`]).
    pub const fn at_least_nanos(nanos: u64) -> Self {
        let mut x = 0u8;
        while x < 31 && (4096u64 << x) < nanos {
            x += 1;
        }
        IbaTime(x)
    }
}

/// The local ACK timeout for a path: how long a sender waits for an ACK,
/// from the HCA's ACK delay and the path's packet lifetime (both IBA time
/// exponents). The round trip is two packet lifetimes plus the ACK delay,
/// i.e. about 2^(plt+1) + 2^delay; like the C CM, this rounds the sum of
/// two powers of two up to the next exponent only when they are close.
pub const fn ack_timeout(ca_ack_delay: IbaTime, packet_life_time: IbaTime) -> IbaTime {
    let round_trip = packet_life_time.0 + 1;
    let delay = ca_ack_delay.0;
    let x = if round_trip >= delay {
        round_trip + (delay + 1 >= round_trip) as u8
    } else {
        delay + (round_trip + 1 >= delay) as u8
    };
    if x > 31 {
        IbaTime::MAX
    } else {
        IbaTime(x)
    }
}

/// How long the active side waits for a REP (or MRA) after sending a REQ:
/// the packet's round trip plus the responder's announced CM response time.
pub const fn req_response_timeout_ms(
    packet_life_time: IbaTime,
    remote_cm_response: IbaTime,
) -> u32 {
    packet_life_time
        .as_millis_approx()
        .saturating_mul(2)
        .saturating_add(remote_cm_response.as_millis_approx())
}

/// How long the passive side waits for the RTU (or DREP) after sending a
/// REP (or DREQ): the CM response time the active side announced in its
/// REQ (the REQ's "local CM response timeout").
pub const fn passive_response_timeout_ms(req_local_cm_response: IbaTime) -> u32 {
    req_local_cm_response.as_millis_approx()
}

/// The new deadline after the peer's MRA: its announced service time plus
/// the path's ACK timeout.
pub const fn mra_timeout_ms(service_timeout: IbaTime, ack_timeout: IbaTime) -> u32 {
    service_timeout
        .as_millis_approx()
        .saturating_add(ack_timeout.as_millis_approx())
}

/// How long a connection stays in TIMEWAIT before its QPN and comm id may
/// be reused: one ACK timeout of the path, so that stray packets of the old
/// connection have died out.
pub const fn timewait_ms(ack_timeout: IbaTime) -> u32 {
    ack_timeout.as_millis_approx()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_is_4096ns_times_power_of_two() {
        assert_eq!(IbaTime::new(0).as_nanos(), 4_096);
        assert_eq!(IbaTime::new(8).as_nanos(), 1_048_576);
        assert_eq!(IbaTime::new(20).as_nanos(), 4_294_967_296); // ~4.3 s
        assert_eq!(IbaTime::MAX.as_nanos(), 4096u64 << 31);
    }

    #[test]
    fn new_keeps_only_five_bits() {
        assert_eq!(IbaTime::new(0xff).exponent(), 31);
        assert_eq!(IbaTime::new(0x20).exponent(), 0);
    }

    #[test]
    fn millis_approximation_matches_the_c_cm() {
        assert_eq!(IbaTime::new(0).as_millis_approx(), 1);
        assert_eq!(IbaTime::new(8).as_millis_approx(), 1);
        assert_eq!(IbaTime::new(9).as_millis_approx(), 2);
        assert_eq!(IbaTime::new(20).as_millis_approx(), 4096);
        assert_eq!(IbaTime::MAX.as_millis_approx(), 1 << 23);
    }

    #[test]
    fn at_least_rounds_up_and_saturates() {
        assert_eq!(IbaTime::at_least_nanos(0).exponent(), 0);
        assert_eq!(IbaTime::at_least_nanos(4_096).exponent(), 0);
        assert_eq!(IbaTime::at_least_nanos(4_097).exponent(), 1);
        assert_eq!(IbaTime::at_least_nanos(1_000_000).exponent(), 8);
        assert_eq!(IbaTime::at_least_nanos(u64::MAX), IbaTime::MAX);
        for x in 0..=31 {
            let t = IbaTime::new(x);
            assert_eq!(IbaTime::at_least_nanos(t.as_nanos()), t);
        }
    }

    #[test]
    fn ack_timeout_cases() {
        // RoCE through rdma_cm: packet lifetime 16, rxe reports ACK delay 15.
        assert_eq!(
            ack_timeout(IbaTime::new(15), IbaTime::new(16)).exponent(),
            17
        );
        // delay far below the round trip: the round trip alone
        assert_eq!(
            ack_timeout(IbaTime::new(0), IbaTime::new(16)).exponent(),
            17
        );
        // close values: sum of two near powers rounds up
        assert_eq!(
            ack_timeout(IbaTime::new(17), IbaTime::new(16)).exponent(),
            18
        );
        // delay dominates
        assert_eq!(
            ack_timeout(IbaTime::new(25), IbaTime::new(3)).exponent(),
            25
        );
        assert_eq!(ack_timeout(IbaTime::new(5), IbaTime::new(3)).exponent(), 6);
        // never above 31
        assert_eq!(ack_timeout(IbaTime::MAX, IbaTime::MAX), IbaTime::MAX);
    }

    #[test]
    fn ack_timeout_covers_the_round_trip() {
        for d in 0..=31u8 {
            for p in 0..=30u8 {
                let t = ack_timeout(IbaTime::new(d), IbaTime::new(p));
                let need = IbaTime::new(p + 1)
                    .as_nanos()
                    .max(IbaTime::new(d).as_nanos());
                assert!(
                    t.as_nanos() >= need,
                    "delay {d} plt {p} -> {}",
                    t.exponent()
                );
            }
        }
    }

    #[test]
    fn deadlines() {
        // rdma_cm on RoCE: packet lifetime 16, CM response timeout 20.
        assert_eq!(
            req_response_timeout_ms(IbaTime::new(16), IbaTime::new(20)),
            2 * 256 + 4096
        );
        assert_eq!(
            mra_timeout_ms(IbaTime::new(24), IbaTime::new(17)),
            65_536 + 512
        );
        assert_eq!(passive_response_timeout_ms(IbaTime::new(20)), 4096);
        // about 512 ms of timewait on rxe, as measured with the C CM
        assert_eq!(
            timewait_ms(ack_timeout(IbaTime::new(15), IbaTime::new(16))),
            512
        );
        assert_eq!(
            req_response_timeout_ms(IbaTime::MAX, IbaTime::MAX),
            3 * (1 << 23)
        );
    }
}
