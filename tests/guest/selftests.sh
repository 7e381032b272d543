#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the p2pdma kselftests (built into build/selftests by `make test`) in
# the guest and print their results in the "ok - name" form that
# tests/run-all.sh counts. Each program's own TAP is kept as comments.
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/build/selftests/install/p2pdma
[ -x "$dir/p2pdma_test" ] || { echo "not ok - selftests_built: $dir/p2pdma_test missing"; exit 0; }
cd "$dir" || exit 0
for prog in nvmet_configfs.sh fio_verify.sh p2pdma_test; do
	"./$prog" 2>&1 | sed -E \
		-e 's/^(not )?ok [0-9]+ ([^#]*[^ #])( # SKIP.*)?$/\1ok - '"${prog%%.*}"': \2\3/' \
		-e '/^(not )?ok - /!s/^/# /'
done
