/* min and max of a comparison.  C++ makes `b >= 1` a bool where the
 * language (and C) make it an int; hipcc's min(int, bool) is its mixed
 * math overload, a double, so `min(x, b >= 1) & 3` did not compile (gen
 * seed 5008, `min(t3 % 4, b1 >= 7) & (x0 / 7)`), nor did max(x, p[i]) of
 * a bool element p[i] (seed 5034).  The GPU output passes a comparison,
 * &&, || or ! or a bool to a function as an int (emitters/cfamily.c,
 * bool_truth; tests/gen/FINDINGS.md, bug 21).
 * shape: N=300
 * expect-hip: min\(x\[i_r\], \(int\)\(b >= 1\)\) & 3
 * expect-cuda: max\(\(int\)\(x\[i_r\] < 3\),
 * expect-hip: max\(-x\[i_r\], \(int\)p\[i\]\)
 */
#include <tilec.h>

TILE_KERNEL void
min_of_compare(int N, const i32 X[N], i32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment i32 x[128];
	tile_shared bool p[128];
	tile_copy(x, &X[b * 128]);
	tile_parallel(i, 128) {
		p[i] = x[i] > 5;
	}
	tile_parallel(i, 128) {
		x[i] = (min(x[i], b >= 1) & 3) + (max(x[i] < 3, i > 60) ^ !x[i]) * 4 +
		       (max(-x[i], p[i]) | 8) * 16;
	}
	tile_copy(&Y[b * 128], x);
}
