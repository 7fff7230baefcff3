/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdma_cm ids on iWARP devices: their connections go through the in-tree
 * iw_cm module (include/rdma/iw_cm.h). An iw_cm id's context is a token,
 * rcm's number for the rdma_cm id, never a pointer: its events are looked
 * up by it, so a late event finds no id rather than freed memory.
 *
 * iw_destroy_cm_id() may flush iw_cm's workqueue, whose work calls into
 * rcm (struct rcm_iw_callbacks), so it is never called with a lock those
 * take held.
 */
#ifndef RCM_IW_HELPERS_H
#define RCM_IW_HELPERS_H

#include <rdma/iw_cm.h>
#include "rcm_rdma_helpers.h"

/* What a consumer asks of an iWARP connection. */
struct rcm_h_iw_param {
	const void *private_data;
	u8 private_data_len;
	u8 ord;			/* the consumer's initiator depth */
	u8 ird;			/* the consumer's responder resources */
	u32 qpn;		/* without a QP of rdma_cm's */
	int tos;		/* -1: not set */
};

/* An iw_cm event as plain values. */
struct rcm_h_iw_event {
	u32 event;		/* enum iw_cm_event_type */
	int status;
	const void *private_data;
	u8 private_data_len;
	u8 ord;
	u8 ird;
	const struct sockaddr *local;
	const struct sockaddr *remote;
};

/* iw_cm's callbacks on the Rust side (rust/rdma/iw_cm.rs). */
struct rcm_iw_callbacks {
	/* An event of the connection of the id reported as token. */
	int (*event)(u64 token, const struct rcm_h_iw_event *e);
	/* A connection request on a listener of token, on the new cm_id;
	 * non-zero refuses it (iw_cm then destroys cm_id). */
	int (*request)(u64 token, struct iw_cm_id *cm_id,
		       const struct rcm_h_iw_event *e);
};

/* Set once, before any iw_cm id is made; cb outlives every iw_cm id. */
void rcm_h_iw_set_callbacks(const struct rcm_iw_callbacks *cb);

/* The GID entry of an iWARP port for the id's resolved address (that of
 * the port's network device), held; NULL if the port does not serve it. */
const struct ib_gid_attr *
rcm_h_iw_find_gid(const struct rdma_id_private *priv, struct ib_device *ibdev,
		  u32 port);

/* Listens on `ibdev` at the id's source address for id `token`, with a
 * type of service (-1: not set); an iw_cm id or an ERR_PTR. */
struct iw_cm_id *rcm_h_iw_listen(struct rdma_id_private *priv,
				 struct ib_device *ibdev, u64 token,
				 int backlog, int tos, bool afonly);

/* Connects the id (token `token`) to its destination: a new iw_cm id in
 * priv->cm_id.iw, the id's QP (if any) moved to RTR, then iw_cm_connect.
 * On failure nothing is left. */
int rcm_h_iw_connect(struct rdma_id_private *priv, u64 token,
		     const struct rcm_h_iw_param *p);

/* Accepts the request of the id's iw_cm id, its QP (if any) to RTR first. */
int rcm_h_iw_accept(struct rdma_id_private *priv,
		    const struct rcm_h_iw_param *p);
/* Refuses it. */
int rcm_h_iw_reject(struct rdma_id_private *priv, const void *data, u8 len);
/* Closes the connection (orderly). */
int rcm_h_iw_disconnect(struct rdma_id_private *priv);

/* A new connection's iw_cm id (from a request) becomes id `token`'s. */
void rcm_h_iw_adopt(struct iw_cm_id *cm_id, u64 token);
/* ... and is stored in the id once it has its C side. */
void rcm_h_iw_set(struct rdma_id_private *priv, struct iw_cm_id *cm_id);
/* Takes the id's iw_cm id out of it (NULL if none). */
struct iw_cm_id *rcm_h_iw_take(struct rdma_id_private *priv);
/* The id's iw_cm id (rdma_iw_cm_id). */
struct iw_cm_id *rcm_h_iw_get(struct rdma_id_private *priv);
/* iw_destroy_cm_id; NULL is allowed. */
void rcm_h_iw_destroy(struct iw_cm_id *cm_id);
/* Refuses and destroys the iw_cm id of a request no id took. */
void rcm_h_iw_refuse(struct iw_cm_id *cm_id);

/* rdma_init_qp_attr for an iWARP id. */
int rcm_h_iw_qp_attr(struct rdma_id_private *priv, struct ib_qp_attr *attr,
		     int *mask);

#endif
