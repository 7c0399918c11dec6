#!/usr/bin/env bash
# swizzle.sh - shared-memory swizzling on the CUDA backend (src/passes/smem.c,
# "Swizzle"), on tests/swizzle/swizzle.c.
#
# usage: swizzle.sh TILEC SRCROOT
#
# The scheduled IR (-t cuda --emit=ir) must call As and Ws swizzled and
# give Bs, which element-wise code reads, padded rows; the transpose
# sample's tile, read by columns, swizzled for them; the CUDA output must
# compile with nvcc for sm_80 and sm_90a (skipped without nvcc); and the
# program must pass `tilec run` on the CPU on ragged shapes.  What the
# swizzle computes is checked on a GPU by tools/gpu_bench.sh (every gemm
# and attention case reads swizzled tiles).  Exit status: 0 pass, 1 fail.
set -u

if [ $# -ne 2 ]; then
	echo "usage: swizzle.sh TILEC SRCROOT" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
src=tests/swizzle/swizzle.c
status=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ir=$("$tilec" "$src" -t cuda --emit=ir --verify) || { echo "FAIL: --emit=ir"; exit 1; }
expect() {
	if ! grep -qE "$1" <<<"$ir"; then
		echo "FAIL: the scheduled IR has no line matching: $1"
		status=1
	fi
}
expect '^	shared f16 As\[64\]\[32\] \(swizzled, smem'
expect '^	shared f16 Ws\[64\]\[32\] \(swizzled, smem'
expect '^	shared f16 Bs\[32\]\[64\] \(pad 8, smem'

# A tile read by columns (the transpose sample): swizzled with the XOR
# changing every `vec` rows of the reading fragment (8 for f16, 4 for
# f32), not padded.
ir=$("$tilec" samples/transpose.c -t cuda --emit=ir --verify) || { echo "FAIL: --emit=ir"; exit 1; }
expect '^	shared f16 xs\[BLOCK\]\[BLOCK\] \(swizzled for columns, 8 rows a group, smem'
ir=$("$tilec" samples/transpose.c -t cuda --emit=ir --verify -D BLOCK=32 -D THREADS=128) ||
	{ echo "FAIL: --emit=ir"; exit 1; }
expect '^	shared f16 xs\[BLOCK\]\[BLOCK\] \(swizzled for columns, 8 rows a group, smem'
ir=$(sed 's/f16/f32/g' samples/transpose.c | "$tilec" /dev/stdin -t cuda --emit=ir --verify 2>&1) ||
	{ echo "FAIL: --emit=ir (f32)"; echo "$ir"; exit 1; }
expect '^	shared f32 xs\[BLOCK\]\[BLOCK\] \(swizzled for columns, 4 rows a group, smem'
ir=$("$tilec" "$src" -t cuda --emit=ir --verify)

if command -v nvcc >/dev/null 2>&1; then
	for arch in sm_80 sm_90a; do
		"$tilec" "$src" -t cuda --arch "$arch" --standalone -o "$work/k.cu" || status=1
		if ! nvcc -std=c++17 -gencode=arch=compute_${arch#sm_},code=$arch -cubin \
			-o "$work/k.cubin" "$work/k.cu" >"$work/nvcc.log" 2>&1; then
			echo "FAIL: nvcc $arch"
			cat "$work/nvcc.log"
			status=1
		fi
	done
else
	echo "note: no nvcc; the CUDA output is not compiled"
fi

"$tilec" run "$src" --shape M=70,N=100,K=75 || status=1
exit $status
