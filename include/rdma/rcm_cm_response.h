/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rcm's per-id CM response timeout and retry count for kernel rdma_cm
 * consumers. 6.12's rdma_cm fixes both (an IBA time of 20 and 15 retries:
 * a connect to an unreachable RoCE peer reports RDMA_CM_EVENT_UNREACHABLE
 * after about 74 s); rcm keeps them per id. Exported under rcm's own name
 * so it can never collide with a future rdma_cm symbol: a consumer that
 * must also run on the C CM resolves it with symbol_get() and copes with
 * NULL.
 */
#ifndef RCM_CM_RESPONSE_H
#define RCM_CM_RESPONSE_H

#include <rdma/rdma_cm.h>

/*
 * What @id's next REQ (RC, UC) or SIDR_REQ (UD) carries and how it is
 * retried: the peer has 4.096 us * 2^@response_timeout to answer (a
 * SIDR_REQ waits 2^(@response_timeout - 8) ms), and the request is sent
 * again @max_cm_retries times before the id reports
 * RDMA_CM_EVENT_UNREACHABLE with -ETIMEDOUT. The REQ's values also govern
 * the connection's later exchanges (the peer's wait for the RTU, this
 * side's DREQ). A request already sent keeps its own. -EINVAL if
 * @response_timeout > 31 or @max_cm_retries > 15 (the REQ's fields), the
 * id unchanged.
 */
int rcm_set_cm_response(struct rdma_cm_id *id, u8 response_timeout,
			u8 max_cm_retries);

#endif /* RCM_CM_RESPONSE_H */
