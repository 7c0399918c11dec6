#!/usr/bin/env bash
# cpu_math.sh - the CPU template's exp, exp2 and tanh and its narrow row
# conversions (tests/cpu_math/vexp.c, vforms.c): accurate, and the
# explicit-vector forms the OpenMP backend prints on AVX-512 equal to the
# scalar ones.  Compiled as generated kernels are
# (cc -O3 -march=native -fopenmp -fno-math-errno); on a CPU without
# AVX-512 the vector forms are the portable ones, checked the same way.
#
# usage: cpu_math.sh SRCROOT
set -eu
cd "$1"
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/inc/tilec"
ln -s "$PWD/templates/cpu" "$work/inc/tilec/cpu"
for t in vexp vforms; do
	"$cc" -O3 -march=native -fopenmp -fno-math-errno -I "$work/inc" \
		-o "$work/$t" "tests/cpu_math/$t.c" -lm
	"$work/$t"
done
