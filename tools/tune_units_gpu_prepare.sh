#!/usr/bin/env bash
# tune_units_gpu_prepare.sh - the GEMM sample's tuning search for one GPU
# as work units (docs/tuning.md, "Work units"), ready to carry to a GPU
# machine that has python3, torch and cupy but no tilec (no libclang).
# Here, where the translator is:
#
#   tools/tune_units_gpu_prepare.sh CARRY [ARCH]      (default sm_90a)
#
# writes CARRY/ with
#   gemm/            `tilec tune --prepare` of samples/gemm.c at 8192^3,
#                    ragged check shape, units of 12 configurations (the
#                    sources, cubins, reference data and manifest)
#   tools/           tune_farm.py (the units' runner without tilec) and
#                    launch_manifest.py
#   run.sh           the command for the GPU machine (tools/tune_units_gpu_run.sh)
#
# then on the GPU machine, carrying CARRY:   bash CARRY/run.sh
# (the units four at a time on the one GPU, their timings one at a time;
# the results and the log to $OUT), and back here, with the folder the
# results came back to:
#
#   tools/tune_units_gpu_finish.sh CARRY RESULTS_DIR [RECORD]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/tune_units_gpu_prepare.sh CARRY [ARCH]}
arch=${2:-sm_90a}
tilec=${BUILD_DIR:-build}/tilec
[ -x "$tilec" ] || { echo "build tilec first (tools/setup.sh)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/tools"
t0=$(date +%s.%N)
# The shape of docs/perf-gpu.md; a check shape whose dims are multiples
# of 8, so the check runs the loop the timing shape runs.
"$tilec" tune samples/gemm.c -t cuda --arch "$arch" \
	--shape M=8192,N=8192,K=8192 --check-shape M=200,N=136,K=72 \
	--unit-size 12 --config-timeout 120 --prepare "$out/gemm"
t1=$(date +%s.%N)
cp tools/tune_farm.py tools/launch_manifest.py tools/tune_ray.py "$out/tools/"
cp tools/tune_units_gpu_run.sh "$out/run.sh"
git describe --always --dirty >"$out/REVISION" 2>/dev/null || echo unknown >"$out/REVISION"
# The plumbing checked here first (made-up times, in a copy).
cp -r "$out/gemm" "$out/dry"
python3 "$out/tools/tune_farm.py" --unit "$out/dry" --index all --dry-run >/dev/null
"$tilec" tune --finish "$out/dry" -o "$out/dry.json" 2>/dev/null >/dev/null
rm -rf "$out/dry" "$out/dry.json"
echo "prepared (translate, prune, compile $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["configs"]))' "$out/gemm/manifest.json") cubins) in $(python3 -c "print(f'{$t1 - $t0:.1f}')") s"
bytes=$(du -sb "$out" | cut -f1)
echo "$out/: $((bytes / 1024)) KiB (the carry limit is 64 MiB)"
