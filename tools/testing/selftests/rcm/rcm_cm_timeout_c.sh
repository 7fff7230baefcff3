#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rcm-vm: guests=2 modes=c,none timeout=300
# rcm-test: full-only
#
# rcm_cm_timeout.sh with the in-tree C CM as the client: the reference for
# the retry count and intervals rcm must match.
exec "$(dirname "$(readlink -f "$0")")/rcm_cm_timeout.sh"
