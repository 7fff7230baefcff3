#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Put this guest in a connection-manager mode and load the RDMA stack.
#   c    the in-tree C modules: ib_cm, iw_cm, rdma_cm, rdma_ucm
#   rcm  ib_cm and rdma_cm removed from the module tree and rcm.ko in
#        their place; depmod then resolves every module that needs their
#        symbols to rcm.ko: the in-tree rdma_ucm (and nvme-rdma, rds_rdma,
#        ...) load on rcm's rdma_cm when asked for. iw_cm stays.
#   ucma as rcm, and rcm.ko also provides /dev/infiniband/rdma_cm
#        (rcm.ucma=1): the in-tree rdma_ucm is blocked, librdmacm runs on
#        rcm alone.
#   hybrid rcm.ko built without its rdma_cm exports in place of ib_cm
#        only: the in-tree iw_cm, rdma_cm and rdma_ucm load on rcm's
#        ib_cm exports (the most demanding ib_cm consumer in the tree,
#        which nobody here wrote).
#   both the C modules loaded, rcm.ko moved out of the module tree to
#        /usr/lib/rcm/rcm.ko (so that depmod never resolves an ib_cm
#        symbol to it): a benchmark swaps one for the other in one boot.
#   none no connection manager at all (the C modules blocked, no rcm.ko):
#        a test tool may own the CM class through /dev/infiniband/umad0.
#
# bash, not busybox sh: Debian's busybox prefers its own applets over PATH,
# and its depmod writes only the text modules.dep, not the modules.*.bin
# indexes that kmod's modprobe reads.
set -e
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mode=$1
krel=$(uname -r)
mods=/lib/modules/$krel
C_CM_MODULES="ib_cm iw_cm rdma_cm rdma_ucm"

# Removes one of the C CM modules from the module tree (a named path, not a
# find over the tree: seconds at every boot under TCG).
remove_c_module() {
	local ko=("$mods/kernel/drivers/infiniband/core/$1".ko*)
	[ -e "${ko[0]}" ] || { echo "no $1 module at $mods/kernel/drivers/infiniband/core"; exit 1; }
	rm -f "${ko[@]}"
}

case $mode in
c)
	rm -f "$mods/extra/rcm.ko"
	depmod -a
	;;
both)
	mv "$mods/extra/rcm.ko" /usr/lib/rcm/rcm.ko
	depmod -a
	;;
rcm | ucma)
	[ -f "$mods/extra/rcm.ko" ] || { echo "rcm.ko is not in the image"; exit 1; }
	blocked="ib_cm rdma_cm"
	[ "$mode" = ucma ] && blocked="$blocked rdma_ucm"
	for m in $blocked; do
		remove_c_module "$m"
		# and never let an alias or request_module() bring one back
		echo "install $m /bin/false" >> /etc/modprobe.d/rcm-mode.conf
	done
	depmod -a
	;;
hybrid)
	[ -f /usr/lib/rcm/rcm-ibcm-only.ko ] || { echo "rcm-ibcm-only.ko is not in the image"; exit 1; }
	cp /usr/lib/rcm/rcm-ibcm-only.ko "$mods/extra/rcm.ko"
	remove_c_module ib_cm
	echo "install ib_cm /bin/false" >> /etc/modprobe.d/rcm-mode.conf
	depmod -a
	;;
none)
	rm -f "$mods/extra/rcm.ko"
	for m in $C_CM_MODULES; do
		echo "install $m /bin/false" >> /etc/modprobe.d/rcm-mode.conf
	done
	depmod -a
	;;
*)
	echo "unknown CM mode '$mode'"
	exit 1
	;;
esac

modprobe ib_core
modprobe ib_uverbs
modprobe ib_umad
modprobe rdma_rxe
case $mode in
c | both) for m in $C_CM_MODULES; do modprobe "$m"; done ;;
rcm) modprobe rcm ;;
ucma) modprobe rcm ucma=1 ;;
hybrid) modprobe rcm && for m in iw_cm rdma_cm rdma_ucm; do modprobe "$m"; done ;;
esac
