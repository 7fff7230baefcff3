// SPDX-License-Identifier: GPL-2.0
/*
 * Every /dev/infiniband/rdma_cm command, written raw (no librdmacm), on one
 * guest: connections to the guest's own address over its RoCE device, two
 * open files. The expected answers are 6.12's; the test runs this program
 * against the in-tree rdma_ucm first (the reference) and then against rcm's
 * device, so a check that is wrong about 6.12 fails on the reference.
 *
 * Covered: legacy commands (BIND_IP, RESOLVE_IP, QUERY_ROUTE,
 * JOIN_IP_MCAST) and the AF_IB-era ones (BIND, RESOLVE_ADDR, QUERY
 * ADDR/GID/PATH, JOIN_MCAST), CONNECT and ACCEPT without QPs (a QP number
 * in the parameters), the RTU by an ACCEPT without parameters, REJECT with
 * private data, DISCONNECT, INIT_QP_ATTR, NOTIFY, every SET_OPTION id
 * option, SET_OPTION IB_PATH with a connection over the path, MIGRATE_ID with an undelivered event, LEAVE_MCAST, and the
 * events_reported each teardown answers; ids of another file, unknown
 * ids and unknown options.
 *
 *   rcm_ucma_cmds <this guest's IPv4 address>
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>
#include "rcm_ucma_raw.h"

/* enum rdma_cm_event_type */
enum {
	EV_ADDR_RESOLVED = 0,
	EV_ROUTE_RESOLVED = 2,
	EV_CONNECT_REQUEST = 4,
	EV_CONNECT_RESPONSE = 5,
	EV_REJECTED = 8,
	EV_ESTABLISHED = 9,
	EV_DISCONNECTED = 10,
	EV_MULTICAST_JOIN = 12,
	EV_TIMEWAIT_EXIT = 15,
};

#define PS_TCP 0x106
#define PS_UDP 0x111
#define NO_SUCH_ID 0xfffff
/* expect(): a request names a new id, not known in advance. */
#define ANY_ID 0xffffffff

static int failures;
static struct sockaddr_in self;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

static __u32 create_id(int fd, __u16 ps, __u64 uid)
{
	struct rdma_ucm_create_id_resp resp = { .id = NO_SUCH_ID };
	struct rdma_ucm_create_id c = { .uid = uid, .response = ptr(&resp), .ps = ps };
	int e = command(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(resp));

	check(!e, "CREATE_ID");
	return resp.id;
}

/* DESTROY_ID: errno; *reported the events it reported. */
static int destroy_id(int fd, __u32 id, __u32 *reported)
{
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	struct rdma_ucm_destroy_id d = { .response = ptr(&resp), .id = id };
	int e = command(fd, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(resp));

	if (reported)
		*reported = resp.events_reported;
	return e;
}

static struct sockaddr_in at_port(__u16 port)
{
	struct sockaddr_in a = self;

	a.sin_port = htons(port);
	return a;
}

static int bind_ip(int fd, __u32 id, struct sockaddr_in a)
{
	struct rdma_ucm_bind_ip b = { .id = id };

	memcpy(&b.addr, &a, sizeof(a));
	return command(fd, RDMA_USER_CM_CMD_BIND_IP, &b, sizeof(b), 0);
}

static int bind_addr(int fd, __u32 id, struct sockaddr_in a)
{
	struct rdma_ucm_bind b = { .id = id, .addr_size = sizeof(a) };

	memcpy(&b.addr, &a, sizeof(a));
	return command(fd, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0);
}

static int resolve_ip(int fd, __u32 id, struct sockaddr_in dst)
{
	struct rdma_ucm_resolve_ip r = { .id = id, .timeout_ms = 2000 };

	memcpy(&r.dst_addr, &dst, sizeof(dst));
	return command(fd, RDMA_USER_CM_CMD_RESOLVE_IP, &r, sizeof(r), 0);
}

static int resolve_addr(int fd, __u32 id, struct sockaddr_in dst)
{
	struct rdma_ucm_resolve_addr r = {
		.id = id, .timeout_ms = 2000, .dst_size = sizeof(dst),
	};

	memcpy(&r.dst_addr, &dst, sizeof(dst));
	return command(fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &r, sizeof(r), 0);
}

static int resolve_route(int fd, __u32 id)
{
	struct rdma_ucm_resolve_route r = { .id = id, .timeout_ms = 2000 };

	return command(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &r, sizeof(r), 0);
}

static int query(int fd, __u32 id, __u32 option, void *out, __u16 out_len)
{
	struct rdma_ucm_query q = { .response = ptr(out), .id = id, .option = option };

	return command(fd, RDMA_USER_CM_CMD_QUERY, &q, sizeof(q), out_len);
}

static int query_route(int fd, __u32 id, struct rdma_ucm_query_route_resp *out)
{
	struct rdma_ucm_query q = { .response = ptr(out), .id = id };

	return command(fd, RDMA_USER_CM_CMD_QUERY_ROUTE, &q, sizeof(q), sizeof(*out));
}

static void conn_param(struct rdma_ucm_conn_param *p, __u32 qp_num)
{
	memset(p, 0, sizeof(*p));
	p->qp_num = qp_num;
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->valid = 1;
}

static int connect_id(int fd, __u32 id, __u32 qp_num)
{
	struct rdma_ucm_connect c = { .id = id };

	conn_param(&c.conn_param, qp_num);
	return command(fd, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), 0);
}

static int listen_id(int fd, __u32 id, __u32 backlog)
{
	struct rdma_ucm_listen l = { .id = id, .backlog = backlog };

	return command(fd, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0);
}

/* ACCEPT; qp_num 0: no parameters (an active id confirming the reply). */
static int accept_id(int fd, __u32 id, __u64 uid, __u32 qp_num)
{
	struct rdma_ucm_accept a = { .uid = uid, .id = id };

	if (qp_num)
		conn_param(&a.conn_param, qp_num);
	return command(fd, RDMA_USER_CM_CMD_ACCEPT, &a, sizeof(a), 0);
}

static int set_option(int fd, __u32 id, __u32 level, __u32 name, void *val,
		      __u32 len)
{
	struct rdma_ucm_set_option o = {
		.optval = ptr(val), .id = id, .level = level, .optname = name,
		.optlen = len,
	};

	return command(fd, RDMA_USER_CM_CMD_SET_OPTION, &o, sizeof(o), 0);
}

static int simple(int fd, __u32 cmd, __u32 id)
{
	struct rdma_ucm_disconnect d = { .id = id };

	return command(fd, cmd, &d, sizeof(d), 0);
}

/* The next event of `fd` within 5 s: 0, or ETIMEDOUT, or the errno. */
static int next_event(int fd, struct rdma_ucm_event_resp *ev, int ms)
{
	struct rdma_ucm_get_event g = { .response = ptr(ev) };
	struct pollfd p = { .fd = fd, .events = POLLIN };

	memset(ev, 0, sizeof(*ev));
	if (poll(&p, 1, ms) != 1)
		return ETIMEDOUT;
	return command(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(*ev));
}

/* Expects event `want` for id `id` next on `fd`; returns the record. */
static struct rdma_ucm_event_resp expect(int fd, __u32 want, __u32 id,
					 const char *what)
{
	struct rdma_ucm_event_resp ev;
	char line[200];
	int e = next_event(fd, &ev, 5000);

	snprintf(line, sizeof(line), "%s: event %u for id %u (got %s, event %u, id %u, status %d)",
		 what, want, id, e ? strerror(e) : "one", ev.event, ev.id, ev.status);
	check(!e && ev.event == want && (id == ANY_ID || ev.id == id), line);
	return ev;
}

static void expect_errno(int got, int want, const char *what)
{
	char line[200];

	snprintf(line, sizeof(line), "%s: %s (got %s)", what,
		 want ? strerror(want) : "success", got ? strerror(got) : "success");
	check(got == want, line);
}

/* An active id resolved to the listener at `port`: ADDR and ROUTE events. */
static __u32 resolved_client(int fd, __u64 uid, __u16 port, int legacy)
{
	__u32 id = create_id(fd, PS_TCP, uid);

	expect_errno(legacy ? resolve_ip(fd, id, at_port(port)) :
			      resolve_addr(fd, id, at_port(port)), 0,
		     legacy ? "RESOLVE_IP" : "RESOLVE_ADDR");
	expect(fd, EV_ADDR_RESOLVED, id, "address resolved");
	expect_errno(resolve_route(fd, id), 0, "RESOLVE_ROUTE");
	expect(fd, EV_ROUTE_RESOLVED, id, "route resolved");
	return id;
}

static void options_and_errors(int a, int b)
{
	__u32 id = create_id(a, PS_TCP, 0x10), reported = 99;
	__u8 tos = 32, ack = 14;
	int on = 1;

	expect_errno(destroy_id(b, id, NULL), EINVAL, "DESTROY_ID of another file's id");
	expect_errno(destroy_id(a, NO_SUCH_ID, NULL), ENOENT, "DESTROY_ID of an unknown id");
	expect_errno(set_option(a, id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), 0,
		     "SET_OPTION TOS");
	expect_errno(set_option(a, id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &on, 4), EINVAL,
		     "SET_OPTION TOS with 4 bytes");
	expect_errno(set_option(a, id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &on, 4), 0,
		     "SET_OPTION REUSEADDR");
	expect_errno(set_option(a, id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on, 4), 0,
		     "SET_OPTION AFONLY");
	expect_errno(set_option(a, id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, 1), 0,
		     "SET_OPTION ACK_TIMEOUT");
	expect_errno(set_option(a, id, RDMA_OPTION_ID, 99, &on, 4), ENOSYS,
		     "SET_OPTION unknown option");
	expect_errno(set_option(a, id, 7, 0, &on, 4), ENOSYS, "SET_OPTION unknown level");
	expect_errno(set_option(a, NO_SUCH_ID, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1),
		     ENOENT, "SET_OPTION on an unknown id");
	expect_errno(simple(a, RDMA_USER_CM_CMD_DISCONNECT, id), EINVAL,
		     "DISCONNECT of an id without a device");
	expect_errno(resolve_route(a, id), EINVAL, "RESOLVE_ROUTE of an id without a device");
	expect_errno(destroy_id(a, id, &reported), 0, "DESTROY_ID");
	check(reported == 0, "a fresh id reported no event");
	expect_errno(destroy_id(a, id, NULL), ENOENT, "DESTROY_ID twice");
}

int main(int argc, char **argv)
{
	struct rdma_ucm_query_route_resp route;
	struct rdma_ucm_query_addr_resp addr;
	struct {
		struct rdma_ucm_query_path_resp h;
		struct ib_path_rec_data p[2];
	} paths;
	struct ib_uverbs_qp_attr qp;
	struct rdma_ucm_init_qp_attr init = { .response = ptr(&qp), .qp_state = 1 };
	struct rdma_ucm_migrate_resp moved = { .events_reported = 99 };
	struct rdma_ucm_migrate_id migrate = { .response = ptr(&moved) };
	struct rdma_ucm_reject reject = { .private_data_len = 4 };
	struct rdma_ucm_notify notify = { .event = 4 };
	struct rdma_ucm_event_resp ev;
	__u32 listener, client, served, refused, pathed, mc, mc2, udp, reported = 99;
	__u16 port = 7799;
	int a, b;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &self.sin_addr) != 1) {
		fprintf(stderr, "usage: %s <this guest's IPv4 address>\n", argv[0]);
		return 2;
	}
	self.sin_family = AF_INET;
	a = open("/dev/infiniband/rdma_cm", O_RDWR);
	b = open("/dev/infiniband/rdma_cm", O_RDWR);
	check(a >= 0 && b >= 0, "two files open");
	if (a < 0 || b < 0)
		return 1;

	options_and_errors(a, b);

	/* A listener (legacy bind) and its route answer. */
	listener = create_id(a, PS_TCP, 0x100);
	expect_errno(bind_ip(a, listener, at_port(port)), 0, "BIND_IP");
	expect_errno(query_route(a, listener, &route), 0, "QUERY_ROUTE");
	check(route.port_num == 1 && route.node_guid != 0 &&
	      ((struct sockaddr_in *)&route.src_addr)->sin_port == htons(port),
	      "QUERY_ROUTE: device, port 1 and the bound address");
	notify.id = listener;
	expect_errno(command(a, RDMA_USER_CM_CMD_NOTIFY, &notify, sizeof(notify), 0), EINVAL,
		     "NOTIFY on an id with no connection");
	expect_errno(listen_id(a, listener, 4), 0, "LISTEN");

	/* A connection without QPs; the active id moves to file b while its
	 * reply is undelivered. */
	client = resolved_client(a, 0x200, port, 1);
	expect_errno(query(a, client, RDMA_USER_CM_QUERY_PATH, &paths, sizeof(paths)), 0,
		     "QUERY PATH");
	check(paths.h.num_paths == 1, "QUERY PATH: one path");
	expect_errno(command(a, RDMA_USER_CM_CMD_INIT_QP_ATTR, &(struct rdma_ucm_init_qp_attr){
				     .response = ptr(&qp), .id = client, .qp_state = 9 },
			     sizeof(init), sizeof(qp)), EINVAL, "INIT_QP_ATTR for state 9");
	init.id = client;
	expect_errno(command(a, RDMA_USER_CM_CMD_INIT_QP_ATTR, &init, sizeof(init), sizeof(qp)),
		     0, "INIT_QP_ATTR INIT");
	check((qp.qp_attr_mask & 0x39) == 0x39 && qp.port_num == 1,
	      "INIT_QP_ATTR INIT: state, P_Key index, port and access flags; port 1");
	expect_errno(connect_id(a, client, 0x1234), 0, "CONNECT (QP number 0x1234)");
	ev = expect(a, EV_CONNECT_REQUEST, ANY_ID, "the listener hears a request");
	served = ev.id;
	check(ev.uid == 0x100 && served != listener && served != client,
	      "the request names a new id, with the listener's uid");
	check(ev.param.conn.qp_num == 0x1234, "the request carries the QP number");
	expect_errno(accept_id(a, served, 0x300, 0x5678), 0, "ACCEPT (QP number 0x5678)");
	migrate.id = client;
	migrate.fd = a;
	expect_errno(command(b, RDMA_USER_CM_CMD_MIGRATE_ID, &migrate, sizeof(migrate),
			     sizeof(moved)), 0, "MIGRATE_ID to the other file");
	check(moved.events_reported == 2, "MIGRATE_ID answers the 2 events reported");
	expect(b, EV_CONNECT_RESPONSE, client, "the reply moved with the id");
	expect_errno(accept_id(b, client, 0, 0), 0, "ACCEPT without parameters (RTU)");
	ev = expect(a, EV_ESTABLISHED, served, "the passive side is established");
	check(ev.uid == 0x300, "with the uid its ACCEPT gave");
	expect_errno(query(a, served, RDMA_USER_CM_QUERY_ADDR, &addr, sizeof(addr)), 0,
		     "QUERY ADDR");
	check(addr.src_size == sizeof(struct sockaddr_in) && addr.port_num == 1 &&
	      ((struct sockaddr_in *)&addr.src_addr)->sin_port == htons(port),
	      "QUERY ADDR: the listener's address, port 1");
	expect_errno(query(a, served, RDMA_USER_CM_QUERY_GID, &addr, sizeof(addr)), 0,
		     "QUERY GID");
	check(addr.src_addr.ss_family == 27 && addr.src_size == 48, "QUERY GID: AF_IB addresses");
	expect_errno(query(a, served, 7, &addr, sizeof(addr)), ENOSYS, "QUERY option 7");
	expect_errno(query(a, served, RDMA_USER_CM_QUERY_ADDR, &addr, 100), ENOSPC,
		     "QUERY ADDR into 100 bytes");
	notify.id = served;
	expect_errno(command(a, RDMA_USER_CM_CMD_NOTIFY, &notify, sizeof(notify), 0), EISCONN,
		     "NOTIFY COMM_EST on an established id");
	/* The DREQ, then the passive side's own DISCONNECT sends the DREP. */
	expect_errno(simple(b, RDMA_USER_CM_CMD_DISCONNECT, client), 0, "DISCONNECT");
	expect(a, EV_DISCONNECTED, served, "the passive side is disconnected");
	expect_errno(simple(a, RDMA_USER_CM_CMD_DISCONNECT, served), 0,
		     "DISCONNECT on the passive side");
	expect(b, EV_DISCONNECTED, client, "the active side is disconnected");
	/* Awaited here: its time is the CM's, so later it could come
	 * between any two of the other ids' events. */
	expect(a, EV_TIMEWAIT_EXIT, served, "the passive side leaves TIMEWAIT");
	expect_errno(destroy_id(b, client, &reported), 0, "DESTROY_ID (active)");
	check(reported == 4, "it reported 4 events (2 in each file)");

	/* A request refused with private data. */
	refused = resolved_client(a, 0x400, port, 0);
	expect_errno(connect_id(a, refused, 0x2345), 0, "CONNECT");
	ev = expect(a, EV_CONNECT_REQUEST, ANY_ID, "the listener hears a second request");
	reject.id = ev.id;
	memcpy(reject.private_data, "nope", 4);
	expect_errno(command(a, RDMA_USER_CM_CMD_REJECT, &reject, sizeof(reject), 0), 0,
		     "REJECT with private data");
	ev = expect(a, EV_REJECTED, refused, "the active side is rejected");
	check(ev.status == 28 && !memcmp(ev.param.conn.private_data, "nope", 4),
	      "REJECTED: consumer reason 28 and the private data");
	expect_errno(destroy_id(a, reject.id, NULL), 0, "DESTROY_ID (refused request)");
	expect_errno(destroy_id(a, refused, NULL), 0, "DESTROY_ID (refused)");

	/* A path of the application's own (RDMA_OPTION_IB_PATH, as ibacm's
	 * users set it): the route is resolved at once, and a request over
	 * it reaches the listener (on RoCE the record gets the address's L2
	 * part, as 6.12 adds it). */
	pathed = create_id(a, PS_TCP, 0x480);
	expect_errno(resolve_addr(a, pathed, at_port(port)), 0, "RESOLVE_ADDR");
	expect(a, EV_ADDR_RESOLVED, pathed, "address resolved");
	expect_errno(set_option(a, pathed, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, paths.p,
				sizeof(paths.p[0])), 0, "SET_OPTION IB_PATH (QUERY PATH's record)");
	expect(a, EV_ROUTE_RESOLVED, pathed, "IB_PATH resolves the route");
	expect_errno(connect_id(a, pathed, 0x3456), 0, "CONNECT over the set path");
	ev = expect(a, EV_CONNECT_REQUEST, ANY_ID, "the listener hears the request");
	reject.id = ev.id;
	expect_errno(command(a, RDMA_USER_CM_CMD_REJECT, &reject, sizeof(reject), 0), 0,
		     "REJECT it");
	expect(a, EV_REJECTED, pathed, "the pathed id is rejected");
	expect_errno(destroy_id(a, reject.id, NULL), 0, "DESTROY_ID (its request)");
	expect_errno(destroy_id(a, pathed, NULL), 0, "DESTROY_ID (pathed)");

	/* Multicast: a legacy and a new-style join, one left, one destroyed. */
	udp = create_id(a, PS_UDP, 0x500);
	expect_errno(bind_addr(a, udp, at_port(0)), 0, "BIND");
	{
		struct rdma_ucm_create_id_resp r = { .id = NO_SUCH_ID };
		struct rdma_ucm_join_ip_mcast j = { .response = ptr(&r), .uid = 0x600, .id = udp };
		struct sockaddr_in g = { .sin_family = AF_INET };
		struct rdma_ucm_join_mcast j2 = {
			.uid = 0x700, .id = udp, .addr_size = sizeof(g),
			.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER,
		};
		struct rdma_ucm_destroy_id l = { .response = ptr(&reported) };

		inet_pton(AF_INET, "239.1.1.7", &g.sin_addr);
		memcpy(&j.addr, &g, sizeof(g));
		expect_errno(command(a, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), sizeof(r)),
			     0, "JOIN_IP_MCAST 239.1.1.7");
		mc = r.id;
		ev = expect(a, EV_MULTICAST_JOIN, mc, "joined");
		check(ev.uid == 0x600 && ev.param.ud.qp_num == 0xffffff,
		      "MULTICAST_JOIN: the join's uid, the group's QP number");
		inet_pton(AF_INET, "239.1.1.8", &g.sin_addr);
		memcpy(&j2.addr, &g, sizeof(g));
		j2.response = ptr(&r);
		expect_errno(command(a, RDMA_USER_CM_CMD_JOIN_MCAST, &j2, sizeof(j2), sizeof(r)),
			     0, "JOIN_MCAST 239.1.1.8");
		mc2 = r.id;
		expect(a, EV_MULTICAST_JOIN, mc2, "joined the second group");
		l.id = mc;
		expect_errno(command(b, RDMA_USER_CM_CMD_LEAVE_MCAST, &l, sizeof(l), 4), EINVAL,
			     "LEAVE_MCAST from another file");
		expect_errno(command(a, RDMA_USER_CM_CMD_LEAVE_MCAST, &l, sizeof(l), 4), 0,
			     "LEAVE_MCAST");
		check(reported == 1, "LEAVE_MCAST answers the 1 event reported");
		expect_errno(command(a, RDMA_USER_CM_CMD_LEAVE_MCAST, &l, sizeof(l), 4), ENOENT,
			     "LEAVE_MCAST twice");
	}
	expect_errno(destroy_id(a, udp, &reported), 0, "DESTROY_ID with a group joined");
	check(reported == 2, "it reported the 2 joins");

	/* The passive connection and the listener end with file a. */
	check(next_event(a, &ev, 0) == ETIMEDOUT, "nothing else is queued");
	close(b);
	close(a);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
