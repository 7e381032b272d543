# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu, kernel_arg and scenario.
# The hostbridge topology with an AMD Zen guest CPU, whose root complex
# routes P2P between host bridges: the same paths are allowed.
hb_cpu=EPYC,vendor=AuthenticAMD hb_name=hostbridge_amd hb_expect=through-host-bridge
# shellcheck source=qemu/topologies/hostbridge.sh
. "$(dirname "${BASH_SOURCE[0]}")/hostbridge.sh"
