// SPDX-License-Identifier: GPL-2.0

//! The endpoint's peer address in the kernel.

use crate::proto::cm::DeviceId;
use crate::rdma::mad_path::MadPath;

/// A peer as the endpoint sees it: the device it is reached through and
/// the path on that device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Peer {
    /// The device the peer is reached through.
    pub(crate) device: DeviceId,
    /// The path on that device.
    pub(crate) path: MadPath,
}

impl Peer {
    /// The node behind the peer, for the window of requests per peer: the
    /// device, port and destination whose MAD receive queue the requests
    /// share. The path fields a connection chooses for itself (the RoCE
    /// flow label, hashed from its ports, its SL and traffic class) are
    /// cleared.
    pub(crate) fn node(&self) -> Peer {
        Peer {
            device: self.device,
            path: MadPath {
                sl: 0,
                flow_label: 0,
                hop_limit: 0,
                traffic_class: 0,
                static_rate: 0,
                src_path_bits: 0,
                ..self.path
            },
        }
    }
}
