#!/usr/bin/env bash
# run.sh - compile, check and time the kernels tools/cpu_host_prepare.sh
# translated (kernels/), against torch, on this machine.
#
# usage: bash cpu-carry/run.sh [--quick]
#
# Needs cc (gcc or clang with OpenMP) and python3; torch for the
# baselines (without it tilec alone is timed).  Prints the machine, then
# one line per check and per row, and a table after each part.  Status 0
# when every kernel compiled and matched its reference.  Three parts,
# each a python3 process with a time budget (rows past it are reported
# as skipped), under 8 minutes in all:
#
#   1. the VNNI int8 kernel against oneDNN held to AVX512-VNNI, at 16
#      and 1 threads (75 s at most);
#   2. every kernel against torch at 16, 8, 2 and 1 threads, both sides
#      placed by OMP_PROC_BIND=close OMP_PLACES=cores (290 s at most);
#   3. without those variables, so that tilec's kernels place their
#      threads themselves (tilec_bind_threads) and torch's are unbound:
#      fp32 with and without strips of blocks, and the skinny fp32, at 16
#      threads, then where each OpenMP thread ran (75 s at most).
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
"$cc" -O2 -fopenmp -fPIC -shared -o "$work/fill.so" "$here/fill.c" || exit 1
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
# A block's buffers (up to 2.5 MiB for gemm_f32_wide's strip of 4
# blocks) live on its thread's stack.
export OMP_STACKSIZE=${OMP_STACKSIZE:-8M}
# bench.py refuses, as tilec's runtime does, a kernel whose
# tilec_cpu_needs this CPU lacks, and asks Linux for the AMX state.
echo "== 1. VNNI int8 against oneDNN without AMX"
OMP_PROC_BIND=close OMP_PLACES=cores ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI \
	timeout 75 "$python" -u "$here/bench.py" "$work" "$quick" vnni
[ $? = 124 ] && echo "run.sh: the VNNI comparison ran past 75 s and was stopped"
echo "== 2. every kernel against torch (OMP_PROC_BIND=close OMP_PLACES=cores)"
OMP_PROC_BIND=close OMP_PLACES=cores timeout 290 "$python" -u "$here/bench.py" \
	"$work" "$quick"
rc=$?
[ $rc = 124 ] && echo "run.sh: bench.py ran past 290 s and was stopped"
echo "== 3. tilec placing its own threads (no OMP_PROC_BIND, OMP_PLACES)"
env -u OMP_PROC_BIND -u OMP_PLACES -u GOMP_CPU_AFFINITY -u KMP_AFFINITY \
	timeout 75 "$python" -u "$here/bench.py" "$work" "$quick" bind
rc3=$?
[ $rc3 = 124 ] && echo "run.sh: the third part ran past 75 s and was stopped"
[ $rc = 0 ] && [ $rc3 = 1 ] && rc=1
echo "total $(($(date +%s) - t0)) s"
exit $rc
