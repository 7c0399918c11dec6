/* A paged KV cache read through its block table: the scores of one
 * decode query against the keys of its sequence, for each head.  The
 * cache holds NPAGES pages of PAGE token slots (as [NPAGES * PAGE],
 * flattened); table[b][p] is the page of the sequence's p-th PAGE
 * tokens, lens[b] its length.  Each block gathers BLOCK_N keys with
 * tile_rows, bounded to the tokens the sequence has (tile_bounded, a
 * run-time extent); the dot products run over min(BLOCK_N, L - start)
 * rows (tile_parallel with a run-time extent); the bounded store leaves
 * the scores past the length untouched (they keep the poison).  Table
 * entries are -1 .. the last page: a -1 page's rows are outside the
 * cache and read as zeros.
 * shape: B=3,H=2,NPAGES=6,MAXP=9,S=130
 * shape: B=1,H=1,NPAGES=1,MAXP=2,S=20
 * run: --range table=-1:NPAGES-1,lens=0:S
 */
#include <tilec.h>

TILE_PARAM(PAGE, 16);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(HEAD_D, 64);

TILE_KERNEL void
paged_kv(int B, int H, int NPAGES, int MAXP, int S, const f16 Q[B][H][HEAD_D],
	 const f16 K[NPAGES * PAGE][H][HEAD_D], const i32 table[B][MAXP],
	 const i32 lens[B], f32 Sc[B][H][S])
{
	tile_threads(128);
	int n = tile_grid_x(ceildiv(S, BLOCK_N));
	int h = tile_grid_y(H);
	int b = tile_grid_z(B);
	tile_shared i32 pages[BLOCK_N / PAGE];
	tile_shared i32 len[1];
	tile_shared i32 slot[BLOCK_N];
	tile_shared f16 q[HEAD_D];
	tile_shared f16 k[BLOCK_N][HEAD_D];
	tile_fragment f32 s[BLOCK_N];
	tile_copy(pages, &table[b][n * (BLOCK_N / PAGE)]);
	tile_copy(len, &lens[b]);
	tile_copy(q, &Q[b][h][0]);
	int L = tile_max(len);
	int valid = L - n * BLOCK_N;
	tile_parallel(i, BLOCK_N)
		slot[i] = pages[i / PAGE] * PAGE + i % PAGE;
	tile_copy(k, tile_bounded(tile_rows(tile_dims(&K[0][h][0], 0, 2), slot),
				  valid));
	tile_parallel(i, min(BLOCK_N, valid)) {
		float acc = 0.0f;
		for (int d = 0; d < HEAD_D; d++)
			acc += (float)q[d] * (float)k[i][d];
		s[i] = acc * 0.125f;
	}
	tile_copy(tile_bounded(&Sc[b][h][n * BLOCK_N], valid), s);
}
