/*
 * ulps.h - what tests/cpu_math's programs measure errors in.
 */
#include <math.h>

#ifndef STRIDE
#define STRIDE 61 /* every STRIDE-th float bit pattern is an input */
#endif

/* |got - want| in units of the last place of want rounded to float. */
static double
ulps(float got, double want)
{
	if (isnan(want))
		return isnan(got) ? 0 : INFINITY;
	float w = (float)want;
	if (isinf(w))
		return got == w ? 0 : INFINITY;
	int e;
	frexp(w == 0 ? 0x1p-149 : w, &e);
	double u = ldexp(1.0, e - 24 < -149 ? -149 : e - 24);
	return fabs((double)got - want) / u;
}
