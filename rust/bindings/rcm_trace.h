/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Callers of rcm's trace events (drivers/infiniband/rcm/rcm_trace_*.c):
 * each fires one tracepoint if it is enabled. Strings are the protocol
 * core's names, passed with their length (not NUL-terminated).
 */
#ifndef _RCM_TRACE_H
#define _RCM_TRACE_H

#include <linux/types.h>

struct rdma_cm_id;
struct rdma_cm_event;

void rcm_h_trace_icm_send_req(u32 local_id, u32 remote_id, u8 state, u8 lap_state);
void rcm_h_trace_icm_send_rep(u32 local_id, u32 remote_id, u8 state, u8 lap_state);
void rcm_h_trace_icm_send_rtu(u32 local_id, u32 remote_id, u8 state, u8 lap_state);
void rcm_h_trace_icm_send_mra(u32 local_id, u32 remote_id, u8 state, u8 lap_state);
void rcm_h_trace_icm_send_sidr_req(u32 local_id, u32 remote_id, u8 state, u8 lap_state);
void rcm_h_trace_icm_send_sidr_rep(u32 local_id, u32 remote_id, u8 state, u8 lap_state);
void rcm_h_trace_icm_send_dreq(u32 local_id, u32 remote_id, u8 state, u8 lap_state);
void rcm_h_trace_icm_send_drep(u32 local_id, u32 remote_id, u8 state, u8 lap_state);
void rcm_h_trace_icm_send_rej(u32 local_id, u32 remote_id, u8 state, u16 reason);

void rcm_h_trace_icm_recv(const char *msg, u32 msg_len, u32 local_id, u32 remote_id,
			  const char *state, u32 state_len, u16 reason,
			  const char *outcome, u32 outcome_len);
bool rcm_h_trace_icm_recv_enabled(void);
void rcm_h_trace_icm_resend(const char *msg, u32 msg_len, u32 local_id, u32 remote_id,
			    const char *state, u32 state_len);
void rcm_h_trace_icm_timeout(u32 local_id, const char *event, u32 event_len);
void rcm_h_trace_icm_state(u32 local_id, const char *from, u32 from_len, const char *to,
			   u32 to_len);
bool rcm_h_trace_icm_state_enabled(void);

void rcm_h_trace_cm_event_handler(const struct rdma_cm_id *id,
				  const struct rdma_cm_event *event);
void rcm_h_trace_cm_event_done(const struct rdma_cm_id *id,
			       const struct rdma_cm_event *event, int result);

#endif
