#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=1 modes=both timeout=300
#
# scripts/rcm-system-cm.sh, the documented way to make a system's RDMA
# consumers load rcm instead of the C modules, on this guest's module tree
# as on a real root file system: CM mode both is a distribution's layout
# (the C modules in the tree and loaded, rcm.ko outside it, where `make
# modules_install` puts it). Each mode is reached by the tool and then by
# plain modprobe, as consumers, rdma-core's module list and udev load
# modules; librdmacm's rping runs over rxe0 in each; and switching back
# leaves the module tree and modprobe.d as they were.
. "$(dirname "$(readlink -f "$0")")/rcm_lib.sh"
. "$(dirname "$(readlink -f "$0")")/rcm_cm_switch_lib.sh"

TOOL=/usr/lib/rcm/rcm-system-cm.sh
SNAPSHOT=/tmp/system_cm.before
# What the points load and unload: a kernel consumer of rdma_cm and ib_cm,
# and librdmacm's kernel side.
CONSUMERS="nvme_rdma nvme_fabrics rdma_ucm"

if [ "${RCM_LIST_POINTS:-0}" != 1 ] && { [ ! -f "$RCM_KO" ] || [ ! -x "$TOOL" ]; }; then
	ktap_print_header
	ktap_skip_all "needs CM mode both ($RCM_KO) and $TOOL"
	exit "$KSFT_SKIP"
fi

# The module tree and modprobe.d, file by file.
tree_digest() {
	find "/lib/modules/$(uname -r)" /etc/modprobe.d -type f -print0 | sort -z | xargs -0 md5sum
}

# The connection managers lsmod lists, sorted by name.
cms_loaded() {
	lsmod | awk '$1 ~ /^(rcm|ib_cm|rdma_cm|rdma_ucm)$/ { print $1 }' | sort | xargs
}

unload_all() {
	local m
	for m in $CONSUMERS rcm $C_STACK; do
		[ -d "/sys/module/$m" ] && { rmmod "$m" || return 1; }
	done
	[ -z "$(cms_loaded)" ] || { echo "still loaded: $(cms_loaded)"; return 1; }
}

# The tool names a loaded C CM when switching to rcm; switching back
# then leaves the tree as it was (the last point compares it).
switch_with_c_loaded() {
	local out
	out=$("$TOOL" --module "$RCM_KO" rcm) || { echo "$out"; return 1; }
	echo "$out"
	printf '%s\n' "$out" | grep -q 'loaded now: ib_cm.*rdma_cm' || { echo "the loaded C CM is not named"; return 1; }
	printf '%s\n' "$out" | grep -q 'applies once' || { echo "no word that the switch applies later"; return 1; }
	"$TOOL" c > /dev/null
}

rping_loopback() {
	local out
	rping -s -a "$RCM_ADDR" -C 3 > /tmp/system_cm.server 2>&1 &
	sleep 1
	out=$(timeout 20 rping -c -a "$RCM_ADDR" -C 3 -v 2>&1)
	wait
	[ "$(printf '%s\n' "$out" | grep -c '^ping data')" = 3 ] ||
		{ echo "rping: $out"; cat /tmp/system_cm.server; return 1; }
}

# switched_to <rcm|ucma>: the tool switches, modprobe loads rcm for every
# request of a C CM module, rping works.
switched_to() {
	local mode=$1 out m
	unload_all || return 1
	out=$("$TOOL" --module "$RCM_KO" "$mode") || { echo "$out"; return 1; }
	printf '%s\n' "$out" | grep -q "CM mode $mode" || { echo "$out"; return 1; }
	for m in nvme-rdma rdma_ucm ib_cm rdma_cm; do
		rcm_modprobe "$m" || { echo "modprobe $m failed on mode $mode"; return 1; }
	done
	case $mode in
	rcm) [ "$(cms_loaded)" = "rcm rdma_ucm" ] || { echo "loaded: $(cms_loaded)"; return 1; } ;;
	ucma)
		[ "$(cms_loaded)" = rcm ] || { echo "loaded: $(cms_loaded)"; return 1; }
		[ "$(cat /sys/module/rcm/parameters/ucma)" = Y ] || { echo "rcm loaded without ucma=1"; return 1; }
		;;
	esac
	[ -d /sys/module/nvme_rdma ] || { echo "nvme_rdma is not loaded"; return 1; }
	rping_loopback
}

# Back to the C modules: they load again and the tree is as it was.
switched_back() {
	local m
	unload_all || return 1
	"$TOOL" c | grep -q 'CM mode c' || return 1
	for m in nvme-rdma rdma_ucm; do
		rcm_modprobe "$m" || { echo "modprobe $m failed on the C CM"; return 1; }
	done
	[ "$(cms_loaded)" = "ib_cm rdma_cm rdma_ucm" ] || { echo "loaded: $(cms_loaded)"; return 1; }
	rping_loopback || return 1
	tree_digest | diff "$SNAPSHOT" - || { echo "the module tree or modprobe.d changed"; return 1; }
}

system_cm_points() {
	rcm_step rcm_modprobe rdma_rxe
	rcm_step bash -c "$(declare -f tree_digest); tree_digest > $SNAPSHOT"
	rcm_expect "switching with the C CM loaded: the tool says it applies once the CM is reloaded" \
		switch_with_c_loaded
	rcm_expect "mode rcm: modprobe of nvme-rdma, rdma_ucm, ib_cm and rdma_cm loads rcm (and the in-tree rdma_ucm), rping runs" \
		switched_to rcm
	rcm_expect "mode ucma: the same requests load rcm alone with ucma=1, rping runs on its /dev/infiniband/rdma_cm" \
		switched_to ucma
	rcm_expect "mode c: the C modules load again, rping runs, the module tree and modprobe.d are as before" \
		switched_back
	rcm_check_dmesg_clean
}
rcm_run system_cm_points
