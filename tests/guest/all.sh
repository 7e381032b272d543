#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Everything one guest boot of `make test` runs: the end-to-end checks,
# then the kselftests (whose unbind tests come last).
dir=$(dirname "$0")
"$dir/e2e.sh"
"$dir/selftests.sh"
