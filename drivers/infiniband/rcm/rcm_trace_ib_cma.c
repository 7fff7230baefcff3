// SPDX-License-Identifier: GPL-2.0
/*
 * rcm's ib_cma trace events (trace/rcm_trace_ib_cma.h) and their
 * out-of-line callers for Rust (rust/rdma/trace.rs): a tracepoint is a
 * macro and a static key, which Rust cannot use directly.
 */
#define CREATE_TRACE_POINTS
#include "rcm_trace_ib_cma.h"
#include "../../../rust/bindings/rcm_trace.h"

#define RCM_H_TRACE_SEND(msg)							\
	void rcm_h_trace_icm_send_##msg(u32 local_id, u32 remote_id, u8 state,	\
					 u8 lap_state)				\
	{									\
		trace_icm_send_##msg(local_id, remote_id, state, lap_state);	\
	}

RCM_H_TRACE_SEND(req)
RCM_H_TRACE_SEND(rep)
RCM_H_TRACE_SEND(rtu)
RCM_H_TRACE_SEND(mra)
RCM_H_TRACE_SEND(sidr_req)
RCM_H_TRACE_SEND(sidr_rep)
RCM_H_TRACE_SEND(dreq)
RCM_H_TRACE_SEND(drep)

void rcm_h_trace_icm_send_rej(u32 local_id, u32 remote_id, u8 state, u16 reason)
{
	trace_icm_send_rej(local_id, remote_id, state, reason);
}
