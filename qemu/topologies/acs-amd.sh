# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu, kernel_arg and scenario.
# The acs topology with an AMD Zen guest CPU: the redirected route goes
# through the host bridge, which routes P2P, and the bytes arrive.
acs_cpu=EPYC,vendor=AuthenticAMD acs_name=acs_amd acs_expect=through-host-bridge acs_dist=1028
# shellcheck source=qemu/topologies/acs.sh
. "$(dirname "${BASH_SOURCE[0]}")/acs.sh"
