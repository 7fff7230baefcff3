/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The enums of <rdma/ib_cm.h> the trace events print by name: ib_cm's id
 * states, LAP states and REJ reasons, as lists expanded twice by each trace
 * header, once into TRACE_DEFINE_ENUM (so that the format files user space
 * reads carry numbers) and once into __print_symbolic's table.
 */
#ifndef _RCM_TRACE_NAMES_H
#define _RCM_TRACE_NAMES_H

#define RCM_CM_STATES(x, last)							\
	x(IDLE) x(LISTEN) x(REQ_SENT) x(REQ_RCVD) x(MRA_REQ_SENT)		\
	x(MRA_REQ_RCVD) x(REP_SENT) x(REP_RCVD) x(MRA_REP_SENT)		\
	x(MRA_REP_RCVD) x(ESTABLISHED) x(DREQ_SENT) x(DREQ_RCVD)		\
	x(TIMEWAIT) x(SIDR_REQ_SENT) last(SIDR_REQ_RCVD)

#define RCM_CM_LAP_STATES(x, last)						\
	x(LAP_UNINIT) x(LAP_IDLE) x(LAP_SENT) x(LAP_RCVD) x(MRA_LAP_SENT)	\
	last(MRA_LAP_RCVD)

#define RCM_CM_REJ_REASONS(x, last)						\
	x(REJ_NO_QP) x(REJ_NO_EEC) x(REJ_NO_RESOURCES) x(REJ_TIMEOUT)		\
	x(REJ_UNSUPPORTED) x(REJ_INVALID_COMM_ID)				\
	x(REJ_INVALID_COMM_INSTANCE) x(REJ_INVALID_SERVICE_ID)		\
	x(REJ_INVALID_TRANSPORT_TYPE) x(REJ_STALE_CONN) x(REJ_RDC_NOT_EXIST)	\
	x(REJ_INVALID_GID) x(REJ_INVALID_LID) x(REJ_INVALID_SL)		\
	x(REJ_INVALID_TRAFFIC_CLASS) x(REJ_INVALID_HOP_LIMIT)			\
	x(REJ_INVALID_PACKET_RATE) x(REJ_INVALID_ALT_GID)			\
	x(REJ_INVALID_ALT_LID) x(REJ_INVALID_ALT_SL)				\
	x(REJ_INVALID_ALT_TRAFFIC_CLASS) x(REJ_INVALID_ALT_HOP_LIMIT)		\
	x(REJ_INVALID_ALT_PACKET_RATE) x(REJ_PORT_CM_REDIRECT)		\
	x(REJ_PORT_REDIRECT) x(REJ_INVALID_MTU)				\
	x(REJ_INSUFFICIENT_RESP_RESOURCES) x(REJ_CONSUMER_DEFINED)		\
	x(REJ_INVALID_RNR_RETRY) x(REJ_DUPLICATE_LOCAL_COMM_ID)		\
	x(REJ_INVALID_CLASS_VERSION) x(REJ_INVALID_FLOW_LABEL)		\
	x(REJ_INVALID_ALT_FLOW_LABEL) last(REJ_VENDOR_OPTION_NOT_SUPPORTED)

#define rcm_trace_enum(n) TRACE_DEFINE_ENUM(IB_CM_##n);
#define rcm_trace_sym(n) { IB_CM_##n, #n },
#define rcm_trace_sym_last(n) { IB_CM_##n, #n }

#define rcm_show_cm_state(v) \
	__print_symbolic(v, RCM_CM_STATES(rcm_trace_sym, rcm_trace_sym_last))
#define rcm_show_lap_state(v) \
	__print_symbolic(v, RCM_CM_LAP_STATES(rcm_trace_sym, rcm_trace_sym_last))
#define rcm_show_rej_reason(v) \
	__print_symbolic(v, RCM_CM_REJ_REASONS(rcm_trace_sym, rcm_trace_sym_last))

#endif
