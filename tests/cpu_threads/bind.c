/*
 * bind.c - where a tilec kernel's OpenMP threads run (tests/cpu_threads.sh).
 *
 * Links softmax.c and softmax.h as `tilec export samples/softmax.c`
 * writes them, calls softmax_launch once on one thread and then on every
 * thread (the team grows: the binding is made again), and reads each
 * thread's CPU mask in a parallel region of the same team.  Then, by
 * argv[1]:
 *
 *   close    thread 0 keeps the process's CPUs; thread t >= 1 holds the
 *            CPUs of one core (its lowest CPU's thread siblings, as sysfs
 *            lists them); with no more threads than cores, threads t >= 1
 *            on distinct cores in the order of their lowest CPU, thread 1
 *            not on the first core; with more, the cores in order, no
 *            core skipped
 *   free     every thread keeps the process's CPUs (OMP_PROC_BIND=false)
 *   reversed OMP_PLACES="{1},{0}" OMP_PROC_BIND=close, as the shell sets
 *            them: thread 1 on CPU 0, as OpenMP places it, not on CPU 1
 *
 * Prints the masks, then "ok" or what is wrong (status 1).
 */
#define _GNU_SOURCE
#include "softmax.h"

#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_THREADS = 256 };

static cpu_set_t mask_of[MAX_THREADS];

/* The CPUs of `all` on the core of `cpu`, from sysfs. */
static void
siblings(int cpu, const cpu_set_t *all, cpu_set_t *out)
{
	char path[96];
	CPU_ZERO(out);
	snprintf(path, sizeof path,
		 "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
		 cpu);
	FILE *f = fopen(path, "r");
	int lo, hi, sep = ',';
	while (f && sep == ',' && fscanf(f, "%d", &lo) == 1) {
		hi = lo;
		if ((sep = fgetc(f)) == '-' && fscanf(f, "%d", &hi) == 1)
			sep = fgetc(f);
		for (int c = lo; c <= hi && c < CPU_SETSIZE; c++)
			CPU_SET(c, out);
	}
	if (f)
		fclose(f);
	CPU_SET(cpu, out);
	CPU_AND(out, out, all);
}

static int
lowest(const cpu_set_t *m)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, m))
			return c;
	return -1;
}

static int
fail(const char *what, int t)
{
	printf("FAIL: thread %d: %s\n", t, what);
	return 1;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "close";
	cpu_set_t all;
	CPU_ZERO(&all);
	if (sched_getaffinity(0, sizeof all, &all) != 0)
		return 2;
	enum { M = 64, N = 300 };
	static float x[M][N], y[M][N];
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			x[i][j] = (float)((i * 7 + j * 3) % 11) - 5.0f;
	const int team = omp_get_max_threads();
	omp_set_num_threads(1);
	if (softmax_launch(M, N, &x[0][0], &y[0][0]) != 0)
		return 2;
	omp_set_num_threads(team);
	if (softmax_launch(M, N, &x[0][0], &y[0][0]) != 0)
		return 2;
	int n = 0;
#pragma omp parallel
	{
		int t = omp_get_thread_num();
		if (t < MAX_THREADS)
			sched_getaffinity(0, sizeof mask_of[t], &mask_of[t]);
#pragma omp single
		n = omp_get_num_threads();
	}
	if (n > MAX_THREADS)
		return 2;
	for (int t = 0; t < n; t++) {
		printf("thread %d:", t);
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &mask_of[t]))
				printf(" %d", c);
		printf("\n");
	}
	/* The cores of the process, in the order of their lowest CPU. */
	int first[CPU_SETSIZE], cores = 0;
	cpu_set_t seen, core;
	CPU_ZERO(&seen);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all) || CPU_ISSET(c, &seen))
			continue;
		siblings(c, &all, &core);
		CPU_OR(&seen, &seen, &core);
		first[cores++] = c;
	}
	if (strcmp(mode, "free") == 0) {
		for (int t = 0; t < n; t++)
			if (!CPU_EQUAL(&mask_of[t], &all))
				return fail("bound, though OMP_PROC_BIND=false", t);
	} else if (strcmp(mode, "reversed") == 0) {
		if (n < 2 || !CPU_ISSET(0, &mask_of[1]) || CPU_ISSET(1, &mask_of[1]))
			return fail("not where OMP_PLACES put it", 1);
	} else {
		if (!CPU_EQUAL(&mask_of[0], &all))
			return fail("the caller's thread was bound", 0);
		int last = n <= cores ? 0 : -1;
		for (int t = 1; t < n; t++) {
			int lo = lowest(&mask_of[t]), k = 0;
			siblings(lo < 0 ? 0 : lo, &all, &core);
			if (lo < 0 || !CPU_EQUAL(&mask_of[t], &core))
				return fail("not the CPUs of one core", t);
			while (k < cores && first[k] != lo)
				k++;
			if (n <= cores ? k != t : k < last || k > last + 1)
				return fail("not on the core close binding gives", t);
			last = k;
		}
		if (n > cores && last != cores - 1)
			return fail("the last core has no thread", n - 1);
	}
	printf("ok: %d threads, %d cores\n", n, cores);
	return 0;
}
