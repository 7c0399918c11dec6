#!/usr/bin/env bash
# Turn the timings of tools/tune_gpu.sh into tuning records (docs/tuning.md):
#
#   tools/tune_gpu_finish.sh TIMINGS_DIR [RECORDS_DIR]   (default samples/tuned)
#
# TIMINGS_DIR holds gemm.timings.json, attention.timings.json and
# attention_causal.timings.json; tune-carry/ must be the one they were
# measured from (the manifests' hashes are checked).
set -uo pipefail
cd "$(dirname "$0")/.."
timings=${1:?usage: tools/tune_gpu_finish.sh TIMINGS_DIR [RECORDS_DIR]}
records=${2:-samples/tuned}
mkdir -p "$records"
status=0
for n in gemm attention attention_causal; do
	arch=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["arch"])' \
		"tune-carry/$n/manifest.json")
	build/tilec tune --finish "tune-carry/$n" --timings "$timings/$n.timings.json" \
		-o "$records/$n.cuda.$arch.json" || status=1
done
exit $status
