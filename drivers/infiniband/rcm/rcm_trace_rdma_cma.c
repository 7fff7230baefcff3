// SPDX-License-Identifier: GPL-2.0
/*
 * rcm's rdma_cma trace events (trace/rcm_trace_rdma_cma.h) and their
 * out-of-line callers for Rust (rust/rdma/cm_id.rs). The ib_cm-only
 * build (RCM_IBCM_ONLY) runs under the in-tree rdma_cm, which owns the
 * rdma_cma events: it registers none, and its callers do nothing.
 */
#include <rdma/rdma_cm.h>
#include "../../../rust/bindings/rcm_trace.h"

#ifndef RCM_IBCM_ONLY
#define CREATE_TRACE_POINTS
#include "rcm_trace_rdma_cma.h"

void rcm_h_trace_cm_event_handler(const struct rdma_cm_id *id,
				  const struct rdma_cm_event *event)
{
	trace_cm_event_handler(container_of(id, struct rdma_id_private, id), event);
}

void rcm_h_trace_cm_event_done(const struct rdma_cm_id *id,
			       const struct rdma_cm_event *event, int result)
{
	trace_cm_event_done(container_of(id, struct rdma_id_private, id), event, result);
}
#else
void rcm_h_trace_cm_event_handler(const struct rdma_cm_id *id,
				  const struct rdma_cm_event *event)
{
}

void rcm_h_trace_cm_event_done(const struct rdma_cm_id *id,
			       const struct rdma_cm_event *event, int result)
{
}
#endif
