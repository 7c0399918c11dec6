/*
 * fill.c - random operands for bench.py, filled in C so that 4096 x 4096
 * tensors cost no Python time: values uniform in [-1, 1) (floats, and
 * bf16 as the top halves of such floats) or in [-128, 127] (int8), from
 * a 64-bit LCG with the caller's seed.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uint32_t
next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

void
fill_f32(float *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(next(&seed) >> 8) / 8388608.0f - 1.0f;
}

void
fill_bf16(uint16_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		float x = (float)(next(&seed) >> 8) / 8388608.0f - 1.0f;
		uint32_t u;
		memcpy(&u, &x, 4);
		p[i] = (uint16_t)(u >> 16);
	}
}

void
fill_i8(int8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (int8_t)(next(&seed) >> 24);
}

/* Poison: a value no product gives (NaN bits for floats). */
void
poison(uint32_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = 0x7fc0dead;
}
