#!/usr/bin/env bash
# explain.sh - notes on where the GPU backends put each buffer (explain.c).
#
#   explain.sh TILEC SRCROOT CASE
#
# CASE  notes     a fragment a GPU target keeps in shared memory instead
#                 of registers gets a located note saying why, on every
#                 translation (status 0); one the target keeps in
#                 registers gets none, and the CPU target prints none
#       explain   --explain: a note at every kernel and buffer, with its
#                 placement (registers and how the threads hold it, or
#                 shared memory and its bytes)
#       reasons   each reason names the use that decided it: a gemm with
#                 no matrix instruction, a gemm B operand, an element read
#                 at block level, an arg-reduction
#       pipeline  a copy of a tile_pipelined loop that is not issued ahead
#                 of its iteration gets a note saying why (its origin
#                 reads a local the loop assigns; it follows a statement
#                 that is not a copy), on every translation; declarations
#                 of values computable early before the copies do not
#                 stop them (they join, no note), nor does a page index
#                 read from a read-only tensor
#       mbarrier  a 3-stage loop of wgmma gemms on sm_90a that cannot
#                 issue its copies from its gemm (two gemms; an operand
#                 tile of fewer 16-byte vectors than threads), and so
#                 gets no TMA copies, says why; with 2 stages, --no-tma
#                 or on sm_80 there is no note about the loop (a store of
#                 an accumulator that is not by TMA says why)
#       computed  a gemm whose B an element loop writes right before it
#                 computes B itself on CUDA when one warp along M multiplies
#                 each column (the W4A16 samples: no note; --explain says
#                 the buffer is not held, and the output calls
#                 tilec::mma_sr); with two warps along M it says why not,
#                 on every translation; HIP keeps the loop and says nothing
#       int8      an i8 gemm into i32 on the integer matrix instructions
#                 gets no note; one they cannot take (K not whole
#                 instructions, which differ by target: k32 on CUDA and
#                 CDNA3, k16 on CDNA2; an f32 accumulator; A in
#                 registers) says so, naming the gemm; an fp8 gemm is on
#                 the tensor cores on CUDA and has a note on HIP
set -u
tilec=$(realpath "$1") root=$2 case=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-explain.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$root" || exit 2

fail() { echo "FAIL: $*" >&2; exit 1; }

# translate ARGS...: status 0, stderr in $work/err.
translate() {
	"$tilec" "$@" --verify >"$work/out" 2>"$work/err" ||
		{ cat "$work/err"; fail "tilec $*"; }
}
has() { grep -qE -- "$1" "$work/err" || { cat "$work/err"; fail "no '$1'"; }; }
hasnt() { ! grep -qE -- "$1" "$work/err" || { cat "$work/err"; fail "'$1'"; }; }

case $case in
notes)
	translate samples/gemm_f32.c -t cuda --arch sm_80
	has "^samples/gemm_f32.c:28:20: note: tile_fragment 'acc' is in shared memory, not registers: it is the accumulator of the tile_gemm at 34:3 \(f32 \+= f32 x f32, 128x128, K 32\), which has no matrix instruction here \(those take f16 or bf16 operands into an f32 accumulator with K a multiple of 16, i8 operands into an i32 accumulator with K a multiple of 32, or fp8e4m3 or fp8e5m2 operands into an f32 accumulator with K a multiple of 32; M a multiple of 16, N of 8\), so it runs element by element from shared memory"
	[ "$(grep -c ': note: ' "$work/err")" = 1 ] || { cat "$work/err"; fail "one note expected"; }
	# The caret line under the declaration.
	grep -A2 ": note: " "$work/err" | grep -q "tile_fragment f32 acc\[BLOCK_M\]\[BLOCK_N\];" ||
		fail "no source line under the note"
	# HIP's MFMA takes f32 operands: registers, no note.
	translate samples/gemm_f32.c -t hip
	hasnt "note:"
	translate samples/gemm_f32.c -t openmp
	hasnt "note:"
	translate samples/softmax.c -t cuda
	[ -s "$work/err" ] && { cat "$work/err"; fail "notes for softmax"; }
	# On sm_90a the kernel's note says it misses wgmma, and names the
	# warp instruction only where a gemm runs on it: f32 runs element by
	# element, f16 with THREADS=96 (not whole warpgroups) on mma.sync.
	translate samples/gemm_f32.c -t cuda --arch sm_90a
	has "^samples/gemm_f32.c:34:3: note: kernel 'gemm_f32' does not multiply with wgmma: the tile_gemm at 34:3 does not fit wgmma: its operands are f32"
	hasnt "multiplies with mma"
	translate samples/gemm.c -t cuda --arch sm_90a -D THREADS=64 -D BLOCK_M=64 -D BLOCK_N=64
	has "note: kernel 'gemm' multiplies with mma.sync.aligned.m16n8, not wgmma: the block's 64 threads are not whole warpgroups of 128"
	;;
explain)
	translate samples/flash_attention.c -t cuda --explain
	has "^samples/flash_attention.c:19:1: note: kernel 'flash_attention' on cuda sm_[0-9a]+: 128 threads, [0-9]+ bytes of shared memory"
	has "note: tile_shared 'Ks' in shared memory: 32768 bytes at \+[0-9]+, 2 stages"
	has "note: tile_fragment 's' in registers: the mma.sync m16n8 accumulator layout over 4x1 warps, each thread holding 4 of 128 rows, 16 of 64 columns"
	has "note: tile_fragment 'row_max' in registers: "
	# One note per buffer and one for the kernel: 10 buffers.
	[ "$(grep -c ': note: ' "$work/err")" = 11 ] || { cat "$work/err"; fail "11 notes expected"; }
	# On sm_90a, P's gemm reads S and rounds it as it packs its operand
	# (reg_operands.c): p is not held.
	translate samples/flash_attention.c -t cuda --arch sm_90a --explain
	has "^samples/flash_attention.c:32:20: note: tile_fragment 'p' not held: the gemm that read it reads the f32 fragment it was copied from, rounding each element to f16 as it packs its A operand"
	translate samples/flash_attention.c -t hip --explain
	has "note: tile_fragment 's' in registers: the v_mfma 16x16 accumulator layout"
	translate samples/softmax.c -t cuda --explain
	has "note: tile_fragment '[a-z_]+' in registers: blocked over a [0-9]+x[0-9]+ thread grid"
	translate samples/softmax.c -t openmp --explain
	has "note: tile_fragment '[a-z_]+': an array of the block's frame"
	# Element loops into shared rows: in runs, or why not (runs.c; on
	# CUDA this one moves into its gemm: case computed).
	translate samples/gemm_w4a16.c -t hip --explain
	has "^samples/gemm_w4a16.c:55:29: note: this tile_parallel loop stores 'Ws' in runs of 8 elements a thread, one 16-byte store each"
	translate samples/topk.c -t hip --explain
	# A fragment whose rows are too short for a 16-byte run a thread
	# stays in registers in shorter runs (layout.c's distribute).
	has "^samples/topk.c:31:20: note: tile_fragment 'w' in registers: blocked over a 32x4 thread grid, each thread holding 1 of 32 rows, 2 of 8 columns in runs of 2"
	translate samples/paged_decode.c -t hip --explain
	has "^samples/paged_decode.c:147:29: note: this tile_parallel loop stores 's' in runs of 4 elements a thread, one 16-byte store each"
	translate samples/flash_decode.c -t cuda --explain
	has "^samples/flash_decode.c:100:2: note: this tile_parallel loop stores 'lse' one element a thread at a time: its row of 'lse' is 4 bytes, no two runs of 4"
	# A stage of a pipelined tile is named as the program names it.
	cat >"$work/staged.c" <<'PROG'
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, int K, const f16 A[M][K], const f16 B[N][K], const f32 s[K],
  f32 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, 64));
	int by = tile_grid_y(ceildiv(M, 64));
	tile_shared f16 As[64][32];
	tile_shared f16 Bs[64][32];
	tile_shared f32 ss[32];
	tile_fragment f32 acc[64][64];
	tile_clear(acc);
	tile_pipelined(t, ceildiv(K, 32), 3) {
		tile_copy(As, &A[by * 64][t * 32]);
		tile_copy(Bs, &B[bx * 64][t * 32]);
		tile_copy(ss, &s[t * 32]);
		tile_parallel(i, 64) tile_parallel(j, 32)
			As[i][j] = (float)As[i][j] * ss[j];
		tile_gemm(acc, As, Bs, TILE_TRANS_B);
	}
	tile_copy(&C[by * 64][bx * 64], acc);
}
PROG
	translate "$work/staged.c" -t cuda --explain
	has "staged.c:19:24: note: this tile_parallel loop stores 'As' in runs of 4 elements a thread"
	hasnt "As_stage"
	# Loops that take no run because of their bodies say so: more than
	# one statement, an assignment under an if (a run-time extent), a
	# read behind && that a run would read too much of.
	cat >"$work/bodies.c" <<'PROG'
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, const f16 X[M][N], const bf16 Z[M][N], f16 Y[M][N], bool B[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, 64));
	int bm = tile_grid_y(ceildiv(M, 32));
	tile_shared f16 xs[32][64];
	tile_shared bf16 zs[32][64];
	tile_shared f16 ys[32][64];
	tile_shared bool bs[32][64];
	tile_copy(xs, &X[bm * 32][bn * 64]);
	tile_copy(zs, &Z[bm * 32][bn * 64]);
	tile_parallel(i, 32) tile_parallel(j, 64) {
		float t = xs[i][j];
		ys[i][j] = t * 3.0f;
	}
	tile_parallel(i, 32) tile_parallel(j, min(64, N - bn * 64))
		ys[i][j] = (float)xs[i][j] + (float)ys[i][j];
	tile_parallel(i, 32) tile_parallel(j, 64)
		bs[i][j] = xs[i][j] > 0.0f && zs[i][j] < 0.5f;
	tile_copy(&Y[bm * 32][bn * 64], ys);
	tile_copy(&B[bm * 32][bn * 64], bs);
}
PROG
	translate "$work/bodies.c" -t cuda --explain
	has "bodies.c:15:23: note: this tile_parallel loop stores 'ys' one element a thread at a time: its body is more than one assignment"
	has "bodies.c:19:23: note: this tile_parallel loop stores 'ys' one element a thread at a time: its assignment is under an if \(a run-time extent is one\)"
	has "bodies.c:21:23: note: this tile_parallel loop stores 'bs' one element a thread at a time: its value reads 'zs' along the row only where a condition holds, element by element: the shortest run, 4 elements, would read 8 bytes of it"
	# A read along the row only where a condition holds stays element
	# by element (it may lie outside its tile where the condition fails).
	translate --from-ir tests/ir/runs.ir -t cuda --passes=runs --explain --emit=ir
	has "^k.c:28:23: note: this tile_parallel loop stores 'a' one element a thread at a time: its value reads 'ys' along the row only where a condition holds, element by element: the shortest run, 2 elements, would read 8 bytes of it"
	;;
reasons)
	cat >"$work/k.c" <<'PROG'
#include <tilec.h>

TILE_KERNEL void
k(int M, const f16 A[M][64], const f16 B[64][64], f32 C[M][64], f32 R[M])
{
	int bm = tile_grid_x(ceildiv(M, 64));
	tile_fragment f16 a[64][64];
	tile_fragment f16 b[64][64];
	tile_fragment f32 c[64][64];
	tile_fragment f32 best[64];
	tile_fragment i32 at[64];
	tile_fragment f32 e[64][64];
	tile_copy(a, &A[bm * 64][0]);
	tile_copy(b, &B[0][0]);
	tile_clear(c);
	tile_gemm(c, a, b);
	tile_copy(&C[bm * 64][0], c);
	tile_copy(e, c);
	tile_reduce_argmax(best, at, e, 1);
	float first = best[0];
	tile_fill(best, first);
	tile_copy(&R[bm * 64], best);
}
PROG
	translate "$work/k.c" -t cuda
	has "k.c:8:20: note: tile_fragment 'b' is in shared memory, not registers: it is the B operand of the tile_gemm at 16:2, read from shared memory"
	has "k.c:12:20: note: tile_fragment 'e' is in shared memory, not registers: it is an operand of the tile_reduce_argmax at 19:2"
	has "k.c:10:20: note: tile_fragment 'best' is in shared memory, not registers: "
	hasnt "tile_fragment 'c' is in shared memory"
	hasnt "tile_fragment 'a' is in shared memory"
	sed -i 's/tile_reduce_argmax(best, at, e, 1);/tile_reduce_max(best, e, 1);/; s/	tile_fragment i32 at\[64\];//' "$work/k.c"
	translate "$work/k.c" -t cuda
	has "k.c:10:20: note: tile_fragment 'best' is in shared memory, not registers: an element of it is read or written outside tile_parallel at 20:16"
	# 96 threads make no grid of rows and columns over 32 x 64: shared
	# memory, with a note (a 1 x 64 grid left 32 threads reading rows
	# past the tile).
	translate tests/gpu_regress/anchored_inner_loop.c -t cuda -D THREADS=96
	has "anchored_inner_loop.c:29:20: note: tile_fragment 'x' is in shared memory, not registers: no grid of rows and columns of the block's 96 threads divides its dims"
	# A in registers takes the accumulator's rows over every warp: 32
	# rows on 4 warps cannot, so A goes to shared memory and the
	# accumulator stays in registers, on a grid of its own (1 x 4).
	cat >"$work/rega.c" <<'PROG'
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, int K, const f16 A[M][K], const f16 B[K][N], f32 Y[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, 64));
	int bm = tile_grid_y(ceildiv(M, 32));
	tile_fragment f16 a[32][32];
	tile_shared f16 b[32][64];
	tile_fragment f32 acc[32][64];
	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, 32); k++) {
		tile_copy(a, &A[bm * 32][k * 32]);
		tile_copy(b, &B[k * 32][bn * 64]);
		tile_gemm(acc, a, b);
	}
	tile_copy(&Y[bm * 32][bn * 64], acc);
}
PROG
	translate "$work/rega.c" -t cuda --explain
	has "rega.c:9:20: note: tile_fragment 'a' is in shared memory, not registers: it is the A operand of the tile_gemm at 16:3, which in registers takes the accumulator's rows over every one of the block's 4 warps, 8 rows each, not a multiple of 16"
	has "rega.c:11:20: note: tile_fragment 'acc' in registers: the mma.sync m16n8 accumulator layout over 1x4 warps"
	;;
computed)
	for src in samples/gemm_w4a16.c samples/gemm_w4a16_splitk.c; do
		for arch in sm_80 sm_90a; do
			translate $src -t cuda --arch $arch
			hasnt "reads it back"
			grep -q "tilec::mma_sr<" "$work/out" || fail "no mma_sr in $src for $arch"
			grep -q "tilec::mma_ss<" "$work/out" && fail "mma_ss in $src for $arch"
		done
		translate $src -t hip
		hasnt "note:"
		grep -q "tilec::mma_sr<" "$work/out" && fail "mma_sr in $src for hip"
	done
	translate samples/gemm_w4a16_splitk.c -t cuda --explain
	has "gemm_w4a16_splitk.c:47:18: note: tile_shared 'Ws' not held: the gemm that reads it computes each element as it loads it, by the loop that wrote it"
	translate samples/gemm_w4a16_splitk.c -t cuda -D BLOCK_M=64
	has "gemm_w4a16_splitk.c:66:3: note: the element loop at 64:3 stores 'Ws' in shared memory, and this tile_gemm reads it back rather than computing it as it loads it: the gemm's 2 warps along M would each compute the same elements"
	grep -q "tilec::mma_ss<" "$work/out" || fail "no mma_ss with two warps along M"
	# Its i4 zero points: the dequantization in half pairs, inside the
	# gemm and in runs into shared rows alike (--no-half-pairs: f32);
	# f16 ones keep f32.
	grep -q "tilec::int_pairs(" "$work/out" || fail "no int_pairs in the runs"
	translate samples/gemm_w4a16_splitk.c -t cuda -D BLOCK_M=64 --no-half-pairs
	grep -q "tilec::int_pairs(" "$work/out" && fail "int_pairs with --no-half-pairs"
	translate samples/gemm_w4a16_splitk.c -t cuda --explain
	has "gemm_w4a16_splitk.c:64:29: note: this tile_parallel loop converts its integers two at a time in f16 arithmetic, exactly as in f32"
	grep -q "tilec::int_pairs(" "$work/out" || fail "no int_pairs in the gemm"
	# With --copy-plans, every copy of its loop set up once (G2S plans:
	# the i4 weights, the one-row scales and zero points at (k0 + s) *
	# BLOCK_K / GROUP); without, none.
	grep -q "tilec::G2S<" "$work/out" && fail "copy plans by default"
	translate samples/gemm_w4a16_splitk.c -t cuda --explain --copy-plans
	hasnt "every iteration, not once"
	for v in As Ws4 scale zero; do
		grep -q "tilec::G2S<.*> ${v}_copy(" "$work/out" || fail "no plan for $v"
	done
	translate samples/gemm_w4a16_splitk.c -t cuda --explain --no-half-pairs
	hasnt "two at a time"
	grep -q "tilec::int_pairs(" "$work/out" && fail "int_pairs in the gemm with --no-half-pairs"
	translate samples/gemm_w4a16.c -t cuda --explain --copy-plans
	has "gemm_w4a16.c:53:3: note: this tile_copy's threads compute their addresses and box tests every iteration, not once before the tile_pipelined loop at 50:2: the origin of the copy into 'scale' at 53:3 is not a fixed start plus a fixed step per iteration of a loop from 0 by 1"
	has "gemm_w4a16.c:55:29: note: this tile_parallel loop converts its integers one at a time in f32, not two at a time in f16 arithmetic: it adds 'zero' \(f16\), not an 8- or 4-bit integer"
	grep -q "tilec::int_pairs(" "$work/out" && fail "int_pairs with f16 zero points"
	translate samples/gemm_w4a16_splitk.c -t hip
	grep -q "tilec::int_pairs(" "$work/out" && fail "int_pairs on hip"
	;;
int8)
	src=tests/lang/gemm_i8_nt.c
	for t in "cuda --arch sm_80" "cuda --arch sm_90a" "hip --arch gfx90a" "hip --arch gfx942"; do
		# shellcheck disable=SC2086
		translate $src -t $t
		hasnt "note:"
		grep -qE "tilec::(mma|mfma|wgmma)_ss<" "$work/out" || fail "no matrix gemm for $t"
	done
	translate $src -t cuda -D BLOCK_K=16
	has "gemm_i8_nt.c:[0-9]+:20: note: tile_fragment 'acc' is in shared memory, not registers: it is the accumulator of the tile_gemm at [0-9]+:3 \(i32 \+= i8 x i8, 64x64, K 16\), which has no matrix instruction here \(those take f16 or bf16 operands into an f32 accumulator with K a multiple of 16, i8 operands into an i32 accumulator with K a multiple of 32, or fp8e4m3 or fp8e5m2 operands into an f32 accumulator with K a multiple of 32; M a multiple of 16, N of 8\), so it runs element by element from shared memory"
	translate $src -t hip --arch gfx942 -D BLOCK_K=16
	has "note: tile_fragment 'acc' is in shared memory, not registers: .*i8 operands into an i32 accumulator with K a multiple of 32"
	translate $src -t hip --arch gfx90a -D BLOCK_K=16
	hasnt "note:"
	sed 's/tile_fragment i32 acc/tile_fragment f32 acc/; s/i32 C\[M\]\[N\]/f32 C[M][N]/' $src >"$work/f32acc.c"
	translate "$work/f32acc.c" -t cuda
	has "note: tile_fragment 'acc' is in shared memory, not registers: it is the accumulator of the tile_gemm at [0-9]+:3 \(f32 \+= i8 x i8, 64x64, K 64\), which has no matrix instruction here"
	cat >"$work/areg.c" <<'PROG'
#include <tilec.h>

TILE_KERNEL void
k(int M, const i8 A[M][64], const i8 B[64][64], i32 C[M][64])
{
	int bm = tile_grid_x(ceildiv(M, 64));
	tile_fragment i8 a[64][64];
	tile_shared i8 b[64][64];
	tile_fragment i32 c[64][64];
	tile_copy(a, &A[bm * 64][0]);
	tile_copy(b, &B[0][0]);
	tile_clear(c);
	tile_gemm(c, a, b, TILE_TRANS_B);
	tile_copy(&C[bm * 64][0], c);
}
PROG
	translate "$work/areg.c" -t cuda
	has "areg.c:7:19: note: tile_fragment 'a' is in shared memory, not registers: it is the A operand of the tile_gemm at 13:2, whose mma.sync.aligned.m16n8k32.s32.s8.s8.s32 reads A from shared memory"
	hasnt "tile_fragment 'c' is in shared memory"
	translate tests/lang/gemm_fp8_nt.c -t cuda
	hasnt "note:"
	translate tests/lang/gemm_fp8_nt.c -t hip
	hasnt "note:"
	translate "$work/areg.c" -t hip
	has "areg.c:7:19: note: tile_fragment 'a' is in shared memory, not registers: it is the A operand of the tile_gemm at 13:2, whose v_mfma_i32_16x16x16i8 reads A from shared memory"
	;;
pipeline)
	cat >"$work/pipe.c" <<'EOF'
#include <tilec.h>
TILE_KERNEL void
pipe(int M, int N, const f16 X[M][N], const i32 T[M], f32 Y[M])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(M, 16));
	tile_fragment f32 x[16][64], y[16][64], z[16][64];
	tile_fragment f32 acc[16];
	tile_clear(acc);
	int col = 0;
	tile_pipelined(k, ceildiv(N, 64), 2) {
		tile_copy(x, &X[b * 16][col]);
		col += 64;
		tile_reduce_sum(acc, x, 1, TILE_ACCUMULATE);
	}
	tile_pipelined(k, ceildiv(N, 64), 2) {
		tile_reduce_sum(acc, x, 1, TILE_ACCUMULATE);
		tile_copy(y, &X[b * 16][k * 64]);
		tile_reduce_sum(acc, y, 1, TILE_ACCUMULATE);
	}
	tile_pipelined(k, ceildiv(N, 64), 2) {
		int c0 = k * 64;
		int r0 = T[b] * 16;
		tile_copy(z, &X[r0][c0]);
		tile_reduce_sum(acc, z, 1, TILE_ACCUMULATE);
	}
	tile_copy(&Y[b * 16], acc);
}
EOF
	for t in "cuda --arch sm_90a" "hip"; do
		# shellcheck disable=SC2086
		translate "$work/pipe.c" -t $t
		has "pipe.c:12:3: note: this copy of the tile_pipelined loop at 11:2 waits for memory in its own iteration, not issued ahead: its origin reads 'col', which the loop may change"
		has "pipe.c:18:3: note: this copy of the tile_pipelined loop at 16:2 waits for memory in its own iteration, not issued ahead: only the copies that open the loop's body are issued early, and the statement at 17:3 comes before it"
		hasnt "pipe.c:2[0-9]:"
		[ "$(grep -c ': note: ' "$work/err")" = 2 ] || { cat "$work/err"; fail "two notes expected"; }
	done
	# The third loop's copy joins: its origin's locals are computed
	# early, the page index read from T for the next iteration.
	translate "$work/pipe.c" -t cuda --arch sm_90a --emit=ir
	grep -qE "copy z_next <- X\[T\[b\] \* 16, \(k \+ 1\) \* 64\]" "$work/out" ||
		{ grep -n "z_next\|copy z" "$work/out"; fail "z not prefetched"; }
	translate "$work/pipe.c" -t openmp
	hasnt "note:"
	;;
mbarrier)
	# Two gemms sharing A (a gated unit), and one gemm whose A tile is
	# fewer 16-byte vectors than the block has threads: on sm_90a with 3
	# stages both would have had TMA copies issued from the gemm; each
	# says why not.  With 2 stages, --no-tma or on sm_80 nothing is lost
	# (no note on the loop); the plain gemm takes the mbarrier loop (no
	# note).  A store of an accumulator that is not by TMA says why.
	cat >"$work/mb.c" <<'EOF'
#include <tilec.h>
TILE_KERNEL void
gated(int M, int N, int K, const f16 X[M][K], const f16 G[N][K],
      const f16 U[N][K], f32 H[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, 64));
	int bm = tile_grid_y(ceildiv(M, 64));
	tile_shared f16 xs[64][32], gs[64][32], us[64][32];
	tile_fragment f32 g[64][64], u[64][64];
	tile_clear(g);
	tile_clear(u);
	tile_pipelined(k, ceildiv(K, 32), 3) {
		tile_copy(xs, &X[bm * 64][k * 32]);
		tile_copy(gs, &G[bn * 64][k * 32]);
		tile_copy(us, &U[bn * 64][k * 32]);
		tile_gemm(g, xs, gs, TILE_TRANS_B);
		tile_gemm(u, xs, us, TILE_TRANS_B);
	}
	tile_parallel(i, 64)
		tile_parallel(j, 64)
			g[i][j] = g[i][j] * u[i][j];
	tile_copy(&H[bm * 64][bn * 64], g);
}

TILE_KERNEL void
narrow(int M, int N, int K, const f16 A[M][K], const f16 B[K][N], f32 C[M][N])
{
	tile_threads(256);
	int bn = tile_grid_x(ceildiv(N, 128));
	int bm = tile_grid_y(ceildiv(M, 64));
	tile_shared f16 as[64][16], bs[16][128];
	tile_fragment f32 acc[64][128];
	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, 16), 3) {
		tile_copy(as, &A[bm * 64][k * 16]);
		tile_copy(bs, &B[k * 16][bn * 128]);
		tile_gemm(acc, as, bs);
	}
	tile_copy(&C[bm * 64][bn * 128], acc);
}

TILE_KERNEL void
plain(int M, int N, int K, const f16 A[M][K], const f16 B[K][N], f32 C[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, 128));
	int bm = tile_grid_y(ceildiv(M, 64));
	tile_shared f16 as[64][32], bs[32][128];
	tile_fragment f32 acc[64][128];
	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, 32), 3) {
		tile_copy(as, &A[bm * 64][k * 32]);
		tile_copy(bs, &B[k * 32][bn * 128]);
		tile_gemm(acc, as, bs);
	}
	tile_copy(&C[bm * 64][bn * 128], acc);
}
EOF
	translate "$work/mb.c" -t cuda --arch sm_90a
	has "mb.c:17:3: note: the tile_pipelined loop at 13:2 keeps cp.async copies and block barriers, not copies issued from this gemm on stage barriers \(nor TMA\): the loop's body holds another gemm"
	has "mb.c:38:3: note: the tile_pipelined loop at 35:2 keeps cp.async copies and block barriers, not copies issued from this gemm on stage barriers \(nor TMA\): the copy into 'as' at 36:3 is not whole 16-byte vectors spread evenly over the block's 256 threads"
	# The second kernel's store of its accumulator, not by TMA either.
	has "mb.c:40:2: note: this tile_copy into 'C' stores from registers, not by TMA"
	[ "$(grep -c ': note: ' "$work/err")" = 3 ] || { cat "$work/err"; fail "three notes expected"; }
	translate "$work/mb.c" -t cuda --arch sm_90a --kernel plain --emit=ir
	grep -q "tma" "$work/out" || fail "plain: no TMA copies"
	sed 's/, 3) {/, 2) {/' "$work/mb.c" >"$work/mb2.c"
	for args in "$work/mb2.c --arch sm_90a" "$work/mb.c --arch sm_90a --no-tma" "$work/mb.c --arch sm_80"; do
		# shellcheck disable=SC2086
		translate $args -t cuda
		# (Their stores may still say why they are not by TMA.)
		hasnt "note: the tile_pipelined loop"
	done
	;;
*)
	echo "explain.sh: unknown case $case" >&2
	exit 2
	;;
esac
echo PASS
