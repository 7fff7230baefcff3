// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line copies of the netdev static inlines rcm's Rust code needs
 * (rust/rdma/netdev.rs, rust/rdma/netwatch.rs): bindgen cannot bind inline
 * functions, and the fields they read depend on the kernel's configuration
 * (CONFIG_NET_NS, the bonding flags' bitfield, reference trackers).
 */
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include "../../../rust/bindings/rcm_net_helpers.h"

struct net_device *rcm_h_netdev_notifier_dev(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

bool rcm_h_netif_is_bond_master(const struct net_device *ndev)
{
	return netif_is_bond_master(ndev);
}

struct net *rcm_h_dev_net(const struct net_device *ndev)
{
	return dev_net(ndev);
}

void rcm_h_netdev_hold(struct net_device *ndev)
{
	dev_hold(ndev);
}

void rcm_h_netdev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

bool rcm_h_is_vlan_dev(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}

struct net_device *rcm_h_vlan_dev_real_dev(const struct net_device *ndev)
{
	return vlan_dev_real_dev(ndev);
}
