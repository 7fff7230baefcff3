// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver: an rdma_cm consumer that moves data, through the exported
 * rdma_cm API alone: an RC connection (connect, messages echoed, disconnect), a
 * UD exchange whose peer QP and Q_Key come from SIDR (PS_UDP: connect is a
 * SIDR_REQ, ESTABLISHED carries the answer), and an IP multicast group
 * (join, datagrams sent to the group, leave). The server echoes every
 * message; the client checks each echo byte for byte. It runs the same on
 * rcm.ko and on the in-tree rdma_cm.
 *
 *   insmod rcm_test_data.ko role=server mode=rc|ud [port=N]
 *   insmod rcm_test_data.ko role=client mode=rc|ud peer=10.0.0.2
 *          [port=N] [messages=N]
 *   insmod rcm_test_data.ko role=server mode=mc local=10.0.0.2 [group=G]
 *   insmod rcm_test_data.ko role=client mode=mc local=10.0.0.1 [group=G]
 *          [messages=N]
 *
 * The client works inside module init and fails the insmod (-EIO) unless
 * every echo came back unchanged (multicast: every datagram was sent); it
 * logs
 *   client: mode <rc|ud>: <n>/<n> messages echoed unchanged
 *   client: mode mc: <n>/<n> datagrams sent to <group>
 * The server serves until it is unloaded and logs what it echoed (or, in
 * a group, received) then.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rdma_cm_ib.h>

static char *role = "server";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "server or client");
static char *mode = "rc";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "rc (a connection) or ud (SIDR, datagrams)");
static char *peer = "";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "the server's IPv4 address (client)");
static int port = 7480;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "port in the TCP (rc) or UDP (ud) port space");
static char *local = "";
module_param(local, charp, 0444);
MODULE_PARM_DESC(local, "this guest's IPv4 address (mc)");
static char *group = "239.1.2.4";
module_param(group, charp, 0444);
MODULE_PARM_DESC(group, "the IPv4 multicast group (mc)");
static int messages = 10;
module_param(messages, int, 0444);
MODULE_PARM_DESC(messages, "messages to send and check (client)");

#define TIMEOUT_MS 2000
#define MSG_LEN 64
/* A UD receive starts with the 40-byte GRH slot. */
#define GRH_LEN 40
#define RECV_OFF 0
#define SEND_OFF 128
#define BUF_LEN 256

/* One end of an exchange: its id and verbs resources. */
struct endpoint {
	struct rdma_cm_id *id;
	struct ib_qp *qp;		/* rdma_cm's, or (mc) our own */
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_ah *ah;		/* UD: to the peer */
	u32 remote_qpn, remote_qkey;	/* UD */
	u8 *buf;
	u64 dma;
	struct ib_cqe recv_cqe, send_cqe;
	struct completion event;	/* client: the CM's last event */
	int last_event, last_status;
	struct list_head node;		/* server: every endpoint */
	bool stopping;			/* server: no more posts (`lock`) */
};

static bool ud, mc;
static struct rdma_cm_id *listener;
/* `endpoints`, the counters and each endpoint's `stopping`; the server's
 * completion handlers post under it, so a QP is not destroyed under them. */
static DEFINE_MUTEX(lock);
static LIST_HEAD(endpoints);
static int echoed, echo_errors;

static int post_recv(struct endpoint *e)
{
	struct ib_sge sge = {
		.addr = e->dma + RECV_OFF,
		.length = GRH_LEN + MSG_LEN,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &e->recv_cqe, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_recv(e->qp, &wr, NULL);
}

/* Sends `len` bytes from the send area: to the connection (RC) or to
 * `ah`/`qpn`/`qkey` (UD). */
static int post_send(struct endpoint *e, u32 len, struct ib_ah *ah, u32 qpn,
		     u32 qkey)
{
	struct ib_sge sge = {
		.addr = e->dma + SEND_OFF,
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = { .wr_cqe = &e->send_cqe, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.ah = ah,
		.remote_qpn = qpn,
		.remote_qkey = qkey,
	};

	return ib_post_send(e->qp, &wr.wr, NULL);
}

static void endpoint_free(struct endpoint *e)
{
	if (e->ah)
		rdma_destroy_ah(e->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (e->qp && mc)
		ib_destroy_qp(e->qp);
	else if (e->qp)
		rdma_destroy_qp(e->id);
	e->qp = NULL;
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->buf && e->pd)
		ib_dma_unmap_single(e->pd->device, e->dma, BUF_LEN,
				    DMA_BIDIRECTIONAL);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	kfree(e->buf);
	e->ah = NULL;
	e->cq = NULL;
	e->pd = NULL;
	e->buf = NULL;
}

/* A UD QP of the consumer's own, moved to RTS with the id's attributes
 * (rdma_join_multicast refuses ids that carry a QP of rdma_cm's). */
static int own_ud_qp(struct endpoint *e, struct ib_qp_init_attr *init)
{
	struct ib_qp_attr attr = {};
	int mask, ret;

	e->qp = ib_create_qp(e->pd, init);
	if (IS_ERR(e->qp)) {
		ret = PTR_ERR(e->qp);
		e->qp = NULL;
		return ret;
	}
	attr.qp_state = IB_QPS_INIT;
	ret = rdma_init_qp_attr(e->id, &attr, &mask);
	ret = ret ?: ib_modify_qp(e->qp, &attr, mask);
	attr.qp_state = IB_QPS_RTR;
	ret = ret ?: ib_modify_qp(e->qp, &attr, IB_QP_STATE);
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	return ret ?: ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

/* PD, CQ, buffer and an RC or UD QP (rdma_cm moves it) on `e->id`. */
static int endpoint_verbs(struct endpoint *e, enum ib_poll_context poll)
{
	struct ib_device *dev = e->id->device;
	struct ib_qp_init_attr attr = {};
	int ret;

	e->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(e->pd)) {
		ret = PTR_ERR(e->pd);
		e->pd = NULL;
		return ret;
	}
	e->cq = ib_alloc_cq(dev, e, 8, 0, poll);
	if (IS_ERR(e->cq)) {
		ret = PTR_ERR(e->cq);
		e->cq = NULL;
		return ret;
	}
	e->buf = kzalloc(BUF_LEN, GFP_KERNEL);
	if (!e->buf)
		return -ENOMEM;
	e->dma = ib_dma_map_single(dev, e->buf, BUF_LEN, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, e->dma)) {
		kfree(e->buf);
		e->buf = NULL;
		return -ENOMEM;
	}
	attr.send_cq = e->cq;
	attr.recv_cq = e->cq;
	attr.cap.max_send_wr = 2;
	attr.cap.max_recv_wr = 2;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = ud ? IB_QPT_UD : IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	ret = mc ? own_ud_qp(e, &attr) : rdma_create_qp(e->id, e->pd, &attr);
	if (ret)
		return ret;
	if (!mc)
		e->qp = e->id->qp;
	return post_recv(e);
}

/* ---- server ---- */

static void server_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_info("server: send: %s\n", ib_wc_status_msg(wc->status));
}

/* Echoes a message: back on the connection, or to the datagram's sender
 * (an address handle from the first receive's GRH: one SIDR, one client;
 * the Q_Key of the port space). */
static void server_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct endpoint *e = cq->cq_context;
	u32 off = ud ? GRH_LEN : 0, len = wc->byte_len - off;
	int ret;

	if (wc->status != IB_WC_SUCCESS || wc->byte_len < off ||
	    len > MSG_LEN)
		return;
	mutex_lock(&lock);
	if (e->stopping) {
		mutex_unlock(&lock);
		return;
	}
	ib_dma_sync_single_for_cpu(e->pd->device, e->dma, BUF_LEN,
				   DMA_BIDIRECTIONAL);
	memcpy(e->buf + SEND_OFF, e->buf + RECV_OFF + off, len);
	ib_dma_sync_single_for_device(e->pd->device, e->dma, BUF_LEN,
				      DMA_BIDIRECTIONAL);
	if (ud && !e->ah) {
		e->ah = ib_create_ah_from_wc(e->pd, wc,
					     (const struct ib_grh *)e->buf,
					     e->id->port_num);
		if (IS_ERR(e->ah)) {
			e->ah = NULL;
			ret = -EINVAL;
			goto out;
		}
	}
	ret = post_recv(e);
	if (!ret)
		ret = post_send(e, len, e->ah, wc->src_qp, RDMA_UDP_QKEY);
out:
	if (ret)
		echo_errors++;
	else
		echoed++;
	mutex_unlock(&lock);
}

static int server_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct endpoint *e = id->context;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		e = kzalloc(sizeof(*e), GFP_KERNEL);
		if (!e)
			return -ENOMEM;
		e->id = id;
		id->context = e;
		e->recv_cqe.done = server_recv_done;
		e->send_cqe.done = server_send_done;
		ret = endpoint_verbs(e, IB_POLL_WORKQUEUE);
		if (!ret) {
			struct rdma_conn_param p = { .responder_resources = 1,
						     .initiator_depth = 1,
						     .rnr_retry_count = 7 };

			ret = rdma_accept(id, &p);
		}
		if (ret) {
			endpoint_free(e);
			kfree(e);
			return ret;
		}
		mutex_lock(&lock);
		list_add(&e->node, &endpoints);
		mutex_unlock(&lock);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* The id goes with the handler's non-zero return. */
		mutex_lock(&lock);
		if (e->stopping) {
			/* Unloading: server_stop frees it. */
			mutex_unlock(&lock);
			return 0;
		}
		list_del(&e->node);
		e->stopping = true;
		mutex_unlock(&lock);
		endpoint_free(e);
		kfree(e);
		return 1;
	default:
		return 0;
	}
}

static int server_start(struct sockaddr_in *addr)
{
	int ret;

	listener = rdma_create_id(&init_net, server_handler, NULL,
				  ud ? RDMA_PS_UDP : RDMA_PS_TCP,
				  ud ? IB_QPT_UD : IB_QPT_RC);
	if (IS_ERR(listener))
		return PTR_ERR(listener);
	ret = rdma_bind_addr(listener, (struct sockaddr *)addr);
	if (!ret)
		ret = rdma_listen(listener, 16);
	if (ret) {
		rdma_destroy_id(listener);
		listener = NULL;
		return ret;
	}
	pr_info("server: mode %s, listening on port %d\n", mode, port);
	return 0;
}

static void server_stop(void)
{
	struct endpoint *e;

	if (!listener)
		return;
	rdma_destroy_id(listener);
	for (;;) {
		mutex_lock(&lock);
		e = list_first_entry_or_null(&endpoints, struct endpoint, node);
		if (e) {
			list_del(&e->node);
			e->stopping = true;
		}
		mutex_unlock(&lock);
		if (!e)
			break;
		/* Its QP and CQ first, then the id (no handler runs after). */
		endpoint_free(e);
		rdma_destroy_id(e->id);
		kfree(e);
	}
	pr_info("server stopped: %d echoed, %d echo errors\n", echoed,
		echo_errors);
}

/* ---- client ---- */

/* Where an event's UD answer (SIDR or a join) sends: its address handle,
 * which is valid during the event's call only, QP and Q_Key. */
static void keep_ud_peer(struct endpoint *e, struct rdma_cm_event *ev)
{
	e->ah = rdma_create_ah(e->pd, &ev->param.ud.ah_attr,
			       RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(e->ah)) {
		e->ah = NULL;
		e->last_status = -EINVAL;
	}
	e->remote_qpn = ev->param.ud.qp_num;
	e->remote_qkey = ev->param.ud.qkey;
}

/* Records the event for client_wait() and wakes it. */
static int note_event(struct endpoint *e, struct rdma_cm_event *ev)
{
	e->last_event = ev->event;
	if (!e->last_status)
		e->last_status = ev->status;
	complete(&e->event);
	return 0;
}

static int client_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct endpoint *e = id->context;

	if (ev->event == RDMA_CM_EVENT_ESTABLISHED && ud && e->pd)
		keep_ud_peer(e, ev);
	return note_event(e, ev);
}

/* Waits for the next CM event; 0 if it is `want` with status 0. */
static int client_wait(struct endpoint *e, int want)
{
	if (!wait_for_completion_timeout(&e->event,
					 msecs_to_jiffies(4 * TIMEOUT_MS))) {
		pr_info("client: no %s within %d ms\n", rdma_event_msg(want),
			4 * TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	if (e->last_event != want || e->last_status) {
		pr_info("client: %s (status %d) instead of %s\n",
			rdma_event_msg(e->last_event), e->last_status,
			rdma_event_msg(want));
		return -EIO;
	}
	return 0;
}

/* Polls the client's CQ for one completion, for up to TIMEOUT_MS. */
static int poll_one(struct endpoint *e, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(TIMEOUT_MS);

	while (ib_poll_cq(e->cq, 1, wc) < 1) {
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(100, 500);
	}
	return 0;
}

/* Polls until a send and a receive completed; the receive's length. */
static int client_exchange(struct endpoint *e, u32 *len)
{
	bool sent = false, received = false;
	struct ib_wc wc;

	while (!(sent && received)) {
		if (poll_one(e, &wc))
			return -ETIMEDOUT;
		if (wc.status != IB_WC_SUCCESS) {
			pr_info("client: %s completion: %s\n",
				wc.wr_cqe == &e->send_cqe ? "send" : "receive",
				ib_wc_status_msg(wc.status));
			return -EIO;
		}
		if (wc.wr_cqe == &e->send_cqe) {
			sent = true;
		} else {
			received = true;
			*len = wc.byte_len;
		}
	}
	return 0;
}

/* Sends `messages` numbered messages; each echo must equal its message. */
static int client_messages(struct endpoint *e)
{
	u32 off = ud ? GRH_LEN : 0, len;
	int i, ok = 0;
	char msg[MSG_LEN];

	for (i = 0; i < messages; i++) {
		memset(msg, 'a' + i % 26, sizeof(msg));
		snprintf(msg, sizeof(msg), "rcm sample %s message %d ", mode, i);
		memcpy(e->buf + SEND_OFF, msg, MSG_LEN);
		ib_dma_sync_single_for_device(e->pd->device, e->dma, BUF_LEN,
					      DMA_BIDIRECTIONAL);
		if (post_send(e, MSG_LEN, e->ah, e->remote_qpn, e->remote_qkey) ||
		    client_exchange(e, &len))
			break;
		ib_dma_sync_single_for_cpu(e->pd->device, e->dma, BUF_LEN,
					   DMA_BIDIRECTIONAL);
		if (len == off + MSG_LEN &&
		    !memcmp(e->buf + RECV_OFF + off, msg, MSG_LEN))
			ok++;
		else
			pr_info("client: message %d: echo of %u bytes differs\n",
				i, len);
		if (post_recv(e))
			break;
	}
	pr_info("client: mode %s: %d/%d messages echoed unchanged\n", mode, ok,
		messages);
	return ok == messages ? 0 : -EIO;
}

static int client_run(struct sockaddr_in *addr)
{
	struct endpoint *e;
	struct rdma_conn_param p = { .responder_resources = 1,
				     .initiator_depth = 1, .retry_count = 7,
				     .rnr_retry_count = 7 };
	int ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	init_completion(&e->event);
	e->id = rdma_create_id(&init_net, client_handler, e,
			       ud ? RDMA_PS_UDP : RDMA_PS_TCP,
			       ud ? IB_QPT_UD : IB_QPT_RC);
	if (IS_ERR(e->id)) {
		ret = PTR_ERR(e->id);
		kfree(e);
		return ret;
	}
	ret = rdma_resolve_addr(e->id, NULL, (struct sockaddr *)addr,
				TIMEOUT_MS);
	ret = ret ?: client_wait(e, RDMA_CM_EVENT_ADDR_RESOLVED);
	ret = ret ?: rdma_resolve_route(e->id, TIMEOUT_MS);
	ret = ret ?: client_wait(e, RDMA_CM_EVENT_ROUTE_RESOLVED);
	ret = ret ?: endpoint_verbs(e, IB_POLL_DIRECT);
	ret = ret ?: rdma_connect(e->id, &p);
	ret = ret ?: client_wait(e, RDMA_CM_EVENT_ESTABLISHED);
	if (!ret && ud && !e->ah)
		ret = -EIO;
	if (!ret && ud)
		pr_info("client: SIDR: QP %#x, Q_Key %#x\n", e->remote_qpn,
			e->remote_qkey);
	ret = ret ?: client_messages(e);
	if (!ret && !ud) {
		ret = rdma_disconnect(e->id);
		ret = ret ?: client_wait(e, RDMA_CM_EVENT_DISCONNECTED);
	}
	/* The id first: no handler runs on it afterwards. */
	endpoint_free(e);
	rdma_destroy_id(e->id);
	kfree(e);
	return ret;
}

/* ---- multicast: the server receives in the group, the client sends ---- */

static struct endpoint *mc_member;	/* the server's membership */
static struct sockaddr_in mc_group;
static union ib_gid mc_gid;
static u16 mc_lid;
static int mc_received;

static void mc_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct endpoint *e = cq->cq_context;
	static const char prefix[] = "rcm sample mc message ";
	bool ours;

	if (wc->status != IB_WC_SUCCESS)
		return;
	ib_dma_sync_single_for_cpu(e->pd->device, e->dma, BUF_LEN,
				   DMA_BIDIRECTIONAL);
	ours = wc->byte_len == GRH_LEN + MSG_LEN &&
	       !memcmp(e->buf + RECV_OFF + GRH_LEN, prefix, sizeof(prefix) - 1);
	mutex_lock(&lock);
	if (ours)
		mc_received++;
	if (!e->stopping && post_recv(e))
		echo_errors++;
	mutex_unlock(&lock);
}

/* The group's join answer: the receiver attaches its QP, the sender keeps
 * an address handle (valid in the call only) for its sends. */
static int mc_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct endpoint *e = id->context;
	struct rdma_ah_attr *ah = &ev->param.ud.ah_attr;

	if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN && !ev->status) {
		if (e == mc_member) {
			mc_gid = ah->grh.dgid;
			mc_lid = rdma_ah_get_dlid(ah);
			if (ib_attach_mcast(e->qp, &mc_gid, mc_lid))
				e->last_status = -EINVAL;
			else
				pr_info("server: joined %pI4, QP attached\n",
					&mc_group.sin_addr);
		} else {
			keep_ud_peer(e, ev);
		}
	}
	return note_event(e, ev);
}

/* An id bound to `local` with a UD QP, joined to the group (full member). */
static int mc_join(struct endpoint *e, enum ib_poll_context poll)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	int ret;

	if (!in4_pton(local, -1, (u8 *)&src.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	init_completion(&e->event);
	e->id = rdma_create_id(&init_net, mc_handler, e, RDMA_PS_UDP,
			       IB_QPT_UD);
	if (IS_ERR(e->id)) {
		ret = PTR_ERR(e->id);
		e->id = NULL;
		return ret;
	}
	ret = rdma_bind_addr(e->id, (struct sockaddr *)&src);
	ret = ret ?: endpoint_verbs(e, poll);
	ret = ret ?: rdma_join_multicast(e->id, (struct sockaddr *)&mc_group,
					 BIT(FULLMEMBER_JOIN), NULL);
	return ret ?: client_wait(e, RDMA_CM_EVENT_MULTICAST_JOIN);
}

static void mc_leave(struct endpoint *e)
{
	if (!e->id)
		return;
	rdma_leave_multicast(e->id, (struct sockaddr *)&mc_group);
	endpoint_free(e);
	rdma_destroy_id(e->id);
	e->id = NULL;
}

static int mc_server_start(void)
{
	struct endpoint *e = kzalloc(sizeof(*e), GFP_KERNEL);
	int ret;

	if (!e)
		return -ENOMEM;
	e->recv_cqe.done = mc_recv_done;
	mc_member = e;
	ret = mc_join(e, IB_POLL_WORKQUEUE);
	if (ret) {
		mc_leave(e);
		kfree(e);
		mc_member = NULL;
	}
	return ret;
}

static void mc_server_stop(void)
{
	struct endpoint *e = mc_member;

	if (!e)
		return;
	mutex_lock(&lock);
	e->stopping = true;
	mutex_unlock(&lock);
	if (e->qp)
		ib_detach_mcast(e->qp, &mc_gid, mc_lid);
	mc_leave(e);
	kfree(e);
	pr_info("server stopped: %d datagrams received in %pI4, %d errors\n",
		mc_received, &mc_group.sin_addr, echo_errors);
}

/* Sends `messages` datagrams to the group, 50 ms apart (the receiver
 * reposts one receive at a time), each completed before the next. */
static int mc_client_run(void)
{
	struct endpoint *e = kzalloc(sizeof(*e), GFP_KERNEL);
	struct ib_wc wc;
	int i, sent = 0, ret;

	if (!e)
		return -ENOMEM;
	ret = mc_join(e, IB_POLL_DIRECT);
	for (i = 0; !ret && i < messages; i++) {
		memset(e->buf + SEND_OFF, 'a' + i % 26, MSG_LEN);
		snprintf(e->buf + SEND_OFF, MSG_LEN, "rcm sample mc message %d ",
			 i);
		ib_dma_sync_single_for_device(e->pd->device, e->dma, BUF_LEN,
					      DMA_BIDIRECTIONAL);
		ret = post_send(e, MSG_LEN, e->ah, e->remote_qpn,
				e->remote_qkey);
		ret = ret ?: poll_one(e, &wc);
		if (!ret && wc.status != IB_WC_SUCCESS)
			ret = -EIO;
		if (!ret)
			sent++;
		msleep(50);
	}
	pr_info("client: mode mc: %d/%d datagrams sent to %pI4\n", sent,
		messages, &mc_group.sin_addr);
	mc_leave(e);
	kfree(e);
	return ret;
}

static int __init sample_init(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_port = htons(port) };

	if (!strcmp(mode, "ud") || !strcmp(mode, "mc"))
		ud = true;
	else if (strcmp(mode, "rc"))
		return -EINVAL;
	if (!strcmp(mode, "mc")) {
		mc = true;
		mc_group.sin_family = AF_INET;
		if (!in4_pton(group, -1, (u8 *)&mc_group.sin_addr.s_addr, -1,
			      NULL))
			return -EINVAL;
		if (!strcmp(role, "server"))
			return mc_server_start();
		return mc_client_run() ? -EIO : 0;
	}
	if (!strcmp(role, "server"))
		return server_start(&addr);
	if (strcmp(role, "client") || !in4_pton(peer, -1,
						(u8 *)&addr.sin_addr.s_addr,
						-1, NULL))
		return -EINVAL;
	return client_run(&addr) ? -EIO : 0;
}

static void __exit sample_exit(void)
{
	if (mc)
		mc_server_stop();
	else
		server_stop();
}

module_init(sample_init);
module_exit(sample_exit);
MODULE_DESCRIPTION("rdma_cm sample consumer: RC and UD (SIDR) with data");
MODULE_LICENSE("GPL");
