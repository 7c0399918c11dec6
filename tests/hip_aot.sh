#!/usr/bin/env bash
# hip_aot.sh - every sample's standalone HIP output compiles ahead of time
# with hipcc.
#
# usage: hip_aot.sh TILEC SRCROOT [ARCH [SAMPLE...]]
#
# For each samples/*.c (and flash_attention.c with -D CAUSAL=1), or the
# SAMPLEs named, runs `tilec SAMPLE -t hip --arch ARCH --standalone` and
# compiles the result with `hipcc --offload-arch=ARCH -O3 -c`, host code
# included, as a project vendoring the file would.  ARCH defaults to
# gfx90a.  For gfx942 with a hipcc whose LLVM predates it (Debian 12's
# LLVM 15), the code is compiled for gfx940, the CDNA3 processor that LLVM
# knows, whose matrix instructions are gfx942's.  Exit status: 0 all
# compiled, 1 a failure (its log is printed), 77 (skipped) without hipcc.
set -u

if [ $# -lt 2 ]; then
	echo "usage: hip_aot.sh TILEC SRCROOT [ARCH]" >&2
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
echo '__global__ void k() {}' >"$dir/probe.hip"
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
compile() { # NAME SAMPLE [TILEC ARGS...]
	local name=$1 sample=$2
	shift 2
	local src=$dir/$name.hip log=$dir/$name.log
	if ! "$tilec" "$sample" -t hip --arch "$arch" --standalone "$@" \
		-o "$src" 2>"$log"; then
		echo "FAIL: $name: tilec"
		cat "$log"
		failed=1
		return
	fi
	local t0
	t0=$(date +%s%N)
	if ! hipcc --offload-arch="$cc_arch" -O3 -c "$src" -o "$dir/$name.o" \
		>"$log" 2>&1; then
		echo "FAIL: $name: hipcc --offload-arch=$cc_arch"
		cat "$log"
		failed=1
		return
	fi
	printf 'ok: %-24s %s, %d ms\n' "$name" "$cc_arch" \
		$((($(date +%s%N) - t0) / 1000000))
}

if [ $# -gt 0 ]; then
	for f in "$@"; do
		compile "$(basename "$f" .c)" "samples/$f"
	done
else
	for f in samples/*.c; do
		compile "$(basename "$f" .c)" "$f"
	done
	compile flash_attention.causal samples/flash_attention.c -D CAUSAL=1
fi
exit $failed
