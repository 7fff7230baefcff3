# SPDX-License-Identifier: GPL-2.0
# Shared settings for rcm's scripts. Source it; do not run it.

RCM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RCM_CACHE=${RCM_CACHE:-/var/cache/rcm}
RCM_KVER=6.12.117
RCM_FLAVOR=${RCM_FLAVOR:-debug}
export PATH="$HOME/.cargo/bin:$PATH"

# Kernel and module builds always use Debian's rustc: it ships the matching
# library source (rust-web-src), which rustup's toolchain here lacks.
RCM_KMAKE_ARGS=(LLVM=1 RUSTC=/usr/bin/rustc BINDGEN=bindgen)

# Bump when scripts/build-kernel.sh changes what it produces (not for
# cosmetic edits: each bump costs a full kernel rebuild everywhere).
RCM_KERNEL_BUILD_REV=1

# The cache key of a kernel build: source version, flavor, build revision and
# config fragments. Toolchain versions are part of the key too, since a rustc
# change invalidates every .rmeta.
rcm_kernel_key() {
	local flavor=$1
	local h
	h=$( {
		echo "$RCM_KVER $flavor $RCM_KERNEL_BUILD_REV"
		cat "$RCM_ROOT/scripts/kconfig/base.config" "$RCM_ROOT/scripts/kconfig/$flavor.config"
		/usr/bin/rustc --version 2>/dev/null
		clang --version 2>/dev/null | head -1
		bindgen --version 2>/dev/null
	} | sha256sum | cut -c1-12)
	echo "$RCM_KVER-$flavor-$h"
}

# Directory of a finished kernel build for a flavor (may not exist yet).
rcm_kernel_dir() {
	echo "$RCM_CACHE/kernel/$(rcm_kernel_key "$1")"
}

# How long each setup step usually takes on this project's machines (2
# cores), as the README's table measured them: what `make run` and `make
# test` announce before starting one.
declare -A RCM_USUAL=(
	[toolchain]="about 2 min on a fresh machine, seconds after"
	[kernel-debug]="about 15-20 min, once; cached after"
	[kernel-release]="about 16-40 min, once; cached after"
	[module]="about 1 min"
	[selftests]="about 10 s"
	[guest]="about 30 s the first time, seconds after"
)
# Compile and link steps (kbuild's "  CC  file" lines) of a kernel build of
# each flavor: the denominator of its progress figure.
declare -A RCM_KERNEL_STEPS=([debug]=3573 [release]=3558)

# The setup step announcements' prefix ("# " in make test's TAP).
RCM_SAY=${RCM_SAY:-"rcm: "}

# Progress of a kernel build from its own output: the kbuild steps done so
# far of about as many as a whole build of the flavor makes.
rcm_kernel_progress() { # <flavor> <log>
	local done total=${RCM_KERNEL_STEPS[$1]}
	done=$(grep -c -E '^  [A-Z][A-Z0-9_]* ' "$2" 2> /dev/null)
	done=${done:-0}
	[ "$done" -lt "$total" ] || done=$((total - 1))
	echo "$done of about $total build steps ($((100 * done / total)) %)"
}

# rcm_setup_step <title> <usual-key> <log> [progress-cmd] -- <cmd...>: runs
# one setup step with its output appended to <log>, saying first what it
# does, how long it usually takes and where its log is, then every 30 s how
# long it has run (and what progress-cmd prints), and at the end how long it
# took. Returns the step's status.
rcm_setup_step() {
	local title=$1 usual=${RCM_USUAL[$2]} log=$3 progress=() start=$SECONDS pid rc next
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do progress+=("$1"); shift; done
	shift
	echo "${RCM_SAY}$title: ${usual:+usually $usual; }log $log"
	"$@" >> "$log" 2>&1 &
	pid=$!
	next=$((start + 30))
	while kill -0 "$pid" 2> /dev/null; do
		sleep 1
		if [ $SECONDS -ge $next ] && kill -0 "$pid" 2> /dev/null; then
			echo "${RCM_SAY}  ... $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s${progress:+, $("${progress[@]}")}"
			next=$((next + 30))
		fi
	done
	wait "$pid"
	rc=$?
	if [ $rc = 0 ]; then
		echo "${RCM_SAY}$title: done in $((SECONDS - start)) s"
	else
		echo "${RCM_SAY}$title: FAILED after $((SECONDS - start)) s (status $rc); the end of $log:"
		tail -20 "$log" | sed "s/^/${RCM_SAY}  /"
	fi
	return $rc
}

# A flavor's kernel as a setup step: cached, or built with its progress.
rcm_kernel_step() { # <flavor> <log>
	local kdir
	kdir=$(rcm_kernel_dir "$1")
	if [ -f "$kdir/.complete" ]; then
		echo "${RCM_SAY}$1 kernel: cached at $kdir"
		return 0
	fi
	rcm_setup_step "$1 kernel (6.12 with Rust, built once)" "kernel-$1" "$2" \
		rcm_kernel_progress "$1" "$2" -- "$RCM_ROOT/scripts/build-kernel.sh" "$1"
}
