// SPDX-License-Identifier: GPL-2.0
/*
 * Hardening checks of /dev/infiniband/rdma_cm (issue 27), commands written
 * raw (no librdmacm), one subcommand per scenario. Every wait is bounded:
 * events are read after poll() with a timeout, and an alarm() ends a
 * subcommand that still hangs. Each check prints "ok: ..." or "FAIL: ...";
 * the exit status is non-zero if any failed.
 *
 *   rcm_harden bind-refused [--expect-no-device] <addr0> <addr1> <port> [<peer1>]
 *	A refused bind (EADDRINUSE) leaves the id without a device: QUERY
 *	ADDR answers printed ("info:" lines, raw; "cmp:" lines, classified
 *	so that two hosts' runs compare line by line), then the same id binds
 *	on the second device (addr1: 6.12 answers ENODEV, having kept the
 *	first bind's network device); a second bind of a bound id is EINVAL
 *	and leaves its device alone; with <peer1>, an id whose bind was
 *	refused resolves <peer1> on the second wire and is destroyed.
 *	--expect-no-device: a refused id must report node_guid 0, as 6.12
 *	does (it releases the device on error).
 *   rcm_harden hold-refused <addr> <port> <fifo>
 *	Binds id A, has id B's bind refused, prints "ready", reads one line
 *	from <fifo> (the caller removes the device meanwhile; at most 120 s),
 *	then destroys B and A.
 *   rcm_harden churn <addr1> <peer1> <seconds> <threads>
 *	Threads, each on its own file, create ids and bind, resolve (address
 *	and route), listen on the wildcard or bind and listen on addr1, then
 *	destroy; every ~200 ms a file is closed with a live id. Errors are
 *	counted by command and errno (the device may be going); only a failed
 *	DESTROY_ID or a malformed command (EFAULT, EBADF, ENOSYS) fails.
 *   rcm_harden uffd-stall <self0> <peer0> <hold_seconds>
 *	A GET_EVENT whose response buffer is on a userfaultfd page whose
 *	fault is not served: prints "stalled" once the kernel's copy faulted,
 *	holds the fault <hold_seconds>, serves it (UFFDIO_ZEROPAGE) and
 *	checks that GET_EVENT then returned the ADDR_RESOLVED event.
 *   rcm_harden fill <max> <fifo>
 *	Creates ids on one file until CREATE_ID fails or <max> exist, prints
 *	the count and the errno ("fill: <n> ids, then <errno>", "filled"),
 *	holds them until <fifo> gives a line (at most 120 s).
 *   rcm_harden cmds <self0> <count> <limit_ms>
 *	<count> rounds of CREATE_ID, BIND, QUERY ADDR, DESTROY_ID on a fresh
 *	file; fails if they took more than <limit_ms> (run beside uffd-stall:
 *	another user's fault must not stall this one).
 *   rcm_harden join <self0> <group> <seconds>
 *	A UD id bound to <self0> joins the IPv4 group <group> (on RoCE v2 an
 *	IGMP join, which takes rtnl): prints "joining", then how long
 *	JOIN_MCAST took; MULTICAST_JOIN must follow within <seconds>; the id
 *	is destroyed (the IGMP leave).
 */
#define _GNU_SOURCE
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "rcm_harden.h"

/* ---- bind-refused ---- */

static struct sockaddr_in bind0, bind1;	/* addr0:port, addr1:port */

/* One side of a QUERY ADDR answer: raw (info) and classified (cmp), the
 * address as addr0, addr1 or any, the port as port, port+1 or 0. */
static void describe(char *raw, char *cls, size_t len, const char *side,
		     const struct __kernel_sockaddr_storage *ss, unsigned int size)
{
	const struct sockaddr_in *a = (const void *)ss;
	unsigned int port = ntohs(a->sin_port), base = ntohs(bind0.sin_port);
	char ip[INET_ADDRSTRLEN] = "-";

	if (ss->ss_family != AF_INET) {
		snprintf(raw, len, "%s family %u size %u", side, ss->ss_family, size);
		snprintf(cls, len, "%s family %u", side, ss->ss_family);
		return;
	}
	inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
	snprintf(raw, len, "%s family %u size %u %s:%u", side, ss->ss_family, size, ip, port);
	snprintf(cls, len, "%s family %u %s port %s", side, ss->ss_family,
		 !a->sin_addr.s_addr ? "any" :
		 a->sin_addr.s_addr == bind0.sin_addr.s_addr ? "addr0" :
		 a->sin_addr.s_addr == bind1.sin_addr.s_addr ? "addr1" : "other",
		 !port ? "0" : port == base ? "port" : port == base + 1 ? "port+1" : "other");
}

/* QUERY ADDR of `id`, printed; its node_guid in *guid (0 if it failed). */
static void report(int fd, __u32 id, const char *who, __u64 *guid)
{
	struct rdma_ucm_query_addr_resp r;
	char src[160], dst[160], csrc[160], cdst[160];
	int e = query_addr(fd, id, &r);

	*guid = 0;
	check(!e, "QUERY ADDR of %s (%s)", who, err_name(e));
	if (e) {
		printf("cmp: %s: QUERY ADDR %s\n", who, err_name(e));
		return;
	}
	*guid = r.node_guid;
	describe(src, csrc, sizeof(src), "src", &r.src_addr, r.src_size);
	describe(dst, cdst, sizeof(dst), "dst", &r.dst_addr, r.dst_size);
	printf("info: %s: node_guid 0x%016llx pkey 0x%04x port_num %u ibdev_index %u\n", who,
	       (unsigned long long)r.node_guid, r.pkey, r.port_num, r.ibdev_index);
	printf("info: %s: %s, %s\n", who, src, dst);
	printf("cmp: %s: %s port_num %u pkey 0x%04x\n", who,
	       r.node_guid ? "guid-set" : "guid-zero", r.port_num, r.pkey);
	printf("cmp: %s: %s, %s\n", who, csrc, cdst);
}

static void expect_errno(int got, int want, const char *what)
{
	check(got == want, "%s (expected %s, got %s)", what, err_name(want), err_name(got));
	printf("cmp: %s: %s\n", what, err_name(got));
}

/*
 * An id whose bind on addr0:port was refused resolves a destination on the
 * second wire (`peer1`) from a wildcard source: the device it ends on is
 * the resolution's (6.12's answers are the reference), and its tracking
 * entry goes with it at destroy (one a refused bind left on another device
 * would WARN at destroy, then be freed under `rdma res show cm_id`).
 */
static void refused_then_resolved(int fd, __u64 guid_a, const char *peer1)
{
	struct sockaddr_in any = { .sin_family = AF_INET }, dst = ipv4(peer1, 7699);
	struct rdma_ucm_event_resp ev;
	__u64 guid;
	__u32 d = new_id(fd, 4, "D");
	int e;

	expect_errno(bind_to(fd, d, &bind0), EADDRINUSE, "D binds addr0:port: refused");
	e = resolve_addr(fd, d, &any, &dst, 2000);
	printf("cmp: D resolves peer1 from a wildcard: %s\n", err_name(e));
	if (!e) {
		e = next_event(fd, &ev, 5000);
		printf("cmp: D's event: %s, event %u status %d\n", err_name(e),
		       e ? 0 : ev.event, e ? 0 : ev.status);
	}
	/* 6.12 resolves through the network device the refused bind
	 * translated (the peer answers ARP for its second address there):
	 * compared, not judged. */
	report(fd, d, "D after its resolution", &guid);
	printf("cmp: D is on A's device: %s\n", guid == guid_a ? "yes" : "no");
	expect_errno(destroy_id(fd, d), 0, "DESTROY_ID of D");
}

static int bind_refused(int argc, char **argv)
{
	int expect_no_device = 0, fd;
	const char *peer1;
	struct sockaddr_in c0, c1;
	__u64 guid_a, guid_b, guid_c, guid;
	__u32 a, b, c;

	if (argc > 0 && !strcmp(argv[0], "--expect-no-device")) {
		expect_no_device = 1;
		argc--;
		argv++;
	}
	if (argc != 3 && argc != 4)
		return usage("bind-refused [--expect-no-device] <addr0> <addr1> <port> [<peer1>]");
	peer1 = argc == 4 ? argv[3] : NULL;
	bind0 = ipv4(argv[0], atoi(argv[2]));
	bind1 = ipv4(argv[1], atoi(argv[2]));
	c0 = bind0;
	c1 = bind1;
	c0.sin_port = c1.sin_port = htons(ntohs(bind0.sin_port) + 1);
	watchdog("bind-refused", 60);
	fd = cm_open(0);

	a = new_id(fd, 1, "A");
	b = new_id(fd, 2, "B");
	c = new_id(fd, 3, "C");
	expect_errno(bind_to(fd, a, &bind0), 0, "A binds addr0:port");
	report(fd, a, "A on addr0:port", &guid_a);
	check(guid_a != 0, "A has a device (node_guid 0x%016llx)", (unsigned long long)guid_a);
	expect_errno(bind_to(fd, b, &bind0), EADDRINUSE, "B binds addr0:port too: refused");
	report(fd, b, "B after its refused bind", &guid);
	if (expect_no_device)
		check(guid == 0, "B's refused bind left it without a device (node_guid 0x%016llx)",
		      (unsigned long long)guid);
	/* 6.12 keeps the network device the refused bind translated, so
	 * this one finds no device there (ENODEV): compared, not judged. */
	printf("cmp: B then binds addr1:port (the second device): %s\n",
	       err_name(bind_to(fd, b, &bind1)));
	report(fd, b, "B after its second bind", &guid_b);
	if (expect_no_device)
		check(guid_b == 0 || guid_b != guid_a,
		      "B is not left on the first device: node_guid 0x%016llx, A's 0x%016llx",
		      (unsigned long long)guid_b, (unsigned long long)guid_a);
	report(fd, a, "A after B's binds", &guid);
	check(guid == guid_a, "A's device did not change");
	if (peer1)
		refused_then_resolved(fd, guid_a, peer1);

	expect_errno(bind_to(fd, c, &c1), 0, "C binds addr1:port+1");
	report(fd, c, "C on addr1:port+1", &guid_c);
	expect_errno(bind_to(fd, c, &c0), EINVAL, "C binds again, addr0:port+1: refused");
	report(fd, c, "C after its second bind", &guid);
	check(guid == guid_c && guid_c != 0,
	      "C's device did not change: node_guid 0x%016llx, before 0x%016llx",
	      (unsigned long long)guid, (unsigned long long)guid_c);

	expect_errno(destroy_id(fd, c), 0, "DESTROY_ID of C");
	expect_errno(destroy_id(fd, b), 0, "DESTROY_ID of B");
	expect_errno(destroy_id(fd, a), 0, "DESTROY_ID of A");
	close(fd);
	printf("%d failure(s)\n", atomic_load(&failures));
	return failures ? 1 : 0;
}

/* ---- hold-refused ---- */

static void interrupted(int sig)
{
	(void)sig;
}

static int hold_refused(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = interrupted };	/* no SA_RESTART */
	struct rdma_ucm_event_resp ev;
	struct sockaddr_in at;
	int fd, ff, removal_a = 0;
	char line[64];
	__u64 guid;
	__u32 a, b;
	ssize_t n;

	if (argc != 3)
		return usage("hold-refused <addr> <port> <fifo>");
	at = bind0 = bind1 = ipv4(argv[0], atoi(argv[1]));
	fd = cm_open(0);
	a = new_id(fd, 1, "A");
	b = new_id(fd, 2, "B");
	expect_errno(bind_to(fd, a, &at), 0, "A binds addr:port");
	expect_errno(bind_to(fd, b, &at), EADDRINUSE, "B binds addr:port too: refused");
	report(fd, b, "B after its refused bind", &guid);
	printf("ready\n");
	fflush(stdout);

	/* The caller removes the device, then writes a line. */
	sigaction(SIGALRM, &sa, NULL);
	alarm(120);
	ff = open(argv[2], O_RDONLY | O_CLOEXEC);
	n = ff < 0 ? -1 : read(ff, line, sizeof(line));
	check(n > 0, "a line from %s within 120 s (%s)", argv[2], n > 0 ? "read" : err_name(errno));
	alarm(0);
	if (ff >= 0)
		close(ff);

	while (!next_event(fd, &ev, 0)) {
		printf("info: event %s (%u) for %s, status %d\n", event_name(ev.event), ev.event,
		       ev.id == a ? "A" : ev.id == b ? "B" : "an unknown id", (int)ev.status);
		removal_a |= ev.id == a && ev.event == EV_DEVICE_REMOVAL;
	}
	check(removal_a, "A heard DEVICE_REMOVAL");
	watchdog("hold-refused's destroys", 60);
	expect_errno(destroy_id(fd, b), 0, "DESTROY_ID of B (its bind refused)");
	expect_errno(destroy_id(fd, a), 0, "DESTROY_ID of A");
	close(fd);
	printf("%d failure(s)\n", atomic_load(&failures));
	return failures ? 1 : 0;
}

/* ---- churn ---- */

enum {
	OP_CREATE, OP_BIND, OP_RESOLVE_ADDR, OP_RESOLVE_ROUTE, OP_LISTEN, OP_GET_EVENT,
	OP_DESTROY, OPS
};
static const char *op_names[OPS] = {
	"CREATE_ID", "BIND", "RESOLVE_ADDR", "RESOLVE_ROUTE", "LISTEN", "GET_EVENT", "DESTROY_ID",
};
#define ERRS 140

struct churner {
	pthread_t thread;
	int index;
	unsigned long ops, ids, live_closes, waits_timed_out;
	unsigned long errors[OPS][ERRS];
	unsigned long events[EV_MAX];
};

static struct sockaddr_in churn_self, churn_peer, churn_any;
static double churn_end;

/* Counts one command's result; a malformed command is our bug. */
static int counted(struct churner *c, int op, int e)
{
	c->ops++;
	if (e)
		c->errors[op][e < ERRS ? e : ERRS - 1]++;
	if (e == EFAULT || e == EBADF || e == ENOSYS)
		check(0, "thread %d: %s answered %s", c->index, op_names[op], err_name(e));
	return e;
}

/* The next event of the thread's file within 1 s, counted. */
static int await_event(struct churner *c, int fd, struct rdma_ucm_event_resp *ev)
{
	int e = next_event(fd, ev, 1000);

	if (e == ETIMEDOUT) {
		c->waits_timed_out++;
		return e;
	}
	if (!counted(c, OP_GET_EVENT, e))
		c->events[ev->event < EV_MAX ? ev->event : EV_MAX - 1]++;
	return e;
}

/* Consumes every event already queued (DEVICE_REMOVAL among them). */
static void drain(struct churner *c, int fd)
{
	struct rdma_ucm_event_resp ev;
	int e;

	while ((e = next_event(fd, &ev, 0)) != ETIMEDOUT) {
		if (counted(c, OP_GET_EVENT, e))
			break;
		c->events[ev.event < EV_MAX ? ev.event : EV_MAX - 1]++;
	}
}

static void *churn_thread(void *arg)
{
	struct churner *c = arg;
	__u64 rng = 0x9e3779b97f4a7c15ULL * (c->index + 1);
	int fd = cm_open(O_NONBLOCK);
	double last_reopen = now_s();
	struct rdma_ucm_event_resp ev;
	__u32 id;
	int e;

	while (now_s() < churn_end) {
		/* xorshift64 */
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		if (counted(c, OP_CREATE, create_id(fd, c->ids, &id))) {
			usleep(1000);
			continue;
		}
		c->ids++;
		switch (rng % 4) {
		case 0:
			counted(c, OP_BIND, bind_to(fd, id, &churn_self));
			break;
		case 1:
			e = counted(c, OP_RESOLVE_ADDR,
				    resolve_addr(fd, id, &churn_self, &churn_peer, 500));
			if (e || await_event(c, fd, &ev) || ev.event != EV_ADDR_RESOLVED)
				break;
			if (!counted(c, OP_RESOLVE_ROUTE, resolve_route(fd, id, 500)))
				await_event(c, fd, &ev);
			break;
		case 2:
			if (!counted(c, OP_BIND, bind_to(fd, id, &churn_any)))
				counted(c, OP_LISTEN, listen_id(fd, id, 4));
			break;
		default:
			if (!counted(c, OP_BIND, bind_to(fd, id, &churn_self)))
				counted(c, OP_LISTEN, listen_id(fd, id, 4));
			break;
		}
		drain(c, fd);
		if (now_s() - last_reopen >= 0.2) {
			/* close() takes the live id with it */
			close(fd);
			fd = cm_open(O_NONBLOCK);
			c->live_closes++;
			last_reopen = now_s();
			continue;
		}
		e = destroy_id(fd, id);
		c->ops++;
		if (e) {
			check(0, "thread %d: DESTROY_ID of id %u: %s", c->index, id, err_name(e));
			break;
		}
	}
	close(fd);
	return NULL;
}

static int churn(int argc, char **argv)
{
	unsigned long ops = 0, ids = 0, closes = 0, timeouts = 0, events[EV_MAX] = { 0 };
	static unsigned long errors[OPS][ERRS];
	struct churner *c;
	int seconds, threads, i, j, k;
	struct timespec deadline;

	seconds = argc == 4 ? atoi(argv[2]) : 0;
	threads = argc == 4 ? atoi(argv[3]) : 0;
	if (seconds <= 0 || threads <= 0)
		return usage("churn <addr1> <peer1> <seconds> <threads>");
	churn_self = ipv4(argv[0], 0);
	churn_peer = ipv4(argv[1], 7999);
	churn_any = ipv4("0.0.0.0", 0);
	watchdog("churn", seconds + 120);
	churn_end = now_s() + seconds;
	c = calloc(threads, sizeof(*c));
	if (!c)
		return 1;
	for (i = 0; i < threads; i++) {
		c[i].index = i;
		if (pthread_create(&c[i].thread, NULL, churn_thread, &c[i])) {
			check(0, "thread %d started", i);
			return 1;
		}
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += seconds + 60;
	for (i = 0; i < threads; i++) {
		int e = pthread_timedjoin_np(c[i].thread, NULL, &deadline);

		check(!e, "thread %d ended within 60 s of the end (%s)", i, err_name(e));
		if (e)
			return 1;	/* a thread stuck in the kernel */
		ops += c[i].ops;
		ids += c[i].ids;
		closes += c[i].live_closes;
		timeouts += c[i].waits_timed_out;
		for (j = 0; j < EV_MAX; j++)
			events[j] += c[i].events[j];
		for (j = 0; j < OPS; j++)
			for (k = 0; k < ERRS; k++)
				errors[j][k] += c[i].errors[j][k];
	}
	printf("churn: %d threads, %lu operations, %lu ids, %lu files closed with a live id, "
	       "%lu event waits timed out\n", threads, ops, ids, closes, timeouts);
	for (j = 0; j < EV_MAX; j++)
		if (events[j])
			printf("event %s (%d): %lu\n", event_name(j), j, events[j]);
	for (j = 0; j < OPS; j++)
		for (k = 0; k < ERRS; k++)
			if (errors[j][k])
				printf("error %s %s: %lu\n", op_names[j], err_name(k), errors[j][k]);
	check(ids > 0, "ids were created");
	free(c);
	printf("%d failure(s)\n", atomic_load(&failures));
	return failures ? 1 : 0;
}

/* ---- uffd-stall ---- */

struct stall {
	int fd;
	struct rdma_ucm_event_resp *ev;	/* on the registered page */
	atomic_int done;
	int err;
};

static void *stalled_get_event(void *arg)
{
	struct stall *s = arg;

	s->err = get_event(s->fd, s->ev);
	atomic_store(&s->done, 1);
	return NULL;
}

static int uffd_stall(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zero = { .mode = 0 };
	struct rdma_ucm_event_resp ev;
	struct sockaddr_in self, peer;
	struct stall s = { 0 };
	struct pollfd p;
	struct uffd_msg msg;
	struct timespec deadline;
	pthread_t thread;
	int hold, uffd, e, faulted;
	char *pages;
	__u32 id;

	hold = argc == 3 ? atoi(argv[2]) : -1;
	if (hold < 0)
		return usage("uffd-stall <self0> <peer0> <hold_seconds>");
	self = ipv4(argv[0], 0);
	peer = ipv4(argv[1], 7998);
	watchdog("uffd-stall", hold + 90);

	/* An ADDR_RESOLVED event waiting in the file. */
	s.fd = cm_open(O_NONBLOCK);
	id = new_id(s.fd, 0x55, "the id");
	e = resolve_addr(s.fd, id, &self, &peer, 2000);
	check(!e, "RESOLVE_ADDR %s -> %s (%s)", argv[0], argv[1], err_name(e));
	p = (struct pollfd){ .fd = s.fd, .events = POLLIN };
	check(poll(&p, 1, 10000) == 1, "an event is readable within 10 s");
	if (failures)
		return 1;

	/* Two pages whose faults nobody serves (kernel faults included: no
	 * UFFD_USER_MODE_ONLY, which needs CAP_SYS_PTRACE or the sysctl). */
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	check(uffd >= 0, "userfaultfd (%s)", uffd >= 0 ? "opened" : err_name(errno));
	if (uffd < 0)
		return 1;
	check(!ioctl(uffd, UFFDIO_API, &api), "UFFDIO_API");
	pages = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(pages != MAP_FAILED, "mmap of 2 pages");
	if (pages == MAP_FAILED)
		return 1;
	reg.range.start = ptr(pages);
	reg.range.len = 2 * PAGE;
	check(!ioctl(uffd, UFFDIO_REGISTER, &reg), "UFFDIO_REGISTER, missing mode");
	if (failures)
		return 1;

	/* GET_EVENT answers into the first page: its copy to user faults. */
	s.ev = (struct rdma_ucm_event_resp *)pages;
	if (pthread_create(&thread, NULL, stalled_get_event, &s)) {
		check(0, "GET_EVENT thread started");
		return 1;
	}
	p = (struct pollfd){ .fd = uffd, .events = POLLIN };
	faulted = poll(&p, 1, 5000) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		  msg.event == UFFD_EVENT_PAGEFAULT &&
		  msg.arg.pagefault.address - ptr(pages) < PAGE;
	sleep(1);
	check(faulted && !atomic_load(&s.done),
	      "GET_EVENT's copy to user faulted on the registered page and waits");
	if (!faulted || atomic_load(&s.done))
		return 1;
	printf("stalled\n");
	fflush(stdout);

	sleep(hold);
	check(!atomic_load(&s.done), "GET_EVENT still waits on the fault after %d s", hold);
	/* Serve the fault: a zero page mapped wakes the waiter, whose write
	 * then copies the page on write. */
	zero.range.start = ptr(pages);
	zero.range.len = PAGE;
	e = ioctl(uffd, UFFDIO_ZEROPAGE, &zero) ? errno : 0;
	check(!e, "UFFDIO_ZEROPAGE serves the fault (%s)", err_name(e));
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	e = pthread_timedjoin_np(thread, NULL, &deadline);
	if (e) {
		/* Closing the userfaultfd wakes every waiter too. */
		close(uffd);
		uffd = -1;
		deadline.tv_sec += 10;
		e = pthread_timedjoin_np(thread, NULL, &deadline);
	}
	check(!e, "GET_EVENT returned once the fault was served (%s)", err_name(e));
	if (e)
		return 1;
	ev = *s.ev;
	check(!s.err && ev.event == EV_ADDR_RESOLVED && ev.id == id && ev.uid == 0x55,
	      "GET_EVENT succeeded with ADDR_RESOLVED for the id (%s, event %u, id %u)",
	      err_name(s.err), ev.event, ev.id);
	e = destroy_id(s.fd, id);
	check(!e, "DESTROY_ID (%s)", err_name(e));
	close(s.fd);
	if (uffd >= 0)
		close(uffd);
	munmap(pages, 2 * PAGE);
	printf("%d failure(s)\n", atomic_load(&failures));
	return failures ? 1 : 0;
}

/* ---- cmds ---- */

static int cmds(int argc, char **argv)
{
	struct rdma_ucm_query_addr_resp r;
	struct sockaddr_in self;
	int count, limit, fd, i, e = 0;
	double start;
	long ms;
	__u32 id;

	count = argc == 3 ? atoi(argv[1]) : 0;
	limit = argc == 3 ? atoi(argv[2]) : 0;
	if (count <= 0 || limit <= 0)
		return usage("cmds <self0> <count> <limit_ms>");
	self = ipv4(argv[0], 0);
	watchdog("cmds", limit / 1000 + 120);
	start = now_s();
	fd = cm_open(0);
	for (i = 0; i < count; i++) {
		const char *what = "BIND";
		int d;

		e = create_id(fd, i, &id);
		if (e) {
			check(0, "round %d: CREATE_ID: %s", i, err_name(e));
			break;
		}
		e = bind_to(fd, id, &self);
		if (!e) {
			what = "QUERY ADDR";
			e = query_addr(fd, id, &r);
		}
		d = destroy_id(fd, id);
		if (!e && d) {
			what = "DESTROY_ID";
			e = d;
		}
		if (e) {
			check(0, "round %d: %s: %s", i, what, err_name(e));
			break;
		}
	}
	close(fd);
	ms = (long)((now_s() - start) * 1000);
	printf("cmds: %d rounds in %ld ms\n", i, ms);
	check(!e && ms <= limit, "%d rounds of CREATE_ID, BIND, QUERY ADDR, DESTROY_ID within %d ms",
	      count, limit);
	return failures ? 1 : 0;
}

/* ---- fill ---- */

/*
 * Creates ids on one file until CREATE_ID fails or <max> exist (the caller
 * runs it inside a small memory cgroup: its ids must count there), prints
 * how many and the errno, then holds them until <fifo> gives a line (or
 * 120 s), and closes the file.
 */
static int fill(int argc, char **argv)
{
	int fd, ff, e = 0;
	long max, n;
	char line[16];
	__u32 id;

	max = argc == 2 ? atol(argv[0]) : 0;
	if (max <= 0)
		return usage("fill <max> <fifo>");
	fd = cm_open(0);
	for (n = 0; n < max; n++) {
		e = create_id(fd, n, &id);
		if (e)
			break;
		if (n && n % 10000 == 0)
			printf("fill: %ld ids so far\n", n);
	}
	printf("fill: %ld ids, then %s\n", n, e ? err_name(e) : "the limit");
	printf("filled\n");
	alarm(120);
	ff = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (ff >= 0 && read(ff, line, sizeof(line)) < 0)
		perror("read");
	alarm(0);
	close(fd);
	return 0;
}

/* ---- join ---- */

static int join(int argc, char **argv)
{
	struct rdma_ucm_create_id_resp resp = { .id = ~0u }, mc = { .id = ~0u };
	struct rdma_ucm_create_id c = {
		.uid = 1, .response = ptr(&resp), .ps = PS_UDP, .qp_type = QPT_UD,
	};
	struct rdma_ucm_join_mcast j = {
		.response = ptr(&mc), .uid = 2, .addr_size = sizeof(struct sockaddr_in),
	};
	struct rdma_ucm_event_resp ev;
	struct sockaddr_in self, group;
	int fd, e, seconds;
	double start;

	seconds = argc == 3 ? atoi(argv[2]) : 0;
	if (seconds <= 0)
		return usage("join <self0> <group> <seconds>");
	self = ipv4(argv[0], 0);
	group = ipv4(argv[1], 0);
	watchdog("join", seconds + 60);
	fd = cm_open(0);
	e = command(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(resp));
	check(!e, "CREATE_ID of a UD id (%s)", err_name(e));
	e = e ? e : bind_to(fd, resp.id, &self);
	check(!e, "BIND to %s (%s)", argv[0], err_name(e));
	if (e)
		return 1;
	j.id = resp.id;
	memcpy(&j.addr, &group, sizeof(group));
	printf("joining\n");
	start = now_s();
	e = command(fd, RDMA_USER_CM_CMD_JOIN_MCAST, &j, sizeof(j), sizeof(mc));
	printf("join: JOIN_MCAST took %ld ms\n", (long)((now_s() - start) * 1000));
	check(!e, "JOIN_MCAST %s (%s)", argv[1], err_name(e));
	e = e ? e : next_event(fd, &ev, seconds * 1000);
	check(!e && ev.event == EV_MULTICAST_JOIN && ev.id == mc.id,
	      "MULTICAST_JOIN within %d s (%s, event %s)", seconds, err_name(e),
	      event_name(ev.event));
	e = destroy_id(fd, resp.id);
	check(!e, "DESTROY_ID of the member (%s)", err_name(e));
	close(fd);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} subcommands[] = {
		{ "bind-refused", bind_refused }, { "hold-refused", hold_refused },
		{ "churn", churn }, { "uffd-stall", uffd_stall }, { "cmds", cmds },
		{ "fill", fill }, { "join", join },
	};
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].run(argc - 2, argv + 2);
	return usage("bind-refused|hold-refused|churn|uffd-stall|cmds|fill|join ...");
}
