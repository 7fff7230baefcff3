// SPDX-License-Identifier: GPL-2.0
/*
 * The QP attributes ib_cm_init_qp_attr computes, at every stage of a
 * connection and on both sides, for RC, UC and XRC, with and without an
 * alternate path.
 *
 * Consumers program their QPs with exactly what ib_cm_init_qp_attr returns
 * (rdma_cm does, for every connection), so a CM replacing the C ib_cm must
 * return the same attributes and the same mask. This module connects a
 * client id to a listener of its own on one device (the path leads to the
 * port's own GID), and logs, for each scenario, side and state, the mask
 * and every attribute the mask names, one line each:
 *
 *   rcm_test_qp_attr: <scenario> <side> <cm state> <qp state>: <fields>
 *
 * The lines carry no addresses or random numbers, so the kselftest
 * rcm_ib_cm_errno.sh compares the lines of a run on the 6.12 C ib_cm with
 * those of a run on rcm in the same boot: they must be identical.
 *
 *   insmod rcm_test_qp_attr.ko [dev=rxe0]
 *
 * All the work happens in module init; it fails (-EIO) if a scenario did
 * not complete. Every id is destroyed before init returns.
 */
#define pr_fmt(fmt) "rcm_test_qp_attr: " fmt

#include <linux/completion.h>
#include <linux/module.h>
#include <rdma/ib_cm.h>
#include "rcm_test_path.h"

static char *ibdev = "rxe0";
module_param_named(dev, ibdev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to connect over (port 1, RoCE v2)");

/* The listener's service id: "RCMQ" and the scenario number. */
#define SID(n)		cpu_to_be64(0x52434d5100000000ULL + (n))
#define CLIENT_QPN	0x111
#define SERVER_QPN	0x222
#define CLIENT_PSN	0x1234
#define SERVER_PSN	0x5678
#define WAIT		(10 * HZ)

static struct ib_device *device;
static const struct ib_gid_attr *sgid_attr;
static struct sa_path_rec path;

/* One connection: the scenario and what each side has seen. */
struct scenario {
	const char *name;
	enum ib_qp_type qp_type;
	bool alt;
	struct ib_cm_id *client, *server, *listener;
	struct completion rep_seen, rtu_seen, closed;
	/*
	 * Each side logs a state only while the other waits, so that no
	 * message the other sends changes it meanwhile.
	 */
	struct completion client_logged, server_logged;
	int failures;
	/* The REJ reason the REQ got (6.12 rejects alternate paths on RoCE). */
	int rejected;
	bool drep_seen;
};

static const char * const cm_states[] = {
	[IB_CM_IDLE] = "IDLE", [IB_CM_LISTEN] = "LISTEN",
	[IB_CM_REQ_SENT] = "REQ_SENT", [IB_CM_REQ_RCVD] = "REQ_RCVD",
	[IB_CM_MRA_REQ_SENT] = "MRA_REQ_SENT",
	[IB_CM_MRA_REQ_RCVD] = "MRA_REQ_RCVD", [IB_CM_REP_SENT] = "REP_SENT",
	[IB_CM_REP_RCVD] = "REP_RCVD", [IB_CM_MRA_REP_SENT] = "MRA_REP_SENT",
	[IB_CM_MRA_REP_RCVD] = "MRA_REP_RCVD",
	[IB_CM_ESTABLISHED] = "ESTABLISHED", [IB_CM_DREQ_SENT] = "DREQ_SENT",
	[IB_CM_DREQ_RCVD] = "DREQ_RCVD", [IB_CM_TIMEWAIT] = "TIMEWAIT",
	[IB_CM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
	[IB_CM_SIDR_REQ_RCVD] = "SIDR_REQ_RCVD",
};

static const char * const qp_states[] = {
	[IB_QPS_INIT] = "INIT", [IB_QPS_RTR] = "RTR", [IB_QPS_RTS] = "RTS",
};

/* An address vector as text; the GID entry by index, not by pointer. */
static int ah_text(char *buf, size_t len, const struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh = &ah->grh;

	return scnprintf(buf, len,
			 "{type %d port %u sl %u dlid %u bits %u rate %u grh %d dgid %pI6 sgid_index %u flow %#x tc %u hop %u dmac %pM}",
			 ah->type, ah->port_num, ah->sl, rdma_ah_get_dlid(ah),
			 rdma_ah_get_path_bits(ah), ah->static_rate,
			 !!(ah->ah_flags & IB_AH_GRH), grh->dgid.raw,
			 grh->sgid_index, grh->flow_label, grh->traffic_class,
			 grh->hop_limit,
			 ah->type == RDMA_AH_ATTR_TYPE_ROCE ? ah->roce.dmac :
							      (u8[6]){});
}

/* Logs the attributes for `qp_state`, or the errno, for one side. */
static void dump(struct scenario *s, const char *side, struct ib_cm_id *id,
		 enum ib_qp_state qp_state)
{
	struct ib_qp_attr a = { .qp_state = qp_state };
	char line[640], ah[200];
	int mask = 0, ret, n;

	ret = ib_cm_init_qp_attr(id, &a, &mask);
	n = scnprintf(line, sizeof(line), "%s %s %s %s:", s->name, side,
		      cm_states[id->state], qp_states[qp_state]);
	if (ret) {
		pr_info("%s errno %d\n", line, ret);
		return;
	}
	n += scnprintf(line + n, sizeof(line) - n, " mask %#x", mask);
	if (mask & IB_QP_ACCESS_FLAGS)
		n += scnprintf(line + n, sizeof(line) - n, " access %#x",
			       a.qp_access_flags);
	if (mask & IB_QP_PKEY_INDEX)
		n += scnprintf(line + n, sizeof(line) - n, " pkey_index %u",
			       a.pkey_index);
	if (mask & IB_QP_PORT)
		n += scnprintf(line + n, sizeof(line) - n, " port %u",
			       a.port_num);
	if (mask & IB_QP_PATH_MTU)
		n += scnprintf(line + n, sizeof(line) - n, " mtu %u",
			       a.path_mtu);
	if (mask & IB_QP_DEST_QPN)
		n += scnprintf(line + n, sizeof(line) - n, " dest_qpn %#x",
			       a.dest_qp_num);
	if (mask & IB_QP_RQ_PSN)
		n += scnprintf(line + n, sizeof(line) - n, " rq_psn %#x",
			       a.rq_psn);
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		n += scnprintf(line + n, sizeof(line) - n,
			       " max_dest_rd_atomic %u", a.max_dest_rd_atomic);
	if (mask & IB_QP_MIN_RNR_TIMER)
		n += scnprintf(line + n, sizeof(line) - n, " min_rnr_timer %u",
			       a.min_rnr_timer);
	if (mask & IB_QP_SQ_PSN)
		n += scnprintf(line + n, sizeof(line) - n, " sq_psn %#x",
			       a.sq_psn);
	if (mask & IB_QP_RETRY_CNT)
		n += scnprintf(line + n, sizeof(line) - n, " retry %u",
			       a.retry_cnt);
	if (mask & IB_QP_RNR_RETRY)
		n += scnprintf(line + n, sizeof(line) - n, " rnr_retry %u",
			       a.rnr_retry);
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		n += scnprintf(line + n, sizeof(line) - n, " max_rd_atomic %u",
			       a.max_rd_atomic);
	if (mask & IB_QP_TIMEOUT)
		n += scnprintf(line + n, sizeof(line) - n, " timeout %u",
			       a.timeout);
	if (mask & IB_QP_PATH_MIG_STATE)
		n += scnprintf(line + n, sizeof(line) - n, " mig %u",
			       a.path_mig_state);
	pr_info("%s\n", line);
	/* The address vectors on lines of their own (printk's line limit). */
	if (mask & IB_QP_AV) {
		ah_text(ah, sizeof(ah), &a.ah_attr);
		pr_info("%s %s %s %s: av %s\n", s->name, side,
			cm_states[id->state], qp_states[qp_state], ah);
	}
	if (mask & IB_QP_ALT_PATH) {
		ah_text(ah, sizeof(ah), &a.alt_ah_attr);
		pr_info("%s %s %s %s: alt port %u pkey_index %u timeout %u av %s\n",
			s->name, side, cm_states[id->state],
			qp_states[qp_state], a.alt_port_num, a.alt_pkey_index,
			a.alt_timeout, ah);
	}
}

static void dump_all(struct scenario *s, const char *side, struct ib_cm_id *id)
{
	dump(s, side, id, IB_QPS_INIT);
	dump(s, side, id, IB_QPS_RTR);
	dump(s, side, id, IB_QPS_RTS);
}

static int server_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct scenario *s = id->context;
	struct ib_cm_rep_param rep = {
		.qp_num = SERVER_QPN,
		.starting_psn = SERVER_PSN,
		.responder_resources = 2,
		.initiator_depth = 3,
		.failover_accepted = 0,
		.flow_control = 1,
		.rnr_retry_count = 6,
		.srq = s ? s->qp_type == IB_QPT_XRC_INI : 0,
	};

	switch (ev->event) {
	case IB_CM_REQ_RECEIVED:
		/* The new id inherits the listener's context: the scenario. */
		s->server = id;
		if (!wait_for_completion_timeout(&s->client_logged, WAIT))
			s->failures++;
		dump_all(s, "server", id);
		if (ib_send_cm_rep(id, &rep))
			s->failures++;
		dump_all(s, "server", id);
		complete(&s->server_logged);
		return 0;
	case IB_CM_RTU_RECEIVED:
		dump_all(s, "server", id);
		complete(&s->rtu_seen);
		return 0;
	case IB_CM_DREQ_RECEIVED:
		ib_send_cm_drep(id, NULL, 0);
		return 0;
	default:
		return 0;
	}
}

static int client_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct scenario *s = id->context;

	switch (ev->event) {
	case IB_CM_REP_RECEIVED:
		if (!wait_for_completion_timeout(&s->server_logged, WAIT))
			s->failures++;
		dump_all(s, "client", id);
		if (ib_send_cm_rtu(id, NULL, 0))
			s->failures++;
		dump_all(s, "client", id);
		complete(&s->rep_seen);
		return 0;
	case IB_CM_REJ_RECEIVED:
		s->rejected = ev->param.rej_rcvd.reason;
		pr_info("%s client %s: REJ reason %d\n", s->name,
			cm_states[id->state], s->rejected);
		complete(&s->rep_seen);
		return 0;
	case IB_CM_REQ_ERROR:
		s->failures++;
		complete(&s->rep_seen);
		return 0;
	case IB_CM_DREP_RECEIVED:
		s->drep_seen = true;
		complete(&s->closed);
		return 0;
	case IB_CM_DREQ_ERROR:
		complete(&s->closed);
		return 0;
	default:
		return 0;
	}
}

static int run(struct scenario *s, int n)
{
	struct ib_cm_req_param req = {
		.primary_path = &path,
		.alternate_path = s->alt ? &path : NULL,
		.ppath_sgid_attr = sgid_attr,
		.service_id = SID(n),
		.qp_num = CLIENT_QPN,
		.qp_type = s->qp_type,
		.starting_psn = CLIENT_PSN,
		.responder_resources = 4,
		.initiator_depth = 5,
		.remote_cm_response_timeout = 20,
		.local_cm_response_timeout = 19,
		.flow_control = 1,
		.retry_count = 5,
		.rnr_retry_count = 4,
		.max_cm_retries = 3,
		.srq = 0,
	};
	int ret;

	init_completion(&s->rep_seen);
	init_completion(&s->rtu_seen);
	init_completion(&s->closed);
	init_completion(&s->client_logged);
	init_completion(&s->server_logged);
	s->listener = ib_create_cm_id(device, server_handler, s);
	s->client = ib_create_cm_id(device, client_handler, s);
	if (IS_ERR(s->listener) || IS_ERR(s->client)) {
		ret = -ENOMEM;
		goto out;
	}
	ret = ib_cm_listen(s->listener, SID(n));
	if (ret)
		goto out;
	ret = ib_send_cm_req(s->client, &req);
	if (ret)
		goto out;
	dump_all(s, "client", s->client);
	complete(&s->client_logged);
	ret = -ETIMEDOUT;
	if (!wait_for_completion_timeout(&s->rep_seen, WAIT))
		goto out;
	if (s->rejected) {
		/* Nothing reached the listener: the outcome is the REJ. */
		ret = s->failures ? -EIO : 0;
		goto out;
	}
	if (!wait_for_completion_timeout(&s->rtu_seen, WAIT))
		goto out;
	/* The connection ends with the server's DREP. */
	ret = ib_send_cm_dreq(s->client, NULL, 0);
	if (!ret && (!wait_for_completion_timeout(&s->closed, WAIT) ||
		     !s->drep_seen))
		ret = -ETIMEDOUT;
	if (!ret && s->failures)
		ret = -EIO;
out:
	if (!IS_ERR_OR_NULL(s->client))
		ib_destroy_cm_id(s->client);
	if (s->server)
		ib_destroy_cm_id(s->server);
	if (!IS_ERR_OR_NULL(s->listener))
		ib_destroy_cm_id(s->listener);
	pr_info("%s: %s (%d)\n", s->name,
		ret ? "failed" : s->rejected ? "rejected" : "done", ret);
	return ret;
}

static struct scenario scenarios[] = {
	{ .name = "rc", .qp_type = IB_QPT_RC },
	{ .name = "rc_alt", .qp_type = IB_QPT_RC, .alt = true },
	{ .name = "uc", .qp_type = IB_QPT_UC },
	{ .name = "uc_alt", .qp_type = IB_QPT_UC, .alt = true },
	{ .name = "xrc", .qp_type = IB_QPT_XRC_INI },
	{ .name = "xrc_alt", .qp_type = IB_QPT_XRC_INI, .alt = true },
};

static int __init qp_attr_init(void)
{
	int i, failed = 0, ret;

	device = ib_device_get_by_name(ibdev, RDMA_DRIVER_UNKNOWN);
	if (!device) {
		pr_warn("no RDMA device %s\n", ibdev);
		return -ENODEV;
	}
	ret = rcm_test_loop_path(device, SID(0), &sgid_attr, &path);
	if (ret) {
		pr_warn("%s port 1: no RoCE v2 GID (%d)\n", ibdev, ret);
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(scenarios); i++)
		failed += !!run(&scenarios[i], i + 1);
	pr_info("%zu scenarios, %d failed\n", ARRAY_SIZE(scenarios), failed);
	ret = failed ? -EIO : 0;
	rdma_put_gid_attr(sgid_attr);
out:
	ib_device_put(device);
	return ret;
}

static void __exit qp_attr_exit(void)
{
}

module_init(qp_attr_init);
module_exit(qp_attr_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rcm sample: ib_cm_init_qp_attr at every stage of a connection");
