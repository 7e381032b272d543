#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print "kvm" if a KVM guest boots this kernel far enough to panic for lack
# of a root filesystem within 20 s, else "tcg". On the machines this project
# runs on KVM guests hang in the firmware, so the probe must time out.
kernel=$1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ -w /dev/kvm ] &&
   timeout -k 2 20 qemu-system-x86_64 -machine q35,accel=kvm -cpu host -m 256M \
	-nodefaults -display none -no-reboot -kernel "$kernel" \
	-append "console=ttyS0 panic=-1" -serial "file:$log" >/dev/null 2>&1 &&
   grep -q 'Kernel panic' "$log"; then
	echo kvm
else
	echo tcg
fi
