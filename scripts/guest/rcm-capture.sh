#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Inside the driver guest (both guests in CM mode c): CM exchanges of the
# in-tree C implementation, recorded by the host's pcap of this guest's
# NIC (scripts/capture-cm.sh). Each step leaves a marker ping so the
# exchanges can be told apart in the capture.
. /kselftest/rcm/rcm_lib.sh
server=$RCM_PEER
fail=0

step() { echo "capture: $*"; }

step "rping: REQ/REP/RTU, DREQ/DREP"
peer_start rping "rping -s -a $server -C 2" > /dev/null
rcm_retry 20 rping -c -a "$server" -C 2 || fail=1
peer_wait rping 60 > /dev/null || fail=1

step "ucmatose: two connections, data, disconnect"
peer_start ucm "ucmatose -c 2 -C 2" > /dev/null
rcm_retry 20 ucmatose -s "$server" -c 2 -C 2 > /dev/null || fail=1
peer_wait ucm 60 > /dev/null || fail=1

step "connect to a port without listener: REJ reason 8"
timeout 30 rping -c -a "$server" -p 7174 -C 1 -v 2>&1 | grep -q 'error 8' || fail=1

step "ucmatose: a single connection"
peer_start ucm2 "ucmatose -c 1 -C 1" > /dev/null
rcm_retry 20 ucmatose -s "$server" -c 1 -C 1 > /dev/null || fail=1
peer_wait ucm2 60 > /dev/null || fail=1

step "udaddy: SIDR_REQ/SIDR_REP"
peer_start uda "udaddy -c 1 -C 2" > /dev/null
rcm_retry 20 udaddy -s "$server" -c 1 -C 2 > /dev/null || fail=1
peer_wait uda 60 > /dev/null || fail=1

step "SIDR to a service without listener"
timeout 30 udaddy -s "$server" -p 7175 -c 1 -C 1 > /dev/null 2>&1
exit $fail
