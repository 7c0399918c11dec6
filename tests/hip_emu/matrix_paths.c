/*
 * matrix_paths.c - the MFMA paths of the HIP backend that the samples do
 * not reach, for hip_emu_run.py: bf16 operands with A stored transposed,
 * f32 operands with B stored transposed, and a split-K sum added
 * atomically into an f16 tensor (a compare-and-swap on the 32-bit word),
 * and fp8 operands (converted to f16 for the f16 instruction) read along
 * columns: e5m2 with A stored transposed and B not.
 * Not a sample: a test program whose kernels each exercise one path.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 32);

/* C = A^T B with A stored K x M, bf16 operands, f32 result. */
TILE_KERNEL void
gemm_bf16_at(int M, int N, int K, const bf16 A[K][M], const bf16 B[K][N],
	     f32 C[M][N])
{
	tile_threads(256);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared bf16 As[BLOCK_K][BLOCK_M];
	tile_shared bf16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[k * BLOCK_K][by * BLOCK_M]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs, TILE_TRANS_A);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}

/* C = A B^T with B stored N x K, f32 operands. */
TILE_KERNEL void
gemm_f32_bt(int M, int N, int K, const f32 A[M][K], const f32 B[N][K],
	    f32 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared f32 As[BLOCK_M][BLOCK_K];
	tile_shared f32 Bs[BLOCK_N][BLOCK_K];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[bx * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, As, Bs, TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}

/* C += A B over one of SPLIT slices of K, added atomically into f16. */
TILE_KERNEL void
gemm_splitk_f16(int M, int N, int K, const f16 A[M][K], const f16 B[K][N],
		f16 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	int split = tile_grid_z(2);

	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared f16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	int k_tiles = ceildiv(K, BLOCK_K);
	int half = ceildiv(k_tiles, 2);
	tile_clear(acc);
	for (int k = split * half; k < min(k_tiles, (split + 1) * half); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_atomic_add(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}

/* C = A^T B with A stored K x M, e5m2 operands: both read by column. */
TILE_KERNEL void
gemm_e5m2_at(int M, int N, int K, const fp8e5m2 A[K][M],
	     const fp8e5m2 B[K][N], f32 C[M][N])
{
	tile_threads(256);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared fp8e5m2 As[BLOCK_K][BLOCK_M];
	tile_shared fp8e5m2 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[k * BLOCK_K][by * BLOCK_M]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs, TILE_TRANS_A);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
