/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rdma_ucm character device, /dev/infiniband/rdma_cm (rcm_ucma_helpers.c,
 * abi/ucma/): the misc device, its abi_version attribute, the
 * net/rdma_ucm/max_backlog sysctl and the "rdma_cm" ib_client that answers
 * ib_core's netlink chardev query, as the in-tree rdma_ucm provides them.
 * The file operations call the Rust side through the table given at
 * registration (rust/rdma/ucma_dev.rs).
 */
#ifndef RCM_UCMA_HELPERS_H
#define RCM_UCMA_HELPERS_H

#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <rdma/ib_marshall.h>
#include <rdma/ib_sa.h>
#include <rdma/rdma_cm.h>
#include <rdma/rdma_user_cm.h>

/* One open file of the device. */
struct rcm_ucma_file {
	wait_queue_head_t poll_wait;	/* woken when an event is queued */
	/* GET_EVENTs of this file, one at a time (held across the copy out,
	 * which may fault; no other file's work takes it). */
	struct mutex reader;
	struct file *filp;
	u64 token;			/* the Rust side's name of the file */
};

/* The files' operations on the Rust side. */
struct rcm_ucma_file_ops {
	/* 0 or a negative errno; the file is not yet visible to others. */
	int (*open)(struct rcm_ucma_file *f);
	void (*release)(struct rcm_ucma_file *f);
	ssize_t (*write)(struct rcm_ucma_file *f, const char __user *buf,
			 size_t len);
	bool (*has_event)(struct rcm_ucma_file *f);
};

/* Whether the module parameter ucma asks for the device. */
bool rcm_h_ucma_enabled(void);
/*
 * Registers everything above, its files served by ops (which must outlive
 * the registration). 0 or a negative errno (-EBUSY when the in-tree
 * rdma_ucm already holds the device name).
 */
int rcm_h_ucma_register(const struct rcm_ucma_file_ops *ops);
/* Unregisters; no file operation runs after it returns. */
void rcm_h_ucma_unregister(void);

/*
 * Waits until the ops' has_event(f) holds: 0, -EAGAIN for a
 * non-blocking file, -ERESTARTSYS on a signal.
 */
int rcm_h_ucma_wait_event(struct rcm_ucma_file *f);

/* The file's reader lock: 0, or -EINTR if the task is killed waiting. */
int rcm_h_ucma_reader_lock(struct rcm_ucma_file *f);
void rcm_h_ucma_reader_unlock(struct rcm_ucma_file *f);

/* Wakes the file's readers and pollers (any context). */
void rcm_h_ucma_wake(struct rcm_ucma_file *f);

/* net/rdma_ucm/max_backlog as it is now. */
int rcm_h_ucma_max_backlog(void);

/*
 * The file of descriptor fd, with a reference kept in *filp for
 * rcm_h_ucma_fput(): 0, -ENOENT for no open file, -EINVAL for a file that is
 * not this device's.
 */
int rcm_h_ucma_fget(int fd, struct file **filp, struct rcm_ucma_file **f);
void rcm_h_ucma_fput(struct file *filp);

#endif
