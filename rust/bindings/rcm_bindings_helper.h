/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Headers rcm's Rust code is bound against. bindgen turns this into
 * drivers/infiniband/rcm/rcm_bindings_generated.rs at module build time, so
 * the bindings always match the kernel tree the module is built for.
 */
#include <linux/fs.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/miscdevice.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/rtnetlink.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <linux/poll.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/neighbour.h>
#include <net/netevent.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/iw_cm.h>
#include <rdma/rdma_user_cm.h>
#include "../../include/uapi/rdma/rcm_user_cm.h"

#include "rcm_helpers.h"
#include "rcm_rdma_helpers.h"
#include "rcm_net_helpers.h"
#include "rcm_ucma_helpers.h"
#include "rcm_trace.h"
