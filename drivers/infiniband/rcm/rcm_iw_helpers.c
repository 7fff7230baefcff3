// SPDX-License-Identifier: GPL-2.0
/*
 * The GID entry of an iWARP port for an rdma_cm id's address: the entry's
 * network device, read under RCU, against the id's bound interface and
 * VLANs (is_vlan_dev and the RCU accessors are static inlines). The rest
 * of rdma_cm on iWARP is rust/rdma/iw_cm.rs.
 */
#include <linux/if_vlan.h>
#include <rdma/ib_cache.h>
#include "../../../rust/bindings/rcm_iw_helpers.h"

const struct ib_gid_attr *
rcm_h_iw_find_gid(const struct rdma_id_private *priv, struct ib_device *ibdev,
		  u32 port)
{
	const struct rdma_dev_addr *da = &priv->id.route.addr.dev_addr;
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	int ifindex = da->bound_dev_if;
	bool ok;

	if (!rdma_protocol_iwarp(ibdev, port) ||
	    !rdma_dev_access_netns(ibdev, da->net))
		return NULL;
	/* An iWARP port has one GID entry, for its network device. */
	attr = rdma_get_gid_attr(ibdev, port, 0);
	if (IS_ERR(attr))
		return NULL;
	rcu_read_lock();
	ndev = rcu_dereference(attr->ndev);
	ok = ndev && net_eq(dev_net(ndev), da->net);
	if (ok && ndev->ifindex != ifindex) {
		/* A VLAN on the port's device, or the port on a VLAN's. */
		struct net_device *bound = dev_get_by_index_rcu(da->net, ifindex);

		ok = (bound && is_vlan_dev(bound) &&
		      vlan_dev_real_dev(bound)->ifindex == ndev->ifindex) ||
		     (is_vlan_dev(ndev) &&
		      vlan_dev_real_dev(ndev)->ifindex == ifindex);
	}
	rcu_read_unlock();
	if (!ok) {
		rdma_put_gid_attr(attr);
		return NULL;
	}
	return attr;
}
