/* The generator's own model of the kernels' meaning (docs/ir.md),
 * serial, in double; tilec run --source checks the reference against it. */
#include <math.h>
#include <stdint.h>
#include <string.h>

static long long min_ll(long long a, long long b) { return a < b ? a : b; }
static long long max_ll(long long a, long long b) { return a > b ? a : b; }
static long long ceildiv(long long a, long long b) { return (a + b - 1) / b; }

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
static double CV_f16(double v) { return round_bits(v, 11, -13); }
static double CV_bf16(double v) { return round_bits(v, 8, -125); }
static double CV_i64(double v) { return (double)(int64_t)trunc(v); }
static double CV_i32(double v) { return (double)(int32_t)(uint32_t)(uint64_t)(int64_t)trunc(v); }
static double CV_i8(double v) { return (double)(int8_t)(uint8_t)(uint64_t)(int64_t)trunc(v); }
static double CV_u8(double v) { return (double)(uint8_t)(uint64_t)(int64_t)trunc(v); }
static double CV_bool(double v) { return v != 0; }
static long long CVI_i64(long long v) { return v; }
static long long CVI_i8(long long v) { return (int8_t)(uint8_t)(uint64_t)v; }
static long long CVI_u8(long long v) { return (uint8_t)(uint64_t)v; }

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
#define LD_f64(p, i) ((double)(p)[i])
#define LD_f32(p, i) ((double)(p)[i])
#define LD_f16(p, i) f16_to_double((p)[i])
#define LD_bf16(p, i) bf16_to_double((p)[i])
#define LD_i64(p, i) ((double)(p)[i])
#define LD_i32(p, i) ((double)(p)[i])
#define LD_i8(p, i) ((double)(p)[i])
#define LD_u8(p, i) ((double)(p)[i])
#define LD_bool(p, i) ((double)((p)[i] != 0))
#define ST_f64(p, i, v) ((p)[i] = (v))
#define ST_f32(p, i, v) ((p)[i] = (float)(v))
#define ST_f16(p, i, v) ((p)[i] = double_to_f16(v))
#define ST_bf16(p, i, v) ((p)[i] = double_to_bf16(v))
#define ST_i64(p, i, v) ((p)[i] = (int64_t)CV_i64(v))
#define ST_i32(p, i, v) ((p)[i] = (int32_t)CV_i32(v))
#define ST_i8(p, i, v) ((p)[i] = (int8_t)CV_i8(v))
#define ST_u8(p, i, v) ((p)[i] = (uint8_t)CV_u8(v))
#define ST_bool(p, i, v) ((p)[i] = (v) != 0)

void
tilec_entry_k5(void **args)
{
	int M = *(int *)args[0];
	int N = *(int *)args[1];
	int K = *(int *)args[2];
	int32_t *Y4 = *(int32_t **)args[3];
	(void)M;
	(void)N;
	(void)K;
#define in_Y4(e) (e[0] >= 0 && e[0] < M && e[1] >= 0 && e[1] < K && e[2] >= 0 && e[2] < N)
	for (int b0 = 0; b0 < ceildiv(M, 8); b0++) {
		for (int b1 = 0; b1 < ceildiv(N, 4); b1++) {
			double x0[8][4];
			double x1[8][4];
			double t5[8][4];
			double t7[8][4];
			double t8[8][4];
			for (int u = 0; u < K; u++) {
				for (int q0 = 0; q0 < 8; q0++) for (int q1 = 0; q1 < 4; q1++) x0[q0][q1] = CV_i32(1);
				for (int q0 = 0; q0 < 8; q0++) for (int q1 = 0; q1 < 4; q1++) x1[q0][q1] = CV_i32(1);
				for (int q0 = 0; q0 < 8; q0++) for (int q1 = 0; q1 < 4; q1++) t5[q0][q1] = CV_i32(1);
				for (int q0 = 0; q0 < 8; q0++) for (int q1 = 0; q1 < 4; q1++) t7[q0][q1] = CV_i64(1);
				for (int i = 0; i < 8; i++) {
					for (int j = 0; j < 4; j++) {
						t8[i][j] = CV_i64((CVI_i8((((long long)b0) + ((long long)t7[i][j]))) + (~((((long long)x0[i][j]) & 15) * (((long long)x1[i][j]) & 7)))));
					}
				}
				for (int i = 0; i < 8; i++) {
					for (int j = 0; j < 4; j++) {
						x1[i][j] = CV_i32((((((long long)i) ^ ((long long)t8[i][j])) % 1) > ((long long)t5[i][j])));
					}
				}
				for (int i = 0; i < 8; i++) {
					for (int j = 0; j < 4; j++) {
						if ((((long long)b0 * 8) + i) < M && (((long long)b1 * 4) + j) < N)
							ST_i32(Y4, (((((long long)b0 * 8) + i)) * K + ((long long)u)) * N + (((long long)b1 * 4) + j), t8[i][j]);
					}
				}
			}
		}
	}
#undef in_Y4
}
