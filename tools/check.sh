#!/usr/bin/env bash
# check.sh - set up, build and run every test; end with one summary line.
#
# usage: tools/check.sh [meson test arguments, e.g. --suite unit]
#
# Runs tools/setup.sh (packages, configure, build), then
# `meson test -C build --print-errorlogs`, and prints as its last line
#
#     N passed, N failed[, N skipped]
#
# counted from meson's build/meson-logs/testlog.json.  A failed build
# counts as one failure.  Exit status: 0 when nothing failed, 1 otherwise.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
export BUILD_DIR=$build

if ! "$root/tools/setup.sh"; then
	echo "setup or build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

log=$build/meson-logs/testlog.json
rm -f "$log"
meson test -C "$build" --print-errorlogs "$@"
status=$?

if [ ! -f "$log" ]; then
	echo "meson test produced no results (status $status)"
	echo "0 passed, 1 failed"
	exit 1
fi
summary=$(python3 - "$log" <<'PY'
import json, sys
passed = failed = skipped = 0
with open(sys.argv[1]) as f:
    for line in f:
        line = line.strip()
        if not line:
            continue
        result = json.loads(line).get('result', 'ERROR')
        if result in ('OK', 'EXPECTEDFAIL'):
            passed += 1
        elif result == 'SKIP':
            skipped += 1
        else:
            failed += 1
text = '%d passed, %d failed' % (passed, failed)
if skipped:
    text += ', %d skipped' % skipped
print(text)
sys.exit(1 if failed else 0)
PY
)
counted=$?
echo "$summary"
if [ $status -ne 0 ] || [ $counted -ne 0 ]; then
	exit 1
fi
exit 0
