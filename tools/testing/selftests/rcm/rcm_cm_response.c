// SPDX-License-Identifier: GPL-2.0
/*
 * rcm_cm_response: rcm's per-id CM response timeout and retry count
 * through unmodified librdmacm (rdma_set_option at level RDMA_OPTION_ID
 * with the numbers of <rdma/rcm_user_cm.h>).
 *
 *   rcm_cm_response probe
 *       sets each option on a fresh id, in range and out of it, and
 *       prints one line per call: "<what>: 0" or "<what>: <errno name>"
 *       (rcm: 0 in range, EINVAL outside; the in-tree rdma_ucm: ENOSYS).
 *   rcm_cm_response connect <IPv4> <port> rc|ud [<timeout> <retries>]
 *       resolves the address and route, sets the options if given,
 *       connects without a QP and prints the first event after the
 *       connect: "event <name> status <n> after <ms> ms".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rdma/rdma_cma.h>
#include "../../../../include/uapi/rdma/rcm_user_cm.h"

#define RESOLVE_MS 2000

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char *errno_name(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	case ENODEV: return "ENODEV";
	case EFAULT: return "EFAULT";
	default: return strerror(e);
	}
}

/* One rdma_set_option call of @len bytes of @value, printed. */
static void try_option(struct rdma_cm_id *id, const char *what, int optname,
		       uint8_t value, size_t len)
{
	uint8_t buf[2] = { value, 0 };
	int ret = rdma_set_option(id, RDMA_OPTION_ID, optname, buf, len);

	if (ret)
		printf("%s: %s\n", what, errno_name(errno));
	else
		printf("%s: 0\n", what);
}

static int probe(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;

	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		perror("rdma_create_id");
		return 1;
	}
	try_option(id, "timeout 12", RCM_OPTION_ID_CM_RESPONSE_TIMEOUT, 12, 1);
	try_option(id, "timeout 31", RCM_OPTION_ID_CM_RESPONSE_TIMEOUT, 31, 1);
	try_option(id, "timeout 32", RCM_OPTION_ID_CM_RESPONSE_TIMEOUT, 32, 1);
	try_option(id, "timeout in 2 bytes", RCM_OPTION_ID_CM_RESPONSE_TIMEOUT, 12, 2);
	try_option(id, "retries 15", RCM_OPTION_ID_MAX_CM_RETRIES, 15, 1);
	try_option(id, "retries 16", RCM_OPTION_ID_MAX_CM_RETRIES, 16, 1);
	try_option(id, "retries in 2 bytes", RCM_OPTION_ID_MAX_CM_RETRIES, 2, 2);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return 0;
}

/* The next event on @ch, acked; its type and status in @type, @status. */
static int next_event(struct rdma_event_channel *ch, int *type, int *status)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev))
		return -1;
	*type = ev->event;
	*status = ev->status;
	rdma_ack_cm_event(ev);
	return 0;
}

static int expect_event(struct rdma_event_channel *ch, int want)
{
	int type, status;

	if (next_event(ch, &type, &status))
		return -1;
	if (type != want || status) {
		printf("%s (status %d) instead of %s\n", rdma_event_str(type),
		       status, rdma_event_str(want));
		return -1;
	}
	return 0;
}

static int connect_once(const char *ip, int port, int ud, int timeout,
			int retries)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct rdma_conn_param p = { .responder_resources = 1,
				     .initiator_depth = 1, .retry_count = 7,
				     .qp_num = 0x123 };
	struct rdma_cm_id *id;
	int type, status;
	double start;

	if (inet_pton(AF_INET, ip, &dst.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", ip);
		return 2;
	}
	if (!ch || rdma_create_id(ch, &id, NULL, ud ? RDMA_PS_UDP : RDMA_PS_TCP)) {
		perror("rdma_create_id");
		return 1;
	}
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, RESOLVE_MS) ||
	    expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED) ||
	    rdma_resolve_route(id, RESOLVE_MS) ||
	    expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)) {
		perror("resolving");
		return 1;
	}
	if (timeout >= 0) {
		uint8_t t = timeout, r = retries;

		if (rdma_set_option(id, RDMA_OPTION_ID,
				    RCM_OPTION_ID_CM_RESPONSE_TIMEOUT, &t, 1) ||
		    rdma_set_option(id, RDMA_OPTION_ID,
				    RCM_OPTION_ID_MAX_CM_RETRIES, &r, 1)) {
			printf("rdma_set_option: %s\n", errno_name(errno));
			return 1;
		}
	}
	start = now_ms();
	if (rdma_connect(id, &p)) {
		perror("rdma_connect");
		return 1;
	}
	if (next_event(ch, &type, &status)) {
		perror("rdma_get_cm_event");
		return 1;
	}
	printf("event %s status %d after %.0f ms\n", rdma_event_str(type),
	       status, now_ms() - start);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "probe"))
		return probe();
	if ((argc == 5 || argc == 7) && !strcmp(argv[1], "connect"))
		return connect_once(argv[2], atoi(argv[3]),
				    !strcmp(argv[4], "ud"),
				    argc == 7 ? atoi(argv[5]) : -1,
				    argc == 7 ? atoi(argv[6]) : -1);
	fprintf(stderr, "usage: %s probe\n"
		"       %s connect <IPv4> <port> rc|ud [<timeout> <retries>]\n",
		argv[0], argv[0]);
	return 2;
}
