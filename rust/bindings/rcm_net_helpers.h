/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network changes rdma_cm reports to its ids (rcm_net_helpers.c,
 * abi/rdma_cm/netevent.rs), as 6.12's cma.c watches them: neighbour
 * updates (a RoCE id's destination moved to another hardware address) and
 * bonding failovers (the netdev an id is bound to changed its own).
 */
#ifndef RCM_NET_HELPERS_H
#define RCM_NET_HELPERS_H

#include "rcm_rdma_helpers.h"

/*
 * The network changes' callbacks on the Rust side (rust/rdma/netwatch.rs).
 * `net` names a namespace for comparison only (it may be gone by then):
 * ifindex is unique within it. `ip` is 16 bytes (IPv4 in the first 4),
 * `ha` the new hardware address.
 */
struct rcm_net_callbacks {
	/* A neighbour entry was updated. */
	void (*neigh_update)(const void *net, int ifindex, u16 family,
			     const u8 *ip, const u8 *ha, u32 ha_len);
	/* A bond failed over to another hardware address. */
	void (*failover)(const void *net, int ifindex, const u8 *ha,
			 u32 ha_len);
};

/*
 * Starts watching: from now on cb's functions are called from rcm's own
 * ordered work queue (never from the notifiers, which may run in atomic
 * context or under RTNL); cb outlives the watch. 0 or a negative errno.
 */
int rcm_h_net_watch_start(const struct rcm_net_callbacks *cb);
/* Stops watching; returns after the last call above has returned. */
void rcm_h_net_watch_stop(void);
/*
 * How many network changes (neighbour updates, netdev events) were seen
 * while watching: a reply path worked out before the count moved may be
 * stale.
 */
u32 rcm_h_net_generation(void);

/* True if the id's route leaves through (net, ifindex) to a hardware
 * address other than `ha`. */
bool rcm_h_rdma_dst_ha_differs(const struct rdma_id_private *priv,
			       const void *net, int ifindex, const u8 *ha,
			       u32 ha_len);
/* True if the id is bound to (net, ifindex) with a hardware address other
 * than `ha`. */
bool rcm_h_rdma_src_ha_differs(const struct rdma_id_private *priv,
			       const void *net, int ifindex, const u8 *ha,
			       u32 ha_len);

#endif
