# SPDX-License-Identifier: GPL-2.0
#
# p2pdma: a clean-room PCI peer-to-peer DMA subsystem for Linux 6.12 and the
# QEMU harness that proves it. This file is only a table of targets; each
# concern lives in its own script (scripts/, one per target).
#
#   make run   [TOPO=switch]   release kernel: the P2P copy demo
#   make test                  debug kernel: every suite, TAP, N passed/N failed
#   make bench [BENCH_REPS=10]  our P2PDMA against the tree's own: table, CSV, PNG
#   make test-upstream         black-box KUnit and guest suites on ours and on the tree's own
#   make test-kcsan            KCSAN kernel: KUnit and the concurrency cases, data races judged
#   make test-mutants [MUTANTS="dmabuf-timer pool-clean"]  break the guards one by one (tests/mutants/): each must fail a test
#   make kernel-release | kernel-debug | kernel-kcsan | selftests | deps | clean
#
# TOPO selects a file in qemu/topologies/ (switch, hostbridge, mfd, acs, ...),
# or several joined by '+'; tests/machines lists what make test boots.

# KERNEL selects the kernel tree (scripts/kernel.sh): 7.3, mainline, by
# default, or 6.12, the long-term kernel.
KERNEL ?= 7.3
export KERNEL
TOPO ?= switch
TIMEOUT ?= 600

.PHONY: all run test deps kernel-release kernel-debug kernel-kcsan tools selftests clean check \
	patch bench test-upstream test-kcsan test-mutants

all: kernel-release

deps:
	@scripts/deps.sh

kernel-release kernel-debug kernel-kcsan: kernel-%: deps
	@scripts/build-kernel.sh $*

tools: deps build/bin/p2pcopy build/bin/p2pmap build/bin/p2pbench build/bin/p2pdma

build/bin/%: tools/%.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra $(TOOL_CFLAGS) -o $@ $<

# p2pbench hmm drives the HMM P2P test mirror (its ioctls).
build/bin/p2pbench: drivers/pci/p2pdma/tests/hmm_p2p_test.h
build/bin/p2pbench: TOOL_CFLAGS = -I.

# The route tool for operators (tools/pci/p2pdma, libc only).
build/bin/p2pdma: $(wildcard tools/pci/p2pdma/*.[ch])
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $(filter %.c,$^)

run: kernel-release tools
	@qemu/run.sh -k release -t $(TOPO) -T $(TIMEOUT) -- guest/demo.sh

KSELFTESTS = $(shell KERNEL=$(KERNEL) top=$(CURDIR) bash -c '. scripts/kernel.sh && echo "$$kselftests"')

# The tree's uAPI headers first, where the selftests look for them
# (KHDR_INCLUDES: <O>/usr/include): vfio_dmabuf includes <linux/vfio.h>
# and <linux/iommufd.h> of the kernel it tests, not the host's. Beside
# ours, the kernel's own suites scripts/kernel.sh names (kselftests). One
# directory per kernel (the guest's P2P_KERNEL names it): built against one
# kernel's headers, the programs are that kernel's.
selftests: deps
	@scripts/prepare-tree.sh
	@$(MAKE) -s -C build/linux-source-$(KERNEL) O=$(CURDIR)/build/selftests-$(KERNEL) headers
	@$(MAKE) -s -C build/linux-source-$(KERNEL)/tools/testing/selftests TARGETS="p2pdma $(KSELFTESTS)" \
		O=$(CURDIR)/build/selftests-$(KERNEL) INSTALL_PATH=$(CURDIR)/build/selftests-$(KERNEL)/install \
		install >/dev/null

test: kernel-debug tools selftests
	@tests/run-all.sh

bench: tools
	@scripts/bench.sh

# Not part of 'make test' or CI (README, "make test-kcsan"): the KCSAN
# flavour on the machines that run KUnit and the concurrency cases.
test-kcsan: deps tools selftests
	@scripts/test-kcsan.sh

# Not part of 'make test' or CI (tests/mutants/, README): a cold build, then
# ~3 min per mutant.
test-mutants: deps
	@scripts/mutants.sh $(MUTANTS)

# Not part of 'make test' or CI: two KUnit kernels, one table.
test-upstream: deps tools selftests
	@scripts/test-upstream.sh

check: deps
	@scripts/check.sh

patch: deps
	@scripts/make-patch.sh

clean:
	rm -rf build/out-* build/runs build/bin build/accel build/last-run build/run-*.out build/selftests* \
		build/patch-* build/patches build/sphinx-check build/linux-intree* build/bench* \
		build/linux-upstream build/out-*-upstream-debug build/kunit-bb-* build/test-upstream
	-git worktree remove --force build/mutants/tree 2>/dev/null
	rm -rf build/mutants
