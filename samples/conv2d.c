/*
 * conv2d.c - a 2-D convolution as an implicit GEMM, NHWC, stride 1:
 *
 *     Y[n][p][q][o] = sum_{r,s,c} X[n][p + r - PAD][q + s - PAD][c] * F[o][r][s][c]
 *
 * X is [N][H][W][C] and Y [N][P][Q][KO] with P = H + 2 PAD - R + 1 and
 * Q = W + 2 PAD - S + 1; the filters F are [KO][R][S][C] (R x S taps);
 * fp16 in and out, fp32 accumulation.  As a GEMM the rows are output
 * pixels, the columns output channels and the reduction runs over
 * (r, s, c).  Each block owns BLOCK_M pixels of one output row (n, p)
 * and BLOCK_N channels; a step of the reduction is one tap (r, s) and
 * BLOCK_K input channels, whose operand is the BLOCK_M x BLOCK_K box of X
 * at row p + r - PAD, from column q0 + s - PAD: the im2col matrix is never
 * built.  Padding is the copies' bounds: a box that starts left of the
 * image or on a row above or below it reads zeros there.
 */
#include <tilec.h>

TILE_PARAM(R, 3);
TILE_PARAM(S, 3);
TILE_PARAM(BLOCK_M, 64, 64, 128);
TILE_PARAM(BLOCK_N, 128, 64, 128);
TILE_PARAM(BLOCK_K, 32, 32, 64);
TILE_PARAM(STAGES, 3, 2, 3, 4);
TILE_PARAM(THREADS, 128, 128, 256);

TILE_KERNEL void
conv2d(int N, int H, int W, int C, int KO, int PAD, int P, int Q,
       const f16 X[N][H][W][C], const f16 F[KO][R][S][C],
       f16 Y[N][P][Q][KO])
{
	tile_threads(THREADS);
	int bo = tile_grid_x(ceildiv(KO, BLOCK_N));
	int bq = tile_grid_y(ceildiv(Q, BLOCK_M));
	int np = tile_grid_z(N * P);
	int n = np / P;
	int p = np % P;
	int q0 = bq * BLOCK_M;
	int cb = ceildiv(C, BLOCK_K);

	tile_shared f16 Xs[BLOCK_M][BLOCK_K];
	tile_shared f16 Fs[BLOCK_N][BLOCK_K];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(t, R * S * cb, STAGES) {
		int r = t / (S * cb);
		int s = t / cb % S;
		int c0 = t % cb * BLOCK_K;
		tile_copy(Xs, tile_dims(&X[n][p + r - PAD][q0 + s - PAD][c0], 2, 3));
		tile_copy(Fs, tile_dims(&F[bo * BLOCK_N][r][s][c0], 0, 3));
		tile_gemm(acc, Xs, Fs, TILE_TRANS_B);
	}
	tile_copy(tile_dims(&Y[n][p][q0][bo * BLOCK_N], 2, 3), acc);
}
