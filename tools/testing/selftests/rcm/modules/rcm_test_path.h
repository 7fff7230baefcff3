/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The path the single-guest samples use: from port 1's first RoCE v2 GID
 * to itself, resolved already (the destination MAC is the port's own).
 */
#ifndef RCM_TEST_PATH_H
#define RCM_TEST_PATH_H

#include <linux/err.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>

/*
 * Fills `path` (service id `sid`) and takes a reference on the GID entry in
 * `*sgid_attr`; -EOPNOTSUPP without RoCE on port 1, -EADDRNOTAVAIL without
 * a RoCE v2 GID.
 */
static inline int rcm_test_loop_path(struct ib_device *device, __be64 sid,
				       const struct ib_gid_attr **sgid_attr,
				       struct sa_path_rec *path)
{
	const struct ib_gid_attr *attr, *found = NULL;
	struct net_device *ndev;
	int i, len;

	if (!rdma_is_port_valid(device, 1) || !rdma_protocol_roce(device, 1))
		return -EOPNOTSUPP;
	len = device->port_data[1].immutable.gid_tbl_len;
	for (i = 0; i < len && !found; i++) {
		attr = rdma_get_gid_attr(device, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP)
			found = attr;
		else
			rdma_put_gid_attr(attr);
	}
	if (!found)
		return -EADDRNOTAVAIL;

	memset(path, 0, sizeof(*path));
	path->rec_type = SA_PATH_REC_TYPE_ROCE_V2;
	path->sgid = found->gid;
	path->dgid = found->gid;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(found);
	if (!IS_ERR(ndev))
		memcpy(path->roce.dmac, ndev->dev_addr, ETH_ALEN);
	rcu_read_unlock();
	path->roce.route_resolved = true;
	path->service_id = sid;
	path->hop_limit = 64;
	path->reversible = 1;
	path->pkey = cpu_to_be16(0xffff);
	path->mtu = IB_MTU_1024;
	path->mtu_selector = IB_SA_EQ;
	path->rate = IB_RATE_PORT_CURRENT;
	path->packet_life_time = 14;
	path->packet_life_time_selector = IB_SA_EQ;
	*sgid_attr = found;
	return 0;
}

#endif
