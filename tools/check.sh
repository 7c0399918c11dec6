#!/usr/bin/env bash
# check.sh - set up, build and run every test; end with one summary line.
#
# usage: tools/check.sh [meson test arguments, e.g. --suite unit]
#
# Runs tools/setup.sh (packages, configure, build), then
# `meson test -C build --print-errorlogs`; then the same suite again in
# build-san/, built with -fsanitize=address,undefined (every UBSan report
# fatal: a report fails the test that triggered it); then tools/fuzz.sh
# for FUZZ_SECONDS (default 60; 0 skips it), which counts as one test.
# TILEC_CHECK_SANITIZE=0 skips the sanitized run and the fuzzer.  Prints
# as its last line
#
#     N passed, N failed[, N skipped]
#
# counted from meson's testlog.json of both builds.  A failed build
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
logs=("$log")
extra_failed=0

if [ "${TILEC_CHECK_SANITIZE:-1}" != 0 ]; then
	san=${SAN_BUILD_DIR:-$root/build-san}
	slog=$san/meson-logs/testlog.json
	rm -f "$slog"
	if { [ -f "$san/build.ninja" ] ||
		meson setup "$san" "$root" -Db_sanitize=address,undefined \
			-Db_lundef=false -Dc_args=-fno-sanitize-recover=undefined \
			>/dev/null; } && ninja -C "$san" >/dev/null; then
		# libclang keeps caches for the life of the process: not our
		# leaks.  Everything else a sanitizer reports is fatal.
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
			UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			meson test -C "$san" --print-errorlogs \
			--timeout-multiplier 3 "$@" || status=1
		logs+=("$slog")
	else
		echo "the sanitized build failed"
		extra_failed=$((extra_failed + 1))
	fi
	if [ "${FUZZ_SECONDS:-60}" != 0 ]; then
		if ! "$root/tools/fuzz.sh" "${FUZZ_SECONDS:-60}"; then
			extra_failed=$((extra_failed + 1))
		fi
	fi
fi

for l in "${logs[@]}"; do
	if [ ! -f "$l" ]; then
		echo "meson test produced no results in $l (status $status)"
		echo "0 passed, 1 failed"
		exit 1
	fi
done
summary=$(python3 - "$extra_failed" "${logs[@]}" <<'PY'
import json, sys
passed = skipped = 0
failed = int(sys.argv[1])
for path in sys.argv[2:]:
    with open(path) as f:
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
