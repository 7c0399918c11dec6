/*
 * openmp_vec.c - explicit vectors for the element loop of a fused run.
 *
 * Input: a run's main element loop as openmp_fuse.c prints it, the column
 * vars of its nests and the locals the vector pass found varying
 * (passes/cpu_vector.c, TcFusion.lanes).  Output: the same work on
 * TILEC_VL columns at a time, in GNU C vectors (tilec_vf,
 * templates/cpu/tilec_cpu.h), for the columns of the loop that fill whole
 * vectors; the scalar loop does the rest.  Which nests have a vector form
 * and whether the run's loop uses it is the vector pass's; this file
 * prints the statements and expressions, each varying one as a
 * vector and each uniform one as a scalar that GNU C broadcasts.
 *
 * Why: gcc vectorizes the scalar tilec_expf of an `omp simd` loop, but
 * from its scalar form, at ~1.2 cycles per element on Zen 4; the vector
 * form with vscalefps takes 0.7, and in softmax exp is half the work.
 * A vector variant the compiler calls (`declare simd`) is not inlined and
 * gains nothing.
 *
 * An expression varies across the lanes when it reads a buffer at the
 * nest's column index (the last index, exactly the column var), an
 * element kept in registers, or a local the pass found varying.
 */
#include "openmp.h"

#include <string.h>

/* Functions with a vector form, by the scalar one. */
static const char *
vector_func(TcFunc fn)
{
	switch (fn) {
	case TC_FN_EXPF: return "tilec_vexpf";
	case TC_FN_EXP2F: return "tilec_vexp2f";
	case TC_FN_TANHF: return "tilec_vtanhf";
	case TC_FN_SQRTF: return "tilec_vsqrtf";
	case TC_FN_RSQRTF: return "tilec_vrsqrtf";
	case TC_FN_FABSF: return "tilec_vfabsf";
	case TC_FN_FMAF: return "tilec_vfmaf";
	case TC_FN_FMAXF: return "tilec_vfmaxf";
	case TC_FN_FMINF: return "tilec_vfminf";
	case TC_FN_FLOORF: return "tilec_vfloorf";
	case TC_FN_CEILF: return "tilec_vceilf";
	case TC_FN_TRUNCF: return "tilec_vtruncf";
	case TC_FN_RINTF: return "tilec_vrintf";
	default: return NULL;
	}
}

void
tc_omp_vec_columns(Emitter *E, const TcVar *const *cols, int n)
{
	E->nvcol = 0;
	for (int i = 0; i < n && E->nvcol < TC_OMP_VEC_COLS; i++)
		E->vcol[E->nvcol++] = cols[i];
	memset(E->vector, 0, sizeof(bool) * (size_t)E->k->vars.len);
}

static bool
is_column(const Emitter *E, const TcExpr *e)
{
	if (e->kind != TC_EX_VAR)
		return false;
	for (int i = 0; i < E->nvcol; i++)
		if (E->vcol[i] == e->u.var)
			return true;
	return false;
}

static bool
column_node(const TcExpr *e, const void *arg)
{
	return is_column(arg, e);
}

static bool
mentions_column(const Emitter *E, const TcExpr *e)
{
	return tc_omp_count_nodes(e, NULL,
				  (Count){ .expr = column_node, .arg = E }) > 0;
}

/* A load at the column: the last index is a column var, no other index
 * mentions one. */
static bool
column_load(const Emitter *E, const TcExpr *e)
{
	const TcVar *v = e->u.load.var;
	if (v->rank == 0 || !is_column(E, e->u.load.idx[v->rank - 1]))
		return false;
	for (int d = 0; d < v->rank - 1; d++)
		if (mentions_column(E, e->u.load.idx[d]))
			return false;
	return true;
}

bool
tc_omp_vec_varies(const Emitter *E, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT:
	case TC_EX_FLOAT:
		return false;
	case TC_EX_VAR: /* a tunable is uniform (and indexed apart) */
		return e->u.var->kind != TC_VAR_TUNABLE &&
		       E->vector[e->u.var->index];
	case TC_EX_LOAD:
		return (E->elided && E->elided[e->u.load.var->index]) ||
		       column_load(E, e);
	case TC_EX_BINARY:
		return tc_omp_vec_varies(E, e->u.bin.lhs) ||
		       tc_omp_vec_varies(E, e->u.bin.rhs);
	case TC_EX_UNARY:
		return tc_omp_vec_varies(E, e->u.un.arg);
	case TC_EX_SELECT:
		return tc_omp_vec_varies(E, e->u.sel.cond) ||
		       tc_omp_vec_varies(E, e->u.sel.then) ||
		       tc_omp_vec_varies(E, e->u.sel.els);
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (tc_omp_vec_varies(E, e->u.call.args[i]))
				return true;
		return false;
	case TC_EX_CAST:
		return tc_omp_vec_varies(E, e->u.cast.arg);
	default:
		return false;
	}
}

const char *
tc_omp_vec_func(const Emitter *E, const TcExpr *call)
{
	if (!E->vec || !tc_omp_vec_varies(E, call))
		return NULL;
	return vector_func(call->u.call.fn);
}

bool
tc_omp_vec_call_arg(TcCPrinter *pr, const TcExpr *call, int i)
{
	Emitter *E = pr->ctx;
	const TcExpr *arg = call->u.call.args[i];
	if (!tc_omp_vec_func(E, call) || tc_omp_vec_varies(E, arg))
		return false;
	tc_buf_puts(pr->out, "tilec_vsplat(");
	tc_c_expr_prec(pr, arg, TC_PREC_COMMA + 1);
	tc_buf_puts(pr->out, ")");
	return true;
}

/* e as a vector: itself where it varies, else broadcast. */
static void
print_lanes(TcCPrinter *pr, const TcExpr *e)
{
	if (tc_omp_vec_varies(pr->ctx, e)) {
		tc_c_expr_prec(pr, e, TC_PREC_COMMA + 1);
		return;
	}
	tc_buf_puts(pr->out, "tilec_vsplat(");
	tc_c_expr_prec(pr, e, TC_PREC_COMMA + 1);
	tc_buf_puts(pr->out, ")");
}

/* Condition e as a lane mask (-1 where it holds, 0 where not): a varying
 * comparison is one already (GNU C vector comparisons), parenthesized;
 * && and || become & and | (parenthesized where nested), ! becomes ~; a
 * uniform condition, 0 or 1, is negated to 0 or -1 and broadcast. */
static void
print_mask(TcCPrinter *pr, const TcExpr *e, bool nested)
{
	TcBuf *b = pr->out;
	if (!tc_omp_vec_varies(pr->ctx, e)) {
		tc_buf_puts(b, "-(int32_t)(");
		tc_c_expr(pr, e);
		tc_buf_puts(b, ")");
		return;
	}
	if (e->kind == TC_EX_UNARY && e->u.un.op == TC_UOP_NOT) {
		tc_buf_puts(b, "~");
		print_mask(pr, e->u.un.arg, true);
		return;
	}
	if (e->kind == TC_EX_BINARY &&
	    (e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR)) {
		tc_buf_puts(b, nested ? "(" : "");
		print_mask(pr, e->u.bin.lhs, true);
		tc_buf_puts(b, e->u.bin.op == TC_OP_LAND ? " & " : " | ");
		print_mask(pr, e->u.bin.rhs, true);
		tc_buf_puts(b, nested ? ")" : "");
		return;
	}
	tc_buf_puts(b, "(");
	tc_c_expr(pr, e);
	tc_buf_puts(b, ")");
}

/* A select that varies over the lanes, printed on vectors: C's ?: under
 * a uniform condition, else tilec_vselect of the condition's lane mask
 * (the vector pass let only comparisons of f32 values, &&, || and !
 * into it); false for anything else. */
bool
tc_omp_vec_expr(TcCPrinter *pr, const TcExpr *e)
{
	Emitter *E = pr->ctx;
	TcBuf *b = pr->out;
	if (!E->vec || e->kind != TC_EX_SELECT || !tc_omp_vec_varies(E, e))
		return false;
	bool mask = tc_omp_vec_varies(E, e->u.sel.cond);
	if (mask) {
		tc_buf_puts(b, "tilec_vselect(");
		print_mask(pr, e->u.sel.cond, false);
		tc_buf_puts(b, ", ");
	} else {
		tc_buf_puts(b, "(");
		tc_c_expr_prec(pr, e->u.sel.cond, TC_PREC_SELECT + 1);
		tc_buf_puts(b, " ? ");
	}
	print_lanes(pr, e->u.sel.then);
	tc_buf_puts(b, mask ? ", " : " : ");
	print_lanes(pr, e->u.sel.els);
	tc_buf_puts(b, ")");
	return true;
}

bool
tc_omp_vec_load(TcCPrinter *pr, const TcExpr *e)
{
	Emitter *E = pr->ctx;
	const TcVar *v = e->u.load.var;
	if (!E->vec || (E->elided && E->elided[v->index]) ||
	    !column_load(E, e))
		return false;
	tc_buf_puts(pr->out, "tilec_vload(&");
	E->vec = false;
	tc_c_expr(pr, e);
	E->vec = true;
	tc_buf_puts(pr->out, ")");
	return true;
}

const char *
tc_omp_vec_text(Emitter *E, const TcExpr *e)
{
	const char *t = tc_omp_expr_text(E, e, TC_PREC_COMMA + 1);
	if (tc_omp_vec_varies(E, e))
		return t;
	return tc_fmt(E->a, "tilec_vsplat(%s)", t);
}

void
tc_omp_vec_emit_stmt(Emitter *E, const TcStmt *s)
{
	if (s->kind == TC_ST_BLOCK) {
		for (int i = 0; i < s->u.block.body.len; i++)
			tc_omp_vec_emit_stmt(E, s->u.block.body.items[i]);
		return;
	}
	tc_omp_line_directive(E, s->loc);
	if (s->kind == TC_ST_DECL) {
		const TcVar *v = s->u.decl.var;
		const char *type = E->vector[v->index]
			? "tilec_vf" : tc_omp_value_type(v->dtype);
		tc_omp_print_statement(E, tc_fmt(E->a, "%s%s %s =",
						 v->mutated ? "" : "const ", type,
						 v->name),
				       s->u.decl.init, TC_DT_NONE);
		return;
	}
	const TcExpr *dst = s->u.assign.dst;
	const char *val = tc_omp_vec_text(E, s->u.assign.value);
	if (dst->kind == TC_EX_VAR ||
	    (E->elided && E->elided[dst->u.load.var->index])) {
		const char *name = dst->kind == TC_EX_VAR ? dst->u.var->name
							  : dst->u.load.var->name;
		tc_omp_print_text(E, tc_fmt(E->a, "%s =", name), val);
		return;
	}
	E->vec = false;
	const char *args[] = {
		tc_fmt(E->a, "&%s", tc_omp_expr_text(E, dst, TC_PREC_UNARY)),
		NULL,
	};
	E->vec = true;
	args[1] = val;
	tc_omp_print_wrapped(E, "tilec_vstore(", args, 2, ");");
}
