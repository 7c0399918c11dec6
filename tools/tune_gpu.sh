#!/usr/bin/env bash
# The GPU side of tools/tune_gpu_prepare.sh, in one call on the GPU
# machine (python3 with torch and cupy; no tilec there): check and time
# every prepared configuration of the GEMM and attention samples, with
# cuBLAS (torch.matmul) and SDPA timed in the same run.  Timings go to
# $OUT (or tune-carry/out); the log to $OUT/tune_gpu.log.
#
#   tools/tune_gpu.sh [--budget SECONDS]     (default 420)
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d tune-carry/gemm ] || { echo "no tune-carry/: run tools/tune_gpu_prepare.sh first" >&2; exit 2; }
out=${OUT:-tune-carry/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
PYTHONUNBUFFERED=1 python3 tools/tune_farm.py tune-carry/gemm:matmul \
	tune-carry/attention:sdpa tune-carry/attention_causal:sdpa \
	--out-dir "$out" --budget 420 "$@" 2>&1 | tee "$out/tune_gpu.log"
status=${PIPESTATUS[0]}
echo
grep -E "CHOSEN|anchor|correct at the check shape|WRONG|FAILED|COMPILE" "$out/tune_gpu.log"
exit "$status"
