/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Multicast groups of rdma_cm's UD ids on RoCE (abi/rdma_cm/multicast.rs):
 * the IP group on the id's network device, and the MULTICAST_JOIN event
 * with the group's address handle, as 6.12's cma.c makes them.
 */
#ifndef RCM_MC_HELPERS_H
#define RCM_MC_HELPERS_H

#include "rcm_rdma_helpers.h"

/* Whether the id may join `group` (0, or a negative errno: -ENOSYS on
 * iWARP, -EOPNOTSUPP on IB, whose SA joins rcm does not make). If RoCE v2
 * needs an IPv4 group membership (IGMP) for it, unless send-only, *ndev is
 * the id's network device with a reference and *addr the group: the
 * caller joins it with rcm_h_igmp_change once no lock of rcm's is held
 * (it takes rtnl). Takes no lock a user can hold. */
int rcm_h_rdma_mc_join(struct rdma_id_private *priv,
		       const struct sockaddr *group, bool send_only,
		       struct net_device **ndev, __be32 *addr);
/* The IGMP membership rcm_h_rdma_mc_join asked for, to leave: as there,
 * *ndev (with a reference) or NULL if there is none. */
void rcm_h_rdma_mc_leave(struct rdma_id_private *priv,
			 const struct sockaddr *group, bool send_only,
			 struct net_device **ndev, __be32 *addr);
/* Joins or leaves the IPv4 group `addr` on `ndev` (under rtnl; nothing if
 * the device has no IPv4 configuration any more). */
void rcm_h_igmp_change(struct net_device *ndev, __be32 addr, bool join);
/* Puts back a reference rcm_h_rdma_mc_join or _leave handed out. */
void rcm_h_netdev_put(struct net_device *ndev);
/* Calls the id's handler with MULTICAST_JOIN (or MULTICAST_ERROR if no
 * address handle can be made) for `group`; the handler's return. */
int rcm_h_rdma_deliver_mc(struct rdma_cm_id *id, void *context,
			  const struct sockaddr *group, u32 qkey);

#endif
