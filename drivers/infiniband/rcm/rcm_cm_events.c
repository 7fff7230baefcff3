// SPDX-License-Identifier: GPL-2.0
/*
 * Builds the C structures of an ib_cm event (struct ib_cm_event with its
 * parameter union and bit fields, struct sa_path_rec) from plain values
 * supplied by rcm's Rust code, and calls the consumer's handler.
 */
#include <rdma/ib_cm.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_sa.h>
#include "../../../rust/bindings/rcm_helpers.h"

/* A path record's type: RoCE v1 or v2 by the GID it uses, else IB. */
static enum sa_path_rec_type rcm_rec_type(bool roce,
					  const struct ib_gid_attr *sgid_attr)
{
	if (roce && sgid_attr)
		return sa_conv_gid_to_pathrec_type(sgid_attr->gid_type);
	return SA_PATH_REC_TYPE_IB;
}

void rcm_h_fill_path_rec(const struct rcm_h_lap_path *l,
			 enum sa_path_rec_type rec_type, struct sa_path_rec *path)
{
	memcpy(path->sgid.raw, l->sgid, sizeof(path->sgid.raw));
	memcpy(path->dgid.raw, l->dgid, sizeof(path->dgid.raw));
	path->rec_type = rec_type;
	sa_path_set_slid(path, l->slid);
	sa_path_set_dlid(path, l->dlid);
	path->flow_label = cpu_to_be32(l->flow_label);
	path->hop_limit = l->hop_limit;
	path->traffic_class = l->traffic_class;
	path->reversible = 1;
	path->pkey = cpu_to_be16(l->pkey);
	path->sl = l->sl;
	path->mtu_selector = IB_SA_EQ;
	path->mtu = l->mtu;
	path->rate_selector = IB_SA_EQ;
	path->rate = l->rate;
	path->packet_life_time_selector = IB_SA_EQ;
	path->packet_life_time = l->packet_life_time;
	path->service_id = cpu_to_be64(l->service_id);
}

int rcm_h_path_from_lap_path(struct ib_device *ibdev,
			     const struct rcm_h_lap_path *l,
			     const struct ib_gid_attr *sgid_attr,
			     bool route_from_gid, struct rcm_h_path *out)
{
	struct sa_path_rec rec = {};
	const struct ib_gid_attr *held;
	int ret;

	rcm_h_fill_path_rec(l, rcm_rec_type(l->roce, sgid_attr), &rec);
	ret = rcm_h_path_from_sa(ibdev, &rec, route_from_gid ? sgid_attr : NULL,
				 out, &held);
	if (!ret)
		rdma_put_gid_attr(held);
	return ret;
}

/* The P_Key in the BTH of a received MAD, from its P_Key index. */
static u16 rcm_bth_pkey(struct ib_device *dev, u32 port, u16 pkey_index)
{
	u16 pkey;

	return ib_get_cached_pkey(dev, port, pkey_index, &pkey) ? 0 : pkey;
}

int rcm_h_deliver_req(struct ib_cm_id *id, const struct rcm_h_req_event *e)
{
	struct sa_path_rec path = {}, alt = {};
	struct ib_cm_event ev = {};
	struct ib_cm_req_event_param *p = &ev.param.req_rcvd;

	rcm_h_fill_path_rec(&e->primary,
			    rcm_rec_type(e->primary.roce, e->sgid_attr), &path);
	if (e->primary.roce)
		sa_path_set_dmac(&path, (u8 *)e->dmac);

	ev.event = IB_CM_REQ_RECEIVED;
	ev.private_data = (void *)e->private_data;
	p->listen_id = e->listen_id;
	p->bth_pkey = rcm_bth_pkey(id->device, e->port, e->pkey_index);
	p->port = e->port;
	p->primary_path = &path;
	if (e->has_alt) {
		rcm_h_fill_path_rec(&e->alt, path.rec_type, &alt);
		p->alternate_path = &alt;
	}
	p->ppath_sgid_attr = e->sgid_attr;
	p->remote_ca_guid = cpu_to_be64(e->remote_ca_guid);
	p->remote_qkey = e->remote_qkey;
	p->remote_qpn = e->remote_qpn;
	p->qp_type = e->qp_type;
	p->starting_psn = e->starting_psn;
	p->responder_resources = e->responder_resources;
	p->initiator_depth = e->initiator_depth;
	p->local_cm_response_timeout = e->local_cm_response_timeout;
	p->flow_control = e->flow_control;
	p->remote_cm_response_timeout = e->remote_cm_response_timeout;
	p->retry_count = e->retry_count;
	p->rnr_retry_count = e->rnr_retry_count;
	p->srq = e->srq;
	p->ece.vendor_id = e->vendor_id;
	p->ece.attr_mod = e->attr_mod;
	return id->cm_handler(id, &ev);
}

int rcm_h_deliver_sidr_req(struct ib_cm_id *id,
			   const struct rcm_h_sidr_req_event *e)
{
	struct ib_cm_event ev = {};
	struct ib_cm_sidr_req_event_param *p = &ev.param.sidr_req_rcvd;

	ev.event = IB_CM_SIDR_REQ_RECEIVED;
	ev.private_data = (void *)e->private_data;
	p->listen_id = e->listen_id;
	p->service_id = cpu_to_be64(e->service_id);
	p->sgid_attr = e->sgid_attr;
	p->bth_pkey = rcm_bth_pkey(id->device, e->port, e->pkey_index);
	p->port = e->port;
	p->pkey = e->pkey;
	return id->cm_handler(id, &ev);
}

int rcm_h_deliver_event(struct ib_cm_id *id, const struct rcm_h_event *e)
{
	struct ib_cm_event ev = {};
	struct sa_path_rec path = {};

	ev.event = e->event;
	ev.private_data = (void *)e->private_data;
	switch (e->event) {
	case IB_CM_REP_RECEIVED: {
		struct ib_cm_rep_event_param *p = &ev.param.rep_rcvd;

		p->remote_ca_guid = cpu_to_be64(e->remote_ca_guid);
		p->remote_qkey = e->qkey;
		p->remote_qpn = e->qpn;
		p->starting_psn = e->starting_psn;
		p->responder_resources = e->responder_resources;
		p->initiator_depth = e->initiator_depth;
		p->target_ack_delay = e->target_ack_delay;
		p->failover_accepted = e->failover_accepted;
		p->flow_control = e->flow_control;
		p->rnr_retry_count = e->rnr_retry_count;
		p->srq = e->srq;
		p->ece.vendor_id = e->vendor_id;
		p->ece.attr_mod = e->attr_mod;
		break;
	}
	case IB_CM_REJ_RECEIVED:
		ev.param.rej_rcvd.reason = e->status;
		ev.param.rej_rcvd.ari = (void *)e->info;
		ev.param.rej_rcvd.ari_length = e->info_len;
		break;
	case IB_CM_MRA_RECEIVED:
		ev.param.mra_rcvd.service_timeout = e->service_timeout;
		break;
	case IB_CM_LAP_RECEIVED:
		rcm_h_fill_path_rec(&e->lap, rcm_rec_type(e->lap.roce, e->sgid_attr),
			     &path);
		ev.param.lap_rcvd.alternate_path = &path;
		break;
	case IB_CM_APR_RECEIVED:
		ev.param.apr_rcvd.ap_status = e->status;
		ev.param.apr_rcvd.apr_info = (void *)e->info;
		ev.param.apr_rcvd.info_len = e->info_len;
		break;
	case IB_CM_SIDR_REP_RECEIVED: {
		struct ib_cm_sidr_rep_event_param *p = &ev.param.sidr_rep_rcvd;

		p->status = e->status;
		p->qkey = e->qkey;
		p->qpn = e->qpn;
		p->info = (void *)e->info;
		p->info_len = e->info_len;
		p->sgid_attr = e->sgid_attr;
		break;
	}
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
	case IB_CM_DREQ_ERROR:
	case IB_CM_LAP_ERROR:
	case IB_CM_SIDR_REQ_ERROR:
		ev.param.send_status = e->status;
		break;
	default:
		/* RTU, DREQ, DREP, TIMEWAIT_EXIT, USER_ESTABLISHED: no params. */
		break;
	}
	return id->cm_handler(id, &ev);
}
