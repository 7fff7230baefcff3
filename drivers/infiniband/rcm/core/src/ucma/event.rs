// SPDX-License-Identifier: GPL-2.0

//! The event GET_EVENT hands to userspace (`struct rdma_ucm_event_resp`,
//! 336 bytes): which context or membership it is for, the rdma_cm event
//! number and status, and the connection (RC) or datagram (UD) parameters,
//! written at the offsets librdmacm reads.

use super::command::{ConnParam, Ece, PrivateData};
use super::layout::{conn_param, response};

/// `struct ib_uverbs_ah_attr`, as the kernel fills it for the device.
pub const AH_ATTR_SIZE: usize = 32;

/// Offsets inside `struct rdma_ucm_event_resp`.
mod at {
    pub const UID: usize = 0;
    pub const ID: usize = 8;
    pub const EVENT: usize = 12;
    pub const STATUS: usize = 16;
    /// The parameter union.
    pub const PARAM: usize = 20;
    /// `struct rdma_ucm_ud_param`: qp_num, qkey, ah_attr, private data
    /// and its length.
    pub const UD_QP_NUM: usize = PARAM;
    pub const UD_QKEY: usize = PARAM + 4;
    pub const UD_AH_ATTR: usize = PARAM + 8;
    pub const UD_PRIVATE_DATA: usize = UD_AH_ATTR + super::AH_ATTR_SIZE;
    pub const UD_PRIVATE_DATA_LEN: usize = UD_PRIVATE_DATA + super::MAX_PRIVATE_DATA;
    /// `struct rdma_ucm_ece`, after the union and a reserved word.
    pub const ECE: usize = 328;
}
use super::layout::MAX_PRIVATE_DATA;

/// A datagram id's event parameters (`struct rdma_ucm_ud_param`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdEvent {
    /// The remote QP number (0xFFFFFF for a multicast group).
    pub qp_num: u32,
    /// The Q_Key.
    pub qkey: u32,
    /// The address handle attributes, already in user layout.
    pub ah_attr: [u8; AH_ATTR_SIZE],
    /// Private data of the SIDR_REQ or SIDR_REP.
    pub private_data: PrivateData,
}

/// The parameter union of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventParam {
    /// For an id whose QP type is not UD (`qkey` is not reported:
    /// 6.12 leaves it 0 in events).
    Conn(ConnParam),
    /// For a UD id.
    Ud(UdEvent),
}

/// One event as userspace receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventResp {
    /// The handle userspace gave the context (or the membership).
    pub uid: u64,
    /// The context (or membership, or new context of a request).
    pub id: u32,
    /// `enum rdma_cm_event_type`.
    pub event: u32,
    /// The status (a negative errno, or a reject reason).
    pub status: i32,
    /// Parameters.
    pub param: EventParam,
    /// ECE options of the peer.
    pub ece: Ece,
}

impl EventResp {
    /// Writes the event as `struct rdma_ucm_event_resp` into `out` (every
    /// byte of it), where the caller keeps the record; the caller copies
    /// out as much as userspace asked for (at least
    /// [`response::EVENT_MIN`]).
    pub fn write_to(&self, out: &mut [u8; response::EVENT]) {
        out.fill(0);
        let out = out.as_mut_slice();
        put(out, at::UID, &self.uid.to_ne_bytes());
        put(out, at::ID, &self.id.to_ne_bytes());
        put(out, at::EVENT, &self.event.to_ne_bytes());
        put(out, at::STATUS, &self.status.to_ne_bytes());
        match &self.param {
            EventParam::Conn(c) => {
                let base = at::PARAM;
                put(out, base + conn_param::QP_NUM, &c.qp_num.to_ne_bytes());
                put_private(out, base + conn_param::PRIVATE_DATA, &c.private_data);
                let bytes = [
                    (conn_param::SRQ, u8::from(c.srq)),
                    (conn_param::RESPONDER_RESOURCES, c.responder_resources),
                    (conn_param::INITIATOR_DEPTH, c.initiator_depth),
                    (conn_param::FLOW_CONTROL, u8::from(c.flow_control)),
                    (conn_param::RETRY_COUNT, c.retry_count),
                    (conn_param::RNR_RETRY_COUNT, c.rnr_retry_count),
                ];
                for (field, v) in bytes {
                    put(out, base + field, &[v]);
                }
            }
            EventParam::Ud(u) => {
                put(out, at::UD_QP_NUM, &u.qp_num.to_ne_bytes());
                put(out, at::UD_QKEY, &u.qkey.to_ne_bytes());
                put(out, at::UD_AH_ATTR, &u.ah_attr);
                put_private(out, at::UD_PRIVATE_DATA, &u.private_data);
            }
        }
        put(out, at::ECE, &self.ece.vendor_id.to_ne_bytes());
        put(out, at::ECE + 4, &self.ece.attr_mod.to_ne_bytes());
    }
}

/// Private data, then its length in the byte after the 256-byte buffer.
fn put_private(out: &mut [u8], at: usize, pd: &PrivateData) {
    let data = pd.as_slice();
    put(out, at, data);
    put(out, at + MAX_PRIVATE_DATA, &[data.len() as u8]);
}

/// Copies `bytes` to `at`; every offset here is a constant inside the
/// 336-byte response, so nothing is ever cut.
fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(dst) = out.get_mut(at..at + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

// The UD private data length must be the last byte of the union before
// its padding, and the ECE must follow the reserved word.
const _: () = assert!(at::UD_PRIVATE_DATA_LEN == 316 && at::ECE == response::EVENT - 8);
const _: () = assert!(at::PARAM + conn_param::VALID == 291);

#[cfg(test)]
mod tests {
    use super::*;

    /// The record of `e`, written over a buffer of 0xFF bytes (so that a
    /// byte `write_to` left unwritten shows).
    fn record(e: &EventResp) -> [u8; response::EVENT] {
        let mut b = [0xFF; response::EVENT];
        e.write_to(&mut b);
        b
    }

    fn ne32(b: &[u8], at: usize) -> u32 {
        u32::from_ne_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn conn_events_at_librdmacm_offsets() {
        let e = EventResp {
            uid: 0x1122_3344_5566_7788,
            id: 7,
            event: 5,
            status: -110,
            param: EventParam::Conn(ConnParam {
                qp_num: 0x12_3456,
                qkey: 0x11,
                private_data: PrivateData::new(&[0xEE; 196]).unwrap(),
                srq: true,
                responder_resources: 4,
                initiator_depth: 3,
                flow_control: true,
                retry_count: 7,
                rnr_retry_count: 6,
            }),
            ece: Ece {
                vendor_id: 0x15b3,
                attr_mod: 2,
            },
        };
        let b = record(&e);
        assert_eq!(u64::from_ne_bytes(b[0..8].try_into().unwrap()), e.uid);
        assert_eq!((ne32(&b, 8), ne32(&b, 12)), (7, 5));
        assert_eq!(ne32(&b, 16) as i32, -110);
        assert_eq!(ne32(&b, 20), 0x12_3456);
        assert_eq!(ne32(&b, 24), 0, "qkey is not reported for connected ids");
        assert!(b[28..28 + 196].iter().all(|&x| x == 0xEE));
        assert_eq!(b[28 + 196], 0);
        assert_eq!(&b[284..292], &[196, 1, 4, 3, 1, 7, 6, 0]);
        assert_eq!((ne32(&b, 328), ne32(&b, 332)), (0x15b3, 2));
    }

    #[test]
    fn ud_events_at_librdmacm_offsets() {
        let mut ah = [0u8; AH_ATTR_SIZE];
        ah[0] = 0xAA;
        ah[31] = 0xBB;
        let e = EventResp {
            uid: 1,
            id: 2,
            event: 12,
            status: 0,
            param: EventParam::Ud(UdEvent {
                qp_num: 0xFF_FFFF,
                qkey: 0x0123_4567,
                ah_attr: ah,
                private_data: PrivateData::new(&[9; 136]).unwrap(),
            }),
            ece: Ece::default(),
        };
        let b = record(&e);
        assert_eq!((ne32(&b, 20), ne32(&b, 24)), (0xFF_FFFF, 0x0123_4567));
        assert_eq!((b[28], b[59]), (0xAA, 0xBB));
        assert!(b[60..196].iter().all(|&x| x == 9));
        assert_eq!(b[316], 136);
        assert_eq!(&b[317..336], &[0; 19]);
    }
}
