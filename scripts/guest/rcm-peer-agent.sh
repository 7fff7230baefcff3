#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The peer guest's command agent. The driver guest connects over the test
# network (guest-internal addresses only), sends one shell command line per
# connection, and reads back its output followed by "__RC=<exit status>".
# See rcm_lib.sh (peer_run/peer_start/peer_wait) for the client side.
. /run/rcm.env
# -t: after the driver half-closes, wait for the command to finish (the
# default 0.5 s is shorter than a fork under TCG with KASAN).
exec socat -t 600 TCP-LISTEN:7777,bind="$RCM_ADDR",reuseaddr,fork EXEC:/usr/lib/rcm/rcm-peer-exec.sh
