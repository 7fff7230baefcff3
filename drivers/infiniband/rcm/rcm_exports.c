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
