/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rcm_harden's subcommands share: checks that print "ok:" or "FAIL:",
 * a watchdog, and the /dev/infiniband/rdma_cm commands they write raw.
 */
#ifndef RCM_HARDEN_H
#define RCM_HARDEN_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>
#include "rcm_ucma_raw.h"

#define CM_DEV "/dev/infiniband/rdma_cm"
#define PS_TCP 0x106
#define PS_UDP 0x111
#define QPT_UD 4
#define EV_ADDR_RESOLVED 0
#define EV_DEVICE_REMOVAL 11
#define EV_MULTICAST_JOIN 12
#define EV_MAX 32
#define PAGE 4096

static atomic_int failures;

/* One line per check, written at once (threads share stdout). */
static void check(int ok, const char *fmt, ...)
{
	char line[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("%s: %s\n", ok ? "ok" : "FAIL", line);
	if (!ok)
		atomic_fetch_add(&failures, 1);
}

static const char *err_name(int e)
{
	const char *n = e ? strerrorname_np(e) : "success";

	return n ? n : "unknown errno";
}

static const char *event_names[EV_MAX] = {
	"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR",
	"CONNECT_REQUEST", "CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE",
	"REJECTED", "ESTABLISHED", "DISCONNECTED", "DEVICE_REMOVAL",
	"MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT",
};

static const char *event_name(unsigned int ev)
{
	return ev < EV_MAX && event_names[ev] ? event_names[ev] : "?";
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The last resort against a hang: the alarm ends the process. */
static char watchdog_line[120];
static int watchdog_len;

static void watchdog_fired(int sig)
{
	(void)sig;
	(void)!write(STDOUT_FILENO, watchdog_line, watchdog_len);
	_exit(3);
}

static void watchdog(const char *what, unsigned int seconds)
{
	watchdog_len = snprintf(watchdog_line, sizeof(watchdog_line),
				"FAIL: %s did not finish within %u s\n", what, seconds);
	signal(SIGALRM, watchdog_fired);
	alarm(seconds);
}

/* ---- The commands, written raw ---- */

static int cm_open(int flags)
{
	int fd = open(CM_DEV, O_RDWR | O_CLOEXEC | flags);

	if (fd < 0) {
		check(0, "open %s: %s", CM_DEV, err_name(errno));
		exit(1);
	}
	return fd;
}

static int create_id(int fd, __u64 uid, __u32 *id)
{
	struct rdma_ucm_create_id_resp resp = { .id = ~0u };
	struct rdma_ucm_create_id c = { .uid = uid, .response = ptr(&resp), .ps = PS_TCP };
	int e = command(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(resp));

	*id = resp.id;
	return e;
}

/* CREATE_ID as a check: the id, or ~0 if it failed. */
static __u32 new_id(int fd, __u64 uid, const char *name)
{
	__u32 id;
	int e = create_id(fd, uid, &id);

	check(!e, "CREATE_ID of %s (%s)", name, err_name(e));
	return id;
}

static int destroy_id(int fd, __u32 id)
{
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	struct rdma_ucm_destroy_id d = { .response = ptr(&resp), .id = id };

	return command(fd, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(resp));
}

static int bind_to(int fd, __u32 id, const struct sockaddr_in *a)
{
	struct rdma_ucm_bind b = { .id = id, .addr_size = sizeof(*a) };

	memcpy(&b.addr, a, sizeof(*a));
	return command(fd, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0);
}

static int resolve_addr(int fd, __u32 id, const struct sockaddr_in *src,
			const struct sockaddr_in *dst, __u32 timeout_ms)
{
	struct rdma_ucm_resolve_addr r = {
		.id = id, .timeout_ms = timeout_ms,
		.src_size = sizeof(*src), .dst_size = sizeof(*dst),
	};

	memcpy(&r.src_addr, src, sizeof(*src));
	memcpy(&r.dst_addr, dst, sizeof(*dst));
	return command(fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &r, sizeof(r), 0);
}

static int resolve_route(int fd, __u32 id, __u32 timeout_ms)
{
	struct rdma_ucm_resolve_route r = { .id = id, .timeout_ms = timeout_ms };

	return command(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &r, sizeof(r), 0);
}

static int listen_id(int fd, __u32 id, __u32 backlog)
{
	struct rdma_ucm_listen l = { .id = id, .backlog = backlog };

	return command(fd, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0);
}

static int query_addr(int fd, __u32 id, struct rdma_ucm_query_addr_resp *r)
{
	struct rdma_ucm_query q = {
		.response = ptr(r), .id = id, .option = RDMA_USER_CM_QUERY_ADDR,
	};

	memset(r, 0, sizeof(*r));
	return command(fd, RDMA_USER_CM_CMD_QUERY, &q, sizeof(q), sizeof(*r));
}

static int get_event(int fd, struct rdma_ucm_event_resp *ev)
{
	struct rdma_ucm_get_event g = { .response = ptr(ev) };

	return command(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(*ev));
}

/* The next event of `fd` within `ms`: 0, ETIMEDOUT, or the errno. */
static int next_event(int fd, struct rdma_ucm_event_resp *ev, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	memset(ev, 0, sizeof(*ev));
	if (poll(&p, 1, ms) != 1)
		return ETIMEDOUT;
	return get_event(fd, ev);
}

static int usage(const char *line)
{
	fprintf(stderr, "usage: rcm_harden %s\n(see the comment at the top of rcm_harden.c)\n",
		line);
	return 2;
}

static struct sockaddr_in ipv4(const char *ip, unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "not an IPv4 address: %s\n", ip);
		exit(2);
	}
	return a;
}

#endif
