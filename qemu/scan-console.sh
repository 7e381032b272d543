#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan a guest kernel console log for reports from the kernel's checkers:
# KASAN, lockdep, kmemleak (reports, or the detector switching itself off),
# WARN, BUG (soft lockups and DEBUG_PREEMPT's included), oops, panic, hung
# tasks and RCU stalls (rcu_sched, rcu_preempt, rcu_tasks...: "detected
# stalls on CPUs/tasks", "self-detected stall", "detected expedited
# stalls"), debugobjects ("ODEBUG:"), DMA-API debugging's reports (a
# mapping left when its device's driver went, an unmap of another size or
# direction: "DMA-API: DRIVER DEVICE: ...", or the checker out of memory),
# and a task still blocked in the kernel ("state:D") when guest/init.sh
# lists them at the end of the boot. A boot whose checkers could have
# missed something fails too: lockdep turned off (by its first report, a
# limit reached, or "trying to register non-static key"; guest/init.sh
# logs "P2PDMA-DEBUG-LOCKS 0" when it is off at the end) or printk
# messages dropped before they reached the console. One DMA-API report is
# not counted: "cacheline tracking EEXIST" (with its WARNING in
# add_dma_entry()), which 6.12's checker gives when two devices map the
# same P2P page, a dma-buf importer and an NVMe reading into it: it tracks
# BAR pages as if the CPU cached them, and the exporter's mapping skips
# the CPU sync but the block layer's does not. Only where the test
# importer itself had the NVMe read into the pages it maps (its ioctl,
# imp_ioctl(), in the report's call trace), and only if every such report
# of the log is one: any other overlapping mapping counts. guest/init.sh
# has the checker print every report, so that this one does not hide the
# next.
# One lockdep report is not counted either, with the "P2PDMA-DEBUG-LOCKS 0"
# it leaves: 6.12's pciehp, on every removal of a hot-plug slot's card,
# takes its ctrl->reset_lock again while it holds pci_rescan_remove_lock,
# both in pciehp_unconfigure_device() (the hotunplug topology: QEMU pulls
# out a switch, after the removal of ours has run under lockdep; the case
# checks that lockdep was still on before it asked).
# Prints
# each hit and exits 1 if there is any, or if the log is missing or empty;
# 0 if the log is clean. KCSAN reports ("BUG: KCSAN: ...") are not
# counted here: tests/kcsan-reports.sh tells ours from the rest's, and
# tests/judge.sh fails a run on ours only.
#
# Usage: qemu/scan-console.sh CONSOLE_LOG
log=${1:?usage: scan-console.sh CONSOLE_LOG}
if [ ! -s "$log" ]; then
	echo "scan-console: $log is missing or empty"
	exit 1
fi
hits=$(grep -E 'WARNING:|BUG:|KASAN|kmemleak: [0-9]+ new suspected|Kernel memory leak detector disabled|possible circular locking|inconsistent lock state|Oops|Kernel panic|general protection fault|UBSAN|INFO: task .* blocked|soft lockup|task:.* state:D |RCU stall|rcu_[a-z_]+ (self-)?detected (expedited )?stalls?|detected stalls on CPUs|ODEBUG:|DMA-API: [^ ]+ [^ ]+: |DMA-API: debugging out of memory|dma-debug disabled|trying to register non-static key|turning off the locking correctness validator|P2PDMA-DEBUG-LOCKS 0|printk messages dropped' "$log" |
	grep -v -e 'Speculative Return Stack Overflow' -e 'BUG: KCSAN: ')
# The EEXIST reports above whose call trace, up to its end, does not pass
# through the test importer's ioctl.
eexist=$(awk '/cacheline tracking EEXIST, overlapping mappings/ { bad += open && !imp; open = 1; imp = 0; next }
	open && /imp_ioctl\+/ { imp = 1 }
	open && /---\[ end trace/ { bad += !imp; open = 0 }
	END { print bad + (open && !imp) }' "$log")
if [ "$eexist" = 0 ]; then
	hits=$(grep -v -e "cacheline tracking EEXIST, overlapping mappings aren't supported" \
		-E -e 'WARNING: CPU: [0-9]+ PID: [0-9]+ at kernel/dma/debug\.c:[0-9]+ add_dma_entry\+' <<< "$hits")
fi
# The lockdep report of 6.12's pciehp above: the lock it tries to take and
# the one it holds, each in pciehp_unconfigure_device(), within the report.
pciehp=$(awk '/possible circular locking dependency detected/ { n = NR; next }
	!n || NR > n + 15 { next }
	want == "t" { t = /\(&ctrl->reset_lock\)/ && /at: pciehp_unconfigure_device\+/ }
	want == "h" { h = /\(pci_rescan_remove_lock\)/ && /at: pciehp_unconfigure_device\+/ }
	{ want = /is trying to acquire lock:/ ? "t" : /but task is already holding lock:/ ? "h" : "" }
	t && h { print "yes"; exit }' "$log")
if [ "$pciehp" = yes ]; then
	hits=$(grep -v -e 'WARNING: possible circular locking dependency detected' \
		-e 'P2PDMA-DEBUG-LOCKS 0' <<< "$hits")
fi
if [ -n "$hits" ]; then
	echo "$hits"
	exit 1
fi
exit 0
