# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu and guest_env.
# The hostbridge topology with an AMD Zen guest CPU, whose root complex
# routes P2P between host bridges: the same paths are allowed.
# shellcheck source=qemu/topologies/hostbridge.sh
. "$(dirname "${BASH_SOURCE[0]}")/hostbridge.sh"
cpu EPYC,vendor=AuthenticAMD
# Later guest_env lines win: the kernel hands init the last value.
guest_env P2P_EXPECT_SRC=through-host-bridge
guest_env P2P_EXPECT_DST=through-host-bridge
