/*
 * explain.c - notes on where the GPU passes put each buffer.
 *
 * Input: a program after the pass pipeline.  Output: notes, through the
 * diagnostics, at buffers' declarations.  Every fragment or local buffer
 * that layout.c put in shared memory rather than registers gets one,
 * always, saying why (var->smem_why, a clause naming the use that decided
 * it) and what it costs; with --explain (opt->explain) every buffer gets
 * one: registers and how the threads hold it, or shared memory with its
 * bytes, offset, stages, padding or swizzle (or, for a fragment
 * reg_operands.c folded away, that it is not held), and each kernel a
 * summary.
 * A copy of a tile_pipelined loop that is not issued ahead of its
 * iteration (loop.pipe_why) gets a note always too; with --explain, each
 * element loop into a shared tile's rows, stored in runs or not and why
 * (loop.run, loop.run_why).  On the CPU, an AMX bf16 gemm whose operands
 * are held as float (gemm.cpu.why) gets a note always.  The decisions are
 * the passes'; this file only words them.
 */
#include "analysis/walk.h"
#include "ir/tilec_int.h"

#include <string.h>

static const char *
scope_word(const TcVar *v)
{
	switch (v->scope) {
	case TC_SCOPE_SHARED: return "tile_shared";
	case TC_SCOPE_FRAGMENT: return "tile_fragment";
	case TC_SCOPE_LOCAL: return "tile_local";
	default: return "buffer";
	}
}

/* Bytes a buffer takes in shared memory: every stage, padding included. */
static long long
smem_bytes(const TcVar *v)
{
	long long elems = 1;
	for (int i = 0; i < v->rank - 1; i++)
		elems *= tc_var_extent(v, i);
	elems *= tc_var_extent(v, v->rank - 1) + v->pad;
	long long bytes = (elems * tc_dtype_storage_bits(v->dtype) + 7) / 8;
	return bytes * (v->stages > 1 ? v->stages : 1);
}

/* "; 4096 bytes at +0, 3 stages, rows padded by 8" */
static void
smem_details(TcBuf *b, const TcKernel *k, const TcVar *v)
{
	tc_buf_printf(b, "%lld bytes", smem_bytes(v));
	if (k->smem_bytes > 0 && v->smem_offset >= 0)
		tc_buf_printf(b, " at +%lld", v->smem_offset);
	if (v->stages > 1)
		tc_buf_printf(b, ", %d stages", v->stages);
	if (v->pad > 0)
		tc_buf_printf(b, ", rows padded by %d elements", v->pad);
	if (v->swizzle)
		tc_buf_puts(b, ", 16-byte chunks swizzled per row");
	if (v->panels)
		tc_buf_puts(b, " in 128-byte column panels");
}

/* How the threads hold a register fragment. */
static void
register_details(TcBuf *b, const TcVar *v)
{
	const TcLayout *l = &v->layout;
	switch (l->kind) {
	case TC_LAYOUT_MMA:
		tc_buf_printf(b, "the mma.sync m16n8 accumulator layout over "
			      "%dx%d warps", l->warps_m, l->warps_n);
		break;
	case TC_LAYOUT_MFMA:
		tc_buf_printf(b, "the v_mfma 16x16 accumulator layout over "
			      "%dx%d waves", l->warps_m, l->warps_n);
		break;
	case TC_LAYOUT_WGMMA:
		tc_buf_printf(b, "the wgmma m64nN accumulator layout over "
			      "%dx%d warpgroups", l->warps_m, l->warps_n);
		break;
	default:
		tc_buf_printf(b, "blocked over a %dx%d thread grid",
			      l->dim[0].tr, l->dim[0].tc);
		break;
	}
	tc_buf_puts(b, ", each thread holding");
	for (int d = 0; d < v->rank; d++) {
		const TcDist *t = &l->dim[d];
		tc_buf_printf(b, "%s %d of %lld %s", d ? "," : "", t->count,
			      tc_var_extent(v, d),
			      v->rank == 1 ? "elements" : d == 0 ? "rows" : "columns");
		if (l->kind == TC_LAYOUT_BLOCKED && t->axis == 1 && t->vec > 1)
			tc_buf_printf(b, " in runs of %d", t->vec);
	}
}

/* Off the pipeline's fast path: the copies of tile_pipelined loops that
 * are not issued ahead of their iteration (loop.pipe_why), always said. */
static void
explain_pipelines(const TcStmt *s, TcDiags *d)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			explain_pipelines(s->u.block.body.items[i], d);
		break;
	case TC_ST_IF:
		explain_pipelines(s->u.cond.then, d);
		if (s->u.cond.els)
			explain_pipelines(s->u.cond.els, d);
		break;
	case TC_ST_FOR:
		explain_pipelines(s->u.loop.body, d);
		if (s->u.loop.pipe_why)
			tc_diag(d, TC_NOTE, s->u.loop.pipe_why_loc, "this copy of the "
				"tile_pipelined loop at %d:%d waits for memory in its "
				"own iteration, not issued ahead: %s", s->loc.line,
				s->loc.col, s->u.loop.pipe_why);
		break;
	default:
		break;
	}
}

/* With --explain: each element loop into a shared tile's rows, in runs
 * or not and why (runs.c: loop.run, loop.run_why).  ctx: the TcDiags. */
static void
explain_run(void *ctx, TcStmt *s, int par_depth)
{
	TcDiags *d = ctx;
	(void)par_depth;
	if (s->kind != TC_ST_FOR || (s->u.loop.run < 2 && !s->u.loop.run_why))
		return;
	/* The shared tile the loop assigns (its body's first assignment to
	 * one; a run's body is that one). */
	const TcVec *body = &s->u.loop.body->u.block.body;
	const TcVar *t = NULL;
	for (int i = 0; i < body->len && !t; i++) {
		const TcStmt *as = body->items[i];
		if (as->kind == TC_ST_IF && as->u.cond.then->u.block.body.len)
			as = as->u.cond.then->u.block.body.items[0];
		if (as->kind == TC_ST_ASSIGN && as->u.assign.dst->kind == TC_EX_LOAD &&
		    tc_in_smem(as->u.assign.dst->u.load.var))
			t = as->u.assign.dst->u.load.var;
	}
	if (!t)
		return;
	if (s->u.loop.run >= 2)
		tc_diag(d, TC_NOTE, s->loc, "this tile_parallel loop stores "
			"'%s' in runs of %d elements a thread, one %d-byte store "
			"each", tc_var_shown(t), s->u.loop.run, s->u.loop.run *
			tc_dtype_storage_bits(t->dtype) / 8);
	else
		tc_diag(d, TC_NOTE, s->loc, "this tile_parallel loop stores "
			"'%s' one element a thread at a time: %s", tc_var_shown(t),
			s->u.loop.run_why);
}

/* With --explain: each loop that converts runs of 4- or 8-bit integers
 * into f16 or bf16, in half pairs or not and why (half_pairs.c:
 * loop.pairs, loop.pair_why); a gemm's computed B (gemm.b_from) among
 * them. */
static void
explain_pairs(void *ctx, TcStmt *s, int par_depth)
{
	TcDiags *d = ctx;
	(void)par_depth;
	if (s->kind == TC_ST_GEMM && s->u.gemm.b_from)
		s = s->u.gemm.b_from->u.loop.body->u.block.body.items[0];
	if (s->kind != TC_ST_FOR || (!s->u.loop.pairs && !s->u.loop.pair_why))
		return;
	const TcStmt *as = s->u.loop.body->u.block.body.items[0];
	const char *t = tc_dtype_name(as->u.assign.dst->u.load.var->dtype);
	if (s->u.loop.pairs)
		tc_diag(d, TC_NOTE, s->loc, "this tile_parallel loop converts "
			"its integers two at a time in %s arithmetic, exactly "
			"as in f32", t);
	else
		tc_diag(d, TC_NOTE, s->loc, "this tile_parallel loop converts "
			"its integers one at a time in f32, not two at a time in "
			"%s arithmetic: %s", t, s->u.loop.pair_why);
}

/* An AMX bf16 gemm from float-held operands (cpu_gemm.c's gemm.cpu.why):
 * off the fast path, so always said. */
static void
explain_cpu_gemm(void *ctx, TcStmt *s, int par_depth)
{
	TcDiags *d = ctx;
	(void)par_depth;
	if (s->kind != TC_ST_GEMM || !s->u.gemm.cpu.why)
		return;
	tc_diag(d, TC_NOTE, s->loc, "this tile_gemm converts its bf16 "
		"operands from floats on every call: %s", s->u.gemm.cpu.why);
}

/* A gemm whose B an element loop stores in shared memory right before
 * it, and which could not compute B itself (fuse_b.c's gemm.b_why): off
 * the fast path, so always said. */
static void
explain_b_why(void *ctx, TcStmt *s, int par_depth)
{
	TcDiags *d = ctx;
	(void)par_depth;
	if (s->kind != TC_ST_GEMM || !s->u.gemm.b_why)
		return;
	tc_diag(d, TC_NOTE, s->loc, "%s", s->u.gemm.b_why);
}

/* Sets *ctx (a bool) where a gemm's accumulator is in registers: it runs
 * on the target's matrix instruction. */
static void
find_warp_gemm(void *ctx, TcStmt *s, int par_depth)
{
	(void)par_depth;
	const TcVar *c = s->kind == TC_ST_GEMM ? s->u.gemm.c.var : NULL;
	if (c && c->layout.kind != TC_LAYOUT_SMEM &&
	    c->layout.kind != TC_LAYOUT_BLOCKED)
		*(bool *)ctx = true;
}

static void
explain_kernel(const TcKernel *k, const TcOptions *opt, TcDiags *d)
{
	bool gpu = opt->target.kind != TC_TARGET_OPENMP;
	if (opt->explain) {
		long long threads = 0;
		if (k->threads)
			tc_expr_const(k->threads, &threads);
		if (gpu)
			tc_diag(d, TC_NOTE, k->loc, "kernel '%s' on %s %s: %lld "
				"threads, %lld bytes of shared memory (%lld of "
				"them scratch for reductions and barriers)",
				k->name, opt->target.name, opt->target.arch,
				threads, k->smem_bytes,
				k->smem_bytes - k->scratch_offset);
		else
			tc_diag(d, TC_NOTE, k->loc, "kernel '%s' on %s %s: every "
				"buffer is an array of the block's frame", k->name,
				opt->target.name, opt->target.arch);
	}
	/* Off the warpgroup fast path: always said, like a spill; the warp
	 * instruction named only where a gemm got it (one whose accumulator
	 * went to shared memory runs element by element, its own note). */
	if (gpu && k->wgmma_why) {
		bool warp = false;
		tc_walk_stmts(k->body, 0, find_warp_gemm, &warp);
		if (warp)
			tc_diag(d, TC_NOTE, k->wgmma_why_loc.line ? k->wgmma_why_loc :
				k->loc, "kernel '%s' multiplies with %s, not wgmma: %s",
				k->name, opt->target.mma->name, k->wgmma_why);
		else
			tc_diag(d, TC_NOTE, k->wgmma_why_loc.line ? k->wgmma_why_loc :
				k->loc, "kernel '%s' does not multiply with wgmma: %s",
				k->name, k->wgmma_why);
	}
	if (gpu) {
		explain_pipelines(k->body, d);
		tc_walk_stmts(k->body, 0, explain_b_why, d);
	} else
		tc_walk_stmts(k->body, 0, explain_cpu_gemm, d);
	if (gpu && opt->explain) {
		tc_walk_stmts(k->body, 0, explain_run, d);
		tc_walk_stmts(k->body, 0, explain_pairs, d);
	}
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		/* Buffers a pass made (stage views, prefetch fragments,
		 * no source location) are told of with the program's. */
		if (v->kind != TC_VAR_BUFFER || v->loc.line <= 0)
			continue;
		bool fallback = gpu && v->scope != TC_SCOPE_SHARED &&
				v->layout.kind == TC_LAYOUT_SMEM;
		if (!fallback && !opt->explain)
			continue;
		TcBuf b;
		tc_buf_init(&b);
		if (!gpu) {
			tc_buf_printf(&b, "%s '%s': an array of the block's frame",
				      scope_word(v), v->name);
		} else if (v->computed) {
			tc_buf_printf(&b, "%s '%s' not held: the gemm that "
				      "reads it computes each element as it "
				      "loads it, by the loop that wrote it",
				      scope_word(v), v->name);
		} else if (v->folded) {
			tc_buf_printf(&b, "%s '%s' not held: the gemm that read "
				      "it reads the f32 fragment it was copied "
				      "from, rounding each element to %s as it "
				      "packs its A operand", scope_word(v),
				      v->name, tc_dtype_name(v->dtype));
		} else if (fallback) {
			tc_buf_printf(&b, "%s '%s' is in shared memory, not "
				      "registers: %s (", scope_word(v), v->name,
				      v->smem_why ? v->smem_why :
				      "no register layout serves its uses");
			smem_details(&b, k, v);
			tc_buf_puts(&b, ")");
		} else if (tc_in_smem(v)) {
			tc_buf_printf(&b, "%s '%s' in shared memory: ",
				      scope_word(v), v->name);
			smem_details(&b, k, v);
		} else {
			tc_buf_printf(&b, "%s '%s' in registers: ", scope_word(v),
				      v->name);
			register_details(&b, v);
		}
		tc_diag(d, TC_NOTE, v->loc, "%s", b.data);
		tc_buf_free(&b);
	}
}

void
tc_explain(const TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	for (int i = 0; i < p->kernels.len; i++)
		explain_kernel(p->kernels.items[i], opt, d);
}
