/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Out-of-line wrappers for static inline kernel functions rcm's Rust code
 * calls. Implemented in drivers/infiniband/rcm/rcm_helpers.c.
 */
#ifndef RCM_HELPERS_H
#define RCM_HELPERS_H

#include <rdma/ib_verbs.h>

const char *rcm_h_ib_device_name(const struct ib_device *ibdev);
u32 rcm_h_rdma_start_port(const struct ib_device *ibdev);
u32 rcm_h_rdma_end_port(const struct ib_device *ibdev);
bool rcm_h_rdma_protocol_roce(const struct ib_device *ibdev, u32 port);
bool rcm_h_rdma_cap_ib_cm(const struct ib_device *ibdev, u32 port);

#endif
