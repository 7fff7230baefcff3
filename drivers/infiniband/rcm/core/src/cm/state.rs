// SPDX-License-Identifier: GPL-2.0

//! Connection and alternate-path states (the IBTA CM state diagrams, with
//! the values of the kernel's `enum ib_cm_state` / `ib_cm_lap_state`, which
//! consumers read from `struct ib_cm_id`).

/// A communication id's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum State {
    /// Not connected; a new id or one whose connection ended.
    Idle = 0,
    /// Listening for REQs and SIDR_REQs on a service id.
    Listen = 1,
    /// Active side: REQ sent, waiting for REP/MRA/REJ.
    ReqSent = 2,
    /// Passive side: REQ delivered to the consumer.
    ReqRcvd = 3,
    /// Passive side: MRA sent for the REQ.
    MraReqSent = 4,
    /// Active side: the peer MRAed our REQ.
    MraReqRcvd = 5,
    /// Passive side: REP sent, waiting for RTU.
    RepSent = 6,
    /// Active side: REP delivered to the consumer.
    RepRcvd = 7,
    /// Active side: MRA sent for the REP.
    MraRepSent = 8,
    /// Passive side: the peer MRAed our REP.
    MraRepRcvd = 9,
    /// Connected.
    Established = 10,
    /// DREQ sent, waiting for DREP.
    DreqSent = 11,
    /// DREQ delivered to the consumer.
    DreqRcvd = 12,
    /// Disconnected; waiting for stray packets of the old connection to die.
    Timewait = 13,
    /// SIDR_REQ sent, waiting for SIDR_REP.
    SidrReqSent = 14,
    /// SIDR_REQ delivered to the consumer.
    SidrReqRcvd = 15,
}

impl State {
    /// Every state, in value order.
    pub const ALL: [State; 16] = [
        State::Idle,
        State::Listen,
        State::ReqSent,
        State::ReqRcvd,
        State::MraReqSent,
        State::MraReqRcvd,
        State::RepSent,
        State::RepRcvd,
        State::MraRepSent,
        State::MraRepRcvd,
        State::Established,
        State::DreqSent,
        State::DreqRcvd,
        State::Timewait,
        State::SidrReqSent,
        State::SidrReqRcvd,
    ];

    /// The name the IBTA and the kernel use.
    pub const fn name(self) -> &'static str {
        match self {
            State::Idle => "IDLE",
            State::Listen => "LISTEN",
            State::ReqSent => "REQ_SENT",
            State::ReqRcvd => "REQ_RCVD",
            State::MraReqSent => "MRA_REQ_SENT",
            State::MraReqRcvd => "MRA_REQ_RCVD",
            State::RepSent => "REP_SENT",
            State::RepRcvd => "REP_RCVD",
            State::MraRepSent => "MRA_REP_SENT",
            State::MraRepRcvd => "MRA_REP_RCVD",
            State::Established => "ESTABLISHED",
            State::DreqSent => "DREQ_SENT",
            State::DreqRcvd => "DREQ_RCVD",
            State::Timewait => "TIMEWAIT",
            State::SidrReqSent => "SIDR_REQ_SENT",
            State::SidrReqRcvd => "SIDR_REQ_RCVD",
        }
    }

    /// States in which the id has a peer whose comm id and QPN are known,
    /// i.e. entries in the remote id / remote QPN tables.
    pub const fn has_remote(self) -> bool {
        matches!(
            self,
            State::ReqRcvd
                | State::MraReqSent
                | State::RepSent
                | State::RepRcvd
                | State::MraRepSent
                | State::MraRepRcvd
                | State::Established
                | State::DreqSent
                | State::DreqRcvd
        )
    }
}

/// The alternate path (LAP/APR) sub-state of an established connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LapState {
    /// No LAP exchange ever happened.
    Uninit = 0,
    /// A LAP exchange finished (or a path migration happened).
    Idle = 1,
    /// LAP sent, waiting for APR/MRA.
    Sent = 2,
    /// LAP delivered to the consumer.
    Rcvd = 3,
    /// MRA sent for the LAP.
    MraSent = 4,
    /// The peer MRAed our LAP.
    MraRcvd = 5,
}

impl LapState {
    /// The name the kernel uses (`IB_CM_LAP_*`).
    pub const fn name(self) -> &'static str {
        match self {
            LapState::Uninit => "LAP_UNINIT",
            LapState::Idle => "LAP_IDLE",
            LapState::Sent => "LAP_SENT",
            LapState::Rcvd => "LAP_RCVD",
            LapState::MraSent => "MRA_LAP_SENT",
            LapState::MraRcvd => "MRA_LAP_RCVD",
        }
    }
}

impl core::fmt::Display for State {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}
