/*
 * half_pairs.c - runs of small integers converted to f16 or bf16 two at
 * a time in that type's arithmetic, where that gives what f32 gives
 * (CUDA; after runs).
 *
 * A dequantizing loop computes each element of a 16-bit tile in f32 and
 * rounds it once, as the program says:
 *
 *     Ws[n][j] = ((float)Ws4[n][j] - zero[n]) * scale[n];
 *
 * That is about five instructions an element (the nibble, its exact
 * conversion, the subtraction, the product, half a rounding), and in a
 * gemm that computes B as it loads it (fuse_b.c) at decode-sized M they,
 * not the weights' bytes, bind the kernel (docs/perf-gpu.md).  Where the
 * zero is an integer (GPTQ- and AWQ-style formats store it so) the same
 * value is computed exactly in half precision, two elements a register:
 * x - z is an integer of at most 11 bits, exact in f16; its product
 * with an f16 scale has at most 22 significant bits, exact in f32, so the
 * program's value is that product rounded once to f16, which is what
 * mul.rn.f16x2 gives.  tilec::int_pairs takes a word's 8 nibbles into the
 * mantissas of four half pairs (one LOP3 each, the sign flipped),
 * subtracts the bias with the integer (one add or FMA a pair, exact),
 * multiplies by the factor (one a pair) and reorders the pairs into
 * consecutive elements (one PRMT a pair): about two instructions an
 * element, a bit-for-bit copy of the f32 path's results.  The same holds
 * for bf16 with integers of at most 8 bits (bf16's significand), the
 * nibbles shifted into place (three SHF a word more) and every step an
 * fma.rn.bf16x2.  i8 and u8 elements into f16 go likewise, two bytes
 * under 0x64 by one PRMT a pair.
 *
 * Input: a program after runs.  Output: loop.pairs on the innermost loop
 * of a spread nest in runs (runs.c) of whole 32-bit words of i4, i8 or
 * u8, and on the column loop of a gemm's computed B (gemm.b_from, runs of
 * 8), where the loop's value has the form tc_half_pairs_form accepts and
 * its destination is f16 or bf16; loop.pair_why on such a loop (a run of
 * those integers into f16 or bf16) whose value has not, for --explain.
 */
#include "analysis/walk.h"
#include "passes/passes.h"

/* Whether the one assignment of loop l stores a value into an f16 or
 * bf16 shared row and reads a 4- or 8-bit integer along the run: a loop
 * the pass considers at all. */
static const TcStmt *
int_into_half(const TcStmt *l, int run)
{
	const TcVec *body = &l->u.loop.body->u.block.body;
	const TcStmt *as = body->len == 1 ? body->items[0] : NULL;
	if (!as || as->kind != TC_ST_ASSIGN ||
	    as->u.assign.dst->kind != TC_EX_LOAD ||
	    (as->u.assign.dst->u.load.var->dtype != TC_DT_F16 &&
	     as->u.assign.dst->u.load.var->dtype != TC_DT_BF16))
		return NULL;
	int n = 0;
	const TcExpr *loads[8];
	n = tc_run_whole_loads(as->u.assign.dst, as->u.assign.value,
			       l->u.loop.var, run, loads, 8);
	for (int i = 0; i < n; i++)
		if (tc_half_pairs_source(loads[i]->u.load.var->dtype))
			return as;
	return NULL;
}

/* l runs in runs of `run` (its own loop.run, or 8 for a gemm's B). */
static void
mark(TcArena *a, TcStmt *l, int run)
{
	const TcStmt *as = int_into_half(l, run);
	if (!as)
		return;
	TcHalfPairs hp;
	const char *why;
	l->u.loop.pairs = tc_half_pairs_form(a, as, l->u.loop.var, run, &hp,
					     &why);
	l->u.loop.pair_why = why;
}

static void
pairs_stmt(void *ctx, TcStmt *s, int par_depth)
{
	TcArena *a = ctx;
	(void)par_depth;
	if (s->kind == TC_ST_FOR && s->u.loop.run >= 4)
		mark(a, s, s->u.loop.run);
	else if (s->kind == TC_ST_GEMM && s->u.gemm.b_from) {
		TcStmt *outer = s->u.gemm.b_from;
		mark(a, outer->u.loop.body->u.block.body.items[0], 8);
	}
}

bool
tc_half_pairs(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	if (opt->no_half_pairs)
		return true;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		tc_walk_stmts(k->body, 0, pairs_stmt, a);
	}
	return true;
}
