// SPDX-License-Identifier: GPL-2.0
/*
 * The errnos of the ib_cm exports when a consumer misuses them.
 *
 * A consumer that calls ib_cm wrongly (a REP on an id that never received
 * a REQ, more private data than the message holds, a second listener on a
 * service id) gets an errno back and acts on it: rdma_cm hands it on to
 * user space, ULPs retry after one errno and give up after another. The
 * errnos are part of the ABI that consumers see, so a CM that replaces the
 * C ib_cm has to return the same ones. This module calls every ib_cm
 * export with bad arguments and in wrong states, on ids that need no peer
 * (fresh IDLE ids and listeners on one device), and checks each result
 * against what the 6.12 C ib_cm returns.
 *
 * Where a call fails two of the C code's tests, the first test decides
 * the errno. Most tests give -EINVAL, but resolving a path fails with
 * -ENOENT when the port lacks the path's P_Key: the REQs and SIDR_REQs
 * here carry such a path wherever that shows the order of the tests (and
 * so that nothing goes out on the wire should a test be missing).
 *
 * Only exported ib_cm and ib_core symbols are used, so the module links
 * against the C ib_cm and against rcm.ko alike. The kselftest
 * rcm_ib_cm_errno.sh runs it on the C CM first (the reference: every check
 * must pass there) and then, in the same boot, on rcm.
 *
 *   insmod rcm_test_errno.ko [dev=rxe0]
 *
 * All the work happens in module init, on port 1 (RoCE v2) of `dev`. Each
 * check logs "rcm_test_errno: ok <name>" or "rcm_test_errno: FAIL
 * <name>: got X, expected Y"; a last line counts them, and init fails
 * (-EIO) if any check failed. Every id is destroyed before init returns.
 */
#define pr_fmt(fmt) "rcm_test_errno: " fmt

#include <linux/err.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include "rcm_test_path.h"

static char *ibdev = "rxe0";
module_param_named(dev, ibdev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to run the checks on (port 1, RoCE v2)");

/* Our listeners' service ids: "RCME" and a small number. */
#define SID(n)		cpu_to_be64(0x52434d4500000000ULL + (n))
/* What the REQs and SIDR_REQs ask for: a service nobody listens on. */
#define SID_NOBODY	SID(0xffff)
/* In the range IB_CM_ASSIGN_SERVICE_ID reserves, but not that value. */
#define SID_RESERVED	cpu_to_be64(0x0200000000000001ULL)
/* Not in the port's P_Key table (rxe has only 0xffff). */
#define BAD_PKEY	0x1234
/* Private data within every message's limit. */
#define SHORT_LEN	8
/* References held at once; each check needs a few. */
#define MAX_REFS	16

static struct ib_device *device;
static const struct ib_gid_attr *sgid_attr;
/* To ourselves, resolvable: the port's RoCE v2 GID, P_Key 0xffff. */
static struct sa_path_rec path;
/* The same path with a P_Key the port lacks: resolving it fails. */
static struct sa_path_rec bad_pkey_path;
/* Private data, ARI and additional info: as long as a u8 length allows. */
static u8 big[256];
/* A non-NULL context. */
static char a_context;

/*
 * Every id and every share of a listener that the checks hold, destroyed
 * by put_all() after each check: a shared listener appears once per share.
 */
static struct ib_cm_id *refs[MAX_REFS];
static int nrefs;

static int checks, failed;
static atomic_t events = ATOMIC_INIT(0);

/*
 * No check has the CM send anything, so no event should come. Should a CM
 * send a REQ or SIDR_REQ anyway (they go to ourselves), a listener of ours
 * may be handed a new id: returning non-zero has the CM destroy it.
 */
static int handler_a(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	atomic_inc(&events);
	pr_warn("unexpected event %d on an id of handler a\n", ev->event);
	return ev->event == IB_CM_REQ_RECEIVED ||
	       ev->event == IB_CM_SIDR_REQ_RECEIVED;
}

/* Another handler, for listeners that must not share handler_a's. */
static int handler_b(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	atomic_inc(&events);
	pr_warn("unexpected event %d on an id of handler b\n", ev->event);
	return ev->event == IB_CM_REQ_RECEIVED ||
	       ev->event == IB_CM_SIDR_REQ_RECEIVED;
}

/* ---- results ---- */

static void check_pass(const char *name)
{
	checks++;
	pr_info("ok %s\n", name);
}

static __printf(2, 3) void check_fail(const char *name, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	checks++;
	failed++;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_warn("FAIL %s: %pV\n", name, &vaf);
	va_end(args);
}

static void expect_err(const char *name, int got, int want)
{
	if (got == want)
		check_pass(name);
	else
		check_fail(name, "got %d, expected %d", got, want);
}

/* For the exports that return a pointer: an ERR_PTR(want). */
static void expect_err_ptr(const char *name, const void *got, int want)
{
	if (IS_ERR(got))
		expect_err(name, (int)PTR_ERR(got), want);
	else
		check_fail(name, "got %s, expected %d", got ? "an id" : "NULL",
			   want);
}

static void setup_failed(const char *name, const char *what, long err)
{
	check_fail(name, "got %ld from %s (setting up), expected success",
		   err, what);
}

/* ---- ids ---- */

static struct ib_cm_id *new_id(ib_cm_handler handler, void *context)
{
	struct ib_cm_id *id;

	if (nrefs == MAX_REFS)
		return ERR_PTR(-ENOSPC);
	id = ib_create_cm_id(device, handler, context);
	if (!IS_ERR_OR_NULL(id))
		refs[nrefs++] = id;
	return id;
}

/* ib_cm_insert_listen, holding whatever id comes back. */
static struct ib_cm_id *insert_listen(ib_cm_handler handler, __be64 sid)
{
	struct ib_cm_id *id;

	if (nrefs == MAX_REFS)
		return ERR_PTR(-ENOSPC);
	id = ib_cm_insert_listen(device, handler, sid);
	if (!IS_ERR_OR_NULL(id))
		refs[nrefs++] = id;
	return id;
}

/* Destroys one reference to `id`. */
static void put_ref(struct ib_cm_id *id)
{
	int i;

	for (i = nrefs - 1; i >= 0; i--) {
		if (refs[i] != id)
			continue;
		refs[i] = refs[--nrefs];
		ib_destroy_cm_id(id);
		return;
	}
}

static void put_all(void)
{
	while (nrefs > 0)
		ib_destroy_cm_id(refs[--nrefs]);
}

/* A fresh IDLE id, or NULL once the failure is reported. */
static struct ib_cm_id *idle_id(const char *name)
{
	struct ib_cm_id *id = new_id(handler_a, NULL);

	if (IS_ERR_OR_NULL(id)) {
		setup_failed(name, "ib_create_cm_id", PTR_ERR(id));
		return NULL;
	}
	return id;
}

/* A fresh id listening (ib_cm_listen) on `sid`, or NULL as above. */
static struct ib_cm_id *listener(const char *name, ib_cm_handler handler,
				 void *context, __be64 sid)
{
	struct ib_cm_id *id = new_id(handler, context);
	int ret;

	if (IS_ERR_OR_NULL(id)) {
		setup_failed(name, "ib_create_cm_id", PTR_ERR(id));
		return NULL;
	}
	ret = ib_cm_listen(id, sid);
	if (ret) {
		setup_failed(name, "ib_cm_listen", ret);
		return NULL;
	}
	return id;
}

/* A listener from ib_cm_insert_listen, or NULL as above. */
static struct ib_cm_id *inserted(const char *name, ib_cm_handler handler,
				 __be64 sid)
{
	struct ib_cm_id *id = insert_listen(handler, sid);

	if (IS_ERR_OR_NULL(id)) {
		setup_failed(name, "ib_cm_insert_listen", PTR_ERR(id));
		return NULL;
	}
	return id;
}

/* ---- the calls ---- */

/* A REQ that is valid but for what the caller changes afterwards. */
static void fill_req(struct ib_cm_req_param *p, struct sa_path_rec *primary,
		     u8 len)
{
	memset(p, 0, sizeof(*p));
	p->primary_path = primary;
	p->ppath_sgid_attr = sgid_attr;
	p->service_id = SID_NOBODY;
	p->qp_num = 0x123;
	p->qp_type = IB_QPT_RC;
	p->starting_psn = 1;
	p->private_data = big;
	p->private_data_len = len;
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->remote_cm_response_timeout = 20;
	p->local_cm_response_timeout = 20;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->max_cm_retries = 3;
}

static int sidr_req(struct ib_cm_id *id, struct sa_path_rec *p, __be64 sid,
		    u8 len)
{
	struct ib_cm_sidr_req_param req = {
		.path = p,
		.sgid_attr = sgid_attr,
		.service_id = sid,
		.timeout_ms = 1000,
		.private_data = big,
		.private_data_len = len,
		.max_cm_retries = 3,
	};

	return ib_send_cm_sidr_req(id, &req);
}

static int init_qp_attr(struct ib_cm_id *id, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask = 0;

	return ib_cm_init_qp_attr(id, &attr, &mask);
}

/* Each export once, with `len` bytes of private data (ARI, info). */
typedef int (*op_fn)(struct ib_cm_id *id, u8 len);

static int op_req(struct ib_cm_id *id, u8 len)
{
	struct ib_cm_req_param p;

	fill_req(&p, &bad_pkey_path, len);
	return ib_send_cm_req(id, &p);
}

static int op_rep(struct ib_cm_id *id, u8 len)
{
	struct ib_cm_rep_param p = {
		.qp_num = 0x123,
		.starting_psn = 1,
		.private_data = big,
		.private_data_len = len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
	};

	return ib_send_cm_rep(id, &p);
}

static int op_rtu(struct ib_cm_id *id, u8 len)
{
	return ib_send_cm_rtu(id, big, len);
}

static int op_dreq(struct ib_cm_id *id, u8 len)
{
	return ib_send_cm_dreq(id, big, len);
}

static int op_drep(struct ib_cm_id *id, u8 len)
{
	return ib_send_cm_drep(id, big, len);
}

static int op_rej(struct ib_cm_id *id, u8 len)
{
	return ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0, big,
			      len);
}

static int op_rej_ari(struct ib_cm_id *id, u8 len)
{
	return ib_send_cm_rej(id, IB_CM_REJ_CONSUMER_DEFINED, big, len, NULL,
			      0);
}

static int op_mra(struct ib_cm_id *id, u8 len)
{
	return ib_send_cm_mra(id, 20, big, len);
}

static int op_sidr_req(struct ib_cm_id *id, u8 len)
{
	return sidr_req(id, &bad_pkey_path, SID_NOBODY, len);
}

static int op_sidr_rep(struct ib_cm_id *id, u8 len)
{
	struct ib_cm_sidr_rep_param p = {
		.qp_num = 0x123,
		.qkey = 0x11111111,
		.status = IB_SIDR_SUCCESS,
		.private_data = big,
		.private_data_len = len,
	};

	return ib_send_cm_sidr_rep(id, &p);
}

static int op_sidr_rep_info(struct ib_cm_id *id, u8 len)
{
	struct ib_cm_sidr_rep_param p = {
		.qp_num = 0x123,
		.qkey = 0x11111111,
		.status = IB_SIDR_SUCCESS,
		.info = big,
		.info_length = len,
	};

	return ib_send_cm_sidr_rep(id, &p);
}

static int op_comm_est(struct ib_cm_id *id, u8 len)
{
	return ib_cm_notify(id, IB_EVENT_COMM_EST);
}

static int op_path_mig(struct ib_cm_id *id, u8 len)
{
	return ib_cm_notify(id, IB_EVENT_PATH_MIG);
}

static int op_qp_init(struct ib_cm_id *id, u8 len)
{
	return init_qp_attr(id, IB_QPS_INIT);
}

static int op_qp_rtr(struct ib_cm_id *id, u8 len)
{
	return init_qp_attr(id, IB_QPS_RTR);
}

static int op_qp_rts(struct ib_cm_id *id, u8 len)
{
	return init_qp_attr(id, IB_QPS_RTS);
}

/*
 * The calls that need an id in some state past IDLE (or LISTEN): each on a
 * fresh IDLE id ("<name>_on_idle") and on a fresh listener
 * ("<name>_on_listener") must give -EINVAL. (A REQ and a SIDR_REQ are
 * right on an IDLE id; their listener checks are further down.)
 */
static const struct {
	const char *name;
	op_fn fn;
} state_ops[] = {
	{ "rep", op_rep },
	{ "rtu", op_rtu },
	{ "dreq", op_dreq },
	{ "drep", op_drep },
	{ "rej", op_rej },
	{ "mra", op_mra },
	{ "sidr_rep", op_sidr_rep },
	{ "notify_comm_est", op_comm_est },
	{ "notify_path_mig", op_path_mig },
	{ "init_qp_attr_init", op_qp_init },
	{ "init_qp_attr_rtr", op_qp_rtr },
	{ "init_qp_attr_rts", op_qp_rts },
};

/*
 * One byte over each length limit, on a fresh IDLE id: -EINVAL. For all
 * but REQ and SIDR_REQ the state test would give -EINVAL as well; the REQ
 * and SIDR_REQ carry bad_pkey_path, so their -EINVAL shows that the length
 * is tested before the path is resolved (-ENOENT).
 *
 * drep: the C CM copies the private data before it tests the length and
 * returns -EINVAL without freeing the copy (a leak in 6.12's cm.c). The
 * errno is still the one to match; the selftest lets kmemleak report
 * that copy on the C CM and nothing else.
 */
static const struct {
	const char *name;
	op_fn fn;
	u8 limit;
} long_ops[] = {
	{ "req_private_data_too_long", op_req, IB_CM_REQ_PRIVATE_DATA_SIZE },
	{ "rep_private_data_too_long", op_rep, IB_CM_REP_PRIVATE_DATA_SIZE },
	{ "rtu_private_data_too_long", op_rtu, IB_CM_RTU_PRIVATE_DATA_SIZE },
	{ "dreq_private_data_too_long", op_dreq,
	  IB_CM_DREQ_PRIVATE_DATA_SIZE },
	{ "drep_private_data_too_long", op_drep,
	  IB_CM_DREP_PRIVATE_DATA_SIZE },
	{ "rej_private_data_too_long", op_rej, IB_CM_REJ_PRIVATE_DATA_SIZE },
	{ "rej_ari_too_long", op_rej_ari, IB_CM_REJ_ARI_LENGTH },
	{ "mra_private_data_too_long", op_mra, IB_CM_MRA_PRIVATE_DATA_SIZE },
	{ "sidr_req_private_data_too_long", op_sidr_req,
	  IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE },
	{ "sidr_rep_private_data_too_long", op_sidr_rep,
	  IB_CM_SIDR_REP_PRIVATE_DATA_SIZE },
	{ "sidr_rep_info_too_long", op_sidr_rep_info,
	  IB_CM_SIDR_REP_INFO_LENGTH },
};

/* ---- checks that need their own setup ---- */

static void chk_create_cm_id(const char *name)
{
	struct ib_cm_id *id = new_id(handler_a, &a_context);

	if (IS_ERR_OR_NULL(id)) {
		check_fail(name, "got %ld, expected an id", PTR_ERR(id));
		return;
	}
	if (id->device != device || id->cm_handler != handler_a ||
	    id->context != &a_context)
		check_fail(name,
			   "got another device, handler or context, expected the given ones");
	else if (id->state != IB_CM_IDLE || id->remote_cm_qpn != 1)
		check_fail(name,
			   "got state %d, remote CM QPN %u, expected state %d, remote CM QPN 1",
			   id->state, id->remote_cm_qpn, IB_CM_IDLE);
	else
		check_pass(name);
}

static void chk_distinct_local_ids(const char *name)
{
	struct ib_cm_id *a, *b;

	a = idle_id(name);
	if (!a)
		return;
	b = idle_id(name);
	if (!b)
		return;
	if (a->local_id == b->local_id)
		check_fail(name, "got local id %#x twice, expected two",
			   be32_to_cpu(a->local_id));
	else
		check_pass(name);
}

/* ib_send_cm_req on a fresh IDLE id. */
static void expect_req(const char *name, struct ib_cm_req_param *p, int want)
{
	struct ib_cm_id *id = idle_id(name);

	if (id)
		expect_err(name, ib_send_cm_req(id, p), want);
}

static void chk_req_no_primary_path(const char *name)
{
	struct ib_cm_req_param p;

	fill_req(&p, &bad_pkey_path, SHORT_LEN);
	p.primary_path = NULL;
	expect_req(name, &p, -EINVAL);
}

static void chk_req_qp_type_ud(const char *name)
{
	struct ib_cm_req_param p;

	fill_req(&p, &bad_pkey_path, SHORT_LEN);
	p.qp_type = IB_QPT_UD;
	expect_req(name, &p, -EINVAL);
}

/* Only the initiator's XRC QP connects with a REQ. */
static void chk_req_qp_type_xrc_tgt(const char *name)
{
	struct ib_cm_req_param p;

	fill_req(&p, &bad_pkey_path, SHORT_LEN);
	p.qp_type = IB_QPT_XRC_TGT;
	expect_req(name, &p, -EINVAL);
}

static void chk_req_alt_path_pkey_differs(const char *name)
{
	struct ib_cm_req_param p;

	fill_req(&p, &bad_pkey_path, SHORT_LEN);
	p.alternate_path = &path;
	expect_req(name, &p, -EINVAL);
}

static void chk_req_alt_path_mtu_differs(const char *name)
{
	struct ib_cm_req_param p;
	struct sa_path_rec alt = bad_pkey_path;

	alt.mtu = IB_MTU_256;
	fill_req(&p, &bad_pkey_path, SHORT_LEN);
	p.alternate_path = &alt;
	expect_req(name, &p, -EINVAL);
}

/*
 * A valid REQ whose path names a P_Key the port lacks: the P_Key lookup's
 * -ENOENT comes through. (The C CM leaves the id IDLE but keeps state
 * that makes a second REQ on it WARN; the id is destroyed right away.)
 */
static void chk_req_unknown_pkey(const char *name)
{
	struct ib_cm_req_param p;

	fill_req(&p, &bad_pkey_path, SHORT_LEN);
	expect_req(name, &p, -ENOENT);
}

/* A source GID no device has (2001:db8::1), no GID entry given. */
static void chk_req_unknown_sgid(const char *name)
{
	static const u8 nowhere[16] = {
		0x20, 0x01, 0x0d, 0xb8, [15] = 0x01,
	};
	struct ib_cm_req_param p;
	struct sa_path_rec rec = path;

	memcpy(rec.sgid.raw, nowhere, sizeof(nowhere));
	fill_req(&p, &rec, SHORT_LEN);
	p.ppath_sgid_attr = NULL;
	expect_req(name, &p, -EINVAL);
}

/* The state is tested before the path is resolved: -EINVAL, not -ENOENT. */
static void chk_req_on_listener(const char *name)
{
	struct ib_cm_req_param p;
	struct ib_cm_id *l = listener(name, handler_a, NULL, SID(10));

	if (!l)
		return;
	fill_req(&p, &bad_pkey_path, SHORT_LEN);
	expect_err(name, ib_send_cm_req(l, &p), -EINVAL);
}

static void chk_sidr_req_no_path(const char *name)
{
	struct ib_cm_id *id = idle_id(name);

	if (id)
		expect_err(name, sidr_req(id, NULL, SID_NOBODY, SHORT_LEN),
			   -EINVAL);
}

static void chk_sidr_req_unknown_pkey(const char *name)
{
	struct ib_cm_id *id = idle_id(name);

	if (id)
		expect_err(name,
			   sidr_req(id, &bad_pkey_path, SID_NOBODY, SHORT_LEN),
			   -ENOENT);
}

/*
 * Surprising, but the C CM's behaviour: a SIDR_REQ resolves its path and
 * stores the result (and the request's service id) in the id before it
 * tests the id's state. The path here resolves, so the state test
 * answers; the service id is the listener's own, which keeps the listen
 * table intact.
 */
static void chk_sidr_req_on_listener(const char *name)
{
	struct ib_cm_id *l = listener(name, handler_a, NULL, SID(10));

	if (l)
		expect_err(name, sidr_req(l, &path, SID(10), SHORT_LEN),
			   -EINVAL);
}

/* For the same reason a listener gets the path's -ENOENT, not -EINVAL. */
static void chk_sidr_req_on_listener_unknown_pkey(const char *name)
{
	struct ib_cm_id *l = listener(name, handler_a, NULL, SID(10));

	if (l)
		expect_err(name,
			   sidr_req(l, &bad_pkey_path, SID(10), SHORT_LEN),
			   -ENOENT);
}

static void chk_notify_bad_event(const char *name)
{
	struct ib_cm_id *id = idle_id(name);

	if (id)
		expect_err(name, ib_cm_notify(id, IB_EVENT_QP_FATAL), -EINVAL);
}

static void chk_listen(const char *name)
{
	struct ib_cm_id *id = idle_id(name);
	int ret;

	if (!id)
		return;
	ret = ib_cm_listen(id, SID(1));
	if (ret)
		check_fail(name, "got %d, expected 0", ret);
	else if (id->state != IB_CM_LISTEN || id->service_id != SID(1))
		check_fail(name,
			   "got state %d, service id %#llx, expected state %d, service id %#llx",
			   id->state, be64_to_cpu(id->service_id),
			   IB_CM_LISTEN, be64_to_cpu(SID(1)));
	else
		check_pass(name);
}

/* Not -EBUSY: an id that listens is no longer IDLE. */
static void chk_listen_twice_same_id(const char *name)
{
	struct ib_cm_id *l = listener(name, handler_a, NULL, SID(1));

	if (l)
		expect_err(name, ib_cm_listen(l, SID(1)), -EINVAL);
}

/* ib_cm_listen never shares, not even with the same handler. */
static void chk_listen_busy(const char *name)
{
	struct ib_cm_id *id;

	if (!listener(name, handler_a, NULL, SID(1)))
		return;
	id = idle_id(name);
	if (id)
		expect_err(name, ib_cm_listen(id, SID(1)), -EBUSY);
}

static void chk_listen_reserved_service_id(const char *name)
{
	struct ib_cm_id *id = idle_id(name);

	if (id)
		expect_err(name, ib_cm_listen(id, SID_RESERVED), -EINVAL);
}

/*
 * IB_CM_ASSIGN_SERVICE_ID has the CM pick a service id from the reserved
 * range. (The C CM's first pick is IB_CM_ASSIGN_SERVICE_ID's own value.)
 */
static void chk_listen_assign_service_id(const char *name)
{
	struct ib_cm_id *id = idle_id(name);
	int ret;

	if (!id)
		return;
	ret = ib_cm_listen(id, IB_CM_ASSIGN_SERVICE_ID);
	if (ret)
		check_fail(name, "got %d, expected 0", ret);
	else if ((id->service_id & IB_SERVICE_ID_AGN_MASK) !=
		 IB_CM_ASSIGN_SERVICE_ID)
		check_fail(name,
			   "got service id %#llx, expected one in %#llx's range",
			   be64_to_cpu(id->service_id),
			   be64_to_cpu(IB_CM_ASSIGN_SERVICE_ID));
	else
		check_pass(name);
}

static void chk_listen_on_insert_listen_sid(const char *name)
{
	struct ib_cm_id *id;

	if (!inserted(name, handler_a, SID(2)))
		return;
	id = idle_id(name);
	if (id)
		expect_err(name, ib_cm_listen(id, SID(2)), -EBUSY);
}

static void chk_insert_listen(const char *name)
{
	struct ib_cm_id *id = insert_listen(handler_a, SID(2));

	if (IS_ERR_OR_NULL(id))
		check_fail(name, "got %ld, expected an id", PTR_ERR(id));
	else if (id->device != device || id->cm_handler != handler_a ||
		 id->context)
		check_fail(name,
			   "got another device, handler or context, expected the given ones and no context");
	else if (id->state != IB_CM_LISTEN || id->service_id != SID(2))
		check_fail(name,
			   "got state %d, service id %#llx, expected state %d, service id %#llx",
			   id->state, be64_to_cpu(id->service_id),
			   IB_CM_LISTEN, be64_to_cpu(SID(2)));
	else
		check_pass(name);
}

/* `got` must be the listener `first` again (a share of it). */
static void expect_same(const char *name, struct ib_cm_id *got,
			struct ib_cm_id *first)
{
	if (IS_ERR_OR_NULL(got))
		check_fail(name, "got %ld, expected the first listener",
			   PTR_ERR(got));
	else if (got != first)
		check_fail(name, "got another id, expected the first listener");
	else
		check_pass(name);
}

static void chk_insert_listen_same_handler(const char *name)
{
	struct ib_cm_id *first = inserted(name, handler_a, SID(2));

	if (first)
		expect_same(name, insert_listen(handler_a, SID(2)), first);
}

/* Surprising next to ib_cm_listen's -EBUSY, but the C CM's errno. */
static void chk_insert_listen_other_handler(const char *name)
{
	if (inserted(name, handler_a, SID(2)))
		expect_err_ptr(name, insert_listen(handler_b, SID(2)), -EINVAL);
}

static void chk_insert_listen_reserved_service_id(const char *name)
{
	expect_err_ptr(name, insert_listen(handler_a, SID_RESERVED), -EINVAL);
}

/* A listener from ib_cm_listen with no context is shared too. */
static void chk_insert_listen_shares_listen(const char *name)
{
	struct ib_cm_id *l = listener(name, handler_a, NULL, SID(3));

	if (l)
		expect_same(name, insert_listen(handler_a, SID(3)), l);
}

/* ...but not one with a context. */
static void chk_insert_listen_listener_has_context(const char *name)
{
	if (listener(name, handler_a, &a_context, SID(3)))
		expect_err_ptr(name, insert_listen(handler_a, SID(3)), -EINVAL);
}

/* A listener shared twice, then destroyed `puts` times. */
static bool shared_then_put(const char *name, int puts)
{
	struct ib_cm_id *l = inserted(name, handler_a, SID(4));
	struct ib_cm_id *s;

	if (!l)
		return false;
	s = insert_listen(handler_a, SID(4));
	if (IS_ERR_OR_NULL(s)) {
		setup_failed(name, "a second ib_cm_insert_listen", PTR_ERR(s));
		return false;
	}
	if (s != l) {
		check_fail(name,
			   "got another id from a second ib_cm_insert_listen (setting up), expected the first");
		return false;
	}
	while (puts--)
		put_ref(l);
	return true;
}

/* One destroy per share: after the first the service id is still held... */
static void chk_shared_listener_kept_after_one_destroy(const char *name)
{
	struct ib_cm_id *id;

	if (!shared_then_put(name, 1))
		return;
	id = idle_id(name);
	if (id)
		expect_err(name, ib_cm_listen(id, SID(4)), -EBUSY);
}

/* ...and after the second it is free. */
static void chk_shared_listener_gone_after_last_destroy(const char *name)
{
	struct ib_cm_id *id;

	if (!shared_then_put(name, 2))
		return;
	id = idle_id(name);
	if (id)
		expect_err(name, ib_cm_listen(id, SID(4)), 0);
}

static const struct {
	const char *name;
	void (*fn)(const char *name);
} custom_checks[] = {
	{ "create_cm_id", chk_create_cm_id },
	{ "create_cm_id_distinct_local_ids", chk_distinct_local_ids },
	{ "req_no_primary_path", chk_req_no_primary_path },
	{ "req_qp_type_ud", chk_req_qp_type_ud },
	{ "req_qp_type_xrc_tgt", chk_req_qp_type_xrc_tgt },
	{ "req_alt_path_pkey_differs", chk_req_alt_path_pkey_differs },
	{ "req_alt_path_mtu_differs", chk_req_alt_path_mtu_differs },
	{ "req_unknown_pkey", chk_req_unknown_pkey },
	{ "req_unknown_sgid", chk_req_unknown_sgid },
	{ "req_on_listener", chk_req_on_listener },
	{ "sidr_req_no_path", chk_sidr_req_no_path },
	{ "sidr_req_unknown_pkey", chk_sidr_req_unknown_pkey },
	{ "sidr_req_on_listener", chk_sidr_req_on_listener },
	{ "sidr_req_on_listener_unknown_pkey",
	  chk_sidr_req_on_listener_unknown_pkey },
	{ "notify_bad_event", chk_notify_bad_event },
	{ "listen", chk_listen },
	{ "listen_twice_same_id", chk_listen_twice_same_id },
	{ "listen_busy", chk_listen_busy },
	{ "listen_reserved_service_id", chk_listen_reserved_service_id },
	{ "listen_assign_service_id", chk_listen_assign_service_id },
	{ "listen_on_insert_listen_sid", chk_listen_on_insert_listen_sid },
	{ "insert_listen", chk_insert_listen },
	{ "insert_listen_same_handler", chk_insert_listen_same_handler },
	{ "insert_listen_other_handler", chk_insert_listen_other_handler },
	{ "insert_listen_reserved_service_id",
	  chk_insert_listen_reserved_service_id },
	{ "insert_listen_shares_listen", chk_insert_listen_shares_listen },
	{ "insert_listen_listener_has_context",
	  chk_insert_listen_listener_has_context },
	{ "shared_listener_kept_after_one_destroy",
	  chk_shared_listener_kept_after_one_destroy },
	{ "shared_listener_gone_after_last_destroy",
	  chk_shared_listener_gone_after_last_destroy },
};

/* QP states ib_cm_init_qp_attr has nothing for, on a fresh IDLE id. */
static const struct {
	const char *name;
	enum ib_qp_state state;
} bad_qp_states[] = {
	{ "init_qp_attr_reset", IB_QPS_RESET },
	{ "init_qp_attr_sqd", IB_QPS_SQD },
	{ "init_qp_attr_err", IB_QPS_ERR },
};

/* ibcm_reject_msg: the text of a reason, or the text for none. */
static const struct {
	const char *name;
	int reason;
	const char *text;
} reject_msgs[] = {
	{ "reject_msg_no_qp", IB_CM_REJ_NO_QP, "no QP" },
	{ "reject_msg_consumer_defined", IB_CM_REJ_CONSUMER_DEFINED,
	  "consumer defined" },
	{ "reject_msg_vendor_option", IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED,
	  "vendor option is not supported" },
	{ "reject_msg_0", 0, "unrecognized reason" },
	{ "reject_msg_34", 34, "unrecognized reason" },	/* no reason 34 */
	{ "reject_msg_36", 36, "unrecognized reason" },
	{ "reject_msg_negative", -1, "unrecognized reason" },
};

/* ---- running them ---- */

static void run_all(void)
{
	struct ib_cm_id *id;
	char name[64];
	int i, before;

	for (i = 0; i < ARRAY_SIZE(custom_checks); i++) {
		before = checks;
		custom_checks[i].fn(custom_checks[i].name);
		if (checks == before)
			check_fail(custom_checks[i].name,
				   "got no result, expected one");
		put_all();
	}

	for (i = 0; i < ARRAY_SIZE(state_ops); i++) {
		snprintf(name, sizeof(name), "%s_on_idle", state_ops[i].name);
		id = idle_id(name);
		if (id)
			expect_err(name, state_ops[i].fn(id, SHORT_LEN),
				   -EINVAL);
		put_all();
	}

	for (i = 0; i < ARRAY_SIZE(state_ops); i++) {
		snprintf(name, sizeof(name), "%s_on_listener",
			 state_ops[i].name);
		id = listener(name, handler_a, NULL, SID(10));
		if (id)
			expect_err(name, state_ops[i].fn(id, SHORT_LEN),
				   -EINVAL);
		put_all();
	}

	for (i = 0; i < ARRAY_SIZE(long_ops); i++) {
		id = idle_id(long_ops[i].name);
		if (id)
			expect_err(long_ops[i].name,
				   long_ops[i].fn(id, long_ops[i].limit + 1),
				   -EINVAL);
		put_all();
	}

	for (i = 0; i < ARRAY_SIZE(bad_qp_states); i++) {
		id = idle_id(bad_qp_states[i].name);
		if (id)
			expect_err(bad_qp_states[i].name,
				   init_qp_attr(id, bad_qp_states[i].state),
				   -EINVAL);
		put_all();
	}

	for (i = 0; i < ARRAY_SIZE(reject_msgs); i++) {
		const char *got = ibcm_reject_msg(reject_msgs[i].reason);

		if (got && !strcmp(got, reject_msgs[i].text))
			check_pass(reject_msgs[i].name);
		else
			check_fail(reject_msgs[i].name,
				   "got \"%s\", expected \"%s\"",
				   got ?: "(null)", reject_msgs[i].text);
	}
}

/* The loop path, and the same with a P_Key the port lacks. */
static int find_path(void)
{
	int ret = rcm_test_loop_path(device, SID_NOBODY, &sgid_attr, &path);

	bad_pkey_path = path;
	bad_pkey_path.pkey = cpu_to_be16(BAD_PKEY);
	return ret;
}

static int __init errno_init(void)
{
	int ret;

	device = ib_device_get_by_name(ibdev, RDMA_DRIVER_UNKNOWN);
	if (!device) {
		pr_warn("no RDMA device %s\n", ibdev);
		return -ENODEV;
	}
	ret = find_path();
	if (ret) {
		pr_warn("%s port 1: no RoCE v2 GID (%d)\n", ibdev, ret);
		goto out;
	}

	run_all();
	put_all();
	if (atomic_read(&events))
		pr_warn("%d unexpected events\n", atomic_read(&events));
	pr_info("%d checks, %d failed\n", checks, failed);
	ret = failed ? -EIO : 0;
out:
	if (sgid_attr)
		rdma_put_gid_attr(sgid_attr);
	sgid_attr = NULL;
	ib_device_put(device);
	device = NULL;
	return ret;
}

static void __exit errno_exit(void)
{
}

module_init(errno_init);
module_exit(errno_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rcm sample: the errnos of the ib_cm exports on misuse");
