#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer target over tc_translate and run it.
#
# usage: tools/fuzz.sh [SECONDS] [extra libFuzzer flags]
#
# Configures build-fuzz/ (apart from the normal build) with clang-14, the
# translator built with -fsanitize=address,undefined (every report fatal)
# and -Dfuzzer=enabled, builds tests/fuzz/fuzz_translate there (the same
# sources meson.build lists for the translator library, so nothing here
# lists them again), then runs it for SECONDS (default 120), one worker per
# core, with samples/, tests/errors/ and tests/fuzz/regress/ as the seed
# corpus.  The corpus grows in build-fuzz/corpus/; inputs that crash, hang
# or trip a sanitizer land in build-fuzz/findings/, and the script exits 1
# if there are any.  Reproduce one with
#     build-fuzz/tests/fuzz_translate FILE
# and keep it as a regression test in tests/fuzz/regress/ (tests/README.md).
# FUZZ_CC picks another clang.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-120}
shift || true
cc=${FUZZ_CC:-clang-14}
if ! command -v "$cc" >/dev/null; then
	echo "fuzz.sh: $cc not found (tools/setup.sh installs clang-14 and" \
		"libclang-rt-14-dev)" >&2
	exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ ! -f "$out/build.ninja" ]; then
	if ! CC=$cc meson setup "$out" "$root" -Dfuzzer=enabled \
		-Dtests=disabled -Db_sanitize=address,undefined \
		-Db_lundef=false \
		-Dc_args="['-fno-sanitize-recover=undefined', '-fsanitize=fuzzer-no-link']" \
		>"$log" 2>&1; then
		cat "$log" >&2
		echo "fuzz.sh: meson setup failed" >&2
		exit 1
	fi
fi
if ! ninja -C "$out" tests/fuzz_translate >"$log" 2>&1; then
	cat "$log" >&2
	echo "fuzz.sh: build failed" >&2
	exit 1
fi

mkdir -p "$out/corpus" "$out/findings"
rm -f "$out"/findings/*
cd "$out"
# One worker per core (fork mode), carrying on past each finding so one
# run reports them all.  libclang keeps caches for the life of the
# process; leaks there are not ours, so leak checking is off.
./tests/fuzz_translate -fork="$(nproc)" -ignore_crashes=1 \
	-ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
	-max_len=8192 -timeout=20 -rss_limit_mb=4096 -detect_leaks=0 \
	-artifact_prefix="$out/findings/" \
	"$@" corpus "$root/samples" "$root/tests/errors" \
	$([ -d "$root/tests/fuzz/regress" ] && echo "$root/tests/fuzz/regress") \
	>"$log" 2>&1 || true
tail -n 5 "$log"
findings=$(find "$out/findings" -type f | wc -l)
if [ "$findings" -gt 0 ]; then
	echo "fuzz.sh: $findings finding(s) in $out/findings/:" >&2
	ls "$out/findings" >&2
	exit 1
fi
echo "fuzz.sh: no findings in ${seconds}s"
