/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw /dev/infiniband/rdma_cm commands for the test programs that write
 * them without librdmacm (rcm_ucma_cmds.c, rcm_ucma_frame.c,
 * rcm_harden.c): one write() of the command header and its input.
 */
#ifndef RCM_UCMA_RAW_H
#define RCM_UCMA_RAW_H

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>

/* Writes a header stating `in` and `out`, then `body_len` bytes of `body`
 * (at most 512; `in` may state another length); 0 or the errno. */
static inline int ucma_write(int fd, __u32 cmd, __u16 in, __u16 out, const void *body,
			     size_t body_len)
{
	unsigned char buf[sizeof(struct rdma_ucm_cmd_hdr) + 512];
	struct rdma_ucm_cmd_hdr hdr = { .cmd = cmd, .in = in, .out = out };

	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), body, body_len);
	if (write(fd, buf, sizeof(hdr) + body_len) < 0)
		return errno;
	return 0;
}

/* One command with its input; 0 or the errno of the write. */
static inline int command(int fd, __u32 cmd, const void *in, size_t in_len, __u16 out)
{
	return ucma_write(fd, cmd, in_len, out, in, in_len);
}

/* A pointer as the ABI carries it. */
static inline __u64 ptr(void *p)
{
	return (__u64)(unsigned long)p;
}

#endif
