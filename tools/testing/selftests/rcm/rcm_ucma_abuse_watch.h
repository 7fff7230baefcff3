/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rcm_ucma_abuse's watchdog: every thread notes the call it is in (the
 * command, open() or close()) and since when; a call that takes over
 * HANG_MS is a hang, reported with the thread's kernel stack and every
 * thread's call, in the output and the kernel log, and the process exits 3.
 * Each thread also keeps its longest call for the closing summary.
 */
#ifndef RCM_UCMA_ABUSE_WATCH_H
#define RCM_UCMA_ABUSE_WATCH_H

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>

/* A write(), open() or close() that takes longer than this is a hang. */
#define HANG_MS 30000
#define OP_OPEN 100
#define OP_CLOSE 101

/* What a thread is doing, for the watchdog: the call it last started and
 * since when (0: none under way). Only the thread writes its own. */
struct track {
	char name[24];
	pid_t tid;
	atomic_int op;
	atomic_ullong since;
	__u64 longest;		/* ms */
	int longest_op;
	unsigned long over_1s;
};

static struct track *tracks;	/* the workers, then main, then a race's helper */
static int ntracks;
static __thread struct track *me;

/* Coarse: two clock reads per command stay cheap in a TCG guest, and a
 * tick is precision enough against HANG_MS. Never 0 this long after boot. */
static __u64 now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return t.tv_sec * 1000ULL + t.tv_nsec / 1000000;
}

static __u64 now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000ULL + t.tv_nsec / 1000;
}

static void tracked_as(struct track *t)
{
	t->tid = syscall(SYS_gettid);
	me = t;
}

static void begin(int op)
{
	if (!me)
		return;
	atomic_store(&me->op, op);
	atomic_store(&me->since, now_ms());
}

static void end(void)
{
	__u64 t;

	if (!me)
		return;
	t = now_ms() - atomic_load(&me->since);
	atomic_store(&me->since, 0);
	if (t >= 1000)
		me->over_1s++;
	if (t > me->longest) {
		me->longest = t;
		me->longest_op = atomic_load(&me->op);
	}
}

static const char *const op_names[] = {
	[RDMA_USER_CM_CMD_CREATE_ID] = "CREATE_ID",
	[RDMA_USER_CM_CMD_DESTROY_ID] = "DESTROY_ID",
	[RDMA_USER_CM_CMD_BIND_IP] = "BIND_IP",
	[RDMA_USER_CM_CMD_RESOLVE_IP] = "RESOLVE_IP",
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = "RESOLVE_ROUTE",
	[RDMA_USER_CM_CMD_QUERY_ROUTE] = "QUERY_ROUTE",
	[RDMA_USER_CM_CMD_CONNECT] = "CONNECT",
	[RDMA_USER_CM_CMD_LISTEN] = "LISTEN",
	[RDMA_USER_CM_CMD_ACCEPT] = "ACCEPT",
	[RDMA_USER_CM_CMD_REJECT] = "REJECT",
	[RDMA_USER_CM_CMD_DISCONNECT] = "DISCONNECT",
	[RDMA_USER_CM_CMD_INIT_QP_ATTR] = "INIT_QP_ATTR",
	[RDMA_USER_CM_CMD_GET_EVENT] = "GET_EVENT",
	[RDMA_USER_CM_CMD_GET_OPTION] = "GET_OPTION",
	[RDMA_USER_CM_CMD_SET_OPTION] = "SET_OPTION",
	[RDMA_USER_CM_CMD_NOTIFY] = "NOTIFY",
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = "JOIN_IP_MCAST",
	[RDMA_USER_CM_CMD_LEAVE_MCAST] = "LEAVE_MCAST",
	[RDMA_USER_CM_CMD_MIGRATE_ID] = "MIGRATE_ID",
	[RDMA_USER_CM_CMD_QUERY] = "QUERY",
	[RDMA_USER_CM_CMD_BIND] = "BIND",
	[RDMA_USER_CM_CMD_RESOLVE_ADDR] = "RESOLVE_ADDR",
	[RDMA_USER_CM_CMD_JOIN_MCAST] = "JOIN_MCAST",
};

/* The call's name, NULL for a command number without one (no formatting:
 * the fatal-signal report uses it too). */
static const char *known_op_name(int op)
{
	if (op == OP_OPEN)
		return "open";
	if (op == OP_CLOSE)
		return "close";
	if (op >= 0 && op < (int)(sizeof(op_names) / sizeof(op_names[0])))
		return op_names[op];
	return NULL;
}

static const char *op_name(int op, char *buf, size_t len)
{
	const char *known = known_op_name(op);

	if (known)
		return known;
	snprintf(buf, len, "command %d", op);
	return buf;
}

/* Writes `v` in hex to `out` (async-signal-safe), answers the length. */
static int hex(char *out, unsigned long v)
{
	char t[16];
	int n = 0, k = 0;

	do {
		t[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	out[k++] = '0';
	out[k++] = 'x';
	while (n)
		out[k++] = t[--n];
	return k;
}

/* A fatal signal in the campaign: which thread, in which call, at which
 * address, on stdout and in the kernel log, so that a crash that a replay
 * of the seed does not repeat still names where it was. Only
 * async-signal-safe calls; the process then dies of the signal as it
 * would have. */
static void crashed(int sig, siginfo_t *info, void *uctx)
{
	char line[160];
	const char *what = me ? me->name : "a thread not tracked";
	const char *name = me ? known_op_name(atomic_load(&me->op)) : NULL;
	int n = 0, fd;

	(void)uctx;
#define PUT(s) do { for (const char *c = (s); *c && n < 120; c++) line[n++] = *c; } while (0)
	PUT("rcm_ucma_abuse: signal ");
	n += hex(line + n, sig);
	PUT(" code ");
	n += hex(line + n, info->si_code);
	PUT(" at ");
	n += hex(line + n, (unsigned long)info->si_addr);
	PUT(" in ");
	PUT(what);
	PUT(me && atomic_load(&me->since) ? " during " : " after ");
	PUT(name ? name : "an unnamed command");
#undef PUT
	line[n++] = '\n';
	if (write(1, line, n) < 0)
		_exit(128 + sig);
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd >= 0 && write(fd, line, n) < 0)
		_exit(128 + sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Installs `crashed` for the signals a wild access or an abort raises. It
 * runs on the thread's own stack: a thread whose stack is smashed may die
 * unreported. */
static void report_crashes(void)
{
	struct sigaction a = { .sa_sigaction = crashed, .sa_flags = SA_SIGINFO | SA_RESETHAND };
	int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

	for (unsigned int i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &a, NULL);
}

/* How long a call started at `since` (0: none) has run; 0 for one that
 * started after `now` was read. */
static __u64 age(__u64 now, __u64 since)
{
	return since && now > since ? now - since : 0;
}

/* A hung thread: where the kernel holds it, every thread's call, then the
 * verdict, last for the callers' tail and in the kernel log too (a thread
 * that cannot be woken keeps the process from exiting). */
static void hung(struct track *t, int op, __u64 ms, __u64 now, unsigned long seed)
{
	char path[64], line[256], b[16];
	FILE *f;
	int fd, k;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", t->tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		printf("  %s", line);
	if (f)
		fclose(f);
	printf("threads:");
	for (k = 0; k < ntracks; k++) {
		__u64 since = atomic_load(&tracks[k].since);
		const char *name = op_name(atomic_load(&tracks[k].op), b, sizeof(b));

		if (since)
			printf(" %s in %s %llu ms;", tracks[k].name, name,
			       (unsigned long long)age(now, since));
		else
			printf(" %s idle (last %s);", tracks[k].name, name);
	}
	snprintf(line, sizeof(line), "rcm_ucma_abuse: %s hung in %s for %llu s (seed %lu)\n",
		 t->name, op_name(op, b, sizeof(b)), (unsigned long long)ms / 1000, seed);
	printf("\n%s", line);
	fflush(stdout);
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd >= 0 && write(fd, line, strlen(line)) < 0)
		perror("/dev/kmsg");
	_exit(3);
}

static void *watchdog(void *arg)
{
	for (;;) {
		__u64 now;

		sleep(1);
		now = now_ms();
		for (int k = 0; k < ntracks; k++) {
			__u64 ms = age(now, atomic_load(&tracks[k].since));

			if (ms > HANG_MS)
				hung(&tracks[k], atomic_load(&tracks[k].op), ms, now,
				     (unsigned long)arg);
		}
	}
	return NULL;
}

#endif
