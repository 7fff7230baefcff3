/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ib_cm trace events rcm shares with 6.12's ib_cm (system ib_cma):
 * the same event names, fields and output, so that perf, trace-cmd and
 * bpftrace scripts written for the C CM read rcm's unchanged. The
 * arguments of the raw tracepoints differ (rcm's ids are not struct
 * ib_cm_id), and `cm_id` holds the id's local comm id, unique per id.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ib_cma

#if !defined(_RCM_TRACE_IB_CMA_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RCM_TRACE_IB_CMA_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include "rcm_trace_names.h"

RCM_CM_STATES(rcm_trace_enum, rcm_trace_enum)
RCM_CM_LAP_STATES(rcm_trace_enum, rcm_trace_enum)
RCM_CM_REJ_REASONS(rcm_trace_enum, rcm_trace_enum)

DECLARE_EVENT_CLASS(icm_id_class,
	TP_PROTO(u32 local_id, u32 remote_id, u8 state, u8 lap_state),
	TP_ARGS(local_id, remote_id, state, lap_state),
	TP_STRUCT__entry(
		__field(const void *, cm_id)
		__field(unsigned int, local_id)
		__field(unsigned int, remote_id)
		__field(unsigned long, state)
		__field(unsigned long, lap_state)
	),
	TP_fast_assign(
		__entry->cm_id = (const void *)(unsigned long)local_id;
		__entry->local_id = local_id;
		__entry->remote_id = remote_id;
		__entry->state = state;
		__entry->lap_state = lap_state;
	),
	TP_printk("local_id=%u remote_id=%u state=%s lap_state=%s",
		__entry->local_id, __entry->remote_id,
		rcm_show_cm_state(__entry->state),
		rcm_show_lap_state(__entry->lap_state))
);

#define RCM_ICM_SEND_EVENT(msg)							\
	DEFINE_EVENT(icm_id_class, icm_send_##msg,				\
		TP_PROTO(u32 local_id, u32 remote_id, u8 state, u8 lap_state),	\
		TP_ARGS(local_id, remote_id, state, lap_state))

RCM_ICM_SEND_EVENT(req);
RCM_ICM_SEND_EVENT(rep);
RCM_ICM_SEND_EVENT(dup_req);
RCM_ICM_SEND_EVENT(dup_rep);
RCM_ICM_SEND_EVENT(rtu);
RCM_ICM_SEND_EVENT(mra);
RCM_ICM_SEND_EVENT(sidr_req);
RCM_ICM_SEND_EVENT(sidr_rep);
RCM_ICM_SEND_EVENT(dreq);
RCM_ICM_SEND_EVENT(drep);

TRACE_EVENT(icm_send_rej,
	TP_PROTO(u32 local_id, u32 remote_id, u8 state, u16 reason),
	TP_ARGS(local_id, remote_id, state, reason),
	TP_STRUCT__entry(
		__field(const void *, cm_id)
		__field(u32, local_id)
		__field(u32, remote_id)
		__field(unsigned long, state)
		__field(unsigned long, reason)
	),
	TP_fast_assign(
		__entry->cm_id = (const void *)(unsigned long)local_id;
		__entry->local_id = local_id;
		__entry->remote_id = remote_id;
		__entry->state = state;
		__entry->reason = reason;
	),
	TP_printk("local_id=%u remote_id=%u state=%s reason=%s",
		__entry->local_id, __entry->remote_id,
		rcm_show_cm_state(__entry->state),
		rcm_show_rej_reason(__entry->reason))
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE rcm_trace_ib_cma
#include <trace/define_trace.h>
