/* C integer semantics in element-wise code: / and % of negative values
 * (truncation, the dividend's sign), >> of negative values (arithmetic),
 * conversions that wrap (to u8, i8, i4), u8 and i8 promoted to int
 * before arithmetic and comparisons (200 as u8 > -1 as i8), ~ of a u8,
 * i64 arithmetic from i32 operands, compound assignments to narrow
 * locals that wrap.  Every output is an integer and compares exactly.
 * shape: N=300
 * shape: N=3
 * run: --range A=-100000:100000,B=-50:50,U=0:255,I=-128:127,L=-4000000000000:4000000000000,S=0:30
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 64);

TILE_KERNEL void
int_semantics(int N, const i32 A[N], const i32 B[N], const u8 U[N],
	      const i8 I[N], const i64 L[N], const i32 S[N], i32 R[N][8],
	      i64 W[N][4], u8 Y[N][4], i8 Z[N][4], i4 F[N][2])
{
	tile_threads(64);
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_parallel(i, BLOCK) {
		int n = b * BLOCK + i;
		if (n < N) {
			int a = A[n];
			int d = B[n] == 0 ? -7 : B[n];
			int s = S[n];
			u8 u = U[n];
			i8 c = I[n];
			i64 l = L[n];
			R[n][0] = a / d;
			R[n][1] = a % d;
			R[n][2] = a >> s;
			R[n][3] = (u > c) + 2 * (u == c) + 4 * (c < 0) + 8 * (u - 200 < 0);
			R[n][4] = ~u;
			R[n][5] = c * u;
			R[n][6] = (a & 0x7fff) << (s % 16);
			R[n][7] = -a % 7 + (a ^ d) + (a | d) - (a & ~d);
			W[n][0] = (i64)a * 30000 * d;
			W[n][1] = l / d + l % d;
			W[n][2] = l >> (s + 3);
			W[n][3] = (l ^ (l >> 17)) % 1000003LL;
			u8 w = u;
			w += 250;
			w = w * 3;
			Y[n][0] = w;
			Y[n][1] = a;
			Y[n][2] = c;
			Y[n][3] = u >> (s % 8);
			i8 z = c;
			z -= 100;
			Z[n][0] = z;
			Z[n][1] = a * 7;
			Z[n][2] = (i8)(c * c);
			Z[n][3] = (u8)c / 3;
			F[n][0] = a;
			F[n][1] = c >> 3;
		}
	}
}
