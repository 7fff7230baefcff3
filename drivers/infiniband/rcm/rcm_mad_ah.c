// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles of the CM's sends, shared by the sends on one path.
 *
 * Every MAD goes out with an address handle. Creating one per send and
 * destroying it on completion, as 6.12's CM does, costs a driver call and
 * a resource pool entry each way for every REQ, REP, RTU, DREQ and DREP.
 * Here a handle made for a path serves the later sends on the same path
 * (the same port's PD, every field of struct rcm_h_path) while it is
 * fresh: for at most rcm.reply_path_ms and within one network generation
 * (rcm_net_helpers.c), the window in which rcm also reuses a sender's
 * reply path. The handle holds a reference on its source GID entry, so a
 * GID entry replaced meanwhile stays in use for at most that long.
 * rcm.reply_path_ms=0 makes one handle per send again.
 *
 * Slots are few (a storm mostly talks to one peer): a send that finds no
 * fresh slot and no idle one to take over gets a handle of its own. A
 * send that finds no fresh handle for its path also frees the idle ones
 * past their time, so that none holds its GID entry for long.
 */

#include <linux/jiffies.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include "../../../rust/bindings/rcm_helpers.h"
#include "../../../rust/bindings/rcm_net_helpers.h"

#define RCM_AH_SLOTS 16

struct rcm_ah_slot {
	struct ib_pd *pd;		/* NULL: free */
	struct rcm_h_path key;		/* zero-filled, then the fields */
	struct ib_ah *ah;
	unsigned int users;		/* sends holding the handle */
	u32 generation;			/* rcm_h_net_generation() when made */
	unsigned long made;		/* jiffies */
	unsigned long used;		/* jiffies of the last send, for eviction */
};

static struct rcm_ah_slot rcm_ah_slots[RCM_AH_SLOTS];
static DEFINE_SPINLOCK(rcm_ah_lock);	/* rcm_ah_slots */

/* The path's fields in a zero-filled struct, so keys compare bytewise. */
static void rcm_ah_key(const struct rcm_h_path *path, struct rcm_h_path *key)
{
	memset(key, 0, sizeof(*key));
	key->port = path->port;
	key->flow_label = path->flow_label;
	key->dlid = path->dlid;
	key->pkey_index = path->pkey_index;
	key->sl = path->sl;
	key->has_grh = path->has_grh;
	key->sgid_index = path->sgid_index;
	key->hop_limit = path->hop_limit;
	key->traffic_class = path->traffic_class;
	key->static_rate = path->static_rate;
	key->src_path_bits = path->src_path_bits;
	memcpy(key->dgid, path->dgid, sizeof(key->dgid));
	memcpy(key->dmac, path->dmac, sizeof(key->dmac));
}

/* How long a handle serves, in jiffies (0: one handle per send). */
static unsigned long rcm_ah_max_age(void)
{
	return msecs_to_jiffies(rcm_h_reply_path_ms());
}

static bool rcm_ah_fresh(const struct rcm_ah_slot *s, unsigned long max_age)
{
	return s->generation == rcm_h_net_generation() &&
	       time_before(jiffies, s->made + max_age);
}

/* A slot to put a new handle in: a free one, else the idle one used
 * longest ago (its handle to destroy goes to *old). Lock held. */
static struct rcm_ah_slot *rcm_ah_take_slot(struct ib_ah **old)
{
	struct rcm_ah_slot *s, *idle = NULL;

	for (s = rcm_ah_slots; s < rcm_ah_slots + RCM_AH_SLOTS; s++) {
		if (!s->pd)
			return s;
		if (!s->users && (!idle || time_before(s->used, idle->used)))
			idle = s;
	}
	if (idle) {
		*old = idle->ah;
		idle->pd = NULL;
	}
	return idle;
}

/* Frees the idle slots past their time; their handles go to stale[]
 * (returns how many). Lock held. */
static int rcm_ah_sweep(unsigned long max_age, struct ib_ah **stale)
{
	struct rcm_ah_slot *s;
	int n = 0;

	for (s = rcm_ah_slots; s < rcm_ah_slots + RCM_AH_SLOTS; s++) {
		if (s->pd && !s->users && !rcm_ah_fresh(s, max_age)) {
			stale[n++] = s->ah;
			s->pd = NULL;
		}
	}
	return n;
}

struct ib_ah *rcm_h_ah_get(struct ib_pd *pd, const struct rcm_h_path *path,
			   void **slot)
{
	unsigned long max_age = rcm_ah_max_age();
	struct ib_ah *ah, *old = NULL, *stale[RCM_AH_SLOTS];
	struct rdma_ah_attr attr;
	struct rcm_ah_slot *s;
	struct rcm_h_path key;
	unsigned long flags;
	int n, i;

	*slot = NULL;
	rcm_ah_key(path, &key);
	spin_lock_irqsave(&rcm_ah_lock, flags);
	for (s = rcm_ah_slots; max_age && s < rcm_ah_slots + RCM_AH_SLOTS; s++) {
		if (s->pd == pd && !memcmp(&s->key, &key, sizeof(key)) &&
		    rcm_ah_fresh(s, max_age)) {
			s->users++;
			s->used = jiffies;
			*slot = s;
			spin_unlock_irqrestore(&rcm_ah_lock, flags);
			return s->ah;
		}
	}
	n = rcm_ah_sweep(max_age, stale);
	spin_unlock_irqrestore(&rcm_ah_lock, flags);
	for (i = 0; i < n; i++)
		rdma_destroy_ah(stale[i], RDMA_DESTROY_AH_SLEEPABLE);
	/* Made unlocked: creating a handle may sleep. */
	rcm_h_fill_ah_attr(pd->device, path, &attr);
	ah = rdma_create_ah(pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah) || !max_age)
		return ah;
	spin_lock_irqsave(&rcm_ah_lock, flags);
	s = rcm_ah_take_slot(&old);
	if (s) {
		s->pd = pd;
		s->key = key;
		s->ah = ah;
		s->users = 1;
		s->generation = rcm_h_net_generation();
		s->made = jiffies;
		s->used = s->made;
		*slot = s;
	}
	spin_unlock_irqrestore(&rcm_ah_lock, flags);
	if (old)
		rdma_destroy_ah(old, RDMA_DESTROY_AH_SLEEPABLE);
	return ah;
}

void rcm_h_ah_put(struct ib_ah *ah, void *slot)
{
	struct rcm_ah_slot *s = slot;
	unsigned long flags;

	if (!s) {
		rdma_destroy_ah(ah, 0);
		return;
	}
	spin_lock_irqsave(&rcm_ah_lock, flags);
	s->users--;
	/* A handle past its time goes with its last send. */
	if (!s->users && !rcm_ah_fresh(s, rcm_ah_max_age()))
		s->pd = NULL;
	else
		ah = NULL;
	spin_unlock_irqrestore(&rcm_ah_lock, flags);
	if (ah)
		rdma_destroy_ah(ah, 0);
}

void rcm_h_ah_forget_pd(struct ib_pd *pd)
{
	struct ib_ah *gone[RCM_AH_SLOTS];
	struct rcm_ah_slot *s;
	unsigned long flags;
	int n = 0, i;

	spin_lock_irqsave(&rcm_ah_lock, flags);
	for (s = rcm_ah_slots; s < rcm_ah_slots + RCM_AH_SLOTS; s++) {
		if (s->pd != pd)
			continue;
		/* The agent is unregistered: its sends are all complete. */
		WARN_ON_ONCE(s->users);
		gone[n++] = s->ah;
		s->pd = NULL;
	}
	spin_unlock_irqrestore(&rcm_ah_lock, flags);
	for (i = 0; i < n; i++)
		rdma_destroy_ah(gone[i], RDMA_DESTROY_AH_SLEEPABLE);
}
