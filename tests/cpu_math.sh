#!/usr/bin/env bash
# cpu_math.sh - the CPU template's exp, exp2 and tanh, its narrow row
# conversions and its streamed row stores (tests/cpu_math/vexp.c,
# vforms.c, stream_out.c): accurate, and the explicit-vector forms the
# OpenMP backend prints equal to the scalar ones, with 16 lanes as the
# AVX-512 targets print them (compiled as generated kernels are, cc -O3
# -march=native -fopenmp -fno-math-errno; on a CPU without AVX-512 the
# portable forms) and with 8 as avx2 prints them (-mavx2 -mfma -mf16c,
# where the CPU has AVX2).
#
# usage: cpu_math.sh SRCROOT
set -eu
cd "$1"
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/inc/tilec"
ln -s "$PWD/templates/cpu" "$work/inc/tilec/cpu"
# The vectors as the AVX-512 targets print them (16 lanes), and as avx2
# prints them (8 lanes; on AVX-512 hardware the same code as -mavx2).
lanes="-DTILEC_VL=16"
grep -qw avx2 /proc/cpuinfo 2>/dev/null && lanes="$lanes -DTILEC_VL=8"
for t in vexp vforms stream_out; do
	for vl in $lanes; do
		# -Wno-psabi: without AVX-512, 64-byte vectors pass in memory
		# (gcc warns that the ABI differs from an AVX-512 build's).
		flags="-march=native -Wno-psabi"
		[ "$vl" = -DTILEC_VL=8 ] && flags="-mavx2 -mfma -mf16c"
		echo "$t, $vl $flags:"
		"$cc" -O3 $flags "$vl" -fopenmp -fno-math-errno -Wall -Werror \
			-I "$work/inc" -o "$work/$t" "tests/cpu_math/$t.c" -lm
		"$work/$t"
	done
done
