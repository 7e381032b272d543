#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test guest (see qemu/run.sh). Mounts the pseudo filesystems
# over the read-only host root, runs the command given after "--" on the
# kernel command line with its output on the second serial port, ends the
# kernel log with a marker, reports "P2PDMA-EXIT <status>" on the second
# port, and powers the machine off.
#
# The guest gets a fresh tmpfs on /tmp and /run. A checkout that lives
# under the host's /tmp would be hidden by it, so it is bind-mounted back
# at the same path first: the harness runs from any checkout.
top=$(cd "$(dirname "$0")/.." && pwd)
mount -t proc proc /proc
mount -t sysfs sysfs /sys
[ -c /dev/null ] || mount -t devtmpfs devtmpfs /dev
# devtmpfs has no /dev/fd, which bash's process substitution needs.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /run
case $top in
/tmp/*)
	mkdir -p /run/checkout
	mount --bind "$top" /run/checkout
	;;
esac
mount -t tmpfs -o mode=1777 tmpfs /tmp
if [ -d /run/checkout/guest ]; then
	mkdir -p "$top"
	mount --move /run/checkout "$top"
fi
mount -t debugfs debugfs /sys/kernel/debug
# DMA-API debugging prints only its first report by default: every one
# (qemu/scan-console.sh excuses one kind, which must not hide the rest).
[ -w /sys/kernel/debug/dma-api/all_errors ] && echo 1 > /sys/kernel/debug/dma-api/all_errors
mount -t configfs configfs /sys/kernel/config
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
exec >/dev/ttyS1 2>&1
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
cd /tmp || exit 1
if [ -x "$1" ]; then
	"$@"
	rc=$?
else
	echo "init: $1 not found in the guest (checkout $top)"
	rc=127
fi
# The end of the boot. What the command left queued (RCU callbacks, work
# items, a delayed report) gets a few seconds to reach the console; the
# tasks still blocked in the kernel are listed there (sysrq w: the hung
# task detector would need up to 90 s to name them); then a marker that
# tests/judge.sh requires, since a console cut short before it may have
# lost a report.
sleep 5
echo w > /proc/sysrq-trigger
# Lockdep that turned itself off checked nothing after: is it still on?
if [ -r /proc/lockdep_stats ]; then
	echo "P2PDMA-DEBUG-LOCKS $(awk '/debug_locks:/ { print $2 }' /proc/lockdep_stats)" > /dev/kmsg
fi
echo "P2PDMA-CONSOLE-END" > /dev/kmsg
echo "P2PDMA-EXIT $rc"
# Let the UART send the status line before the reset cuts it off; the
# root filesystem is still there, so running sleep is safe here.
sleep 1
echo b > /proc/sysrq-trigger
# The root filesystem may already be gone: spin in builtins only.
while :; do :; done
