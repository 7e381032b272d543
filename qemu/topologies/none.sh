# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu, kernel_arg and scenario.
# No devices beyond the q35 machine and the 9p root: for checks of the
# harness itself (tests/run-all.sh boots it from a copy of the checkout
# under /tmp, to prove the guest finds the checkout wherever it lives).
