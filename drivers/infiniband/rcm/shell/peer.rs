// SPDX-License-Identifier: GPL-2.0

//! The endpoint's peer address in the kernel.

use crate::proto::cm::DeviceId;
use crate::rdma::mad::MadPath;

/// A peer as the endpoint sees it: the device it is reached through and
/// the path on that device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Peer {
    /// The device the peer is reached through.
    pub(crate) device: DeviceId,
    /// The path on that device.
    pub(crate) path: MadPath,
}
