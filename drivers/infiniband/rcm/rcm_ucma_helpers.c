// SPDX-License-Identifier: GPL-2.0
/*
 * The rdma_ucm character device's kernel plumbing (see rcm_ucma_helpers.h):
 * everything here is registration and waiting; commands and events are the
 * Rust side's. C because 6.12's kernel crate has no misc device, file
 * operations, sysctl or device attribute, and the waits are macros.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>
#include <linux/file.h>
#include <rdma/ib.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/rdma_user_cm.h>
#include "core_priv.h"
#include "../../../rust/bindings/rcm_ucma_helpers.h"

static int rcm_ucma_max_backlog = 1024;

/* Off by default until the device has passed its abuse campaign: the
 * in-tree rdma_ucm registers the same misc device name and can run on rcm's
 * rdma_cm exports instead. */
static bool rcm_ucma_enable;
module_param_named(ucma, rcm_ucma_enable, bool, 0444);
MODULE_PARM_DESC(ucma, "provide /dev/infiniband/rdma_cm (default off)");

static struct ctl_table rcm_ucma_ctl_table[] = {
	{
		.procname	= "max_backlog",
		.data		= &rcm_ucma_max_backlog,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec,
	},
};

static struct ctl_table_header *rcm_ucma_ctl_header;
/* Set before the device is registered, kept until it is unregistered. */
static const struct rcm_ucma_file_ops *rcm_ucma_ops;

static int rcm_ucma_open(struct inode *inode, struct file *filp)
{
	struct rcm_ucma_file *f = kzalloc(sizeof(*f), GFP_KERNEL);
	int ret;

	if (!f)
		return -ENOMEM;
	init_waitqueue_head(&f->poll_wait);
	mutex_init(&f->reader);
	f->filp = filp;
	ret = rcm_ucma_ops->open(f);
	if (ret) {
		kfree(f);
		return ret;
	}
	filp->private_data = f;
	return stream_open(inode, filp);
}

static int rcm_ucma_release(struct inode *inode, struct file *filp)
{
	struct rcm_ucma_file *f = filp->private_data;

	rcm_ucma_ops->release(f);
	kfree(f);
	return 0;
}

static ssize_t rcm_ucma_write(struct file *filp, const char __user *buf,
			      size_t len, loff_t *pos)
{
	/* A file passed to a process with other credentials must not act
	 * for it (as every RDMA write()-command interface checks). */
	if (!ib_safe_file_access(filp))
		return -EACCES;
	return rcm_ucma_ops->write(filp->private_data, buf, len);
}

static __poll_t rcm_ucma_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct rcm_ucma_file *f = filp->private_data;

	poll_wait(filp, &f->poll_wait, wait);
	return rcm_ucma_ops->has_event(f) ? EPOLLIN | EPOLLRDNORM : 0;
}

static const struct file_operations rcm_ucma_fops = {
	.owner		= THIS_MODULE,
	.open		= rcm_ucma_open,
	.release	= rcm_ucma_release,
	.write		= rcm_ucma_write,
	.poll		= rcm_ucma_poll,
};

static struct miscdevice rcm_ucma_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= "rdma_cm",
	.nodename	= "infiniband/rdma_cm",
	.mode		= 0666,
	.fops		= &rcm_ucma_fops,
};

int rcm_h_ucma_reader_lock(struct rcm_ucma_file *f)
{
	return mutex_lock_killable(&f->reader);
}

void rcm_h_ucma_reader_unlock(struct rcm_ucma_file *f)
{
	mutex_unlock(&f->reader);
}

int rcm_h_ucma_wait_event(struct rcm_ucma_file *f)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	int ret = 0;

	if (rcm_ucma_ops->has_event(f))
		return 0;
	if (f->filp->f_flags & O_NONBLOCK)
		return -EAGAIN;
	/* The test takes a mutex, so it must run awake: wait_woken() rather
	 * than wait_event_interruptible(), which tests in a sleeping state. */
	add_wait_queue(&f->poll_wait, &wait);
	while (!rcm_ucma_ops->has_event(f)) {
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		wait_woken(&wait, TASK_INTERRUPTIBLE, MAX_SCHEDULE_TIMEOUT);
	}
	remove_wait_queue(&f->poll_wait, &wait);
	return ret;
}

static int rcm_ucma_nl_info(struct ib_client_nl_info *res)
{
	res->abi = RDMA_USER_CM_ABI_VERSION;
	res->cdev = rcm_ucma_misc.this_device;
	return 0;
}

/* Named as the in-tree module's client: ib_core finds the device by it. */
static struct ib_client rcm_ucma_client = {
	.name = "rdma_cm",
	.get_global_nl_info = rcm_ucma_nl_info,
};

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", RDMA_USER_CM_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

bool rcm_h_ucma_enabled(void)
{
	return rcm_ucma_enable;
}

int rcm_h_ucma_register(const struct rcm_ucma_file_ops *ops)
{
	int ret;

	rcm_ucma_ops = ops;
	ret = misc_register(&rcm_ucma_misc);
	if (ret)
		return ret;
	ret = device_create_file(rcm_ucma_misc.this_device, &dev_attr_abi_version);
	if (ret)
		goto err_misc;
	rcm_ucma_ctl_header = register_net_sysctl(&init_net, "net/rdma_ucm",
						  rcm_ucma_ctl_table);
	if (!rcm_ucma_ctl_header) {
		ret = -ENOMEM;
		goto err_attr;
	}
	ret = ib_register_client(&rcm_ucma_client);
	if (ret)
		goto err_sysctl;
	return 0;

err_sysctl:
	unregister_net_sysctl_table(rcm_ucma_ctl_header);
err_attr:
	device_remove_file(rcm_ucma_misc.this_device, &dev_attr_abi_version);
err_misc:
	misc_deregister(&rcm_ucma_misc);
	return ret;
}

void rcm_h_ucma_unregister(void)
{
	ib_unregister_client(&rcm_ucma_client);
	unregister_net_sysctl_table(rcm_ucma_ctl_header);
	device_remove_file(rcm_ucma_misc.this_device, &dev_attr_abi_version);
	misc_deregister(&rcm_ucma_misc);
}

void rcm_h_ucma_wake(struct rcm_ucma_file *f)
{
	wake_up_interruptible(&f->poll_wait);
}

int rcm_h_ucma_max_backlog(void)
{
	return READ_ONCE(rcm_ucma_max_backlog);
}

int rcm_h_ucma_fget(int fd, struct file **filp, struct rcm_ucma_file **f)
{
	struct file *file = fget(fd);

	*filp = NULL;
	*f = NULL;
	if (!file)
		return -ENOENT;
	if (file->f_op != &rcm_ucma_fops) {
		fput(file);
		return -EINVAL;
	}
	*filp = file;
	*f = file->private_data;
	return 0;
}

void rcm_h_ucma_fput(struct file *filp)
{
	fput(filp);
}
