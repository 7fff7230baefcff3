// SPDX-License-Identifier: GPL-2.0
/*
 * rcm's own trace events (trace/rcm_trace_rcm.h) and their out-of-line
 * callers for Rust (rust/rdma/trace.rs).
 */
#define CREATE_TRACE_POINTS
#include "rcm_trace_rcm.h"
#include "../../../rust/bindings/rcm_trace.h"

void rcm_h_trace_icm_recv(const char *msg, u32 msg_len, u32 local_id, u32 remote_id,
			  const char *state, u32 state_len, u16 reason,
			  const char *outcome, u32 outcome_len)
{
	trace_icm_recv(msg, msg_len, local_id, remote_id, state, state_len, reason,
		       outcome, outcome_len);
}

bool rcm_h_trace_icm_recv_enabled(void)
{
	return trace_icm_recv_enabled();
}

void rcm_h_trace_icm_resend(const char *msg, u32 msg_len, u32 local_id, u32 remote_id,
			    const char *state, u32 state_len)
{
	trace_icm_resend(msg, msg_len, local_id, remote_id, state, state_len);
}

void rcm_h_trace_icm_timeout(u32 local_id, const char *event, u32 event_len)
{
	trace_icm_timeout(local_id, event, event_len);
}

void rcm_h_trace_icm_state(u32 local_id, const char *from, u32 from_len, const char *to,
			   u32 to_len)
{
	trace_icm_state(local_id, from, from_len, to, to_len);
}

bool rcm_h_trace_icm_state_enabled(void)
{
	return trace_icm_state_enabled();
}
