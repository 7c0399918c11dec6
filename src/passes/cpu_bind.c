/*
 * cpu_bind.c - where a CPU kernel's threads run: one per core, close.
 *
 * Input: a program for the openmp target.  Output: kernel->bind_close on
 * every kernel whose grid may have more than one block; printed by
 * --emit=ir (a `bind close` line after the grid), read back by read.c,
 * checked by the verifier; emitters/openmp.c prints it as a call of
 * tilec_bind_threads() (templates/cpu/tilec_cpu.h) before the grid's
 * parallel loop.
 *
 * Why: an OpenMP runtime left to itself does not bind threads (libgomp
 * and libomp alike, unless OMP_PROC_BIND or OMP_PLACES is set), and the
 * OS then moves them between cores, two of them sometimes sharing one
 * while another idles, and away from the caches and the memory node
 * their blocks' data is in.  Bound close, thread t runs on the t-th core
 * of the CPUs the process may use (all of that core's hardware threads),
 * what OMP_PLACES=cores OMP_PROC_BIND=close gives.  The `proc_bind(close)`
 * clause cannot ask for it: without places from the environment the
 * runtimes ignore it, and with OMP_PROC_BIND set it would override the
 * user's policy.  So the helper binds the team's threads itself, once,
 * and only where the user set none of OpenMP's affinity variables
 * (docs/backend-openmp.md, "Threads on cores").
 *
 * A grid of one block runs on one thread: nothing to place.
 */
#include "passes/passes.h"

/* Whether the kernel's grid is one block (every extent the constant 1). */
static bool
one_block(const TcKernel *k)
{
	for (int d = 0; d < 3; d++) {
		long long n;
		if (k->grid[d] && !(tc_expr_const(k->grid[d], &n) && n <= 1))
			return false;
	}
	return true;
}

bool
tc_cpu_bind(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)a;
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		k->bind_close = !one_block(k);
	}
	return true;
}
