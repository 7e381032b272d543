# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, ivshmem and scenario.
# What the KUnit suites need besides the fake hierarchies they build: an
# ivshmem-plain device that no driver binds, whose BAR p2pmem-bar's
# claimed-BAR case claims itself (drivers/pci/p2pdma/tests/p2pmem-bar-kunit.h; without one
# the case skips, which make test counts as a failure). No scenario: no
# guest suite uses it, and it is no P2P provider.
#
#  pcie.0 -- rp13 (00:0c.0) -- ivku (8 MiB memory BAR, no driver)
dev pcie-root-port,id=rp13,bus=pcie.0,chassis=13,slot=13,addr=0xc
ivshmem ivku rp13 8M
