// SPDX-License-Identifier: GPL-2.0
/*
 * Network changes for rcm's rdma_cm (see rcm_net_helpers.h). The notifiers
 * copy what changed into a bounded set of pending changes; a work item on
 * rcm's ordered work queue hands them to Rust one at a time, in the order
 * they came.
 */
#include <linux/if_bonding.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/neighbour.h>
#include <net/netevent.h>
#include "../../../rust/bindings/rcm_net_helpers.h"

/*
 * Changes wait in a bounded set that one work item drains, in the order
 * they came. Neighbour updates arrive in atomic context as fast as anyone
 * can make them (a user flapping neighbours in a namespace of its own), so
 * a change replaces a pending one of the same neighbour (or bond) instead
 * of taking more room, and one for another neighbour while the set is full
 * is dropped and counted: the notifiers never allocate, and the work never
 * runs behind an unbounded queue.
 */
#define RCM_NET_PENDING 256

struct rcm_net_change {
	const void *net;
	int ifindex;
	bool failover;			/* else a neighbour update */
	u16 family;			/* the neighbour's address: */
	u8 ip[16];			/* 4 or 16 bytes */
	u32 ha_len;
	u8 ha[MAX_ADDR_LEN];
};

static DEFINE_SPINLOCK(rcm_net_lock);
static struct rcm_net_change rcm_net_pending[RCM_NET_PENDING];
static unsigned int rcm_net_head, rcm_net_count;
static unsigned long rcm_net_dropped;
static struct workqueue_struct *rcm_net_wq;
static struct work_struct rcm_net_work;

/* Network changes seen so far: neighbour updates and netdev events. */
static atomic_t rcm_net_generation = ATOMIC_INIT(0);

u32 rcm_h_net_generation(void)
{
	return atomic_read(&rcm_net_generation);
}

static bool rcm_net_same_subject(const struct rcm_net_change *a,
				 const struct rcm_net_change *b)
{
	return a->net == b->net && a->ifindex == b->ifindex &&
	       a->failover == b->failover && a->family == b->family &&
	       !memcmp(a->ip, b->ip, sizeof(a->ip));
}

/* Any context. */
static void rcm_net_post(const struct rcm_net_change *c)
{
	struct rcm_net_change *slot = NULL;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&rcm_net_lock, flags);
	for (i = 0; i < rcm_net_count && !slot; i++) {
		struct rcm_net_change *p =
			&rcm_net_pending[(rcm_net_head + i) % RCM_NET_PENDING];

		if (rcm_net_same_subject(p, c))
			slot = p;
	}
	if (!slot && rcm_net_count < RCM_NET_PENDING)
		slot = &rcm_net_pending[(rcm_net_head + rcm_net_count++) %
					RCM_NET_PENDING];
	if (slot)
		*slot = *c;
	else
		rcm_net_dropped++;
	spin_unlock_irqrestore(&rcm_net_lock, flags);
	queue_work(rcm_net_wq, &rcm_net_work);
}

/* Set by rcm_h_net_watch_start, before any change is handed over. */
static const struct rcm_net_callbacks *rcm_net_cb;

static void rcm_net_change_work(struct work_struct *work)
{
	struct rcm_net_change c;
	unsigned long flags, dropped;

	for (;;) {
		spin_lock_irqsave(&rcm_net_lock, flags);
		if (!rcm_net_count)
			break;
		c = rcm_net_pending[rcm_net_head];
		rcm_net_head = (rcm_net_head + 1) % RCM_NET_PENDING;
		rcm_net_count--;
		spin_unlock_irqrestore(&rcm_net_lock, flags);
		if (c.failover)
			rcm_net_cb->failover(c.net, c.ifindex, c.ha, c.ha_len);
		else
			rcm_net_cb->neigh_update(c.net, c.ifindex, c.family, c.ip,
						 c.ha, c.ha_len);
		cond_resched();
	}
	dropped = rcm_net_dropped;
	rcm_net_dropped = 0;
	spin_unlock_irqrestore(&rcm_net_lock, flags);
	if (dropped)
		pr_warn_ratelimited("rcm: %lu network change(s) dropped: more than %d neighbours changed at once\n",
				    dropped, RCM_NET_PENDING);
}

static void rcm_net_change_fill(struct rcm_net_change *c,
				struct net_device *ndev, const u8 *ha)
{
	memset(c, 0, sizeof(*c));
	c->net = dev_net(ndev);
	c->ifindex = ndev->ifindex;
	c->ha_len = min_t(u32, ndev->addr_len, MAX_ADDR_LEN);
	memcpy(c->ha, ha, c->ha_len);
}

/* Atomic context: neighbour updates come with the entry's lock held. */
static int rcm_netevent(struct notifier_block *nb, unsigned long event,
			void *ptr)
{
	struct neighbour *n = ptr;
	struct rcm_net_change c;
	u16 family;

	if (event != NETEVENT_NEIGH_UPDATE || !n->dev)
		return NOTIFY_DONE;
	atomic_inc(&rcm_net_generation);
	family = n->tbl->family;
	if (family != AF_INET && family != AF_INET6)
		return NOTIFY_DONE;
	rcm_net_change_fill(&c, n->dev, n->ha);
	c.family = family;
	memcpy(c.ip, n->primary_key, family == AF_INET ? 4 : 16);
	rcm_net_post(&c);
	return NOTIFY_DONE;
}

static int rcm_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct rcm_net_change c;

	atomic_inc(&rcm_net_generation);
	if (event != NETDEV_BONDING_FAILOVER || !netif_is_bond_master(ndev))
		return NOTIFY_DONE;
	rcm_net_change_fill(&c, ndev, ndev->dev_addr);
	c.failover = true;
	rcm_net_post(&c);
	return NOTIFY_DONE;
}

static struct notifier_block rcm_netevent_nb = { .notifier_call = rcm_netevent };
static struct notifier_block rcm_netdev_nb = { .notifier_call = rcm_netdev_event };

int rcm_h_net_watch_start(const struct rcm_net_callbacks *cb)
{
	int ret;

	rcm_net_cb = cb;
	INIT_WORK(&rcm_net_work, rcm_net_change_work);
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
