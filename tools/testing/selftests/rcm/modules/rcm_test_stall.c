// SPDX-License-Identifier: GPL-2.0
/*
 * A deliberate kernel stall while it loads, for the check that the guests'
 * stall detectors, sized for TCG on a busy host (scripts/rcm-vm.py), still
 * report a real one and so fail the run:
 *
 *   insmod rcm_test_stall.ko spin_seconds=N    spins with preemption off:
 *                                              an RCU CPU stall and a soft
 *                                              lockup on that CPU
 *   insmod rcm_test_stall.ko sleep_seconds=N   sleeps uninterruptibly: a
 *                                              hung task (insmod itself)
 *
 * Loading fails with -EAGAIN once the stall is over, so the module never
 * stays loaded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/preempt.h>

static unsigned int spin_seconds;
module_param(spin_seconds, uint, 0444);
MODULE_PARM_DESC(spin_seconds, "how long to spin with preemption off (at most 600)");

static unsigned int sleep_seconds;
module_param(sleep_seconds, uint, 0444);
MODULE_PARM_DESC(sleep_seconds, "how long to sleep uninterruptibly (at most 900)");

static int __init stall_init(void)
{
	unsigned long end;

	if (spin_seconds > 600 || sleep_seconds > 900)
		return -EINVAL;
	if (spin_seconds) {
		pr_info("spinning for %u s with preemption off\n", spin_seconds);
		end = jiffies + msecs_to_jiffies(spin_seconds * 1000);
		preempt_disable();
		while (time_before(jiffies, end))
			cpu_relax();
		preempt_enable();
		pr_info("spin over\n");
	}
	if (sleep_seconds) {
		pr_info("sleeping uninterruptibly for %u s\n", sleep_seconds);
		msleep(sleep_seconds * 1000);
		pr_info("sleep over\n");
	}
	return -EAGAIN;
}

module_init(stall_init);
MODULE_DESCRIPTION("rcm selftests: a deliberate stall");
MODULE_LICENSE("GPL");
