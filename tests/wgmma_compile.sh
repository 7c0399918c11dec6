#!/usr/bin/env bash
# wgmma_compile.sh - the sm_90a output of the samples whose gemms fit
# wgmma, translated with --wgmma, compiles with nvcc (ptxas checks every
# wgmma, fence and descriptor operand) without spilling registers or
# serializing the wgmma; and the translator did pick wgmma for each (the
# attention samples through the A-from-registers form, the fp8 and int8
# GEMMs through the 8-bit forms).  Skips (77) without nvcc.
#
# usage: wgmma_compile.sh TILEC SRCROOT
set -u
command -v nvcc >/dev/null 2>&1 || { echo "no nvcc: skipped"; exit 77; }
tilec=$(realpath "$1")
cd "$2" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for file in samples/gemm samples/gemm_bias_relu samples/conv2d samples/moe_gemm \
	samples/flash_attention samples/gqa_attention samples/attention_bwd samples/gemm_w8a8 \
	tests/lang/gemm_fp8_nt tests/lang/gemm_i8_nt; do
	sample=$(basename "$file")
	cu=$work/$sample.cu
	if ! "$tilec" "$file.c" -t cuda --arch sm_90a --wgmma --standalone -o "$cu"; then
		echo "FAIL: $sample: translation"; status=1; continue
	fi
	grep -q 'tilec::wgmma_[rs]s<' "$cu" || { echo "FAIL: $sample: no wgmma call"; status=1; continue; }
	if ! nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v \
		-o "$work/$sample.cubin" "$cu" >"$work/$sample.log" 2>&1; then
		echo "FAIL: $sample: nvcc"; head -20 "$work/$sample.log"; status=1; continue
	fi
	if grep -E '[1-9][0-9]* bytes spill stores' "$work/$sample.log"; then
		echo "FAIL: $sample: registers spill"; status=1; continue
	fi
	# ptxas serializes wgmma it cannot pipeline, and says so.
	if grep -i 'wgmma.*serialized' "$work/$sample.log"; then
		echo "FAIL: $sample: wgmma serialized"; status=1; continue
	fi
	echo "ok: $sample: $(grep -oE 'Used [0-9]+ registers' "$work/$sample.log" | head -1)"
done
exit $status
