/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * rcm's own rdma_set_option() options, at level RDMA_OPTION_ID, for
 * programs using librdmacm on rcm's /dev/infiniband/rdma_cm (CM mode ucma).
 * The in-tree rdma_ucm answers them with ENOSYS.
 *
 * Both take one byte and set what the id's next REQ (RC, UC) or SIDR_REQ
 * (UD) carries and how it is retried; EINVAL outside the range a REQ can
 * carry:
 *
 *   RCM_OPTION_ID_CM_RESPONSE_TIMEOUT  an IBA time exponent x, 0-31: the
 *       peer has 4.096 us * 2^x to answer (rdma_cm's default 20, 4.3 s);
 *       a SIDR_REQ waits 2^(x-8) ms.
 *   RCM_OPTION_ID_MAX_CM_RETRIES  how often the request is sent again
 *       before the id reports RDMA_CM_EVENT_UNREACHABLE (-ETIMEDOUT), 0-15
 *       (rdma_cm's default 15).
 *
 *   uint8_t timeout = 12, retries = 2;
 *   rdma_set_option(id, RDMA_OPTION_ID, RCM_OPTION_ID_CM_RESPONSE_TIMEOUT,
 *                   &timeout, sizeof(timeout));
 *   rdma_set_option(id, RDMA_OPTION_ID, RCM_OPTION_ID_MAX_CM_RETRIES,
 *                   &retries, sizeof(retries));
 */
#ifndef RCM_USER_CM_H
#define RCM_USER_CM_H

/* Far above the in-tree numbers (0-3): an upstream option cannot take them. */
enum {
	RCM_OPTION_ID_CM_RESPONSE_TIMEOUT = 0x100,
	RCM_OPTION_ID_MAX_CM_RETRIES = 0x101,
};

#endif /* RCM_USER_CM_H */
