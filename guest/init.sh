#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test guest (see qemu/run.sh). Mounts the pseudo filesystems
# over the read-only host root, runs the command given after "--" on the
# kernel command line with its output on the second serial port, reports
# "P2PDMA-EXIT <status>" there, and powers the machine off.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
[ -c /dev/null ] || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
mount -t configfs configfs /sys/kernel/config
exec >/dev/ttyS1 2>&1
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
cd /tmp || exit 1
"$@"
echo "P2PDMA-EXIT $?"
# Let the UART send the status line before the reset cuts it off; the
# root filesystem is still there, so running sleep is safe here.
sleep 1
echo b > /proc/sysrq-trigger
# The root filesystem may already be gone: spin in builtins only.
while :; do :; done
