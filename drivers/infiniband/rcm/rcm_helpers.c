// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line copies of static inline kernel functions, so that rcm's Rust
 * code can call them through bindgen (which cannot bind inline functions).
 */
#include "../../../rust/bindings/rcm_helpers.h"

const char *rcm_h_ib_device_name(const struct ib_device *ibdev)
{
	return dev_name(&ibdev->dev);
}

u32 rcm_h_rdma_start_port(const struct ib_device *ibdev)
{
	return rdma_start_port(ibdev);
}

u32 rcm_h_rdma_end_port(const struct ib_device *ibdev)
{
	return rdma_end_port(ibdev);
}

bool rcm_h_rdma_protocol_roce(const struct ib_device *ibdev, u32 port)
{
	if (port < rdma_start_port(ibdev) || port > rdma_end_port(ibdev))
		return false;
	return rdma_protocol_roce(ibdev, port);
}

bool rcm_h_rdma_cap_ib_cm(const struct ib_device *ibdev, u32 port)
{
	if (port < rdma_start_port(ibdev) || port > rdma_end_port(ibdev))
		return false;
	return rdma_cap_ib_cm(ibdev, port);
}
