// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver: a kernel rdma_cm consumer that sets its id's CM response
 * timeout and retry count with rcm_set_cm_response() (resolved with
 * symbol_get(), as a consumer that also runs on the C CM would) and
 * connects, without a QP, to a peer that never answers.
 *
 *   insmod rcm_test_cm_response.ko peer=10.8.0.2 [mode=rc|ud] [port=N]
 *          cm_timeout=12 retries=2
 *
 * Before setting them it checks that values a REQ cannot carry (a timeout
 * above 31, more than 15 retries) are refused with -EINVAL. It logs
 *   cm_response: <event> status <n> after <ms> ms
 * for the first event after the connect, and fails the insmod unless that
 * event came (within the wait) and the checks held. Without rcm's symbol
 * it logs "rcm_set_cm_response: not exported" and fails with -ENOENT.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <rdma/rdma_cm.h>
#include <rdma/rcm_cm_response.h>

static char *peer = "";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "the silent peer's IPv4 address");
static char *mode = "rc";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "rc (a REQ) or ud (a SIDR_REQ)");
static int port = 7490;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "the port connected to");
static int cm_timeout = 20;
module_param(cm_timeout, int, 0444);
MODULE_PARM_DESC(cm_timeout, "the CM response timeout, an IBA time exponent");
static int retries = 15;
module_param(retries, int, 0444);
MODULE_PARM_DESC(retries, "how often the request is sent again");
static int wait_ms = 120000;
module_param(wait_ms, int, 0444);
MODULE_PARM_DESC(wait_ms, "how long to wait for the connect's event");

#define RESOLVE_MS 2000

struct client {
	struct completion event;
	enum rdma_cm_event_type type;
	int status;
};

static int handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct client *c = id->context;

	c->type = ev->event;
	c->status = ev->status;
	complete(&c->event);
	return 0;
}

/* Waits for the next event: 0 if it is @want with status 0. */
static int next_event(struct client *c, enum rdma_cm_event_type want,
		      int ms)
{
	if (!wait_for_completion_timeout(&c->event, msecs_to_jiffies(ms)))
		return -ETIMEDOUT;
	reinit_completion(&c->event);
	return c->type == want && !c->status ? 0 : -EIO;
}

/* Values no REQ carries are refused, the id unchanged. */
static int out_of_range_refused(typeof(&rcm_set_cm_response) set,
				struct rdma_cm_id *id)
{
	int a = set(id, 32, 0), b = set(id, 0, 16);

	if (a == -EINVAL && b == -EINVAL)
		return 0;
	pr_info("rcm_set_cm_response: (32, 0) gave %d, (0, 16) gave %d, not -EINVAL\n",
		a, b);
	return -EIO;
}

static int run(typeof(&rcm_set_cm_response) set, struct sockaddr_in *dst,
	       bool ud)
{
	struct rdma_conn_param p = { .responder_resources = 1,
				     .initiator_depth = 1, .retry_count = 7,
				     .qp_num = 0x123 };
	struct rdma_cm_id *id;
	struct client c;
	ktime_t start;
	int ret;

	init_completion(&c.event);
	id = rdma_create_id(&init_net, handler, &c,
			    ud ? RDMA_PS_UDP : RDMA_PS_TCP,
			    ud ? IB_QPT_UD : IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, RESOLVE_MS);
	ret = ret ?: next_event(&c, RDMA_CM_EVENT_ADDR_RESOLVED, 2 * RESOLVE_MS);
	ret = ret ?: rdma_resolve_route(id, RESOLVE_MS);
	ret = ret ?: next_event(&c, RDMA_CM_EVENT_ROUTE_RESOLVED, 2 * RESOLVE_MS);
	if (ret) {
		pr_info("cm_response: resolving %pI4 failed: %d\n",
			&dst->sin_addr, ret);
		goto out;
	}
	ret = out_of_range_refused(set, id);
	ret = ret ?: set(id, cm_timeout, retries);
	if (ret) {
		pr_info("cm_response: setting (%d, %d) failed: %d\n",
			cm_timeout, retries, ret);
		goto out;
	}
	start = ktime_get();
	ret = rdma_connect(id, &p);
	if (ret) {
		pr_info("cm_response: rdma_connect failed: %d\n", ret);
		goto out;
	}
	if (!wait_for_completion_timeout(&c.event, msecs_to_jiffies(wait_ms))) {
		pr_info("cm_response: no event within %d ms\n", wait_ms);
		ret = -ETIMEDOUT;
		goto out;
	}
	pr_info("cm_response: %s status %d after %lld ms\n",
		rdma_event_msg(c.type), c.status,
		ktime_ms_delta(ktime_get(), start));
out:
	rdma_destroy_id(id);
	return ret;
}

static int __init cm_response_init(void)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	typeof(&rcm_set_cm_response) set;
	int ret;

	if (!in4_pton(peer, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL) ||
	    (strcmp(mode, "rc") && strcmp(mode, "ud")))
		return -EINVAL;
	set = symbol_get(rcm_set_cm_response);
	if (!set) {
		pr_info("rcm_set_cm_response: not exported\n");
		return -ENOENT;
	}
	ret = run(set, &dst, !strcmp(mode, "ud"));
	symbol_put(rcm_set_cm_response);
	return ret;
}

static void __exit cm_response_exit(void)
{
}

module_init(cm_response_init);
module_exit(cm_response_exit);
MODULE_DESCRIPTION("rcm test: a consumer's own CM response timeout and retries");
MODULE_LICENSE("GPL");
