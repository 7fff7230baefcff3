/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Multicast groups of rdma_cm's UD ids on RoCE (abi/rdma_cm/multicast.rs):
 * the IP group on the id's network device, and the MULTICAST_JOIN event
 * with the group's address handle, as 6.12's cma.c makes them.
 */
#ifndef RCM_MC_HELPERS_H
#define RCM_MC_HELPERS_H

#include "rcm_rdma_helpers.h"

/* Joins the IPv4 group (IGMP) on the id's network device where RoCE v2
 * needs it, unless send-only; 0 or a negative errno (-ENOSYS on iWARP,
 * -EOPNOTSUPP on IB, whose SA joins rcm does not make). */
int rcm_h_rdma_mc_join(struct rdma_id_private *priv,
		       const struct rcm_h_sockaddr *group, bool send_only);
/* Leaves what rcm_h_rdma_mc_join joined. */
void rcm_h_rdma_mc_leave(struct rdma_id_private *priv,
			 const struct rcm_h_sockaddr *group, bool send_only);
/* Calls the id's handler with MULTICAST_JOIN (or MULTICAST_ERROR if no
 * address handle can be made) for `group`; the handler's return. */
int rcm_h_rdma_deliver_mc(struct rdma_cm_id *id, void *context,
			  const struct rcm_h_sockaddr *group, u32 qkey);

#endif
