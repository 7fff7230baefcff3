/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Out-of-line wrappers for static inline kernel functions rcm's Rust code
 * calls. Implemented in drivers/infiniband/rcm/rcm_helpers.c.
 */
#ifndef RCM_HELPERS_H
#define RCM_HELPERS_H

#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_cm.h>
#include <linux/workqueue.h>
#include <rdma/ib_sysfs.h>

const char *rcm_h_ib_device_name(const struct ib_device *ibdev);
u32 rcm_h_rdma_start_port(const struct ib_device *ibdev);
u32 rcm_h_rdma_end_port(const struct ib_device *ibdev);
/* The type of address handle attributes for `port` (rdma_ah_find_type). */
enum rdma_ah_attr_type rcm_h_ah_find_type(struct ib_device *ibdev, u32 port);

/* rcm.reply_path_ms: how long a sender's reply path is reused. */
u32 rcm_h_reply_path_ms(void);

/* rcm.peer_window: requests to one peer awaiting their first answer. */
u32 rcm_h_peer_window(void);

/* A reference on a registered device (false once it is going away). */
bool rcm_h_device_try_get(struct ib_device *ibdev);

/* The device's local CA ACK delay (IBA time exponent). */
u8 rcm_h_ack_delay(const struct ib_device *ibdev);

/*
 * Per-port attribute groups in sysfs (the CM's message counters,
 * rust/rdma/counters.rs) and the GID types a RoCE port supports: exported
 * by ib_core, declared only in its private core_priv.h.
 */
unsigned long roce_gid_type_mask_support(struct ib_device *ibdev, u32 port);
int ib_port_register_client_groups(struct ib_device *ibdev, u32 port_num,
				   const struct attribute_group **groups);
void ib_port_unregister_client_groups(struct ib_device *ibdev, u32 port_num,
				      const struct attribute_group **groups);
/* sysfs_attr_init() (a macro: lockdep's static key for the attribute). */
void rcm_h_sysfs_attr_init(struct attribute *attr);

/*
 * An alternate path (of a REQ or a LAP), seen from this side (host order).
 */
struct rcm_h_lap_path {
	u8 sgid[16];		/* ours */
	u8 dgid[16];		/* the proposer's */
	u64 service_id;		/* a REQ's alternate path: the REQ's; LAP: 0 */
	u32 flow_label;
	u16 slid;
	u16 dlid;
	u16 pkey;
	u8 sl;
	u8 rate;
	u8 hop_limit;
	u8 traffic_class;
	u8 packet_life_time;
	u8 mtu;
	u8 roce;
};

/*
 * IB_CM_REQ_RECEIVED, with every value as 6.12 reports it: the REQ's
 * responder resources / initiator depth and local / remote response
 * timeouts already swapped to this side's view.
 */
struct rcm_h_req_event {
	struct ib_cm_id *listen_id;
	/* RoCE: the GID the REQ arrived on; the new id holds the reference */
	const struct ib_gid_attr *sgid_attr;
	const void *private_data;	/* 92 bytes */
	u64 remote_ca_guid;
	u32 port;
	u32 remote_qkey;
	u32 remote_qpn;
	u32 starting_psn;
	u32 vendor_id;			/* ECE */
	u32 attr_mod;			/* ECE */
	u16 pkey_index;			/* the MAD's, for bth_pkey */
	u32 qp_type;			/* enum ib_qp_type */
	u8 responder_resources;
	u8 initiator_depth;
	u8 local_cm_response_timeout;
	u8 remote_cm_response_timeout;
	u8 flow_control;
	u8 retry_count;
	u8 rnr_retry_count;
	u8 srq;
	/*
	 * Seen from this side, with the REQ's service id and P_Key: IB's dlid
	 * is the LID the REQ came from, the hop limit its GRH's.
	 */
	struct rcm_h_lap_path primary;
	u8 dmac[6];		/* RoCE: the requester's MAC */
	u8 has_alt;		/* the REQ names an alternate path */
	struct rcm_h_lap_path alt;
};

/* IB_CM_SIDR_REQ_RECEIVED (host-order values; private data 216 bytes). */
struct rcm_h_sidr_req_event {
	struct ib_cm_id *listen_id;
	/* RoCE: the GID it arrived on; the new id holds the reference */
	const struct ib_gid_attr *sgid_attr;
	const void *private_data;	/* 216 bytes */
	u64 service_id;
	u32 port;
	u16 pkey;			/* the SIDR_REQ's partition key */
	u16 pkey_index;			/* the MAD's, for bth_pkey */
};

/*
 * Any other CM event of an existing id, in plain values (host byte order);
 * rust/rdma/cm_event.rs builds struct ib_cm_event from the fields the event
 * type uses.
 */
struct rcm_h_event {
	u32 event;			/* enum ib_cm_event_type */
	const void *private_data;	/* the message's, or NULL */
	const void *info;		/* REJ ARI, APR or SIDR_REP info */
	u64 remote_ca_guid;		/* REP */
	u32 status;	/* REJ reason, APR/SIDR status, wc status of errors */
	u32 qkey;			/* REP, SIDR_REP */
	u32 qpn;			/* REP, SIDR_REP */
	u32 starting_psn;		/* REP */
	u32 vendor_id;			/* REP (ECE) */
	u32 attr_mod;			/* REP, REJ (ECE) */
	/* the GID of the id's path, held by the id (SIDR_REP, LAP) */
	const struct ib_gid_attr *sgid_attr;
	u8 info_len;
	u8 responder_resources;
	u8 initiator_depth;
	u8 target_ack_delay;
	u8 failover_accepted;
	u8 flow_control;
	u8 rnr_retry_count;
	u8 srq;
	u8 service_timeout;		/* MRA */
	struct rcm_h_lap_path lap;	/* LAP */
};

/* The running task, as an identity. */
void *rcm_h_current(void);
/* Whether the caller runs in a workqueue's work item (PF_WQ_WORKER). */
bool rcm_h_in_work_item(void);
/* Sleeps until done(ctx), re-checked at every rcm_h_wake_waiters(). */
void rcm_h_wait_until(bool (*done)(void *ctx), void *ctx);
/* Something a sleeper may wait for happened: wakes them to re-check. */
void rcm_h_wake_waiters(void);

/* cond_resched(): lets other work run between batches (process context). */
void rcm_h_cond_resched(void);

/* rcu_read_lock / rcu_read_unlock. */
void rcm_h_rcu_read_lock(void);
void rcm_h_rcu_read_unlock(void);

/* spin_lock_irqsave / spin_unlock_irqrestore on a spinlock_t. */
unsigned long rcm_h_spin_lock_irqsave(void *lock);
void rcm_h_spin_unlock_irqrestore(void *lock, unsigned long flags);
/* spin_trylock on a spinlock_t: true if taken. */
bool rcm_h_spin_trylock(void *lock);
/* in_interrupt(): hard IRQ, softirq or NMI context. */
bool rcm_h_in_interrupt(void);

/* A random 32-bit value. */
u32 rcm_h_random_u32(void);

/* Milliseconds of a monotonic clock. */
u64 rcm_h_now_ms(void);

/* A delayed work item on the system workqueue that calls fn(ctx). */
struct rcm_h_timer;
struct rcm_h_timer *rcm_h_timer_new(void (*fn)(void *ctx), void *ctx);
/*
 * Arms the timer to fire at rcm_h_now_ms() time `deadline_ms`, unless it
 * is armed to fire earlier: concurrent arms keep the earliest deadline.
 * Firing disarms it before fn runs; any callable context.
 */
void rcm_h_timer_arm_at(struct rcm_h_timer *t, u64 deadline_ms);
/* Cancels the timer, waits for a running callback, frees it. */
void rcm_h_timer_free(struct rcm_h_timer *t);

/*
 * A work item calling fn(ctx) on a workqueue of its own, one run at a
 * time: bound to the CPU that queues it, or unbound (run on whichever CPU
 * is free).
 */
struct rcm_h_work;
struct rcm_h_work *rcm_h_work_new(const char *name, void (*fn)(void *ctx),
				  void *ctx, bool unbound);
/* Queues the work (a no-op while it is queued and not yet running). */
void rcm_h_work_queue(struct rcm_h_work *w);
/* Cancels the work, waits for a running callback, frees it. */
void rcm_h_work_free(struct rcm_h_work *w);

#endif
