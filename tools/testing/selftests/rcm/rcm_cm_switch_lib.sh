# SPDX-License-Identifier: GPL-2.0
# Moving a guest in CM mode "both" (the C modules installed, rcm.ko aside)
# between the C CM and rcm, for the tests and the bench that compare them
# in one boot. Source it; the functions' text also runs on the peer
# (peer_run "$(declare -f rcm_load_on_cm); rcm_load_on_cm ...").

RCM_KO=/usr/lib/rcm/rcm.ko
# The C modules rcm replaces (iw_cm stays: rcm uses it for iWARP).
C_STACK="rdma_ucm rdma_cm ib_cm"

# The commands that unload whichever CM is in (its consumers unloaded).
rcm_cm_out_cmd() {
	echo "for m in $C_STACK; do rmmod \$m 2>/dev/null; done; rmmod rcm 2>/dev/null"
}

# The commands that put a guest on CM <c|rcm> once its RDMA consumers are
# unloaded: rcm with its own /dev/infiniband/rdma_cm (ucma=1).
rcm_cm_switch_cmd() { # <c|rcm>
	case $1 in
	rcm) echo "$(rcm_cm_out_cmd); insmod $RCM_KO ucma=1" ;;
	c) echo "rmmod rdma_ucm 2>/dev/null; rmmod rcm 2>/dev/null; for m in ib_cm rdma_cm rdma_ucm; do modprobe \$m || exit 1; done" ;;
	*) return 1 ;;
	esac
}

# Loads module <name> and what it needs on CM <c|rcm>. In mode "both"
# depmod resolves the CM's symbols to the C modules, so on rcm the
# dependencies are loaded one by one with the C CM modules left out (rcm
# exports their symbols).
rcm_load_on_cm() { # <c|rcm> <module>
	if [ "$1" = c ]; then
		modprobe "$2"
		return
	fi
	modprobe --show-depends "$2" | while read -r how path args; do
		[ "$how" = insmod ] || continue
		case ${path##*/} in ib_cm.ko* | rdma_cm.ko*) continue ;; esac
		name=${path##*/}
		name=${name%%.ko*}
		[ -d "/sys/module/${name//-/_}" ] || insmod "$path" $args || exit 1
	done
}
