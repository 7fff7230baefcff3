// SPDX-License-Identifier: GPL-2.0
/*
 * Network changes for rcm's rdma_cm (see rcm_net_helpers.h). The notifiers
 * copy what changed into a work item of their own; rcm's ordered work
 * queue hands the changes to Rust one at a time, in the order they came.
 */
#include <linux/if_bonding.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/neighbour.h>
#include <net/netevent.h>
#include "../../../rust/bindings/rcm_net_helpers.h"

struct rcm_net_change {
	struct work_struct work;
	const void *net;
	int ifindex;
	bool failover;			/* else a neighbour update */
	struct rcm_h_sockaddr ip;	/* the neighbour's */
	u32 ha_len;
	u8 ha[MAX_ADDR_LEN];
};

static struct workqueue_struct *rcm_net_wq;

/* Network changes seen so far: neighbour updates and netdev events. */
static atomic_t rcm_net_generation = ATOMIC_INIT(0);

u32 rcm_h_net_generation(void)
{
	return atomic_read(&rcm_net_generation);
}

static void rcm_net_change_work(struct work_struct *work)
{
	struct rcm_net_change *c = container_of(work, struct rcm_net_change, work);

	if (c->failover)
		rcm_rdma_netdev_failover(c->net, c->ifindex, c->ha, c->ha_len);
	else
		rcm_rdma_neigh_update(c->net, c->ifindex, &c->ip, c->ha, c->ha_len);
	kfree(c);
}

static struct rcm_net_change *rcm_net_change_new(struct net_device *ndev,
						 const u8 *ha, gfp_t gfp)
{
	struct rcm_net_change *c = kzalloc(sizeof(*c), gfp);

	if (!c)
		return NULL;
	INIT_WORK(&c->work, rcm_net_change_work);
	c->net = dev_net(ndev);
	c->ifindex = ndev->ifindex;
	c->ha_len = min_t(u32, ndev->addr_len, MAX_ADDR_LEN);
	memcpy(c->ha, ha, c->ha_len);
	return c;
}

/* Atomic context: neighbour updates come with the entry's lock held. */
static int rcm_netevent(struct notifier_block *nb, unsigned long event,
			void *ptr)
{
	struct neighbour *n = ptr;
	struct rcm_net_change *c;
	u16 family;

	if (event != NETEVENT_NEIGH_UPDATE || !n->dev)
		return NOTIFY_DONE;
	atomic_inc(&rcm_net_generation);
	family = n->tbl->family;
	if (family != AF_INET && family != AF_INET6)
		return NOTIFY_DONE;
	c = rcm_net_change_new(n->dev, n->ha, GFP_ATOMIC);
	if (!c)
		return NOTIFY_DONE;
	c->ip.family = family;
	memcpy(c->ip.addr, n->primary_key, family == AF_INET ? 4 : 16);
	queue_work(rcm_net_wq, &c->work);
	return NOTIFY_DONE;
}

static int rcm_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct rcm_net_change *c;

	atomic_inc(&rcm_net_generation);
	if (event != NETDEV_BONDING_FAILOVER || !netif_is_bond_master(ndev))
		return NOTIFY_DONE;
	c = rcm_net_change_new(ndev, ndev->dev_addr, GFP_KERNEL);
	if (!c)
		return NOTIFY_DONE;
	c->failover = true;
	queue_work(rcm_net_wq, &c->work);
	return NOTIFY_DONE;
}

static struct notifier_block rcm_netevent_nb = { .notifier_call = rcm_netevent };
static struct notifier_block rcm_netdev_nb = { .notifier_call = rcm_netdev_event };

int rcm_h_net_watch_start(void)
{
	int ret;

	rcm_net_wq = alloc_ordered_workqueue("rcm_net", WQ_MEM_RECLAIM);
	if (!rcm_net_wq)
		return -ENOMEM;
	ret = register_netevent_notifier(&rcm_netevent_nb);
	if (ret)
		goto out_wq;
	ret = register_netdevice_notifier(&rcm_netdev_nb);
	if (ret)
		goto out_netevent;
	return 0;

out_netevent:
	unregister_netevent_notifier(&rcm_netevent_nb);
out_wq:
	destroy_workqueue(rcm_net_wq);
	return ret;
}

void rcm_h_net_watch_stop(void)
{
	unregister_netdevice_notifier(&rcm_netdev_nb);
	unregister_netevent_notifier(&rcm_netevent_nb);
	/* drains the queued changes */
	destroy_workqueue(rcm_net_wq);
}

static bool rcm_ha_differs(const struct rdma_dev_addr *da, const u8 *mine,
			   const void *net, int ifindex, const u8 *ha, u32 ha_len)
{
	return da->bound_dev_if == ifindex && (const void *)da->net == net &&
	       memcmp(mine, ha, min_t(u32, ha_len, MAX_ADDR_LEN));
}

bool rcm_h_rdma_dst_ha_differs(const struct rdma_id_private *priv,
			       const void *net, int ifindex, const u8 *ha,
			       u32 ha_len)
{
	const struct rdma_dev_addr *da = &priv->id.route.addr.dev_addr;

	return rcm_ha_differs(da, da->dst_dev_addr, net, ifindex, ha, ha_len);
}

bool rcm_h_rdma_src_ha_differs(const struct rdma_id_private *priv,
			       const void *net, int ifindex, const u8 *ha,
			       u32 ha_len)
{
	const struct rdma_dev_addr *da = &priv->id.route.addr.dev_addr;

	return rcm_ha_differs(da, da->src_dev_addr, net, ifindex, ha, ha_len);
}
