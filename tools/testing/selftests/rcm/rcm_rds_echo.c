// SPDX-License-Identifier: GPL-2.0
/*
 * RDS over RDMA between the guests: messages on AF_RDS sockets pinned to
 * the IB transport (rds_rdma), which connects through rdma_cm.
 *
 *   rcm_rds_echo serve <local ip> <port> <count> <seconds>
 *       answers <count> messages (each sent back to its sender unchanged),
 *       then exits 0; exits 1 if they do not all arrive within <seconds>.
 *   rcm_rds_echo ping <local ip> <port> <peer ip> <peer port> <count>
 *       sends <count> numbered messages of different sizes one at a time
 *       and expects each back unchanged within 30 s.
 *
 * Binding with the IB transport already asks rdma_cm (rdma_bind_addr on a
 * temporary id) whether the address belongs to an RDMA device.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif
#define SO_RDS_TRANSPORT 8
#define RDS_TRANS_IB 0

#define MAX_MSG 8192

static int rds_socket(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, trans = RDS_TRANS_IB;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket(AF_RDS) (is rds loaded?)");
		return -1;
	}
	if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, sizeof(trans))) {
		perror("SO_RDS_TRANSPORT IB (is rds_rdma loaded?)");
		return -1;
	}
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", ip);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		fprintf(stderr, "bind %s:%d: %s\n", ip, port, strerror(errno));
		return -1;
	}
	return fd;
}

/* Waits up to `ms` for a message; its length, or -1. */
static ssize_t receive(int fd, char *buf, struct sockaddr_in *from, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	socklen_t len = sizeof(*from);
	int r;

	r = poll(&p, 1, ms);
	if (r < 0) {
		perror("poll");
		return -1;
	}
	if (r == 0) {
		fprintf(stderr, "no message within %d ms\n", ms);
		return -1;
	}
	return recvfrom(fd, buf, MAX_MSG, 0, (struct sockaddr *)from, &len);
}

/* Message i: its number, then bytes of a pattern up to a size that varies. */
static size_t fill(char *buf, int i)
{
	size_t n = 64 + (size_t)(i * 977) % (MAX_MSG - 64), k;

	snprintf(buf, 32, "rcm rds message %d", i);
	for (k = 32; k < n; k++)
		buf[k] = (char)(k * 31 + i);
	return n;
}

static int serve(char **argv)
{
	int fd = rds_socket(argv[2], atoi(argv[3])), count = atoi(argv[4]);
	int deadline = atoi(argv[5]) * 1000, i;
	struct timespec t0, t;
	char buf[MAX_MSG];

	if (fd < 0)
		return 2;
	/* the test starts the pings once it sees this */
	printf("ready\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		struct sockaddr_in from;
		ssize_t n;
		int left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = deadline - (int)((t.tv_sec - t0.tv_sec) * 1000 +
					(t.tv_nsec - t0.tv_nsec) / 1000000);
		n = receive(fd, buf, &from, left > 0 ? left : 1);
		if (n < 0) {
			fprintf(stderr, "served %d of %d messages\n", i, count);
			return 1;
		}
		if (sendto(fd, buf, n, 0, (struct sockaddr *)&from, sizeof(from)) != n) {
			perror("sendto (answer)");
			return 1;
		}
	}
	printf("served %d messages\n", count);
	return 0;
}

static int ping(char **argv)
{
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[5])) };
	int fd = rds_socket(argv[2], atoi(argv[3])), count = atoi(argv[6]), i;
	char out[MAX_MSG], in[MAX_MSG];

	if (fd < 0)
		return 2;
	if (inet_pton(AF_INET, argv[4], &peer.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", argv[4]);
		return 2;
	}
	for (i = 0; i < count; i++) {
		size_t n = fill(out, i);
		struct sockaddr_in from;
		ssize_t got;

		if (sendto(fd, out, n, 0, (struct sockaddr *)&peer, sizeof(peer)) != (ssize_t)n) {
			fprintf(stderr, "message %d: sendto: %s\n", i, strerror(errno));
			return 1;
		}
		got = receive(fd, in, &from, 30000);
		if (got != (ssize_t)n || memcmp(in, out, n)) {
			fprintf(stderr, "message %d: %zd bytes back, %zu sent%s\n", i, got, n,
				got == (ssize_t)n ? ", contents differ" : "");
			return 1;
		}
	}
	printf("%d messages echoed unchanged\n", count);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "serve"))
		return serve(argv);
	if (argc == 7 && !strcmp(argv[1], "ping"))
		return ping(argv);
	fprintf(stderr, "usage: %s serve <ip> <port> <count> <seconds>\n"
			"       %s ping <ip> <port> <peer ip> <peer port> <count>\n",
		argv[0], argv[0]);
	return 2;
}
