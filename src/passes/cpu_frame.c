/*
 * cpu_frame.c - the CPU frame limit: a block's buffers live on its
 * thread's stack.
 *
 * Input: a checked program for the openmp target.  Output:
 * kernel->frame_bytes, the bytes of every buffer the kernel declares as
 * the CPU holds them (narrow floats widened to float, bool and i4 one byte
 * an element), kernel->stack_bytes the same (the fuse pass lowers it by
 * the buffers it keeps in registers: tc_cpu_stored_bytes), or a located
 * error at the first buffer, in program order,
 * that brings the total past the target's limit (target->smem_limit:
 * buffers past it do not stay in cache, and a thread's stack is not
 * unbounded).  The limit is a property of the program, so it counts every
 * buffer, including those a later pass keeps in registers.
 */
#include "analysis/walk.h"
#include "passes/passes.h"

/* Bytes a buffer element takes in the block's frame. */
int
tc_cpu_elem_bytes(TcDtype t)
{
	if (t == TC_DT_BOOL || t == TC_DT_I4)
		return 1;
	if (tc_dtype_is_float(t) && tc_dtype_bits(t) < 32)
		return 4; /* f16, bf16, fp8: held as float */
	return tc_dtype_bits(t) / 8;
}

typedef struct Frame {
	TcArena *a;
	const TcTarget *t; /* NULL: count only, no limit */
	const TcKernel *k;
	TcDiags *d;
	long long bytes;   /* the buffers declared so far */
	long long stored;  /* those of them not var->unstored */
	bool over;         /* the limit is passed (reported once) */
} Frame;

static void
add_buffers(void *ctx, TcStmt *s, int par_depth)
{
	Frame *F = ctx;
	(void)par_depth;
	if (s->kind != TC_ST_DECL)
		return;
	const TcVar *v = s->u.decl.var;
	if (v->kind != TC_VAR_BUFFER || F->over)
		return;
	long long n = tc_cpu_elem_bytes(v->dtype);
	for (int i = 0; i < v->rank; i++)
		n *= tc_var_extent(v, i);
	F->bytes += n;
	if (!v->unstored)
		F->stored += n;
	if (!F->t || F->bytes <= F->t->smem_limit)
		return;
	F->over = true;
	tc_diag(F->d, TC_ERROR, v->loc, "buffer '%s' (%s) brings the buffers "
		"of kernel '%s' to %s per block; the %s target allows %s (a "
		"block's buffers live on its thread's stack and should stay "
		"in cache)", v->name, tc_size_text(F->a, n), F->k->name,
		tc_size_text(F->a, F->bytes), F->t->name,
		tc_size_text(F->a, F->t->smem_limit));
}

bool
tc_cpu_frame(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	bool ok = true;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		Frame F = { .a = a, .t = &opt->target, .k = k, .d = d };
		tc_walk_stmts(k->body, 0, add_buffers, &F);
		k->frame_bytes = F.bytes;
		k->stack_bytes = F.stored;
		ok = ok && !F.over;
	}
	return ok;
}

long long
tc_cpu_stored_bytes(const TcKernel *k)
{
	Frame F = { .k = k };
	tc_walk_stmts(k->body, 0, add_buffers, &F);
	return F.stored;
}
