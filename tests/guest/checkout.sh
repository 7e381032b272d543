#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run by tests/run-all.sh from a copy of the checkout under /tmp, on the
# `none` topology: that this script runs at all, from there, and sees the
# copy's files proves the guest's init found a checkout that its own tmpfs
# on /tmp would otherwise hide.
top=$(cd "$(dirname "$0")/../.." && pwd)
echo "1..2"
case $top in
/tmp/*) echo "ok 1 - guest_runs_scripts_of_a_checkout_under_tmp ($top)" ;;
*) echo "not ok 1 - guest_runs_scripts_of_a_checkout_under_tmp: checkout is $top" ;;
esac
if [ -r "$top/build/checkout-marker" ] && [ "$(cat "$top/build/checkout-marker")" = "${P2P_MARKER:-}" ]; then
	echo "ok 2 - guest_sees_the_checkout_files_not_the_tmpfs"
else
	echo "not ok 2 - guest_sees_the_checkout_files_not_the_tmpfs"
	exit 1
fi
