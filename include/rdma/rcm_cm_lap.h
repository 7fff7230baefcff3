/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rcm's alternate path API: LAP and APR sending, which the IBA CM defines
 * and the 2004 ib_cm draft header declared (ib_send_cm_lap/_apr) but Linux
 * 6.12's ib_cm does not export. rcm exports them under its own names so
 * they can never collide with an ib_cm symbol; consumers that must also
 * run on the C CM resolve them with symbol_get() and cope with NULL.
 *
 * The received side needs no new API: IB_CM_LAP_RECEIVED, IB_CM_APR_RECEIVED
 * and IB_CM_LAP_ERROR are part of enum ib_cm_event_type already.
 */
#ifndef RCM_CM_LAP_H
#define RCM_CM_LAP_H

#include <rdma/ib_cm.h>
#include <rdma/ib_sa.h>

/*
 * Proposes @alternate_path to the peer of an established connection;
 * retried until the APR (IB_CM_APR_RECEIVED) or IB_CM_LAP_ERROR. -EINVAL
 * if the connection is not established with no LAP in progress, the path
 * is not on the id's device, or the private data is longer than
 * IB_CM_LAP_PRIVATE_DATA_SIZE.
 */
int rcm_send_cm_lap(struct ib_cm_id *cm_id,
		    const struct sa_path_rec *alternate_path,
		    const void *private_data, u8 private_data_len);

/*
 * Answers a LAP (after IB_CM_LAP_RECEIVED) with @status and optional
 * additional information. -EINVAL without a LAP to answer or with info or
 * private data too long (IB_CM_APR_INFO_LENGTH,
 * IB_CM_APR_PRIVATE_DATA_SIZE).
 */
int rcm_send_cm_apr(struct ib_cm_id *cm_id, enum ib_cm_apr_status status,
		    const void *info, u8 info_length,
		    const void *private_data, u8 private_data_len);

#endif /* RCM_CM_LAP_H */
