/*
 * vforms.c - templates/cpu/tilec_cpu.h's tanh and narrow row conversions:
 * tilec_tanhf within 4 ulp of the correctly rounded result (double libm
 * as the reference), and the vector forms equal, lane by lane and bit for
 * bit, to their scalar namesakes: tilec_vtanhf to tilec_tanhf;
 * tilec_vload_f16/_bf16 to tilec_f16_to_f32/tilec_bf16_to_f32 on every
 * 16-bit pattern (a NaN for a NaN: vcvtph2ps makes signaling ones quiet);
 * tilec_vstream_f16/_bf16 to tilec_f32_to_f16/_bf16 and
 * tilec_vround_f16/_bf16 to tilec_round_f16/_bf16 on every STRIDE-th
 * float bit pattern (rounding ties, overflow, subnormal results,
 * infinities and NaNs among them); and the lane-wise sqrtf, rsqrtf,
 * fabsf, floorf, ceilf, truncf, rintf, fmaf, fmaxf and fminf to the
 * scalar ones on the same (a NaN for a NaN), the second and third
 * operands other patterns.  Built by tests/cpu_math.sh with the flags
 * generated kernels get.
 */
#include "tilec/cpu/tilec_cpu.h"

#include <stdio.h>
#include <stdlib.h>

#include "ulps.h"

static bool
same(float a, float b)
{
	return memcmp(&a, &b, 4) == 0;
}

int
main(void)
{
	enum { TANH, LOAD_F16, LOAD_BF16, STORE_F16, STORE_BF16, ROUND_F16,
	       ROUND_BF16, SQRT, RSQRT, FABS, FLOOR, CEIL, TRUNC, RINT, FMA,
	       FMAX, FMIN, N };
	static const char *const name[N] = {
		"tanh",  "load f16", "load bf16", "store f16", "store bf16",
		"round f16", "round bf16", "sqrt", "rsqrt", "fabs", "floor",
		"ceil", "trunc", "rint", "fma", "fmax", "fmin",
	};
	unsigned long long differ[N] = { 0 }, n = 0;
	double worst = 0;
	for (uint64_t b = 0; b < (1ull << 32); b += (uint64_t)STRIDE * TILEC_VL) {
		float x[TILEC_VL], v[TILEC_VL];
		for (int l = 0; l < TILEC_VL; l++) {
			uint32_t u = (uint32_t)(b + (uint64_t)l * STRIDE);
			memcpy(&x[l], &u, 4);
		}
		tilec_vstore(v, tilec_vtanhf(tilec_vload(x)));
		for (int l = 0; l < TILEC_VL; l++, n++) {
			float s = tilec_tanhf(x[l]);
			double d = ulps(s, tanh((double)x[l]));
			if (d > worst)
				worst = d;
			if (!same(s, v[l]) && differ[TANH]++ < 5)
				printf("tanh(%a): vector %a, scalar %a\n", x[l],
				       v[l], s);
		}
		float y[TILEC_VL], z[TILEC_VL], o[N][TILEC_VL];
		for (int l = 0; l < TILEC_VL; l++) {
			uint32_t u = (uint32_t)(b + (uint64_t)l * STRIDE);
			u = u * 2654435761u + 12345u;
			memcpy(&y[l], &u, 4);
			u = u * 2654435761u + 12345u;
			memcpy(&z[l], &u, 4);
		}
		tilec_vf vx = tilec_vload(x), vy = tilec_vload(y),
			 vz = tilec_vload(z);
		tilec_vstore(o[SQRT], tilec_vsqrtf(vx));
		tilec_vstore(o[RSQRT], tilec_vrsqrtf(vx));
		tilec_vstore(o[FABS], tilec_vfabsf(vx));
		tilec_vstore(o[FLOOR], tilec_vfloorf(vx));
		tilec_vstore(o[CEIL], tilec_vceilf(vx));
		tilec_vstore(o[TRUNC], tilec_vtruncf(vx));
		tilec_vstore(o[RINT], tilec_vrintf(vx));
		tilec_vstore(o[FMA], tilec_vfmaf(vx, vy, vz));
		tilec_vstore(o[FMAX], tilec_vfmaxf(vx, vy));
		tilec_vstore(o[FMIN], tilec_vfminf(vx, vy));
		for (int l = 0; l < TILEC_VL; l++) {
			float want[N];
			want[SQRT] = sqrtf(x[l]);
			want[RSQRT] = tilec_rsqrtf(x[l]);
			want[FABS] = fabsf(x[l]);
			want[FLOOR] = floorf(x[l]);
			want[CEIL] = ceilf(x[l]);
			want[TRUNC] = truncf(x[l]);
			want[RINT] = rintf(x[l]);
			want[FMA] = fmaf(x[l], y[l], z[l]);
			want[FMAX] = tilec_fmaxf(x[l], y[l]);
			want[FMIN] = tilec_fminf(x[l], y[l]);
			for (int f = SQRT; f < N; f++)
				if (!same(want[f], o[f][l]) &&
				    !(isnan(want[f]) && isnan(o[f][l])) &&
				    differ[f]++ < 5)
					printf("%s(%a, %a, %a): vector %a, scalar "
					       "%a\n", name[f], x[l], y[l], z[l],
					       o[f][l], want[f]);
		}
		float rh[TILEC_VL], rg[TILEC_VL];
		tilec_vstore(rh, tilec_vround_f16(tilec_vload(x)));
		tilec_vstore(rg, tilec_vround_bf16(tilec_vload(x)));
		for (int l = 0; l < TILEC_VL; l++) {
			if (!same(tilec_round_f16(x[l]), rh[l]) &&
			    differ[ROUND_F16]++ < 5)
				printf("round f16(%a): vector %a, scalar %a\n",
				       x[l], rh[l], tilec_round_f16(x[l]));
			if (!same(tilec_round_bf16(x[l]), rg[l]) &&
			    differ[ROUND_BF16]++ < 5)
				printf("round bf16(%a): vector %a, scalar %a\n",
				       x[l], rg[l], tilec_round_bf16(x[l]));
		}
		/* Half the vectors as a large output's (past the cache). */
		_Alignas(64) tilec_f16 h[TILEC_VL];
		_Alignas(64) tilec_bf16 g[TILEC_VL];
		size_t total = (b / STRIDE / TILEC_VL) % 2 ? TILEC_STREAM_OUT : 0;
		tilec_vstream_f16(h, tilec_vload(x), total);
		tilec_vstream_bf16(g, tilec_vload(x), total);
		tilec_stream_fence();
		for (int l = 0; l < TILEC_VL; l++) {
			tilec_f16 sh = tilec_f32_to_f16(x[l]);
			tilec_bf16 sg = tilec_f32_to_bf16(x[l]);
			if (sh != h[l] && differ[STORE_F16]++ < 5)
				printf("f16(%a): vector %#x, scalar %#x\n", x[l],
				       h[l], sh);
			if (sg != g[l] && differ[STORE_BF16]++ < 5)
				printf("bf16(%a): vector %#x, scalar %#x\n", x[l],
				       g[l], sg);
		}
	}
	for (uint32_t b = 0; b < 0x10000; b += TILEC_VL) {
		tilec_f16 h[TILEC_VL];
		tilec_bf16 g[TILEC_VL];
		float vh[TILEC_VL], vg[TILEC_VL];
		for (int l = 0; l < TILEC_VL; l++)
			h[l] = g[l] = (uint16_t)(b + (uint32_t)l);
		tilec_vstore(vh, tilec_vload_f16(h));
		tilec_vstore(vg, tilec_vload_bf16(g));
		for (int l = 0; l < TILEC_VL; l++) {
			/* vcvtph2ps makes a signaling NaN quiet: any NaN */
			float sh = tilec_f16_to_f32(h[l]);
			if (!same(sh, vh[l]) && !(isnan(sh) && isnan(vh[l])) &&
			    differ[LOAD_F16]++ < 5)
				printf("f16 %#x: vector %a, scalar %a\n", h[l],
				       vh[l], tilec_f16_to_f32(h[l]));
			if (!same(tilec_bf16_to_f32(g[l]), vg[l]) &&
			    differ[LOAD_BF16]++ < 5)
				printf("bf16 %#x: vector %a, scalar %a\n", g[l],
				       vg[l], tilec_bf16_to_f32(g[l]));
		}
	}
	printf("%llu inputs; scalar tanh worst error %.3f ulp; vector lanes "
	       "differing from scalar:", n, worst);
	bool ok = worst <= 4;
	for (int f = 0; f < N; f++) {
		printf(" %s %llu%s", name[f], differ[f], f + 1 < N ? "," : "\n");
		ok &= differ[f] == 0;
	}
	printf("%s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
