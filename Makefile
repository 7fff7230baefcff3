# SPDX-License-Identifier: GPL-2.0
# rcm: an RDMA connection manager for Linux in Rust.
#
#   make test        host unit tests + the kselftests in QEMU guests
#   make test-full   the same with the long scale scenarios (outside CI)
#   make test-list   every kselftest point, numbered as in its results
#   make run         the demo: a connection's life cycle between two guests
#   make modules     build rcm.ko against the cached kernel (KDIR=<tree>:
#                    against your own Rust-enabled 6.12 build tree)
#   make modules_install  install rcm.ko alone into /usr/lib/rcm/<release>/,
#                    outside the module tree (INSTALL_MOD_PATH= as kbuild's);
#                    scripts/rcm-system-cm.sh switches the system to it
#   make kernel      build (or reuse) the guest kernel; FLAVOR=debug|release
#   make toolchain   install the packages and tools everything needs
#   make fuzz        libFuzzer on rcm-core, FUZZ_SECONDS per target (60)
#   make bench-host  rcm-core's host benchmark (parse/emit, handle-MAD)
#   make bench       connection rate, C CM vs rcm, same boot (release kernel)
#
# (kbuild reads ./Kbuild, not this file, when it builds the module.)

SHELL := /bin/bash
FLAVOR ?= debug
export RCM_FLAVOR := $(FLAVOR)

.PHONY: all toolchain kernel modules modules_install selftests image test test-full test-host test-list run shell clean \
	fuzz bench-host bench

all: modules

toolchain:
	scripts/install-toolchain.sh

kernel: toolchain
	scripts/build-kernel.sh $(FLAVOR)

ifdef KDIR
# A kernel the project did not build: checked, never built here.
export KDIR
modules:
	scripts/build-module.sh
modules_install:
	scripts/build-module.sh $(FLAVOR) modules_install
else
modules: kernel
	scripts/build-module.sh $(FLAVOR)
modules_install: kernel
	scripts/build-module.sh $(FLAVOR) modules_install
endif

selftests:
	scripts/build-selftests.sh

test:
	scripts/run-tests.sh

# make test with the long scale scenarios (1000 sequential connections
# per pairing instead of 300); outside the CI budget.
test-full:
	RCM_TEST_FULL=1 scripts/run-tests.sh

test-host:
	scripts/run-tests.sh --host-only

# Every kselftest point, numbered as in its results (no guest needed).
test-list:
	scripts/list-test-points.sh $(if $(RCM_TEST_FULL),--full)

run:
	scripts/demo.sh

# Fuzz every rcm-core target for FUZZ_SECONDS each; fails on a crash.
fuzz:
	scripts/fuzz.sh $(or $(FUZZ_SECONDS),60)

# Per-core throughput of rcm-core on this host (no kernel, no VM).
bench-host:
	scripts/bench-host.sh

# Connection setup rate through the C CM and through rcm in one boot of
# the release kernel; prints the rcm/C ratio.
bench:
	scripts/bench.sh

# An interactive guest (CM mode c; MODE=rcm for rcm) on the serial console.
shell: modules selftests
	scripts/mkguest.sh $(FLAVOR) out/shell-initrd
	scripts/rcm-vm.py --shell --modes $(or $(MODE),c) \
		--kernel $$(. scripts/lib.sh; rcm_kernel_dir $(FLAVOR))/bzImage --initrd out/shell-initrd

clean:
	-scripts/build-module.sh $(FLAVOR) clean
	rm -rf out target
