#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan a guest kernel console log for reports from the kernel's checkers:
# KASAN, lockdep, kmemleak (reports, or the detector switching itself off),
# WARN, BUG (soft lockups included), oops, panic, hung tasks and RCU
# stalls (rcu_sched, rcu_preempt, rcu_tasks...: "detected stalls on
# CPUs/tasks", "self-detected stall", "detected expedited stalls"), and a
# task still blocked in the kernel ("state:D") when guest/init.sh lists
# them at the end of the boot. Prints
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
hits=$(grep -E 'WARNING:|BUG:|KASAN|kmemleak: [0-9]+ new suspected|Kernel memory leak detector disabled|possible circular locking|inconsistent lock state|Oops|Kernel panic|general protection fault|UBSAN|INFO: task .* blocked|soft lockup|task:.* state:D |RCU stall|rcu_[a-z_]+ (self-)?detected (expedited )?stalls?|detected stalls on CPUs' "$log" |
	grep -v -e 'Speculative Return Stack Overflow' -e 'BUG: KCSAN: ')
if [ -n "$hits" ]; then
	echo "$hits"
	exit 1
fi
exit 0
