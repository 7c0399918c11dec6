/*
 * vexp.c - templates/cpu/tilec_cpu.h's exp and exp2: the scalar forms
 * within 2 ulp of the correctly rounded result (double libm as the
 * reference), the vector forms (tilec_vexpf, tilec_vexp2f) equal to the
 * scalar ones bit for bit, lane by lane.  Inputs: every STRIDE-th float
 * bit pattern (all of them with STRIDE=1), which covers subnormal
 * results, overflow, infinities and NaNs.  Built by tests/cpu_math.sh
 * with the flags generated kernels get.
 */
#include "tilec/cpu/tilec_cpu.h"

#include <stdio.h>
#include <stdlib.h>

#include "ulps.h"

int
main(void)
{
	double worst[2] = { 0, 0 };
	unsigned long long differ[2] = { 0, 0 }, n = 0;
	for (uint64_t b = 0; b < (1ull << 32); b += (uint64_t)STRIDE * TILEC_VL) {
		float x[TILEC_VL], v[2][TILEC_VL];
		for (int l = 0; l < TILEC_VL; l++) {
			uint32_t u = (uint32_t)(b + (uint64_t)l * STRIDE);
			memcpy(&x[l], &u, 4);
		}
		tilec_vstore(v[0], tilec_vexpf(tilec_vload(x)));
		tilec_vstore(v[1], tilec_vexp2f(tilec_vload(x)));
		for (int l = 0; l < TILEC_VL; l++, n++) {
			float s[2] = { tilec_expf(x[l]), tilec_exp2f(x[l]) };
			double want[2] = { exp((double)x[l]), exp2((double)x[l]) };
			for (int f = 0; f < 2; f++) {
				double d = ulps(s[f], want[f]);
				if (d > worst[f])
					worst[f] = d;
				bool same = memcmp(&s[f], &v[f][l], 4) == 0 ||
					    (isnan(s[f]) && isnan(v[f][l]));
				if (!same && differ[f]++ < 5)
					printf("%s(%a): vector %a, scalar %a\n",
					       f ? "exp2" : "exp", x[l], v[f][l], s[f]);
			}
		}
	}
	printf("%llu inputs; scalar worst error: exp %.3f ulp, exp2 %.3f ulp; "
	       "vector lanes differing from scalar: exp %llu, exp2 %llu\n",
	       n, worst[0], worst[1], differ[0], differ[1]);
	bool ok = worst[0] <= 2 && worst[1] <= 2 && !differ[0] && !differ[1];
	printf("%s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
