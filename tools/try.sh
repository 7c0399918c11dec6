#!/usr/bin/env bash
# try.sh - a first look: set up, build, translate a sample, run it.
#
# usage: tools/try.sh
#
# Runs tools/setup.sh, shows the IR and the start of the OpenMP C that
# tilec makes of samples/gemm.c, then runs gemm and softmax on the CPU with
# `tilec run --bench`: each output is checked against the reference
# interpreter (its relative error is printed) and timed.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
export BUILD_DIR=$build
"$root/tools/setup.sh"
tilec=$build/tilec
cd "$root"

step() {
	printf '\n$ tilec %s\n' "$*"
}

step samples/gemm.c --emit=ir
"$tilec" samples/gemm.c --emit=ir

step "samples/gemm.c -t openmp | head -n 40"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$tilec" samples/gemm.c -t openmp -o "$out"
head -n 40 "$out"
echo "... ($(wc -l <"$out") lines)"

if ! "$tilec" run --help >/dev/null 2>&1; then
	echo "tilec run is not built yet"
	exit 0
fi
status=0
step run samples/gemm.c --shape M=1000,N=1000,K=1000 --bench
"$tilec" run samples/gemm.c --shape M=1000,N=1000,K=1000 --bench || status=1
step run samples/softmax.c --shape M=1000,N=3000 --bench
"$tilec" run samples/softmax.c --shape M=1000,N=3000 --bench || status=1
exit $status
