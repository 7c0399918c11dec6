#!/usr/bin/env bash
# tma_compile.sh - with --tma on sm_90a, the mbarrier loop's tile copies
# go by TMA where the hardware's box and swizzle fit, and the output says
# so everywhere a reader looks: the IR (tensor maps, copies lowered tma),
# the launch document (tensor_maps after the params), the kernel's
# signature (__grid_constant__ tilec::TensorMap after the params), and
# notes naming each copy that stays cp.async and why.  The output
# compiles with nvcc without spilling.  By default only loops of 3 or
# more stages for a wgmma gemm take TMA; --no-tma turns it off.  The
# epilogue's stores of wgmma accumulators go by TMA through shared
# memory (tma_store.c) by default: the IR, the map, the kernel's
# tilec::TmaStore, a region of its own for a persistent kernel, notes
# where a store cannot, nothing with --no-tma-store.  Skips (77) without
# nvcc.
#
# usage: tma_compile.sh TILEC SRCROOT
set -u
command -v nvcc >/dev/null 2>&1 || { echo "no nvcc: skipped"; exit 77; }
tilec=$(realpath "$1")
cd "$2" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
# Every gemm sample whose loop is the mbarrier one: both copies by TMA.
for file in samples/gemm samples/gemm_bias_relu samples/moe_gemm samples/gemm_w8a8; do
	s=$(basename "$file")
	cu=$work/$s.cu
	"$tilec" "$file.c" -t cuda --arch sm_90a --tma -D STAGES=3 --verify --standalone \
		-o "$cu" 2>"$work/$s.err" || { fail "$s: translation"; cat "$work/$s.err"; continue; }
	[ "$(grep -c 'const tilec::TmaCopy<' "$cu")" = 2 ] || { fail "$s: not two TMA copies"; continue; }
	# Thread 0 arrives once more per TMA copy, with its bytes.
	grep -qE 'const tilec::StageBarriers<3, [0-9]+, 2> ' "$cu" ||
		{ fail "$s: the stage barriers do not count the TMA copies' arrivals"; continue; }
	grep -qE 'const __grid_constant__ tilec::TensorMap [A-Za-z0-9_]+_map' "$cu" ||
		{ fail "$s: no tensor map parameter"; continue; }
	grep -q 'not TMA' "$work/$s.err" && { fail "$s: a copy stays cp.async"; cat "$work/$s.err"; }
	"$tilec" "$file.c" -t cuda --arch sm_90a --tma -D STAGES=3 --emit=launch >"$work/$s.json" &&
		python3 - "$work/$s.json" <<'PY' || fail "$s: launch document"
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
maps = k["tensor_maps"]
names = {p["name"]: p for p in k["params"]}
# The loop's two copies', and the epilogue's store's where it has one.
assert len([m for m in maps if names[m["tensor"]]["const"]]) == 2, maps
assert len(maps) <= 3, maps
for m in maps:
    p = names[m["tensor"]]
    assert p["kind"] == "tensor" and len(m["box"]) == p["rank"], m
    assert m["swizzle"] in (32, 64, 128) and 1 <= min(m["box"]) and max(m["box"]) <= 256, m
PY
	if ! nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v \
		-o "$work/$s.cubin" "$cu" >"$work/$s.log" 2>&1; then
		fail "$s: nvcc"; head -20 "$work/$s.log"; continue
	fi
	grep -E '[1-9][0-9]* bytes spill stores' "$work/$s.log" && fail "$s: registers spill"
	echo "ok: $s: $(grep -oE 'Used [0-9]+ registers' "$work/$s.log" | head -1)"
done
# The IR shows the decision: the kernel's tensor maps, copies lowered tma.
"$tilec" samples/gemm.c -t cuda --arch sm_90a --tma --dump-after=expand_pipeline >"$work/ir" 2>&1 &&
	grep -q '^	tensor_map A_map of A box \[128, 64\] swizzle 128' "$work/ir" &&
	grep -q ', tma As_copy iteration k_next via A_map on k_bars' "$work/ir" ||
	{ fail "gemm: the IR does not show the TMA copies"; head -30 "$work/ir"; }
# mma.sync's B tile has unpaneled 512-byte rows: it stays cp.async, with a
# note naming the copy; A goes by TMA into the same stage barrier.
"$tilec" samples/gemm.c -t cuda --arch sm_90a --tma --no-wgmma -D STAGES=3 -D BLOCK_K=64 \
	-o "$work/mma.cu" 2>"$work/mma.err" &&
	grep -q "gemm.c:37:3: note: this tile_copy into 'Bs' stays cp.async, not TMA: its rows are 512 bytes" \
		"$work/mma.err" &&
	[ "$(grep -c 'const tilec::TmaCopy<' "$work/mma.cu")" = 1 ] &&
	grep -qE 'const tilec::StageBarriers<3, [0-9]+, 1> ' "$work/mma.cu" &&
	grep -q 'const tilec::G2S<' "$work/mma.cu" ||
	{ fail "gemm --no-wgmma --tma: not A by TMA and B by cp.async with a note"; cat "$work/mma.err"; }
# By default: a 3-stage wgmma loop by TMA; none with 2 stages, none on
# mma.sync, none with --no-tma (the loop's copies; the store's below).
"$tilec" samples/gemm.c -t cuda --arch sm_90a -D STAGES=3 -o "$work/auto.cu" 2>"$work/auto.err" &&
	[ "$(grep -c 'const tilec::TmaCopy<' "$work/auto.cu")" = 2 ] && ! [ -s "$work/auto.err" ] ||
	{ fail "gemm 3 stages: not by TMA by default"; cat "$work/auto.err"; }
for flags in "--no-tma-store" "-D STAGES=3 --no-tma" "-D STAGES=3 --no-wgmma"; do
	# shellcheck disable=SC2086
	"$tilec" samples/gemm.c -t cuda --arch sm_90a $flags -o "$work/plain.cu" &&
		! grep -q 'TensorMap\|TmaCopy\|TmaStore' "$work/plain.cu" &&
		! "$tilec" samples/gemm.c -t cuda --arch sm_90a $flags --emit=launch | grep -q tensor_maps ||
		fail "gemm $flags: tensor maps"
done
# The epilogue's store by TMA: the IR shows it (C's map, its box the
# tile's rows by a 128-byte panel; the store through the stages' bytes,
# every panel at once), with its defaults (2 stages, no TMA copies) too.
"$tilec" samples/gemm.c -t cuda --arch sm_90a --verify --dump-after=tma_store >"$work/sir" 2>&1 &&
	grep -q '^	tensor_map C_map of C box \[128, 64\] swizzle 128$' "$work/sir" &&
	grep -q '<- acc, tma_store via C_map at smem +0 (4 boxes)  // 40:2$' "$work/sir" ||
	{ fail "gemm: the IR does not show the TMA store"; grep -n 'C_map\|copy C' "$work/sir"; }
"$tilec" samples/gemm.c -t cuda --arch sm_90a -o "$work/store.cu" 2>"$work/store.err" &&
	tr -d '\n\t' <"$work/store.cu" |
	grep -q 'using C_store = tilec::TmaStore<acc_rows, acc_cols, __half, BLOCK_M, BLOCK_N, 2, 4, 0,TILEC_ALIGNED>;' &&
	grep -q 'C_store::store(C_map, ' "$work/store.cu" &&
	! grep -q 'copy_r2g<acc_rows' "$work/store.cu" && ! [ -s "$work/store.err" ] ||
	{ fail "gemm: no TMA store by default"; cat "$work/store.err"; }
"$tilec" samples/gemm.c -t cuda --arch sm_90a --no-tma-store -o "$work/nostore.cu" &&
	grep -q 'tilec::copy_r2g<acc_rows, acc_cols>(C +' "$work/nostore.cu" ||
	fail "gemm --no-tma-store: not stored from registers"
# A persistent kernel's stages are refilled while a tile is stored: a
# region of its own, two of four panels at a time at 4 stages (all four
# would pass the limit), the consumers' barriers; the flash attention
# sample's 4-dim output (rank-4 box); each compiles without spills.
"$tilec" samples/gemm.c -t cuda --arch sm_90a -D STAGES=4 --persistent --verify \
	--dump-after=tma_store >"$work/pir" 2>&1 &&
	grep -q 'tma_store via C_map at smem +197632 (2 boxes), barriers of threads 0 .. 256' "$work/pir" &&
	grep -q '^	smem 230400 bytes' "$work/pir" ||
	{ fail "gemm --persistent: not a region of its own"; grep -n 'smem\|copy C' "$work/pir"; }
for v in "gemm -D STAGES=4 --persistent" "gemm -D STAGES=3 --persistent" "flash_attention" \
	"gemm_bias_relu -D STAGES=3 --tma --warp-specialize"; do
	set -- $v
	s=$1
	shift
	n=$s$(echo "$*" | tr -dc 'a-z0-9')
	"$tilec" "samples/$s.c" -t cuda --arch sm_90a "$@" --verify --standalone -o "$work/$n.cu" \
		2>"$work/$n.err" && grep -q '_store::store([A-Z]_map, ' "$work/$n.cu" ||
		{ fail "$v: no TMA store"; cat "$work/$n.err"; continue; }
	nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o "$work/$n.cubin" \
		"$work/$n.cu" >"$work/$n.log" 2>&1 || { fail "$v: nvcc"; head -20 "$work/$n.log"; continue; }
	grep -E '[1-9][0-9]* bytes spill stores' "$work/$n.log" && fail "$v: registers spill"
	echo "ok: $v: $(grep -oE 'Used [0-9]+ registers' "$work/$n.log" | head -1)"
done
tr -d '\n\t' <"$work/flash_attention.cu" |
	grep -q 'using O_store = tilec::TmaStore<s_rows, o_cols, __half, BLOCK_M, HEAD_DIM, 4, 2, 0,TILEC_ALIGNED>;' ||
	fail "flash_attention: not a rank-4 store of both panels"
# Where a store cannot: a located note saying why (C is read too; a
# persistent 128 x 128 tiling at two blocks per SM has no room).
printf '%s\n' '#include <tilec.h>' 'TILE_PARAM(STAGES, 3);' \
	'TILE_KERNEL void g(int M, int N, int K, const f16 A[M][K], const f16 B[K][N], f16 C[M][N])' '{' \
	'	tile_threads(128);' '	int bx = tile_grid_x(ceildiv(N, 64));' '	int by = tile_grid_y(ceildiv(M, 64));' \
	'	tile_shared f16 As[64][64];' '	tile_shared f16 Bs[64][64];' '	tile_fragment f32 acc[64][64];' \
	'	tile_copy(acc, &C[by * 64][bx * 64]);' '	tile_pipelined(k, ceildiv(K, 64), STAGES) {' \
	'		tile_copy(As, &A[by * 64][k * 64]);' '		tile_copy(Bs, &B[k * 64][bx * 64]);' \
	'		tile_gemm(acc, As, Bs);' '	}' '	tile_copy(&C[by * 64][bx * 64], acc);' '}' >"$work/acc.c"
"$tilec" "$work/acc.c" -t cuda --arch sm_90a --verify -o "$work/acc.cu" 2>"$work/acc.err" &&
	grep -q "acc.c:17:2: note: this tile_copy into 'C' stores from registers, not by TMA: the kernel also reads or writes 'C' elsewhere" \
		"$work/acc.err" && ! grep -q '_store::store(' "$work/acc.cu" ||
	{ fail "C += A * B: no note"; cat "$work/acc.err"; }
"$tilec" samples/gemm.c -t cuda --arch sm_90a -D BLOCK_N=128 -D THREADS=128 -D STAGES=3 --persistent \
	-o "$work/two.cu" 2>"$work/two.err" &&
	grep -q "gemm.c:40:2: note: this tile_copy into 'C' stores from registers, not by TMA: its 32768 bytes have no room in shared memory: .* a region of its own beside the kernel's 98352 bytes would lower the blocks an SM holds from 2 to 1$" \
		"$work/two.err" ||
	{ fail "gemm 128x128 --persistent: no note"; cat "$work/two.err"; }
# A box starts only at a whole 16-byte vector (any other start is an
# illegal instruction): each plan tests its first tile and its advance,
# as G2S's does, besides its map (tests/gpu_regress/tma_origin_column.c,
# whose A tiles start c0 columns off along A's innermost dim).
"$tilec" tests/gpu_regress/tma_origin_column.c -t cuda --arch sm_90a -o "$work/col.cu" &&
	grep -qE 'const tilec::TmaCopy<__half, 64, 128, 2> As_copy\(A_map, A \+ by \* 128 \+ c0,$' \
		"$work/col.cu" &&
	grep -qE '^[[:space:]]*\(long long\)64 \* M\);$' "$work/col.cu" &&
	grep -qE 'const tilec::TmaCopy<__half, 64, 64, 2> Bs_copy\(B_map, B \+ bx \* 64,$' "$work/col.cu" ||
	{ fail "tma_origin_column: a TMA plan does not test its first tile and advance"; grep -A1 TmaCopy "$work/col.cu"; }
# On a target without TMA, --tma changes nothing.
"$tilec" samples/gemm.c -t cuda --arch sm_80 --tma -o "$work/sm80.cu" &&
	"$tilec" samples/gemm.c -t cuda --arch sm_80 -o "$work/sm80_plain.cu" &&
	cmp -s "$work/sm80.cu" "$work/sm80_plain.cu" || fail "gemm sm_80: --tma changed the output"
exit $status
