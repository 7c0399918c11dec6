/*
 * fill.c - what bench.py does in C: random operands, filled in C so that
 * 4096 x 4096 tensors cost no Python time (values uniform in [-1, 1) for
 * floats, bf16 as the top halves of such floats, [-128, 127] for int8,
 * from a 64-bit LCG with the caller's seed), the CPU check tilec's
 * runtime makes before it runs a kernel, and where the OpenMP threads
 * run (built with -fopenmp, it shares the kernels' libgomp and so their
 * threads).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

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

/* --- What tilec's runtime checks before it runs a kernel ---------------
 * The same as runtime/jit_cc.c: each feature of a file's tilec_cpu_needs
 * by CPUID, the OS's saving of its state by XGETBV, and for AMX Linux's
 * permission for the tile data (per process: this one, which loads the
 * kernels).  /proc/cpuinfo is not asked: a sandbox may filter it. */

struct feature {
	const char *name;
	unsigned leaf, sub;
	int reg, bit;
	unsigned long long xcr0;
};

static const struct feature features[] = {
	{ "fma", 1, 0, 2, 12, 0x6 },        { "f16c", 1, 0, 2, 29, 0x6 },
	{ "avx2", 7, 0, 1, 5, 0x6 },        { "avx512f", 7, 0, 1, 16, 0xe6 },
	{ "avx512bw", 7, 0, 1, 30, 0xe6 },  { "avx512vl", 7, 0, 1, 31, 0xe6 },
	{ "avx512vnni", 7, 0, 2, 11, 0xe6 }, { "avx512bf16", 7, 1, 0, 5, 0xe6 },
	{ "amx-bf16", 7, 0, 3, 22, 0x60000 }, { "amx-tile", 7, 0, 3, 24, 0x60000 },
	{ "amx-int8", 7, 0, 3, 25, 0x60000 },
};

static void
cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(sub));
}

static int
has(const struct feature *f)
{
	unsigned r[4], lo, hi;
	cpuid(0, 0, r);
	if (r[0] < f->leaf)
		return 0;
	if (f->sub) {
		cpuid(f->leaf, 0, r);
		if (r[0] < f->sub)
			return 0;
	}
	cpuid(f->leaf, f->sub, r);
	if (!(r[f->reg] >> f->bit & 1))
		return 0;
	cpuid(1, 0, r);
	if (!(r[2] >> 27 & 1))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (((unsigned long long)hi << 32 | lo) & f->xcr0) == f->xcr0;
}

/* 0 when this CPU has every feature of `needs` (and AMX is granted);
 * else 1 with the missing ones, or 2 with the refusal, in `why`. */
int
check_needs(const char *needs, char *why, size_t n)
{
	size_t used = 0;
	int amx = 0;
	why[0] = 0;
	for (const char *w = needs; *w;) {
		while (*w == ' ')
			w++;
		size_t len = strcspn(w, " ");
		if (!len)
			break;
		const struct feature *f = NULL;
		for (size_t i = 0; i < sizeof features / sizeof *features; i++)
			if (strlen(features[i].name) == len &&
			    strncmp(features[i].name, w, len) == 0)
				f = &features[i];
		if ((!f || !has(f)) && used + len + 3 < n) {
			memcpy(why + used, used ? ", " : "", used ? 2 : 0);
			used += used ? 2 : 0;
			memcpy(why + used, w, len);
			used += len;
			why[used] = 0;
		}
		amx |= f && f->xcr0 == 0x60000;
		w += len;
	}
	if (used)
		return 1;
	if (amx) {
		long rc;
		__asm__ volatile("syscall" : "=a"(rc)
				 : "a"(158L), "D"(0x1023L), "S"(18L)
				 : "rcx", "r11", "memory");
		if (rc != 0) {
			strncpy(why, "Linux refused the AMX tile state "
				"(arch_prctl ARCH_REQ_XCOMP_PERM)", n - 1);
			why[n - 1] = 0;
			return 2;
		}
	}
	return 0;
}

/* --- Where the OpenMP threads run ---------------------------------------
 * Each thread of a team of the current size, in order, as its CPU list
 * ("0-15", "3", "3,19"), separated by '|', in out (n bytes). */
void
thread_cpus(char *out, size_t n)
{
	enum { MAX = 1024 };
	static cpu_set_t mask[MAX];
	int team = 1;
	out[0] = 0;
#ifdef _OPENMP
#pragma omp parallel
	{
		int t = omp_get_thread_num();
		if (t < MAX)
			sched_getaffinity(0, sizeof mask[t], &mask[t]);
#pragma omp single
		team = omp_get_num_threads();
	}
#else
	sched_getaffinity(0, sizeof mask[0], &mask[0]);
#endif
	size_t used = 0;
	for (int t = 0; t < team && t < MAX; t++) {
		int c = 0, first = 1;
		if (t && used + 1 < n)
			out[used++] = '|';
		while (c < CPU_SETSIZE) {
			if (!CPU_ISSET(c, &mask[t])) {
				c++;
				continue;
			}
			int e = c;
			while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &mask[t]))
				e++;
			int w = e > c ? snprintf(out + used, n - used, "%s%d-%d",
						 first ? "" : ",", c, e)
				      : snprintf(out + used, n - used, "%s%d",
						 first ? "" : ",", c);
			if (w < 0 || (size_t)w >= n - used)
				return;
			used += (size_t)w;
			first = 0;
			c = e + 1;
		}
	}
}
