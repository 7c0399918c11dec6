/* The ragged forms the realistic programs do not use: a 1-D gather of
 * scalars; a gather along a middle dim (tile_dims picks dims 1 and 3 of
 * a rank-4 tensor); both dims bounded, at run time; bf16 and i8 tensors
 * (the i8 copied exactly, a row mask of u8); the index in a fragment.
 * Ids run past both ends of their dims.
 * shape: N=70,S=40,D=24,r=13,c=9
 * shape: N=3,S=5,D=3,r=0,c=2
 * run: --range ids=-3:S+2,Q=-128:127,keep=0:1
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 16);
TILE_PARAM(HD, 32);

TILE_KERNEL void
ragged_forms(int N, int S, int D, int r, int c, const i32 ids[N],
	     const f32 V[S], const bf16 K[2][S][3][D], const i8 Q[N][D],
	     const u8 keep[N], f32 G[N], f32 KG[N][D], i8 QB[N][D],
	     i32 QM[N][D])
{
	tile_threads(64);
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_fragment i32 idx[BLOCK];
	tile_shared u8 m[BLOCK];
	tile_fragment f32 g[BLOCK];
	tile_shared f32 kg[BLOCK][HD];
	tile_fragment i8 q[BLOCK][HD];
	tile_fragment i32 qm[BLOCK][HD];
	tile_copy(idx, &ids[b * BLOCK]);
	tile_copy(g, tile_rows(&V[0], idx));
	tile_copy(&G[b * BLOCK], g);
	tile_copy(kg, tile_rows(tile_dims(&K[1][0][2][0], 1, 3), idx));
	tile_copy(&KG[b * BLOCK][0], kg);
	tile_copy(q, &Q[b * BLOCK][0]);
	tile_copy(tile_bounded(&QB[b * BLOCK][0], r - b * BLOCK, c), q);
	tile_copy(m, &keep[b * BLOCK]);
	tile_copy(qm, tile_masked(&Q[b * BLOCK][0], m));
	tile_copy(&QM[b * BLOCK][0], qm);
}
