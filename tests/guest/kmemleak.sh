#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The last suite of a test boot: kmemleak must be enabled and readable, and
# a scan after every other suite (nvmet, fio, threads, unbind) must find no
# unreferenced object. Two scans, since an object must survive one scan
# period unreferenced to be reported.
echo "1..1"
km=/sys/kernel/debug/kmemleak
if ! [ -r $km ] || ! echo scan > $km 2>/dev/null; then
	echo "not ok 1 - kmemleak_clean_after_all_suites: $km missing or disabled"
	exit 1
fi
sleep 6
echo scan > $km
leaks=$(cat $km)
if [ -n "$leaks" ]; then
	echo "not ok 1 - kmemleak_clean_after_all_suites: $(grep -c unreferenced <<< "$leaks") leaks"
	printf '%s\n' "$leaks" | head -n 80 | sed 's/^/# /'
	exit 1
fi
echo "ok 1 - kmemleak_clean_after_all_suites"
