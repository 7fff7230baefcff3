// SPDX-License-Identifier: GPL-2.0
/*
 * An abuse campaign against /dev/infiniband/rdma_cm: threads write seeded
 * random commands, valid and not, to files and ids they share. First the
 * named races, each many times: MIGRATE_ID against DESTROY_ID of one id,
 * two LEAVE_MCAST of one membership at once, RESOLVE_ADDR re-entered while
 * one is pending, DESTROY_ID with undelivered events, close() with
 * connection requests pending. Then the random mix: every command with
 * random ids (own, another file's, unknown), lengths (short, long, huge),
 * pointers (valid, NULL, unmapped, and a "slow" page whose faults a
 * userfaultfd thread serves only after up to 20 ms, so that the kernel's
 * copies to and from user memory wait on a fault while other threads'
 * commands and events go on), addresses (this guest, the peer, a silent
 * host, garbage), and now and then a file closed and opened again.
 * Success is the kernel's: the caller checks its logs afterwards.
 *
 *   rcm_ucma_abuse <seed> <commands> <threads> <this guest's IPv4> <peer IPv4>
 *
 * Each thread's command sequence follows from the seed and its index; the
 * seed is printed first so a failing run can be replayed.
 *
 * Its time must not depend on the seed: no thread waits for what the
 * random commands started (the files are non-blocking, so GET_EVENT never
 * waits for an event that only a CM or resolution timeout would bring),
 * and a slow fault costs its own 0 to 20 ms, not the sum of those raised
 * before it. A watchdog names the thread and the command when one write(),
 * open() or close() takes over HANG_MS, as the kernel's hung-task check
 * would, and exits 3; the last line gives the time taken and the longest
 * command.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>

#define FILES 4
#define SLOTS 64
#define PS_COUNT 5

static const __u16 port_spaces[PS_COUNT] = { 0x106, 0x111, 0x002, 0x13f, 0x777 };
static int files[FILES];
static atomic_uint ids[SLOTS];	/* ids the files answered, any file's */
static atomic_uint mcs[SLOTS];	/* memberships */
static atomic_ulong done;
static struct in_addr self, peer, silent;
static void *unmapped;
/* Pages whose faults are served late (NULL without userfaultfd). */
#define SLOW_PAGES 4
static unsigned char *slow;
static int slow_uffd = -1;
static atomic_ulong slow_faults;

#include "rcm_ucma_abuse_watch.h"

struct rng {
	__u64 s;
};

static __u64 next(struct rng *r)
{
	/* splitmix64 */
	__u64 z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int below(struct rng *r, unsigned int n)
{
	return n ? next(r) % n : 0;
}

/* write() as the watchdog sees it; errno is the write's. */
static ssize_t tracked_write(int fd, const void *buf, size_t len, __u32 cmd)
{
	ssize_t n;
	int e;

	begin(cmd);
	n = write(fd, buf, len);
	e = errno;
	end();
	errno = e;
	return n;
}

/* Non-blocking, every file: a GET_EVENT with nothing queued answers
 * EAGAIN instead of waiting for an event that only a CM or resolution
 * timeout of the seed's commands would bring (up to minutes). */
static int open_cm(void)
{
	int fd;

	begin(OP_OPEN);
	fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_NONBLOCK);
	end();
	return fd;
}

static void close_cm(int fd)
{
	begin(OP_CLOSE);
	close(fd);
	end();
}

/* This thread's last command, told if its answer page's canaries broke. */
static __thread struct {
	__u32 cmd, in, out;
	unsigned char head[24];
} last;

/* One command; the errno is ignored (the kernel's answers are checked by
 * the reference tests, here only its survival). */
static void command(int fd, __u32 cmd, const void *in, size_t in_len, __u16 out)
{
	unsigned char buf[sizeof(struct rdma_ucm_cmd_hdr) + 512];
	struct rdma_ucm_cmd_hdr hdr = { .cmd = cmd, .in = in_len, .out = out };

	if (in_len > 512)
		in_len = 512;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), in, in_len);
	last.cmd = cmd;
	last.in = in_len;
	last.out = out;
	memset(last.head, 0, sizeof(last.head));
	memcpy(last.head, in, in_len < sizeof(last.head) ? in_len : sizeof(last.head));
	if (tracked_write(fd, buf, sizeof(hdr) + in_len, cmd) < 0 && errno == EBADF)
		usleep(10);
	atomic_fetch_add(&done, 1);
}

static __u64 ptr(void *p)
{
	return (__u64)(unsigned long)p;
}

/* A response pointer: mostly valid, sometimes NULL or unmapped. */
static __u64 response(struct rng *r, void *valid)
{
	switch (below(r, 10)) {
	case 0:
		return 0;
	case 1:
		return ptr(unmapped);
	case 2: {
		unsigned char *page;

		if (!slow)
			return ptr(valid);
		/* Now and then the page faults again: one page, so that a drop
		 * costs at most one slow fault however many commands then
		 * reach their copy (which the seed decides). */
		page = slow + below(r, SLOW_PAGES) * 4096;
		if (!below(r, 4))
			madvise(page, 4096, MADV_DONTNEED);
		return ptr(page + below(r, 4096 - 512));
	}
	default:
		return ptr(valid);
	}
}

/* Maps a zero page at `page`, which wakes its faults. If it cannot (one is
 * there: another thread's fault of the page came first; or any error) the
 * faults are only woken, to fault again if need be: one never woken would
 * hang its thread for good. */
static void serve(__u64 page)
{
	struct uffdio_zeropage zero = { .range = { .start = page, .len = 4096 } };
	struct uffdio_range range = { .start = page, .len = 4096 };

	if (ioctl(slow_uffd, UFFDIO_ZEROPAGE, &zero))
		ioctl(slow_uffd, UFFDIO_WAKE, &range);
}

/* Serves the slow pages' faults, each 0 to 20 ms after it was raised. They
 * wait side by side, not in a queue: a fault costs its own delay rather
 * than the sum of those raised before it, which would tie the campaign's
 * time to how many faults the seed's commands raise. */
#define PENDING 64
static void *serve_slow_faults(void *arg)
{
	struct rng r = { .s = (unsigned long)arg };
	struct {
		__u64 page, due;
	} pending[PENDING];
	struct uffd_msg msgs[16];
	int n = 0;

	for (;;) {
		struct pollfd p = { .fd = slow_uffd, .events = POLLIN };
		__u64 now = now_us();
		ssize_t got;
		int wait = -1, i;

		for (i = 0; i < n; i++) {
			int ms = pending[i].due > now ? (pending[i].due - now + 999) / 1000 : 0;

			if (wait < 0 || ms < wait)
				wait = ms;
		}
		if (poll(&p, 1, wait) < 0 && errno != EINTR)
			return NULL;
		got = read(slow_uffd, msgs, sizeof(msgs));
		now = now_us();
		for (i = 0; got > 0 && i < got / (ssize_t)sizeof(msgs[0]); i++) {
			__u64 page = msgs[i].arg.pagefault.address & ~4095ULL;

			if (msgs[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			atomic_fetch_add(&slow_faults, 1);
			if (n == PENDING) {
				serve(page);
				continue;
			}
			pending[n].page = page;
			pending[n++].due = now + below(&r, 20000);
		}
		for (i = 0; i < n;) {
			if (pending[i].due > now) {
				i++;
				continue;
			}
			serve(pending[i].page);
			pending[i] = pending[--n];
		}
	}
}

/* The slow pages, if userfaultfd is there to make them (else NULL). */
static void slow_pages(unsigned long seed)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	pthread_t server;

	slow_uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (slow_uffd < 0 || ioctl(slow_uffd, UFFDIO_API, &api)) {
		printf("no userfaultfd (%s): no slow pages\n", strerror(errno));
		return;
	}
	slow = mmap(NULL, SLOW_PAGES * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (unsigned long)slow;
	reg.range.len = SLOW_PAGES * 4096;
	if (slow == MAP_FAILED || ioctl(slow_uffd, UFFDIO_REGISTER, &reg) ||
	    pthread_create(&server, NULL, serve_slow_faults, (void *)seed)) {
		printf("slow pages not set up (%s)\n", strerror(errno));
		slow = NULL;
		return;
	}
	pthread_detach(server);
}

static int file(struct rng *r)
{
	return files[below(r, FILES)];
}

static __u32 some_id(struct rng *r)
{
	return below(r, 8) ? atomic_load(&ids[below(r, SLOTS)]) : (__u32)next(r);
}

static void remember(atomic_uint *slots, struct rng *r, __u32 id)
{
	atomic_store(&slots[below(r, SLOTS)], id);
}

static void some_addr(struct rng *r, void *to, int v6_room)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7100 + below(r, 8)) };
	struct sockaddr_in6 b = { .sin6_family = AF_INET6, .sin6_port = a.sin_port };

	switch (below(r, 8)) {
	case 0:
		a.sin_addr = peer;
		break;
	case 1:
		a.sin_addr = silent;
		break;
	case 2:
		a.sin_addr.s_addr = htonl(0xef090900 + below(r, 4));	/* 239.9.9.x */
		break;
	case 3:
		a.sin_addr.s_addr = 0;
		break;
	case 4:
		if (v6_room) {
			b.sin6_addr.s6_addr[15] = 1;	/* ::1 */
			memcpy(to, &b, sizeof(b));
			return;
		}
		/* fall through */
	case 5:
		a.sin_family = below(r, 64);	/* garbage family */
		a.sin_addr.s_addr = next(r);
		break;
	default:
		a.sin_addr = self;
	}
	memcpy(to, &a, sizeof(a));
}

static void conn_param(struct rng *r, struct rdma_ucm_conn_param *p)
{
	p->qp_num = next(r);
	p->private_data_len = below(r, 260);
	p->responder_resources = below(r, 4);
	p->initiator_depth = below(r, 4);
	p->retry_count = below(r, 8);
	p->rnr_retry_count = below(r, 8);
	p->valid = below(r, 8) != 0;
}

/* One random command. */
static void random_command(struct rng *r, unsigned char *scratch)
{
	union {
		struct rdma_ucm_create_id create;
		struct rdma_ucm_destroy_id destroy;
		struct rdma_ucm_bind_ip bind_ip;
		struct rdma_ucm_bind bind;
		struct rdma_ucm_resolve_ip resolve_ip;
		struct rdma_ucm_resolve_addr resolve_addr;
		struct rdma_ucm_resolve_route route;
		struct rdma_ucm_query query;
		struct rdma_ucm_connect connect;
		struct rdma_ucm_listen listen;
		struct rdma_ucm_accept accept;
		struct rdma_ucm_reject reject;
		struct rdma_ucm_get_event get;
		struct rdma_ucm_set_option opt;
		struct rdma_ucm_notify notify;
		struct rdma_ucm_join_ip_mcast join_ip;
		struct rdma_ucm_join_mcast join;
		struct rdma_ucm_migrate_id migrate;
		unsigned char raw[512];
	} c;
	__u32 *answer = (__u32 *)scratch;
	int fd = file(r), op = below(r, 24);
	__u16 out = below(r, 16) ? 400 : below(r, 400);

	memset(&c, 0, sizeof(c));
	*answer = ~0u;
	switch (op) {
	case RDMA_USER_CM_CMD_CREATE_ID:
		c.create.uid = next(r);
		c.create.response = response(r, answer);
		c.create.ps = port_spaces[below(r, PS_COUNT)];
		c.create.qp_type = below(r, 10);
		command(fd, op, &c, sizeof(c.create), out);
		if (*answer != ~0u)
			remember(ids, r, *answer);
		return;
	case RDMA_USER_CM_CMD_DESTROY_ID:
	case RDMA_USER_CM_CMD_LEAVE_MCAST:
		c.destroy.response = response(r, answer);
		c.destroy.id = op == RDMA_USER_CM_CMD_LEAVE_MCAST ?
			       atomic_load(&mcs[below(r, SLOTS)]) : some_id(r);
		break;
	case RDMA_USER_CM_CMD_BIND_IP:
		c.bind_ip.id = some_id(r);
		some_addr(r, &c.bind_ip.addr, 1);
		break;
	case RDMA_USER_CM_CMD_BIND:
		c.bind.id = some_id(r);
		c.bind.addr_size = below(r, 4) ? 16 : below(r, 200);
		some_addr(r, &c.bind.addr, 1);
		break;
	case RDMA_USER_CM_CMD_RESOLVE_IP:
		c.resolve_ip.id = some_id(r);
		c.resolve_ip.timeout_ms = 1 + below(r, 2000);
		some_addr(r, &c.resolve_ip.dst_addr, 1);
		if (below(r, 4) == 0)
			some_addr(r, &c.resolve_ip.src_addr, 1);
		break;
	case RDMA_USER_CM_CMD_RESOLVE_ADDR:
		c.resolve_addr.id = some_id(r);
		c.resolve_addr.timeout_ms = 1 + below(r, 2000);
		c.resolve_addr.dst_size = below(r, 4) ? 16 : below(r, 200);
		some_addr(r, &c.resolve_addr.dst_addr, 1);
		if (below(r, 4) == 0) {
			c.resolve_addr.src_size = 16;
			some_addr(r, &c.resolve_addr.src_addr, 1);
		}
		break;
	case RDMA_USER_CM_CMD_RESOLVE_ROUTE:
	case RDMA_USER_CM_CMD_LISTEN:
	case RDMA_USER_CM_CMD_DISCONNECT:
	case RDMA_USER_CM_CMD_NOTIFY:
		c.notify.id = some_id(r);
		c.notify.event = below(r, 40);	/* timeout, backlog or event */
		break;
	case RDMA_USER_CM_CMD_QUERY_ROUTE:
	case RDMA_USER_CM_CMD_QUERY:
	case RDMA_USER_CM_CMD_INIT_QP_ATTR:
		/* One layout: response, id, option or QP state. */
		c.query.response = response(r, scratch);
		c.query.id = some_id(r);
		c.query.option = below(r, 12);
		break;
	case RDMA_USER_CM_CMD_CONNECT:
		conn_param(r, &c.connect.conn_param);
		c.connect.id = some_id(r);
		break;
	case RDMA_USER_CM_CMD_ACCEPT:
		c.accept.uid = next(r);
		conn_param(r, &c.accept.conn_param);
		c.accept.id = some_id(r);
		break;
	case RDMA_USER_CM_CMD_REJECT:
		c.reject.id = some_id(r);
		c.reject.private_data_len = below(r, 256);
		c.reject.reason = below(r, 3) ? 28 : below(r, 64);
		break;
	case RDMA_USER_CM_CMD_GET_EVENT:
		c.get.response = response(r, scratch);
		break;
	case RDMA_USER_CM_CMD_SET_OPTION:
		c.opt.optval = response(r, scratch);
		c.opt.id = some_id(r);
		c.opt.level = below(r, 3);
		c.opt.optname = below(r, 5);
		c.opt.optlen = below(r, 8) ? below(r, 150) : (__u32)next(r) % (8 << 20);
		memset(scratch, below(r, 2) ? 0 : 0xff, 512);
		break;
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST:
	case RDMA_USER_CM_CMD_JOIN_MCAST:
		c.join.response = response(r, answer);
		c.join.uid = next(r);
		c.join.id = some_id(r);
		c.join.addr_size = 16;
		c.join.join_flags = below(r, 3);
		if (op == RDMA_USER_CM_CMD_JOIN_IP_MCAST) {
			c.join_ip.id = c.join.id;
			some_addr(r, &c.join_ip.addr, 1);
		} else {
			some_addr(r, &c.join.addr, 0);
		}
		command(fd, op, &c, op == RDMA_USER_CM_CMD_JOIN_MCAST ?
			sizeof(c.join) : sizeof(c.join_ip), out);
		if (*answer != ~0u)
			remember(mcs, r, *answer);
		return;
	case RDMA_USER_CM_CMD_MIGRATE_ID:
		c.migrate.response = response(r, answer);
		c.migrate.id = some_id(r);
		c.migrate.fd = below(r, 8) ? (unsigned int)file(r) : below(r, 64);
		break;
	default:
		/* Garbage: any command number, random bytes and lengths. */
		for (unsigned int i = 0; i < sizeof(c.raw); i++)
			c.raw[i] = next(r);
		command(fd, below(r, 32), &c, below(r, 400), below(r, 600));
		return;
	}
	/* The struct's size, or a random one now and then. */
	command(fd, op, &c, below(r, 16) ? 300 : below(r, 400), out);
}

/* The named races. Helpers answer the id or membership, ~0 on failure. */
static __u32 create(int fd, __u16 ps)
{
	__u32 id = ~0u;
	struct rdma_ucm_create_id c = { .uid = 1, .response = ptr(&id), .ps = ps };

	command(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4);
	return id;
}

static void destroy(int fd, __u32 id)
{
	__u32 reported;
	struct rdma_ucm_destroy_id d = { .response = ptr(&reported), .id = id };

	command(fd, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), 4);
}

static void resolve(int fd, __u32 id, struct in_addr to, __u16 port)
{
	struct rdma_ucm_resolve_ip c = { .id = id, .timeout_ms = 1000 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr = to, .sin_port = htons(port) };

	memcpy(&c.dst_addr, &a, sizeof(a));
	command(fd, RDMA_USER_CM_CMD_RESOLVE_IP, &c, sizeof(c), 0);
}

/* Waits up to 2 s for the next event of a (non-blocking) file. */
static int event(int fd, struct rdma_ucm_event_resp *ev)
{
	struct rdma_ucm_get_event g = { .response = ptr(ev) };
	struct rdma_ucm_cmd_hdr hdr = { .cmd = RDMA_USER_CM_CMD_GET_EVENT, .in = sizeof(g),
					.out = sizeof(*ev) };
	unsigned char buf[sizeof(hdr) + sizeof(g)];

	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &g, sizeof(g));
	for (int i = 0; i < 200; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (tracked_write(fd, buf, sizeof(buf), RDMA_USER_CM_CMD_GET_EVENT) >= 0)
			return 0;
		poll(&p, 1, 10);
	}
	return -1;
}

struct race {
	pthread_barrier_t go;
	int from, to;
	__u32 id;
	void *(*side)(void *);
};

/* A race's other side, watched as the helper. */
static void *race_side(void *arg)
{
	struct race *x = arg;

	tracked_as(&tracks[ntracks - 1]);
	return x->side(x);
}

static void *migrate_side(void *arg)
{
	struct race *x = arg;
	__u32 reported;
	struct rdma_ucm_migrate_id m = { .response = ptr(&reported), .id = x->id, .fd = x->from };

	pthread_barrier_wait(&x->go);
	command(x->to, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), 4);
	return NULL;
}

static void *leave_side(void *arg)
{
	struct race *x = arg;
	__u32 reported;
	struct rdma_ucm_destroy_id l = { .response = ptr(&reported), .id = x->id };

	pthread_barrier_wait(&x->go);
	command(x->from, RDMA_USER_CM_CMD_LEAVE_MCAST, &l, sizeof(l), 4);
	return NULL;
}

/* Runs `side` on a thread against `mine` here, both released at once. */
static void race(struct race *x, void *(*side)(void *), void (*mine)(struct race *))
{
	pthread_t t;

	pthread_barrier_init(&x->go, NULL, 2);
	x->side = side;
	if (pthread_create(&t, NULL, race_side, x)) {
		/* Joining an id never set would crash here, not name the cause. */
		perror("rcm_ucma_abuse: race thread");
		exit(1);
	}
	pthread_barrier_wait(&x->go);
	mine(x);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&x->go);
}

static void destroy_from(struct race *x)
{
	destroy(x->from, x->id);
	destroy(x->to, x->id);
}

static void leave_too(struct race *x)
{
	__u32 reported;
	struct rdma_ucm_destroy_id l = { .response = ptr(&reported), .id = x->id };

	command(x->from, RDMA_USER_CM_CMD_LEAVE_MCAST, &l, sizeof(l), 4);
}

static void named_races(int rounds)
{
	struct rdma_ucm_event_resp ev;
	struct race x = { .from = files[0], .to = files[1] };
	int i;

	for (i = 0; i < rounds; i++) {
		/* MIGRATE_ID against DESTROY_ID, the id with an event queued. */
		x.id = create(x.from, 0x106);
		resolve(x.from, x.id, self, 7200);
		race(&x, migrate_side, destroy_from);

		/* RESOLVE re-entered while pending (the silent host), then
		 * destroyed with its events undelivered. */
		x.id = create(x.from, 0x106);
		resolve(x.from, x.id, silent, 7200);
		resolve(x.from, x.id, silent, 7200);
		resolve(x.from, x.id, self, 7200);
		destroy(x.from, x.id);
	}
	for (i = 0; i < rounds / 4; i++) {
		/* Two LEAVE_MCAST of one membership at once. */
		struct sockaddr_in g = { .sin_family = AF_INET };
		struct rdma_ucm_bind_ip b = { 0 };
		struct rdma_ucm_join_ip_mcast j = { .uid = 2 };
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr = self };
		__u32 udp = create(x.from, 0x111), mc = ~0u;

		b.id = udp;
		memcpy(&b.addr, &a, sizeof(a));
		command(x.from, RDMA_USER_CM_CMD_BIND_IP, &b, sizeof(b), 0);
		g.sin_addr.s_addr = htonl(0xef090a00 + (i & 3));
		memcpy(&j.addr, &g, sizeof(g));
		j.id = udp;
		j.response = ptr(&mc);
		command(x.from, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), 4);
		x.id = mc;
		race(&x, leave_side, leave_too);
		destroy(x.from, udp);
	}
	for (i = 0; i < rounds / 10; i++) {
		/* close() of a listener's file with a request undelivered. */
		int lf = open_cm();
		struct rdma_ucm_bind_ip b = { 0 };
		struct rdma_ucm_listen l = { .backlog = 4 };
		struct rdma_ucm_resolve_route rr = { .timeout_ms = 1000 };
		struct rdma_ucm_connect c = { 0 };
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr = self,
					 .sin_port = htons(7300) };
		__u32 lid = create(lf, 0x106), cid = create(x.to, 0x106);

		b.id = lid;
		memcpy(&b.addr, &a, sizeof(a));
		command(lf, RDMA_USER_CM_CMD_BIND_IP, &b, sizeof(b), 0);
		l.id = lid;
		command(lf, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0);
		resolve(x.to, cid, self, 7300);
		if (!event(x.to, &ev) && ev.event == 0) {
			rr.id = cid;
			command(x.to, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0);
			if (!event(x.to, &ev) && ev.event == 2) {
				c.id = cid;
				c.conn_param.qp_num = 0x100 + i;
				c.conn_param.valid = 1;
				c.conn_param.retry_count = 7;
				command(x.to, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), 0);
				usleep(20000);
			}
		}
		close_cm(lf);
		destroy(x.to, cid);
	}
}

struct worker {
	pthread_t thread;
	__u64 seed;
	unsigned long commands;
	struct track *track;
};

/* The page the kernel may write answers to, between two canary pages
 * whose near edges are checked after each command: a kernel write beyond
 * what a command asked for is caught, not silently absorbed. */
#define CANARY 0xa5
/* How many bytes of each canary page's near edge are checked. */
#define CANARY_EDGE 64
static unsigned char *answer_page(void)
{
	unsigned char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, CANARY, 3 * 4096);
	return p + 4096;
}

static int canaries_intact(const unsigned char *page)
{
	for (int i = 1; i <= CANARY_EDGE; i++)
		if (page[-i] != CANARY || page[4096 + i - 1] != CANARY)
			return 0;
	return 1;
}

/* Which canaries broke, and the command before: where to look. */
static void tell_broken_canaries(const unsigned char *page)
{
	const char *name = known_op_name(last.cmd);

	printf("  the last command: %s (%u), in %u, out %u; its first bytes:", name ? name : "?",
	       last.cmd, last.in, last.out);
	for (unsigned int i = 0; i < sizeof(last.head); i++)
		printf(" %02x", last.head[i]);
	printf("\n  the answer page at %p; canaries changed:", (void *)page);
	for (int i = -CANARY_EDGE; i < CANARY_EDGE; i++) {
		int at = i < 0 ? i : 4096 + i;

		if (page[at] != CANARY)
			printf(" %+d=%02x", at, page[at]);
	}
	printf("\n");
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct rng r = { .s = w->seed };
	unsigned char *scratch = answer_page();

	tracked_as(w->track);
	if (!scratch)
		return (void *)1;

	for (unsigned long i = 0; i < w->commands; i++) {
		if (below(&r, 20000) == 0) {
			/* A file closed with whatever it holds, and a new one. */
			int k = below(&r, FILES), old = files[k];

			files[k] = open_cm();
			close_cm(old);
			continue;
		}
		random_command(&r, scratch);
		if (!canaries_intact(scratch)) {
			printf("command %lu of thread seed %llu wrote outside its answer\n", i,
			       (unsigned long long)w->seed);
			tell_broken_canaries(scratch);
			return (void *)1;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct track *longest = NULL;
	unsigned long seed, total, over_1s = 0;
	struct worker *workers;
	__u64 start = now_us(), t;
	int threads, i, failed = 0;
	pthread_t dog;
	char b[16];

	if (argc != 6 || inet_pton(AF_INET, argv[4], &self) != 1 ||
	    inet_pton(AF_INET, argv[5], &peer) != 1) {
		fprintf(stderr, "usage: %s <seed> <commands> <threads> <self> <peer>\n", argv[0]);
		return 2;
	}
	seed = strtoul(argv[1], NULL, 0);
	total = strtoul(argv[2], NULL, 0);
	threads = atoi(argv[3]);
	if (threads < 1)
		threads = 1;
	silent.s_addr = (self.s_addr & htonl(0xffffff00)) | htonl(99);
	printf("seed %lu, %lu commands, %d threads\n", seed, total, threads);
	fflush(stdout);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	report_crashes();
	slow_pages(seed);
	ntracks = threads + 2;
	tracks = calloc(ntracks, sizeof(*tracks));
	for (i = 0; i < threads; i++)
		snprintf(tracks[i].name, sizeof(tracks[i].name), "thread %d", i);
	strcpy(tracks[threads].name, "main");
	strcpy(tracks[threads + 1].name, "race");
	tracked_as(&tracks[threads]);
	if (pthread_create(&dog, NULL, watchdog, (void *)seed)) {
		perror("watchdog");
		return 1;
	}
	for (i = 0; i < FILES; i++) {
		files[i] = open_cm();
		if (files[i] < 0) {
			perror("open /dev/infiniband/rdma_cm");
			return 1;
		}
	}
	named_races(200);
	printf("named races done (%lu commands, %llu s)\n", (unsigned long)atomic_load(&done),
	       (unsigned long long)(now_us() - start) / 1000000);
	fflush(stdout);
	workers = calloc(threads, sizeof(*workers));
	for (i = 0; i < threads; i++) {
		workers[i].seed = seed * 1000003 + i;
		workers[i].commands = total / threads;
		workers[i].track = &tracks[i];
		if (pthread_create(&workers[i].thread, NULL, work, &workers[i])) {
			perror("rcm_ucma_abuse: worker thread");
			return 1;
		}
	}
	for (i = 0; i < threads; i++) {
		void *ret;

		pthread_join(workers[i].thread, &ret);
		if (ret)
			failed = 1;
	}
	free(workers);
	/* The files go with every id left: watched, and timed. */
	t = now_us();
	for (i = 0; i < FILES; i++)
		close_cm(files[i]);
	printf("%lu commands written, the files closed in %llu ms\n",
	       (unsigned long)atomic_load(&done), (unsigned long long)(now_us() - t) / 1000);
	for (i = 0; i < ntracks; i++) {
		over_1s += tracks[i].over_1s;
		if (!longest || tracks[i].longest > longest->longest)
			longest = &tracks[i];
	}
	printf("%llu s in all; the longest call %llu ms (%s, %s), %lu over 1 s; %lu slow faults\n",
	       (unsigned long long)(now_us() - start) / 1000000,
	       (unsigned long long)longest->longest,
	       op_name(longest->longest_op, b, sizeof(b)), longest->name, over_1s,
	       (unsigned long)atomic_load(&slow_faults));
	return failed;
}
