// SPDX-License-Identifier: GPL-2.0

//! rcm's ib_client: tracks the RDMA devices the CM serves.

use crate::cm_service::with_service;
use crate::rdma::{client::ClientOps, device::Device};
use kernel::prelude::*;

/// The ib_client rcm registers with ib_core.
pub(crate) struct RcmClient;

impl ClientOps for RcmClient {
    fn add(device: &Device<'_>) -> Result {
        let ports = device.ports();
        let roce = ports.clone().filter(|&p| device.is_roce(p)).count();
        let cm = ports.clone().filter(|&p| device.has_ib_cm(p)).count();
        pr_info!(
            "rcm: device {} added: ports {}-{}, {} RoCE, {} with IB CM\n",
            device.name(),
            ports.start(),
            ports.end(),
            roce,
            cm
        );
        with_service(|s| s.add_device(device)).unwrap_or(Err(ENODEV))
    }

    fn remove(device: &Device<'_>) {
        with_service(|s| s.remove_device(device));
        pr_info!("rcm: device {} removed\n", device.name());
    }
}
