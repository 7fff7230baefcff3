// SPDX-License-Identifier: GPL-2.0
/*
 * IPv4 group memberships of rdma_cm's RoCE v2 multicast ids
 * (rust/rdma/multicast.rs): rtnl and the in_device accessors are macros
 * and static inlines.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include "../../../rust/bindings/rcm_mc_helpers.h"

void rcm_h_igmp_change(struct net_device *ndev, __be32 addr, bool join)
{
	struct in_device *in_dev;

	rtnl_lock();
	in_dev = __in_dev_get_rtnl(ndev);
	if (in_dev) {
		if (join)
			ip_mc_inc_group(in_dev, addr);
		else
			ip_mc_dec_group(in_dev, addr);
	}
	rtnl_unlock();
}

bool rcm_h_netdev_has_inet(struct net_device *ndev)
{
	bool has;

	rcu_read_lock();
	has = __in_dev_get_rcu(ndev);
	rcu_read_unlock();
	return has;
}

void rcm_h_netdev_put(struct net_device *ndev)
{
	dev_put(ndev);
}
