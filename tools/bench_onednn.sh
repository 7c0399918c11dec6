#!/usr/bin/env bash
# bench_onednn.sh - tilec's CPU GEMMs against oneDNN on this machine.
#
# usage: tools/bench_onednn.sh [--quick]
#
# oneDNN is what torch runs bf16 and int8 products on on the CPU (its
# AMX kernels where the CPU has AMX), and its f32 matmul is a BLAS-class
# anchor.  The script fetches oneDNN's PyPI wheels (onednn-cpu-gomp, built
# with GNU OpenMP like the kernels, and onednn-devel-cpu-gomp, its
# headers; 2023.2) into .cache/onednn/ once, builds tools/bench/
# onednn_gemm.c against them, translates the kernels here with
# --standalone for --arch native, and runs each shape at 1 thread and at
# every thread of the machine (OMP_PROC_BIND=close, OMP_PLACES=cores):
#
#   f32   samples/gemm_f32.c, 256 x 256 x 128 tiles (bench_cpu.sh's)
#   bf16  tests/cpu_gemm/gemm_bf16.c, 128^3 and 512 x 128 x 256 tiles
#   i8    tests/cpu_gemm/gemm_i8.c, 128 x 128 x 256 and 512 x 128 x 512
#
# at 2048^3 and 4096^3 (--quick: 1024^3).  Each line is checked against
# oneDNN on a ragged shape first (onednn_gemm.c stops on a mismatch), then
# timed alternately; the ratios are what to compare, the machine's load
# moves both sides.  Without network access to PyPI and no cache, it says
# so and exits 77.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cache=$root/.cache/onednn
quick=0
[ "${1:-}" = "--quick" ] && quick=1

if [ ! -f "$cache/lib/libdnnl.so.3" ] || [ ! -f "$cache/include/oneapi/dnnl/dnnl.h" ]; then
	rm -rf "$cache"
	mkdir -p "$cache/wheels"
	if ! python3 -m pip download --quiet --no-deps -d "$cache/wheels" \
		onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0; then
		echo "bench_onednn.sh: could not fetch oneDNN's wheels from PyPI" >&2
		exit 77
	fi
	for w in "$cache"/wheels/*.whl; do
		python3 -m zipfile -e "$w" "$cache/x"
	done
	mkdir -p "$cache/lib" "$cache/include"
	cp -a "$cache"/x/onednn_cpu_gomp-*.data/data/lib/libdnnl.so* "$cache/lib/"
	cp -a "$cache"/x/onednn_devel_cpu_gomp-*.data/data/include/. "$cache/include/"
	rm -rf "$cache/x" "$cache/wheels"
fi

ninja -C "$build" >/dev/null
tilec=$build/tilec
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
cc=${CC:-cc}
"$cc" -O2 -std=c11 -fopenmp -I "$cache/include" tools/bench/onednn_gemm.c \
	-o "$work/onednn_gemm" -L "$cache/lib" -l:libdnnl.so.3 \
	-Wl,-rpath,"$cache/lib" -ldl -lm

# name type source entry tunables
kernels=(
	"f32 f32 samples/gemm_f32.c gemm_f32 -D BLOCK_M=256 -D BLOCK_N=256 -D BLOCK_K=128"
	"bf16 bf16 tests/cpu_gemm/gemm_bf16.c gemm_bf16 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=128"
	"bf16_big bf16 tests/cpu_gemm/gemm_bf16.c gemm_bf16 -D BLOCK_M=512 -D BLOCK_N=128 -D BLOCK_K=256"
	"i8 i8 tests/cpu_gemm/gemm_i8.c gemm_i8 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=256"
	"i8_big i8 tests/cpu_gemm/gemm_i8.c gemm_i8 -D BLOCK_M=512 -D BLOCK_N=128 -D BLOCK_K=512"
)
for k in "${kernels[@]}"; do
	# shellcheck disable=SC2086
	set -- $k
	name=$1 src=$3
	shift 4
	"$tilec" "$src" --arch native --standalone "$@" -o "$work/$name.c"
	"$cc" -O3 -march=native -fopenmp -fno-math-errno -fPIC -shared \
		"$work/$name.c" -o "$work/$name.so"
done

sizes="2048 4096"
[ $quick = 1 ] && sizes=1024
threads="1 $(nproc)"
[ "$(nproc)" = 1 ] && threads=1
export OMP_PROC_BIND=close OMP_PLACES=cores
echo "tilec $(git describe --always --dirty 2>/dev/null || echo '?') against oneDNN 2023.2 on $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs"
for t in $threads; do
	for n in $sizes; do
		for k in "${kernels[@]}"; do
			# shellcheck disable=SC2086
			set -- $k
			OMP_NUM_THREADS=$t "$work/onednn_gemm" "$2" "$work/$1.so" \
				"tilec_entry_$4" "$n" "$n" "$n" | sed "s/^$2 /$1 /"
		done
	done
done
