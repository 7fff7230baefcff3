// SPDX-License-Identifier: GPL-2.0
/*
 * The C symbols rcm exports to kernel RDMA consumers. The functions are
 * implemented in Rust (#[no_mangle] extern "C"); EXPORT_SYMBOL_GPL has no
 * Rust equivalent in 6.12, so the exports are declared here.
 */
#include <linux/export.h>
#include <linux/module.h>

MODULE_SOFTDEP("pre: ib_core");

/*
 * ib_cm (include/rdma/ib_cm.h); implemented in ib_cm_exports.rs,
 * ib_cm_connect.rs and ib_cm_qp.rs.
 */
#include <rdma/ib_cm.h>
#include "../../../include/rdma/rcm_cm_lap.h"

EXPORT_SYMBOL_GPL(ib_create_cm_id);
EXPORT_SYMBOL_GPL(ib_destroy_cm_id);
EXPORT_SYMBOL_GPL(ib_cm_listen);
EXPORT_SYMBOL_GPL(ib_cm_insert_listen);
EXPORT_SYMBOL_GPL(ib_send_cm_rej);
EXPORT_SYMBOL_GPL(ib_send_cm_mra);
EXPORT_SYMBOL_GPL(ib_send_cm_sidr_rep);
EXPORT_SYMBOL_GPL(ibcm_reject_msg);
EXPORT_SYMBOL_GPL(ib_send_cm_req);
EXPORT_SYMBOL_GPL(ib_send_cm_rep);
EXPORT_SYMBOL_GPL(ib_send_cm_rtu);
EXPORT_SYMBOL_GPL(ib_send_cm_dreq);
EXPORT_SYMBOL_GPL(ib_send_cm_drep);
EXPORT_SYMBOL_GPL(ib_send_cm_sidr_req);
EXPORT_SYMBOL_GPL(ib_cm_notify);
EXPORT_SYMBOL_GPL(ib_cm_init_qp_attr);

/* LAP/APR sending (include/rdma/rcm_cm_lap.h); ib_cm_lap.rs. */
EXPORT_SYMBOL_GPL(rcm_send_cm_lap);
EXPORT_SYMBOL_GPL(rcm_send_cm_apr);

/*
 * rdma_cm (include/rdma/rdma_cm.h); implemented in abi/rdma_cm/. Exported
 * as 6.12's cma.c exports them (not GPL-only). The ib_cm-only build
 * (RCM_IBCM_ONLY, CM mode "hybrid") leaves them to the in-tree rdma_cm.
 */
#ifndef RCM_IBCM_ONLY
#include <rdma/rdma_cm.h>
#include <rdma/rdma_cm_ib.h>
#include "../../../include/rdma/rcm_cm_response.h"

EXPORT_SYMBOL(__rdma_create_kernel_id);
EXPORT_SYMBOL(rdma_create_user_id);
EXPORT_SYMBOL(rdma_destroy_id);
EXPORT_SYMBOL(rdma_bind_addr);
EXPORT_SYMBOL(rdma_resolve_addr);
EXPORT_SYMBOL(rdma_resolve_route);
EXPORT_SYMBOL(rdma_set_ib_path);
EXPORT_SYMBOL(rdma_create_qp);
EXPORT_SYMBOL(rdma_destroy_qp);
EXPORT_SYMBOL(rdma_init_qp_attr);
EXPORT_SYMBOL(rdma_connect);
EXPORT_SYMBOL(rdma_connect_locked);
EXPORT_SYMBOL(rdma_connect_ece);
EXPORT_SYMBOL(rdma_listen);
EXPORT_SYMBOL(rdma_accept);
EXPORT_SYMBOL(rdma_accept_ece);
EXPORT_SYMBOL(rdma_reject);
EXPORT_SYMBOL(rdma_disconnect);
EXPORT_SYMBOL(rdma_notify);
EXPORT_SYMBOL(rdma_lock_handler);
EXPORT_SYMBOL(rdma_unlock_handler);
EXPORT_SYMBOL(rdma_set_service_type);
EXPORT_SYMBOL(rdma_set_reuseaddr);
EXPORT_SYMBOL(rdma_set_afonly);
EXPORT_SYMBOL(rdma_set_ack_timeout);
EXPORT_SYMBOL(rdma_set_min_rnr_timer);
EXPORT_SYMBOL(rdma_join_multicast);
EXPORT_SYMBOL(rdma_leave_multicast);
EXPORT_SYMBOL(rdma_get_service_id);
EXPORT_SYMBOL(rdma_read_gids);
EXPORT_SYMBOL(rdma_event_msg);
EXPORT_SYMBOL(rdma_reject_msg);
EXPORT_SYMBOL(rdma_consumer_reject_data);
EXPORT_SYMBOL(rdma_iw_cm_id);
EXPORT_SYMBOL(rdma_res_to_id);

/* Per-id CM response timeout and retries (include/rdma/rcm_cm_response.h). */
EXPORT_SYMBOL_GPL(rcm_set_cm_response);
#endif
