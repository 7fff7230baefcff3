#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Which connection manager a system's RDMA consumers load: rcm or the
# kernel's C modules (ib_cm, rdma_cm, rdma_ucm). Reversible, and it
# touches no file of the kernel's own packages.
#
#   rcm-system-cm.sh status   what is set, what is loaded, what loads next
#   rcm-system-cm.sh rcm      rcm's ib_cm and rdma_cm; the in-tree rdma_ucm
#                             serves librdmacm on them
#   rcm-system-cm.sh ucma     rcm alone, /dev/infiniband/rdma_cm included
#                             (rcm.ucma=1; the in-tree rdma_ucm not loaded)
#   rcm-system-cm.sh c        back to the C modules
#   rcm-system-cm.sh refresh  after `make modules_install`: a switched
#                             system takes the new rcm.ko
# Options: --kernel <release> (default: the running one), --root <dir>
# (an image's root, as kbuild's INSTALL_MOD_PATH), --module <rcm.ko> (the
# module to switch to; default what `make modules_install` installed).
#
# Off, rcm.ko waits outside the module tree, in /usr/lib/rcm/<release>/
# (where `make modules_install` puts it), so that depmod never resolves a
# CM symbol to it. On, a copy is in /lib/modules/<release>/updates/rcm/
# and /etc/modprobe.d/rcm.conf turns every request for a C CM module
# (a consumer's dependency, rdma-core's module list, an explicit
# modprobe) into one for rcm. The switch applies to modules loaded after
# it: with the C CM loaded, unload the RDMA consumers and the CM, or
# reboot; if the initramfs carries the RDMA stack (NVMe-oF boot),
# rebuild it (update-initramfs -u).
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

krel=$(uname -r)
root=/
module=
while [ $# -gt 1 ]; do
	case $1 in
	--kernel) krel=$2 ;;
	--root) root=$2 ;;
	--module) module=$2 ;;
	*) break ;;
	esac
	shift 2
done
[ $# -eq 1 ] || { sed -n '3,17s/^# \{0,1\}//p' "$0" >&2; exit 2; }
action=$1
root=${root%/}
mods=$root/lib/modules/$krel
# (rcm.ko, or rcm.ko.zst etc. where the kernel compresses its modules)
installed=$(ls "$root/usr/lib/rcm/$krel"/rcm.ko* 2> /dev/null | head -1 || true)
active_dir=$mods/updates/rcm
conf=$root/etc/modprobe.d/rcm.conf
C_MODULES="ib_cm rdma_cm rdma_ucm"

die() { echo "rcm-system-cm: $*" >&2; exit 1; }

# The mode the configuration file names, or "c".
current_mode() {
	[ -f "$conf" ] && sed -n 's/^# rcm-system-cm mode \([a-z]*\)$/\1/p' "$conf" | head -1 || echo c
}

# The CM modules loaded now (only meaningful for the running kernel).
loaded_cms() {
	[ "$root" = "" ] && [ "$krel" = "$(uname -r)" ] || return 0
	local m out=
	for m in rcm $C_MODULES; do
		[ -d "/sys/module/$m" ] && out="$out $m"
	done
	echo "${out# }"
}

run_depmod() {
	if [ -n "$root" ]; then depmod -b "$root" -a "$krel"; else depmod -a "$krel"; fi
}

write_conf() { # <rcm|ucma>
	local blocked="ib_cm rdma_cm" m
	[ "$1" = ucma ] && blocked="$blocked rdma_ucm"
	mkdir -p "${conf%/*}"
	{
		echo "# rcm-system-cm mode $1"
		echo "# Written by scripts/rcm-system-cm.sh; 'rcm-system-cm.sh c' removes it."
		for m in $blocked; do
			echo "install $m /sbin/modprobe --ignore-install rcm"
		done
		[ "$1" = ucma ] && echo "options rcm ucma=1"
	} > "$conf.tmp"
	mv "$conf.tmp" "$conf"
}

switch_on() { # <rcm|ucma>
	local ko=${module:-$installed}
	[ -d "$mods" ] || die "no module tree $mods"
	[ -n "$ko" ] && [ -f "$ko" ] ||
		die "no rcm.ko${ko:+ at $ko}: run 'make modules_install' (or pass --module)"
	modinfo -F vermagic "$ko" | grep -q "^$krel " ||
		die "$ko was built for $(modinfo -F vermagic "$ko" | cut -d' ' -f1), not $krel"
	rm -f "$active_dir"/rcm.ko*
	mkdir -p "$active_dir"
	cp "$ko" "$active_dir/${ko##*/}"
	chmod 644 "$active_dir/${ko##*/}"
	write_conf "$1"
	run_depmod
	report
}

switch_off() {
	rm -f "$conf" "$active_dir"/rcm.ko*
	rmdir "$active_dir" 2> /dev/null || true
	run_depmod
	report
}

report() {
	local mode now
	mode=$(current_mode)
	now=$(loaded_cms)
	echo "rcm-system-cm: $krel${root:+ under $root}: CM mode $mode"
	case $mode in
	c) echo "  consumers load the C modules ($C_MODULES)" ;;
	rcm) echo "  consumers load rcm ($active_dir); rdma_ucm is the in-tree one on rcm" ;;
	ucma) echo "  consumers load rcm ($active_dir) with its own /dev/infiniband/rdma_cm" ;;
	esac
	[ -f "$installed" ] && echo "  installed module: $installed"
	[ -n "$now" ] || return 0
	echo "  loaded now: $now"
	if { [ "$mode" = c ] && [[ " $now " == *" rcm "* ]]; } ||
		{ [ "$mode" != c ] && [[ " $now " == *" ib_cm "* || " $now " == *" rdma_cm "* ]]; }; then
		echo "  the loaded CM is not the mode's: it applies once the RDMA consumers and the CM are unloaded, or at the next boot"
	fi
}

case $action in
status) report ;;
rcm | ucma) switch_on "$action" ;;
c) switch_off ;;
refresh)
	mode=$(current_mode)
	if [ "$mode" = c ]; then
		report
		echo "  to switch: $0 ${root:+--root $root --kernel $krel }rcm (or ucma)"
	else
		switch_on "$mode"
	fi
	;;
*) die "unknown action '$action' (status, rcm, ucma, c, refresh)" ;;
esac
