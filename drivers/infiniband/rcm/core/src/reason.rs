// SPDX-License-Identifier: GPL-2.0

//! Status codes carried by CM messages: REJ reasons, APR statuses and SIDR
//! statuses (IBTA Vol 1 ch. 12). Every value round-trips: codes this table
//! does not know are kept as `Unknown(value)`, never rejected, so a newer
//! peer's reason reaches the consumer intact.

macro_rules! status_codes {
    (
        $(#[$meta:meta])*
        $name:ident($repr:ty, unknown: $unknown:literal) {
            $($(#[$vmeta:meta])* $variant:ident = $value:literal => $text:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this table does not name, carried as received.
            Unknown($repr),
        }

        impl $name {
            /// Every named code, in wire-value order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The code for a wire value.
            pub const fn from_wire(value: $repr) -> Self {
                match value {
                    $($value => $name::$variant,)*
                    other => $name::Unknown(other),
                }
            }

            /// The wire value.
            pub const fn to_wire(self) -> $repr {
                match self {
                    $($name::$variant => $value,)*
                    $name::Unknown(other) => other,
                }
            }

            /// A short human-readable description.
            pub const fn message(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                    $name::Unknown(_) => $unknown,
                }
            }

            /// [`Self::message`] with a terminating NUL, for C callers.
            pub const fn message_nul(self) -> &'static str {
                match self {
                    $($name::$variant => concat!($text, "\0"),)*
                    $name::Unknown(_) => concat!($unknown, "\0"),
                }
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self {
                    $name::Unknown(v) => write!(f, "{} {}", $unknown, v),
                    _ => f.write_str(self.message()),
                }
            }
        }
    };
}

status_codes! {
    /// Why a REQ, REP or other message was rejected (REJ "reason", 16 bits).
    /// The texts are 6.12's `ibcm_reject_msg()` strings, which consumers
    /// print.
    RejectReason(u16, unknown: "unrecognized reason") {
        /// No QP available.
        NoQp = 1 => "no QP",
        /// No EE context available.
        NoEec = 2 => "no EEC",
        /// Out of resources.
        NoResources = 3 => "no resources",
        /// The peer gave up waiting for a reply.
        Timeout = 4 => "timeout",
        /// The request is not supported.
        Unsupported = 5 => "unsupported",
        /// The communication id is not valid.
        InvalidCommId = 6 => "invalid comm ID",
        /// The communication instance is not valid.
        InvalidCommInstance = 7 => "invalid comm instance",
        /// Nobody listens on the service id.
        InvalidServiceId = 8 => "invalid service ID",
        /// The transport service type is not valid.
        InvalidTransportType = 9 => "invalid transport type",
        /// A stale connection was found (the QP is still in use).
        StaleConn = 10 => "stale conn",
        /// The RD channel does not exist.
        RdcNotExist = 11 => "RDC not exist",
        /// The primary GID is rejected.
        InvalidGid = 12 => "invalid GID",
        /// The primary LID is rejected.
        InvalidLid = 13 => "invalid LID",
        /// The primary SL is rejected.
        InvalidSl = 14 => "invalid SL",
        /// The primary traffic class is rejected.
        InvalidTrafficClass = 15 => "invalid traffic class",
        /// The primary hop limit is rejected.
        InvalidHopLimit = 16 => "invalid hop limit",
        /// The primary packet rate is rejected.
        InvalidPacketRate = 17 => "invalid packet rate",
        /// The alternate GID is rejected.
        InvalidAltGid = 18 => "invalid alt GID",
        /// The alternate LID is rejected.
        InvalidAltLid = 19 => "invalid alt LID",
        /// The alternate SL is rejected.
        InvalidAltSl = 20 => "invalid alt SL",
        /// The alternate traffic class is rejected.
        InvalidAltTrafficClass = 21 => "invalid alt traffic class",
        /// The alternate hop limit is rejected.
        InvalidAltHopLimit = 22 => "invalid alt hop limit",
        /// The alternate packet rate is rejected.
        InvalidAltPacketRate = 23 => "invalid alt packet rate",
        /// The CM is on another port (redirect).
        PortCmRedirect = 24 => "port CM redirect",
        /// Use another port (redirect).
        PortRedirect = 25 => "port redirect",
        /// The path MTU is rejected.
        InvalidMtu = 26 => "invalid MTU",
        /// Not enough responder resources.
        InsufficientRespResources = 27 => "insufficient resp resources",
        /// Rejected by the consumer; details in the private data.
        ConsumerDefined = 28 => "consumer defined",
        /// The RNR retry count is rejected.
        InvalidRnrRetry = 29 => "invalid RNR retry",
        /// The local communication id is already in use.
        DuplicateLocalCommId = 30 => "duplicate local comm ID",
        /// The CM class version is not supported.
        InvalidClassVersion = 31 => "invalid class version",
        /// The primary flow label is rejected.
        InvalidFlowLabel = 32 => "invalid flow label",
        /// The alternate flow label is rejected.
        InvalidAltFlowLabel = 33 => "invalid alt flow label",
        /// A vendor option (ECE) is not supported.
        VendorOptionNotSupported = 35 => "vendor option is not supported",
    }
}

status_codes! {
    /// The answer to a LAP (APR "AP status", 8 bits).
    AprStatus(u8, unknown: "unrecognized status") {
        /// The alternate path was loaded.
        Success = 0 => "alternate path loaded",
        /// The communication id is not valid.
        InvalidCommId = 1 => "invalid communication id",
        /// Alternate paths are not supported.
        Unsupported = 2 => "not supported",
        /// Rejected.
        Reject = 3 => "rejected",
        /// Use another port (redirect).
        Redirect = 4 => "redirect",
        /// The proposed path is already the current one.
        IsCurrent = 5 => "path is current",
        /// The QPN or EECN does not match.
        InvalidQpnEecn = 6 => "invalid QPN/EECN",
        /// The LID is rejected.
        InvalidLid = 7 => "invalid LID",
        /// The GID is rejected.
        InvalidGid = 8 => "invalid GID",
        /// The flow label is rejected.
        InvalidFlowLabel = 9 => "invalid flow label",
        /// The traffic class is rejected.
        InvalidTclass = 10 => "invalid traffic class",
        /// The hop limit is rejected.
        InvalidHopLimit = 11 => "invalid hop limit",
        /// The packet rate is rejected.
        InvalidPacketRate = 12 => "invalid packet rate",
        /// The SL is rejected.
        InvalidSl = 13 => "invalid SL",
    }
}

status_codes! {
    /// The answer to a SIDR_REQ (SIDR_REP "status", 8 bits).
    SidrStatus(u8, unknown: "unrecognized status") {
        /// The service was resolved.
        Success = 0 => "service resolved",
        /// The service id is not supported.
        Unsupported = 1 => "service id not supported",
        /// Rejected by the service provider.
        Reject = 2 => "rejected",
        /// No QP is available for the service.
        NoQp = 3 => "no QP available",
        /// Use another CM (redirect).
        Redirect = 4 => "redirect",
        /// The class version is not supported.
        UnsupportedVersion = 5 => "unsupported class version",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reject_reasons_cover_1_to_33_and_35() {
        let values: [u16; 34] = core::array::from_fn(|i| RejectReason::ALL[i].to_wire());
        let mut expected = [0u16; 34];
        for (i, v) in (1..=33).chain(35..=35).enumerate() {
            expected[i] = v;
        }
        assert_eq!(values, expected);
        assert_eq!(RejectReason::ALL.len(), 34);
    }

    #[test]
    fn every_value_round_trips() {
        for v in 0..=u16::MAX {
            assert_eq!(RejectReason::from_wire(v).to_wire(), v);
        }
        for v in 0..=u8::MAX {
            assert_eq!(AprStatus::from_wire(v).to_wire(), v);
            assert_eq!(SidrStatus::from_wire(v).to_wire(), v);
        }
    }

    #[test]
    fn unknown_values_are_carried() {
        assert_eq!(RejectReason::from_wire(34), RejectReason::Unknown(34));
        assert_eq!(RejectReason::from_wire(0), RejectReason::Unknown(0));
        assert_eq!(AprStatus::from_wire(14), AprStatus::Unknown(14));
        assert_eq!(SidrStatus::from_wire(6), SidrStatus::Unknown(6));
    }

    #[test]
    fn named_values() {
        assert_eq!(RejectReason::from_wire(8), RejectReason::InvalidServiceId);
        assert_eq!(RejectReason::from_wire(10), RejectReason::StaleConn);
        assert_eq!(RejectReason::from_wire(28), RejectReason::ConsumerDefined);
        assert_eq!(
            RejectReason::from_wire(30),
            RejectReason::DuplicateLocalCommId
        );
        assert_eq!(AprStatus::ALL.len(), 14);
        assert_eq!(AprStatus::from_wire(13), AprStatus::InvalidSl);
        assert_eq!(SidrStatus::ALL.len(), 6);
        assert_eq!(SidrStatus::from_wire(5), SidrStatus::UnsupportedVersion);
    }

    #[test]
    fn every_code_has_a_message() {
        for r in RejectReason::ALL {
            assert!(!r.message().is_empty());
        }
        for s in AprStatus::ALL {
            assert!(!s.message().is_empty());
        }
        for s in SidrStatus::ALL {
            assert!(!s.message().is_empty());
        }
        // 6.12's ibcm_reject_msg() strings.
        assert_eq!(
            RejectReason::InvalidServiceId.message(),
            "invalid service ID"
        );
        assert_eq!(
            RejectReason::from_wire(34).message_nul(),
            "unrecognized reason\0"
        );
    }
}
