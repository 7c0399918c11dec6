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
 * position, which must index a row of CS.  Each block owns BLOCK_T tokens
 * of one head and holds the two halves of their vectors as two tiles, so
 * every element-wise step pairs elements of the same thread.  The cache
 * rows are gathered through P element by element (a gather copy would
 * load them as whole rows); tokens past T are skipped.
 */
#include <tilec.h>

TILE_PARAM(HEAD_DIM, 128);
TILE_PARAM(BLOCK_T, 16, 4, 8, 16, 32);
TILE_PARAM(THREADS, 128, 64, 128, 256);

TILE_KERNEL void
rope(int T, int H, int MAXPOS, const f16 X[T][H][HEAD_DIM], const i32 P[T],
     const f32 CS[MAXPOS][HEAD_DIM], f16 Y[T][H][HEAD_DIM])
{
	tile_threads(THREADS);
	int bt = tile_grid_x(ceildiv(T, BLOCK_T));
	int h = tile_grid_y(H);
	int t0 = bt * BLOCK_T;

	tile_fragment f32 x1[BLOCK_T][HEAD_DIM / 2], x2[BLOCK_T][HEAD_DIM / 2];
	tile_fragment f32 y1[BLOCK_T][HEAD_DIM / 2], y2[BLOCK_T][HEAD_DIM / 2];
	tile_fragment i32 pos[BLOCK_T];

	tile_copy(x1, tile_dims(&X[t0][h][0], 0, 2));
	tile_copy(x2, tile_dims(&X[t0][h][HEAD_DIM / 2], 0, 2));
	tile_copy(pos, &P[t0]);
	tile_parallel(i, BLOCK_T) tile_parallel(j, HEAD_DIM / 2) {
		float c = 1.0f, s = 0.0f;
		if (t0 + i < T) {
			c = CS[pos[i]][j];
			s = CS[pos[i]][HEAD_DIM / 2 + j];
		}
		y1[i][j] = x1[i][j] * c - x2[i][j] * s;
		y2[i][j] = x2[i][j] * c + x1[i][j] * s;
	}
	tile_copy(tile_dims(&Y[t0][h][0], 0, 2), y1);
	tile_copy(tile_dims(&Y[t0][h][HEAD_DIM / 2], 0, 2), y2);
}
