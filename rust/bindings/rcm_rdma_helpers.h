/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers for rcm's rdma_cm (rcm_rdma_helpers.c): the parts of an rdma_cm
 * id that are C structures consumers and ib_core read (struct rdma_cm_id
 * inside 6.12's struct rdma_id_private, whose layout nldev relies on), the
 * address and route services of ib_core, and the event structure.
 */
#ifndef RCM_RDMA_HELPERS_H
#define RCM_RDMA_HELPERS_H

#include <linux/socket.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_sa.h>
#include "cma_priv.h"
#include "restrack.h"
#include "rcm_helpers.h"

/*
 * A new id's spinlock, handler and QP mutexes (one lockdep class each for
 * every id's) and completion: macros that declare their lock classes. The
 * rest of a new id is rust/rdma/cm_id.rs's.
 */
void rcm_h_rdma_id_init_locks(struct rdma_id_private *priv);
/* get_net / put_net: a reference on a namespace. */
struct net *rcm_h_get_net(struct net *net);
void rcm_h_put_net(struct net *net);

void rcm_h_rdma_handler_lock(struct rdma_id_private *priv);
/* A new id's lock, taken while its listener's is held. */
void rcm_h_rdma_handler_lock_nested(struct rdma_id_private *priv);
/* The lock of an id being destroyed, which may be taken while other ids'
 * are held (see rcm_rdma_helpers.c). */
void rcm_h_rdma_handler_lock_to_destroy(struct rdma_id_private *priv);
void rcm_h_rdma_handler_unlock(struct rdma_id_private *priv);
/* The id's QP lock (6.12's qp_mutex): its QP is moved and destroyed
 * under it. Taken inside rdma_cm's core lock, never around it. */
void rcm_h_rdma_qp_lock(struct rdma_id_private *priv);
void rcm_h_rdma_qp_unlock(struct rdma_id_private *priv);

/*
 * The network device an IP source address belongs to, into the id's
 * device address (rdma_translate_ip); 0 or -EADDRNOTAVAIL / -ENODEV.
 */
int rcm_h_rdma_translate(struct rdma_id_private *priv);

/* The service level type of service `tos` maps to on `ndev` (its VLAN
 * egress map or traffic class map; static inlines). */
u8 rcm_h_tos_to_sl(struct net_device *ndev, u8 tos);

/* rcm's SA client (a static of this file), registered while the module is
 * loaded; its path queries are started from rust/rdma/resolution.rs. */
void rcm_h_sa_client_register(void);
void rcm_h_sa_client_unregister(void);
struct ib_sa_client *rcm_h_sa_client(void);

/* An event for an id's consumer, as plain values (rust/rdma/cm_id.rs builds
 * struct rdma_cm_event from them). */
struct rcm_h_rdma_event {
	u32 event;		/* enum rdma_cm_event_type */
	int status;
	const void *private_data;
	u8 private_data_len;
	u8 responder_resources;
	u8 initiator_depth;
	u8 flow_control;
	u8 retry_count;
	u8 rnr_retry_count;
	u8 srq;
	u32 qp_num;
	u32 ece_vendor_id;
	u32 ece_attr_mod;
	u8 ud;			/* a UD id's event: param.ud */
	u8 ud_ah;		/* ... with the address of the id's route */
	u32 qkey;
};


/* The caller's network namespace (ucma creates ids in it). */
struct net *rcm_h_current_net(void);
/* The namespace's ip_local_port_range. */
void rcm_h_net_port_range(struct net *net, int *low, int *high);
/* The namespace's net.ipv6.bindv6only. */
bool rcm_h_net_bindv6only(struct net *net);
/* The caller may bind ports below 1024 in `net` (its user namespace's
 * CAP_NET_BIND_SERVICE). */
bool rcm_h_capable_net_bind_service(struct net *net);

/* The id of a resource-tracking entry of an rdma_cm id. */
struct rdma_cm_id *rcm_h_rdma_res_to_id(struct rdma_restrack_entry *res);

/* ib_create_qp / ib_destroy_qp for an id's QP. */
struct ib_qp *rcm_h_create_qp(struct ib_pd *pd, struct ib_qp_init_attr *attr);
void rcm_h_destroy_qp(struct ib_qp *qp);

#endif
