#!/usr/bin/env bash
# Files tilec writes are whole or absent: `tilec FILE -o OUT` and `tilec
# export` write through a temporary file renamed over the old one.
#
#   output.sh TILEC SRCROOT CASE
#
# CASE  translate  a write that fails midway (a file-size limit) leaves
#                  the old OUT as it was and no temporary; OUT keeps its
#                  permissions; through a symbolic link the file it names
#                  is replaced, the link kept; a FIFO is written as it is
#       export     the same for `tilec export`: a failed write leaves the
#                  old header, a successful one replaces it
#       stdout     what tilec export and tilec run print lost on a full
#                  stdout (/dev/full): status 1 and an error, as for tilec
#                  FILE
#       empty      an empty -o (and tune's other paths) is a usage error
#                  before anything is translated, searched or written
set -u
tilec=$(realpath "$1") root=$(realpath "$2") case=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-output.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2

fail() { echo "FAIL: $*" >&2; exit 1; }
no_temporaries() {
	if ls -a "$@" | grep -q '\.tmp-'; then
		ls -la "$@"
		fail "a temporary file was left"
	fi
}

case $case in
translate)
	echo "the old output" >out.c
	chmod 640 out.c
	# --standalone output is over 4 KiB: the write fails with EFBIG
	# (SIGXFSZ ignored, so write() reports it).
	(trap '' XFSZ; ulimit -f 4; "$tilec" "$root/samples/gemm.c" --standalone -o out.c) \
		2>err.txt && fail "a write over the limit succeeded"
	grep -q "cannot write 'out.c'" err.txt || { cat err.txt; fail "no message"; }
	[ "$(cat out.c)" = "the old output" ] || fail "the old output was changed: $(head -c 200 out.c)"
	no_temporaries .
	"$tilec" "$root/samples/gemm.c" -o out.c || fail "translate"
	grep -q "^void tilec_entry_gemm\|^tilec_entry_gemm" out.c || fail "no kernel in out.c"
	[ "$(stat -c %a out.c)" = 640 ] || fail "permissions $(stat -c %a out.c), not 640"
	ln -s out.c link.c
	"$tilec" "$root/samples/softmax.c" -o link.c || fail "translate through a link"
	[ -L link.c ] || fail "the link was replaced"
	grep -q "tilec_entry_softmax" out.c || fail "the link's target was not written"
	mkfifo pipe
	cat pipe >from-pipe.c &
	reader=$!
	"$tilec" "$root/samples/softmax.c" -o pipe || fail "translate into a FIFO"
	wait $reader
	[ -p pipe ] || fail "the FIFO was replaced"
	cmp -s from-pipe.c out.c || fail "the FIFO got other text"
	mkdir dir.c
	"$tilec" "$root/samples/gemm.c" -o dir.c 2>err.txt && fail "wrote over a directory"
	grep -q "cannot write 'dir.c'" err.txt || { cat err.txt; fail "no message"; }
	no_temporaries .
	;;
export)
	"$tilec" export "$root/samples/gemm.c" -o x >/dev/null || fail "export"
	cp x/gemm.h before.h
	echo "/* the old header */" >x/gemm.h
	(trap '' XFSZ; ulimit -f 4; "$tilec" export "$root/samples/gemm.c" -o x) \
		>/dev/null 2>err.txt && fail "an export over the limit succeeded"
	grep -q "cannot write" err.txt || { cat err.txt; fail "no message"; }
	[ "$(cat x/gemm.h)" = "/* the old header */" ] || fail "the old header was changed"
	no_temporaries x
	"$tilec" export "$root/samples/gemm.c" -o x >/dev/null || fail "export again"
	cmp -s x/gemm.h before.h || fail "the header was not replaced"
	;;
empty)
	# Each must stop with status 2 at once: nothing written here (tune
	# once left a ".partial" after the whole search) or into / (export
	# once took "" as the root directory).
	expect_usage() {
		st=0
		"$tilec" "$@" >out.txt 2>err.txt || st=$?
		[ "$st" -eq 2 ] && grep -q "empty" err.txt ||
			{ cat out.txt err.txt; fail "status $st for: $*"; }
	}
	expect_usage "$root/samples/gemm.c" -o ""
	expect_usage export "$root/samples/gemm.c" -o ""
	for o in -o --prepare --finish --unit; do
		expect_usage tune "$root/samples/gemm.c" --shape M=64,N=64,K=64 "$o" ""
	done
	expect_usage tune "$root/samples/gemm.c" --finish x --timings=""
	[ "$(ls -A)" = "$(printf 'err.txt\nout.txt')" ] || { ls -A; fail "files were written"; }
	[ ! -e /gemm.h ] || fail "/gemm.h was written"
	;;
stdout)
	[ -w /dev/full ] || { echo "no /dev/full"; exit 77; }
	expect_lost() {
		st=0
		"$tilec" "$@" >/dev/full 2>err.txt || st=$?
		[ "$st" -eq 1 ] && grep -q "cannot write the output: No space left on device" err.txt ||
			{ cat err.txt; fail "status $st for: $*"; }
	}
	expect_lost "$root/samples/gemm.c"
	expect_lost export "$root/samples/gemm.c" -o x
	expect_lost export "$root/samples/gemm.c" -o x --json
	expect_lost run "$root/samples/softmax.c" --shape M=3,N=100
	expect_lost run "$root/samples/softmax.c" --shape M=3,N=100 --json
	;;
*)
	echo "unknown case $case" >&2
	exit 2
	;;
esac
echo PASS
