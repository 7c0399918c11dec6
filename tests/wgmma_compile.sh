#!/usr/bin/env bash
# wgmma_compile.sh - the sm_90a output of the samples whose gemms fit
# wgmma, translated for sm_90a, compiles with nvcc (ptxas checks every
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
	if ! "$tilec" "$file.c" -t cuda --arch sm_90a --standalone -o "$cu"; then
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
# Each gemm asks its own narrowest instruction: attention's S (32
# columns, K-major B) takes n32 although P V's N-major V asks n64.
"$tilec" samples/flash_attention.c -t cuda --arch sm_90a -D BLOCK_N=32 --standalone \
	-o "$work/fa32.cu" 2>"$work/fa32.err" &&
	grep -q 'wgmma_ss<2, 4, 32, false, true>(s' "$work/fa32.cu" &&
	grep -q 'wgmma_rs<2, 16, 128, false>(o' "$work/fa32.cu" &&
	nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v \
		-o "$work/fa32.cubin" "$work/fa32.cu" >"$work/fa32.log" 2>&1 &&
	! grep -qE '[1-9][0-9]* bytes spill stores' "$work/fa32.log" ||
	{ echo "FAIL: flash_attention BLOCK_N=32: not wgmma, or spills"; cat "$work/fa32.err"; status=1; }
# The pipelined gemm keeps one group in flight; fp8 gemms are promoted.
grep -q 'wgmma_ss<.*tilec::SUM_IN_PLACE, 1>' "$work/gemm.cu" ||
	{ echo "FAIL: gemm: its gemm does not stay in flight"; status=1; }
grep -q 'wgmma_ss<.*tilec::SUM_PROMOTED>' "$work/gemm_fp8_nt.cu" ||
	{ echo "FAIL: gemm_fp8_nt: its gemm is not promoted"; status=1; }
# By default f16 and fp8 gemms take wgmma (fp8 promoted, the manifest
# saying how far from exact); --no-fp8-wgmma keeps fp8 on mma.sync with a
# note; --no-wgmma keeps mma.sync throughout.
"$tilec" samples/gemm.c -t cuda --arch sm_90a -o "$work/default.cu" &&
	grep -q 'tilec::wgmma_ss<' "$work/default.cu" ||
	{ echo "FAIL: gemm: no wgmma by default"; status=1; }
"$tilec" samples/gemm.c -t cuda --arch sm_90a --no-wgmma -o "$work/off.cu" &&
	! grep -q 'wgmma' "$work/off.cu" && grep -q 'tilec::mma_ss<' "$work/off.cu" ||
	{ echo "FAIL: gemm: --no-wgmma still uses wgmma"; status=1; }
"$tilec" tests/lang/gemm_fp8_nt.c -t cuda --arch sm_90a -o "$work/fp8.cu" &&
	grep -q 'wgmma_ss<.*tilec::SUM_PROMOTED>' "$work/fp8.cu" ||
	{ echo "FAIL: gemm_fp8_nt: not promoted wgmma by default"; status=1; }
"$tilec" tests/lang/gemm_fp8_nt.c -t cuda --arch sm_90a --emit=launch |
	grep -q '"promoted_sums": 0.00025' ||
	{ echo "FAIL: gemm_fp8_nt: the manifest does not say its sums are promoted"; status=1; }
"$tilec" samples/gemm.c -t cuda --arch sm_90a --emit=launch | grep -q promoted_sums &&
	{ echo "FAIL: gemm: an exact gemm's manifest says promoted_sums"; status=1; }
"$tilec" tests/lang/gemm_fp8_nt.c -t cuda --arch sm_90a --no-fp8-wgmma -o "$work/fp8x.cu" \
	2>"$work/fp8x.err" && grep -q 'tilec::mma_ss<' "$work/fp8x.cu" &&
	grep -q 'sums below f32 precision.*--no-fp8-wgmma refuses' "$work/fp8x.err" ||
	{ echo "FAIL: gemm_fp8_nt: --no-fp8-wgmma not mma.sync with a note"; cat "$work/fp8x.err"; status=1; }
# A promoted sum whose second accumulator does not fit stays on mma.sync.
"$tilec" tests/lang/gemm_fp8_nt.c -t cuda --arch sm_90a -D BLOCK_M=128 -D BLOCK_N=256 \
	-D BLOCK_K=128 -D THREADS=256 -o "$work/fp8big.cu" 2>"$work/fp8big.err" &&
	grep -q 'tilec::mma_ss<' "$work/fp8big.cu" &&
	grep -q 'two of 128 floats per thread' "$work/fp8big.err" ||
	{ echo "FAIL: gemm_fp8_nt 128x256: promoted beyond the registers"; cat "$work/fp8big.err"; status=1; }
exit $status
