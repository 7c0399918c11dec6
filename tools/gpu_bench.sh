#!/usr/bin/env bash
# The GPU run, in one call on the GPU machine: check every case of
# tools/gpu/cases.py against its torch reference, time the benchmark cases,
# then measure the anchors (cuBLAS, SDPA, Triton, copy bandwidth) in the
# same run.  Needs bench-carry/ from tools/gpu_prepare.sh (run here first,
# where the translator is); writes logs to $OUT when set.
#
#   tools/gpu_prepare.sh && <device> tools/gpu_bench.sh
set -uo pipefail
cd "$(dirname "$0")/../bench-carry" || { echo "run tools/gpu_prepare.sh first" >&2; exit 2; }
out=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c 'import torch, cupy; print("torch", torch.__version__, "cupy", cupy.__version__)'
status=0
if [ $# -eq 0 ]; then
	# tilec's own runtime: NVRTC + the driver API, on every sample.
	(cd .. && rm -rf build-rt && meson setup build-rt -Dtranslator=disabled >/dev/null &&
		ninja -C build-rt >/dev/null) && ../build-rt/gpu_runtime_check rt/*.cu --gemm rt/gemm.cu \
		--manifest rt/gemm.launch.json \
		--bench 4096x4096x4096 2>&1 | tee "$out/runtime_check.log" | tail -n 20 || status=1
	# The vendored gemm exported with --tma, checked by its own program.
	nvcc -O2 -arch=sm_90a -DVENDOR_CUDA -I vendor_tma ../samples/vendor/main.c vendor_tma/gemm.cu \
		-o "$out/vendor_tma" && "$out/vendor_tma" 2>&1 | tail -n 3 || status=1
	# The gemm at 3 stages by TMA (tensor maps built by the runtime,
	# checked and benchmarked launches alike) and without, alternately.
	for v in tma s3 tma s3; do
		../build-rt/gpu_runtime_check --gemm rt/gemm_$v.cu --manifest rt/gemm_$v.launch.json \
			--bench 4096x4096x4096 2>&1 | tee -a "$out/runtime_check_$v.log" | grep -E 'bench|FAIL|PASS' || status=1
	done
fi
PYTHONUNBUFFERED=1 python3 run.py cases.json "$@" 2>&1 | tee "$out/tilec_gpu.log" || status=1
if [ -f gpu_anchors.py ] && [ $# -eq 0 ]; then
	PYTHONUNBUFFERED=1 python3 gpu_anchors.py all 2>&1 | tee "$out/anchors.log" | tail -n 25
fi
echo
grep -E '^(case|[a-z_0-9]+ +(yes|NO) )' "$out/tilec_gpu.log" || true
grep -E 'passed, [0-9]+ failed' "$out/tilec_gpu.log" || true
exit $status
