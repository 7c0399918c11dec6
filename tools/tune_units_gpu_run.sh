#!/usr/bin/env bash
# tune_units_gpu_run.sh - on a GPU machine without tilec, as CARRY/run.sh
# (tools/tune_units_gpu_prepare.sh copies it there): every unit of the
# carried GEMM search run by tools/tune_farm.py --unit, JOBS (default 4)
# at a time on the one GPU (loads and checks overlap, timings take turns),
# then cuBLAS timed in the same call at the same shape, for the ratio.
# The units' results (gemm/results/) and the log go to $OUT.
#
#   bash CARRY/run.sh [JOBS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
jobs=${1:-4}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
	echo "revision $(cat "$here/REVISION")"
	t0=$(date +%s.%N)
	python3 "$here/tools/tune_farm.py" --unit "$here/gemm" --index all --jobs "$jobs"
	status=$?
	t1=$(date +%s.%N)
	echo "units: status $status, wall $(python3 -c "print(f'{$t1 - $t0:.1f}')") s with $jobs at a time"
	python3 - <<'PY'
import torch
M = N = K = 8192
a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)
c = torch.empty(M, N, device="cuda", dtype=torch.float16)
for _ in range(5):
    torch.matmul(a, b, out=c)
ts = []
for _ in range(30):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); torch.matmul(a, b, out=c); e.record(); e.synchronize()
    ts.append(s.elapsed_time(e))
ts.sort()
print(f"anchor torch.matmul (cuBLAS) f16 {M}^3: median {ts[15]:.4f} ms, "
      f"{2 * M * N * K / ts[15] / 1e9:.1f} TFLOP/s")
PY
} 2>&1 | tee "$out/units.log"
mkdir -p "$out/results"
cp "$here"/gemm/results/u*.json "$out/results/" 2>/dev/null
ls "$out/results" | wc -l | sed 's/$/ unit results/'
