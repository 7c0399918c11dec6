#!/usr/bin/env bash
# half_pairs_compile.sh - the half pairs' CUDA compiles.
#
# usage: half_pairs_compile.sh TILEC SRCROOT
#
# The split-k W4A16 sample, its dequantization inside
# the gemm and (BLOCK_M 64) in runs into shared rows, and its variants
# into bf16 and from i8 weights: each translated --standalone for sm_80
# and sm_90a must use tilec::int_pairs and compile with nvcc -cubin; and
# tools/gpu/int_pairs_check.cu, the helpers' exhaustive check that runs
# on a GPU, must compile against one of them.  Skipped (77) without nvcc.
set -u
if [ $# -ne 2 ]; then
	echo "usage: half_pairs_compile.sh TILEC SRCROOT" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
command -v nvcc >/dev/null 2>&1 || { echo "no nvcc: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

src=samples/gemm_w4a16_splitk.c
sed 's/f16/bf16/g' $src >"$work/bf16.c"
sed 's/const i4 W\[N\]\[K\]/const i8 W[N][K]/; s/tile_shared i4 Ws4\[/tile_shared i8 Ws4[/' \
	$src >"$work/w8.c"
for prog in "$src" "$src -D BLOCK_M=64" "$work/bf16.c" "$work/w8.c"; do
	for arch in sm_80 sm_90a; do
		name=$(echo "$prog $arch" | tr -c 'A-Za-z0-9_\n' _)
		# shellcheck disable=SC2086
		if ! "$tilec" $prog -t cuda --arch $arch --standalone \
			-o "$work/$name.cu" 2>"$work/$name.err"; then
			fail "$prog $arch: tilec"; cat "$work/$name.err"; continue
		fi
		grep -q "tilec::int_pairs(" "$work/$name.cu" || fail "$prog $arch: no int_pairs"
		nvcc -std=c++17 -arch=$arch -cubin -o "$work/$name.cubin" "$work/$name.cu" \
			>"$work/$name.log" 2>&1 || { fail "$prog $arch: nvcc"; head -20 "$work/$name.log"; }
		grep -q "warning" "$work/$name.log" && { fail "$prog $arch: nvcc warns"; head -20 "$work/$name.log"; }
	done
done
"$tilec" $src -t cuda --arch sm_90a --standalone -o "$work/k.cu" 2>/dev/null &&
	nvcc -std=c++17 -arch=sm_90a -include "$work/k.cu" tools/gpu/int_pairs_check.cu \
		-o "$work/check" >"$work/check.log" 2>&1 ||
	{ fail "int_pairs_check.cu: nvcc"; head -20 "$work/check.log"; }
[ $status = 0 ] && echo PASS
exit $status
