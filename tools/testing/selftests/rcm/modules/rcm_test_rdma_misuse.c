// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cm misuse and teardown cases that broke the C implementation, as a
 * kernel consumer runs into them (Documentation/testing.rst lists which
 * bug of the C rdma_cm each case stands for). Each case checks what the
 * API returns and what the handlers see; under KASAN, lockdep and
 * kmemleak it also catches what the bug did (use after free, a hang, a
 * leak). It uses only the exported rdma_cm API, so it runs the same on
 * rcm.ko and on the in-tree rdma_cm, which is the reference for the
 * errnos. The last two cases are not C bugs but what consumers do:
 * rdma_notify with interrupts off, as from a QP event handler in hard IRQ
 * (under CONFIG_DEBUG_ATOMIC_SLEEP a sleeping call is reported in the
 * log), and rdma_set_ib_path on RoCE (the record must get the L2 fields).
 *
 *   insmod rcm_test_rdma_misuse.ko local=10.0.0.1 peer=10.0.0.2 \
 *          silent=10.0.0.99
 *
 * `local` is this host's address on an RDMA device, `peer` must answer
 * ARP (and need not listen), `silent` must not. Every
 * case logs "ok <case>" or "FAIL <case>: ..."; insmod fails with -EIO if
 * any case failed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <linux/irqflags.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_sa.h>
#include <rdma/rdma_cm.h>
#include <rdma/rdma_cm_ib.h>

static char *local = "";
module_param(local, charp, 0444);
MODULE_PARM_DESC(local, "this host's IPv4 address on an RDMA device");
static char *peer = "";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "an IPv4 address that answers ARP");
static char *silent = "";
module_param(silent, charp, 0444);
MODULE_PARM_DESC(silent, "an IPv4 address on the subnet that does not");

#define TIMEOUT_MS 2000
#define PORT 7480

static int failures;

/* What a handler saw, for one id. */
struct seen {
	struct completion event;	/* any event */
	atomic_t entered;	/* handler calls begun */
	atomic_t events;	/* handler calls done */
	enum rdma_cm_event_type last;
	int status;
	bool destroy;		/* return non-zero from the next event */
	int sleep_ms;		/* sleep in the handler first */
	bool after_destroy;	/* an event came after rdma_destroy_id */
	bool destroyed;
};

static int handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct seen *s = id->context;
	/* Read before complete(): the waiter may change or free `s` then. */
	bool destroy = READ_ONCE(s->destroy);

	if (READ_ONCE(s->destroyed))
		WRITE_ONCE(s->after_destroy, true);
	atomic_inc(&s->entered);
	if (s->sleep_ms)
		msleep(s->sleep_ms);
	s->last = ev->event;
	s->status = ev->status;
	atomic_inc(&s->events);
	complete(&s->event);
	return destroy ? 1 : 0;
}

#define CHECK(name, ok, fmt, ...)						\
	do {									\
		if (ok) {							\
			pr_info("ok %s\n", name);				\
		} else {							\
			failures++;						\
			pr_err("FAIL %s: " fmt "\n", name, ##__VA_ARGS__);	\
		}								\
	} while (0)

#define CHECK_RET(name, got, want) \
	CHECK(name, (got) == (want), "returned %ld, expected %ld", (long)(got), (long)(want))

static void seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	init_completion(&s->event);
}

static struct rdma_cm_id *new_id(struct seen *s)
{
	seen_init(s);
	return rdma_create_id(&init_net, handler, s, RDMA_PS_TCP, IB_QPT_RC);
}

/* An id reporting to a `seen` of its own on the heap (it outlives ids a
 * handler destroys); NULL, and case `name` failed, if there is none. */
static struct rdma_cm_id *new_heap_id(const char *name, struct seen **sp)
{
	struct seen *s = kmalloc(sizeof(*s), GFP_KERNEL);
	struct rdma_cm_id *id;

	*sp = s;
	if (s) {
		id = new_id(s);
		if (!IS_ERR(id))
			return id;
		kfree(s);
		*sp = NULL;
	}
	CHECK(name, false, "no id");
	return NULL;
}

static struct sockaddr_in addr_of(const char *ip, u16 port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	in4_pton(ip, -1, (u8 *)&a.sin_addr.s_addr, -1, NULL);
	return a;
}

/* Waits for the next event of `s`: its type, or -1 on timeout. */
static int wait_event_of(struct seen *s)
{
	if (!wait_for_completion_timeout(&s->event, msecs_to_jiffies(3 * TIMEOUT_MS)))
		return -1;
	reinit_completion(&s->event);
	return s->last;
}

/* Resolving again while a resolution is pending is refused; destroying
 * the id then leaves no handler call behind (C bug 3: two requests, one
 * cancelled, the handler touching freed memory). */
static void resolve_while_pending(void)
{
	struct sockaddr_in dst = addr_of(silent, PORT);
	struct rdma_cm_id *id;
	struct seen *s;
	long ret;

	id = new_heap_id("resolve while pending", &s);
	if (!id)
		return;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, TIMEOUT_MS);
	CHECK_RET("resolve_addr to a silent address starts", ret, 0L);
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, TIMEOUT_MS);
	CHECK_RET("resolve_addr while one is pending: -EINVAL", ret, (long)-EINVAL);
	ret = rdma_resolve_route(id, TIMEOUT_MS);
	CHECK_RET("resolve_route while the address is pending: -EINVAL", ret, (long)-EINVAL);
	rdma_destroy_id(id);
	WRITE_ONCE(s->destroyed, true);
	/* Past the resolution's timeout: a late callback would have run. */
	msleep(TIMEOUT_MS + 1000);
	CHECK("no event after destroying an id with a pending resolution",
	      !READ_ONCE(s->after_destroy) && !atomic_read(&s->events),
	      "%d events, one after destroy: %d", atomic_read(&s->events),
	      READ_ONCE(s->after_destroy));
	kfree(s);
}

/* A listening id refuses bind and resolve and keeps listening (C bug 4:
 * the source address family rewritten, the listen not cancelled). */
static void listener_misuse(void)
{
	struct sockaddr_in any = addr_of("0.0.0.0", PORT);
	struct sockaddr_in dst = addr_of(peer, PORT);
	struct sockaddr_in src = addr_of(local, 0);
	struct rdma_cm_id *id, *other;
	struct seen s, o;
	long ret;

	id = new_id(&s);
	if (IS_ERR(id)) {
		CHECK("listener misuse", false, "no id");
		return;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (!ret)
		ret = rdma_listen(id, 4);
	CHECK_RET("listen on the wildcard", ret, 0L);
	ret = rdma_bind_addr(id, (struct sockaddr *)&any);
	CHECK_RET("bind on a listening id: -EINVAL", ret, (long)-EINVAL);
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, TIMEOUT_MS);
	CHECK_RET("resolve_addr on a listening id: -EINVAL", ret, (long)-EINVAL);
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, TIMEOUT_MS);
	CHECK_RET("resolve_addr from a local address on a listening id: -EINVAL", ret,
		  (long)-EINVAL);
	CHECK("the wildcard listener is still bound to no device and its port",
	      !id->device && ((struct sockaddr_in *)&id->route.addr.src_addr)->sin_port ==
	      htons(PORT) && !((struct sockaddr_in *)&id->route.addr.src_addr)->sin_addr.s_addr,
	      "device %s", id->device ? dev_name(&id->device->dev) : "none");
	ret = rdma_listen(id, 4);
	CHECK_RET("listen again: -EINVAL", ret, (long)-EINVAL);
	CHECK("the listener's address is still IPv4",
	      id->route.addr.src_addr.ss_family == AF_INET, "family %d",
	      id->route.addr.src_addr.ss_family);
	/* A second listener on the port (C bug 5: the error path). */
	other = new_id(&o);
	CHECK("a second id", !IS_ERR(other), "none");
	if (!IS_ERR(other)) {
		ret = rdma_bind_addr(other, (struct sockaddr *)&any);
		/* 6.12: a wildcard on either side is -EADDRNOTAVAIL. */
		CHECK_RET("a second bind of the listening wildcard port: -EADDRNOTAVAIL", ret,
			  (long)-EADDRNOTAVAIL);
		/* Still idle: listen binds it to an ephemeral port. */
		ret = rdma_listen(other, 4);
		CHECK_RET("listen on the id whose bind failed", ret, 0L);
		rdma_destroy_id(other);
	}
	rdma_destroy_id(id);
	CHECK("no event reached the listeners", !atomic_read(&s.events) &&
	      !atomic_read(&o.events), "%d and %d events", atomic_read(&s.events),
	      atomic_read(&o.events));
}

/* Calls in the wrong state are refused with 6.12's errnos. */
static void wrong_states(void)
{
	struct rdma_conn_param p = {};
	struct rdma_cm_id *id;
	struct seen s;
	long ret;

	id = new_id(&s);
	if (IS_ERR(id)) {
		CHECK("wrong states", false, "no id");
		return;
	}
	ret = rdma_resolve_route(id, TIMEOUT_MS);
	CHECK_RET("resolve_route on an idle id: -EINVAL", ret, (long)-EINVAL);
	ret = rdma_connect(id, &p);
	CHECK_RET("connect on an idle id: -EINVAL", ret, (long)-EINVAL);
	ret = rdma_disconnect(id);
	CHECK_RET("disconnect on an idle id: -EINVAL", ret, (long)-EINVAL);
	rdma_lock_handler(id);
	ret = rdma_accept(id, &p);
	rdma_unlock_handler(id);
	CHECK_RET("accept on an idle id: -EINVAL", ret, (long)-EINVAL);
	ret = rdma_set_ack_timeout(id, 14);
	CHECK_RET("set_ack_timeout on an RC id", ret, 0L);
	rdma_destroy_id(id);
}

/* Address and route resolved and the id destroyed, over and over: every
 * route's path record is freed (C bug 14, kmemleak). Every other id is
 * destroyed by its ROUTE_RESOLVED handler's non-zero return and is not
 * touched again (C bug 2); the others refuse a second route resolution
 * and are destroyed by rdma_destroy_id. */
static void repeated_resolves(void)
{
	struct sockaddr_in dst = addr_of(peer, PORT);
	struct rdma_cm_id *id;
	int i, ok = 0;
	struct seen *s;
	long ret;

	s = kmalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		CHECK("repeated resolves", false, "no memory");
		return;
	}
	for (i = 0; i < 50; i++) {
		id = new_id(s);
		if (IS_ERR(id))
			break;
		ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, TIMEOUT_MS);
		if (ret || wait_event_of(s) != RDMA_CM_EVENT_ADDR_RESOLVED) {
			rdma_destroy_id(id);
			break;
		}
		s->destroy = !(i % 2);
		ret = rdma_resolve_route(id, TIMEOUT_MS);
		if (ret) {
			rdma_destroy_id(id);
			break;
		}
		if (wait_event_of(s) != RDMA_CM_EVENT_ROUTE_RESOLVED) {
			/* Destroyed by its handler or not: not ours to tell. */
			break;
		}
		if (!s->destroy) {
			ret = rdma_resolve_route(id, TIMEOUT_MS);
			rdma_destroy_id(id);
			if (ret != -EINVAL)
				break;
		}
		ok++;
	}
	/* Nothing may reach an id its handler destroyed. */
	msleep(200);
	CHECK("50 ids resolved and destroyed (half by their handlers); a second route resolution refused",
	      ok == 50 && atomic_read(&s->events) == 2, "%d of 50, last id saw %d events", ok,
	      atomic_read(&s->events));
	kfree(s);
}

/* rdma_destroy_id waits for a handler that is running and returns; no
 * event follows (C bug 12: a leaked reference made destroy wait forever). */
static void destroy_during_handler(void)
{
	struct sockaddr_in dst = addr_of(peer, PORT);
	struct rdma_cm_id *id;
	struct seen *s;
	ktime_t start;
	s64 ms;
	long ret;

	id = new_heap_id("destroy during the handler", &s);
	if (!id)
		return;
	s->sleep_ms = 1000;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, TIMEOUT_MS);
	CHECK_RET("resolve_addr", ret, 0L);
	/* Until the handler has begun its sleep. */
	for (ms = 0; ms < 3000 && !atomic_read(&s->entered); ms += 10)
		msleep(10);
	start = ktime_get();
	rdma_destroy_id(id);
	ms = ktime_ms_delta(ktime_get(), start);
	WRITE_ONCE(s->destroyed, true);
	CHECK("destroy while the handler runs returns once it has",
	      atomic_read(&s->events) == 1 && ms < 5000,
	      "%d events; destroy took %lld ms", atomic_read(&s->events), ms);
	msleep(500);
	CHECK("no event after destroy", !READ_ONCE(s->after_destroy) &&
	      atomic_read(&s->events) == 1, "%d events (after destroy: %d)",
	      atomic_read(&s->events), READ_ONCE(s->after_destroy));
	kfree(s);
}

/* One id's address is resolved while another id's handler blocks: the C
 * rdma_cm calls address handlers from ib_core's address work, beside its
 * other handlers, so a consumer blocking in one handler (here a
 * ROUTE_RESOLVED that sleeps) holds up no other id's resolution. */
static void resolve_beside_blocked_handler(void)
{
	const char *name = "an ADDR_RESOLVED arrives while another id's handler blocks";
	struct sockaddr_in dst = addr_of(peer, PORT);
	struct rdma_cm_id *a, *b;
	struct seen *sa, *sb;
	int got = -1, ms;
	bool blocked = false;
	long ret;

	a = new_heap_id(name, &sa);
	if (!a)
		return;
	b = new_heap_id(name, &sb);
	if (!b) {
		rdma_destroy_id(a);
		kfree(sa);
		return;
	}
	ret = rdma_resolve_addr(a, NULL, (struct sockaddr *)&dst, TIMEOUT_MS);
	if (!ret && wait_event_of(sa) == RDMA_CM_EVENT_ADDR_RESOLVED) {
		sa->sleep_ms = TIMEOUT_MS + 1000;
		ret = rdma_resolve_route(a, TIMEOUT_MS);
		for (ms = 0; !ret && ms < 3000 && atomic_read(&sa->entered) < 2; ms += 10)
			msleep(10);
		if (!ret)
			ret = rdma_resolve_addr(b, NULL, (struct sockaddr *)&dst, TIMEOUT_MS);
		if (!ret) {
			got = wait_event_of(sb);
			/* a's ROUTE_RESOLVED handler still asleep */
			blocked = atomic_read(&sa->entered) == 2 && atomic_read(&sa->events) == 1;
		}
		wait_event_of(sa);
	}
	CHECK(name, !ret && got == RDMA_CM_EVENT_ADDR_RESOLVED && blocked,
	      "returned %ld, event %d, the other handler %s", ret, got,
	      blocked ? "blocked" : "done or not begun");
	rdma_destroy_id(b);
	rdma_destroy_id(a);
	kfree(sb);
	kfree(sa);
}

/* A UD id joins a RoCE group and leaves it at once, 50 times, then joins
 * and is destroyed without leaving, 50 times: every call succeeds and no
 * join is reported after its leave or its id's destruction (C bug 6: the
 * join's work ran without a reference and raced the leave). */
static void join_leave_race(void)
{
	struct sockaddr_in src = addr_of(local, 0), group = addr_of("239.1.2.3", 0);
	struct rdma_cm_id *id;
	int i, joined = 0, bad = 0, late = 0;
	struct seen *s;
	long ret;

	s = kmalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		CHECK("multicast join vs leave", false, "no memory");
		return;
	}
	for (i = 0; i < 100; i++) {
		seen_init(s);
		id = rdma_create_id(&init_net, handler, s, RDMA_PS_UDP, IB_QPT_UD);
		if (IS_ERR(id)) {
			bad++;
			break;
		}
		ret = rdma_bind_addr(id, (struct sockaddr *)&src);
		if (!ret)
			ret = rdma_join_multicast(id, (struct sockaddr *)&group,
						  BIT(FULLMEMBER_JOIN), NULL);
		if (ret) {
			bad++;
			pr_err("join %d: %ld\n", i, ret);
		} else {
			joined++;
			/* the first half leaves, the second half destroys;
			 * `destroyed` marks the end of the membership */
			if (i < 50) {
				rdma_leave_multicast(id, (struct sockaddr *)&group);
				WRITE_ONCE(s->destroyed, true);
			}
		}
		rdma_destroy_id(id);
		WRITE_ONCE(s->destroyed, true);
		if (READ_ONCE(s->after_destroy))
			late++;
	}
	msleep(200);
	if (READ_ONCE(s->after_destroy))
		late++;
	CHECK("100 joins, each left or destroyed at once: no join reported after",
	      joined == 100 && !bad && !late, "%d joined, %d failed, %d reported late",
	      joined, bad, late);
	kfree(s);
}

/* What the notify case's handler saw, for one side of its connection. */
struct notify_side {
	wait_queue_head_t wq;
	unsigned long seen;		/* a bit per event type */
	struct rdma_cm_id *passive;	/* the listener's: the request's id */
	int accept_ret;
};

static void notify_conn_param(struct rdma_conn_param *p, u32 qp_num)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->qp_num = qp_num;	/* no QP: its number in the parameters */
}

/* The listener and the id of its request share this handler and its
 * context; it accepts the first request and refuses any other. */
static int notify_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct notify_side *s = id->context;
	struct rdma_conn_param p;
	int ret = 0;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (READ_ONCE(s->passive)) {
			ret = -EBUSY;
		} else {
			notify_conn_param(&p, 0x8765);
			ret = rdma_accept(id, &p);
		}
		s->accept_ret = ret;
		if (!ret)
			WRITE_ONCE(s->passive, id);
	}
	set_bit(ev->event, &s->seen);
	wake_up(&s->wq);
	return ret ? 1 : 0;
}

static bool notify_wait(struct notify_side *s, enum rdma_cm_event_type ev)
{
	return wait_event_timeout(s->wq, test_bit(ev, &s->seen),
				  msecs_to_jiffies(3 * TIMEOUT_MS)) > 0;
}

/* rdma_notify with interrupts off answers 0, -EISCONN or -EINVAL. */
static bool notify_ret_ok(int ret)
{
	return !ret || ret == -EISCONN || ret == -EINVAL;
}

static int notify_irqs_off_call(struct rdma_cm_id *id)
{
	unsigned long flags;
	int ret;

	local_irq_save(flags);
	ret = rdma_notify(id, IB_EVENT_COMM_EST);
	local_irq_restore(flags);
	return ret;
}

/* nvmet, srpt, isert and RDS call rdma_notify(IB_EVENT_COMM_EST) from QP
 * event handlers, which some drivers run in hard IRQ: with interrupts off
 * it must not sleep (CONFIG_DEBUG_ATOMIC_SLEEP reports it, the tests'
 * kernel log check fails on the report). An RC connection without QPs to
 * this host's own address; the passive id is notified from process
 * context with interrupts off, first between its REP and the RTU (where a
 * QP's COMM_EST event comes from: the C CM establishes the id then) and
 * again once established. The in-tree rdma_cm's answers, logged, are
 * the reference (0, then -EISCONN). */
static void notify_irqs_off(void)
{
	const char *name = "rdma_notify with interrupts off, before the RTU and once established";
	struct sockaddr_in at = addr_of(local, PORT + 1);
	struct rdma_cm_id *listener, *client, *passive = NULL;
	struct notify_side srv = {}, cli = {};
	struct rdma_conn_param p;
	int before = 0, after = 0;
	long ret;

	init_waitqueue_head(&srv.wq);
	init_waitqueue_head(&cli.wq);
	listener = rdma_create_id(&init_net, notify_handler, &srv, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(listener)) {
		CHECK(name, false, "no listener id");
		return;
	}
	client = rdma_create_id(&init_net, notify_handler, &cli, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(client)) {
		CHECK(name, false, "no client id");
		rdma_destroy_id(listener);
		return;
	}
	ret = rdma_bind_addr(listener, (struct sockaddr *)&at);
	if (!ret)
		ret = rdma_listen(listener, 4);
	if (!ret)
		ret = rdma_resolve_addr(client, NULL, (struct sockaddr *)&at, TIMEOUT_MS);
	if (!ret && !notify_wait(&cli, RDMA_CM_EVENT_ADDR_RESOLVED))
		ret = -ETIMEDOUT;
	if (!ret)
		ret = rdma_resolve_route(client, TIMEOUT_MS);
	if (!ret && !notify_wait(&cli, RDMA_CM_EVENT_ROUTE_RESOLVED))
		ret = -ETIMEDOUT;
	if (!ret) {
		notify_conn_param(&p, 0x4321);
		ret = rdma_connect(client, &p);
	}
	/* The request accepted; the client has the REP, its RTU not sent. */
	if (!ret && !(notify_wait(&srv, RDMA_CM_EVENT_CONNECT_REQUEST) &&
		      notify_wait(&cli, RDMA_CM_EVENT_CONNECT_RESPONSE)))
		ret = -ETIMEDOUT;
	passive = READ_ONCE(srv.passive);
	if (!ret && !passive)
		ret = srv.accept_ret ? srv.accept_ret : -ENOTCONN;
	CHECK("notify: a connection to this host's own address, REP received", !ret,
	      "failed: %ld", ret);
	if (ret)
		goto out;

	before = notify_irqs_off_call(passive);
	pr_info("notify: rdma_notify(COMM_EST) with interrupts off before the RTU returned %d\n",
		before);
	rdma_lock_handler(client);
	ret = rdma_accept(client, NULL);	/* the RTU */
	rdma_unlock_handler(client);
	CHECK_RET("notify: the RTU (accept without parameters on the active id)", ret, 0L);
	CHECK("notify: the passive id is established",
	      notify_wait(&srv, RDMA_CM_EVENT_ESTABLISHED), "no ESTABLISHED");
	after = notify_irqs_off_call(passive);
	pr_info("notify: rdma_notify(COMM_EST) with interrupts off once established returned %d\n",
		after);
	CHECK(name, notify_ret_ok(before) && notify_ret_ok(after),
	      "returned %d before the RTU, %d once established", before, after);

	/* The client's DREQ, the passive side's DREP. */
	ret = rdma_disconnect(client);
	if (!ret)
		ret = notify_wait(&srv, RDMA_CM_EVENT_DISCONNECTED) ? rdma_disconnect(passive) :
								      -ETIMEDOUT;
	if (!ret && !notify_wait(&cli, RDMA_CM_EVENT_DISCONNECTED))
		ret = -ETIMEDOUT;
	CHECK_RET("notify: the connection disconnects", ret, 0L);
out:
	rdma_destroy_id(client);
	passive = READ_ONCE(srv.passive);
	if (passive)
		rdma_destroy_id(passive);
	rdma_destroy_id(listener);
	/* A request accepted while the listener went is ours too. */
	if (!passive && READ_ONCE(srv.passive))
		rdma_destroy_id(srv.passive);
}

/* A consumer's own path record on RoCE (rdma_set_ib_path, as ibacm's
 * users and RDMA_OPTION_IB_PATH set it) gets the L2 part of the resolved
 * address, as 6.12 gives it: the RoCE record type, route_resolved and the
 * peer's MAC, which a kernel QP's RTR needs (no driver resolves it). */
static void ib_path_on_roce(void)
{
	static const char name[] = "set_ib_path on RoCE: the record gets the address's L2 part";
	struct sockaddr_in dst = addr_of(peer, PORT);
	struct sa_path_rec rec = {};
	struct sa_path_rec *got;
	const u8 *want, *dmac;
	struct rdma_cm_id *id;
	struct seen s;
	bool roce;
	long ret;

	id = new_id(&s);
	if (IS_ERR(id)) {
		CHECK(name, false, "no id");
		return;
	}
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, TIMEOUT_MS);
	if (!ret && wait_event_of(&s) != RDMA_CM_EVENT_ADDR_RESOLVED)
		ret = -ETIMEDOUT;
	if (ret) {
		CHECK(name, false, "address not resolved: %ld", ret);
		goto out;
	}
	/* What an SA or ibacm would hand over: the IB fields only. */
	rec.rec_type = SA_PATH_REC_TYPE_IB;
	rdma_ip2gid((struct sockaddr *)&id->route.addr.src_addr, &rec.sgid);
	rdma_ip2gid((struct sockaddr *)&id->route.addr.dst_addr, &rec.dgid);
	rec.hop_limit = 64;
	rec.reversible = 1;
	rec.pkey = cpu_to_be16(0xffff);
	rec.mtu_selector = IB_SA_EQ;
	rec.mtu = IB_MTU_1024;
	rec.rate_selector = IB_SA_EQ;
	rec.rate = IB_RATE_10_GBPS;
	rec.packet_life_time_selector = IB_SA_EQ;
	rec.packet_life_time = 16;
	ret = rdma_set_ib_path(id, &rec);
	got = id->route.path_rec;
	want = id->route.addr.dev_addr.dst_dev_addr;
	roce = !ret && got && sa_path_is_roce(got);
	dmac = roce ? got->roce.dmac : NULL;
	CHECK(name, roce && got->roce.route_resolved && !is_zero_ether_addr(want) &&
		    ether_addr_equal(dmac, want),
	      "returned %ld; record type %d, route_resolved %d, MAC %pM (the address's %pM)",
	      ret, got ? got->rec_type : -1, roce ? got->roce.route_resolved : 0,
	      dmac ? dmac : (const u8 *)"\0\0\0\0\0\0", want);
out:
	rdma_destroy_id(id);
}

static int __init misuse_init(void)
{
	if (!*local || !*peer || !*silent)
		return -EINVAL;
	wrong_states();
	listener_misuse();
	resolve_while_pending();
	repeated_resolves();
	destroy_during_handler();
	resolve_beside_blocked_handler();
	join_leave_race();
	notify_irqs_off();
	ib_path_on_roce();
	pr_info("%d case(s) failed\n", failures);
	return failures ? -EIO : 0;
}

static void __exit misuse_exit(void)
{
}

module_init(misuse_init);
module_exit(misuse_exit);
MODULE_DESCRIPTION("rcm sample: rdma_cm misuse cases of the C rdma_cm's bug history");
MODULE_LICENSE("GPL");
