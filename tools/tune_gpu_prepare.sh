#!/usr/bin/env bash
# Prepare the GPU tuning of the GEMM and attention samples for one device
# call (docs/tuning.md, "On a GPU farm").  Here, where the translator is:
#
#   tools/tune_gpu_prepare.sh [ARCH]        (default sm_90a)
#
# writes tune-carry/{gemm,attention,attention_causal}/ with `tilec tune
# --prepare`: every configuration that fits, its source and cubin, the
# reference at a ragged check shape.  Then on the GPU machine, carrying
# tune-carry/:
#
#   tools/tune_gpu.sh                       (timings into $OUT)
#
# and back here, with the directory the timings came back to:
#
#   tools/tune_gpu_finish.sh TIMINGS_DIR [RECORDS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-sm_90a}
tilec=build/tilec
[ -x "$tilec" ] || { echo "build tilec first (tools/setup.sh)" >&2; exit 1; }
out=tune-carry
rm -rf "$out"
mkdir -p "$out"
# The shapes of docs/perf-gpu.md; ragged check shapes.
"$tilec" tune samples/gemm.c -t cuda --arch "$arch" \
	--shape M=8192,N=8192,K=8192 --check-shape M=200,N=130,K=70 \
	--prepare "$out/gemm"
"$tilec" tune samples/flash_attention.c -t cuda --arch "$arch" \
	--shape B=8,S=4096,H=16 --check-shape B=1,S=130,H=2 \
	--prepare "$out/attention"
"$tilec" tune samples/flash_attention.c -t cuda --arch "$arch" -D CAUSAL=1 \
	--shape B=8,S=4096,H=16 --check-shape B=1,S=200,H=2 \
	--prepare "$out/attention_causal"
python3 tools/tune_farm.py "$out/gemm:matmul" "$out/attention:sdpa" \
	"$out/attention_causal:sdpa" --dry-run --out-dir "$out/dry-run" >/dev/null
rm -rf "$out/dry-run"
du -sh "$out"
