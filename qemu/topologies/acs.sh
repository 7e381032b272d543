# shellcheck shell=bash
# Sourced by qemu/run.sh, which defines dev, nvme, cpu and guest_env.
# The mfd topology with ACS P2P Request Redirect enabled on the root port
# (pci=config_acs): peer requests go up to the q35 host bridge, which is
# not known to route P2P, so the pair is refused.
# shellcheck source=qemu/topologies/mfd.sh
. "$(dirname "${BASH_SOURCE[0]}")/mfd.sh"
guest_env pci=config_acs=1xx@0000:00:04.0
guest_env P2P_EXPECT_SRC=refused
guest_env P2P_EXPECT_DST=refused
