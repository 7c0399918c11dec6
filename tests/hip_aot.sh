#!/usr/bin/env bash
# hip_aot.sh - every sample, vendored as standalone HIP, builds ahead of time
# with hipcc.
#
# usage: hip_aot.sh TILEC SRCROOT [ARCH [SAMPLE...]]
#
# For each samples/*.c (and flash_attention.c with -D CAUSAL=1), or the
# SAMPLEs named, runs `tilec export SAMPLE -t hip --arch ARCH` (the
# standalone kernel, its helpers inlined, and its host launch function)
# and compiles K.hip with `hipcc --offload-arch=ARCH -O3 -fPIC -c`, host
# code included, as a project vendoring it would; then links all of them
# into one shared library, so kernels vendored side by side do not clash.
# ARCH defaults to gfx90a.  For gfx942 with a hipcc whose LLVM predates it
# (Debian 12's LLVM 15), the code is compiled for gfx940, the CDNA3
# processor that LLVM knows, whose matrix instructions are gfx942's.  Exit
# status: 0 all built, 1 a failure (its log is printed), 77 (skipped)
# without hipcc.
set -u

if [ $# -lt 2 ]; then
	echo "usage: hip_aot.sh TILEC SRCROOT [ARCH [SAMPLE...]]" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
arch=${3:-gfx90a}
shift $(($# < 3 ? $# : 3))
if ! command -v hipcc >/dev/null; then
	echo "skipped: no hipcc (Debian: apt-get install hipcc)"
	exit 77
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The processor hipcc compiles for: ARCH, or gfx940 for a gfx942 it lacks.
cc_arch=$arch
printf '#include <hip/hip_runtime.h>\n__global__ void k() {}\n' >"$dir/probe.hip"
if ! hipcc --offload-arch="$arch" -c "$dir/probe.hip" -o "$dir/probe.o" \
	>/dev/null 2>&1; then
	if [ "$arch" != gfx942 ]; then
		echo "FAIL: hipcc does not know $arch"
		exit 1
	fi
	cc_arch=gfx940
	echo "note: hipcc does not know gfx942; compiling for gfx940 (CDNA3)"
fi

failed=0
objects=()
build() { # NAME SAMPLE [TILEC ARGS...]
	local name=$1 sample=$2
	shift 2
	local out=$dir/$name log=$dir/$name.log
	if ! "$tilec" export "$sample" -t hip --arch "$arch" "$@" -o "$out" \
		>"$log" 2>&1; then
		echo "FAIL: $name: tilec export"
		cat "$log"
		failed=1
		return
	fi
	local t0 src
	t0=$(date +%s%N)
	for src in "$out"/*.hip; do
		if ! hipcc --offload-arch="$cc_arch" -O3 -fPIC -c "$src" \
			-o "${src%.hip}.o" >"$log" 2>&1; then
			echo "FAIL: $name: hipcc --offload-arch=$cc_arch $(basename "$src")"
			cat "$log"
			failed=1
			return
		fi
		objects+=("${src%.hip}.o")
	done
	printf 'ok: %-24s %s, %d ms\n' "$name" "$cc_arch" \
		$((($(date +%s%N) - t0) / 1000000))
}

if [ $# -gt 0 ]; then
	for f in "$@"; do
		build "$(basename "$f" .c)" "samples/$f"
	done
else
	for f in samples/*.c; do
		build "$(basename "$f" .c)" "$f"
	done
	build flash_attention.causal samples/flash_attention.c -D CAUSAL=1
fi
if [ $failed = 0 ] && [ $# = 0 ]; then
	# Side by side: one library; the causal variant's kernel has the same
	# name as the plain one, so it stays out.
	keep=()
	for o in "${objects[@]}"; do
		case $o in */flash_attention.causal/*) ;; *) keep+=("$o") ;; esac
	done
	if hipcc --offload-arch="$cc_arch" -shared -fPIC "${keep[@]}" \
		-o "$dir/libkernels.so" >"$dir/link.log" 2>&1; then
		echo "ok: ${#keep[@]} kernels linked into one shared library"
	else
		echo "FAIL: linking the kernels together"
		cat "$dir/link.log"
		failed=1
	fi
fi
exit $failed
