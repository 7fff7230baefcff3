// SPDX-License-Identifier: GPL-2.0
/*
 * What rcm's Rust code cannot express in 6.12 (bindgen binds no inline
 * function or macro; the kernel crate has no module parameters, no delayed
 * work and no static wait queue): out-of-line copies of static inlines, the
 * module parameters, the timers (delayed work, armed and disarmed under a
 * spinlock) and work items on workqueues of their own, and the module's
 * one wait queue.
 */
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_sa.h>
#include "../../../rust/bindings/rcm_helpers.h"

const char *rcm_h_ib_device_name(const struct ib_device *ibdev)
{
	return dev_name(&ibdev->dev);
}

u32 rcm_h_rdma_start_port(const struct ib_device *ibdev)
{
	return rdma_start_port(ibdev);
}

u32 rcm_h_rdma_end_port(const struct ib_device *ibdev)
{
	return rdma_end_port(ibdev);
}

enum rdma_ah_attr_type rcm_h_ah_find_type(struct ib_device *ibdev, u32 port)
{
	return rdma_ah_find_type(ibdev, port);
}

/*
 * How long a sender's reply path is reused (rcm's intake): in a connection
 * storm one peer sends thousands of REQs a second, and each path costs an
 * address resolution on RoCE. 0: reused only within the batch of MADs the
 * intake handles together (a REQ alone gets its own, as in the C CM).
 */
static unsigned int rcm_reply_path_ms = 1000;
module_param_named(reply_path_ms, rcm_reply_path_ms, uint, 0644);
MODULE_PARM_DESC(reply_path_ms,
		 "ms a sender's reply path, and a path's address handle, are reused unless the network changes (default 1000; 0: a path within a batch, a handle per send)");

u32 rcm_h_reply_path_ms(void)
{
	return READ_ONCE(rcm_reply_path_ms);
}

/*
 * Requests (REQ, REP, DREQ, LAP, SIDR_REQ) one peer may have awaiting their
 * first answer; more wait their turn in rcm (see the core's pacing.rs).
 * A quarter of ib_mad's 512 receive buffers, so that a connection storm
 * fits the peer's receive queue with room for its other traffic.
 */
static unsigned int rcm_peer_window = 128;
module_param_named(peer_window, rcm_peer_window, uint, 0644);
MODULE_PARM_DESC(peer_window,
		 "requests to one peer awaiting their first answer at a time; more wait (default 128; 0: no limit)");

u32 rcm_h_peer_window(void)
{
	return READ_ONCE(rcm_peer_window);
}

bool rcm_h_device_try_get(struct ib_device *ibdev)
{
	return ib_device_try_get(ibdev);
}

u8 rcm_h_ack_delay(const struct ib_device *ibdev)
{
	return ibdev->attrs.local_ca_ack_delay;
}

u64 rcm_h_now_ms(void)
{
	return jiffies64_to_msecs(get_jiffies_64());
}

struct rcm_h_timer {
	struct delayed_work work;
	spinlock_t lock;	/* armed, deadline */
	bool armed;
	u64 deadline;		/* rcm_h_now_ms() time it fires at */
	void (*fn)(void *ctx);
	void *ctx;
};

static void rcm_h_timer_fire(struct work_struct *work)
{
	struct rcm_h_timer *t =
		container_of(to_delayed_work(work), struct rcm_h_timer, work);
	unsigned long flags;

	/* Disarmed before the callback: an arm from now on queues again. */
	spin_lock_irqsave(&t->lock, flags);
	t->armed = false;
	spin_unlock_irqrestore(&t->lock, flags);
	t->fn(t->ctx);
}

struct rcm_h_timer *rcm_h_timer_new(void (*fn)(void *ctx), void *ctx)
{
	struct rcm_h_timer *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return NULL;
	INIT_DELAYED_WORK(&t->work, rcm_h_timer_fire);
	spin_lock_init(&t->lock);
	t->fn = fn;
	t->ctx = ctx;
	return t;
}

void rcm_h_timer_arm_at(struct rcm_h_timer *t, u64 deadline_ms)
{
	unsigned long flags;
	u64 now;

	spin_lock_irqsave(&t->lock, flags);
	if (!t->armed || deadline_ms < t->deadline) {
		t->armed = true;
		t->deadline = deadline_ms;
		now = rcm_h_now_ms();
		mod_delayed_work(system_wq, &t->work,
				 msecs_to_jiffies(min_t(u64, deadline_ms > now ?
							deadline_ms - now : 0,
							UINT_MAX)));
	}
	spin_unlock_irqrestore(&t->lock, flags);
}

void rcm_h_timer_free(struct rcm_h_timer *t)
{
	if (!t)
		return;
	cancel_delayed_work_sync(&t->work);
	kfree(t);
}

struct rcm_h_work {
	struct work_struct work;
	struct workqueue_struct *wq;
	void (*fn)(void *ctx);
	void *ctx;
};

static void rcm_h_work_run(struct work_struct *work)
{
	struct rcm_h_work *w = container_of(work, struct rcm_h_work, work);

	w->fn(w->ctx);
}

struct rcm_h_work *rcm_h_work_new(const char *name, void (*fn)(void *ctx),
				  void *ctx, bool unbound)
{
	struct rcm_h_work *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w)
		return NULL;
	/* One work item is never run twice at once: its runs are ordered. */
	w->wq = alloc_workqueue("%s", WQ_MEM_RECLAIM | (unbound ? WQ_UNBOUND : 0),
				1, name);
	if (!w->wq) {
		kfree(w);
		return NULL;
	}
	INIT_WORK(&w->work, rcm_h_work_run);
	w->fn = fn;
	w->ctx = ctx;
	return w;
}

void rcm_h_work_queue(struct rcm_h_work *w)
{
	queue_work(w->wq, &w->work);
}

void rcm_h_work_free(struct rcm_h_work *w)
{
	if (!w)
		return;
	cancel_work_sync(&w->work);
	destroy_workqueue(w->wq);
	kfree(w);
}

unsigned long rcm_h_spin_lock_irqsave(void *lock)
{
	unsigned long flags;

	spin_lock_irqsave((spinlock_t *)lock, flags);
	return flags;
}

void rcm_h_spin_unlock_irqrestore(void *lock, unsigned long flags)
{
	spin_unlock_irqrestore((spinlock_t *)lock, flags);
}

bool rcm_h_spin_trylock(void *lock)
{
	return spin_trylock((spinlock_t *)lock);
}

bool rcm_h_in_interrupt(void)
{
	return in_interrupt();
}

u32 rcm_h_random_u32(void)
{
	return get_random_u32();
}

void *rcm_h_current(void)
{
	return current;
}

bool rcm_h_in_work_item(void)
{
	return current->flags & PF_WQ_WORKER;
}

/* Sleepers in rcm_h_wait_until(): destroys waiting for a running
 * callback of their id, device removals waiting for DREPs.
 */
static DECLARE_WAIT_QUEUE_HEAD(rcm_h_waiters);

void rcm_h_wait_until(bool (*done)(void *ctx), void *ctx)
{
	wait_event(rcm_h_waiters, done(ctx));
}

void rcm_h_wake_waiters(void)
{
	/* The barrier in wq_has_sleeper() orders the caller's change before
	 * the check, as prepare_to_wait() orders a sleeper's.
	 */
	if (wq_has_sleeper(&rcm_h_waiters))
		wake_up_all(&rcm_h_waiters);
}

void rcm_h_cond_resched(void)
{
	cond_resched();
}

void rcm_h_rcu_read_lock(void)
{
	rcu_read_lock();
}

void rcm_h_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

void rcm_h_sysfs_attr_init(struct attribute *attr)
{
	sysfs_attr_init(attr);
}
