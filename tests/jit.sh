#!/usr/bin/env bash
# The JIT runtime seen from the command line (docs/runtime.md).
#
#   jit.sh TILEC SRCROOT CASE
#
# CASE  tune-no-shell  `tilec tune --cc CMD` runs CMD's words, never a
#                      shell: a `$(...)` in it is not executed, and the
#                      record names the compiler's version
#       open-cache     `tilec run` with a 1777 or 0777 TILEC_CACHE_DIR is
#                      refused, naming the directory and the fix, and
#                      writes nothing there
#       hung-compiler  a compiler that never finishes is killed after
#                      TILEC_COMPILE_TIMEOUT seconds, with what it started
#       interrupted    SIGINT (Ctrl-C) or SIGTERM to `tilec run` while its
#                      compiler runs (in a process group of its own)
#                      reaches the compiler
#       planted-entry  (as root) an entry and an object planted by another
#                      user in a directory they own are refused; the
#                      object's constructor never runs
#       one-compile    4 concurrent cold `tilec run`s of one kernel on one
#                      cache compile it once (the per-key lock): a
#                      counting --cc wrapper is run once, whatever order
#                      the processes run in; no lock file is left
#       stale-lock     a `tilec run` killed while compiling leaves its lock
#                      file; the next run is not held up by it (flock is
#                      released with the process) and compiles
#       foreign-lock   a lock file others can write, held by another
#                      process, is not waited on: the run compiles at once
set -u
tilec=$(realpath "$1") root=$2 case=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-jit.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$root" || exit 2

fail() { echo "FAIL: $*" >&2; exit 1; }
# appears FILE: wait up to 60 s for FILE to exist.
appears() {
	for _ in $(seq 600); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
run_softmax() {
	"$tilec" run samples/softmax.c --shape M=7,N=300 "$@"
}

case $case in
tune-no-shell)
	TILEC_CACHE_DIR=$work/cache "$tilec" tune samples/softmax.c \
		--shape M=7,N=300 -D BLOCK_M=1 -D THREADS=128 \
		--choices BLOCK_N=256,512 --repeat 3 --warmup 1 --confirm 1 \
		--cc "cc \$(touch $work/ran)" -o "$work/bad.json" \
		>"$work/out" 2>&1
	[ -e "$work/ran" ] && fail "--cc went through a shell"
	TILEC_CACHE_DIR=$work/cache "$tilec" tune samples/softmax.c \
		--shape M=7,N=300 -D BLOCK_M=1 -D THREADS=128 \
		--choices BLOCK_N=256,512 --repeat 3 --warmup 1 --confirm 1 \
		--cc "cc -O2" -o "$work/rec.json" >"$work/out" 2>&1 ||
		{ cat "$work/out"; fail "tune with --cc 'cc -O2'"; }
	want=$(cc --version | head -n 1)
	python3 - "$work/rec.json" "$want" <<'PY' || fail "compiler version"
import json, sys
rec = json.load(open(sys.argv[1]))
assert rec["compilers"]["cc"] == sys.argv[2], rec["compilers"]
PY
	;;
open-cache)
	for mode in 1777 0777; do
		dir=$work/open-$mode
		mkdir "$dir" && chmod "$mode" "$dir"
		TILEC_CACHE_DIR=$dir run_softmax >"$work/out" 2>&1 &&
			fail "mode $mode: ran with an open cache"
		grep -q "refusing the cache directory $dir: $dir is writable by every user (mode $mode)" \
			"$work/out" || { cat "$work/out"; fail "mode $mode: message"; }
		grep -q "chmod go-w $dir" "$work/out" || fail "mode $mode: the fix"
		[ -z "$(ls -A "$dir")" ] || fail "mode $mode: wrote $(ls "$dir")"
		# With the fix applied it works.
		chmod go-w "$dir"
		TILEC_CACHE_DIR=$dir run_softmax >"$work/out" 2>&1 ||
			{ cat "$work/out"; fail "mode $mode fixed"; }
	done
	;;
hung-compiler)
	cat >"$work/cc-hang" <<'SH'
#!/bin/sh
if [ "$1" = --version ]; then echo 'hanging cc 1.0'; exit 0; fi
sleep 600 &
echo $! > "${0%/*}/sleeper.pid"
wait
SH
	chmod +x "$work/cc-hang"
	SECONDS=0
	TILEC_COMPILE_TIMEOUT=1 TILEC_CACHE_DIR=$work/cache \
		run_softmax --cc "$work/cc-hang" >"$work/out" 2>&1 &&
		fail "ran with a compiler that hangs"
	[ "$SECONDS" -lt 60 ] || fail "took $SECONDS s"
	grep -q "did not finish within 1 s and was killed" "$work/out" ||
		{ cat "$work/out"; fail "message"; }
	pid=$(cat "$work/sleeper.pid")
	for _ in $(seq 100); do
		state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
		[ -z "$state" ] || [ "$state" = Z ] && break
		sleep 0.1
	done
	[ -z "$state" ] || [ "$state" = Z ] || fail "the compiler's child $pid lives"
	;;
interrupted)
	cat >"$work/cc-hang" <<'SH'
#!/bin/sh
if [ "$1" = --version ]; then echo 'hanging cc 1.0'; exit 0; fi
# (not `sleep &`: a script's background job ignores SIGINT)
echo $$ > "${0%/*}/sleeper.pid.tmp"
mv "${0%/*}/sleeper.pid.tmp" "${0%/*}/sleeper.pid"
exec sleep 600
SH
	chmod +x "$work/cc-hang"
	for sig in INT TERM; do
		rm -f "$work/sleeper.pid"
		# A background job of a script ignores SIGINT: start tilec with
		# the default action, as a terminal's foreground job has it.
		TILEC_COMPILE_TIMEOUT=0 TILEC_CACHE_DIR=$work/cache python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$tilec" run samples/softmax.c --shape M=7,N=300 \
			--cc "$work/cc-hang" >"$work/out" 2>&1 &
		tpid=$!
		appears "$work/sleeper.pid" || fail "the compiler never started"
		kill -s "$sig" "$tpid"
		wait "$tpid"
		rc=$?
		[ "$rc" -gt 128 ] || { cat "$work/out"; fail "SIG$sig: tilec exited $rc"; }
		pid=$(cat "$work/sleeper.pid")
		for _ in $(seq 100); do
			state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
			[ -z "$state" ] || [ "$state" = Z ] && break
			sleep 0.1
		done
		[ -z "$state" ] || [ "$state" = Z ] ||
			{ kill "$pid"; fail "SIG$sig: the compiler $pid lives on"; }
	done
	;;
one-compile | stale-lock | foreign-lock)
	# A compiler that counts its compiles (one line each), and sleeps a
	# second in each so that, without the lock, concurrent runs would
	# all miss the cache and compile; with $work/hang present it stops
	# forever instead, after saying so.  One wrapper throughout: its path
	# and version are part of the cache key.
	cat >"$work/cc-count" <<'SH'
#!/bin/sh
dir=${0%/*}
if [ "$1" = --version ]; then exec cc --version; fi
echo compile >>"$dir/compiles"
if [ -e "$dir/hang" ]; then
	: >"$dir/started"
	sleep 600 &
	echo $! >"$dir/sleeper.pid"
	wait
	exit 1
fi
sleep 1
exec cc "$@"
SH
	chmod +x "$work/cc-count"
	export TILEC_CACHE_DIR=$work/cache
	count() { wc -l <"$work/compiles" 2>/dev/null || echo 0; }
	;;&
one-compile)
	pids=()
	for i in 1 2 3 4; do
		run_softmax --cc "$work/cc-count" >"$work/out$i" 2>&1 &
		pids+=($!)
	done
	for i in 1 2 3 4; do
		wait "${pids[i - 1]}" || { cat "$work/out$i"; fail "run $i"; }
	done
	[ "$(count)" -eq 1 ] || fail "4 cold runs compiled $(count) times, not once"
	ls "$work/cache" | grep -q '\.lock$' && fail "a lock file was left: $(ls "$work/cache")"
	# A fifth run is a cache hit.
	run_softmax --cc "$work/cc-count" >"$work/out5" 2>&1 || fail "run 5"
	[ "$(count)" -eq 1 ] || fail "a warm run compiled"
	;;
stale-lock)
	: >"$work/hang"
	# exec: $! is tilec itself, not a subshell around it.
	( exec "$tilec" run samples/softmax.c --shape M=7,N=300 \
		--cc "$work/cc-count" >"$work/out1" 2>&1 ) &
	holder=$!
	appears "$work/started" || fail "the first run never started compiling"
	# The compiler runs in a process group of its own: kill tilec, then
	# the compiler's sleeper, as a crash of the machine's user would.
	kill -KILL "$holder"
	wait "$holder" 2>/dev/null
	for _ in $(seq 100); do
		[ -s "$work/sleeper.pid" ] && break
		sleep 0.1
	done
	kill "$(cat "$work/sleeper.pid")" 2>/dev/null
	ls "$work/cache" | grep -q '\.lock$' || fail "no lock file was left to test with"
	rm "$work/hang"
	# A waiter would wait up to the compile timeout: 60 s is plenty for
	# a compile that is not held up.
	TILEC_COMPILE_TIMEOUT=300 timeout 60 "$tilec" run samples/softmax.c \
		--shape M=7,N=300 --cc "$work/cc-count" >"$work/out2" 2>&1 ||
		{ cat "$work/out2"; fail "the run after the kill (held up by the stale lock?)"; }
	[ "$(count)" -eq 2 ] || fail "$(count) compiles, not 2"
	;;
foreign-lock)
	# Fill the cache once to learn the key, then empty it but for a lock
	# file of mode 0666 that a process holds.
	run_softmax --cc "$work/cc-count" >"$work/out1" 2>&1 || fail "run 1"
	entry=$(ls "$work/cache"/*.entry) || fail "no entry"
	lock=${entry%.entry}.lock
	rm -f "$work/cache"/*.entry "$work/cache"/*.so
	: >"$lock"
	chmod 0666 "$lock"
	command -v flock >/dev/null || { echo "no flock(1)"; exit 77; }
	# The holder: a subshell that locks the file on its descriptor 9,
	# then becomes a sleep that keeps it (one process to kill).
	( exec 9<>"$lock" && flock 9 && exec sleep 600 ) &
	holder=$!
	for _ in $(seq 100); do
		flock -n "$lock" true || break
		sleep 0.1
	done
	flock -n "$lock" true && fail "flock(1) did not take the lock"
	TILEC_COMPILE_TIMEOUT=300 timeout 60 "$tilec" run samples/softmax.c \
		--shape M=7,N=300 --cc "$work/cc-count" >"$work/out2" 2>&1
	status=$?
	kill "$holder"
	wait "$holder" 2>/dev/null
	[ $status -eq 0 ] || { cat "$work/out2"; fail "run 2 (status $status: waited on a lock others can write?)"; }
	[ "$(count)" -eq 2 ] || fail "$(count) compiles, not 2"
	;;
planted-entry)
	[ "$(id -u)" -eq 0 ] || { echo "needs root (chown)"; exit 77; }
	dir=$work/theirs
	mkdir -m 0755 "$dir"
	# Fill it as its owner would, then plant an object with a
	# constructor under the entry's name.
	TILEC_CACHE_DIR=$dir run_softmax >/dev/null 2>&1 ||
		fail "filling the cache"
	entry=$(ls "$dir"/*.entry)
	printf '#include <fcntl.h>\n__attribute__((constructor)) static void p(void) { creat("%s", 0600); }\n' \
		"$work/ran" >"$work/p.c"
	cc -shared -fPIC -o "$work/p.so" "$work/p.c" || fail "cc"
	h=$(sha256sum "$work/p.so" | cut -d' ' -f1)
	cp "$work/p.so" "$dir/$h.so"
	printf 'tilec-cache-entry 1\nobject %s.so\nsize %s\nsha256 %s\n' \
		"$h" "$(stat -c %s "$work/p.so")" "$h" >"$entry"
	chown -R nobody "$dir"
	TILEC_CACHE_DIR=$dir run_softmax >"$work/out" 2>&1 &&
		fail "ran with another user's cache"
	grep -q "refusing the cache directory $dir: $dir is owned by uid $(id -u nobody), not by you (uid 0)" \
		"$work/out" || { cat "$work/out"; fail "message"; }
	[ -e "$work/ran" ] && fail "the planted constructor ran"
	# Handed back to root (mode 0755), the plant is the user's own and
	# would load: the refusal above is what kept it out.
	chown -R root "$dir"
	TILEC_CACHE_DIR=$dir run_softmax >"$work/out" 2>&1
	[ -e "$work/ran" ] || fail "control: the plant did not load"
	;;
*)
	echo "jit.sh: unknown case $case" >&2
	exit 2
	;;
esac
echo ok
