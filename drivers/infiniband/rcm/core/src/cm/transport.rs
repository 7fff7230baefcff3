// SPDX-License-Identifier: GPL-2.0

//! The transport a connection is for: as a REQ encodes it (transport
//! service type, extended transport type) and as the kernel names the
//! consumer's QP type. The one place both mappings live.

/// A connected transport service the CM sets up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// Reliable connected.
    #[default]
    Rc,
    /// Unreliable connected.
    Uc,
    /// Extended reliable connected.
    Xrc,
}

/// The kernel's QP types of connected transports (`enum ib_qp_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpType {
    /// `IB_QPT_RC`.
    Rc,
    /// `IB_QPT_UC`.
    Uc,
    /// `IB_QPT_XRC_INI`: the requesting side of XRC.
    XrcIni,
    /// `IB_QPT_XRC_TGT`: the accepting side of XRC.
    XrcTgt,
}

impl Transport {
    /// The transport a REQ names: service type 0 RC, 1 UC, 3 with
    /// extended type 1 XRC; `None` for anything else.
    pub const fn from_req(service_type: u8, extended_type: u8) -> Option<Self> {
        match (service_type, extended_type) {
            (0, _) => Some(Transport::Rc),
            (1, _) => Some(Transport::Uc),
            (3, 1) => Some(Transport::Xrc),
            _ => None,
        }
    }

    /// The REQ's (transport service type, extended transport type).
    pub const fn req_fields(self) -> (u8, u8) {
        match self {
            Transport::Rc => (0, 0),
            Transport::Uc => (1, 0),
            Transport::Xrc => (3, 1),
        }
    }

    /// The QP type of one side of the connection.
    pub const fn qp_type(self, passive: bool) -> QpType {
        match (self, passive) {
            (Transport::Rc, _) => QpType::Rc,
            (Transport::Uc, _) => QpType::Uc,
            (Transport::Xrc, false) => QpType::XrcIni,
            (Transport::Xrc, true) => QpType::XrcTgt,
        }
    }

    /// The transport a requester's QP type connects with; `None` for an
    /// XRC target, which only accepts.
    pub const fn of_requester(qp_type: QpType) -> Option<Self> {
        match qp_type {
            QpType::Rc => Some(Transport::Rc),
            QpType::Uc => Some(Transport::Uc),
            QpType::XrcIni => Some(Transport::Xrc),
            QpType::XrcTgt => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn req_fields_round_trip() {
        for t in [Transport::Rc, Transport::Uc, Transport::Xrc] {
            let (ty, ext) = t.req_fields();
            assert_eq!(Transport::from_req(ty, ext), Some(t));
            assert_eq!(Transport::of_requester(t.qp_type(false)), Some(t));
        }
        assert_eq!(Transport::from_req(2, 0), None);
        assert_eq!(Transport::from_req(3, 0), None);
        assert_eq!(Transport::of_requester(QpType::XrcTgt), None);
        assert_eq!(Transport::Xrc.qp_type(true), QpType::XrcTgt);
    }
}
