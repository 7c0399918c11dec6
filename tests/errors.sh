#!/usr/bin/env bash
# errors.sh - check that tilec rejects one program with the expected error,
# or translates it with the expected warning.
#
# usage: errors.sh TILEC SRCROOT NAME.c
#
# tests/errors/NAME.c holds a comment line
#
#     // expect: LINE:COL: error: MESSAGE      (or warning: MESSAGE)
#
# and optionally `// args: ARG...` (extra tilec arguments).  From SRCROOT,
# `tilec tests/errors/NAME.c --verify ARG...` must exit with status 1 for
# an error, 0 for a warning (not a signal, not a usage error), and the
# first error (warning) in its stderr must be the three lines
#
#     tests/errors/NAME.c:LINE:COL: error: MESSAGE
#     <line LINE of the file>
#     <a caret under column COL, keeping the line's tabs>
#
# Warnings before the first error are not compared (a -D outside the
# tunable's choices warns before the error it is there to cause).
#
# An error is the pipeline's to find, not a printer's: unless the args
# pick an --emit mode, the same check runs for `--emit=ir` and
# `--emit=launch` too, which stop before the backend prints.  A file with
# a `// printer-error: WHY` line (after the code, so no line moves) is
# checked with source emission only
# (an error its backend's printer still raises, a known gap).
#
# Exit status: 0 pass, 1 fail.
set -u

if [ $# -ne 3 ]; then
	echo "usage: errors.sh TILEC SRCROOT NAME.c" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
file=tests/errors/$3

expect=$(sed -n 's|^[[:space:]]*// expect: ||p' "$file" | head -n 1)
if [ -z "$expect" ]; then
	echo "FAIL: $file has no '// expect: LINE:COL: error: MESSAGE' line"
	exit 1
fi
if ! [[ $expect =~ ^([0-9]+):([0-9]+):\ (error|warning):\ .+ ]]; then
	echo "FAIL: $file: malformed expectation: $expect"
	exit 1
fi
line=${BASH_REMATCH[1]}
col=${BASH_REMATCH[2]}
severity=${BASH_REMATCH[3]}
want_status=1
if [ "$severity" = warning ]; then
	want_status=0
fi
extra=()
args=$(sed -n 's|^[[:space:]]*// args: ||p' "$file" | head -n 1)
if [ -n "$args" ]; then
	read -r -a extra <<< "$args"
fi

# What stderr must begin with.
want_first="$file:$expect"
want_source=$(sed -n "${line}p" "$file")
want_caret=""
for ((i = 0; i < col - 1 && i < ${#want_source}; i++)); do
	c=${want_source:i:1}
	if [ "$c" = $'\t' ]; then
		want_caret+=$'\t'
	else
		want_caret+=" "
	fi
done
want_caret+="^"

check() { # WHAT WANT GOT
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1 line differs"
		echo "  want: $2"
		echo "  got:  $3"
		fail=1
	fi
}

modes=("")
if ! [[ " ${extra[*]-} " =~ \ --emit= ]] &&
	! grep -q '^[[:space:]]*// printer-error: ' "$file"; then
	modes+=(--emit=ir --emit=launch)
fi

err=$(mktemp)
trap 'rm -f "$err"' EXIT
fail=0
for mode in "${modes[@]}"; do
	run=("${extra[@]}")
	if [ -n "$mode" ]; then
		run+=("$mode")
	fi
	"$tilec" "$file" --verify "${run[@]}" >/dev/null 2>"$err"
	status=$?
	echo "\$ tilec $file --verify ${run[*]}"

	if [ $status -ne $want_status ]; then
		if [ $status -gt 128 ]; then
			echo "FAIL: tilec died of signal $((status - 128))"
		else
			echo "FAIL: tilec exited with status $status, not $want_status"
		fi
		fail=1
	fi
	# The first diagnostic of the expected severity and the two lines after it.
	first=$(grep -n -m 1 -E "^[^ ]*:[0-9]+:[0-9]+: $severity: " "$err" | cut -d: -f1)
	mapfile -t got < <(tail -n +"${first:-1}" "$err" | head -n 3)
	check first "$want_first" "${got[0]-}"
	check source "$want_source" "${got[1]-}"
	check caret "$want_caret" "${got[2]-}"
	if [ $fail -ne 0 ]; then
		echo "--- stderr:"
		cat "$err"
		exit 1
	fi
done
echo "ok: $file"
