#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer target over tc_translate and run it.
#
# usage: tools/fuzz.sh [SECONDS] [extra libFuzzer flags]
#
# Builds tests/fuzz/fuzz_translate.c with the translator's sources under
# clang-14 -fsanitize=fuzzer,address,undefined in build-fuzz/ (apart from
# the meson build), then runs it for SECONDS (default 120), one worker per
# core, with samples/ and tests/errors/ as the seed corpus.  The corpus grows in
# build-fuzz/corpus/; crashing inputs land in tests/fuzz/crashes/.
# Reproduce one with: build-fuzz/fuzz_translate tests/fuzz/crashes/FILE
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build-fuzz
seconds=${1:-120}
shift || true
cc=${FUZZ_CC:-clang-14}
if ! command -v "$cc" >/dev/null; then
	echo "fuzz.sh: $cc not found (apt-get install clang-14 libclang-rt-14-dev)" >&2
	exit 1
fi
llvm=
for v in 19 18 17 16; do
	if [ -f /usr/lib/llvm-$v/include/clang-c/Index.h ]; then
		llvm=/usr/lib/llvm-$v
		break
	fi
done
if [ -z "$llvm" ]; then
	echo "fuzz.sh: libclang not found (tools/setup.sh installs it)" >&2
	exit 1
fi

mkdir -p "$out/obj" "$out/corpus" "$root/tests/fuzz/crashes"
# The translator library: every source of src/ but the program's own, the
# emitters, and the embedded headers (as meson.build lists them).
mapfile -t templates < <(find "$root/templates" -name '*.h' | sort)
python3 "$root/tools/embed.py" "$out/embedded.c" "$root" \
	"$root/src/include/tilec.h" "${templates[@]}"
sources=("$out/embedded.c" "$root/tests/fuzz/fuzz_translate.c")
for f in "$root"/src/*.c "$root"/emitters/*.c; do
	case ${f##*/} in
	main.c | run.c | interp.c) ;;
	*) sources+=("$f") ;;
	esac
done
flags=(-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=undefined -D_POSIX_C_SOURCE=200809L
	-D_DEFAULT_SOURCE -I"$root/src" -I"$root/emitters" -I"$root/runtime"
	-I"$llvm/include")
objs=()
for s in "${sources[@]}"; do
	o=$out/obj/$(echo "${s#"$root"/}" | tr / _).o
	if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ "$root/src/tilec_int.h" -nt "$o" ]; then
		"$cc" "${flags[@]}" -c "$s" -o "$o"
	fi
	objs+=("$o")
done
"$cc" "${flags[@]}" "${objs[@]}" -L"$llvm/lib" -Wl,-rpath,"$llvm/lib" \
	-lclang -lm -o "$out/fuzz_translate"

jobs=$(nproc)
cd "$out"
# One worker per core (fork mode), carrying on past each finding so one
# run reports them all.  libclang keeps caches for the life of the
# process; leaks there are not ours, so leak checking is off.
exec ./fuzz_translate -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 \
	-ignore_ooms=1 -max_total_time="$seconds" -max_len=8192 \
	-timeout=20 -rss_limit_mb=4096 -detect_leaks=0 \
	-artifact_prefix="$root/tests/fuzz/crashes/" \
	"$@" corpus "$root/samples" "$root/tests/errors"
