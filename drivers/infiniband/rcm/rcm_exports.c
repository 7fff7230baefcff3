// SPDX-License-Identifier: GPL-2.0
/*
 * The C symbols rcm exports to kernel RDMA consumers. The functions are
 * implemented in Rust (#[no_mangle] extern "C"); EXPORT_SYMBOL_GPL has no
 * Rust equivalent in 6.12, so the exports are declared here.
 */
#include <linux/export.h>
#include <linux/module.h>

MODULE_SOFTDEP("pre: ib_core");
