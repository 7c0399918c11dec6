/* f32 values as C11 has them (FLT_EVAL_METHOD 0): every f32 result is
 * rounded to float where C rounds it.  The reference interpreter once
 * kept f32 values in double and failed correct kernels wherever that
 * rounding decides the result.  Every output is an integer, compared
 * exactly.  Run by tests/meson.build (run-f32-*).
 */
#include <tilec.h>

/* An int8 quantizer at its ties: with a = 1 + 1/1024 and s = a / 127,
 * a * 0.5f / s is 63.4999962f in f32 (sat_i8 gives 63) but 63.5 in
 * double (64); so for every odd i. */
TILE_KERNEL void
f32_quant_tie(int N, i8 Q[N])
{
	tile_threads(32);
	tile_parallel(i, 16) {
		if (i < N) {
			float a = 1.0f + (float)i / 1024.0f;
			float s = a / 127.0f;
			Q[i] = sat_i8(a * 0.5f / s);
		}
	}
}

/* Conversions into f32: a double cast to float and one held by a float
 * local (3 - 1e-9 is 3.0f); an f32 product past 2^32 (-1.5f * 3e9f is
 * -4499999744 in f32, -4.5e9 in double); an i64 past 2^53 converted once
 * (2^60 + 2^36 + 1 is 2^60 + 2^37 as a float, but 2^60 through double,
 * which rounds it to the tie 2^60 + 2^36 first); an int compared with a
 * float, converted to float first (2^24 + 1 is 2^24 there). */
TILE_KERNEL void
f32_convert(int N, i32 Y[N], i32 Z[N], i64 P[N], i64 B[N], i32 E[N])
{
	tile_threads(32);
	tile_parallel(i, 4) {
		float v = 3.0 - 1e-9 * (i + 1);
		float f = -1.5f - 0.25f * i;
		long long b = ((i64)1 << 60) + ((i64)1 << 36) + 1 + i;
		int n = (1 << 24) + 1 + 2 * i;
		float g = (float)((1 << 24) + 2 * i);
		if (i < N) {
			Y[i] = (int)(float)(3.0 - 1e-9 * (i + 1));
			Z[i] = (int)v;
			P[i] = (i64)(f * 3e9f);
			B[i] = (i64)(float)b;
			E[i] = n == g;
		}
	}
}

/* An f32 result stored into f16 rounds twice, as in C: x * x with
 * x = 1 + 2^-12 is 1 + 2^-11 in f32 (a tie, to even), which is a tie
 * again in f16, to 1; the exact product rounds to 1 + 2^-10. */
TILE_KERNEL void
f32_to_f16(int N, i32 Y[N])
{
	tile_threads(32);
	tile_parallel(i, 4) {
		float x = 1.0f + 0x1p-12f;
		f16 h = x * x;
		if (i < N)
			Y[i] = (int)((h - 1.0f) * 4096.0f);
	}
}
