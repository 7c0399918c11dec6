/*
 * cpu_place.c - the pages of host buffers for CPU kernels, first touched
 * by threads on the cores the kernels' threads run on.
 *
 * Input: a buffer tilec_alloc has just allocated on a CPU context.
 * Output: each of its pages written once (a zero byte), by the thread
 * whose share of the buffer it lies in, so that Linux places the page in
 * that thread's memory node (first touch).  The buffer is cut into as
 * many equal shares as the kernels' OpenMP teams have threads, in order,
 * as `schedule(static)` over a grid gives each thread a contiguous
 * share of the blocks and so of the rows of their tensors; share t is
 * touched by a thread bound to the core the kernels' thread t runs on
 * (tilec_bind_threads in templates/cpu/tilec_cpu.h places them so: the
 * t-th core of the process's CPUs, cores in the order of their first
 * CPU, a core the CPUs sysfs lists as thread siblings; consecutive
 * threads sharing a core when there are more threads than cores; the
 * two must agree).  Share 0 is touched by the caller, as thread 0 of a
 * team is the caller's thread, left unbound.
 *
 * The team size is what OpenMP runtimes start with: OMP_NUM_THREADS's
 * first value, else the CPUs of the process's affinity mask.  Buffers
 * under TOUCH_MIN bytes, a one-thread team, and pages the allocator
 * hands out already touched (glibc maps large blocks fresh; smaller ones
 * may come from freed memory) are left as they are; so is everything
 * when a thread cannot be started.  Linux only; elsewhere nothing is
 * touched.
 */
#define _GNU_SOURCE
#include "runtime_int.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Smaller buffers are left to whoever writes them first: a few pages a
 * thread would not repay starting the threads. */
#define TOUCH_MIN (4u << 20)

/* Teams larger than this are touched by this many threads. */
#define MAX_TOUCHERS 1024

/* One share of the buffer and where its thread runs. */
typedef struct Share {
	char *base;          /* the buffer */
	size_t from, to;     /* its bytes [from, to) */
	size_t page;         /* the page size */
	cpu_set_t core;      /* the CPUs of the thread's core */
} Share;

/* The CPUs of `all` on the core of `cpu`: its thread siblings as sysfs
 * lists them ("0,64", "0-1"), `cpu` alone where they cannot be read. */
static void
core_of(int cpu, const cpu_set_t *all, cpu_set_t *out)
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
		for (int c = lo < 0 ? 0 : lo; c <= hi && c < CPU_SETSIZE; c++)
			CPU_SET(c, out);
	}
	if (f)
		fclose(f);
	CPU_SET(cpu, out);
	CPU_AND(out, out, all);
}

/* Write one byte of every page that holds a byte of the share: its
 * first byte there. */
static void
touch(const Share *s)
{
	uintptr_t from = (uintptr_t)(s->base + s->from);
	uintptr_t to = (uintptr_t)(s->base + s->to);
	for (uintptr_t at = from / s->page * s->page; at < to; at += s->page)
		*(volatile char *)(at < from ? from : at) = 0;
}

static void *
toucher(void *arg)
{
	touch(arg);
	return NULL;
}

/* Threads an OpenMP team starts with: OMP_NUM_THREADS's first value,
 * else the CPUs this thread may run on. */
static int
team_size(const cpu_set_t *all)
{
	const char *env = getenv("OMP_NUM_THREADS");
	if (env) {
		char *end;
		long n = strtol(env, &end, 10);
		if (end != env && (*end == '\0' || *end == ',') && n > 0)
			return n > MAX_TOUCHERS ? MAX_TOUCHERS : (int)n;
	}
	int n = CPU_COUNT(all);
	return n > MAX_TOUCHERS ? MAX_TOUCHERS : n;
}

void
tilec_rt_first_touch(void *p, size_t bytes)
{
	cpu_set_t all;
	if (!p || bytes < TOUCH_MIN ||
	    sched_getaffinity(0, sizeof all, &all) != 0)
		return;
	const int n = team_size(&all);
	long page = sysconf(_SC_PAGESIZE);
	if (n < 2 || page <= 0)
		return;
	/* Each core's first CPU, in order. */
	int first[CPU_SETSIZE], cores = 0;
	cpu_set_t seen, core;
	CPU_ZERO(&seen);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all) || CPU_ISSET(c, &seen))
			continue;
		core_of(c, &all, &core);
		CPU_OR(&seen, &seen, &core);
		first[cores++] = c;
	}
	Share *share = calloc((size_t)n, sizeof *share);
	pthread_t *tid = calloc((size_t)n, sizeof *tid);
	bool *started = calloc((size_t)n, sizeof *started);
	if (!share || !tid || !started || cores == 0)
		goto out;
	for (int t = 0; t < n; t++) {
		share[t].base = p;
		share[t].from = bytes / (size_t)n * (size_t)t;
		share[t].to = t + 1 == n ? bytes : bytes / (size_t)n * (size_t)(t + 1);
		share[t].page = (size_t)page;
		const int c = n <= cores ? t : (int)((long long)t * cores / n);
		core_of(first[c], &all, &share[t].core);
	}
	/* Threads 1.. start on their cores, so no page is touched from
	 * elsewhere. */
	for (int t = 1; t < n; t++) {
		pthread_attr_t attr;
		if (pthread_attr_init(&attr) != 0)
			continue;
		if (pthread_attr_setaffinity_np(&attr, sizeof share[t].core,
						&share[t].core) == 0)
			started[t] = pthread_create(&tid[t], &attr, toucher,
						    &share[t]) == 0;
		pthread_attr_destroy(&attr);
	}
	touch(&share[0]);
	for (int t = 1; t < n; t++)
		if (started[t])
			pthread_join(tid[t], NULL);
out:
	free(share);
	free(tid);
	free(started);
}
#else
void
tilec_rt_first_touch(void *p, size_t bytes)
{
	(void)p;
	(void)bytes;
}
#endif
