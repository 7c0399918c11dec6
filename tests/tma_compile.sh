#!/usr/bin/env bash
# tma_compile.sh - with --tma on sm_90a, the mbarrier loop's tile copies
# go by TMA where the hardware's box and swizzle fit, and the output says
# so everywhere a reader looks: the IR (tensor maps, copies lowered tma),
# the launch document (tensor_maps after the params), the kernel's
# signature (__grid_constant__ tilec::TensorMap after the params), and
# notes naming each copy that stays cp.async and why.  The output
# compiles with nvcc without spilling.  By default only loops of 3 or
# more stages for a wgmma gemm take TMA; --no-tma turns it off.  Skips
# (77) without nvcc.
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
assert len(maps) == 2, maps
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
# mma.sync, none with --no-tma.
"$tilec" samples/gemm.c -t cuda --arch sm_90a -D STAGES=3 -o "$work/auto.cu" 2>"$work/auto.err" &&
	[ "$(grep -c 'const tilec::TmaCopy<' "$work/auto.cu")" = 2 ] && ! [ -s "$work/auto.err" ] ||
	{ fail "gemm 3 stages: not by TMA by default"; cat "$work/auto.err"; }
for flags in "" "-D STAGES=3 --no-tma" "-D STAGES=3 --no-wgmma"; do
	# shellcheck disable=SC2086
	"$tilec" samples/gemm.c -t cuda --arch sm_90a $flags -o "$work/plain.cu" &&
		! grep -q 'TensorMap\|TmaCopy' "$work/plain.cu" &&
		! "$tilec" samples/gemm.c -t cuda --arch sm_90a $flags --emit=launch | grep -q tensor_maps ||
		fail "gemm ${flags:-with its defaults}: tensor maps"
done
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
