// SPDX-License-Identifier: GPL-2.0
/*
 * Sample rdma_cm consumer for connection-rate measurements: a server that
 * accepts every connection, and a client that opens `conns` connections,
 * `parallel` at a time, each through address and route resolution,
 * connect, ESTABLISHED, disconnect and DISCONNECTED. With qp=1 both sides
 * give each connection an RC QP made by rdma_create_qp (rdma_cm moves it);
 * with qp=0 they only name a QP number in the connection parameters, so
 * the time measured is the connection manager's alone. It uses only the
 * exported rdma_cm API and runs the same on rcm.ko and the in-tree rdma_cm.
 *
 *   insmod rcm_sample_rdma.ko role=server [port=N] [qp=1]
 *   insmod rcm_sample_rdma.ko role=client peer=10.0.0.2 [port=N]
 *          [conns=N] [parallel=N] [qp=1]
 *
 * The client works inside module init and fails the insmod (-EIO) unless
 * every connection was established and closed; it logs
 *   client: <conns> connections, <parallel> in flight, qp=<0|1>: <ms> ms
 * With hold=<ms> the client keeps every connection once it is established
 * (the next one starts then), logs
 *   client: <conns> connected, <parallel> in flight, qp=<0|1>: <ms> ms, holding
 * waits <ms> (for the caller to read the memory in use), disconnects all
 * of them at once and logs
 *   client: <conns> disconnected at once: <ms> ms, <n> DREQ timeouts
 * and, either way, the mean time of each step (from the call to the event
 * that ends it):
 *   client: step <resolve_addr|resolve_route|connect|disconnect>: <us> us mean of <n>
 * The server accepts until it is unloaded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/rdma_cm.h>

static char *role = "server";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "server or client");
static char *peer = "";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "the server's IPv4 address (client)");
static int port = 7471;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "TCP port space port");
static int conns = 100;
module_param(conns, int, 0444);
MODULE_PARM_DESC(conns, "connections to open (client)");
static int parallel = 1;
module_param(parallel, int, 0444);
MODULE_PARM_DESC(parallel, "connections in flight at once (client)");
static bool qp;
module_param(qp, bool, 0444);
MODULE_PARM_DESC(qp, "give each connection an RC QP through rdma_create_qp");
static int hold;
module_param(hold, int, 0444);
MODULE_PARM_DESC(hold, "client: keep all connections up this many ms, then disconnect them at once");

#define TIMEOUT_MS 2000

/* One connection of either side, with its verbs resources (qp=1). */
struct sample_conn {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct list_head node;	/* every live connection */
	bool up;		/* hold: established, not yet disconnected */
	ktime_t step_start;	/* client: when the current step began */
};

/* Client steps, timed from the call to the event that ends them. */
enum step { STEP_ADDR, STEP_ROUTE, STEP_CONNECT, STEP_DISCONNECT, STEPS };
static const char *const step_names[STEPS] = {
	"resolve_addr", "resolve_route", "connect", "disconnect",
};
static u64 step_ns[STEPS];
static int step_count[STEPS];

static DEFINE_MUTEX(lock);	/* the counters and lists below */
static struct completion done;
static struct completion all_up;	/* hold: every connection established or failed */
static int started, finished, failed, settled, dreq_timeouts;
static bool aborting;
static LIST_HEAD(live);
static struct rdma_cm_id *listener;
static struct sockaddr_in server_addr;

static void conn_free_qp(struct sample_conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	c->cq = NULL;
	c->pd = NULL;
}

static int conn_create_qp(struct sample_conn *c)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	c->pd = ib_alloc_pd(c->id->device, 0);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		return ret;
	}
	c->cq = ib_alloc_cq(c->id->device, NULL, 4, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		return ret;
	}
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	attr.cap.max_send_wr = 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	return rdma_create_qp(c->id, c->pd, &attr);
}

/* Numbers for connections without a QP: a CM refuses a second live
 * connection with the same remote QP number (stale connection). */
static atomic_t next_qp_num = ATOMIC_INIT(0x100);

static void conn_params(struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	/* Ignored when the id has a QP of rdma_cm's. */
	p->qp_num = atomic_inc_return(&next_qp_num) & 0xffffff;
}

static int client_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/* Ends step `s` of `c` and starts the next one now. */
static void step_done(struct sample_conn *c, enum step s)
{
	ktime_t now = ktime_get();

	mutex_lock(&lock);
	step_ns[s] += ktime_to_ns(ktime_sub(now, c->step_start));
	step_count[s]++;
	mutex_unlock(&lock);
	c->step_start = now;
}

/* A connection got established, or failed before it was (hold). */
static void settle_locked(void)
{
	if (++settled == conns)
		complete(&all_up);
}

/* A connection failed before it had an id with events (called with `lock`). */
static void fail_start_locked(void)
{
	failed++;
	finished++;
	settle_locked();
	if (finished == conns)
		complete(&done);
}

/* Starts the next connection, if any is left (called with `lock`). */
static void client_start_locked(void)
{
	struct sample_conn *c;
	int ret;

	if (aborting || started >= conns)
		return;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		goto fail;
	c->id = rdma_create_id(&init_net, client_handler, c, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(c->id)) {
		kfree(c);
		goto fail;
	}
	started++;
	list_add(&c->node, &live);
	c->step_start = ktime_get();
	ret = rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&server_addr,
				TIMEOUT_MS);
	if (ret) {
		/* No event will come: undo here. */
		list_del(&c->node);
		rdma_destroy_id(c->id);
		kfree(c);
		fail_start_locked();
	}
	return;
fail:
	started++;
	fail_start_locked();
}

/* The connection ends: counted, its QP freed; non-zero destroys its id. */
static int client_end(struct sample_conn *c, bool ok)
{
	mutex_lock(&lock);
	if (aborting) {
		/* Module init destroys what is left. */
		mutex_unlock(&lock);
		return 0;
	}
	list_del(&c->node);
	if (!ok)
		failed++;
	if (!c->up)
		settle_locked();
	finished++;
	if (finished == conns)
		complete(&done);
	if (!c->up)
		client_start_locked();
	mutex_unlock(&lock);
	conn_free_qp(c);
	kfree(c);
	return 1;
}

/* hold: the connection stays up and frees its place in flight. */
static void client_established(struct sample_conn *c)
{
	mutex_lock(&lock);
	if (!aborting) {
		c->up = true;
		settle_locked();
		client_start_locked();
	}
	mutex_unlock(&lock);
}

static int client_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sample_conn *c = id->context;
	struct rdma_conn_param p;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		step_done(c, STEP_ADDR);
		ret = rdma_resolve_route(id, TIMEOUT_MS);
		return ret ? client_end(c, false) : 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		step_done(c, STEP_ROUTE);
		if (qp && conn_create_qp(c))
			return client_end(c, false);
		conn_params(&p);
		ret = rdma_connect_locked(id, &p);
		return ret ? client_end(c, false) : 0;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* No QP of rdma_cm's: the consumer completes (the RTU). */
		ret = rdma_accept(id, NULL);
		if (ret)
			return client_end(c, false);
		fallthrough;
	case RDMA_CM_EVENT_ESTABLISHED:
		step_done(c, STEP_CONNECT);
		if (hold) {
			client_established(c);
			return 0;
		}
		ret = rdma_disconnect(id);
		return ret ? client_end(c, false) : 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* A DREQ that got no DREP ends the same way, with -ETIMEDOUT. */
		if (ev->status == -ETIMEDOUT) {
			mutex_lock(&lock);
			dreq_timeouts++;
			mutex_unlock(&lock);
		}
		step_done(c, STEP_DISCONNECT);
		return client_end(c, true);
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		pr_info("client: %s (status %d)\n", rdma_event_msg(ev->event),
			ev->status);
		return client_end(c, false);
	}
}

static int server_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sample_conn *c = id->context;
	struct rdma_conn_param p;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		c = kzalloc(sizeof(*c), GFP_KERNEL);
		if (!c)
			return -ENOMEM;
		c->id = id;
		id->context = c;
		if (qp && conn_create_qp(c)) {
			conn_free_qp(c);
			kfree(c);
			return -ENOMEM;
		}
		mutex_lock(&lock);
		list_add(&c->node, &live);
		mutex_unlock(&lock);
		conn_params(&p);
		if (rdma_accept(id, &p))
			goto end;
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		/* DISCONNECTED, errors, or the listener's device going. */
		if (!c)
			return 0;
		goto end;
	}
end:
	mutex_lock(&lock);
	if (aborting) {
		mutex_unlock(&lock);
		return 0;
	}
	list_del(&c->node);
	mutex_unlock(&lock);
	conn_free_qp(c);
	kfree(c);
	return 1;
}

/* Destroys every connection left (module exit, or a client gone wrong). */
static void destroy_live(void)
{
	struct sample_conn *c, *next;

	mutex_lock(&lock);
	aborting = true;
	mutex_unlock(&lock);
	/* No handler touches the list once `aborting` is set. */
	list_for_each_entry_safe(c, next, &live, node) {
		list_del(&c->node);
		if (c->id->qp)
			rdma_destroy_qp(c->id);
		rdma_destroy_id(c->id);
		c->id = NULL;
		conn_free_qp(c);
		kfree(c);
	}
}

static int server_start(void)
{
	int ret;

	listener = rdma_create_id(&init_net, server_handler, NULL, RDMA_PS_TCP,
				  IB_QPT_RC);
	if (IS_ERR(listener))
		return PTR_ERR(listener);
	server_addr.sin_family = AF_INET;
	server_addr.sin_port = htons(port);
	ret = rdma_bind_addr(listener, (struct sockaddr *)&server_addr);
	if (!ret)
		ret = rdma_listen(listener, 128);
	if (ret) {
		rdma_destroy_id(listener);
		listener = NULL;
	}
	return ret;
}

/*
 * hold: disconnects every established connection at once. The server never
 * disconnects, so an established connection is freed only after its DREQ
 * here; the ids are collected first because rdma_disconnect is not called
 * under `lock` (the handlers take it).
 */
static void disconnect_all(void)
{
	struct rdma_cm_id **ids;
	struct sample_conn *c;
	int i, n = 0;

	ids = kvcalloc(conns, sizeof(*ids), GFP_KERNEL);
	if (!ids)
		return;
	mutex_lock(&lock);
	list_for_each_entry(c, &live, node)
		if (c->up && n < conns)
			ids[n++] = c->id;
	mutex_unlock(&lock);
	for (i = 0; i < n; i++) {
		c = ids[i]->context;
		c->step_start = ktime_get();
		if (!rdma_disconnect(ids[i]))
			continue;
		client_end(ids[i]->context, false);
		rdma_destroy_id(ids[i]);
	}
	kvfree(ids);
}

static int client_run(void)
{
	ktime_t start;
	long left;
	int i;
	s64 ms;

	server_addr.sin_family = AF_INET;
	server_addr.sin_port = htons(port);
	if (!in4_pton(peer, -1, (u8 *)&server_addr.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	if (conns < 1 || parallel < 1)
		return -EINVAL;
	init_completion(&done);
	init_completion(&all_up);
	start = ktime_get();
	mutex_lock(&lock);
	for (i = 0; i < parallel; i++)
		client_start_locked();
	mutex_unlock(&lock);
	if (hold) {
		/* Killable: a long run is not a hung task, and can be stopped. */
		left = wait_for_completion_killable_timeout(&all_up,
							    msecs_to_jiffies(conns * 500 + 60000));
		pr_info("client: %d connected, %d in flight, qp=%d: %d failed: %lld ms, holding\n",
			conns, parallel, qp, failed, ktime_ms_delta(ktime_get(), start));
		if (left > 0) {
			msleep(hold);
			start = ktime_get();
			disconnect_all();
		}
	}
	left = wait_for_completion_killable_timeout(&done, msecs_to_jiffies(conns * 500 + 60000));
	ms = ktime_ms_delta(ktime_get(), start);
	for (i = 0; i < STEPS; i++)
		if (step_count[i])
			pr_info("client: step %s: %llu us mean of %d\n", step_names[i],
				div64_u64(step_ns[i], step_count[i] * 1000ULL), step_count[i]);
	if (hold)
		pr_info("client: %d disconnected at once: %lld ms, %d DREQ timeouts\n",
			conns - failed, ms, dreq_timeouts);
	destroy_live();
	pr_info("client: %d connections, %d in flight, qp=%d: %d failed, %d unfinished: %lld ms\n",
		conns, parallel, qp, failed, conns - finished, ms);
	return left > 0 && !failed ? 0 : -EIO;
}

static int __init sample_init(void)
{
	if (!strcmp(role, "server"))
		return server_start();
	if (!strcmp(role, "client"))
		return client_run();
	return -EINVAL;
}

static void __exit sample_exit(void)
{
	if (listener)
		rdma_destroy_id(listener);
	destroy_live();
}

module_init(sample_init);
module_exit(sample_exit);
MODULE_DESCRIPTION("rcm sample: rdma_cm connection rate (any rdma_cm)");
MODULE_LICENSE("GPL");
