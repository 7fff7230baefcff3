#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An id's own CM response timeout and retry count (rcm_set_cm_response for
# kernel consumers, rdma_set_option with <rdma/rcm_user_cm.h>'s options for
# librdmacm programs), against a silent RoCE peer on each guest: an
# address in a network namespace behind a veth pair whose near end has an
# rxe device and whose far end has none, so that ARP answers and every REQ
# or SIDR_REQ goes unanswered. This guest runs rcm (CM mode ucma: rcm's
# own rdma_cm device), the peer the C CM, the reference: the options are
# ENOSYS there, and its defaults (16 REQs of 4.6 s on RoCE) are rcm's.
#
# A REQ waits 2 packet lifetimes (rdma_cm's 16 on RoCE: 256 ms each) plus
# the CM response time (IBA time x: 2^(x-8) ms) and is sent retries + 1
# times; a SIDR_REQ waits 2^(x-8) ms. Elapsed times must lie within
# [expected - 5%, expected * 1.5 + 300 ms] (TCG guests run late, never
# early); the rxe device's counters show the requests on the wire.

CMR_PROG=$RCM_TEST_DIR/rcm_cm_response	# the same path on the peer
CMR_KO=/lib/modules/$(uname -r)/extra/rcm_test_cm_response.ko
CMR_DEV=rcm_si
CMR_SILENT=10.8.0.2
CMR_CNT=/sys/class/infiniband/$CMR_DEV/ports/1
# The connects with the defaults run beside the other points, on a device
# and a silent address of their own, so that each device's counters show
# one side's requests only.
CMR_DEFAULT_DEV=rcm_sd
CMR_DEFAULT_SILENT=10.8.1.2
CMR_PLT_MS=256
CMR_DEFAULT_OUT=/tmp/cm_response.default.out

# The silent peers, on whichever guest runs them (bash: iproute2, not
# busybox's ip applet): <device> <near end> <far end> <subnet>.
CMR_SILENT_LINK='silent_link() {
	ip link add $2 type veth peer name $3 netns rcm_silent &&
	ip addr add $4.1/24 dev $2 && ip link set $2 up &&
	ip -n rcm_silent addr add $4.2/24 dev $3 && ip -n rcm_silent link set $3 up &&
	rdma link add $1 type rxe netdev $2 || return 1
	for i in $(seq 300); do
		rdma link show $1/1 | grep -q "state ACTIVE" && return 0; sleep 0.1
	done; echo "$1 is not ACTIVE"; return 1
}'
CMR_SETUP="$CMR_SILENT_LINK
	ip netns add rcm_silent && silent_link $CMR_DEV rcm_si0 rcm_si1 10.8.0 &&
	silent_link $CMR_DEFAULT_DEV rcm_sd0 rcm_sd1 10.8.1"
CMR_TEARDOWN="rdma link delete $CMR_DEV; rdma link delete $CMR_DEFAULT_DEV; ip netns del rcm_silent
	ip link del rcm_si0 2> /dev/null; ip link del rcm_sd0 2> /dev/null; true"
CMR_DEFAULT_REQS="c=/sys/class/infiniband/$CMR_DEFAULT_DEV/ports/1
	echo \$(cat \$c/cm_tx_msgs/req) \$(cat \$c/cm_tx_retries/req)"

# cmr_within <what> <ms> <expected ms>
cmr_within() {
	[ -n "$2" ] && [ "$2" -ge $(($3 * 95 / 100)) ] && [ "$2" -le $(($3 * 3 / 2 + 300)) ] &&
		return 0
	echo "$1: ${2:-no} ms, expected $3 (-5%, +50% + 300 ms)"
	return 1
}

cmr_counter() { cat "$CMR_CNT/$1"; }

# Both silent peers, and a connect with the defaults on both stacks left
# running (they take 74 s; cm_response_defaults_as_c collects them).
cm_response_setup() {
	bash -c "$CMR_SETUP" || return 1
	peer_run "$CMR_SETUP" || return 1
	rm -f "$CMR_DEFAULT_OUT" "$CMR_DEFAULT_OUT.rc"
	("$CMR_PROG" connect "$CMR_DEFAULT_SILENT" 7491 rc; echo $? > "$CMR_DEFAULT_OUT.rc") \
		> "$CMR_DEFAULT_OUT" 2>&1 < /dev/null &
	peer_start cm_response_default "$CMR_PROG connect $CMR_DEFAULT_SILENT 7491 rc" > /dev/null
}

# cmr_kernel <rc|ud> <timeout> <retries> <expected ms>: the consumer's
# connect is UNREACHABLE -110 in time, after retries + 1 requests.
cmr_kernel() {
	local mode=$1 t=$2 r=$3 expected=$4 what tx0 rt0 sent retried ms line
	what=$([ "$mode" = ud ] && echo sidr_req || echo req)
	tx0=$(cmr_counter "cm_tx_msgs/$what") rt0=$(cmr_counter "cm_tx_retries/$what")
	dmesg -c > /dev/null
	insmod "$CMR_KO" peer="$CMR_SILENT" mode="$mode" cm_timeout="$t" retries="$r" ||
		{ dmesg | grep rcm_test_cm_response | tail -3; return 1; }
	rmmod rcm_test_cm_response
	line=$(dmesg | grep -o 'cm_response: .*' | tail -1)
	sent=$(($(cmr_counter "cm_tx_msgs/$what") - tx0))
	retried=$(($(cmr_counter "cm_tx_retries/$what") - rt0))
	ms=$(printf '%s\n' "$line" | sed -n 's/.* after \([0-9]*\) ms$/\1/p')
	note "kernel consumer, $mode, ($t, $r): $line; $sent ${what^^}s, $retried retries"
	printf '%s\n' "$line" | grep -q 'unreachable status -110 after' ||
		{ echo "not UNREACHABLE -110: $line"; return 1; }
	cmr_within "$mode ($t, $r)" "$ms" "$expected" && [ "$sent" = $((r + 1)) ] &&
		[ "$retried" = "$r" ]
}

cm_response_kernel() {
	local rc=0
	cmr_kernel rc 12 2 $((3 * (2 * CMR_PLT_MS + 16))) || rc=1
	cmr_kernel rc 14 0 $((2 * CMR_PLT_MS + 64)) || rc=1
	cmr_kernel ud 15 1 $((2 * 128)) || rc=1
	return $rc
}

# The librdmacm program on this guest's rcm device: the same arithmetic.
cm_response_librdmacm() {
	local out ms tx0 sent
	tx0=$(cmr_counter cm_tx_msgs/req)
	out=$("$CMR_PROG" connect "$CMR_SILENT" 7492 rc 12 2 2>&1)
	sent=$(($(cmr_counter cm_tx_msgs/req) - tx0))
	note "librdmacm, rc, (12, 2): $out; $sent REQs"
	printf '%s\n' "$out" | grep -q '^event RDMA_CM_EVENT_UNREACHABLE status -110 after' ||
		return 1
	ms=$(printf '%s\n' "$out" | sed -n 's/.* after \([0-9]*\) ms$/\1/p')
	cmr_within "librdmacm (12, 2)" "$ms" $((3 * (2 * CMR_PLT_MS + 16))) && [ "$sent" = 3 ]
}

# Each option in range and out of it: rcm's answers, then the in-tree
# rdma_ucm's on the peer (ENOSYS for both).
CMR_PROBE_RCM="timeout 12: 0
timeout 31: 0
timeout 32: EINVAL
timeout in 2 bytes: EINVAL
retries 15: 0
retries 16: EINVAL
retries in 2 bytes: EINVAL"
cm_response_options_checked() {
	local mine theirs want_c
	mine=$("$CMR_PROG" probe 2>&1)
	theirs=$(peer_run "$CMR_PROG probe" 2>&1)
	want_c=$(printf '%s\n' "$CMR_PROBE_RCM" | sed 's/: .*/: ENOSYS/')
	note "rcm: $(printf '%s\n' "$mine" | tr '\n' ';')"
	note "C:   $(printf '%s\n' "$theirs" | tr '\n' ';')"
	[ "$mine" = "$CMR_PROBE_RCM" ] || { echo "rcm answered otherwise"; return 1; }
	[ "$theirs" = "$want_c" ] || { echo "the C CM answered otherwise"; return 1; }
}

# The connects with the defaults: UNREACHABLE -110 after 16 REQs (15 of
# them retries) of 2 * 256 + 4096 ms on both stacks.
cm_response_defaults_as_c() {
	local mine theirs out ms reqs rc=0 expected=$((16 * (2 * CMR_PLT_MS + 4096)))
	local i
	for ((i = 0; i < 1500; i++)); do
		[ -f "$CMR_DEFAULT_OUT.rc" ] && break
		sleep 0.1
	done
	mine=$(cat "$CMR_DEFAULT_OUT")
	theirs=$(peer_wait cm_response_default 150)
	reqs=$(bash -c "$CMR_DEFAULT_REQS")
	note "rcm, defaults: $mine; REQs and retries: $reqs"
	[ "$reqs" = "16 15" ] || rc=1
	reqs=$(peer_run "$CMR_DEFAULT_REQS")
	note "C,   defaults: $theirs; REQs and retries: $reqs"
	[ "$reqs" = "16 15" ] || rc=1
	for out in "$mine" "$theirs"; do
		printf '%s\n' "$out" | grep -q '^event RDMA_CM_EVENT_UNREACHABLE status -110 after' ||
			rc=1
		ms=$(printf '%s\n' "$out" | sed -n 's/.* after \([0-9]*\) ms$/\1/p')
		cmr_within "defaults" "$ms" "$expected" || rc=1
	done
	bash -c "$CMR_TEARDOWN" > /dev/null 2>&1
	peer_run "$CMR_TEARDOWN" > /dev/null 2>&1
	logs_clean_since_mark || rc=1
	return $rc
}

CM_RESPONSE_POINTS=(
	"cm_response_setup|a silent RoCE peer on each guest (a namespace behind a veth, no RDMA device there); connects with the defaults started on both stacks"
	"cm_response_kernel|a kernel consumer's rcm_set_cm_response: (12, 2) UNREACHABLE after 3 REQs and 1584 ms, (14, 0) after 1 REQ, UD (15, 1) after 2 SIDR_REQs; out of range -EINVAL"
	"cm_response_librdmacm|librdmacm's rdma_set_option with rcm's options: (12, 2) UNREACHABLE after 3 REQs and 1584 ms"
	"cm_response_options_checked|rcm's options: EINVAL outside what a REQ carries; the in-tree rdma_ucm: ENOSYS"
	"cm_response_defaults_as_c|with the defaults both stacks report UNREACHABLE after 16 REQs and 73.7 s; logs clean"
)
