// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line copies of the macros and static inlines rcm's rdma_cm ids
 * need (rust/rdma/cm_id.rs and its neighbours): the locks of 6.12's struct
 * rdma_id_private (whose lock classes the init macros declare), namespace
 * references, the type-of-service map of a RoCE route's link, and the
 * caller's namespace and its port settings.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/if_vlan.h>
#include <net/route.h>
#include <net/ip.h>
#include <linux/nsproxy.h>
#include <linux/capability.h>
#include <rdma/ib.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include "core_priv.h"
#include "restrack.h"
#include "../../../rust/bindings/rcm_helpers.h"
#include "../../../rust/bindings/rcm_rdma_helpers.h"

void rcm_h_rdma_id_init_locks(struct rdma_id_private *priv)
{
	static struct lock_class_key handler_key, qp_key;

	spin_lock_init(&priv->lock);
	__mutex_init(&priv->handler_mutex, "rcm::rdma_handler", &handler_key);
	__mutex_init(&priv->qp_mutex, "rcm::rdma_qp", &qp_key);
	init_completion(&priv->comp);
}

struct net *rcm_h_get_net(struct net *net)
{
	return get_net(net);
}

void rcm_h_put_net(struct net *net)
{
	put_net(net);
}

void rcm_h_rdma_handler_lock(struct rdma_id_private *priv)
{
	mutex_lock(&priv->handler_mutex);
}

void rcm_h_rdma_handler_lock_nested(struct rdma_id_private *priv)
{
	mutex_lock_nested(&priv->handler_mutex, SINGLE_DEPTH_NESTING);
}

/*
 * Lockdep knows one class for every id's handler lock. A consumer may
 * create and destroy an id of its own while a handler of another id runs
 * (RDS checks an address that way from its CONNECT_REQUEST handler, with
 * the listener's and the new id's locks held): the destroy only waits for
 * a handler of the id being destroyed, so it takes the lock one level
 * deeper than the delivery of a request does.
 */
void rcm_h_rdma_handler_lock_to_destroy(struct rdma_id_private *priv)
{
	mutex_lock_nested(&priv->handler_mutex, SINGLE_DEPTH_NESTING + 1);
}

void rcm_h_rdma_qp_lock(struct rdma_id_private *priv)
{
	mutex_lock(&priv->qp_mutex);
}

void rcm_h_rdma_qp_unlock(struct rdma_id_private *priv)
{
	mutex_unlock(&priv->qp_mutex);
}

void rcm_h_rdma_handler_unlock(struct rdma_id_private *priv)
{
	mutex_unlock(&priv->handler_mutex);
}

int rcm_h_rdma_translate(struct rdma_id_private *priv)
{
	return rdma_translate_ip((struct sockaddr *)&priv->id.route.addr.src_addr,
				 &priv->id.route.addr.dev_addr);
}

/* The priority class of `tos` on `ndev` (its VLAN egress map or tc map). */
u8 rcm_h_tos_to_sl(struct net_device *ndev, u8 tos)
{
	int prio = rt_tos2priority(tos);
	struct net_device *real = ndev;

	if (is_vlan_dev(ndev)) {
		real = vlan_dev_real_dev(ndev);
		if (!real->num_tc)
			return (vlan_dev_get_egress_qos_mask(ndev, prio) &
				VLAN_PRIO_MASK) >> VLAN_PRIO_SHIFT;
	}
	return real->num_tc ? netdev_get_prio_tc_map(real, prio) : 0;
}

/* rcm's SA client: its path queries end before it is unregistered. */
static struct ib_sa_client rcm_sa_client;

void rcm_h_sa_client_register(void)
{
	ib_sa_register_client(&rcm_sa_client);
}

void rcm_h_sa_client_unregister(void)
{
	ib_sa_unregister_client(&rcm_sa_client);
}

struct ib_sa_client *rcm_h_sa_client(void)
{
	return &rcm_sa_client;
}

struct net *rcm_h_current_net(void)
{
	return current->nsproxy->net_ns;
}

void rcm_h_net_port_range(struct net *net, int *low, int *high)
{
	inet_get_local_port_range(net, low, high);
}

bool rcm_h_net_bindv6only(struct net *net)
{
#if IS_ENABLED(CONFIG_IPV6)
	return net->ipv6.sysctl.bindv6only;
#else
	return false;
#endif
}

bool rcm_h_capable_net_bind_service(struct net *net)
{
	return ns_capable(net->user_ns, CAP_NET_BIND_SERVICE);
}

struct rdma_cm_id *rcm_h_rdma_res_to_id(struct rdma_restrack_entry *res)
{
	return &container_of(res, struct rdma_id_private, res)->id;
}

struct ib_qp *rcm_h_create_qp(struct ib_pd *pd, struct ib_qp_init_attr *attr)
{
	return ib_create_qp(pd, attr);
}

void rcm_h_destroy_qp(struct ib_qp *qp)
{
	ib_destroy_qp(qp);
}
