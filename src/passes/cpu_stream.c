/*
 * cpu_stream.c - tile copies into outputs the kernel only writes, whose
 * rows may go past the cache (pass `stream`, openmp targets).
 *
 * Input: the kernel's statements.  Output: copy.stream on each COPY of a
 * buffer into a tensor T when
 *   - every statement that touches T is such a copy (the kernel neither
 *     reads T nor writes it another way: no element stores, no atomics),
 *   - the buffer is held as float (f32, f16, bf16, fp8; not as stored)
 *     and T's elements have a row helper (the same types), and
 *   - the copy's last tile dim runs along T's last dim (its rows are
 *     contiguous in T) and its constant extent fills at least a cache
 *     line of T (64 bytes: non-temporal stores pay off by whole lines),
 *     and
 *   - it is not a statement of a fused run (cpu_fuse.c prints those; the
 *     vector pass streams their rows).
 * Then kernel->streams where any copy is so marked (the vector pass sets
 * it for the rows it streams): the grid's threads fence once after their
 * blocks.
 *
 * Printed (emitters/openmp.c) as tilec_store_T_out calls given T's size
 * in bytes (templates/cpu/tilec_cpu.h): where T is TILEC_STREAM_OUT
 * bytes or more, larger than what the caches keep for the next kernel,
 * the rows go out with non-temporal stores, which skip the read for
 * ownership of every line they fill; a smaller T stays in the cache.
 * Short rows qualify: a transpose writes 64 rows of 128 bytes per tile,
 * where tilec_store_T streams only rows of TILEC_STREAM_BYTES.  Each
 * thread of the grid fences once after its blocks (a fence after each
 * block's copy stalls the block on its stores draining: the transpose
 * sample fell from 0.43 to 0.35 of a copy so).
 *
 * Nothing here changes a value, so --explain says nothing of it.
 */
#include "analysis/walk.h"
#include "passes/passes.h"

typedef struct Out {
	const TcKernel *k;
	bool *only;	/* by var index: touched only by copies into it */
	TcVec copies;	/* the COPY statements into tensors */
	TcArena *a;
} Out;

static bool
row_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F32:
	case TC_DT_F16:
	case TC_DT_BF16:
	case TC_DT_FP8E4M3:
	case TC_DT_FP8E5M2: return true;
	default: return false;
	}
}

static bool
copy_out(const TcStmt *s)
{
	return s->kind == TC_ST_COPY && s->u.copy.dst.var &&
	       s->u.copy.dst.var->kind == TC_VAR_TENSOR &&
	       s->u.copy.src.var && s->u.copy.src.var->kind == TC_VAR_BUFFER;
}

static void
uses(void *ctx, TcStmt *s, int par_depth)
{
	Out *O = ctx;
	(void)par_depth;
	bool out = copy_out(s);
	if (out)
		tc_vec_push(O->a, &O->copies, s);
	for (int i = 0; i < O->k->vars.len; i++) {
		const TcVar *v = O->k->vars.items[i];
		if (v->kind != TC_VAR_TENSOR || !O->only[i])
			continue;
		int how = tc_stmt_own_touches(s, v);
		if (out && s->u.copy.dst.var == v && how == TC_ROLE_WRITE)
			how = 0;
		if (how)
			O->only[i] = false;
	}
}

/* Whether a row of tile b fills a cache line of a tensor of dtype t. */
static bool
fills_line(const TcVar *b, TcDtype t)
{
	long long n;
	return tc_expr_const(b->shape[b->rank - 1], &n) &&
	       n * tc_dtype_bits(t) >= 64 * 8;
}

bool
tc_cpu_stream(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		Out O = { .k = k, .a = a };
		O.only = tc_alloc(a, sizeof(bool) * (size_t)(k->vars.len + 1));
		for (int v = 0; v < k->vars.len; v++)
			O.only[v] = true;
		tc_walk_stmts(k->body, 0, uses, &O);
		for (int c = 0; c < O.copies.len; c++) {
			TcStmt *s = O.copies.items[c];
			const TcRegion *r = &s->u.copy.dst;
			const TcVar *t = r->var, *b = s->u.copy.src.var;
			s->u.copy.stream =
				O.only[t->index] && row_type(t->dtype) &&
				row_type(b->dtype) && !b->stored &&
				r->dims[b->rank - 1] == t->rank - 1 &&
				fills_line(b, t->dtype) && !tc_cpu_fused(k, s);
			k->streams |= s->u.copy.stream;
		}
	}
	return true;
}
