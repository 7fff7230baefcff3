#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=rcm,none timeout=600
#
# rcm.ko on this guest, no CM at all on the peer, two scenario sets in one
# boot (the CI budget): rcm in place of the C CM, device hotplug, unload
# and reload, the rdma_cm command frame and many devices
# (rcm_module_lib.sh); then REQs and SIDR_REQs into the silent peer, each
# retried and timed out exactly as configured (rcm_cm_timeout_lib.sh).
# Last rcm itself unloads, and nothing it allocated may remain.
. "$(dirname "$(readlink -f "$0")")/rcm_module_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_cm_timeout_lib.sh"
module_load() {
	module_scenarios
	timeout_scenarios
	rcm_step rmmod rcm
}
rcm_two_guests_run module_load
