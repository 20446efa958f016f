# SPDX-License-Identifier: GPL-2.0
#
# rhist: hist triggers as a Rust kernel module.
#
#   make run     boot the test VM with rhist loaded (a shell, or a demo
#                when standard input is not a terminal)
#   make check   install what is missing, build everything, run every suite
#   make vm SCRIPT=path/to/script.sh
#                run one guest script in the test VM
#   DROPIN=1     (with run or vm) boot the drop-in kernel instead, built
#                without C's hist triggers: rhist is the system's hist
#   make bench   rhist against the C hist trigger and an eBPF peer (a
#                tracepoint program and a BPF hash map), in boots of the
#                benchmark kernel; a table on stdout, files in results/
#   make soak    the soak test (tools/testing/soak/) for SOAK_SECONDS,
#                600 by default, instead of check's 60
#   make KDIR=/path/to/build   (or: make external, for the running kernel)
#                rhist.ko for that kernel, from its build tree or the
#                external-module tree its linux-headers package installs,
#                once tools/build/kdir-check.sh has found the patches
#                there; the module is left in this directory
#   make kernel-deb [CONFIG=/path/to/.config]
#                the patched kernel as Debian packages (bindeb-pkg):
#                linux-image, linux-headers and linux-libc-dev in
#                build/deb/. Those of the test kernel by default, made in
#                its cached tree; with CONFIG, of that .config with
#                tools/build/own.config merged over it (a full build)
#   make dkms-source [DESTDIR=]
#                the module's sources and dkms.conf in
#                $(DESTDIR)/usr/src/rhist-VERSION, where `dkms add
#                rhist/VERSION` finds them
#   make check-kasan
#                the VM suites (KUnit, end to end, soak, fault) on a
#                kernel with KASAN
#   make fuzz-guest [N=2000] [SEED=1] [FLAVOUR=bench]
#                N mutated trigger texts from SEED, each written as hist:
#                and as rhist: in one VM boot; prints every difference
#                (tools/testing/fuzz-guest/). On the benchmark kernel by
#                default, five times faster than the test kernel's slab
#                debugging allows; make check runs 2,000 on the latter.
#   make fuzz-seq [N=100] [SEED=1] [FLAVOUR=test] [JOBS=nproc] [EXT=1]
#                N random sequences of tracefs writes (instances, named
#                histograms, actions, synthetic and dynamic events, CPU
#                hotplug, rmmod), each run as hist and as rhist, shared
#                by JOBS boots side by side; prints every difference,
#                fails on any crash (tools/testing/fuzz-seq/).
#                FILE=seqs.txt replays a file (in one boot). EXT=1 adds
#                rhist's extensions (not compared, crash-checked).
#   make check-series
#                builds 6.12 as packaged, then after each patch of
#                patches/ in turn (tools/testing/patches/prefixes.sh;
#                up to an hour on 2 cores).
#
# Kbuild builds the module itself (see Kbuild); this Makefile drives the
# scripts in tools/testing/vm/.

VM := tools/testing/vm
# The kernel that run and vm boot: test, or dropin with DROPIN=1.
KERNEL := $(if $(filter 1,$(DROPIN)),dropin,test)

.PHONY: all external setup kernel modules vm run check check-kasan check-series bench bench-floor soak fuzz-guest fuzz-seq host clean \
	kernel-deb dkms-source

# Without KDIR, `make` builds for the test VM's kernel.
ifeq ($(KDIR),)
all: modules
else
all: external
endif

EXTERNAL_KDIR := $(or $(KDIR),/lib/modules/$(shell uname -r)/build)
# A kernel built with clang wants its modules built with clang too. A
# headers package's tree has no .config, only include/config/auto.conf.
EXTERNAL_LLVM := $(shell grep -qs '^CONFIG_CC_IS_CLANG=y' $(EXTERNAL_KDIR)/.config \
	$(EXTERNAL_KDIR)/include/config/auto.conf && echo LLVM=1)

external:
	@tools/build/kdir-check.sh $(EXTERNAL_KDIR)
	@$(MAKE) -C $(EXTERNAL_KDIR) M=$(CURDIR) $(EXTERNAL_LLVM) \
		RUSTC=$$(tools/build/kdir-check.sh --rustc $(EXTERNAL_KDIR)) modules

setup:
	@$(VM)/setup.sh

kernel-deb: setup
	@tools/build/kernel-deb.sh $(if $(CONFIG),--config '$(CONFIG)')

# What DKMS builds the module from: Kbuild, the sources, this Makefile
# (dkms.conf's MAKE is `make KDIR=...`), kdir-check.sh and the patches it
# reads.
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
DKMS_FILES := Makefile Kbuild dkms.conf include/rhist_shim.c include/rhist_shim.h \
	$(wildcard rust/*.rs rust/*/*.rs) rust/core/src tools/build/kdir-check.sh \
	$(wildcard patches/*.patch)
dkms-source:
	@dest='$(DESTDIR)/usr/src/rhist-$(DKMS_VERSION)' && rm -rf "$$dest" && mkdir -p "$$dest" && \
	tar -cf - $(DKMS_FILES) | tar -xf - -C "$$dest" && echo "$$dest"

kernel: setup
	@$(VM)/kernel.sh $(KERNEL)

modules: kernel
	@$(VM)/modules.sh $(KERNEL)

vm: modules
	@test -n "$(SCRIPT)" || { echo "usage: make vm [DROPIN=1] SCRIPT=path/to/script.sh"; exit 2; }
	@$(VM)/run.sh --flavour $(KERNEL) $(if $(TIMEOUT),--timeout $(TIMEOUT)) $(SCRIPT)

run: modules
	@if [ -t 0 ]; then $(VM)/run.sh --flavour $(KERNEL) --shell; \
	else $(VM)/run.sh --flavour $(KERNEL) --file tools/testing/tests/lib.sh.inc \
		$(VM)/demo.sh; fi

# QUICK=1: the inner loop's form: host, build, lint, KUnit and the
# end-to-end tests (one boot), without the fuzzers, the soak, fault
# injection, the selftests, the drop-in kernel and the bench smoke.
check:
	@$(if $(QUICK),RHIST_SUITES="host lint kunit e2e" )tools/testing/check.sh

check-kasan:
	@RHIST_FLAVOUR=kasan RHIST_SUITES="kunit e2e soak fault" tools/testing/check.sh

check-series: setup
	@tools/testing/patches/prefixes.sh

bench:
	@tools/testing/bench/run.sh

# Where the floor's instructions go (perf's samples on an icount boot).
bench-floor:
	@tools/testing/bench/floor.sh

# The soak's logic, sourced by a wrapper that sets its length; the VM
# gets the soak's time and 300 s for the boot, the unload, the final
# count and the kmemleak scan.
SOAK_SECONDS ?= 600
soak: modules
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	cp tools/testing/soak/soak.sh.inc "$$d/" && \
	printf '#!/bin/sh\n# make soak\nSOAK_SECONDS=%s\n. /test/soak.sh.inc\n' \
		'$(SOAK_SECONDS)' > "$$d/soak.sh" && \
	$(VM)/run.sh --timeout $$(($(SOAK_SECONDS) + 300)) "$$d/soak.sh"

N ?= 2000
SEED ?= 1
FLAVOUR ?= bench
fuzz-guest: setup
	@$(VM)/kernel.sh '$(FLAVOUR)' && $(VM)/modules.sh '$(FLAVOUR)' && \
	RHIST_FLAVOUR='$(FLAVOUR)' tools/testing/fuzz-guest/run.sh '$(N)' '$(SEED)'

# N defaults to 2000 above, for fuzz-guest; fuzz-seq's sequences are
# longer.
SEQ_N = $(if $(filter command line environment,$(origin N)),$(N),100)
SEQ_FLAVOUR = $(if $(filter command line environment,$(origin FLAVOUR)),$(FLAVOUR),test)
fuzz-seq: setup
	@$(VM)/kernel.sh '$(SEQ_FLAVOUR)' && $(VM)/modules.sh '$(SEQ_FLAVOUR)' && \
	RHIST_FLAVOUR='$(SEQ_FLAVOUR)' $(if $(JOBS),RHIST_FUZZ_SEQ_JOBS='$(JOBS)') \
	$(if $(EXT),RHIST_FUZZ_SEQ_EXT=1) \
	tools/testing/fuzz-seq/run.sh \
		$(if $(FILE),--file '$(FILE)','$(SEQ_N)' '$(SEED)')

# Debian's cargo, as everywhere (tools/testing/vm/lib.sh).
host:
	@bash -c '. tools/testing/vm/lib.sh && cd rust/core && cargo test'

clean:
	rm -rf build rust/core/target
	find . -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name 'modules.order' -o -name 'Module.symvers' \
		| xargs rm -f
