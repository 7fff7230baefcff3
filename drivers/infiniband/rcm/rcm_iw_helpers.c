// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cm ids on iWARP devices, through the in-tree iw_cm: the C side of
 * abi/rdma_cm/iwarp.rs (see rust/bindings/rcm_iw_helpers.h).
 */
#include <linux/if_vlan.h>
#include <rdma/ib_cache.h>
#include "restrack.h"
#include "../../../rust/bindings/rcm_iw_helpers.h"

static const struct rcm_iw_callbacks *rcm_iw_cb;

void rcm_h_iw_set_callbacks(const struct rcm_iw_callbacks *cb)
{
	rcm_iw_cb = cb;
}

static void rcm_iw_event_values(const struct iw_cm_event *ev,
				struct rcm_h_iw_event *out)
{
	out->event = ev->event;
	out->status = ev->status;
	out->private_data = ev->private_data;
	out->private_data_len = ev->private_data ? ev->private_data_len : 0;
	out->ord = ev->ord;
	out->ird = ev->ird;
	out->local = (const struct sockaddr *)&ev->local_addr;
	out->remote = (const struct sockaddr *)&ev->remote_addr;
}

static int rcm_iw_handler(struct iw_cm_id *cm_id, struct iw_cm_event *ev)
{
	struct rcm_h_iw_event e;

	rcm_iw_event_values(ev, &e);
	return rcm_iw_cb->event((u64)(uintptr_t)cm_id->context, &e);
}

/* iw_cm calls a listener's handler with the request's new iw_cm id. */
static int rcm_iw_request_handler(struct iw_cm_id *cm_id,
				  struct iw_cm_event *ev)
{
	struct rcm_h_iw_event e;

	if (ev->event != IW_CM_EVENT_CONNECT_REQUEST)
		return -EINVAL;
	rcm_iw_event_values(ev, &e);
	return rcm_iw_cb->request((u64)(uintptr_t)cm_id->context, cm_id, &e);
}

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

static void rcm_iw_set_tos(struct iw_cm_id *cm_id, int tos)
{
	cm_id->tos = tos < 0 ? 0 : tos;
	cm_id->tos_set = tos >= 0;
}

struct iw_cm_id *rcm_h_iw_listen(struct rdma_id_private *priv,
				 struct ib_device *ibdev, u64 token,
				 int backlog, int tos, bool afonly)
{
	struct sockaddr *src = (struct sockaddr *)&priv->id.route.addr.src_addr;
	struct iw_cm_id *cm_id;
	int ret;

	cm_id = iw_create_cm_id(ibdev, rcm_iw_request_handler,
				(void *)(uintptr_t)token);
	if (IS_ERR(cm_id))
		return cm_id;
	rcm_iw_set_tos(cm_id, tos);
	cm_id->afonly = afonly;
	memcpy(&cm_id->local_addr, src, rdma_addr_size(src));
	ret = iw_cm_listen(cm_id, backlog);
	if (ret) {
		iw_destroy_cm_id(cm_id);
		return ERR_PTR(ret);
	}
	return cm_id;
}

int rcm_h_iw_qp_attr(struct rdma_id_private *priv, struct ib_qp_attr *attr,
		     int *mask)
{
	int ret = 0;

	if (!priv->cm_id.iw) {
		attr->qp_access_flags = 0;
		*mask = IB_QP_STATE | IB_QP_ACCESS_FLAGS;
	} else {
		ret = iw_cm_init_qp_attr(priv->cm_id.iw, attr, mask);
	}
	attr->port_num = priv->id.port_num;
	*mask |= IB_QP_PORT;
	return ret;
}

/* The id's QP (if any) to INIT with the connection's attributes, then RTR. */
static int rcm_iw_qp_rtr(struct rdma_id_private *priv, u8 responder_resources)
{
	struct ib_qp_attr attr = {};
	int mask, ret;

	if (!priv->id.qp)
		return 0;
	attr.qp_state = IB_QPS_INIT;
	ret = rcm_h_iw_qp_attr(priv, &attr, &mask);
	if (!ret)
		ret = ib_modify_qp(priv->id.qp, &attr, mask);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTR;
	ret = rcm_h_iw_qp_attr(priv, &attr, &mask);
	if (ret)
		return ret;
	attr.max_dest_rd_atomic = responder_resources;
	return ib_modify_qp(priv->id.qp, &attr, mask);
}

/* The consumer's parameters; the QP is the id's if rdma_cm made it. */
static void rcm_iw_conn_param(const struct rdma_id_private *priv,
			      const struct rcm_h_iw_param *p,
			      struct iw_cm_conn_param *out)
{
	out->private_data = p->private_data_len ? p->private_data : NULL;
	out->private_data_len = p->private_data_len;
	out->ord = p->ord;
	out->ird = p->ird;
	out->qpn = priv->id.qp ? priv->qp_num : p->qpn;
}

int rcm_h_iw_connect(struct rdma_id_private *priv, u64 token,
		     const struct rcm_h_iw_param *p)
{
	struct rdma_addr *a = &priv->id.route.addr;
	struct iw_cm_conn_param param;
	struct iw_cm_id *cm_id;
	int ret;

	cm_id = iw_create_cm_id(priv->id.device, rcm_iw_handler,
				(void *)(uintptr_t)token);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	rcm_iw_set_tos(cm_id, p->tos);
	memcpy(&cm_id->local_addr, &a->src_addr,
	       rdma_addr_size((struct sockaddr *)&a->src_addr));
	memcpy(&cm_id->remote_addr, &a->dst_addr,
	       rdma_addr_size((struct sockaddr *)&a->dst_addr));
	priv->cm_id.iw = cm_id;
	ret = rcm_iw_qp_rtr(priv, p->ird);
	if (!ret) {
		rcm_iw_conn_param(priv, p, &param);
		ret = iw_cm_connect(cm_id, &param);
	}
	if (ret) {
		/* No event can be queued for an id that never connected. */
		priv->cm_id.iw = NULL;
		iw_destroy_cm_id(cm_id);
	}
	return ret;
}

int rcm_h_iw_accept(struct rdma_id_private *priv,
		    const struct rcm_h_iw_param *p)
{
	struct iw_cm_conn_param param;
	int ret;

	if (!priv->cm_id.iw)
		return -EINVAL;
	ret = rcm_iw_qp_rtr(priv, p->ird);
	if (ret)
		return ret;
	rcm_iw_conn_param(priv, p, &param);
	return iw_cm_accept(priv->cm_id.iw, &param);
}

int rcm_h_iw_reject(struct rdma_id_private *priv, const void *data, u8 len)
{
	if (!priv->cm_id.iw)
		return -EINVAL;
	return iw_cm_reject(priv->cm_id.iw, len ? data : NULL, len);
}

int rcm_h_iw_disconnect(struct rdma_id_private *priv)
{
	if (!priv->cm_id.iw)
		return -EINVAL;
	return iw_cm_disconnect(priv->cm_id.iw, 0);
}

void rcm_h_iw_adopt(struct iw_cm_id *cm_id, u64 token)
{
	cm_id->context = (void *)(uintptr_t)token;
	cm_id->cm_handler = rcm_iw_handler;
}

void rcm_h_iw_set(struct rdma_id_private *priv, struct iw_cm_id *cm_id)
{
	priv->cm_id.iw = cm_id;
}

struct iw_cm_id *rcm_h_iw_take(struct rdma_id_private *priv)
{
	struct iw_cm_id *cm_id = priv->cm_id.iw;

	priv->cm_id.iw = NULL;
	return cm_id;
}

struct iw_cm_id *rcm_h_iw_get(struct rdma_id_private *priv)
{
	return priv->cm_id.iw;
}

void rcm_h_iw_destroy(struct iw_cm_id *cm_id)
{
	if (cm_id)
		iw_destroy_cm_id(cm_id);
}

void rcm_h_iw_refuse(struct iw_cm_id *cm_id)
{
	iw_cm_reject(cm_id, NULL, 0);
	iw_destroy_cm_id(cm_id);
}
