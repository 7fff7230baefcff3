/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rdma_cm trace events rcm shares with 6.12's rdma_cm (system
 * rdma_cma): an event handed to a consumer's handler and the handler's
 * return, with the same names, fields and output as the C CM's. rcm's ids
 * are 6.12's struct rdma_id_private, so the fields are filled as there.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdma_cma

#if !defined(_RCM_TRACE_RDMA_CMA_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RCM_TRACE_RDMA_CMA_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <trace/misc/rdma.h>
#include "cma_priv.h"

TRACE_EVENT(cm_event_handler,
	TP_PROTO(const struct rdma_id_private *id_priv,
		 const struct rdma_cm_event *event),
	TP_ARGS(id_priv, event),
	TP_STRUCT__entry(
		__field(u32, cm_id)
		__field(u32, tos)
		__field(unsigned long, event)
		__field(int, status)
		__array(unsigned char, srcaddr, sizeof(struct sockaddr_in6))
		__array(unsigned char, dstaddr, sizeof(struct sockaddr_in6))
	),
	TP_fast_assign(
		__entry->cm_id = id_priv->res.id;
		__entry->tos = id_priv->tos;
		__entry->event = event->event;
		__entry->status = event->status;
		memcpy(__entry->srcaddr, &id_priv->id.route.addr.src_addr,
		       sizeof(struct sockaddr_in6));
		memcpy(__entry->dstaddr, &id_priv->id.route.addr.dst_addr,
		       sizeof(struct sockaddr_in6));
	),
	TP_printk("cm.id=%u src=%pISpc dst=%pISpc tos=%u %s (%lu/%d)",
		__entry->cm_id, __entry->srcaddr, __entry->dstaddr, __entry->tos,
		rdma_show_cm_event(__entry->event), __entry->event,
		__entry->status)
);

TRACE_EVENT(cm_event_done,
	TP_PROTO(const struct rdma_id_private *id_priv,
		 const struct rdma_cm_event *event, int result),
	TP_ARGS(id_priv, event, result),
	TP_STRUCT__entry(
		__field(u32, cm_id)
		__field(u32, tos)
		__field(unsigned long, event)
		__field(int, result)
		__array(unsigned char, srcaddr, sizeof(struct sockaddr_in6))
		__array(unsigned char, dstaddr, sizeof(struct sockaddr_in6))
	),
	TP_fast_assign(
		__entry->cm_id = id_priv->res.id;
		__entry->tos = id_priv->tos;
		__entry->event = event->event;
		__entry->result = result;
		memcpy(__entry->srcaddr, &id_priv->id.route.addr.src_addr,
		       sizeof(struct sockaddr_in6));
		memcpy(__entry->dstaddr, &id_priv->id.route.addr.dst_addr,
		       sizeof(struct sockaddr_in6));
	),
	TP_printk("cm.id=%u src=%pISpc dst=%pISpc tos=%u %s consumer returns %d",
		__entry->cm_id, __entry->srcaddr, __entry->dstaddr, __entry->tos,
		rdma_show_cm_event(__entry->event), __entry->result)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE rcm_trace_rdma_cma
#include <trace/define_trace.h>
