#!/usr/bin/env bash
# tune_units_gpu_finish.sh - the record from the units that
# tools/tune_units_gpu_run.sh ran on the GPU machine:
#
#   tools/tune_units_gpu_finish.sh CARRY RESULTS_DIR [RECORD]
#
# CARRY is the folder tools/tune_units_gpu_prepare.sh wrote (the units'
# manifest, whose hash the results carry), RESULTS_DIR the results/ that
# came back; RECORD defaults to CARRY/gemm.cuda.json.  The merge says
# which units are missing, and the record has the search's wall and GPU
# time (result.wall_s, result.gpu_s).
set -euo pipefail
cd "$(dirname "$0")/.."
carry=${1:?usage: tools/tune_units_gpu_finish.sh CARRY RESULTS_DIR [RECORD]}
results=${2:?usage: tools/tune_units_gpu_finish.sh CARRY RESULTS_DIR [RECORD]}
record=${3:-$carry/gemm.cuda.json}
mkdir -p "$carry/gemm/results"
cp "$results"/u*.json "$carry/gemm/results/"
${BUILD_DIR:-build}/tilec tune --finish "$carry/gemm" -o "$record"
python3 - "$record" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
u = r["farm"]["units"]
print(f"{r['device']}: chosen {r['chosen']}, {r['result']['chosen_ms']:.4g} ms; "
      f"default {r['result'].get('default_ms', float('nan')):.4g} ms; "
      f"search wall {u.get('wall_s', 0):.1f} s, GPU (timing) {u.get('timing_s', 0):.1f} s, "
      f"{len(u['done'])} of {u['total']} units")
PY
