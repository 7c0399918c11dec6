#!/usr/bin/env bash
# tune_units_gpu_run.sh - on a GPU machine without tilec, as CARRY/run.sh
# (tools/tune_units_gpu_prepare.sh copies it there): every unit of the
# carried GEMM search run by tools/tune_farm.py --unit, JOBS (default 4)
# at a time on the one GPU (loads and checks overlap, timings take turns),
# then cuBLAS timed in the same call at the same shape, for the ratio.
# The units' results (gemm/results/) and the log go to $OUT.
#
#   bash CARRY/run.sh [--ray] [JOBS]
#
# --ray: the units as Ray tasks (tools/tune_ray.py --farm) on a local Ray
# cluster of this machine, JOBS tasks sharing the GPU (num_gpus 1/JOBS
# each), from CARRY/raysite.tar.xz (tools/ray_carry.sh: Ray for a machine
# with no package index).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
engine=farm
if [ "${1:-}" = --ray ]; then
	engine=ray
	shift
fi
jobs=${1:-4}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
if [ $engine = ray ]; then
	# Unpacked beside the carry; a .pth file at the end of the path lets
	# the packages this Python already has win over the carried ones.
	site=$(python3 -c 'import site; print(site.getsitepackages()[0])')
	tar xJf "$here/raysite.tar.xz" -C /tmp || exit 1
	if ! echo /tmp/raysite >"$site/zz-tilec-raysite.pth" 2>/dev/null; then
		export PYTHONPATH=/tmp/raysite${PYTHONPATH:+:$PYTHONPATH}
	fi
	export RAY_TMPDIR=/tmp/ray RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=disabled
fi
{
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
	echo "revision $(cat "$here/REVISION")"
	t0=$(date +%s.%N)
	if [ $engine = ray ]; then
		python3 -c 'import ray; print("ray", ray.__version__)'
		python3 "$here/tools/tune_ray.py" "$here/gemm" --farm --num-gpus 1 \
			--gpus-per-unit "$(python3 -c "print(1 / $jobs)")" --retries 1
	else
		python3 "$here/tools/tune_farm.py" --unit "$here/gemm" --index all --jobs "$jobs"
	fi
	status=$?
	t1=$(date +%s.%N)
	echo "units ($engine): status $status, wall $(python3 -c "print(f'{$t1 - $t0:.1f}')") s with $jobs at a time"
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
