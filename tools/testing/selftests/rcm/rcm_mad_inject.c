// SPDX-License-Identifier: GPL-2.0
/*
 * Sends crafted CM MADs through /dev/infiniband/umadN to a peer's QP1 and
 * checks what comes back. Run on a guest with no CM of its own (so this
 * program owns the CM class and sees every answer) against a peer whose
 * CM has no listener. For each MAD the expected answer is known:
 *
 *   REQ (any content)             -> REJ reason 8 naming its comm id
 *   REP / RTU for an unknown id   -> REJ reason 6 naming its comm id
 *   DREQ for an unknown id        -> DREP naming its comm id
 *   SIDR_REQ (no listener)        -> SIDR_REP status 1 with its request id
 *   MRA, REJ, DREP, LAP, APR, SIDR_REP for unknown ids -> nothing
 *   class version 1 or 3, unknown attribute ids, other methods -> nothing
 *
 * usage: rcm_mad_inject <umad dev> <dgid> <sgid index> <count> <seed>
 *                       [<service id> <reason>]
 *        rcm_mad_inject <umad dev> <dgid> <sgid index> dup-stale <service id>
 * With a service id, every MAD is a REQ for it (random otherwise) and must
 * get a REJ with <reason> (28 from a consumer that rejects, 8 with none),
 * or 18 if there is a listener and the REQ names an alternate path.
 * Prints a summary; exits 1 on any wrong answer, an answer to a MAD that
 * must get none, or any expected answer missing.
 *
 * dup-stale plays the active side of one connection to a listener that
 * accepts (modules/rcm_test_conn): REQ -> REP; the same REQ again ->
 * the same REP again (a duplicate); RTU; then a REQ with a new comm id
 * from the same QP -> REJ 10 (stale connection) and a DREQ ending the old
 * connection, which it answers with a DREP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <rdma/ib_user_mad.h>

#define MAD_SIZE 256
#define BODY 24
#define CM_CLASS 0x07

enum attr {
	REQ = 0x10, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR
};

struct umad {
	struct ib_user_mad_hdr hdr;
	uint8_t mad[MAD_SIZE];
};

/* What a sent MAD must get back. */
struct expect {
	uint16_t attr;	/* 0: no answer */
	uint16_t code;	/* REJ reason or SIDR status */
	uint32_t id;	/* comm id / request id the answer names */
	int seen;
};

static uint64_t rng_state;
/* With a fixed service: only REQs for it, answered with this reason. */
static uint64_t fixed_service;
static uint16_t fixed_reason;

static uint64_t rnd(void)
{
	rng_state += 0x9E3779B97F4A7C15ull;
	uint64_t z = rng_state;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static uint16_t get16(const uint8_t *p) { return p[0] << 8 | p[1]; }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

/* A MAD of `attr` with random bytes in every field of the body. */
static void craft(uint8_t *mad, uint16_t attr, uint8_t version, uint8_t method,
		  uint32_t tid)
{
	int i;

	for (i = 0; i < MAD_SIZE; i++)
		mad[i] = rnd();
	mad[0] = 1;			/* base version */
	mad[1] = CM_CLASS;
	mad[2] = version;
	mad[3] = method;
	put16(mad + 4, 0);		/* status */
	put16(mad + 6, 0);
	put32(mad + 8, 0x52434d00);	/* tid high: "RCM\0" */
	put32(mad + 12, tid);
	put16(mad + 16, attr);
	put16(mad + 18, 0);
	put32(mad + 20, 0);		/* attribute modifier */
}

/* cm_req_has_alt_path(): REQ body @96 alternate local LID, @100 its GID. */
static int has_alternate_path(const uint8_t *b)
{
	const uint8_t *interface_id = b + 100 + 8;

	return get16(b + 96) != 0 ||
	       (interface_id[0] == 0x00 && interface_id[1] == 0x06 &&
		interface_id[2] == 0x6a);
}

/* The expected answer to a crafted MAD; fills in the ids it names. */
static struct expect expected(const uint8_t *mad)
{
	uint16_t attr = get16(mad + 16);
	const uint8_t *b = mad + BODY;
	struct expect e = { 0 };

	if (mad[2] != 2 || mad[3] != 0x03)
		return e;		/* dropped by ib_mad or the parser */
	switch (attr) {
	case REQ:
		e = (struct expect){ .attr = REJ, .code = fixed_service ? fixed_reason : 8,
				     .id = get32(b) };
		/*
		 * A listener is found first; then, as 6.12 on RoCE, an
		 * alternate path (its local LID non-zero, or an Omni-Path
		 * GID) gets REJ 18 before the consumer sees the REQ.
		 */
		if (e.code != 8 && has_alternate_path(b))
			e.code = 18;
		break;
	case REP:
	case RTU:
		e = (struct expect){ .attr = REJ, .code = 6, .id = get32(b) };
		break;
	case DREQ:
		e = (struct expect){ .attr = DREP, .id = get32(b) };
		break;
	case SIDR_REQ:
		e = (struct expect){ .attr = SIDR_REP, .code = 1, .id = get32(b) };
		break;
	}
	return e;
}

static uint8_t dgid[16];
static int sgid_index;

/* Sends a MAD to the peer's QP1; 0 or -1. */
static int send_mad(int fd, uint32_t agent, struct umad *out)
{
	int pass;

	out->hdr.id = agent;
	out->hdr.qpn = htonl(1);
	out->hdr.qkey = htonl(0x80010000);
	out->hdr.lid = htons(0xffff);
	out->hdr.grh_present = 1;
	out->hdr.gid_index = sgid_index;
	out->hdr.hop_limit = 64;
	memcpy(out->hdr.gid, dgid, 16);
	out->hdr.length = sizeof(*out);
	for (pass = 0; pass < 1000; pass++) {
		if (write(fd, out, sizeof(*out)) == sizeof(*out))
			return 0;
		if (errno != EAGAIN && errno != ENOMEM && errno != ENOBUFS) {
			perror("write");
			return -1;
		}
		usleep(1000);
	}
	return -1;
}

/* The next CM answer within `ms`: its attribute id, or 0 on timeout. */
static uint16_t recv_mad(int fd, int ms, struct umad *in)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, ms) <= 0)
			return 0;
		if (read(fd, in, sizeof(*in)) < (ssize_t)sizeof(in->hdr) || in->hdr.status)
			continue;
		return get16(in->mad + 16);
	}
}

/* A well-formed RC REQ from comm id `id`, QPN `qpn`, for `service`. */
static void craft_req(uint8_t *mad, uint32_t id, uint32_t qpn, uint64_t service, uint32_t tid)
{
	uint8_t *b = mad + BODY;

	memset(mad, 0, MAD_SIZE);
	mad[0] = 1;
	mad[1] = CM_CLASS;
	mad[2] = 2;
	mad[3] = 0x03;
	put32(mad + 8, 0x52434d01);
	put32(mad + 12, tid);
	put16(mad + 16, REQ);
	put32(b, id);
	put32(b + 8, service >> 32);
	put32(b + 12, service);
	put32(b + 16, 0x52434d00);		/* CA GUID */
	put32(b + 20, 0x00000001);
	put32(b + 32, qpn << 8 | 1);		/* QPN, responder resources 1 */
	b[39] = 1;				/* initiator depth */
	b[43] = 20 << 3 | 0 << 1 | 1;		/* remote CM timeout, RC, flow control */
	put32(b + 44, 0x123456 << 8 | 20 << 3 | 7);	/* PSN, local CM timeout, retry 7 */
	put16(b + 48, 0xffff);			/* P_Key */
	b[50] = 3 << 4 | 7;			/* MTU 1024, RNR retry 7 */
	b[51] = 15 << 4;			/* max CM retries */
	put16(b + 52, 0xffff);			/* primary path: permissive LIDs */
	put16(b + 54, 0xffff);
	memcpy(b + 72, dgid, 16);		/* remote port GID */
	b[93] = 64;				/* hop limit */
	b[95] = 15 << 3;			/* local ACK timeout */
	put32(b + 140, 0x52434d53);		/* sample_hello: magic, index */
	put32(b + 144, 900);
}

static int dup_stale(int fd, uint32_t agent, uint64_t service)
{
	uint32_t a = 0x00a1b2c0 | (getpid() & 0xf), q = 0x4242;
	struct umad out, in;
	uint32_t local;
	uint16_t at;
	int dreq = 0, rej10 = 0, i;

	memset(&out, 0, sizeof(out));
	craft_req(out.mad, a, q, service, 1);
	if (send_mad(fd, agent, &out))
		return 2;
	at = recv_mad(fd, 5000, &in);
	if (at != REP || get32(in.mad + BODY + 4) != a) {
		fprintf(stderr, "REQ: answer attr %#x, expected a REP\n", at);
		return 1;
	}
	local = get32(in.mad + BODY);
	printf("REQ %#x: REP from comm id %#x\n", a, local);

	if (send_mad(fd, agent, &out))
		return 2;
	at = recv_mad(fd, 5000, &in);
	if (at != REP || get32(in.mad + BODY) != local || get32(in.mad + BODY + 4) != a) {
		fprintf(stderr, "duplicate REQ: answer attr %#x, expected the same REP\n", at);
		return 1;
	}
	printf("duplicate REQ: the same REP again\n");

	memset(out.mad + BODY, 0, MAD_SIZE - BODY);
	put16(out.mad + 16, RTU);
	put32(out.mad + BODY, a);
	put32(out.mad + BODY + 4, local);
	if (send_mad(fd, agent, &out))
		return 2;
	usleep(300000);

	craft_req(out.mad, a + 0x100, q, service, 2);
	if (send_mad(fd, agent, &out))
		return 2;
	for (i = 0; i < 2; i++) {
		at = recv_mad(fd, 5000, &in);
		if (at == REJ && get32(in.mad + BODY + 4) == a + 0x100 &&
		    get16(in.mad + BODY + 10) == 10)
			rej10 = 1;
		else if (at == DREQ && get32(in.mad + BODY) == local &&
			 get32(in.mad + BODY + 4) == a)
			dreq = 1;
		else
			fprintf(stderr, "stale REQ: unexpected answer attr %#x\n", at);
	}
	printf("REQ %#x from the same QP: %s, %s\n", a + 0x100,
	       rej10 ? "REJ 10 (stale connection)" : "no REJ 10",
	       dreq ? "DREQ for the old connection" : "no DREQ");
	if (dreq) {
		uint64_t tid = (uint64_t)get32(in.mad + 8) << 32 | get32(in.mad + 12);

		memset(out.mad + BODY, 0, MAD_SIZE - BODY);
		put32(out.mad + 8, tid >> 32);
		put32(out.mad + 12, tid);
		put16(out.mad + 16, DREP);
		put32(out.mad + BODY, a);
		put32(out.mad + BODY + 4, local);
		send_mad(fd, agent, &out);
	}
	return rej10 && dreq ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ib_user_mad_reg_req reg = { 0 };
	struct expect *want;
	struct umad out, in;
	int fd, i, count, bad = 0, extra = 0, got = 0, expect_n = 0, reqs = 0;
	uint32_t agent;
	struct timespec t0, t1;

	if (argc != 6 && argc != 8 && !(argc == 6 && !strcmp(argv[4], "dup-stale"))) {
		fprintf(stderr, "usage: %s <umad dev> <dgid> <sgid index> <count> <seed> [<service id> <reason>]\n",
			argv[0]);
		return 2;
	}
	if (argc == 8) {
		fixed_service = strtoull(argv[6], NULL, 0);
		fixed_reason = atoi(argv[7]);
	}
	if (inet_pton(AF_INET6, argv[2], dgid) != 1) {
		fprintf(stderr, "bad gid %s\n", argv[2]);
		return 2;
	}
	sgid_index = atoi(argv[3]);
	count = strcmp(argv[4], "dup-stale") ? atoi(argv[4]) : 1;
	rng_state = strtoull(argv[5], NULL, 0);
	want = calloc(count, sizeof(*want));
	if (!want || count <= 0)
		return 2;

	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	if (ioctl(fd, IB_USER_MAD_ENABLE_PKEY) < 0) {
		perror("IB_USER_MAD_ENABLE_PKEY");
		return 2;
	}
	reg.qpn = 1;
	reg.mgmt_class = CM_CLASS;
	reg.mgmt_class_version = 2;
	/* method Send (0x03) */
	((uint8_t *)reg.method_mask)[0] = 1 << 3;
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &reg) < 0) {
		perror("IB_USER_MAD_REGISTER_AGENT (is a CM loaded here?)");
		return 2;
	}
	agent = reg.id;
	if (!strcmp(argv[4], "dup-stale"))
		return dup_stale(fd, agent, strtoull(argv[5], NULL, 0));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		static const uint16_t attrs[] = { REQ, MRA, REJ, REP, RTU, DREQ, DREP,
						  SIDR_REQ, SIDR_REP, LAP, APR };
		uint64_t r = rnd();
		uint16_t attr = attrs[r % 11];
		uint8_t version = 2, method = 0x03;

		/* one MAD in ten breaks the header */
		switch ((r >> 8) % 40) {
		case 0: version = 1; break;
		case 1: version = 3; break;
		case 2: attr = 0x1B + (r >> 16) % 0xFF00; break;
		/* a response method nobody waits for (requests such as Get
		 * would be answered by ib_mad itself) */
		case 3: method = 0x81; break;
		}
		if (fixed_service) {
			attr = REQ;
			version = 2;
			method = 0x03;
		}
		memset(&out, 0, sizeof(out));
		craft(out.mad, attr, version, method, i);
		if (fixed_service) {
			put32(out.mad + BODY + 8, fixed_service >> 32);
			put32(out.mad + BODY + 12, fixed_service);
			/* three in four without an alternate path, so that
			 * most reach the consumer */
			if (i % 4)
				memset(out.mad + BODY + 96, 0, 44);
		}
		/* REQ floods re-use comm ids now and then */
		if (attr == REQ && i > 0 && (r >> 32) % 8 == 0)
			put32(out.mad + BODY, want[i - 1].id);
		want[i] = expected(out.mad);
		expect_n += want[i].attr != 0;
		/* the REQs that reach the CM's agent (its class version, method Send) */
		reqs += attr == REQ && version == 2 && method == 0x03;

		if (send_mad(fd, agent, &out))
			return 2;
		/* pace: drain answers every 32 MADs so no queue overflows */
		if (i % 32 != 31 && i != count - 1)
			continue;
		for (;;) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int k, wait_ms = i == count - 1 ? 3000 : 200;
			uint16_t a;
			uint32_t id, tid;

			if (poll(&p, 1, wait_ms) <= 0)
				break;
			if (read(fd, &in, sizeof(in)) < (ssize_t)sizeof(in.hdr))
				continue;
			if (in.hdr.status)
				continue;	/* a send of ours timed out */
			a = get16(in.mad + 16);
			tid = get32(in.mad + 12);
			/* the answer names our comm id as its remote id */
			id = a == SIDR_REP ? get32(in.mad + BODY) : get32(in.mad + BODY + 4);
			k = get32(in.mad + 8) == 0x52434d00 && tid < (uint32_t)count ? (int)tid : -1;
			if (k < 0 || !want[k].attr || want[k].seen) {
				/* REJ 6 for a REP carries tid 0: find it by id */
				for (k = 0; k <= i; k++)
					if (want[k].attr == a && want[k].id == id && !want[k].seen)
						break;
				if (k > i) {
					fprintf(stderr, "unexpected answer attr %#x id %#x tid %#x\n", a, id, tid);
					extra++;
					continue;
				}
			}
			got++;
			want[k].seen = 1;
			if (a != want[k].attr || id != want[k].id ||
			    (a == REJ && get16(in.mad + BODY + 10) != want[k].code) ||
			    (a == SIDR_REP && in.mad[BODY + 4] != want[k].code)) {
				fprintf(stderr,
					"MAD %d: answer attr %#x id %#x code %u, expected attr %#x id %#x code %u\n",
					k, a, id, a == REJ ? get16(in.mad + BODY + 10) : in.mad[BODY + 4],
					want[k].attr, want[k].id, want[k].code);
				bad++;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("sent %d MADs in %.1f s: %d expected answers, %d received, %d wrong, %d unexpected\n",
	       count, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       expect_n, got, bad, extra);
	printf("well-formed REQs sent: %d\n", reqs);
	close(fd);
	free(want);
	if (bad || extra || got < expect_n)
		return 1;
	return 0;
}
