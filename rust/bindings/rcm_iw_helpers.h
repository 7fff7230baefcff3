/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdma_cm ids on iWARP devices: their connections go through the in-tree
 * iw_cm module (include/rdma/iw_cm.h), driven from rust/rdma/iw_cm.rs.
 * What is left in C reads a GID entry's network device under RCU.
 */
#ifndef RCM_IW_HELPERS_H
#define RCM_IW_HELPERS_H

#include <rdma/iw_cm.h>
#include "rcm_rdma_helpers.h"

/* The GID entry of an iWARP port for the id's resolved address (that of
 * the port's network device), held; NULL if the port does not serve it. */
const struct ib_gid_attr *
rcm_h_iw_find_gid(const struct rdma_id_private *priv, struct ib_device *ibdev,
		  u32 port);

#endif
