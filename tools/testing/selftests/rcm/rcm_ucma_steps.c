// SPDX-License-Identifier: GPL-2.0
/*
 * rcm_ucma_steps: the per-command steps of librdmacm one after the other,
 * on one thread, for `make bench` (scripts/guest/rcm-bench.sh): create
 * <n> ids, resolve each one's address, then its route (each step issues
 * all <n> calls, then reads the <n> events), then destroy them. Prints
 * each step's milliseconds. Unlike cmtime, no step waits on another
 * thread, so a step's time is the CM's per-command cost.
 *
 * With a perf control FIFO pair (perf record --control fifo:<ctl>,<ack>),
 * it enables perf for the one step named and disables it after, so that
 * a profile holds that step alone.
 *
 * usage: rcm_ucma_steps <peer IPv4> <n> [<step> <ctl fifo> <ack fifo>]
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

static const char *profiled;
static int ctl_fd = -1, ack_fd = -1;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Sends "enable"/"disable" to perf if <step> is the one profiled. */
static void perf_control(const char *step, const char *cmd)
{
	char ack[16];

	if (ctl_fd < 0 || strcmp(step, profiled))
		return;
	if (write(ctl_fd, cmd, strlen(cmd)) < 0 || read(ack_fd, ack, sizeof(ack)) < 0) {
		perror("perf control");
		exit(1);
	}
}

/* Reads <n> events, each of type <want>. */
static void expect_events(struct rdma_event_channel *ch, int n, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	int i;

	for (i = 0; i < n; i++) {
		if (rdma_get_cm_event(ch, &ev)) {
			perror("rdma_get_cm_event");
			exit(1);
		}
		if (ev->event != want) {
			fprintf(stderr, "got %s (status %d), not %s\n", rdma_event_str(ev->event),
				ev->status, rdma_event_str(want));
			exit(1);
		}
		rdma_ack_cm_event(ev);
	}
}

/* A step begins: perf is enabled if it is the one profiled; its start. */
static double step_begin(const char *step)
{
	perf_control(step, "enable\n");
	return now_ms();
}

/* A step that began at <t> ends: its time is printed, perf disabled. */
static void step_end(const char *step, double t)
{
	printf("%s %.1f ms\n", step, now_ms() - t);
	perf_control(step, "disable\n");
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(7471) };
	struct rdma_event_channel *ch;
	struct rdma_cm_id **ids;
	double t;
	int n, i;

	if (argc != 3 && argc != 6) {
		fprintf(stderr, "usage: %s <peer IPv4> <n> [<step> <ctl fifo> <ack fifo>]\n", argv[0]);
		return 2;
	}
	n = atoi(argv[2]);
	if (n <= 0 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) {
		fprintf(stderr, "bad peer address or count\n");
		return 2;
	}
	if (argc == 6) {
		profiled = argv[3];
		ctl_fd = open(argv[4], O_WRONLY);
		ack_fd = open(argv[5], O_RDONLY);
		if (ctl_fd < 0 || ack_fd < 0) {
			perror("perf control fifos");
			return 1;
		}
	}
	ch = rdma_create_event_channel();
	ids = calloc(n, sizeof(*ids));
	if (!ch || !ids) {
		perror("setup");
		return 1;
	}

	t = step_begin("createid");
	for (i = 0; i < n; i++)
		if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP)) {
			perror("rdma_create_id");
			return 1;
		}
	step_end("createid", t);

	t = step_begin("resolveaddr");
	for (i = 0; i < n; i++)
		if (rdma_resolve_addr(ids[i], NULL, (struct sockaddr *)&dst, 2000)) {
			perror("rdma_resolve_addr");
			return 1;
		}
	expect_events(ch, n, RDMA_CM_EVENT_ADDR_RESOLVED);
	step_end("resolveaddr", t);

	t = step_begin("resolveroute");
	for (i = 0; i < n; i++)
		if (rdma_resolve_route(ids[i], 2000)) {
			perror("rdma_resolve_route");
			return 1;
		}
	expect_events(ch, n, RDMA_CM_EVENT_ROUTE_RESOLVED);
	step_end("resolveroute", t);

	t = step_begin("destroy");
	for (i = 0; i < n; i++)
		if (rdma_destroy_id(ids[i])) {
			perror("rdma_destroy_id");
			return 1;
		}
	step_end("destroy", t);
	return 0;
}
