// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of rcm's rdma_cm ids: the fields of struct rdma_cm_id (inside
 * 6.12's struct rdma_id_private, whose layout ib_core's resource tracking
 * reads) that consumers and ib_core see, and the RoCE route's link.
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

void rcm_h_rdma_id_init(struct rdma_id_private *priv, struct net *net,
			rdma_cm_event_handler handler, void *context,
			enum rdma_ucm_port_space ps, enum ib_qp_type qp_type,
			const char *caller, const struct rdma_id_private *parent)
{
	static struct lock_class_key handler_key, qp_key;

	priv->id.event_handler = handler;
	priv->id.context = context;
	priv->id.ps = ps;
	priv->id.qp_type = qp_type;
	priv->state = RDMA_CM_IDLE;
	spin_lock_init(&priv->lock);
	__mutex_init(&priv->handler_mutex, "rcm::rdma_handler", &handler_key);
	__mutex_init(&priv->qp_mutex, "rcm::rdma_qp", &qp_key);
	init_completion(&priv->comp);
	refcount_set(&priv->refcount, 1);
	INIT_LIST_HEAD(&priv->listen_list);
	INIT_LIST_HEAD(&priv->mc_list);
	INIT_LIST_HEAD(&priv->id_list_entry);
	priv->id.route.addr.dev_addr.net = get_net(net);
	rdma_restrack_new(&priv->res, RDMA_RESTRACK_CM_ID);
	if (parent)
		rdma_restrack_parent_name(&priv->res, &parent->res);
	else
		rdma_restrack_set_name(&priv->res, caller);
}

void rcm_h_rdma_id_release(struct rdma_id_private *priv)
{
	kfree(priv->id.route.path_rec);
	priv->id.route.path_rec = NULL;
	kfree(priv->id.route.path_rec_inbound);
	kfree(priv->id.route.path_rec_outbound);
	put_net(priv->id.route.addr.dev_addr.net);
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

enum ib_gid_type rcm_h_roce_gid_type(struct ib_device *ibdev, u32 port)
{
	unsigned long supported = roce_gid_type_mask_support(ibdev, port);

	if (supported & BIT(IB_GID_TYPE_ROCE_UDP_ENCAP))
		return IB_GID_TYPE_ROCE_UDP_ENCAP;
	return IB_GID_TYPE_ROCE;
}

void rcm_h_rdma_take_gid(struct rdma_id_private *priv,
			 const struct ib_gid_attr *attr, struct ib_device *ibdev,
			 u32 port)
{
	struct rdma_dev_addr *da = &priv->id.route.addr.dev_addr;

	if (da->sgid_attr)
		rdma_put_gid_attr(da->sgid_attr);
	da->sgid_attr = attr;
	priv->gid_type = attr->gid_type;
	priv->id.device = ibdev;
	priv->id.port_num = port;
}

void rcm_h_rdma_track(struct rdma_id_private *priv)
{
	if (!priv->res.valid)
		rdma_restrack_add(&priv->res);
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

struct net_device *rcm_h_rdma_id_ndev(const struct rdma_id_private *priv)
{
	const struct rdma_dev_addr *da = &priv->id.route.addr.dev_addr;

	return da->bound_dev_if ? dev_get_by_index(da->net, da->bound_dev_if) :
				  NULL;
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

int rcm_h_rdma_passive_route(struct rdma_id_private *priv,
			     struct ib_device *ibdev, u32 port,
			     const struct ib_gid_attr *attr,
			     const struct sa_path_rec *path)
{
	struct rdma_dev_addr *da = &priv->id.route.addr.dev_addr;
	struct sa_path_rec *rec = NULL;
	struct net_device *ndev;

	if (path) {
		rec = kmemdup(path, sizeof(*rec), GFP_KERNEL);
		if (!rec) {
			rdma_put_gid_attr(attr);
			return -ENOMEM;
		}
	}
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR(ndev))
		rdma_copy_src_l2_addr(da, ndev);
	rcu_read_unlock();
	if (rec)
		rdma_addr_set_dgid(da, &rec->dgid);
	rcm_h_rdma_take_gid(priv, attr, ibdev, port);
	kfree(priv->id.route.path_rec);
	priv->id.route.path_rec = rec;
	priv->id.route.num_pri_alt_paths = rec ? 1 : 0;
	rcm_h_rdma_track(priv);
	return 0;
}

struct net *rcm_h_gid_net(struct ib_device *ibdev, u32 port, u8 sgid_index)
{
	const struct ib_gid_attr *attr = rdma_get_gid_attr(ibdev, port, sgid_index);
	struct net *net = &init_net;
	struct net_device *ndev;

	if (IS_ERR(attr))
		return net;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR(ndev))
		net = dev_net(ndev);
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	return net;
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
