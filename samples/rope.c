/*
 * rope.c - rotary position embedding (NeoX style, rotating halves), as
 * applied to queries and keys before attention:
 *
 *     p = P[t]                                 (token t's position)
 *     c = CS[p][j], s = CS[p][HALF + j]        (j < HALF = HEAD_DIM / 2)
 *     Y[t][h][j]        = X[t][h][j] * c - X[t][h][HEAD_DIM / 2 + j] * s
 *     Y[t][h][HEAD_DIM / 2 + j] = X[t][h][HEAD_DIM / 2 + j] * c + X[t][h][j] * s
 *
 * X and Y are [T][H][HEAD_DIM] fp16 (tokens, heads, head dim); CS is the
 * fp32 cos/sin cache, one row per position (cos in the first half, sin in
 * the second), as inference servers keep it; P holds each token's
 * position, which must index a row of CS.  Every head of a token rotates
 * by the same cos/sin row, so a block owns BLOCK_H heads of BLOCK_T
 * tokens and walks its tokens in order: for each, the token's cos and sin
 * halves are copied from the cache row its position names (once for all
 * BLOCK_H heads) and the heads' two halves of the vector as two tiles, so
 * every element-wise step pairs elements of the same thread.  The walk is
 * tile_pipelined: the next token's copies (its position read early from P)
 * are in flight while this token's heads rotate.
 */
#include <tilec.h>

TILE_PARAM(HEAD_DIM, 128);
TILE_PARAM(BLOCK_T, 16, 4, 8, 16, 32);
TILE_PARAM(BLOCK_H, 16, 8, 16, 32, 64);
TILE_PARAM(THREADS, 128, 64, 128, 256);

TILE_KERNEL void
rope(int T, int H, int MAXPOS, const f16 X[T][H][HEAD_DIM], const i32 P[T],
     const f32 CS[MAXPOS][HEAD_DIM], f16 Y[T][H][HEAD_DIM])
{
	tile_threads(THREADS);
	int bt = tile_grid_x(ceildiv(T, BLOCK_T));
	int bh = tile_grid_y(ceildiv(H, BLOCK_H));
	int t0 = bt * BLOCK_T;
	int h0 = bh * BLOCK_H;

	tile_fragment f32 x1[BLOCK_H][HEAD_DIM / 2], x2[BLOCK_H][HEAD_DIM / 2];
	tile_fragment f32 y1[BLOCK_H][HEAD_DIM / 2], y2[BLOCK_H][HEAD_DIM / 2];
	tile_fragment f32 c[HEAD_DIM / 2], s[HEAD_DIM / 2];

	tile_pipelined(i, min(BLOCK_T, T - t0), 2) {
		tile_copy(c, &CS[P[t0 + i]][0]);
		tile_copy(s, &CS[P[t0 + i]][HEAD_DIM / 2]);
		tile_copy(x1, tile_dims(&X[t0 + i][h0][0], 1, 2));
		tile_copy(x2, tile_dims(&X[t0 + i][h0][HEAD_DIM / 2], 1, 2));
		tile_parallel(h, BLOCK_H) tile_parallel(j, HEAD_DIM / 2) {
			y1[h][j] = x1[h][j] * c[j] - x2[h][j] * s[j];
			y2[h][j] = x2[h][j] * c[j] + x1[h][j] * s[j];
		}
		tile_copy(tile_dims(&Y[t0 + i][h0][0], 1, 2), y1);
		tile_copy(tile_dims(&Y[t0 + i][h0][HEAD_DIM / 2], 1, 2), y2);
	}
}
