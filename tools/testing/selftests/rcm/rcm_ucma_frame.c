// SPDX-License-Identifier: GPL-2.0
/*
 * rcm's /dev/infiniband/rdma_cm, its frame: the device, its ABI
 * version, and the command frame's errors as the in-tree rdma_ucm gives
 * them (a write shorter than the header, an unknown command, an input
 * beyond the write, GET_OPTION, responses too small, CONNECT shorter than
 * its oldest layout, bad port spaces and families, input that faults, a
 * write whose tail past the struct is unmapped),
 * and GET_EVENT / poll on a file with no events.
 *
 * A blocking GET_EVENT with no event waits until a signal interrupts it.
 *
 *   rcm_ucma_frame           prints one line per check, exits 0 if all pass
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>
#include "rcm_ucma_raw.h"

static int failures;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int expect_errno(int got, int want, const char *what)
{
	char line[200];

	snprintf(line, sizeof(line), "%s: %s (got %s)", what, strerror(want),
		 got ? strerror(got) : "success");
	check(got == want, line);
	return got == want;
}

int main(void)
{
	struct rdma_ucm_create_id create = { .ps = 0x107 };
	struct rdma_ucm_event_resp resp;
	struct rdma_ucm_get_event get = { .response = (__u64)(unsigned long)&resp };
	struct rdma_ucm_connect conn = { 0 };
	struct rdma_ucm_bind bind = { .addr_size = 28 };
	struct pollfd p;
	char ver[16] = "";
	unsigned char *pages;
	FILE *f;
	int fd;

	f = fopen("/sys/class/misc/rdma_cm/abi_version", "r");
	check(f && fgets(ver, sizeof(ver), f) && !strcmp(ver, "4\n"),
	      "abi_version is 4");
	if (f)
		fclose(f);
	fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	check(fd >= 0, "/dev/infiniband/rdma_cm opens");
	if (fd < 0)
		return 1;

	expect_errno(write(fd, &get, 7) < 0 ? errno : 0, EINVAL,
		     "a write shorter than the header");
	expect_errno(ucma_write(fd, 23, 0, 0, NULL, 0), EINVAL, "command 23");
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_GET_EVENT, 9, sizeof(resp), &get, 8),
		     EINVAL, "an input beyond the write");
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_GET_OPTION, 0, 0, NULL, 0), ENOSYS,
		     "GET_OPTION");
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_GET_EVENT, 8, 323, &get, 8), ENOSPC,
		     "GET_EVENT with room for 323 bytes");
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_GET_EVENT, 8, sizeof(resp), &get, 8),
		     EAGAIN, "GET_EVENT, non-blocking, no event");
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	check(poll(&p, 1, 0) == 0, "poll: no event");
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_CREATE_ID, sizeof(create), 3, &create,
			     sizeof(create)), ENOSPC, "CREATE_ID with room for 3 bytes");
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_CREATE_ID, sizeof(create), 4, &create,
			     sizeof(create)), EINVAL, "CREATE_ID in port space 0x107");
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_CONNECT, 279, 0, &conn, 279), EINVAL,
		     "CONNECT of 279 bytes");
	conn.conn_param.valid = 0;
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_CONNECT, sizeof(conn), 0, &conn,
			     sizeof(conn)), EINVAL, "CONNECT not marked valid");
	expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_BIND, sizeof(bind), 0, &bind,
			     sizeof(bind)), EINVAL, "BIND of family 0 stating 28 bytes");

	/* A BIND whose struct runs into an unmapped page: the handler reads
	 * its whole struct, so it faults, whatever `in` says. */
	pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (pages != MAP_FAILED && !munmap(pages + 4096, 4096)) {
		struct rdma_ucm_cmd_hdr hdr = {
			.cmd = RDMA_USER_CM_CMD_BIND, .in = 0, .out = 0,
		};
		unsigned char *at = pages + 4096 - sizeof(hdr) - 16;

		memcpy(at, &hdr, sizeof(hdr));
		expect_errno(write(fd, at, sizeof(hdr)) < 0 ? errno : 0, EFAULT,
			     "BIND whose struct faults");
		/* A write longer than its frame and struct, whose tail lies
		 * in the unmapped page: only the struct is read, so the
		 * command runs (and refuses family 0), no fault. */
		hdr.in = sizeof(bind);
		at = pages + 4096 - sizeof(hdr) - sizeof(bind);
		memcpy(at, &hdr, sizeof(hdr));
		memcpy(at + sizeof(hdr), &bind, sizeof(bind));
		expect_errno(write(fd, at, sizeof(hdr) + sizeof(bind) + 64) < 0 ? errno : 0,
			     EINVAL, "BIND whose write runs past its struct into an unmapped page");
	}
	close(fd);

	/* Blocking: GET_EVENT sleeps until the alarm (no SA_RESTART). */
	fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		struct sigaction sa = { .sa_handler = on_alarm };
		time_t t0 = time(NULL);

		sigaction(SIGALRM, &sa, NULL);
		alarm(2);
		expect_errno(ucma_write(fd, RDMA_USER_CM_CMD_GET_EVENT, 8, sizeof(resp), &get,
				     8), EINTR, "blocking GET_EVENT, interrupted by a signal");
		check(time(NULL) - t0 >= 1, "it waited for the signal");
		close(fd);
	}
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
