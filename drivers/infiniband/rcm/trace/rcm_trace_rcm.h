/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rcm's own trace events (system rcm), for what 6.12's CM does not trace:
 * every CM message received and what came of it, retransmissions, and
 * exchanges that timed out. Names come from rcm's protocol core as
 * strings, so nothing here restates its tables.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rcm

#if !defined(_RCM_TRACE_RCM_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RCM_TRACE_RCM_H

#include <linux/tracepoint.h>

TRACE_EVENT(icm_recv,
	TP_PROTO(const char *msg, u32 msg_len, u32 local_id, u32 remote_id,
		 const char *state, u32 state_len, u16 reason,
		 const char *outcome, u32 outcome_len),
	TP_ARGS(msg, msg_len, local_id, remote_id, state, state_len, reason,
		outcome, outcome_len),
	TP_STRUCT__entry(
		__string_len(msg, msg, msg_len)
		__field(u32, local_id)
		__field(u32, remote_id)
		__string_len(state, state, state_len)
		__field(u16, reason)
		__string_len(outcome, outcome, outcome_len)
	),
	TP_fast_assign(
		__assign_str(msg);
		__entry->local_id = local_id;
		__entry->remote_id = remote_id;
		__assign_str(state);
		__entry->reason = reason;
		__assign_str(outcome);
	),
	TP_printk("%s local_id=%u remote_id=%u state=%s reason=%u %s",
		__get_str(msg), __entry->local_id, __entry->remote_id,
		__get_str(state), __entry->reason, __get_str(outcome))
);

TRACE_EVENT(icm_resend,
	TP_PROTO(const char *msg, u32 msg_len, u32 local_id, u32 remote_id,
		 const char *state, u32 state_len),
	TP_ARGS(msg, msg_len, local_id, remote_id, state, state_len),
	TP_STRUCT__entry(
		__string_len(msg, msg, msg_len)
		__field(u32, local_id)
		__field(u32, remote_id)
		__string_len(state, state, state_len)
	),
	TP_fast_assign(
		__assign_str(msg);
		__entry->local_id = local_id;
		__entry->remote_id = remote_id;
		__assign_str(state);
	),
	TP_printk("%s local_id=%u remote_id=%u state=%s",
		__get_str(msg), __entry->local_id, __entry->remote_id,
		__get_str(state))
);

TRACE_EVENT(icm_timeout,
	TP_PROTO(u32 local_id, const char *event, u32 event_len),
	TP_ARGS(local_id, event, event_len),
	TP_STRUCT__entry(
		__field(u32, local_id)
		__string_len(event, event, event_len)
	),
	TP_fast_assign(
		__entry->local_id = local_id;
		__assign_str(event);
	),
	TP_printk("local_id=%u %s", __entry->local_id, __get_str(event))
);

TRACE_EVENT(icm_state,
	TP_PROTO(u32 local_id, const char *from, u32 from_len, const char *to, u32 to_len),
	TP_ARGS(local_id, from, from_len, to, to_len),
	TP_STRUCT__entry(
		__field(u32, local_id)
		__string_len(from, from, from_len)
		__string_len(to, to, to_len)
	),
	TP_fast_assign(
		__entry->local_id = local_id;
		__assign_str(from);
		__assign_str(to);
	),
	TP_printk("local_id=%u %s -> %s", __entry->local_id, __get_str(from), __get_str(to))
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE rcm_trace_rcm
#include <trace/define_trace.h>
