#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test-kcsan`: build the KCSAN flavour (config/kcsan.config: the debug
# flavour with KCSAN in place of KASAN) and boot it, one guest at a time, on
# the machines of tests/machines that run the KUnit suites and the
# concurrency cases: `intel` (KUnit, among them the pool on every CPU at
# once), `intel-switch` (the full p2pdma_test and p2pmem_unbind: threads,
# unbind stress, mmap vs unbind; the same load cases with the ivshmem as
# provider) and `iommu` (both again, under a translating IOMMU). tests/run-all.sh
# judges them against tests/plan like `make test` does, and tests/judge.sh fails
# the run on a KCSAN report whose stacks have a frame of our code
# (drivers/pci/p2pdma/, p2pmem-bar); reports about other code are listed
# with their stacks. Ends with "N passed, N failed, N skipped"; exit
# status 1 on any failure.
#
# The guests run multi-threaded TCG (TCG_THREAD=multi): KCSAN sees a race
# only when the other access happens while a watchpoint is armed (80 us by
# default), which vCPUs that take turns on one host thread rarely do.
#
# Usage: scripts/test-kcsan.sh [MACHINE...]   (default: intel intel-switch iommu)
# Environment: TEST_TIMEOUT per boot (default 3600), TCG_THREAD, P2P_JOBS
# (default 1), as tests/run-all.sh.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kernel.sh
. "$top/scripts/kernel.sh"
[ $# -gt 0 ] || set -- intel intel-switch iommu
start=$(date +%s)
nice -n 10 "$top/scripts/build-kernel.sh" kcsan
echo "test-kcsan: kernel ready after $(($(date +%s) - start)) s; booting $*"
export TEST_FLAVOUR=kcsan TEST_TIMEOUT=${TEST_TIMEOUT:-3600}
export TCG_THREAD=${TCG_THREAD:-multi} P2P_JOBS=${P2P_JOBS:-1}
exec "$top/tests/run-all.sh" "$@"
