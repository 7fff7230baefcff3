// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast groups of rdma_cm's UD ids on RoCE: the C side of
 * abi/rdma_cm/multicast.rs (see rust/bindings/rcm_mc_helpers.h).
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_sa.h>
#include "../../../rust/bindings/rcm_mc_helpers.h"

/* The MGID of an IP group: an IPv6 group as it is; an IPv4 one mapped
 * (::ffff:a.b.c.d for RoCE v2, ff0e::ffff:a.b.c.d for v1). */
static void rcm_mc_mgid(const struct sockaddr *addr, union ib_gid *mgid,
			enum ib_gid_type type)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;
	bool v2 = type == IB_GID_TYPE_ROCE_UDP_ENCAP;

	memset(mgid, 0, sizeof(*mgid));
	if (addr->sa_family == AF_INET6) {
		memcpy(mgid, &sin6->sin6_addr, sizeof(*mgid));
		return;
	}
	mgid->raw[0] = v2 ? 0 : 0xff;
	mgid->raw[1] = v2 ? 0 : 0x0e;
	mgid->raw[10] = 0xff;
	mgid->raw[11] = 0xff;
	memcpy(&mgid->raw[12], &sin->sin_addr.s_addr, 4);
}

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

void rcm_h_netdev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

/* Whether a membership of `group` holds an IGMP membership. */
static bool rcm_mc_igmp(struct rdma_id_private *priv,
			const struct sockaddr *group, bool send_only)
{
	return !send_only && group->sa_family == AF_INET &&
	       rcm_h_roce_gid_type(priv->id.device, priv->id.port_num) ==
		       IB_GID_TYPE_ROCE_UDP_ENCAP;
}

/* Whether `ndev` has an IPv4 configuration to join a group on. */
static bool rcm_mc_has_inet(struct net_device *ndev)
{
	bool has;

	rcu_read_lock();
	has = __in_dev_get_rcu(ndev);
	rcu_read_unlock();
	return has;
}

int rcm_h_rdma_mc_join(struct rdma_id_private *priv,
		       const struct sockaddr *group, bool send_only,
		       struct net_device **igmp, __be32 *addr)
{
	struct ib_device *dev = priv->id.device;
	u32 port = priv->id.port_num;
	struct net_device *ndev;
	int err = 0;

	*igmp = NULL;
	if (!rdma_protocol_roce(dev, port))
		return rdma_protocol_iwarp(dev, port) ? -ENOSYS : -EOPNOTSUPP;
	if (group->sa_family == AF_INET6 &&
	    rcm_h_roce_gid_type(dev, port) == IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -ENOTSUPP;
	ndev = rcm_h_rdma_id_ndev(priv);
	if (!ndev)
		return -ENODEV;
	if (!iboe_get_mtu(ndev->mtu)) {
		err = -EINVAL;
	} else if (rcm_mc_igmp(priv, group, send_only)) {
		if (!rcm_mc_has_inet(ndev)) {
			err = -ENODEV;
		} else {
			*igmp = ndev;
			*addr = ((const struct sockaddr_in *)group)->sin_addr.s_addr;
			return 0;
		}
	}
	dev_put(ndev);
	return err;
}

void rcm_h_rdma_mc_leave(struct rdma_id_private *priv,
			 const struct sockaddr *group, bool send_only,
			 struct net_device **igmp, __be32 *addr)
{

	*igmp = NULL;
	if (!rdma_protocol_roce(priv->id.device, priv->id.port_num))
		return;
	if (!rcm_mc_igmp(priv, group, send_only))
		return;
	*igmp = rcm_h_rdma_id_ndev(priv);
	*addr = ((const struct sockaddr_in *)group)->sin_addr.s_addr;
}

int rcm_h_rdma_deliver_mc(struct rdma_cm_id *id, void *context,
			  const struct sockaddr *group, u32 qkey)
{
	struct rdma_id_private *priv = container_of(id, struct rdma_id_private, id);
	enum ib_gid_type type = rcm_h_roce_gid_type(id->device, id->port_num);
	struct ib_sa_mcmember_rec rec = {};
	struct rdma_cm_event ev = {};
	struct net_device *ndev;
	int ret;

	rcm_mc_mgid(group, &rec.mgid, type);
	rdma_ip2gid((struct sockaddr *)&id->route.addr.src_addr, &rec.port_gid);
	rec.pkey = cpu_to_be16(0xffff);
	rec.rate = IB_RATE_PORT_CURRENT;
	rec.hop_limit = group->sa_family == AF_INET &&
			type == IB_GID_TYPE_ROCE_UDP_ENCAP ? IPV6_DEFAULT_HOPLIMIT : 1;
	ndev = rcm_h_rdma_id_ndev(priv);
	rec.mtu = ndev ? iboe_get_mtu(ndev->mtu) : 0;
	ev.param.ud.private_data = context;
	ev.event = RDMA_CM_EVENT_MULTICAST_JOIN;
	if (!ndev || ib_init_ah_from_mcmember(id->device, id->port_num, &rec,
					      ndev, type, &ev.param.ud.ah_attr)) {
		ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
	} else {
		ev.param.ud.qp_num = 0xFFFFFF;
		ev.param.ud.qkey = qkey;
	}
	dev_put(ndev);
	ret = id->event_handler(id, &ev);
	rdma_destroy_ah_attr(&ev.param.ud.ah_attr);
	return ret;
}
