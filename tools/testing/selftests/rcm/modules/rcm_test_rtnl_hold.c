// SPDX-License-Identifier: GPL-2.0
/*
 * Holds rtnl for `seconds` while it loads, as a busy network
 * configuration (a namespace being torn down, a large netlink batch) can:
 * the hardening test checks that an rdma_cm call waiting for rtnl (an IGMP
 * join) does not make other users' rdma_cm calls wait too.
 *
 *   insmod rcm_test_rtnl_hold.ko seconds=10
 *
 * insmod returns once rtnl is released; the module unloads at once after.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>

static unsigned int seconds = 10;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "how long to hold rtnl (at most 30)");

static int __init rtnl_hold_init(void)
{
	if (seconds > 30)
		return -EINVAL;
	rtnl_lock();
	pr_info("holding rtnl for %u s\n", seconds);
	msleep(seconds * 1000);
	rtnl_unlock();
	pr_info("rtnl released\n");
	return 0;
}

static void __exit rtnl_hold_exit(void)
{
}

module_init(rtnl_hold_init);
module_exit(rtnl_hold_exit);
MODULE_DESCRIPTION("rcm selftests: hold rtnl for a while");
MODULE_LICENSE("GPL");
