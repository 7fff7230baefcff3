// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver: an ib_cm consumer with real RC connections, a server that
 * accepts and echoes, and a client that connects, exchanges messages over
 * send/recv and checks every echo, then disconnects. It uses only the exported ib_cm
 * API (plus ib_core verbs for the QPs), so it runs the same against rcm.ko
 * and the in-tree ib_cm; rcm_connect_lib.sh drives it.
 *
 *   insmod rcm_test_conn.ko role=server [reject=1] [mra=1]
 *   insmod rcm_test_conn.ko role=client peer=10.0.0.2 [conns=N]
 *          [parallel=N] [messages=N] [server_disconnects=1]
 *          [expect=connect|reject|timeout|sidr] [cm_timeout=X] [retries=N]
 *          [stall_ms=N] [drep_delay_ms=N]
 *
 * The client does all its work inside module init and fails the insmod
 * (-EIO) unless every connection met the expectation; a summary line goes
 * to the kernel log either way. The server listens until unloaded (or
 * until its device goes away), answers SIDR_REQs for the service with its
 * UD QP, and rejects with reason 28 and private data when reject=1.
 */
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rcm_cm_lap.h>

static char *role = "server";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "server or client");
static ulong service_id = 0x1061c21;
module_param(service_id, ulong, 0444);
MODULE_PARM_DESC(service_id, "service id (host order)");
static char *peer = "10.0.0.2";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "client: the server's IPv4 address");
static int conns = 1;
module_param(conns, int, 0444);
MODULE_PARM_DESC(conns, "client: connections to make");
static int parallel = 1;
module_param(parallel, int, 0444);
MODULE_PARM_DESC(parallel, "client: connections in flight at once");
static int messages = 10;
module_param(messages, int, 0444);
MODULE_PARM_DESC(messages, "client: messages echoed per connection");
static bool server_disconnects;
module_param(server_disconnects, bool, 0444);
MODULE_PARM_DESC(server_disconnects, "client: ask the server to send the DREQ");
static char *expect = "connect";
module_param(expect, charp, 0444);
MODULE_PARM_DESC(expect, "client: connect, reject, reject_alt (REJ 18), timeout or sidr");
static int cm_timeout = 20;
module_param(cm_timeout, int, 0444);
MODULE_PARM_DESC(cm_timeout, "client: remote CM response timeout (IBA exponent)");
static int retries = 15;
module_param(retries, int, 0444);
MODULE_PARM_DESC(retries, "client: max CM retries");
static int hold_ms;
module_param(hold_ms, int, 0444);
MODULE_PARM_DESC(hold_ms, "client: keep each batch connected this long after its echoes");
static int stall_ms;
module_param(stall_ms, int, 0444);
MODULE_PARM_DESC(stall_ms, "client: first block this long in the handler of another id (a SIDR_REQ nobody answers)");
static int drep_delay_ms;
module_param(drep_delay_ms, int, 0444);
MODULE_PARM_DESC(drep_delay_ms, "client: answer the peer's DREQ this much later (blocking in the handler)");
static bool lap;
module_param(lap, bool, 0444);
MODULE_PARM_DESC(lap, "client: load an alternate path (LAP, rcm only) before disconnecting");
static bool alt;
module_param(alt, bool, 0444);
MODULE_PARM_DESC(alt, "client: name the primary path as the alternate path too");
static int comm_est;
module_param(comm_est, int, 0444);
MODULE_PARM_DESC(comm_est, "server: report the connection established right after the REP (ib_cm_notify): 1 from a task with interrupts off, 2 from hard IRQ");
static bool reject;
module_param(reject, bool, 0444);
MODULE_PARM_DESC(reject, "server: reject every REQ (reason 28, private data)");
static bool mra;
module_param(mra, bool, 0444);
MODULE_PARM_DESC(mra, "server: send an MRA before answering each REQ");

#define SAMPLE_MAGIC 0x52434d53		/* "RCMS" */
#define SAMPLE_QKEY 0x11111111
#define MSG_BYE 1			/* last message: server, disconnect */
#define PLT 14				/* packet lifetime exponent, ~67 ms */
/*
 * What the client's REQ asks for, distinct on purpose: the CM reports
 * them to each side from that side's view (swapped), and both sides check.
 */
#define REQ_RESPONDER_RESOURCES 2
#define REQ_INITIATOR_DEPTH 1

struct sample_hello {			/* REQ private data */
	__be32 magic;
	__be32 index;
	__be32 flags;			/* HELLO_* */
};

/* The REQ is the sample client's: the server checks the event's fields. */
#define HELLO_CHECK_EVENT 1

struct sample_msg {
	__be32 magic;
	__be32 conn;
	__be32 seq;
	__be32 flags;
	u8 payload[48];
};

struct conn {
	struct list_head list;		/* server: all_conns */
	struct ib_cm_id *cm_id;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 qpn;			/* kept for the report after the QP is gone */
	struct ib_cqe recv_cqe, send_cqe;
	struct sample_msg *rx, *tx;
	u64 rx_dma, tx_dma;
	int index;
	u32 rq_psn;			/* server: the PSN its REP announces */
	int seq;			/* client: the message awaiting its echo */
	int echoed;
	int mras;
	int aprs;
	int apr_status;
	int result;			/* 0 ok, -errno */
	int rej_reason;
	bool rej_data_ok;
	u32 sidr_qpn, sidr_qkey, sidr_status;
	unsigned long started;
	unsigned long elapsed_ms;
	struct mutex setup;		/* client: REQ + INIT before the REP */
	struct completion data_done;	/* echoes finished (or failed) */
	struct completion closed;	/* the connection's end */
	struct completion apr_done;	/* the LAP's answer (or failure) */
};

static struct ib_device *device;
static struct ib_pd *pd;
static struct ib_cm_id *listener;
static struct ib_cq *ud_cq;
static struct ib_qp *ud_qp;
static LIST_HEAD(all_conns);
static DEFINE_MUTEX(conns_lock);
static atomic_t accepted = ATOMIC_INIT(0);
static atomic_t echoed_total = ATOMIC_INIT(0);
static atomic_t user_established = ATOMIC_INIT(0);
static atomic_t notify_failed = ATOMIC_INIT(0);
static DEFINE_SPINLOCK(notify_lock);
/* comm_est=2: reports whose state change the CM made after the call. */
static atomic_t notify_later = ATOMIC_INIT(0);

/* ib_cm_notify from hard IRQ (an irq_work's self-interrupt), as a QP
 * event handler of a hardware driver calls it.
 */
struct irq_notify {
	struct irq_work work;
	struct ib_cm_id *id;
	int ret;
	enum ib_cm_state state;
	bool hardirq;
};

static void notify_in_irq(struct irq_work *work)
{
	struct irq_notify *n = container_of(work, struct irq_notify, work);

	n->hardirq = in_hardirq();
	n->ret = ib_cm_notify(n->id, IB_EVENT_COMM_EST);
	n->state = n->id->state;
}
static struct ib_client sample_client;

static void fill_msg(struct sample_msg *m, int conn, int seq, u32 flags)
{
	int i;

	m->magic = cpu_to_be32(SAMPLE_MAGIC);
	m->conn = cpu_to_be32(conn);
	m->seq = cpu_to_be32(seq);
	m->flags = cpu_to_be32(flags);
	for (i = 0; i < sizeof(m->payload); i++)
		m->payload[i] = (u8)(conn * 31 + seq * 7 + i);
}

static int post_recv(struct conn *c)
{
	struct ib_sge sge = {
		.addr = c->rx_dma, .length = sizeof(*c->rx),
		.lkey = pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &c->recv_cqe, .sg_list = &sge, .num_sge = 1 };

	ib_dma_sync_single_for_device(device, c->rx_dma, sizeof(*c->rx), DMA_FROM_DEVICE);
	return ib_post_recv(c->qp, &wr, NULL);
}

static int post_send(struct conn *c)
{
	struct ib_sge sge = {
		.addr = c->tx_dma, .length = sizeof(*c->tx),
		.lkey = pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &c->send_cqe, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};

	ib_dma_sync_single_for_device(device, c->tx_dma, sizeof(*c->tx), DMA_TO_DEVICE);
	return ib_post_send(c->qp, &wr, NULL);
}

static void send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct conn *c = container_of(wc->wr_cqe, struct conn, send_cqe);

	pr_debug("rcm_test_conn: conn %d: send status %d\n", c->index, wc->status);
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn("rcm_test_conn: conn %d: send failed: %s\n", c->index,
			ib_wc_status_msg(wc->status));
}

static void finish_data(struct conn *c, int result)
{
	if (!c->result)
		c->result = result;
	complete(&c->data_done);
}

/* Client: an echo came back. Check it, send the next message or finish. */
static void client_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct conn *c = container_of(wc->wr_cqe, struct conn, recv_cqe);
	struct sample_msg want;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			finish_data(c, -EIO);
		return;
	}
	ib_dma_sync_single_for_cpu(device, c->rx_dma, sizeof(*c->rx), DMA_FROM_DEVICE);
	fill_msg(&want, c->index, c->seq, 0);
	if (wc->byte_len != sizeof(want) || memcmp(c->rx, &want, sizeof(want))) {
		pr_warn("rcm_test_conn: conn %d: echo %d differs\n", c->index, c->seq);
		finish_data(c, -EBADMSG);
		return;
	}
	c->echoed++;
	c->seq++;
	if (c->seq < messages) {
		fill_msg(c->tx, c->index, c->seq, 0);
		if (post_recv(c) || post_send(c))
			finish_data(c, -EIO);
		return;
	}
	if (server_disconnects) {
		/* No echo for this one: the server answers with a DREQ. */
		fill_msg(c->tx, c->index, c->seq, MSG_BYE);
		if (post_send(c))
			finish_data(c, -EIO);
	}
	complete(&c->data_done);
}

/* Server: echo each message; on MSG_BYE disconnect instead. */
static void server_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct conn *c = container_of(wc->wr_cqe, struct conn, recv_cqe);

	pr_debug("rcm_test_conn: conn %d: server recv status %d\n", c->index, wc->status);
	if (wc->status != IB_WC_SUCCESS)
		return;
	ib_dma_sync_single_for_cpu(device, c->rx_dma, sizeof(*c->rx), DMA_FROM_DEVICE);
	if (be32_to_cpu(c->rx->flags) & MSG_BYE) {
		int ret = ib_send_cm_dreq(c->cm_id, NULL, 0);

		pr_debug("rcm_test_conn: conn %d: server sends DREQ (%d)\n", c->index, ret);
		if (ret)
			pr_warn("rcm_test_conn: conn %d: DREQ failed (%d)\n", c->index, ret);
		return;
	}
	memcpy(c->tx, c->rx, sizeof(*c->tx));
	atomic_inc(&echoed_total);
	if (post_recv(c) || post_send(c))
		pr_warn("rcm_test_conn: conn %d: echo failed\n", c->index);
}

static void conn_free_qp(struct conn *c)
{
	if (c->qp)
		ib_destroy_qp(c->qp);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->rx_dma)
		ib_dma_unmap_single(device, c->rx_dma, sizeof(*c->rx), DMA_FROM_DEVICE);
	if (c->tx_dma)
		ib_dma_unmap_single(device, c->tx_dma, sizeof(*c->tx), DMA_TO_DEVICE);
	kfree(c->rx);
	kfree(c->tx);
	c->qp = NULL;
	c->cq = NULL;
	c->rx = c->tx = NULL;
	c->rx_dma = c->tx_dma = 0;
}

static int conn_alloc_qp(struct conn *c, bool server)
{
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	c->recv_cqe.done = server ? server_recv_done : client_recv_done;
	c->send_cqe.done = send_done;
	c->rx = kzalloc(sizeof(*c->rx), GFP_KERNEL);
	c->tx = kzalloc(sizeof(*c->tx), GFP_KERNEL);
	if (!c->rx || !c->tx)
		goto nomem;
	c->rx_dma = ib_dma_map_single(device, c->rx, sizeof(*c->rx), DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(device, c->rx_dma)) {
		c->rx_dma = 0;
		goto nomem;
	}
	c->tx_dma = ib_dma_map_single(device, c->tx, sizeof(*c->tx), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(device, c->tx_dma)) {
		c->tx_dma = 0;
		goto nomem;
	}
	c->cq = ib_alloc_cq(device, c, 8, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(c->cq)) {
		int ret = PTR_ERR(c->cq);

		c->cq = NULL;
		conn_free_qp(c);
		return ret;
	}
	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	c->qp = ib_create_qp(pd, &init);
	if (IS_ERR(c->qp)) {
		int ret = PTR_ERR(c->qp);

		c->qp = NULL;
		conn_free_qp(c);
		return ret;
	}
	c->qpn = c->qp->qp_num;
	return 0;
nomem:
	conn_free_qp(c);
	return -ENOMEM;
}

/* Moves the QP to `state` with the attributes the CM computes. */
static int qp_to(struct conn *c, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = ib_cm_init_qp_attr(c->cm_id, &attr, &mask);
	if (ret)
		return ret;
	/*
	 * Before its REP the passive side has not told the CM its starting
	 * PSN, so (like rdma_cm) it sets the receive PSN itself.
	 */
	if (state == IB_QPS_RTR && c->rq_psn)
		attr.rq_psn = c->rq_psn;
	ret = ib_modify_qp(c->qp, &attr, mask);
	pr_debug("rcm_test_conn: conn %d: QP %#x to %d: mask %#x ret %d dqpn %#x rq_psn %#x sq_psn %#x mtu %d timeout %d retry %d rnr %d port %d dgid %pI6 sgid_index %d flags %d type %d\n",
		 c->index, c->qp->qp_num, state, mask, ret, attr.dest_qp_num, attr.rq_psn, attr.sq_psn,
		 attr.path_mtu, attr.timeout, attr.retry_cnt, attr.rnr_retry, attr.port_num,
		 attr.ah_attr.grh.dgid.raw, attr.ah_attr.grh.sgid_index, attr.ah_attr.ah_flags, attr.ah_attr.type);
	return ret;
}

/* ---- server ---- */

static void server_conn_release(struct conn *c)
{
	conn_free_qp(c);
	kfree(c);
}

/* Takes `c` off the list; false if module exit or device removal got it. */
static bool server_conn_claim(struct conn *c)
{
	bool mine = false;

	mutex_lock(&conns_lock);
	if (!list_empty(&c->list)) {
		list_del_init(&c->list);
		mine = true;
	}
	mutex_unlock(&conns_lock);
	return mine;
}

/*
 * The REQ_RECEIVED fields 6.12 fills that in-tree consumers read (cma.c
 * finds its port space by the path's service id, its netdev by the GID
 * entry): seen from the server, the client's resources and timeouts are
 * swapped. The client uses the default cm_timeout against servers.
 */
static bool server_req_event_ok(const struct ib_cm_event *ev)
{
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	const struct sa_path_rec *path = req->primary_path;
	bool roce = rdma_protocol_roce(device, req->port);
	bool ok = true;

#define REQ_CHECK(cond)                                                        \
	do {                                                                   \
		if (!(cond)) {                                                 \
			pr_warn("rcm_test_conn: REQ_RECEIVED: not %s\n", #cond); \
			ok = false;                                            \
		}                                                              \
	} while (0)
	REQ_CHECK(req->responder_resources == REQ_INITIATOR_DEPTH);
	REQ_CHECK(req->initiator_depth == REQ_RESPONDER_RESOURCES);
	REQ_CHECK(req->local_cm_response_timeout == cm_timeout);
	REQ_CHECK(req->remote_cm_response_timeout == cm_timeout - 1);
	REQ_CHECK(req->qp_type == IB_QPT_RC);
	REQ_CHECK(path && path->service_id == cpu_to_be64(service_id));
	REQ_CHECK(req->bth_pkey == be16_to_cpu(path->pkey));
	REQ_CHECK(!roce || req->ppath_sgid_attr);
	REQ_CHECK(!roce || (req->ppath_sgid_attr &&
		  path->rec_type == sa_conv_gid_to_pathrec_type(
					    req->ppath_sgid_attr->gid_type)));
	REQ_CHECK(!roce || path->hop_limit > 0);
#undef REQ_CHECK
	return ok;
}

static int server_accept(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	const struct sample_hello *hello = ev->private_data;
	struct ib_cm_rep_param rep = {};
	static const char accept_data[] = "rcm sample: welcome";
	struct conn *c;
	int ret;

	if (mra) {
		ret = ib_send_cm_mra(id, 20, NULL, 0);
		if (ret)
			pr_warn("rcm_test_conn: MRA failed (%d)\n", ret);
	}
	if (reject) {
		char data[32];

		snprintf(data, sizeof(data), "rcm-sample-reject:%u",
			 be32_to_cpu(hello->index));
		ret = ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
				     data, strlen(data) + 1);
		pr_debug("rcm_test_conn: server rejected conn %u (%d)\n",
			be32_to_cpu(hello->index), ret);
		return 1;
	}
	/* Hand-made REQs (rcm_mad_inject) ask for other values. */
	if ((be32_to_cpu(hello->flags) & HELLO_CHECK_EVENT) &&
	    !server_req_event_ok(ev))
		goto refuse;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		goto refuse;
	INIT_LIST_HEAD(&c->list);
	c->cm_id = id;
	c->index = be32_to_cpu(hello->index);
	if (req->alternate_path)
		pr_info("rcm_test_conn: conn %d: REQ with an alternate path to %pI6c\n",
			c->index, req->alternate_path->dgid.raw);
	c->rq_psn = (get_random_u32() & 0xffffff) ?: 1;
	ret = conn_alloc_qp(c, true);
	if (ret) {
		kfree(c);
		goto refuse;
	}
	ret = qp_to(c, IB_QPS_INIT);
	if (!ret)
		ret = post_recv(c);
	if (!ret)
		ret = qp_to(c, IB_QPS_RTR);
	if (!ret)
		ret = qp_to(c, IB_QPS_RTS);
	if (ret) {
		pr_warn("rcm_test_conn: server: QP setup failed (%d)\n", ret);
		server_conn_release(c);
		goto refuse;
	}
	rep.qp_num = c->qp->qp_num;
	rep.starting_psn = c->rq_psn;
	rep.private_data = accept_data;
	rep.private_data_len = sizeof(accept_data);
	rep.responder_resources = req->responder_resources;
	rep.initiator_depth = req->initiator_depth;
	rep.flow_control = 1;
	rep.rnr_retry_count = 7;
	id->context = c;
	mutex_lock(&conns_lock);
	list_add_tail(&c->list, &all_conns);
	mutex_unlock(&conns_lock);
	ret = ib_send_cm_rep(id, &rep);
	if (ret) {
		pr_warn("rcm_test_conn: server: REP failed (%d)\n", ret);
		if (server_conn_claim(c))
			server_conn_release(c);
		return 1;
	}
	atomic_inc(&accepted);
	if (comm_est == 2) {
		struct irq_notify n = {
			.work = IRQ_WORK_INIT_HARD(notify_in_irq),
			.id = id,
		};

		irq_work_queue(&n.work);
		irq_work_sync(&n.work);
		/*
		 * 0, and the state changed at once unless the CM was busy
		 * right then: a work item changes it soon after.
		 */
		if (!n.hardirq)
			ret = -EDOM;
		else if (n.ret)
			ret = n.ret;
		else if (n.state != IB_CM_ESTABLISHED)
			atomic_inc(&notify_later);
		if (ret) {
			pr_warn("rcm_test_conn: conn %d: ib_cm_notify(COMM_EST) in hard IRQ: %d, state %d\n",
				c->index, ret, n.state);
			atomic_inc(&notify_failed);
		}
	} else if (comm_est) {
		unsigned long flags;

		/*
		 * As a QP event handler would (IB_EVENT_COMM_EST), from atomic
		 * context: the CM must not sleep here.
		 */
		spin_lock_irqsave(&notify_lock, flags);
		ret = ib_cm_notify(id, IB_EVENT_COMM_EST);
		/*
		 * As in 6.12, the CM checks and changes the state at once,
		 * even here: a DREQ may follow right away.
		 */
		if (!ret && id->state != IB_CM_ESTABLISHED)
			ret = -EINPROGRESS;
		spin_unlock_irqrestore(&notify_lock, flags);
		if (ret) {
			pr_warn("rcm_test_conn: conn %d: ib_cm_notify(COMM_EST): %d, state %d\n",
				c->index, ret, id->state);
			atomic_inc(&notify_failed);
		}
	}
	return 0;
refuse:
	ib_send_cm_rej(id, IB_CM_REJ_NO_RESOURCES, NULL, 0, NULL, 0);
	return 1;
}

static int server_sidr(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct ib_cm_sidr_rep_param rep = {
		.qp_num = ud_qp->qp_num,
		.qkey = SAMPLE_QKEY,
		.status = IB_SIDR_SUCCESS,
	};
	int ret = ib_send_cm_sidr_rep(id, &rep);

	pr_info("rcm_test_conn: SIDR_REQ for %#llx answered: QP %#x Q_Key %#x (%d)\n",
		be64_to_cpu(ev->param.sidr_req_rcvd.service_id), rep.qp_num,
		rep.qkey, ret);
	return 1;
}

/* Accepts a proposed alternate path: APR "success" (rcm only). */
static void server_lap(struct ib_cm_id *id, struct conn *c, const struct ib_cm_event *ev)
{
	typeof(&rcm_send_cm_apr) send_apr = symbol_get(rcm_send_cm_apr);
	const struct sa_path_rec *alt = ev->param.lap_rcvd.alternate_path;
	int ret;

	if (!send_apr) {
		pr_info("rcm_test_conn: conn %d: LAP, but this CM cannot send an APR\n", c->index);
		return;
	}
	ret = send_apr(id, IB_CM_APR_SUCCESS, NULL, 0, NULL, 0);
	symbol_put(rcm_send_cm_apr);
	pr_info("rcm_test_conn: conn %d: LAP for %pI6 accepted (%d)\n", c->index,
		alt ? alt->dgid.raw : NULL, ret);
}

static int server_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct conn *c = id->context;

	pr_debug("rcm_test_conn: conn %d: server event %d\n", c ? c->index : -1, ev->event);
	switch (ev->event) {
	case IB_CM_REQ_RECEIVED:
		return server_accept(id, ev);
	case IB_CM_SIDR_REQ_RECEIVED:
		return server_sidr(id, ev);
	case IB_CM_RTU_RECEIVED:
	case IB_CM_USER_ESTABLISHED:
		if (ev->event == IB_CM_USER_ESTABLISHED)
			atomic_inc(&user_established);
		pr_debug("rcm_test_conn: conn %d established (%s)\n", c->index,
			ev->event == IB_CM_RTU_RECEIVED ? "RTU" : "user");
		return 0;
	case IB_CM_LAP_RECEIVED:
		server_lap(id, c, ev);
		return 0;
	case IB_CM_DREQ_RECEIVED:
		ib_send_cm_drep(id, NULL, 0);
		pr_debug("rcm_test_conn: conn %d: client disconnected\n", c->index);
		break;
	case IB_CM_DREP_RECEIVED:
		pr_debug("rcm_test_conn: conn %d: DREP received\n", c->index);
		break;
	case IB_CM_DREQ_ERROR:
	case IB_CM_REP_ERROR:
	case IB_CM_REJ_RECEIVED:
		pr_info("rcm_test_conn: conn %d: event %d, ending\n", c->index,
			ev->event);
		break;
	default:
		return 0;
	}
	/* The connection is over: free it, and have the CM destroy the id. */
	if (!server_conn_claim(c))
		return 0;
	server_conn_release(c);
	return 1;
}

static int server_start(void)
{
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_UD,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .port_num = 1, .qkey = SAMPLE_QKEY,
	};
	int ret;

	ud_cq = ib_alloc_cq(device, NULL, 2, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(ud_cq))
		return PTR_ERR(ud_cq);
	init.send_cq = ud_cq;
	init.recv_cq = ud_cq;
	ud_qp = ib_create_qp(pd, &init);
	if (IS_ERR(ud_qp)) {
		ret = PTR_ERR(ud_qp);
		goto out_cq;
	}
	ret = ib_modify_qp(ud_qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret)
		goto out_qp;
	listener = ib_create_cm_id(device, server_handler, NULL);
	if (IS_ERR(listener)) {
		ret = PTR_ERR(listener);
		goto out_qp;
	}
	ret = ib_cm_listen(listener, cpu_to_be64(service_id));
	if (ret)
		goto out_id;
	pr_info("rcm_test_conn: server on %s: listening on %#lx, UD QP %#x\n",
		dev_name(&device->dev), service_id, ud_qp->qp_num);
	return 0;
out_id:
	ib_destroy_cm_id(listener);
out_qp:
	ib_destroy_qp(ud_qp);
out_cq:
	ib_free_cq(ud_cq);
	listener = NULL;
	ud_qp = NULL;
	ud_cq = NULL;
	return ret;
}

static void server_stop(void)
{
	struct conn *c;
	int live = 0;

	if (!listener)
		return;
	ib_destroy_cm_id(listener);
	listener = NULL;
	for (;;) {
		mutex_lock(&conns_lock);
		c = list_first_entry_or_null(&all_conns, struct conn, list);
		if (c)
			list_del_init(&c->list);
		mutex_unlock(&conns_lock);
		if (!c)
			break;
		/*
		 * QP and CQ first (that waits for the echo handler, which may
		 * use the id); destroying a live id disconnects (DREQ) it.
		 */
		conn_free_qp(c);
		ib_destroy_cm_id(c->cm_id);
		kfree(c);
		live++;
	}
	ib_destroy_qp(ud_qp);
	ib_free_cq(ud_cq);
	pr_info("rcm_test_conn: server stopped: %d accepted, %d echoed, %d user established, %d notify errors, %d notified later, %d live at stop\n",
		atomic_read(&accepted), atomic_read(&echoed_total),
		atomic_read(&user_established), atomic_read(&notify_failed),
		atomic_read(&notify_later), live);
}

/* ---- client ---- */

static struct sa_path_rec path;
static const struct ib_gid_attr *sgid_attr;

struct resolution {
	struct completion done;
	int status;
};

static void resolved(int status, struct sockaddr *src, struct rdma_dev_addr *addr,
		     void *context)
{
	struct resolution *r = context;

	r->status = status;
	complete(&r->done);
}

/* The peer's MAC and hop limit, as rdma_cm finds them. */
static int resolve_l2(struct rdma_dev_addr *dev_addr)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct resolution r;
	int ret;

	init_completion(&r.done);
	memcpy(&src.sin_addr, &sgid_attr->gid.raw[12], 4);
	memcpy(&dst.sin_addr, &path.dgid.raw[12], 4);
	dev_addr->sgid_attr = sgid_attr;
	dev_addr->net = &init_net;
	ret = rdma_resolve_ip((struct sockaddr *)&src, (struct sockaddr *)&dst,
			      dev_addr, 5000, resolved, true, &r);
	if (ret)
		return ret;
	wait_for_completion(&r.done);
	return r.status;
}

/* The RoCEv2 path to `peer` from our IPv4 GID. */
static int client_path(void)
{
	struct rdma_dev_addr dev_addr = {};
	union ib_gid dgid = {};
	__be32 ip;
	int ret;
	u32 i, len;

	if (!in4_pton(peer, -1, (u8 *)&ip, -1, NULL))
		return -EINVAL;
	ipv6_addr_set_v4mapped(ip, (struct in6_addr *)dgid.raw);
	len = device->port_data[1].immutable.gid_tbl_len;
	for (i = 0; i < len; i++) {
		sgid_attr = rdma_get_gid_attr(device, 1, i);
		if (IS_ERR(sgid_attr))
			continue;
		if (sgid_attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)sgid_attr->gid.raw))
			break;
		rdma_put_gid_attr(sgid_attr);
		sgid_attr = NULL;
	}
	if (!sgid_attr || IS_ERR(sgid_attr)) {
		sgid_attr = NULL;
		return -EADDRNOTAVAIL;
	}
	memset(&path, 0, sizeof(path));
	path.rec_type = SA_PATH_REC_TYPE_ROCE_V2;
	path.sgid = sgid_attr->gid;
	path.dgid = dgid;
	ret = resolve_l2(&dev_addr);
	if (ret)
		return ret;
	memcpy(path.roce.dmac, dev_addr.dst_dev_addr, ETH_ALEN);
	path.roce.route_resolved = true;
	path.hop_limit = dev_addr.hoplimit;
	path.reversible = 1;
	path.pkey = cpu_to_be16(0xffff);
	path.mtu = IB_MTU_1024;
	path.mtu_selector = IB_SA_EQ;
	path.rate = IB_RATE_PORT_CURRENT;
	path.packet_life_time = PLT;
	path.packet_life_time_selector = IB_SA_EQ;
	return 0;
}

static void client_done(struct conn *c, int result)
{
	if (!c->result)
		c->result = result;
	c->elapsed_ms = jiffies_to_msecs(jiffies - c->started);
	complete(&c->data_done);
	complete(&c->closed);
}

static int client_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct conn *c = id->context;
	int ret;

	pr_debug("rcm_test_conn: conn %d: client event %d\n", c->index, ev->event);
	switch (ev->event) {
	case IB_CM_REP_RECEIVED:
		mutex_lock(&c->setup);
		mutex_unlock(&c->setup);
		/* The server granted what the REQ asked for, seen from here. */
		if (ev->param.rep_rcvd.responder_resources != REQ_RESPONDER_RESOURCES ||
		    ev->param.rep_rcvd.initiator_depth != REQ_INITIATOR_DEPTH) {
			pr_warn("rcm_test_conn: conn %d: REP_RECEIVED reports responder resources %u, initiator depth %u\n",
				c->index, ev->param.rep_rcvd.responder_resources,
				ev->param.rep_rcvd.initiator_depth);
			ret = -EPROTO;
		} else {
			ret = qp_to(c, IB_QPS_RTR);
		}
		if (!ret)
			ret = qp_to(c, IB_QPS_RTS);
		if (ret) {
			ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
			client_done(c, ret);
			return 0;
		}
		ret = ib_send_cm_rtu(id, NULL, 0);
		if (ret) {
			client_done(c, ret);
			return 0;
		}
		if (messages == 0) {
			complete(&c->data_done);
			return 0;
		}
		fill_msg(c->tx, c->index, 0, 0);
		ret = post_send(c);
		pr_debug("rcm_test_conn: conn %d: first send posted (%d)\n", c->index, ret);
		if (ret)
			finish_data(c, -EIO);
		return 0;
	case IB_CM_MRA_RECEIVED:
		c->mras++;
		return 0;
	case IB_CM_APR_RECEIVED:
		c->aprs++;
		c->apr_status = ev->param.apr_rcvd.ap_status;
		complete(&c->apr_done);
		return 0;
	case IB_CM_LAP_ERROR:
		c->apr_status = -ETIMEDOUT;
		complete(&c->apr_done);
		return 0;
	case IB_CM_REJ_RECEIVED: {
		char want[32];

		snprintf(want, sizeof(want), "rcm-sample-reject:%d", c->index);
		c->rej_reason = ev->param.rej_rcvd.reason;
		c->rej_data_ok = ev->private_data &&
				 !memcmp(ev->private_data, want, strlen(want) + 1);
		client_done(c, -ECONNREFUSED);
		return 0;
	}
	case IB_CM_REQ_ERROR:
	case IB_CM_SIDR_REQ_ERROR:
		client_done(c, -ETIMEDOUT);
		return 0;
	case IB_CM_DREQ_RECEIVED:
		if (drep_delay_ms > 0)
			msleep(drep_delay_ms);
		ib_send_cm_drep(id, NULL, 0);
		client_done(c, 0);
		return 0;
	case IB_CM_DREP_RECEIVED:
		client_done(c, 0);
		return 0;
	case IB_CM_DREQ_ERROR:
		client_done(c, -ETIMEDOUT);
		return 0;
	case IB_CM_SIDR_REP_RECEIVED:
		c->sidr_status = ev->param.sidr_rep_rcvd.status;
		c->sidr_qpn = ev->param.sidr_rep_rcvd.qpn;
		c->sidr_qkey = ev->param.sidr_rep_rcvd.qkey;
		client_done(c, c->sidr_status ? -ENOENT : 0);
		return 0;
	default:
		return 0;
	}
}

static int client_start_conn(struct conn *c)
{
	struct sample_hello hello = {
		.magic = cpu_to_be32(SAMPLE_MAGIC), .index = cpu_to_be32(c->index),
		.flags = cpu_to_be32(HELLO_CHECK_EVENT),
	};
	struct sa_path_rec conn_path;
	int ret;

	init_completion(&c->data_done);
	init_completion(&c->closed);
	init_completion(&c->apr_done);
	mutex_init(&c->setup);
	c->cm_id = ib_create_cm_id(device, client_handler, c);
	if (IS_ERR(c->cm_id)) {
		ret = PTR_ERR(c->cm_id);
		c->cm_id = NULL;
		return ret;
	}
	c->started = jiffies;
	if (!strcmp(expect, "sidr")) {
		struct ib_cm_sidr_req_param req = {
			.path = &path, .sgid_attr = sgid_attr,
			.service_id = cpu_to_be64(service_id),
			.timeout_ms = 1000, .max_cm_retries = retries,
			.private_data = &hello, .private_data_len = sizeof(hello),
		};

		return ib_send_cm_sidr_req(c->cm_id, &req);
	}
	ret = conn_alloc_qp(c, false);
	if (ret)
		return ret;
	/*
	 * Each connection its own flow label, as rdma_cm gives a RoCE v2
	 * connection one hashed from its ports: the CM must still see one
	 * peer behind them (rcm's window of requests per peer).
	 */
	conn_path = path;
	conn_path.flow_label = cpu_to_be32((c->index + 1) & 0xfffff);
	{
		struct ib_cm_req_param req = {
			.primary_path = &conn_path, .ppath_sgid_attr = sgid_attr,
			.alternate_path = alt ? &path : NULL,
			.service_id = cpu_to_be64(service_id),
			.qp_num = c->qp->qp_num, .qp_type = IB_QPT_RC,
			.starting_psn = get_random_u32() & 0xffffff,
			.private_data = &hello, .private_data_len = sizeof(hello),
			.responder_resources = REQ_RESPONDER_RESOURCES,
			.initiator_depth = REQ_INITIATOR_DEPTH,
			.remote_cm_response_timeout = cm_timeout,
			.local_cm_response_timeout = cm_timeout - 1,
			.flow_control = 1, .retry_count = 7, .rnr_retry_count = 7,
			.max_cm_retries = retries,
		};

		/*
		 * INIT is valid once the REQ is out (receives may be posted in
		 * INIT); the REP handler waits for it.
		 */
		mutex_lock(&c->setup);
		ret = ib_send_cm_req(c->cm_id, &req);
		if (!ret)
			ret = qp_to(c, IB_QPS_INIT);
		if (!ret)
			ret = post_recv(c);
		mutex_unlock(&c->setup);
	}
	return ret;
}

static void client_wait_data(struct conn *c)
{
	if (!wait_for_completion_timeout(&c->data_done, 120 * HZ))
		c->result = c->result ?: -ETIME;
}

/*
 * After an accepted LAP, the attributes for RTS only load the alternate
 * path (ALT_PATH and PATH_MIG_STATE), as 6.12 computes them; ib_core bans
 * alternate paths on RoCE QPs, so they are checked, not applied.
 */
static int check_rts_after_lap(struct conn *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	int mask = 0, ret;

	ret = ib_cm_init_qp_attr(c->cm_id, &attr, &mask);
	if (ret)
		return ret;
	if (mask != (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE) ||
	    attr.path_mig_state != IB_MIG_REARM || attr.alt_port_num != 1 ||
	    memcmp(attr.alt_ah_attr.grh.dgid.raw, path.dgid.raw, 16)) {
		pr_info("rcm_test_conn: conn %d: RTS after the APR: mask %#x, alternate port %u to %pI6: wrong\n",
			c->index, mask, attr.alt_port_num,
			attr.alt_ah_attr.grh.dgid.raw);
		return -EINVAL;
	}
	pr_info("rcm_test_conn: conn %d: RTS after the APR: mask %#x, alternate path loaded\n",
		c->index, mask);
	return 0;
}

/*
 * Disconnects (unless the peer did), waits for the connection's end and
 * frees it; true if it met `expect`.
 */
static bool client_finish_conn(struct conn *c, int *stats)
{
	bool ok = false;

	if (lap && !c->result && !completion_done(&c->closed)) {
		typeof(&rcm_send_cm_lap) send_lap = symbol_get(rcm_send_cm_lap);

		if (!send_lap) {
			c->result = -EOPNOTSUPP;
		} else {
			/* The same path again: rxe has one port to offer. */
			c->result = send_lap(c->cm_id, &path, NULL, 0);
			symbol_put(rcm_send_cm_lap);
			if (!c->result &&
			    !wait_for_completion_timeout(&c->apr_done, 30 * HZ))
				c->result = -ETIME;
			if (!c->result && c->apr_status)
				c->result = -EREMOTEIO;
			if (!c->result)
				c->result = check_rts_after_lap(c);
		}
	}
	if (!c->result && !strcmp(expect, "connect") && !server_disconnects &&
	    !completion_done(&c->closed) && ib_send_cm_dreq(c->cm_id, NULL, 0))
		/* Refused: only right if the peer's DREQ crossed ours. */
		pr_debug("rcm_test_conn: conn %d: DREQ refused\n", c->index);
	if (!wait_for_completion_timeout(&c->closed, 30 * HZ))
		c->result = c->result ?: -ETIME;
	if (!strcmp(expect, "connect"))
		ok = !c->result && c->echoed == messages;
	else if (!strcmp(expect, "reject"))
		ok = c->result == -ECONNREFUSED &&
		     c->rej_reason == IB_CM_REJ_CONSUMER_DEFINED && c->rej_data_ok;
	else if (!strcmp(expect, "reject_alt"))
		ok = c->result == -ECONNREFUSED &&
		     c->rej_reason == IB_CM_REJ_INVALID_ALT_GID;
	else if (!strcmp(expect, "timeout"))
		ok = c->result == -ETIMEDOUT;
	else if (!strcmp(expect, "sidr"))
		ok = !c->result && c->sidr_qpn && c->sidr_qkey == SAMPLE_QKEY;
	stats[0] += ok;
	stats[1] += c->echoed;
	stats[2] += c->mras;
	stats[3] += c->aprs;
	if (!ok)
		pr_info("rcm_test_conn: conn %d: QP %#x, result %d, echoed %d, reject reason %d (data %s)\n",
			c->index, c->qpn, c->result, c->echoed,
			c->rej_reason, c->rej_data_ok ? "ok" : "bad");
	if (c->index == 0) {
		if (!strcmp(expect, "timeout"))
			pr_info("rcm_test_conn: REQ timed out after %lu ms\n",
				c->elapsed_ms);
		if (!strcmp(expect, "sidr"))
			pr_info("rcm_test_conn: SIDR_REP status %u: QP %#x Q_Key %#x\n",
				c->sidr_status, c->sidr_qpn, c->sidr_qkey);
	}
	if (c->cm_id)
		ib_destroy_cm_id(c->cm_id);
	conn_free_qp(c);
	return ok;
}

/* stall_ms: the id whose handler blocks, and its handler's end. */
static struct ib_cm_id *stall_id;
static DECLARE_COMPLETION(stall_done);

static int stall_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	pr_info("rcm_test_conn: stall: event %d, blocking %d ms\n", ev->event,
		stall_ms);
	msleep(stall_ms);
	complete(&stall_done);
	return 0;
}

/*
 * A consumer that blocks in its handler for stall_ms: a SIDR_REQ with a
 * short timeout to the (silent) peer, whose error event blocks. The CM's
 * timers must keep running for every other id meanwhile.
 */
static int stall_start(void)
{
	struct ib_cm_sidr_req_param req = {
		.path = &path, .sgid_attr = sgid_attr,
		.service_id = cpu_to_be64(service_id + 1),
		.timeout_ms = 50, .max_cm_retries = 0,
	};
	int ret;

	stall_id = ib_create_cm_id(device, stall_handler, NULL);
	if (IS_ERR(stall_id)) {
		ret = PTR_ERR(stall_id);
		stall_id = NULL;
		return ret;
	}
	ret = ib_send_cm_sidr_req(stall_id, &req);
	if (ret) {
		ib_destroy_cm_id(stall_id);
		stall_id = NULL;
	}
	return ret;
}

static void stall_end(void)
{
	if (!stall_id)
		return;
	wait_for_completion(&stall_done);
	ib_destroy_cm_id(stall_id);
	stall_id = NULL;
}

static int client_run(void)
{
	int stats[4] = {}, started = 0, finished = 0, ret = 0;
	unsigned long t0 = jiffies;
	struct conn *batch;
	int i;

	ret = client_path();
	if (ret) {
		pr_warn("rcm_test_conn: no path to %s (%d)\n", peer, ret);
		return ret;
	}
	if (stall_ms > 0) {
		ret = stall_start();
		if (ret) {
			pr_warn("rcm_test_conn: stall: SIDR_REQ failed (%d)\n", ret);
			return ret;
		}
	}
	parallel = clamp(parallel, 1, 1024);
	batch = kcalloc(parallel, sizeof(*batch), GFP_KERNEL);
	if (!batch) {
		stall_end();
		return -ENOMEM;
	}
	while (started < conns) {
		int n = min(parallel, conns - started);

		for (i = 0; i < n; i++) {
			memset(&batch[i], 0, sizeof(batch[i]));
			batch[i].index = started + i;
			ret = client_start_conn(&batch[i]);
			if (ret) {
				pr_warn("rcm_test_conn: conn %d: start failed (%d)\n",
					started + i, ret);
				client_done(&batch[i], ret);
			}
		}
		for (i = 0; i < n; i++)
			client_wait_data(&batch[i]);
		if (hold_ms)
			msleep(hold_ms);
		for (i = 0; i < n; i++)
			client_finish_conn(&batch[i], stats);
		started += n;
		finished += n;
	}
	kfree(batch);
	stall_end();
	pr_info("rcm_test_conn: client: %d/%d as expected (%s), %d echoes, %d MRAs, %d APRs, %u ms\n",
		stats[0], conns, expect, stats[1], stats[2], stats[3],
		jiffies_to_msecs(jiffies - t0));
	return stats[0] == conns ? 0 : -EIO;
}

/* ---- module ---- */

static int sample_add(struct ib_device *dev)
{
	if (device)
		return 0;
	pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(pd)) {
		int ret = PTR_ERR(pd);

		pd = NULL;
		return ret;
	}
	device = dev;
	if (!strcmp(role, "server")) {
		int ret = server_start();

		if (ret) {
			ib_dealloc_pd(pd);
			pd = NULL;
			device = NULL;
			return ret;
		}
	}
	return 0;
}

static void sample_remove(struct ib_device *dev, void *data)
{
	if (dev != device)
		return;
	server_stop();
	ib_dealloc_pd(pd);
	pd = NULL;
	device = NULL;
	pr_info("rcm_test_conn: %s removed\n", dev_name(&dev->dev));
}

static struct ib_client sample_client = {
	.name = "rcm_test_conn",
	.add = sample_add,
	.remove = sample_remove,
};

static int __init sample_init(void)
{
	int ret = ib_register_client(&sample_client);

	if (ret)
		return ret;
	if (!device) {
		ret = -ENODEV;
		goto out;
	}
	if (!strcmp(role, "client")) {
		ret = client_run();
		if (sgid_attr)
			rdma_put_gid_attr(sgid_attr);
		sgid_attr = NULL;
		if (ret)
			goto out;
	}
	return 0;
out:
	ib_unregister_client(&sample_client);
	return ret;
}

static void __exit sample_exit(void)
{
	ib_unregister_client(&sample_client);
}

module_init(sample_init);
module_exit(sample_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rcm sample: RC connections with data over the ib_cm API");
