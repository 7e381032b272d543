#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own kselftests that reach the paths of our core (make
# selftests builds the targets scripts/kernel.sh names in kselftests into
# build/selftests-$KERNEL/install), one framed TAP suite per program as in
# tests/guest/all.sh. scripts/test-upstream-guest.sh boots it on the iommu
# topology on both cores and wants the same result for every case: a
# third-party check nobody here wrote, so a case failing on both is the
# suite's verdict on this machine, not ours.
#
#   vfio   every program, on the machine's edu (1234:11e8), bound to
#          vfio-pci here: its one BAR is 1 MiB (the suites' library cannot
#          map a BAR smaller than a page, such as ivshmem's BAR 0), it has
#          MSI, and it sits alone below a root port (bus reset);
#   iommu  iommufd (the mock IOMMU of IOMMUFD_TEST). Not iommufd_fail_nth,
#          which repeats every call with each allocation failing in turn.
#
# 64 huge pages of 2 MiB first where the kernel has hugetlbfs (the debug
# configuration has not): iommufd's huge page cases fail, rather than
# skip, without them; alike on both cores.
top=$(cd "$(dirname "$0")/../.." && pwd)
ks=$top/build/selftests-${P2P_KERNEL:?not set by qemu/run.sh}/install
worst=0

# One framed suite, as all.sh frames its own.
suite() { # ID CMD [ARG...]
	"$top/tests/guest/all.sh" --only "$@" || worst=1
}

[ ! -w /proc/sys/vm/nr_hugepages ] || echo 64 > /proc/sys/vm/nr_hugepages
edu=""
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor") $(cat "$d/device")" = "0x1234 0x11e8" ] && edu=${d##*/} && break
done
if [ -d "$ks/vfio" ] && [ -n "$edu" ]; then
	echo vfio-pci > "/sys/bus/pci/devices/$edu/driver_override"
	echo "$edu" > /sys/bus/pci/drivers_probe
	for t in "$ks"/vfio/vfio_*; do
		[ -x "$t" ] && suite "vfio/${t##*/}" "$t" "$edu"
	done
	echo "$edu" > /sys/bus/pci/drivers/vfio-pci/unbind
fi
[ ! -x "$ks/iommu/iommufd" ] || suite iommu/iommufd "$ks/iommu/iommufd"
exit $worst
