#!/usr/bin/env bash
# cpu_host_prepare.sh - translate the CPU GEMM benchmark's kernels here for
# a machine without a translator (the 16-core Emerald Rapids host of the
# GPU machine: AVX-512 and AMX, torch with MKL and oneDNN, no libclang).
#
# usage: tools/cpu_host_prepare.sh [--arch-f32 A] [--arch-low A] [OUT]
#
# Writes OUT (default cpu-carry/, ignored by git) holding each kernel as
# one --standalone C file with the translator's defaults (strips of 4
# blocks, threads placed one per core: docs/backend-openmp.md), fp32 GEMM
# for --arch-f32, default avx512; bf16 and int8 GEMMs for --arch-low,
# default amx; int8 also for avx512vnni, the path of CPUs without AMX;
# the benchmark driver (tools/cpu_host/bench.py, fill.c) and run.sh.
# There, `bash OUT/run.sh` compiles them with cc -O3 -march=native
# -fopenmp, checks each against a reference on ragged shapes (it stops if
# one fails), then times tilec and torch (MKL for fp32, oneDNN for bf16
# and int8) in one process, alternately: the VNNI kernel against oneDNN
# held to AVX512-VNNI at 16 and 1 threads; every kernel at 16, 8, 2 and 1
# threads with OMP_PROC_BIND=close OMP_PLACES=cores, a table last; and
# fp32 at 16 threads without those variables, tilec placing its own
# threads, strips against none (gemm_f32_nostrip), then where the threads
# ran.  Under 8 minutes (rows past a time budget are reported as
# skipped).  gemm_f32_wide is the fp32 kernel with 256 x 512 tiles (a
# quarter less copied per FLOP); gemm_bf16_big and gemm_i8_big the AMX
# kernels with 512-row tiles and deeper k (B's pack shared by more rows).  `bash OUT/run.sh --quick` uses small
# shapes, for trying it here: --arch-f32 avx512 (or avx2) --arch-low
# avx512vnni, as this machine's /proc/cpuinfo allows.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
arch_f32=avx512 arch_low=amx out=$root/cpu-carry
while [ $# -gt 0 ]; do
	case $1 in
	--arch-f32) arch_f32=$2; shift 2 ;;
	--arch-low) arch_low=$2; shift 2 ;;
	-*) echo "cpu_host_prepare.sh: unknown option $1" >&2; exit 2 ;;
	*) out=$1; shift ;;
	esac
done
ninja -C "$build" >/dev/null
tilec=$build/tilec
cd "$root"
rm -rf "$out"
mkdir -p "$out/kernels"

# name  source  arch  tunables
kernels=(
	"gemm_f32 samples/gemm_f32.c $arch_f32 -D BLOCK_M=256 -D BLOCK_N=256 -D BLOCK_K=128"
	"gemm_f32_wide samples/gemm_f32.c $arch_f32 -D BLOCK_M=256 -D BLOCK_N=512 -D BLOCK_K=128"
	"gemm_f32_nostrip samples/gemm_f32.c $arch_f32 -D BLOCK_M=256 -D BLOCK_N=256 -D BLOCK_K=128 --cpu-strip=0"
	"gemm_f32_skinny samples/gemm_f32.c $arch_f32 -D BLOCK_M=16 -D BLOCK_N=256 -D BLOCK_K=256"
	"gemm_bf16 tests/cpu_gemm/gemm_bf16.c $arch_low -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=128"
	"gemm_bf16_big tests/cpu_gemm/gemm_bf16.c $arch_low -D BLOCK_M=512 -D BLOCK_N=128 -D BLOCK_K=256"
	"gemm_i8 tests/cpu_gemm/gemm_i8.c $arch_low -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=256"
	"gemm_i8_big tests/cpu_gemm/gemm_i8.c $arch_low -D BLOCK_M=512 -D BLOCK_N=128 -D BLOCK_K=512"
	"gemm_i8_vnni tests/cpu_gemm/gemm_i8.c avx512vnni -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=256"
)
for k in "${kernels[@]}"; do
	# shellcheck disable=SC2086
	set -- $k
	name=$1 src=$2 arch=$3
	shift 3
	# (Tile sizes outside a tunable's tuning choices are warned about.)
	"$tilec" "$src" --standalone --arch "$arch" "$@" -o "$out/kernels/$name.c" 2>"$out/translate.log" ||
		{ cat "$out/translate.log" >&2; exit 1; }
	echo "$name $arch $*" >>"$out/kernels/MANIFEST"
done
rm -f "$out/translate.log"
cp tools/cpu_host/bench.py tools/cpu_host/fill.c "$out/"
cp tools/cpu_host/run.sh "$out/run.sh"
echo "$("$tilec" --version | head -n 1), $(git rev-parse --short HEAD 2>/dev/null || echo '?')" >"$out/VERSION"
echo "wrote $out: $(ls "$out/kernels" | grep -c '\.c$') kernels (fp32 for $arch_f32, bf16 and int8 for $arch_low)"
echo "on the host: bash $(basename "$out")/run.sh"
