#!/usr/bin/env bash
# ir.sh - a pass run on hand-written IR, against its expected output.
#
# usage: ir.sh TILEC SRCROOT NAME
#
# tests/ir/NAME.ir is IR text as `tilec --emit=ir` prints it (docs/ir.md,
# "IR text"), opened by comment lines that say what it tests and hold
#
#   // args: ARG...            e.g. -t cuda --passes=barrier
#
# The test runs, from SRCROOT,
#
#   tilec --from-ir tests/ir/NAME.ir --verify --emit=ir ARG...
#
# and compares what it prints with tests/ir/NAME.out exactly (a unified
# diff on a mismatch; TILEC_UPDATE=1 rewrites NAME.out instead, to be
# read).  A file with a line `// expect: LINE:COL: error: MESSAGE`
# instead must make tilec exit 1 with stderr beginning
# `tests/ir/NAME.ir:LINE:COL: error: MESSAGE`, the line and a caret: an
# error of the IR text, which the reader locates in it.  An error of a
# pass is located where the IR's positions (`// L:C`) say, in the tile
# program the kernel line names: `// expect-source: FILE:L:C: error: ...`
# must be stderr's first line.
set -u

if [ $# -ne 3 ]; then
	echo "usage: ir.sh TILEC SRCROOT NAME" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
name=$3
file=tests/ir/$name.ir
if [ ! -f "$file" ]; then
	echo "ir.sh: no $file" >&2
	exit 1
fi
args=()
if line=$(grep -m1 '^// args:' "$file"); then
	read -r -a args <<<"${line#// args:}"
fi
expect=$(grep -m1 '^// expect:' "$file" | sed 's|^// expect: *||')
source_expect=$(grep -m1 '^// expect-source:' "$file" |
	sed 's|^// expect-source: *||')

cmd=("$tilec" --from-ir "$file" --verify --emit=ir "${args[@]}")
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"${cmd[@]}" >"$out" 2>"$err"
status=$?
echo "\$ tilec ${cmd[*]:1}"

if [ -n "$source_expect" ]; then
	# A pass's error: located in the tile program the IR names.
	got=$(head -n 1 "$err")
	if [ $status -ne 1 ] || [ "$got" != "$source_expect" ]; then
		echo "FAIL: wanted status 1 and"
		echo "$source_expect"
		echo "got status $status and"
		cat "$err"
		exit 1
	fi
	echo "ok: $source_expect"
	exit 0
fi
if [ -n "$expect" ]; then
	want="$file:$expect"
	got=$(head -n 1 "$err")
	lineno=${expect%%:*}
	col=${expect#*:}
	col=${col%%:*}
	srcline=$(sed -n "${lineno}p" "$file")
	caret=$(printf '%s' "${srcline:0:col-1}" | sed 's/[^\t]/ /g')^
	if [ $status -ne 1 ] || [ "$got" != "$want" ] ||
	   [ "$(sed -n 2p "$err")" != "$srcline" ] ||
	   [ "$(sed -n 3p "$err")" != "$caret" ]; then
		echo "FAIL: wanted status 1 and"
		printf '%s\n%s\n%s\n' "$want" "$srcline" "$caret"
		echo "got status $status and"
		cat "$err"
		exit 1
	fi
	echo "ok: $want"
	exit 0
fi

expected=tests/ir/$name.out
if [ $status -ne 0 ]; then
	echo "FAIL: tilec exited with status $status"
	cat "$err"
	exit 1
fi
if [ "${TILEC_UPDATE:-0}" = 1 ]; then
	cp "$out" "$expected"
	echo "updated $expected"
	exit 0
fi
if ! diff -u "$expected" "$out"; then
	echo "FAIL: output differs from $expected"
	exit 1
fi
echo "ok: $expected"
