/*
 * cpu_transpose.c - element nests that transpose one buffer into another
 * (pass `transpose`, openmp targets with explicit lanes).
 *
 * Input: the kernel's statements.  Output: loop.transpose on the outer
 * loop of each nest
 *
 *     tile_parallel(j, C) tile_parallel(i, R)
 *         D[j + a][i + b] = S[i + c][j + d];
 *
 * where D and S are distinct rank-2 buffers of one dtype held in 32-bit
 * elements (f32, and f16, bf16 and fp8 held as float; i32), R and C are
 * constants that are whole 8s, and a, b, c, d name neither var
 * (tc_transpose_form, src/ir/ir.c), and not a statement of a fused run
 * (cpu_fuse.c prints those).  Printed
 * (emitters/openmp.c) as one call of tilec_transpose32
 * (templates/cpu/tilec_cpu.h), which moves 8 x 8 blocks through vector
 * registers: each block's rows of S read and D's rows written as whole
 * vectors, where the element loop, vectorized along i, reads S down a
 * column (a gather, or eight scalar loads a vector).  The move is exact
 * (bits, no arithmetic), so nothing about the values matters.
 *
 * A nest of any other shape is left to the element loop; --explain says
 * nothing of it (nothing here is a fallback from a faster form the
 * program asked for).
 */
#include "passes/passes.h"

static void
mark(const TcKernel *k, TcStmt *s)
{
	TcTranspose t;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++) {
			TcStmt *st = s->u.block.body.items[i];
			if (st->kind == TC_ST_FOR && !tc_cpu_fused(k, st) &&
			    tc_transpose_form(NULL, st, &t))
				st->u.loop.transpose = true;
			else
				mark(k, st);
		}
		break;
	case TC_ST_FOR:
		mark(k, s->u.loop.body);
		break;
	case TC_ST_IF:
		mark(k, s->u.cond.then);
		if (s->u.cond.els)
			mark(k, s->u.cond.els);
		break;
	default:
		break;
	}
}

bool
tc_cpu_transpose(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)a;
	(void)d;
	if (opt->target.explicit_lanes <= 0)
		return true;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		mark(k, k->body);
	}
	return true;
}
