/* The generator's own model of the kernels' meaning (docs/ir.md),
 * serial, in double; tilec run --source checks the reference against it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long long min_ll(long long a, long long b) { return a < b ? a : b; }
static long long max_ll(long long a, long long b) { return a > b ? a : b; }
static long long ceildiv(long long a, long long b) { return (a + b - 1) / b; }
/* sat_i8 and its kin: the f32 value rounded to nearest even, clamped;
 * NaN gives 0. */
static long long SAT(double x, long long lo, long long hi)
{
	double r = nearbyint((double)(float)x);
	return x != x ? 0 : r <= (double)lo ? lo : r >= (double)hi ? hi : (long long)r;
}

/* Round v to the nearest value with `bits` significant bits, ties to
 * even; exponents below emin are subnormal (fixed spacing 2^(emin-bits)). */
static double round_bits(double v, int bits, int emin)
{
	if (v == 0 || !isfinite(v))
		return v;
	int e;
	frexp(v, &e);
	if (e < emin)
		e = emin;
	double s = ldexp(1.0, bits - e);
	return nearbyint(v * s) / s;
}
static double CV_f64(double v) { return v; }
/* f32 buffers and locals keep double precision (docs/run.md). */
static double CV_f32(double v) { return v; }
/* Past the largest finite value (after rounding), infinity. */
static double CV_f16(double v) { v = round_bits(v, 11, -13); return fabs(v) > 65504 ? copysign(INFINITY, v) : v; }
static double CV_bf16(double v) { v = round_bits(v, 8, -125); return fabs(v) > 0x1.fep127 ? copysign(INFINITY, v) : v; }
static double CV_i64(double v) { return (double)(int64_t)trunc(v); }
static double CV_i32(double v) { return (double)(int32_t)(uint32_t)(uint64_t)(int64_t)trunc(v); }
static double CV_i8(double v) { return (double)(int8_t)(uint8_t)(uint64_t)(int64_t)trunc(v); }
static double CV_u8(double v) { return (double)(uint8_t)(uint64_t)(int64_t)trunc(v); }
static double CV_bool(double v) { return v != 0; }
static long long CVI_i64(long long v) { return v; }
static long long CVI_i8(long long v) { return (int8_t)(uint8_t)(uint64_t)v; }
static long long CVI_u8(long long v) { return (uint8_t)(uint64_t)v; }
/* i4: the low 4 bits, sign-extended (as the other integers wrap). */
static long long CVI_i4(long long v) { return (long long)((v & 15) ^ 8) - 8; }
static double CV_i4(double v) { return (double)CVI_i4((long long)(uint64_t)(int64_t)trunc(v)); }
/* OCP E4M3: 3 fraction bits, the least normal 2^-6, 448 the greatest
 * finite value; no infinity: from 464 up (where rounding would pass 448)
 * NaN.  E5M2: 2 fraction bits, the least normal 2^-14, 57344 the
 * greatest; past it infinity (IEEE). */
static double CV_fp8e4m3(double v) { return fabs(v) >= 464 || v != v ? NAN : round_bits(v, 4, -5); }
static double CV_fp8e5m2(double v) { v = round_bits(v, 3, -13); return fabs(v) > 57344 ? copysign(INFINITY, v) : v; }

static double f16_to_double(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY)
				       : ldexp(m + 1024, e - 25);
	return h & 0x8000 ? -v : v;
}
static uint16_t double_to_f16(double v)
{
	uint16_t s = signbit(v) ? 0x8000 : 0;
	v = fabs(CV_f16(v));
	if (isnan(v)) return 0x7e00;
	if (v >= 65520.0) return s | 0x7c00;
	if (v < ldexp(1, -14)) return s | (uint16_t)(v * ldexp(1, 24));
	int e;
	double f = frexp(v, &e);            /* v = f * 2^e, f in [0.5, 1) */
	return s | (uint16_t)((e + 14) << 10) | ((uint16_t)(f * 2048) & 1023);
}
static double bf16_to_double(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static uint16_t double_to_bf16(double v)
{
	float f = (float)CV_bf16(v);
	uint32_t u;
	memcpy(&u, &f, 4);
	return (uint16_t)(u >> 16);
}
/* i4 tensors: element i in byte i / 2, the even one in the low nibble. */
static int i4_get(const uint8_t *p, long long i)
{
	int b = p[i >> 1];
	return (int)CVI_i4(i & 1 ? b >> 4 : b);
}
static void i4_set(uint8_t *p, long long i, long long v)
{
	int s = (int)(i & 1) * 4;
	p[i >> 1] = (uint8_t)((p[i >> 1] & ~(15 << s)) | (int)(v & 15) << s);
}
/* fp8 bytes: sign, exponent, fraction (bias 7 for E4M3, 15 for E5M2). */
static double fp8e4m3_to_double(uint8_t b)
{
	int e = (b >> 3) & 15, m = b & 7;
	double v = (b & 127) == 127 ? NAN : e == 0 ? ldexp(m, -9)
						  : ldexp(m + 8, e - 10);
	return b & 128 ? -v : v;
}
static double fp8e5m2_to_double(uint8_t b)
{
	int e = (b >> 2) & 31, m = b & 3;
	double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -16)
							 : ldexp(m + 4, e - 17);
	return b & 128 ? -v : v;
}
/* The byte of an already rounded value (by search: the codes are few). */
static uint8_t double_to_fp8(double v, double (*dec)(uint8_t), uint8_t nan)
{
	if (v != v)
		return nan;
	for (int b = 0; b < 256; b++)
		if (dec((uint8_t)b) == v && (v != 0 || !signbit(v) == !(b & 128)))
			return (uint8_t)b;
	return nan;
}
#define LD_f64(p, i) ((double)(p)[i])
#define LD_f32(p, i) ((double)(p)[i])
#define LD_f16(p, i) f16_to_double((p)[i])
#define LD_bf16(p, i) bf16_to_double((p)[i])
#define LD_i64(p, i) ((double)(p)[i])
#define LD_i32(p, i) ((double)(p)[i])
#define LD_i8(p, i) ((double)(p)[i])
#define LD_u8(p, i) ((double)(p)[i])
#define LD_bool(p, i) ((double)((p)[i] != 0))
#define LD_i4(p, i) ((double)i4_get((p), (i)))
#define LD_fp8e4m3(p, i) fp8e4m3_to_double((p)[i])
#define LD_fp8e5m2(p, i) fp8e5m2_to_double((p)[i])
#define ST_f64(p, i, v) ((p)[i] = (v))
#define ST_f32(p, i, v) ((p)[i] = (float)(v))
#define ST_f16(p, i, v) ((p)[i] = double_to_f16(v))
#define ST_bf16(p, i, v) ((p)[i] = double_to_bf16(v))
#define ST_i64(p, i, v) ((p)[i] = (int64_t)CV_i64(v))
#define ST_i32(p, i, v) ((p)[i] = (int32_t)CV_i32(v))
#define ST_i8(p, i, v) ((p)[i] = (int8_t)CV_i8(v))
#define ST_u8(p, i, v) ((p)[i] = (uint8_t)CV_u8(v))
#define ST_bool(p, i, v) ((p)[i] = (v) != 0)
#define ST_i4(p, i, v) i4_set((p), (i), CVI_i4((long long)CV_i64(v)))
#define ST_fp8e4m3(p, i, v) ((p)[i] = double_to_fp8(CV_fp8e4m3(v), fp8e4m3_to_double, 0x7f))
#define ST_fp8e5m2(p, i, v) ((p)[i] = double_to_fp8(CV_fp8e5m2(v), fp8e5m2_to_double, 0x7e))

void
tilec_entry_k7(void **args)
{
	int M = *(int *)args[0];
	int N = *(int *)args[1];
	int K = *(int *)args[2];
	uint8_t *Y2 = *(uint8_t **)args[3];
	(void)M;
	(void)N;
	(void)K;
#define in_Y2(e) (e[0] >= 0 && e[0] < M && e[1] >= 0 && e[1] < K && e[2] >= 0 && e[2] < N)
	for (int b0 = 0; b0 < ceildiv(M, 32); b0++) {
		for (int b1 = 0; b1 < ceildiv(N, 32); b1++) {
			for (int u = 0; u < K; u++) {
				double x1[32][32];
				double t2[32];
				double t3[32][32];
				double t5[32][32];
				for (int q0 = 0; q0 < 32; q0++) for (int q1 = 0; q1 < 32; q1++) x1[q0][q1] = CV_f32(1);
				for (int q0 = 0; q0 < 32; q0++) t2[q0] = CV_f16(2.0);
				if (3.0 > ((double)(((long long)u)))) {
					for (int q0 = 0; q0 < 32; q0++) for (int q1 = 0; q1 < 32; q1++) t3[q0][q1] = CV_u8(1);
				} else {
					for (int i = 0; i < 32; i++) {
						double s0 = CV_fp8e5m2(pow(fabs(exp(t2[i])) + 1.0, 2.0));
						for (int j = 0; j < 32; j++) {
							if (((((long long)i) | ((long long)b0)) != ((long long)u)) || (t2[j] >= t2[i]))
								t3[i][j] = CV_u8((2 ^ ((long long)u)));
							else
								t3[i][j] = CV_u8(((-((long long)i)) & (-((long long)i))));
						}
					}
				}
				for (int q0 = 0; q0 < 32; q0++) for (int q1 = 0; q1 < 32; q1++) t5[q0][q1] = CV_f64(2.0);
				for (int q0 = 0; q0 < 32; q0++) for (int q1 = 0; q1 < 32; q1++) t5[q0][q1] = CV_f64(1);
				{
					long long o0 = ((long long)b0 * 32);
					long long o1 = ((long long)u);
					long long o2 = ((long long)b1 * 32);
					for (int q0 = 0; q0 < 32; q0++) for (int q1 = 0; q1 < 32; q1++) {
						long long e[3] = { o0 + q0, o1, o2 + q1 };
						if (in_Y2(e))
							ST_fp8e5m2(Y2, ((e[0]) * K + e[1]) * N + e[2], x1[q0][q1]);
					}
				}
			}
		}
	}
#undef in_Y2
}
