/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The netdev static inlines rcm's Rust code needs (rcm_net_helpers.c,
 * rust/rdma/netdev.rs, rust/rdma/netwatch.rs).
 */
#ifndef RCM_NET_HELPERS_H
#define RCM_NET_HELPERS_H

#include <linux/types.h>

struct net;
struct net_device;

/* The device a netdevice notifier's info names. */
struct net_device *rcm_h_netdev_notifier_dev(void *info);
/* Whether the device is a bond's master. */
bool rcm_h_netif_is_bond_master(const struct net_device *ndev);
/* The device's namespace. */
struct net *rcm_h_dev_net(const struct net_device *ndev);
/* dev_hold / dev_put: a reference on a network device. */
void rcm_h_netdev_hold(struct net_device *ndev);
void rcm_h_netdev_put(struct net_device *ndev);
/* Whether the device is a VLAN's, and the device it is on (a VLAN's only). */
bool rcm_h_is_vlan_dev(const struct net_device *ndev);
struct net_device *rcm_h_vlan_dev_real_dev(const struct net_device *ndev);

#endif
