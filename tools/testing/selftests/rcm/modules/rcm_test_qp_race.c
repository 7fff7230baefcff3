// SPDX-License-Identifier: GPL-2.0
/*
 * Races rdma_destroy_qp against the QP moves the connection manager makes
 * on its own (to ERROR on a REJ and in rdma_disconnect, to RTR and RTS on
 * a REP), which 6.12 serialises with the id's qp_mutex: under KASAN a move
 * on a destroyed QP is a use-after-free report. Only the exported rdma_cm
 * API is used: it runs the same on rcm.ko and on the in-tree rdma_cm.
 *
 *   insmod rcm_test_qp_race.ko local=10.0.0.1 [rounds=100] [port=7490]
 *
 * Each round connects a client id to a listener on `local` (an RDMA
 * device's address), both ids with QPs; one kthread destroys the client's
 * QP while another, by kinds in turn: disconnects the passive id, whose
 * DREQ the client's handler answers with rdma_disconnect (its QP to ERROR
 * in the CM's work, as ULPs do); disconnects the client id; rejects the
 * request (the REJ moves the client's QP to ERROR); accepts it (the REP
 * moves it to RTR and RTS). One completion releases both; the destroy's
 * delay sweeps, round by round, from before to after the time the move
 * took in earlier rounds. Which event ends a race may vary; a round fails
 * if it could not connect or an event still due did not come in time.
 * Logs "qp race: <kind>: <ok>/<n> rounds (...)", "ok <case>" and
 * "FAIL <case>: ..."; insmod fails with -EIO if any round failed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/spinlock.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *local = "";
module_param(local, charp, 0444);
MODULE_PARM_DESC(local, "this host's IPv4 address on an RDMA device");
static int rounds = 100;
module_param(rounds, int, 0444);
MODULE_PARM_DESC(rounds, "connections to race, the kinds in turn");
static int port = 7490;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "the listener's port (TCP port space)");

#define TIMEOUT_MS	2000	/* address and route resolution */
#define WAIT_MS		4000	/* any one event or call */
#define NEV		(RDMA_CM_EVENT_TIMEWAIT_EXIT + 1)
#define NSTEP		13	/* delays in a sweep */
#define MAX_FAILED	5	/* rounds, before giving up */

#define CONN_PARAM	{ .responder_resources = 1, .initiator_depth = 1, \
			  .retry_count = 7, .rnr_retry_count = 7 }
#define EV(e)		BIT(RDMA_CM_EVENT_##e)
/* What ends a connection attempt on the active side. */
#define CONNECT_END	(EV(ESTABLISHED) | EV(CONNECT_RESPONSE) | EV(REJECTED) | \
			 EV(CONNECT_ERROR) | EV(UNREACHABLE))
/* What ends a setup step's wait early: the step failed. */
#define SETUP_BAD	(EV(ADDR_ERROR) | EV(ROUTE_ERROR) | EV(CONNECT_ERROR) | \
			 EV(UNREACHABLE) | EV(REJECTED) | EV(DISCONNECTED) | \
			 EV(DEVICE_REMOVAL))

enum kind { DISC_PEER, DISC_OWN, REJECT, ESTABLISH, NKINDS };

static const char *const kind_name[NKINDS] = {
	[DISC_PEER] = "disconnect by the peer",
	[DISC_OWN] = "disconnect by the owner",
	[REJECT] = "reject",
	[ESTABLISH] = "establish",
};

/* One id and its verbs; `seen` and `marked` under ev_lock. */
struct side {
	const char *name;
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	bool has_qp;			/* rdma_destroy_qp still to call */
	bool answer_dreq;		/* the handler answers a DREQ */
	int answer_ret;
	ktime_t answered;		/* when that rdma_disconnect returned */
	unsigned long seen;		/* a bit per event type */
	unsigned long mark;		/* events that follow the raced move */
	ktime_t marked;			/* when the first of them came */
	struct completion event;	/* completed on every event */
};

/* One of the two kthreads of a race. */
struct racer {
	struct task_struct *task;
	struct completion done;
	ktime_t start, end;		/* of its call */
	int ret;
};

struct round {
	int n;
	enum kind kind;
	bool failed;
	bool abort;			/* a racer did not start: no calls */
	struct side cli, srv;
	struct completion go;		/* releases both racers */
	ktime_t t_go;
	s64 offset_us;			/* > 0 delays the destroy, < 0 the other */
	struct racer cm, destroy;
};

struct kind_stats {
	int rounds, ok, before, during, after;
	s64 move_us;			/* the call to the move, smoothed */
};

static DEFINE_SPINLOCK(ev_lock);
static struct side lsn = { .name = "listener" };
static struct side *req_side;		/* takes the next request; ev_lock */
static struct round rnd;
static struct kind_stats stats[NKINDS];
static struct sockaddr_in addr;
static int failures;

#define CHECK(name, ok, fmt, ...)						\
	do {									\
		if (ok) {							\
			pr_info("ok %s\n", name);				\
		} else {							\
			failures++;						\
			pr_err("FAIL %s: " fmt "\n", name, ##__VA_ARGS__);	\
		}								\
	} while (0)

#define round_fail(r, fmt, ...)							\
	do {									\
		pr_err("FAIL %s round %d: " fmt "\n", kind_name[(r)->kind],	\
		       (r)->n, ##__VA_ARGS__);					\
		(r)->failed = true;						\
	} while (0)

static int handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct side *s = id->context;
	ktime_t now = ktime_get();

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* `id` is the request's new id: the init thread answers it */
		spin_lock(&ev_lock);
		s = req_side;
		if (s && !s->id) {
			s->id = id;
			id->context = s;
		} else {
			s = NULL;
		}
		spin_unlock(&ev_lock);
		if (!s)
			return 1;	/* no round's: rdma_cm rejects it */
	}
	/* Before the event is seen, so that waiters see the answer too. */
	if (ev->event == RDMA_CM_EVENT_DISCONNECTED && s->answer_dreq) {
		s->answer_ret = rdma_disconnect(id);
		s->answered = ktime_get();
	}
	spin_lock(&ev_lock);
	if (ev->event < NEV) {
		if ((s->mark & BIT(ev->event)) && !s->marked)
			s->marked = now;
		__set_bit(ev->event, &s->seen);
	}
	spin_unlock(&ev_lock);
	complete(&s->event);
	return 0;
}

static unsigned long seen(struct side *s)
{
	unsigned long v;

	spin_lock(&ev_lock);
	v = s->seen;
	spin_unlock(&ev_lock);
	return v;
}

/* Waits until `s` has seen an event of `mask`; whether it has. */
static bool wait_any(struct side *s, unsigned long mask)
{
	unsigned long end = jiffies + msecs_to_jiffies(WAIT_MS);
	long left;

	while (!(seen(s) & mask)) {
		left = (long)(end - jiffies);
		if (left <= 0 || !wait_for_completion_timeout(&s->event, left))
			return seen(s) & mask;
	}
	return true;
}

/* A setup step: `want` must come, before anything that ends the step. */
static int expect(struct round *r, struct side *s, enum rdma_cm_event_type want)
{
	wait_any(s, BIT(want) | SETUP_BAD);
	if (seen(s) & BIT(want))
		return 0;
	round_fail(r, "%s id: no %s (events %#lx)", s->name, rdma_event_msg(want),
		   seen(s));
	return -EIO;
}

static int called(struct round *r, const char *what, int ret)
{
	if (ret)
		round_fail(r, "%s: %d", what, ret);
	return ret;
}

/* rdma_accept outside the id's handler: under its handler lock. */
static int accept_locked(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	int ret;

	rdma_lock_handler(id);
	ret = rdma_accept(id, p);
	rdma_unlock_handler(id);
	return ret;
}

/* PD, CQ and an RC QP through rdma_create_qp (no work requests). */
static int side_verbs(struct round *r, struct side *s)
{
	struct ib_device *dev = s->id->device;
	struct ib_qp_init_attr qa = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
	};
	int ret;

	s->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(s->pd))
		return called(r, "ib_alloc_pd", PTR_ERR(s->pd));
	s->cq = ib_alloc_cq(dev, s, 4, 0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq))
		return called(r, "ib_alloc_cq", PTR_ERR(s->cq));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	ret = called(r, "rdma_create_qp", rdma_create_qp(s->id, s->pd, &qa));
	s->has_qp = !ret;
	return ret;
}

/*
 * Client id resolved, both ids with QPs, the request at the listener; for
 * the disconnect kinds also accepted and established on both sides.
 */
static int setup(struct round *r)
{
	struct rdma_conn_param p = CONN_PARAM;
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, handler, &r->cli, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return called(r, "rdma_create_id", PTR_ERR(id));
	r->cli.id = id;
	ret = called(r, "rdma_resolve_addr",
		     rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, TIMEOUT_MS));
	ret = ret ?: expect(r, &r->cli, RDMA_CM_EVENT_ADDR_RESOLVED);
	ret = ret ?: called(r, "rdma_resolve_route", rdma_resolve_route(id, TIMEOUT_MS));
	ret = ret ?: expect(r, &r->cli, RDMA_CM_EVENT_ROUTE_RESOLVED);
	ret = ret ?: side_verbs(r, &r->cli);
	if (ret)
		return ret;
	spin_lock(&ev_lock);
	req_side = &r->srv;
	spin_unlock(&ev_lock);
	ret = called(r, "rdma_connect", rdma_connect(id, &p));
	ret = ret ?: expect(r, &r->srv, RDMA_CM_EVENT_CONNECT_REQUEST);
	ret = ret ?: side_verbs(r, &r->srv);
	if (ret || (r->kind != DISC_PEER && r->kind != DISC_OWN))
		return ret;
	ret = called(r, "rdma_accept", accept_locked(r->srv.id, &p));
	ret = ret ?: expect(r, &r->cli, RDMA_CM_EVENT_ESTABLISHED);
	return ret ?: expect(r, &r->srv, RDMA_CM_EVENT_ESTABLISHED);
}

/* The call raced against the destroy. */
static int cm_call(struct round *r)
{
	struct rdma_conn_param p = CONN_PARAM;

	switch (r->kind) {
	case DISC_PEER:
		return rdma_disconnect(r->srv.id);
	case DISC_OWN:
		return rdma_disconnect(r->cli.id);
	case REJECT:
		return rdma_reject(r->srv.id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	default:
		return accept_locked(r->srv.id, &p);
	}
}

/* Sleeps most of the way to `t` and spins the rest, for precision. */
static void wait_until(ktime_t t)
{
	s64 us = ktime_us_delta(t, ktime_get());

	if (us > 200)
		usleep_range(us - 100, us - 50);
	while (ktime_before(ktime_get(), t))
		cpu_relax();
}

static int racer_fn(void *arg)
{
	struct racer *t = arg;
	struct round *r = &rnd;
	bool destroy = t == &r->destroy;
	s64 delay = destroy ? r->offset_us : -r->offset_us;

	wait_for_completion(&r->go);
	if (!r->abort) {
		wait_until(ktime_add_us(r->t_go, max_t(s64, delay, 0)));
		t->start = ktime_get();
		if (destroy)
			rdma_destroy_qp(r->cli.id);
		else
			t->ret = cm_call(r);
		t->end = ktime_get();
	}
	kthread_complete_and_exit(&t->done, 0);
}

static void race(struct round *r)
{
	struct racer *t[2] = { &r->cm, &r->destroy };
	int i;

	init_completion(&r->go);
	for (i = 0; i < 2; i++) {
		init_completion(&t[i]->done);
		t[i]->task = kthread_run(racer_fn, t[i], "qp_race_%s",
					 i ? "destroy" : "cm");
		if (IS_ERR(t[i]->task)) {
			round_fail(r, "kthread_run: %ld", PTR_ERR(t[i]->task));
			t[i]->task = NULL;
			r->abort = true;
		}
	}
	r->t_go = ktime_get();
	complete_all(&r->go);
	for (i = 0; i < 2; i++) {
		if (!t[i]->task)
			continue;
		if (wait_for_completion_timeout(&t[i]->done, msecs_to_jiffies(WAIT_MS)))
			continue;
		round_fail(r, "the %s call has not returned in %d ms",
			   i ? "rdma_destroy_qp" : "CM", WAIT_MS);
		/*
		 * It runs this module's code on this round's ids: the only
		 * unbounded wait (the hung task detector reports it).
		 */
		wait_for_completion(&t[i]->done);
	}
	if (r->abort)
		return;
	r->cli.has_qp = false;
	if (r->cm.ret)
		round_fail(r, "the raced CM call returned %d", r->cm.ret);
}

/* The connection the race left, to its end. */
static void settle(struct round *r)
{
	struct side *cli = &r->cli, *srv = &r->srv;
	unsigned long got;

	if (r->kind == REJECT || r->kind == ESTABLISH) {
		if (!wait_any(cli, CONNECT_END)) {
			round_fail(r, "client id: the connection attempt did not end (events %#lx)",
				   seen(cli));
			return;
		}
		got = seen(cli);
		if (r->kind == REJECT || !(got & (EV(ESTABLISHED) | EV(CONNECT_RESPONSE))))
			return;
		/* A REP that found no QP leaves the RTU to us. */
		if (!(got & EV(ESTABLISHED)) &&
		    called(r, "rdma_accept (the RTU)", accept_locked(cli->id, NULL)))
			return;
		if (called(r, "rdma_disconnect", rdma_disconnect(cli->id)))
			return;
	}
	/* The DREQ's receiver answers it in its handler. */
	if (!wait_any(cli, EV(DISCONNECTED)) || !wait_any(srv, EV(DISCONNECTED)))
		round_fail(r, "no DISCONNECTED (client events %#lx, passive %#lx)",
			   seen(cli), seen(srv));
	else if (cli->answer_ret || srv->answer_ret)
		round_fail(r, "rdma_disconnect in the handler returned %d",
			   cli->answer_ret ?: srv->answer_ret);
}

/* Where the destroy fell against the move, and how long the move took. */
static void account(struct round *r)
{
	struct kind_stats *st = &stats[r->kind];
	ktime_t m0, m1;
	s64 us;

	/* Both read after settle() saw the events they follow. */
	m0 = r->kind == DISC_OWN ? r->cm.start : r->cli.marked;
	m1 = r->kind == DISC_OWN ? r->cm.end :
	     r->kind == DISC_PEER ? r->cli.answered : m0;
	if (ktime_before(r->destroy.end, m0))
		st->before++;
	else if (ktime_after(r->destroy.start, m1))
		st->after++;
	else
		st->during++;
	us = clamp_t(s64, ktime_us_delta(m1, r->cm.start), 0, 5000);
	st->move_us = st->move_us ? (3 * st->move_us + us) / 4 : us;
}

static void cleanup(struct round *r)
{
	struct side *s[2] = { &r->cli, &r->srv };
	int i;

	spin_lock(&ev_lock);
	req_side = NULL;
	spin_unlock(&ev_lock);
	for (i = 0; i < 2; i++) {
		if (s[i]->has_qp)
			rdma_destroy_qp(s[i]->id);
		if (s[i]->id)
			rdma_destroy_id(s[i]->id);
		if (!IS_ERR_OR_NULL(s[i]->cq))
			ib_free_cq(s[i]->cq);
		if (!IS_ERR_OR_NULL(s[i]->pd))
			ib_dealloc_pd(s[i]->pd);
	}
}

static bool one_round(int n)
{
	struct round *r = &rnd;
	struct kind_stats *st;
	int step;

	memset(r, 0, sizeof(*r));
	r->n = n;
	r->kind = n % NKINDS;
	r->cli.name = "client";
	r->srv.name = "passive";
	init_completion(&r->cli.event);
	init_completion(&r->srv.event);
	r->cli.answer_dreq = r->kind == DISC_PEER;
	r->srv.answer_dreq = r->kind != DISC_PEER;
	r->cli.mark = r->kind == DISC_PEER ? EV(DISCONNECTED) : CONNECT_END;
	st = &stats[r->kind];
	/* From 3/8 of the move's time early to 9/8 late, in eighths. */
	step = (n / NKINDS) % NSTEP;
	r->offset_us = max_t(s64, st->move_us, 20) * (step - 3) / 8;
	st->rounds++;
	if (!setup(r)) {
		race(r);
		if (!r->abort)
			settle(r);
	}
	if (!r->failed)
		account(r);
	cleanup(r);
	if (!r->failed)
		st->ok++;
	return !r->failed;
}

static int __init qp_race_init(void)
{
	struct kind_stats *st;
	struct rdma_cm_id *l;
	int i, ret, failed = 0;

	if (!in4_pton(local, -1, (u8 *)&addr.sin_addr.s_addr, -1, NULL) ||
	    rounds < 1 || port < 1 || port > 65535)
		return -EINVAL;
	addr.sin_family = AF_INET;
	addr.sin_port = htons(port);
	init_completion(&lsn.event);
	l = rdma_create_id(&init_net, handler, &lsn, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(l)) {
		pr_err("FAIL listen: rdma_create_id: %ld\n", PTR_ERR(l));
		return -EIO;
	}
	ret = rdma_bind_addr(l, (struct sockaddr *)&addr);
	ret = ret ?: rdma_listen(l, 8);
	CHECK("listen", !ret, "on %pI4:%d: %d", &addr.sin_addr, port, ret);
	for (i = 0; !ret && i < rounds; i++) {
		if (!one_round(i) && ++failed == MAX_FAILED) {
			CHECK("all rounds run", false, "gave up after %d failed rounds",
			      failed);
			break;
		}
	}
	rdma_destroy_id(l);
	for (i = 0; !ret && i < NKINDS; i++) {
		st = &stats[i];
		pr_info("qp race: %s: %d/%d rounds (destroy before the move %d, during %d, after %d; move ~%lld us after the call)\n",
			kind_name[i], st->ok, st->rounds, st->before, st->during,
			st->after, st->move_us);
		CHECK(kind_name[i], st->ok == st->rounds, "%d of %d rounds failed",
		      st->rounds - st->ok, st->rounds);
	}
	pr_info("%d case(s) failed\n", failures);
	return failures ? -EIO : 0;
}

static void __exit qp_race_exit(void)
{
}

module_init(qp_race_init);
module_exit(qp_race_exit);
MODULE_DESCRIPTION("rcm selftests: rdma_destroy_qp against the CM's own QP moves");
MODULE_LICENSE("GPL");
