// SPDX-License-Identifier: GPL-2.0
/*
 * The CM's per-port message counters in sysfs, where the C CM of 6.12
 * keeps them: /sys/class/infiniband/<dev>/ports/<n>/cm_{tx_msgs,tx_retries,
 * rx_msgs,rx_duplicates}/{req,mra,rej,rep,rtu,dreq,drep,sidr_req,sidr_rep,
 * lap,apr}. The attribute tables are static C; the counting is done by the
 * Rust CM service through rcm_h_count().
 */
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sysfs.h>
#include "../../../rust/bindings/rcm_helpers.h"

/* Exported by ib_core, declared only in its private core_priv.h. */
int ib_port_register_client_groups(struct ib_device *ibdev, u32 port_num,
				   const struct attribute_group **groups);
void ib_port_unregister_client_groups(struct ib_device *ibdev, u32 port_num,
				      const struct attribute_group **groups);

#define RCM_NR_MSGS 11 /* REQ (attribute 0x10) .. APR (0x1A) */

struct rcm_h_counters {
	struct list_head node;		/* in rcm_counters_list */
	struct ib_device *ibdev;
	u32 first_port;
	u32 nr_ports;
	unsigned long registered; /* bit per port whose groups exist */
	atomic_long_t c[][RCM_NR_MSGS * RCM_H_NR_GROUPS];
};

/* Every device's counters, for the show hook to find a device's. */
static DEFINE_SPINLOCK(rcm_counters_lock);
static LIST_HEAD(rcm_counters_list);

struct rcm_counter_attribute {
	struct ib_port_attribute attr;
	u8 group;
	u8 index;
};

static ssize_t rcm_show_counter(struct ib_device *ibdev, u32 port,
				struct ib_port_attribute *attr, char *buf)
{
	struct rcm_counter_attribute *a =
		container_of(attr, struct rcm_counter_attribute, attr);
	struct rcm_h_counters *c;
	long value = 0;

	spin_lock(&rcm_counters_lock);
	list_for_each_entry(c, &rcm_counters_list, node)
		if (c->ibdev == ibdev && port >= c->first_port &&
		    port - c->first_port < c->nr_ports)
			value = atomic_long_read(
				&c->c[port - c->first_port]
				     [a->group * RCM_NR_MSGS + a->index]);
	spin_unlock(&rcm_counters_lock);
	return sysfs_emit(buf, "%ld\n", value);
}

#define RCM_COUNTER(_name, _group, _index)                                    \
	{ .attr = __ATTR(_name, 0444, rcm_show_counter, NULL),                 \
	  .group = _group, .index = _index }

#define RCM_COUNTER_GROUP(_group, _name)                                      \
	static struct rcm_counter_attribute rcm_attr_##_group[] = {           \
		RCM_COUNTER(req, _group, 0),  RCM_COUNTER(mra, _group, 1),    \
		RCM_COUNTER(rej, _group, 2),  RCM_COUNTER(rep, _group, 3),    \
		RCM_COUNTER(rtu, _group, 4),  RCM_COUNTER(dreq, _group, 5),   \
		RCM_COUNTER(drep, _group, 6), RCM_COUNTER(sidr_req, _group, 7), \
		RCM_COUNTER(sidr_rep, _group, 8), RCM_COUNTER(lap, _group, 9), \
		RCM_COUNTER(apr, _group, 10),                                  \
	};                                                                     \
	static struct attribute *rcm_attrs_##_group[RCM_NR_MSGS + 1];          \
	static struct attribute_group rcm_group_##_group = {                  \
		.name = _name,                                                 \
		.attrs = rcm_attrs_##_group,                                   \
	}

RCM_COUNTER_GROUP(RCM_H_TX, "cm_tx_msgs");
RCM_COUNTER_GROUP(RCM_H_TX_RETRIES, "cm_tx_retries");
RCM_COUNTER_GROUP(RCM_H_RX, "cm_rx_msgs");
RCM_COUNTER_GROUP(RCM_H_RX_DUPLICATES, "cm_rx_duplicates");

static const struct attribute_group *rcm_groups[] = {
	&rcm_group_RCM_H_TX, &rcm_group_RCM_H_TX_RETRIES,
	&rcm_group_RCM_H_RX, &rcm_group_RCM_H_RX_DUPLICATES, NULL,
};

static void rcm_fill_attrs(struct attribute **attrs,
			   struct rcm_counter_attribute *table)
{
	int i;

	for (i = 0; i < RCM_NR_MSGS; i++)
		attrs[i] = &table[i].attr.attr;
	attrs[RCM_NR_MSGS] = NULL;
}

struct rcm_h_counters *rcm_h_counters_add(struct ib_device *ibdev)
{
	u32 first = rdma_start_port(ibdev), last = rdma_end_port(ibdev), p;
	struct rcm_h_counters *c;
	int ret;

	rcm_fill_attrs(rcm_attrs_RCM_H_TX, rcm_attr_RCM_H_TX);
	rcm_fill_attrs(rcm_attrs_RCM_H_TX_RETRIES, rcm_attr_RCM_H_TX_RETRIES);
	rcm_fill_attrs(rcm_attrs_RCM_H_RX, rcm_attr_RCM_H_RX);
	rcm_fill_attrs(rcm_attrs_RCM_H_RX_DUPLICATES,
		       rcm_attr_RCM_H_RX_DUPLICATES);

	if (last - first + 1 > BITS_PER_LONG)
		return ERR_PTR(-EINVAL);
	c = kzalloc(struct_size(c, c, last - first + 1), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->ibdev = ibdev;
	c->first_port = first;
	c->nr_ports = last - first + 1;

	spin_lock(&rcm_counters_lock);
	list_add_tail(&c->node, &rcm_counters_list);
	spin_unlock(&rcm_counters_lock);

	for (p = first; p <= last; p++) {
		if (!rdma_cap_ib_cm(ibdev, p))
			continue;
		ret = ib_port_register_client_groups(ibdev, p, rcm_groups);
		if (ret) {
			rcm_h_counters_remove(c);
			return ERR_PTR(ret);
		}
		__set_bit(p - first, &c->registered);
	}
	return c;
}

void rcm_h_counters_remove(struct rcm_h_counters *c)
{
	u32 i;

	for (i = 0; i < c->nr_ports; i++)
		if (test_bit(i, &c->registered))
			ib_port_unregister_client_groups(c->ibdev,
							 c->first_port + i,
							 rcm_groups);
	spin_lock(&rcm_counters_lock);
	list_del(&c->node);
	spin_unlock(&rcm_counters_lock);
	kfree(c);
}

void rcm_h_count(struct rcm_h_counters *c, u32 port, u32 group, u16 attr_id)
{
	u32 index = attr_id - 0x10;

	if (port < c->first_port || port - c->first_port >= c->nr_ports ||
	    group >= RCM_H_NR_GROUPS || attr_id < 0x10 || index >= RCM_NR_MSGS)
		return;
	atomic_long_inc(&c->c[port - c->first_port][group * RCM_NR_MSGS + index]);
}
