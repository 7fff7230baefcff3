/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IPv4 group memberships of rdma_cm's RoCE v2 multicast ids
 * (rust/rdma/multicast.rs); the rest of a join is Rust.
 */
#ifndef RCM_MC_HELPERS_H
#define RCM_MC_HELPERS_H

#include "rcm_rdma_helpers.h"

/* Joins or leaves the IPv4 group `addr` on `ndev` (under rtnl; nothing if
 * the device has no IPv4 configuration any more). */
void rcm_h_igmp_change(struct net_device *ndev, __be32 addr, bool join);
/* Whether `ndev` has an IPv4 configuration. */
bool rcm_h_netdev_has_inet(struct net_device *ndev);
/* Puts back a reference on `ndev`. */
void rcm_h_netdev_put(struct net_device *ndev);

#endif
