// SPDX-License-Identifier: GPL-2.0

//! A whole CM MAD: header validation, dispatch on the attribute id, and
//! emission. `CmMad::parse` and `CmMad::emit` are exact inverses for every
//! value whose header `attr_id` matches its message.

use super::class_port_info::ClassPortInfo;
use super::disconnect::{Drep, Dreq};
use super::field::{Field, Mad, MAD_SIZE};
use super::lap::{Apr, Lap};
use super::mad::{
    attr, method, peek_attr_id, MadHeader, BASE_VERSION, CM_CLASS_VERSION, MGMT_CLASS_CM,
};
use super::mra::{Mra, Rej};
use super::rep::{Rep, Rtu};
use super::req::Req;
use super::sidr::{SidrRep, SidrReq};

/// Why bytes are not a CM MAD rcm can process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Not exactly one 256-byte MAD.
    WrongLength(usize),
    /// `base_version` is not 1.
    BaseVersion(u8),
    /// Not the CM management class.
    NotCmClass(u8),
    /// A CM class version other than 2 (a REQ gets REJ reason 31).
    ClassVersion(u8),
    /// A method this attribute is not sent with.
    Method {
        /// The method received.
        method: u8,
        /// The attribute it came with.
        attr_id: u16,
    },
    /// An attribute id the CM does not define.
    UnknownAttribute(u16),
}

impl core::fmt::Display for ParseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ParseError::WrongLength(n) => write!(f, "MAD of {} bytes, expected {}", n, MAD_SIZE),
            ParseError::BaseVersion(v) => write!(f, "MAD base version {}", v),
            ParseError::NotCmClass(c) => write!(f, "management class {:#04x} is not CM", c),
            ParseError::ClassVersion(v) => write!(f, "CM class version {}", v),
            ParseError::Method { method, attr_id } => {
                write!(f, "method {:#04x} with attribute {:#06x}", method, attr_id)
            }
            ParseError::UnknownAttribute(a) => write!(f, "unknown CM attribute {:#06x}", a),
        }
    }
}

/// The body of a CM MAD, by message type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmMessage {
    /// ClassPortInfo (Get, Set or GetResp).
    ClassPortInfo(ClassPortInfo),
    /// ConnectRequest.
    Req(Req),
    /// MessageReceiptAcknowledgement.
    Mra(Mra),
    /// ConnectReject.
    Rej(Rej),
    /// ConnectReply.
    Rep(Rep),
    /// ReadyToUse.
    Rtu(Rtu),
    /// DisconnectRequest.
    Dreq(Dreq),
    /// DisconnectReply.
    Drep(Drep),
    /// ServiceIDResolutionRequest.
    SidrReq(SidrReq),
    /// ServiceIDResolutionResponse.
    SidrRep(SidrRep),
    /// LoadAlternatePath.
    Lap(Lap),
    /// AlternatePathResponse.
    Apr(Apr),
}

/// The short name of the CM message an attribute id identifies, as in
/// counters and traces ("unknown" for any other).
pub const fn attr_name(attr_id: u16) -> &'static str {
    match attr_id {
        attr::CLASS_PORT_INFO => "ClassPortInfo",
        attr::REQ => "REQ",
        attr::MRA => "MRA",
        attr::REJ => "REJ",
        attr::REP => "REP",
        attr::RTU => "RTU",
        attr::DREQ => "DREQ",
        attr::DREP => "DREP",
        attr::SIDR_REQ => "SIDR_REQ",
        attr::SIDR_REP => "SIDR_REP",
        attr::LAP => "LAP",
        attr::APR => "APR",
        _ => "unknown",
    }
}

/// What a trace of a raw MAD names, read without a full parse: its
/// message, the comm ids it carries and a REJ's reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadSummary {
    /// The attribute id.
    pub attr_id: u16,
    /// The sender's comm id (a SIDR message's request id).
    pub local_comm_id: u32,
    /// The receiver's comm id (0 in a REQ, a SIDR message or another
    /// class's MAD).
    pub remote_comm_id: u32,
    /// A REJ's reason code (0 for any other message).
    pub rej_reason: u16,
}

impl MadSummary {
    /// Reads a MAD's summary; bytes that are not a CM message read as 0.
    pub fn of(mad: &Mad) -> Self {
        let attr_id = peek_attr_id(mad);
        let cm = MadHeader::read(mad).mgmt_class == MGMT_CLASS_CM;
        // Every CM message's body (at byte 24) starts with the sender's
        // comm id; the messages that answer one follow it with the
        // receiver's.
        let word = |byte: usize| Field::new(byte, 0, 32).get(mad) as u32;
        let local_comm_id = if cm { word(24) } else { 0 };
        let remote_comm_id = match attr_id {
            attr::MRA
            | attr::REJ
            | attr::REP
            | attr::RTU
            | attr::DREQ
            | attr::DREP
            | attr::LAP
            | attr::APR
                if cm =>
            {
                word(28)
            }
            _ => 0,
        };
        let rej_reason = match attr_id {
            attr::REJ if cm => Rej::read(mad).reason.to_wire(),
            _ => 0,
        };
        MadSummary {
            attr_id,
            local_comm_id,
            remote_comm_id,
            rej_reason,
        }
    }

    /// The message's short name.
    pub const fn name(&self) -> &'static str {
        attr_name(self.attr_id)
    }
}

impl CmMessage {
    /// The attribute id that identifies this message on the wire.
    pub const fn attr_id(&self) -> u16 {
        match self {
            CmMessage::ClassPortInfo(_) => attr::CLASS_PORT_INFO,
            CmMessage::Req(_) => attr::REQ,
            CmMessage::Mra(_) => attr::MRA,
            CmMessage::Rej(_) => attr::REJ,
            CmMessage::Rep(_) => attr::REP,
            CmMessage::Rtu(_) => attr::RTU,
            CmMessage::Dreq(_) => attr::DREQ,
            CmMessage::Drep(_) => attr::DREP,
            CmMessage::SidrReq(_) => attr::SIDR_REQ,
            CmMessage::SidrRep(_) => attr::SIDR_REP,
            CmMessage::Lap(_) => attr::LAP,
            CmMessage::Apr(_) => attr::APR,
        }
    }

    /// Short name, as in counters and traces.
    pub const fn name(&self) -> &'static str {
        attr_name(self.attr_id())
    }

    fn read(attr_id: u16, mad: &Mad) -> Option<Self> {
        Some(match attr_id {
            attr::CLASS_PORT_INFO => CmMessage::ClassPortInfo(ClassPortInfo::read(mad)),
            attr::REQ => CmMessage::Req(Req::read(mad)),
            attr::MRA => CmMessage::Mra(Mra::read(mad)),
            attr::REJ => CmMessage::Rej(Rej::read(mad)),
            attr::REP => CmMessage::Rep(Rep::read(mad)),
            attr::RTU => CmMessage::Rtu(Rtu::read(mad)),
            attr::DREQ => CmMessage::Dreq(Dreq::read(mad)),
            attr::DREP => CmMessage::Drep(Drep::read(mad)),
            attr::SIDR_REQ => CmMessage::SidrReq(SidrReq::read(mad)),
            attr::SIDR_REP => CmMessage::SidrRep(SidrRep::read(mad)),
            attr::LAP => CmMessage::Lap(Lap::read(mad)),
            attr::APR => CmMessage::Apr(Apr::read(mad)),
            _ => return None,
        })
    }

    fn write(&self, mad: &mut Mad) {
        match self {
            CmMessage::ClassPortInfo(m) => m.write(mad),
            CmMessage::Req(m) => m.write(mad),
            CmMessage::Mra(m) => m.write(mad),
            CmMessage::Rej(m) => m.write(mad),
            CmMessage::Rep(m) => m.write(mad),
            CmMessage::Rtu(m) => m.write(mad),
            CmMessage::Dreq(m) => m.write(mad),
            CmMessage::Drep(m) => m.write(mad),
            CmMessage::SidrReq(m) => m.write(mad),
            CmMessage::SidrRep(m) => m.write(mad),
            CmMessage::Lap(m) => m.write(mad),
            CmMessage::Apr(m) => m.write(mad),
        }
    }
}

/// A parsed CM MAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmMad {
    /// The common header; `attr_id` agrees with `message`.
    pub header: MadHeader,
    /// The message.
    pub message: CmMessage,
}

impl CmMad {
    /// A CM Send of `message` (every protocol message goes as a Send).
    pub const fn send(transaction_id: u64, attr_mod: u32, message: CmMessage) -> Self {
        CmMad {
            header: MadHeader::cm_send(message.attr_id(), transaction_id, attr_mod),
            message,
        }
    }

    /// Validates and decodes a received MAD. Reserved bits are ignored.
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        let (header, mad) = Self::check(bytes)?;
        let message = CmMessage::read(header.attr_id, mad)
            .ok_or(ParseError::UnknownAttribute(header.attr_id))?;
        Ok(CmMad { header, message })
    }

    /// Validates a received MAD as [`parse`](Self::parse) does, without
    /// decoding its message: the receive path reads the one message type
    /// it dispatches on in place, rather than moving a [`CmMessage`].
    #[inline]
    pub fn check(bytes: &[u8]) -> Result<(MadHeader, &Mad), ParseError> {
        let mad: &Mad = bytes
            .try_into()
            .map_err(|_| ParseError::WrongLength(bytes.len()))?;
        let header = MadHeader::read(mad);
        if header.base_version != BASE_VERSION {
            return Err(ParseError::BaseVersion(header.base_version));
        }
        if header.mgmt_class != MGMT_CLASS_CM {
            return Err(ParseError::NotCmClass(header.mgmt_class));
        }
        if header.class_version != CM_CLASS_VERSION {
            return Err(ParseError::ClassVersion(header.class_version));
        }
        let method_ok = match header.attr_id {
            attr::CLASS_PORT_INFO => matches!(header.method, method::GET | method::GET_RESP),
            _ => header.method == method::SEND,
        };
        if !attr::is_cm(header.attr_id) {
            return Err(ParseError::UnknownAttribute(header.attr_id));
        }
        if !method_ok {
            return Err(ParseError::Method {
                method: header.method,
                attr_id: header.attr_id,
            });
        }
        Ok((header, mad))
    }

    /// Encodes the MAD; reserved bits are written as zero, and the header's
    /// attribute id is the message's.
    pub fn emit(&self, out: &mut Mad) {
        *out = [0; MAD_SIZE];
        let header = MadHeader {
            attr_id: self.message.attr_id(),
            ..self.header
        };
        header.write(out);
        self.message.write(out);
    }
}
