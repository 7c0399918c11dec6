#!/usr/bin/env bash
# bench_cpu.sh - tilec's OpenMP backend against OpenBLAS and memory copy.
#
# usage: tools/bench_cpu.sh [--quick | --rows | --gemm]
#
# Builds tilec (ninja), checks each benchmarked kernel with `tilec run` on
# ragged shapes against the reference interpreter (the script stops if one
# fails: a fast wrong kernel is not a result), translates the kernels with
# --standalone, compiles them with tools/bench/cpu_bench.c and prints one
# table:
#
#   fp32 GEMM 2048^3 and 4096^3     tilec vs OpenBLAS sgemm, GFLOP/s
#   softmax, RMSNorm 16384x4096     tilec vs a parallel row copy, GB/s
#                                   (bytes read + written by the copy)
#   flash attention fp16            tilec vs a naive parallel C loop nest
#
# Both sides of a row run in the same process, alternately, median of 9
# (TILEC_BENCH_REPEATS).  Threads: OMP_NUM_THREADS and
# OPENBLAS_NUM_THREADS, default 2.  --quick uses smaller shapes; --rows
# runs softmax and RMSNorm alone (the rows against the copy), --gemm the
# GEMMs alone.  Tunables bound for the CPU are in gemm_flags below;
# TILEC_GEMM_FLAGS adds translator flags for the GEMM (--cpu-strip=4,
# say); docs/perf.md records runs.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cc=${CC:-cc}
cflags=(-O3 -march=native -fopenmp -fno-math-errno)
quick=0 rows=0 gemm=0
[ "${1:-}" = "--quick" ] && quick=1
[ "${1:-}" = "--rows" ] && rows=1
[ "${1:-}" = "--gemm" ] && gemm=1

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-$OMP_NUM_THREADS}
# OpenBLAS picks its kernels from the CPU model, and under a hypervisor
# that hides the model (this VM's "Intel Xeon Processor") it falls back
# to Prescott's SSE3 kernels, a tenth of its speed: name the core its
# AVX-512 or AVX2 kernels are for, unless the caller did.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	if grep -qw avx512f /proc/cpuinfo; then
		export OPENBLAS_CORETYPE=SkylakeX
	elif grep -qw avx2 /proc/cpuinfo; then
		export OPENBLAS_CORETYPE=Haswell
	fi
fi

ninja -C "$build" >/dev/null
tilec=$build/tilec
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"

# The kernels and the tunables the CPU wants: large GEMM tiles (the
# block's A, B slices and C tile stay in a core's 1 MiB L2).
tunables=(-D BLOCK_M=256 -D BLOCK_N=256 -D BLOCK_K=128)
gemm_flags=("${tunables[@]}")
read -r -a extra <<<"${TILEC_GEMM_FLAGS:-}"
gemm_flags+=("${extra[@]}")
# RMSNorm in fp32: the sample's program with f32 for f16.
sed 's/\bf16\b/f32/g; s/fp16 in and out/fp32 in and out/' samples/rmsnorm.c \
	>"$work/rmsnorm_f32.c"

check() {
	local src=$1 shape=$2
	shift 2
	if ! "$tilec" run "$src" --shape "$shape" "$@" >"$work/check.log" 2>&1; then
		echo "bench_cpu.sh: $src fails its check; not benchmarking:" >&2
		cat "$work/check.log" >&2
		exit 1
	fi
}
# The GEMM is checked as translated with the benchmark's flags (which
# may hold translator options `tilec run` does not take).
if [ $rows = 0 ]; then
	"$tilec" samples/gemm_f32.c "${gemm_flags[@]}" >"$work/check_gemm.c"
	check samples/gemm_f32.c M=300,N=1100,K=259 "${tunables[@]}" \
		--source "$work/check_gemm.c"
fi
if [ $gemm = 0 ]; then
	check samples/softmax.c M=37,N=4100
	check "$work/rmsnorm_f32.c" M=37,N=4100
	[ $rows = 1 ] || check samples/flash_attention.c B=1,S=300,H=2
fi

"$tilec" samples/gemm_f32.c --standalone "${gemm_flags[@]}" >"$work/k_gemm.c"
"$tilec" samples/softmax.c --standalone >"$work/k_softmax.c"
"$tilec" "$work/rmsnorm_f32.c" --standalone >"$work/k_rmsnorm.c"
"$tilec" samples/flash_attention.c --standalone >"$work/k_attention.c"
"$cc" "${cflags[@]}" -I templates -o "$work/cpu_bench" \
	tools/bench/cpu_bench.c "$work"/k_*.c -lopenblas -lm

echo "tilec CPU benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, threads $OMP_NUM_THREADS"
echo "compiler: $("$cc" --version | head -1); ${cflags[*]}"
echo "gemm tunables: ${gemm_flags[*]}; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(detected)}"
echo
b=$work/cpu_bench
"$b" peak
echo
"$b" header
if [ $gemm = 1 ]; then
	"$b" gemm 2048
	"$b" gemm 4096
elif [ $rows = 1 ]; then
	"$b" softmax 16384 4096
	"$b" rmsnorm 16384 4096
elif [ $quick = 1 ]; then
	"$b" gemm 1024
	"$b" softmax 4096 4096
	"$b" rmsnorm 4096 4096
	"$b" attention 1 512 4
else
	"$b" gemm 2048
	"$b" gemm 4096
	"$b" softmax 16384 4096
	"$b" rmsnorm 16384 4096
	"$b" attention 1 2048 8
fi
