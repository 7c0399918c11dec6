#!/usr/bin/env bash
# ws_compile.sh - with --warp-specialize on sm_90a, the mbarrier loop
# whose copies all go by TMA gets a producer warpgroup
# (expand_pipeline.c, "Warp specialization"), and the output says so
# everywhere a reader looks: the IR (the kernel's producer warpgroup, a
# roles statement, the consumers' barriers of their own threads, stage
# barriers of TMA's arrivals only), the launch document (threads: the
# program's and the producer's), the kernel (launch bounds, setmaxnreg
# through tilec::Roles).  The output compiles with nvcc without spilling.
# A loop that cannot take it gets a located note; by default, with
# --no-warp-specialize, and on sm_80 nothing changes.  Skips (77)
# without nvcc.
#
# usage: ws_compile.sh TILEC SRCROOT
set -u
command -v nvcc >/dev/null 2>&1 || { echo "no nvcc: skipped"; exit 77; }
tilec=$(realpath "$1")
cd "$2" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
ws=(-t cuda --arch sm_90a -D STAGES=3 --warp-specialize --verify)
# The IR shows the decision.
"$tilec" samples/gemm.c "${ws[@]}" --dump-after=expand_pipeline >"$work/ir" 2>&1 &&
	grep -q '^	producer warpgroup of 128 threads after them' "$work/ir" &&
	grep -q 'stage_bar_init k_bars, stages 3, full arrivals 2, empty arrivals 8, .*TMA.s only' "$work/ir" &&
	grep -q '^	roles producer threads 256 .. 384 (one thread, 40 registers) {' "$work/ir" &&
	grep -q 'consumer threads 0 .. 256 (232 registers, 1 block per SM) {' "$work/ir" &&
	grep -q 'stage_bar_wait k_bars empty k_stage parity k_phase ^ 1' "$work/ir" &&
	grep -q 'barrier of threads 0 .. 256' "$work/ir" ||
	{ fail "gemm: the IR does not show the producer warpgroup"; head -40 "$work/ir"; }
# Every gemm sample whose loop takes it, and the batched gemm (boxes of
# rank 4 and 3): the launch gives 128 more threads; nvcc, no spills.
for file in samples/gemm samples/gemm_bias_relu samples/gemm_w8a8 tests/gpu_regress/batched_strided_gemm; do
	s=$(basename "$file")
	cu=$work/$s.cu
	"$tilec" "$file.c" "${ws[@]}" --tma --standalone -o "$cu" 2>"$work/$s.err" ||
		{ fail "$s: translation"; cat "$work/$s.err"; continue; }
	grep -q 'not warp-specialized' "$work/$s.err" && { fail "$s: not warp-specialized"; cat "$work/$s.err"; }
	grep -qE 'using roles = tilec::Roles<[0-9]+, 40, [0-9]+>;' "$cu" &&
		grep -qE 'const tilec::StageBarriers<3, [0-9]+, [0-9]+, 0> ' "$cu" &&
		grep -q 'issue_here(' "$cu" ||
		{ fail "$s: no producer warpgroup in the kernel"; continue; }
	threads=$(grep -oE 'Roles<[0-9]+' "$cu" | grep -oE '[0-9]+$')
	grep -qE "__launch_bounds__\\($((threads + 128)), [0-9]+\\)" "$cu" || fail "$s: launch bounds"
	[ "$("$tilec" "$file.c" "${ws[@]}" --tma --emit=launch | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["kernels"][0]["threads"])')" = $((threads + 128)) ] ||
		fail "$s: the launch document's threads are not the program's and the producer's"
	if ! nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v \
		-o "$work/$s.cubin" "$cu" >"$work/$s.log" 2>&1; then
		fail "$s: nvcc"; head -20 "$work/$s.log"; continue
	fi
	grep -E '[1-9][0-9]* bytes spill stores' "$work/$s.log" && fail "$s: registers spill"
	grep -qi 'warning' "$work/$s.log" && { fail "$s: ptxas warns"; grep -i warning "$work/$s.log"; }
	echo "ok: $s: $(grep -oE 'Used [0-9]+ registers' "$work/$s.log" | head -1)"
done
# Two 128-thread blocks fit an SM: the registers are split for two.
"$tilec" samples/gemm.c "${ws[@]}" -D BLOCK_N=128 -D THREADS=128 -o "$work/two.cu" &&
	grep -q '__launch_bounds__(256, 2)' "$work/two.cu" &&
	grep -q 'tilec::Roles<128, 40, 216>' "$work/two.cu" || fail "gemm 128x128: not two blocks per SM"
# A loop inside a branch cannot: a located note says so.
"$tilec" samples/moe_gemm.c "${ws[@]}" --tma -o "$work/moe.cu" 2>"$work/moe.err" &&
	grep -qE 'moe_gemm.c:[0-9]+:[0-9]+: note: this tile_pipelined loop is not warp-specialized: it is inside another loop or a branch' \
		"$work/moe.err" && ! grep -q 'Roles<' "$work/moe.cu" ||
	{ fail "moe_gemm: no note"; cat "$work/moe.err"; }
# Off by default, with --no-warp-specialize, and where TMA is off.
for flags in "-D STAGES=3" "-D STAGES=3 --warp-specialize --no-warp-specialize" "-D STAGES=3 --warp-specialize --no-tma"; do
	# shellcheck disable=SC2086
	"$tilec" samples/gemm.c -t cuda --arch sm_90a $flags -o "$work/plain.cu" 2>/dev/null &&
		! grep -q 'Roles<' "$work/plain.cu" &&
		[ "$("$tilec" samples/gemm.c -t cuda --arch sm_90a $flags --emit=launch | python3 -c \
			'import json,sys; print(json.load(sys.stdin)["kernels"][0]["threads"])')" = 256 ] ||
		fail "gemm $flags: a producer warpgroup"
done
# --persistent: one wave of blocks walking the tiles, in the IR (the
# kernel's grid, a tiles statement in each role, the ring's state
# outside them, the consumers' last release), the launch document (the
# grid the smaller of the tiles and the device's SMs x the blocks per
# SM: 132, 7, 1000 SMs) and the kernel, compiled without spills.
"$tilec" samples/gemm.c "${ws[@]/--warp-specialize/--persistent}" --dump-after=expand_pipeline >"$work/pir" 2>&1 &&
	grep -q '^	grid x = min(ceildiv(N, BLOCK_N) \* ceildiv(M, BLOCK_M), device.sms) persistent (1 block per SM)$' "$work/pir" &&
	grep -q '^	tiles x = ceildiv(N, BLOCK_N) as bx, y = ceildiv(M, BLOCK_M) as by$' "$work/pir" &&
	[ "$(grep -c "tiles from the block's index in steps of the grid {" "$work/pir")" = 2 ] &&
	grep -B3 'tiles from the block' "$work/pir" | grep -q 'i32 k_phase = 0' &&
	grep -A2 'if k_end > 0 {' "$work/pir" | grep -q 'stage_bar_arrive k_bars empty k_prev_stage' ||
	{ fail "gemm --persistent: the IR does not show the tile walk"; head -60 "$work/pir"; }
[ "$("$tilec" samples/gemm.c -t cuda --arch sm_90a -D STAGES=3 --persistent --emit=launch | python3 -c '
import json, sys
sys.path.insert(0, "tools")
import launch_manifest
k = json.load(sys.stdin)["kernels"][0]
print(k["threads"], k["grid"][0]["args"][1], [launch_manifest.grid(k, {"M": m, "N": 4096, "K": 64}, sms)
	for m, sms in ((4096, 132), (4096, 7), (300, 132), (300, 1000))])')" = \
	"384 {'device': 'sms'} [[132, 1, 1], [7, 1, 1], [48, 1, 1], [48, 1, 1]]" ] ||
	fail "gemm --persistent: the launch grid"
for file in samples/gemm samples/gemm_bias_relu samples/gemm_w8a8 tests/gpu_regress/batched_strided_gemm; do
	s=$(basename "$file")
	cu=$work/${s}_ps.cu
	"$tilec" "$file.c" -t cuda --arch sm_90a -D STAGES=3 --persistent --verify --tma --standalone \
		-o "$cu" 2>"$work/$s.err" || { fail "$s --persistent: translation"; cat "$work/$s.err"; continue; }
	grep -q 'for (int tile = blockIdx.x; tile < ' "$cu" && grep -q 'issue_here(' "$cu" ||
		{ fail "$s --persistent: no tile walk"; continue; }
	nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v \
		-o "$work/${s}_ps.cubin" "$cu" >"$work/${s}_ps.log" 2>&1 || { fail "$s --persistent: nvcc"; continue; }
	grep -E '[1-9][0-9]* bytes spill stores' "$work/${s}_ps.log" && fail "$s --persistent: registers spill"
	grep -qi 'warning' "$work/${s}_ps.log" && fail "$s --persistent: ptxas warns"
	echo "ok: $s --persistent: $(grep -oE 'Used [0-9]+ registers' "$work/${s}_ps.log" | head -1)"
done
# tilec export --persistent: the launch function reads the current
# device's SM count for the grid, and the file compiles.
"$tilec" export samples/gemm.c -t cuda --arch sm_90a -D STAGES=3 --persistent -o "$work/export" >/dev/null &&
	grep -q 'cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)' "$work/export/gemm.cu" &&
	grep -qF '(long long)sms)' "$work/export/gemm.cu" &&
	nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -c -o "$work/export.o" \
		"$work/export/gemm.cu" >"$work/export.log" 2>&1 ||
	{ fail "gemm export --persistent: the launch's SM count"; head -20 "$work/export.log"; }
# The batched gemm walks z too.
grep -q 'const int bh = tile / plane;' "$work/batched_strided_gemm_ps.cu" || fail "batched --persistent: z"
# Without a grid, nothing to walk: a located note.
printf '%s\n' '#include <tilec.h>' 'TILE_PARAM(STAGES, 3);' \
	'TILE_KERNEL void g(int K, const f16 A[128][K], const f16 B[K][256], f16 C[128][256])' '{' \
	'	tile_threads(256);' '	tile_shared f16 As[128][64];' '	tile_shared f16 Bs[64][256];' \
	'	tile_fragment f32 acc[128][256];' '	tile_clear(acc);' \
	'	tile_pipelined(k, ceildiv(K, 64), STAGES) {' '		tile_copy(As, &A[0][k * 64]);' \
	'		tile_copy(Bs, &B[k * 64][0]);' '		tile_gemm(acc, As, Bs);' '	}' \
	'	tile_copy(&C[0][0], acc);' '}' >"$work/one.c"
"$tilec" "$work/one.c" -t cuda --arch sm_90a --persistent --verify -o "$work/one.cu" 2>"$work/one.err" &&
	grep -qE 'one.c:10:2: note: this kernel is not made persistent: its grid is one block' "$work/one.err" &&
	grep -q 'Roles<' "$work/one.cu" && ! grep -q 'int tile = ' "$work/one.cu" ||
	{ fail "one block: no note"; cat "$work/one.err"; }
# On sm_80, --warp-specialize changes nothing.
"$tilec" samples/gemm.c -t cuda --arch sm_80 -D STAGES=3 --warp-specialize -o "$work/sm80.cu" &&
	"$tilec" samples/gemm.c -t cuda --arch sm_80 -D STAGES=3 -o "$work/sm80_plain.cu" &&
	cmp -s "$work/sm80.cu" "$work/sm80_plain.cu" || fail "gemm sm_80: --warp-specialize changed the output"
exit $status
