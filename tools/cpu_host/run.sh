#!/usr/bin/env bash
# run.sh - compile, check and time the kernels tools/cpu_host_prepare.sh
# translated (kernels/), against torch, on this machine.
#
# usage: bash cpu-carry/run.sh [--quick]
#
# Needs cc (gcc or clang with OpenMP) and python3; torch for the
# baselines (without it tilec alone is timed).  Prints the machine, then
# one line per check and per row, and the table last.  Status 0 when every
# kernel compiled and matched its reference.
set -u
here=$(cd "$(dirname "$0")" && pwd)
quick=0
[ "${1:-}" = "--quick" ] && quick=1
cc=${CC:-$(command -v cc || command -v gcc || command -v clang || echo cc)}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v "$cc" >/dev/null || { echo "run.sh: no C compiler '$cc' (set CC)"; exit 1; }
command -v "$python" >/dev/null || { echo "run.sh: no $python (set PYTHON)"; exit 1; }

echo "== cpu-carry: $(cat "$here/VERSION" 2>/dev/null), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
grep -qw amx_tile /proc/cpuinfo && echo "amx: yes" || echo "amx: NO (the bf16 and int8 kernels will be refused)"
lscpu 2>/dev/null | grep -E '^(L1d|L2|L3)' | tr -s ' ' | paste -sd';' -
echo "compiler: $("$cc" --version | head -n 1)"
t0=$(date +%s)
while read -r name arch rest; do
	"$cc" -O3 -march=native -fopenmp -fno-math-errno -fPIC -shared \
		-o "$work/$name.so" "$here/kernels/$name.c" -lm >"$work/$name.log" 2>&1 &
done <"$here/kernels/MANIFEST"
"$cc" -O2 -fPIC -shared -o "$work/fill.so" "$here/fill.c" || exit 1
wait
while read -r name arch rest; do
	if [ ! -s "$work/$name.so" ]; then
		echo "run.sh: $name (--arch $arch) did not compile:"
		cat "$work/$name.log"
		exit 1
	fi
	echo "built $name for --arch $arch $rest"
done <"$here/kernels/MANIFEST"
echo "compiled in $(($(date +%s) - t0)) s"
export OMP_PROC_BIND=close OMP_PLACES=cores
# A block's buffers (up to 896 KiB for gemm_f32_wide) live on its
# thread's stack.
export OMP_STACKSIZE=${OMP_STACKSIZE:-8M}
# bench.py refuses, as tilec's runtime does, a kernel whose
# tilec_cpu_needs this CPU lacks, and asks Linux for the AMX state.
# First the VNNI kernel against oneDNN held to AVX512-VNNI (the library
# figure where there is no AMX), then everything against torch as it
# runs here, the table last.
echo "== VNNI int8 against oneDNN without AMX"
ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI timeout 90 "$python" -u "$here/bench.py" \
	"$work" "$quick" vnni
[ $? = 124 ] && echo "run.sh: the VNNI comparison ran past 90 s and was stopped"
echo "== every kernel against torch"
timeout 320 "$python" -u "$here/bench.py" "$work" "$quick"
rc=$?
[ $rc = 124 ] && echo "run.sh: bench.py ran past 320 s and was stopped"
exit $rc
