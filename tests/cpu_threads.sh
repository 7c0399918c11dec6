#!/usr/bin/env bash
# cpu_threads.sh - where tilec's CPU kernels run their threads, and where
# the runtime puts the pages of the buffers it allocates.
#
# usage: cpu_threads.sh TILEC SRCROOT CASE
#
#   bind    an exported kernel (samples/softmax.c) binds its OpenMP
#           threads one per core, close, when nothing in the environment
#           places them, and binds again when the team grows
#           (tests/cpu_threads/bind.c); with OMP_PROC_BIND=false they stay
#           free; with OMP_PLACES the user's places hold; with more
#           threads than cores consecutive threads share a core.  Needs
#           two CPUs (skipped otherwise).
#   i4      two threads writing the two nibbles of one byte of a packed
#           i4 tensor lose neither's writes (tests/cpu_threads/i4_store.c).
set -u
tilec=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$2"
case=$3
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

case $case in
bind)
	cpus=$(nproc)
	[ "$cpus" -ge 2 ] || { echo "one CPU: nothing to bind"; exit 77; }
	"$tilec" export samples/softmax.c --arch generic -o "$work/x" >/dev/null ||
		fail "export"
	"$cc" -std=c11 -O2 -march=native -fopenmp -I "$work/x" -o "$work/bind" \
		tests/cpu_threads/bind.c "$work/x/softmax.c" -lm ||
		fail "bind.c does not build"
	# run MODE [VAR=VALUE ...]: the program, OpenMP's affinity unset
	run() {
		local mode=$1
		shift
		env -u OMP_PROC_BIND -u OMP_PLACES -u GOMP_CPU_AFFINITY \
			-u KMP_AFFINITY -u OMP_NUM_THREADS "$@" "$work/bind" "$mode" \
			>"$work/out" 2>&1 ||
			{ cat "$work/out"; fail "$mode $*"; }
		echo "$mode $*: $(tail -n 1 "$work/out")"
	}
	run close
	run close OMP_NUM_THREADS=2
	run close OMP_NUM_THREADS=$((cpus + 1))
	run free OMP_PROC_BIND=false
	run reversed OMP_PLACES="{1},{0}" OMP_PROC_BIND=close OMP_NUM_THREADS=2
	;;
i4)
	# ThreadSanitizer sees a race whether or not this run's writes met.
	"$cc" -std=c11 -O1 -g -fsanitize=thread -I templates/cpu -o "$work/i4" \
		tests/cpu_threads/i4_store.c -lpthread -lm 2>"$work/cc.log" ||
		{ cat "$work/cc.log"; fail "i4_store.c does not build with -fsanitize=thread"; }
	TSAN_OPTIONS=exitcode=66 "$work/i4" >"$work/out" 2>&1
	st=$?
	cat "$work/out"
	[ $st -eq 0 ] || fail "two threads' writes of one byte's nibbles race (status $st)"
	;;
*)
	fail "unknown case $case"
	;;
esac
