#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make test's check that the guests' stall detectors, sized for TCG on a
# busy host (TCG_WATCHDOGS in scripts/rcm-vm.py), still report a real
# stall: rcm_test_stall.ko spins with preemption off (an RCU CPU stall and
# a soft lockup) and then sleeps uninterruptibly (a hung task). Each report
# must appear in this guest's log, and rcm-vm.py must then fail the run for
# it (run-tests.sh checks both). make test lowers the detectors' limits at
# run time first, to stall for seconds instead of minutes; make test-full
# stalls longer than the limits the guest booted with.
. /kselftest/rcm/rcm_lib.sh
mod=/lib/modules/$(uname -r)/extra/rcm_test_stall.ko
rcu=/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout
thresh=/proc/sys/kernel/watchdog_thresh
hung=/proc/sys/kernel/hung_task_timeout_secs
limits() { echo "RCU CPU stall $(cat $rcu) s, soft lockup $((2 * $(cat $thresh))) s, hung task $(cat $hung) s"; }
echo "rcm-stall: booted with: $(limits)"
# A lone guest's NIC leads nowhere, and its transmit timeouts, logged from
# a timer on every CPU, would touch the soft lockup watchdog as they print.
ip link set eth0 down
if ! rcm_full; then
	echo 5 > $rcu
	echo 3 > $thresh
	echo 5 > $hung
	echo "rcm-stall: lowered to: $(limits)"
fi
rcu_s=$(cat $rcu) soft_s=$((2 * $(cat $thresh))) hung_s=$(cat $hung)
# The RCU report comes once the stall has lasted its limit (counted from
# the grace period's start); printing it on the serial console touches the
# soft lockup watchdog, which then needs its own limit again. The hung task
# check runs once per limit: sleep two checks and a bit.
spin=$((rcu_s + 2 * soft_s + 5)) sleep=$((2 * hung_s + 5))
echo "rcm-stall: spinning $spin s with preemption off, then sleeping $sleep s uninterruptibly"
insmod "$mod" spin_seconds=$spin 2> /dev/null
insmod "$mod" sleep_seconds=$sleep 2> /dev/null
missing=0
for kind in "RCU CPU stall:detected stalls? on CPU" "soft lockup:BUG: soft lockup" \
	"hung task:task insmod:[0-9]+ blocked for more than"; do
	if dmesg | grep -q -E "${kind#*:}"; then
		echo "rcm-stall: ${kind%%:*} reported"
	else
		echo "rcm-stall: ${kind%%:*} NOT reported"
		missing=1
	fi
done
[ $missing = 0 ] && echo "rcm-stall: all three reported"
exit $missing
