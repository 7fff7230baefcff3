#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs one command for the peer agent: reads a line, runs it, reports status.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# One line: the command, base64-encoded (see peer_run in rcm_lib.sh).
IFS= read -r line
cmd=$(printf '%s' "$line" | base64 -d)
# bash, so that PATH picks the real tools (kmod, iproute2) over busybox's
# built-in applets.
bash -c "$cmd" < /dev/null 2>&1
echo "__RC=$?"
