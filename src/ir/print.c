/*
 * print.c - the IR printer: stable, readable text for dumps and golden tests.
 *
 * Input: a program, kernel or expression (any stage of the pipeline).
 * Output: text appended to a TcBuf, one statement per line, nested blocks
 * indented by the buffer.  Each statement ends with its source position as
 * a `// line:col` comment; tunables and kernels name their file.
 *
 * The text is a contract with tests/golden/: change it only on purpose and
 * update the expectations in the same commit.  Names come from ir.c's
 * tables.  Expressions get the fewest parentheses C's precedence allows
 * while keeping the tree's shape (a - (b - c) keeps its parentheses), and
 * float literals are printed exactly: %.9g and an `f` for f32, %.17g for
 * f64, always with a '.' or an exponent; an i64 literal ends in LL.
 * Everything read.c needs to rebuild the IR is printed.  The printer tolerates malformed
 * IR (NULL children print as `<null>`) so the verifier's users can dump
 * what they are looking at.
 */
#include "ir/tilec_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Precedences above the binary operators' (TC_BINOPS go up to 13). */
enum {
	PREC_SELECT = 3,   /* c ? a : b, right associative */
	PREC_UNARY = 14,   /* -x, !x, ~x, (type)x */
	PREC_POSTFIX = 15, /* calls, loads, names, literals */
};

static int
expr_prec(const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_BINARY:
		return e->u.bin.op >= 0 && e->u.bin.op < TC_OP_COUNT ?
			       tc_binop_prec(e->u.bin.op) : 0;
	case TC_EX_SELECT: return PREC_SELECT;
	case TC_EX_UNARY:
	case TC_EX_CAST: return PREC_UNARY;
	case TC_EX_INT: return e->u.ival < 0 ? PREC_UNARY : PREC_POSTFIX;
	case TC_EX_FLOAT:
		return signbit(e->u.fval) ? PREC_UNARY : PREC_POSTFIX;
	default: return PREC_POSTFIX;
	}
}

static void print_prec(TcBuf *b, const TcExpr *e, int min_prec);

/* Names of table entries, tolerating out-of-range values in broken IR. */
static const char *
dtype_str(TcDtype t)
{
	return t >= 0 && t < TC_DT_COUNT ? tc_dtype_name(t) : "<dtype>";
}

static const char *
binop_str(TcBinop op)
{
	return op >= 0 && op < TC_OP_COUNT ? tc_binop_name(op) : "<op>";
}

static const char *
unop_str(TcUnop op)
{
	return op >= 0 && op < TC_UOP_COUNT ? tc_unop_name(op) : "<op>";
}

static const char *
func_str(TcFunc fn)
{
	return fn >= 0 && fn < TC_FN_COUNT ? tc_func_name(fn) : "<func>";
}

static const char *
var_name(const TcVar *v)
{
	return v && v->name ? v->name : "<null>";
}

/* A float literal that reads back as the same value, with C's suffix
 * for an f32 one (1.5f; inff and nanf for the others). */
static void
print_float(TcBuf *b, double v, TcDtype t)
{
	char s[64];
	const char *suffix = t == TC_DT_F64 ? "" : "f";
	if (isnan(v)) {
		tc_buf_printf(b, "nan%s", suffix);
		return;
	}
	if (isinf(v)) {
		tc_buf_printf(b, "%sinf%s", v < 0 ? "-" : "", suffix);
		return;
	}
	snprintf(s, sizeof s, t == TC_DT_F64 ? "%.17g" : "%.9g", v);
	tc_buf_puts(b, s);
	if (!strpbrk(s, ".e"))
		tc_buf_puts(b, ".0");
	tc_buf_puts(b, suffix);
}

static void
print_args(TcBuf *b, TcExpr *const *args, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			tc_buf_puts(b, ", ");
		print_prec(b, args ? args[i] : NULL, 0);
	}
}

/* Print e, parenthesized if it binds less tightly than min_prec. */
static void
print_prec(TcBuf *b, const TcExpr *e, int min_prec)
{
	if (!e) {
		tc_buf_puts(b, "<null>");
		return;
	}
	bool paren = expr_prec(e) < min_prec;
	if (paren)
		tc_buf_puts(b, "(");
	switch (e->kind) {
	case TC_EX_INT:
		tc_buf_printf(b, "%lld%s", e->u.ival,
			      e->dtype == TC_DT_I64 ? "LL" : "");
		break;
	case TC_EX_FLOAT:
		print_float(b, e->u.fval, e->dtype);
		break;
	case TC_EX_VAR:
		tc_buf_puts(b, var_name(e->u.var));
		break;
	case TC_EX_SMS:
		tc_buf_puts(b, "device.sms");
		break;
	case TC_EX_BINARY: {
		int p = expr_prec(e);
		print_prec(b, e->u.bin.lhs, p);
		tc_buf_printf(b, " %s ", binop_str(e->u.bin.op));
		print_prec(b, e->u.bin.rhs, p + 1);
		break;
	}
	case TC_EX_UNARY: {
		tc_buf_puts(b, unop_str(e->u.un.op));
		/* -(-x) rather than --x. */
		const TcExpr *arg = e->u.un.arg;
		bool nested = arg && expr_prec(arg) == PREC_UNARY &&
			      arg->kind != TC_EX_CAST;
		print_prec(b, arg, nested ? PREC_POSTFIX : PREC_UNARY);
		break;
	}
	case TC_EX_SELECT:
		print_prec(b, e->u.sel.cond, PREC_SELECT + 1);
		tc_buf_puts(b, " ? ");
		print_prec(b, e->u.sel.then, PREC_SELECT + 1);
		tc_buf_puts(b, " : ");
		print_prec(b, e->u.sel.els, PREC_SELECT);
		break;
	case TC_EX_CALL:
		tc_buf_printf(b, "%s(", func_str(e->u.call.fn));
		print_args(b, e->u.call.args, e->u.call.nargs);
		tc_buf_puts(b, ")");
		break;
	case TC_EX_CAST:
		tc_buf_printf(b, "(%s)", dtype_str(e->dtype));
		print_prec(b, e->u.cast.arg, PREC_UNARY);
		break;
	case TC_EX_LOAD: {
		const TcVar *v = e->u.load.var;
		tc_buf_puts(b, var_name(v));
		int rank = v ? v->rank : 0;
		for (int i = 0; i < rank && i < TC_MAX_RANK; i++) {
			tc_buf_puts(b, "[");
			print_prec(b, e->u.load.idx[i], 0);
			tc_buf_puts(b, "]");
		}
		break;
	}
	default:
		tc_buf_printf(b, "<expr kind %d>", (int)e->kind);
		break;
	}
	if (paren)
		tc_buf_puts(b, ")");
}

void
tc_print_expr(TcBuf *b, const TcExpr *e)
{
	print_prec(b, e, 0);
}

/* The last path component, so dumps do not depend on the working dir. */
static const char *
base_name(const char *path)
{
	if (!path)
		return "?";
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* End a statement line with its source position. */
static void
end_line(TcBuf *b, TcLoc loc)
{
	if (loc.line > 0)
		tc_buf_printf(b, "  // %d:%d", loc.line, loc.col);
	tc_buf_puts(b, "\n");
}

/* `f16[M][K]`: a dtype and a shape. */
static void
print_shape(TcBuf *b, const TcVar *v)
{
	for (int i = 0; i < v->rank && i < TC_MAX_RANK; i++) {
		tc_buf_puts(b, "[");
		print_prec(b, v->shape[i], 0);
		tc_buf_puts(b, "]");
	}
}

/* A whole buffer prints as its name; any other region as
 * `T[origin, ...] dims (d, ...)`. */
static void
print_region(TcBuf *b, const TcRegion *r)
{
	tc_buf_puts(b, var_name(r->var));
	if (r->whole)
		return;
	int rank = r->var ? r->var->rank : 0;
	tc_buf_puts(b, "[");
	for (int i = 0; i < rank && i < TC_MAX_RANK; i++) {
		if (i)
			tc_buf_puts(b, ", ");
		print_prec(b, r->origin[i], 0);
	}
	tc_buf_puts(b, "] dims (");
	for (int i = 0; i < r->ndims && i < TC_MAX_RANK; i++)
		tc_buf_printf(b, "%s%d", i ? ", " : "", r->dims[i]);
	tc_buf_puts(b, ")");
	if (r->rows)
		tc_buf_printf(b, " rows %s", var_name(r->rows));
	if (r->bound[0]) {
		tc_buf_puts(b, " bounded (");
		for (int i = 0; i < TC_MAX_RANK && r->bound[i]; i++) {
			if (i)
				tc_buf_puts(b, ", ");
			print_prec(b, r->bound[i], 0);
		}
		tc_buf_puts(b, ")");
	}
	if (r->mask)
		tc_buf_printf(b, " masked %s", var_name(r->mask));
	/* The bounds pass's result where it asks for a lower test. */
	bool any = false;
	for (int i = 0; r->bounded && i < rank && i < TC_MAX_RANK; i++) {
		if (r->nonneg >> i & 1)
			continue;
		tc_buf_printf(b, "%s%d", any ? ", " : " lower test (", i);
		any = true;
	}
	if (any)
		tc_buf_puts(b, ")");
}

static void print_stmt(TcBuf *b, const TcKernel *k, const TcStmt *s);
static void print_body(TcBuf *b, const TcKernel *k, const TcStmt *s);

/* The cpu_gemm pass's decision: `, on f32 tilec_gemm_f32_avx512 14 x 32, b
 * packed kc 128` (nothing before the pass or on a GPU). */
static void
print_cpu_gemm(TcBuf *b, const TcCpuGemm *g)
{
	if (g->kind == TC_CPU_GEMM_NONE)
		return;
	if (g->kind == TC_CPU_GEMM_LOOPS) {
		tc_buf_puts(b, ", as loops");
		return;
	}
	tc_buf_printf(b, ", on %s %s %d x %d", tc_cpu_gemm_name(g->kind),
		      g->helper, g->mr, g->nr);
	if (g->pack_b)
		tc_buf_printf(b, ", b packed kc %d", g->kc);
}

/* One op of a run: `load x`, `store x by rows`, `map`, `reduce x into r`. */
static void
print_fuse_op(TcBuf *b, const TcFuseOp *op)
{
	static const char *const words[] = {
		[TC_FUSE_LOAD] = "load", [TC_FUSE_STORE] = "store",
		[TC_FUSE_MAP] = "map", [TC_FUSE_REDUCE] = "reduce",
	};
	tc_buf_puts(b, op->kind >= TC_FUSE_LOAD && op->kind <= TC_FUSE_REDUCE
			       ? words[op->kind] : "<op>");
	if (op->kind != TC_FUSE_MAP)
		tc_buf_printf(b, " %s", var_name(op->buf));
	if (op->kind == TC_FUSE_REDUCE && op->s)
		tc_buf_printf(b, " into %s", var_name(op->s->u.reduce.dst.var));
	if (op->helper)
		tc_buf_puts(b, " by rows");
	/* The passes' marks, in one parenthesis. */
	const struct {
		bool on;
		const char *word;
	} marks[] = {
		{ op->vector, "vector" },
		{ op->partial_rows, "partial rows" },
		{ op->partial_cols, "partial cols" },
		{ op->ends_main, "ends main loop" },
		{ op->zero_past, "zero past main loop" },
		{ op->streamed, "streamed" },
		{ op->next_block, "next block" },
	};
	const char *sep = " (";
	for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
		if (marks[i].on) {
			tc_buf_printf(b, "%s%s", sep, marks[i].word);
			sep = ", ";
		}
	if (sep[0] == ',')
		tc_buf_puts(b, ")");
}

/* The fuse pass's run that starts at statement i of block, as a line
 * before it: `run N of M statements over R x C: ops; recomputes B of run
 * F; registers V, ...; lanes V, ...; edges marked; vector loop; next
 * block at [R, C] by N; dead`, then each nest's main version (the edge
 * pass) as `run N main loop: map at L:C { ... }` (`: nothing` for an
 * empty one). */
static void
print_fusion(TcBuf *b, const TcKernel *k, const TcStmt *block, int i)
{
	for (int f = 0; k && f < k->fusions.len; f++) {
		const TcFusion *F = k->fusions.items[f];
		if (F->block != block || F->first != i)
			continue;
		tc_buf_printf(b, "run %d of %d statements over %lld x %lld:", f,
			      F->nstmts, F->rows, F->cols);
		for (int o = 0; o < F->n; o++) {
			tc_buf_puts(b, o ? ", " : " ");
			if (o < F->nagain)
				tc_buf_puts(b, "again ");
			print_fuse_op(b, &F->ops[o]);
			/* Which map of the run it recomputes from. */
			const TcFuseOp *op = &F->ops[o];
			if (o < F->nagain && op->kind == TC_FUSE_MAP && op->s &&
			    op->s->loc.line > 0)
				tc_buf_printf(b, " at %d:%d", op->s->loc.line,
					      op->s->loc.col);
		}
		for (int r = 0; r < F->nrecomputed; r++)
			tc_buf_printf(b, "; recomputes %s of run %d",
				      var_name(F->again[r]), F->from[r]);
		const char *sep = "; registers ";
		for (int v = 0; F->elided && v < k->vars.len; v++)
			if (F->elided[v]) {
				tc_buf_printf(b, "%s%s", sep,
					      var_name(k->vars.items[v]));
				sep = ", ";
			}
		sep = "; lanes ";
		for (int v = 0; F->lanes && v < k->vars.len; v++)
			if (F->lanes[v]) {
				tc_buf_printf(b, "%s%s", sep,
					      var_name(k->vars.items[v]));
				sep = ", ";
			}
		if (F->edged)
			tc_buf_puts(b, "; edges marked");
		if (F->vec)
			tc_buf_puts(b, "; vector loop");
		if (F->next[0] && F->next[1]) {
			tc_buf_puts(b, "; next block at [");
			tc_print_expr(b, F->next[0]);
			tc_buf_puts(b, ", ");
			tc_print_expr(b, F->next[1]);
			tc_buf_printf(b, "] by %lld", F->next_elems);
		}
		if (F->dead)
			tc_buf_puts(b, "; dead");
		tc_buf_puts(b, "\n");
		for (int o = 0; o < F->n; o++) {
			const TcFuseOp *op = &F->ops[o];
			if (op->kind != TC_FUSE_MAP || !op->main)
				continue;
			tc_buf_printf(b, "run %d main loop: map", f);
			if (op->s && op->s->loc.line > 0)
				tc_buf_printf(b, " at %d:%d", op->s->loc.line,
					      op->s->loc.col);
			if (op->main->kind == TC_ST_BLOCK &&
			    op->main->u.block.body.len == 0) {
				tc_buf_puts(b, ": nothing\n");
				continue;
			}
			tc_buf_puts(b, " {\n");
			print_body(b, k, op->main);
			tc_buf_puts(b, "\n");
		}
	}
}

/* The statements of a BLOCK (or a lone statement), indented, and the
 * closing brace.  The opening brace ends the caller's line. */
static void
print_body(TcBuf *b, const TcKernel *k, const TcStmt *s)
{
	b->indent++;
	if (s && s->kind == TC_ST_BLOCK) {
		for (int i = 0; i < s->u.block.body.len; i++) {
			print_fusion(b, k, s, i);
			print_stmt(b, k, s->u.block.body.items[i]);
		}
	} else {
		print_stmt(b, k, s);
	}
	b->indent--;
	tc_buf_puts(b, "}");
}

static const char *
loop_word(TcLoopKind k)
{
	switch (k) {
	case TC_LOOP_SERIAL: return "for";
	case TC_LOOP_PARALLEL: return "parallel";
	case TC_LOOP_PIPELINED: return "pipelined";
	default: return "<loop>";
	}
}

static bool
is_int(const TcExpr *e, long long v)
{
	return e && e->kind == TC_EX_INT && e->u.ival == v;
}

static void
print_loop(TcBuf *b, const TcKernel *k, const TcStmt *s)
{
	tc_buf_printf(b, "%s %s in ", loop_word(s->u.loop.kind),
		      var_name(s->u.loop.var));
	print_prec(b, s->u.loop.begin, 0);
	tc_buf_puts(b, " .. ");
	print_prec(b, s->u.loop.end, 0);
	if (!is_int(s->u.loop.step, 1)) {
		tc_buf_puts(b, " step ");
		print_prec(b, s->u.loop.step, 0);
	}
	if (s->u.loop.kind == TC_LOOP_PIPELINED) {
		tc_buf_puts(b, ", stages ");
		print_prec(b, s->u.loop.stages, 0);
		if (s->u.loop.async_copies > 0)
			tc_buf_printf(b, ", async copies %d%s",
				      s->u.loop.async_copies,
				      s->u.loop.copies_in_gemm ? " in gemm" : "");
		if (s->u.loop.barriers > 0)
			tc_buf_printf(b, ", barriers +%lld", s->u.loop.barriers);
	}
	if (s->u.loop.kind == TC_LOOP_PARALLEL && s->u.loop.anchor)
		tc_buf_printf(b, " over %s dim %d",
			      var_name(s->u.loop.anchor),
			      s->u.loop.anchor_dim);
	if (s->u.loop.row_vec) {
		tc_buf_printf(b, ", rows in vectors of %d where ", s->u.loop.row_vec);
		if (s->u.loop.row_in)
			print_prec(b, s->u.loop.row_in, 0);
		else
			tc_buf_puts(b, "true");
		if (s->u.loop.col_in) {
			tc_buf_puts(b, ", columns while ");
			print_prec(b, s->u.loop.col_in, 0);
		}
	}
	if (s->u.loop.threads == TC_THREADS_SPREAD && s->u.loop.run > 1)
		tc_buf_printf(b, " spread in runs of %d", s->u.loop.run);
	else if (s->u.loop.threads == TC_THREADS_SPREAD)
		tc_buf_puts(b, " spread");
	else if (s->u.loop.threads == TC_THREADS_SERIAL)
		tc_buf_puts(b, " serial in thread");
	else if (s->u.loop.threads == TC_THREADS_PEERS)
		tc_buf_puts(b, " spread over peers");
	if (s->u.loop.pairs)
		tc_buf_puts(b, " in half pairs");
	if (s->u.loop.transpose)
		tc_buf_puts(b, " transposed");
	tc_buf_puts(b, " {");
	end_line(b, s->loc);
	print_body(b, k, s->u.loop.body);
	tc_buf_puts(b, "\n");
}

static void
print_if(TcBuf *b, const TcKernel *k, const TcStmt *s)
{
	tc_buf_puts(b, "if ");
	print_prec(b, s->u.cond.cond, 0);
	tc_buf_puts(b, s->u.cond.box ? ", box {" : " {");
	end_line(b, s->loc);
	print_body(b, k, s->u.cond.then);
	if (s->u.cond.els) {
		tc_buf_puts(b, " else {\n");
		print_body(b, k, s->u.cond.els);
	}
	tc_buf_puts(b, "\n");
}

/* What the GPU scheduling passes decided about a buffer, if anything:
 * ` (layout mma 2x2 warps of 4x8 tiles, stages 3, pad 8, smem +0)`; a
 * swizzled buffer says `swizzled` where a padded one says `pad N`, and
 * `swizzled for columns, N rows a group` where it is read by columns. */
static void
print_schedule(TcBuf *b, const TcKernel *k, const TcVar *v)
{
	const char *sep = " (";
	bool matrix = tc_layout_is_matrix(v->layout.kind);
	if (matrix || v->layout.kind == TC_LAYOUT_BLOCKED) {
		tc_buf_printf(b, "%slayout %s", sep,
			      v->layout.kind == TC_LAYOUT_MMA ? "mma" :
			      v->layout.kind == TC_LAYOUT_MFMA ? "mfma" :
			      v->layout.kind == TC_LAYOUT_WGMMA ? "wgmma" :
			      "blocked");
		for (int d = 0; d < v->rank; d++) {
			const TcDist *t = &v->layout.dim[d];
			tc_buf_printf(b, " [class %d %s x%d", t->id,
				      t->axis ? "cols" : "rows", t->count);
			if (matrix)
				tc_buf_printf(b, ", %dx%d %s, %d tile%s",
					      v->layout.warps_m, v->layout.warps_n,
					      v->layout.kind == TC_LAYOUT_WGMMA ?
					      "warpgroups" : "warps", t->tiles,
					      t->tiles == 1 ? "" : "s");
			else
				tc_buf_printf(b, ", %dx%d threads, vec %d", t->tr,
					      t->tc, t->vec);
			tc_buf_puts(b, "]");
		}
		sep = ", ";
	} else if (v->layout.kind == TC_LAYOUT_SMEM) {
		tc_buf_printf(b, "%slayout smem", sep);
		sep = ", ";
	}
	if (v->stages > 1) {
		tc_buf_printf(b, "%sstages %d", sep, v->stages);
		sep = ", ";
	}
	if (v->pad > 0) {
		tc_buf_printf(b, "%spad %d", sep, v->pad);
		sep = ", ";
	}
	if (v->swizzle) {
		tc_buf_printf(b, "%sswizzled%s", sep, v->panels ? " panels" : "");
		if (v->swizzle_rows)
			tc_buf_printf(b, " for columns, %d rows a group", v->swizzle_rows);
		sep = ", ";
	}
	/* Offsets mean something once shared memory has been planned. */
	if (k && k->smem_bytes > 0 && tc_in_smem(v)) {
		tc_buf_printf(b, "%ssmem +%lld", sep, v->smem_offset);
		sep = ", ";
	}
	if (v->stored) {
		tc_buf_printf(b, "%sas stored", sep);
		sep = ", ";
	}
	if (v->unstored) {
		tc_buf_printf(b, "%snot stored", sep);
		sep = ", ";
	}
	if (v->computed) {
		tc_buf_printf(b, "%scomputed by its gemm", sep);
		sep = ", ";
	}
	if (sep[0] == ',')
		tc_buf_puts(b, ")");
}

static void
print_decl(TcBuf *b, const TcKernel *k, const TcStmt *s)
{
	const TcVar *v = s->u.decl.var;
	if (!v) {
		tc_buf_puts(b, "decl <null>");
	} else if (v->kind == TC_VAR_BUFFER) {
		tc_buf_printf(b, "%s %s %s",
			      v->scope >= 0 && v->scope < TC_SCOPE_COUNT ?
			      tc_scope_name(v->scope) : "<scope>",
			      dtype_str(v->dtype), var_name(v));
		print_shape(b, v);
		print_schedule(b, k, v);
	} else {
		tc_buf_printf(b, "%s %s", dtype_str(v->dtype), var_name(v));
	}
	if (s->u.decl.init) {
		tc_buf_puts(b, " = ");
		print_prec(b, s->u.decl.init, 0);
	}
	end_line(b, s->loc);
}

/* A strided copy's plan: `dst <- src from [first..] advance A`. */
static void
print_plan(TcBuf *b, const TcStmt *c)
{
	if (!c || !c->u.copy.src.var) {
		tc_buf_puts(b, "<null>");
		return;
	}
	print_region(b, &c->u.copy.dst);
	tc_buf_puts(b, " <- ");
	print_region(b, &c->u.copy.src);
	tc_buf_puts(b, " first [");
	for (int i = 0; i < c->u.copy.src.var->rank && i < TC_MAX_RANK; i++) {
		if (i)
			tc_buf_puts(b, ", ");
		print_prec(b, c->u.copy.first[i], 0);
	}
	tc_buf_puts(b, "] advance ");
	print_prec(b, c->u.copy.advance, 0);
}

static void
print_stmt(TcBuf *b, const TcKernel *k, const TcStmt *s)
{
	if (!s) {
		tc_buf_puts(b, "<null>\n");
		return;
	}
	if (s->note)
		tc_buf_printf(b, "// %s\n", s->note);
	if (s->each_block)
		tc_buf_puts(b, "each block: ");
	switch (s->kind) {
	case TC_ST_BLOCK:
		tc_buf_puts(b, s->u.block.cite ? "cite {" : "{");
		end_line(b, s->loc);
		print_body(b, k, s);
		tc_buf_puts(b, "\n");
		return;
	case TC_ST_DECL:
		print_decl(b, k, s);
		return;
	case TC_ST_ASSIGN:
		print_prec(b, s->u.assign.dst, 0);
		tc_buf_puts(b, " = ");
		print_prec(b, s->u.assign.value, 0);
		break;
	case TC_ST_FOR:
		print_loop(b, k, s);
		return;
	case TC_ST_IF:
		print_if(b, k, s);
		return;
	case TC_ST_COPY:
	case TC_ST_ASYNC_COPY:
		tc_buf_puts(b, s->kind == TC_ST_COPY ? "copy " : "async_copy ");
		print_region(b, &s->u.copy.dst);
		if (s->u.copy.stage) {
			tc_buf_puts(b, " stage ");
			print_prec(b, s->u.copy.stage, 0);
		}
		tc_buf_puts(b, " <- ");
		print_region(b, &s->u.copy.src);
		if (s->u.copy.lower != TC_COPY_ANY)
			tc_buf_printf(b, ", %s", tc_copy_lower_name(s->u.copy.lower));
		if (s->u.copy.launch_aligned)
			tc_buf_puts(b, " aligned_launch");
		if (s->u.copy.stream)
			tc_buf_puts(b, " streamed");
		if (s->u.copy.advance) {
			tc_buf_puts(b, " first [");
			for (int i = 0; s->u.copy.src.var &&
					i < s->u.copy.src.var->rank &&
					i < TC_MAX_RANK; i++) {
				if (i)
					tc_buf_puts(b, ", ");
				print_prec(b, s->u.copy.first[i], 0);
			}
			tc_buf_puts(b, "] advance ");
			print_prec(b, s->u.copy.advance, 0);
		}
		if (s->u.copy.plan) {
			tc_buf_printf(b, " %s iteration ", var_name(s->u.copy.plan));
			print_prec(b, s->u.copy.iter, 0);
		}
		if (s->u.copy.lower == TC_COPY_TMA_STORE) {
			tc_buf_printf(b, " via %s at smem +%lld (%d box%s)",
				      s->u.copy.tmap ? s->u.copy.tmap->name :
						       "<null>",
				      s->u.copy.staging, s->u.copy.staged,
				      s->u.copy.staged == 1 ? "" : "es");
			if (s->u.copy.sync)
				tc_buf_printf(b, ", barriers of threads 0 .. %lld",
					      s->u.copy.sync);
		} else if (s->u.copy.tmap) {
			tc_buf_printf(b, " via %s on %s", s->u.copy.tmap->name,
				      var_name(s->u.copy.bars));
		}
		break;
	case TC_ST_COMMIT_GROUP:
		tc_buf_puts(b, "commit_group");
		break;
	case TC_ST_WAIT_GROUP:
		tc_buf_printf(b, "wait_group %d", s->u.wait.pending);
		break;
	case TC_ST_WGMMA_WAIT:
		tc_buf_printf(b, "wgmma_wait %d %s", s->u.wait.pending,
			      var_name(s->u.wait.acc));
		break;
	case TC_ST_STAGE_VIEW:
		tc_buf_printf(b, "stage_view %s = %s stage ",
			      var_name(s->u.view.var), var_name(s->u.view.of));
		print_prec(b, s->u.view.stage, 0);
		break;
	case TC_ST_COPY_PLAN:
		tc_buf_printf(b, "copy_plan %s = ", var_name(s->u.plan.var));
		print_plan(b, s->u.plan.copy);
		if (s->u.plan.tmap)
			tc_buf_printf(b, " via %s", s->u.plan.tmap->name);
		break;
	case TC_ST_PIPE_SELECT:
		tc_buf_puts(b, "pipe_select aligned(");
		for (int i = 0; i < s->u.select.plans.len; i++)
			tc_buf_printf(b, "%s%s", i ? ", " : "",
				      var_name(s->u.select.plans.items[i]));
		tc_buf_puts(b, s->u.select.launch_aligned ? ") aligned_launch {" : ") {");
		end_line(b, s->loc);
		print_body(b, k, s->u.select.fast);
		if (s->u.select.fallback && s->u.select.fallback->kind == TC_ST_BLOCK &&
		    s->u.select.fallback->u.block.body.len == 0) {
			tc_buf_puts(b, "\n");
			return;
		}
		tc_buf_puts(b, " else {\n");
		print_body(b, k, s->u.select.fallback);
		tc_buf_puts(b, "\n");
		return;
	case TC_ST_STAGE_BAR_INIT:
		tc_buf_printf(b, "stage_bar_init %s, stages %d, full arrivals %lld, "
			      "empty arrivals %lld, smem +%lld",
			      var_name(s->u.bars.var), s->u.bars.stages,
			      s->u.bars.full_arrivals, s->u.bars.empty_arrivals,
			      s->u.bars.offset);
		if (!s->u.bars.copiers)
			tc_buf_puts(b, ", TMA's only");
		else if (s->u.bars.copiers != s->u.bars.full_arrivals)
			tc_buf_printf(b, ", %lld copying threads",
				      s->u.bars.copiers);
		break;
	case TC_ST_STAGE_BAR_ARRIVE:
	case TC_ST_STAGE_BAR_WAIT:
		tc_buf_printf(b, "%s %s %s ", s->kind == TC_ST_STAGE_BAR_WAIT ?
			      "stage_bar_wait" : "stage_bar_arrive",
			      var_name(s->u.bar.bars), s->u.bar.full ? "full" : "empty");
		print_prec(b, s->u.bar.stage, 0);
		if (s->u.bar.parity) {
			tc_buf_puts(b, " parity ");
			print_prec(b, s->u.bar.parity, 0);
		}
		break;
	case TC_ST_ATOMIC_ADD:
		tc_buf_puts(b, "atomic_add ");
		print_region(b, &s->u.copy.dst);
		tc_buf_puts(b, " += ");
		print_region(b, &s->u.copy.src);
		if (s->u.copy.lower != TC_COPY_ANY)
			tc_buf_printf(b, ", %s", tc_copy_lower_name(s->u.copy.lower));
		break;
	case TC_ST_GEMM:
		tc_buf_puts(b, "gemm ");
		print_region(b, &s->u.gemm.c);
		tc_buf_puts(b, " += ");
		if (s->u.gemm.round_a && s->u.gemm.b.var)
			tc_buf_printf(b, "(%s)",
				      tc_dtype_name(s->u.gemm.b.var->dtype));
		print_region(b, &s->u.gemm.a);
		if (s->u.gemm.trans_a)
			tc_buf_puts(b, "^T");
		tc_buf_puts(b, " * ");
		print_region(b, &s->u.gemm.b);
		if (s->u.gemm.trans_b)
			tc_buf_puts(b, "^T");
		if (s->u.gemm.wgmma_n)
			tc_buf_printf(b, " by wgmma n%d%s", s->u.gemm.wgmma_n,
				      s->u.gemm.wgmma_promote ? " promoted" : "");
		if (s->u.gemm.wgmma_pending)
			tc_buf_printf(b, ", %d in flight",
				      s->u.gemm.wgmma_pending);
		print_cpu_gemm(b, &s->u.gemm.cpu);
		if (s->u.gemm.b_from) {
			tc_buf_printf(b, ", %s from {",
				      s->u.gemm.b.var ? s->u.gemm.b.var->name : "?");
			end_line(b, s->loc);
			print_body(b, k, s->u.gemm.b_from);
			tc_buf_puts(b, "\n");
			return;
		}
		if (s->u.gemm.issue) {
			tc_buf_puts(b, ", issuing {");
			end_line(b, s->loc);
			print_body(b, k, s->u.gemm.issue);
			tc_buf_puts(b, "\n");
			return;
		}
		break;
	case TC_ST_FILL:
		tc_buf_puts(b, "fill ");
		print_region(b, &s->u.fill.dst);
		tc_buf_puts(b, ", ");
		print_prec(b, s->u.fill.value, 0);
		break;
	case TC_ST_REDUCE:
		tc_buf_printf(b, "reduce %s ", s->u.reduce.op >= 0 &&
				  s->u.reduce.op < TC_RED_COUNT ?
				  tc_reduce_name(s->u.reduce.op) : "<op>");
		print_region(b, &s->u.reduce.dst);
		tc_buf_puts(b, " <- ");
		print_region(b, &s->u.reduce.src);
		tc_buf_printf(b, ", dim %d", s->u.reduce.dim);
		if (s->u.reduce.accumulate)
			tc_buf_puts(b, ", accumulate");
		break;
	case TC_ST_REDUCE_ALL:
		tc_buf_printf(b, "%s = reduce_all %s ",
			      s->u.reduce_all.dst ? s->u.reduce_all.dst->name
						  : "<null>",
			      s->u.reduce_all.op >= 0 &&
			      s->u.reduce_all.op < TC_RED_COUNT ?
			      tc_reduce_name(s->u.reduce_all.op) : "<op>");
		print_region(b, &s->u.reduce_all.src);
		break;
	case TC_ST_ARG_REDUCE:
		tc_buf_printf(b, "reduce %s ", s->u.arg_reduce.topk ? "topk" :
			      s->u.arg_reduce.min ? "argmin" : "argmax");
		print_region(b, &s->u.arg_reduce.dst);
		tc_buf_puts(b, ", ");
		print_region(b, &s->u.arg_reduce.index);
		tc_buf_puts(b, " <- ");
		print_region(b, &s->u.arg_reduce.src);
		tc_buf_printf(b, ", dim %d", s->u.arg_reduce.dim);
		break;
	case TC_ST_BARRIER:
		tc_buf_puts(b, "barrier");
		if (s->u.barrier.threads)
			tc_buf_printf(b, " of threads 0 .. %lld",
				      s->u.barrier.threads);
		break;
	case TC_ST_ROLES:
		tc_buf_printf(b, "roles producer threads %lld .. %lld (one "
			      "thread, %d registers) {", s->u.roles.threads,
			      s->u.roles.threads + s->u.roles.producer_threads,
			      s->u.roles.producer_regs);
		end_line(b, s->loc);
		print_body(b, k, s->u.roles.producer);
		tc_buf_printf(b, " consumer threads 0 .. %lld (%d registers, %d "
			      "block%s per SM) {\n", s->u.roles.threads,
			      s->u.roles.consumer_regs, s->u.roles.blocks,
			      s->u.roles.blocks == 1 ? "" : "s");
		print_body(b, k, s->u.roles.consumer);
		tc_buf_puts(b, "\n");
		return;
	case TC_ST_TILES:
		tc_buf_puts(b, "tiles from the block's index in steps of the grid {");
		end_line(b, s->loc);
		print_body(b, k, s->u.tiles.body);
		tc_buf_puts(b, "\n");
		return;
	case TC_ST_PREFETCH:
		tc_buf_puts(b, "prefetch ");
		print_region(b, &s->u.copy.src);
		tc_buf_puts(b, " for ");
		print_region(b, &s->u.copy.dst);
		break;
	default:
		tc_buf_printf(b, "<stmt kind %d>", (int)s->kind);
		break;
	}
	end_line(b, s->loc);
}

static void
print_param(TcBuf *b, const TcVar *v)
{
	tc_buf_printf(b, "%s: ", var_name(v));
	if (v->kind == TC_VAR_TENSOR) {
		if (v->is_const)
			tc_buf_puts(b, "const ");
		tc_buf_puts(b, dtype_str(v->dtype));
		print_shape(b, v);
		if (v->index64)
			tc_buf_puts(b, " index64");
	} else {
		tc_buf_puts(b, dtype_str(v->dtype));
	}
}

/* Whether the bounds pass has marked k's regions (region->bounded):
 * then a region prints the dims that keep their lower test. */
static TcVisit
find_bounded(void *ctx, const TcStmt *s)
{
	bool *found = ctx;
	const TcRegion *r;
	switch (s->kind) {
	case TC_ST_COPY: case TC_ST_ASYNC_COPY: case TC_ST_ATOMIC_ADD:
	case TC_ST_PREFETCH:
		r = &s->u.copy.dst;
		break;
	case TC_ST_GEMM: r = &s->u.gemm.c; break;
	case TC_ST_FILL: r = &s->u.fill.dst; break;
	case TC_ST_REDUCE: r = &s->u.reduce.dst; break;
	case TC_ST_REDUCE_ALL: r = &s->u.reduce_all.src; break;
	case TC_ST_ARG_REDUCE: r = &s->u.arg_reduce.dst; break;
	default: return TC_VISIT_INTO;
	}
	if (r->bounded) {
		*found = true;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

static bool
bounds_marked(const TcKernel *k)
{
	bool found = false;
	TcVisitor v = { .stmt = find_bounded, .ctx = &found };
	if (k->body)
		tc_stmt_visit(k->body, &v);
	return found;
}

void
tc_print_kernel(TcBuf *b, const TcKernel *k)
{
	static const char dim_names[3] = { 'x', 'y', 'z' };

	tc_buf_printf(b, "kernel %s(", k->name ? k->name : "<null>");
	for (int i = 0; i < k->params.len; i++) {
		if (i)
			tc_buf_puts(b, ", ");
		print_param(b, k->params.items[i]);
	}
	tc_buf_puts(b, ")");
	if (k->loc.line > 0)
		tc_buf_printf(b, "  // %s:%d", base_name(k->loc.file),
			      k->loc.line);
	tc_buf_puts(b, "\n");
	b->indent++;
	if (k->threads) {
		tc_buf_puts(b, "threads ");
		print_prec(b, k->threads, 0);
		tc_buf_puts(b, "\n");
	}
	if (k->producer_threads)
		tc_buf_printf(b, "producer warpgroup of %lld threads after them\n",
			      k->producer_threads);
	/* A persistent kernel's grid is its blocks; the tiles they walk
	 * bind the block vars. */
	TcExpr *const *ext = k->persistent ? k->tiles : k->grid;
	bool any = false;
	if (k->persistent) {
		tc_buf_puts(b, "grid x = ");
		print_prec(b, k->grid[0], 0);
		tc_buf_printf(b, " persistent (%lld block%s per SM)\n",
			      k->persistent, k->persistent == 1 ? "" : "s");
	}
	for (int d = 0; d < 3; d++) {
		if (!ext[d] && !k->block[d])
			continue;
		tc_buf_printf(b, "%s%c = ", any ? ", " :
			      k->persistent ? "tiles " : "grid ", dim_names[d]);
		if (ext[d])
			print_prec(b, ext[d], 0);
		else
			tc_buf_puts(b, "1");
		if (k->block[d])
			tc_buf_printf(b, " as %s", var_name(k->block[d]));
		any = true;
	}
	if (any)
		tc_buf_puts(b, "\n");
	if (k->strip > 1) {
		tc_buf_printf(b, "strip %d blocks along x, each keeping", k->strip);
		bool listed = false;
		for (int i = 0; i < k->vars.len; i++) {
			const TcVar *v = k->vars.items[i];
			if (v->each_block) {
				tc_buf_printf(b, "%s %s", listed ? "," : "",
					      var_name(v));
				listed = true;
			}
		}
		tc_buf_puts(b, listed ? "\n" : " nothing\n");
	}
	if (k->bind_close)
		tc_buf_puts(b, "bind close\n");
	if (k->streams)
		tc_buf_puts(b, "streams past the cache\n");
	if (k->rasterize) {
		tc_buf_puts(b, "rasterize ");
		print_prec(b, k->rasterize, 0);
		tc_buf_puts(b, "\n");
	}
	if (k->smem_bytes > 0)
		tc_buf_printf(b, "smem %lld bytes, reduction scratch at +%lld\n",
			      k->smem_bytes, k->scratch_offset);
	for (int i = 0; i < k->tmaps.len; i++) {
		const TcTensorMap *m = k->tmaps.items[i];
		tc_buf_printf(b, "tensor_map %s of %s box [", m->name, m->tensor->name);
		for (int d = 0; d < m->tensor->rank; d++)
			tc_buf_printf(b, "%s%d", d ? ", " : "", m->box[d]);
		tc_buf_printf(b, "] swizzle %d\n", m->swizzle);
	}
	if (k->aligned.len) {
		tc_buf_puts(b, "aligned launches of");
		for (int i = 0; i < k->aligned.len; i++)
			tc_buf_printf(b, "%s %s", i ? "," : "",
				      var_name(k->aligned.items[i]));
		tc_buf_puts(b, "\n");
	}
	if (bounds_marked(k))
		tc_buf_puts(b, "bounds marked\n");
	if (k->frame_bytes > 0 && k->stack_bytes == k->frame_bytes)
		tc_buf_printf(b, "frame %lld bytes\n", k->frame_bytes);
	else if (k->frame_bytes > 0)
		tc_buf_printf(b, "frame %lld bytes, %lld stored\n",
			      k->frame_bytes, k->stack_bytes);
	b->indent--;
	tc_buf_puts(b, "{\n");
	print_body(b, k, k->body);
	tc_buf_puts(b, "\n");
}

static void
print_tunable(TcBuf *b, const TcVar *v)
{
	tc_buf_printf(b, "tunable %s = %lld  // ", var_name(v), v->value);
	if (v->bound)
		tc_buf_printf(b, "bound, default %lld; ", v->def_value);
	else if (v->value != v->def_value)
		tc_buf_printf(b, "default %lld; ", v->def_value);
	if (v->nchoices > 0) {
		tc_buf_puts(b, "choices");
		for (int i = 0; i < v->nchoices; i++)
			tc_buf_printf(b, " %lld", v->choices[i]);
		tc_buf_puts(b, "; ");
	}
	tc_buf_printf(b, "%s:%d\n", base_name(v->loc.file), v->loc.line);
}

void
tc_print_program(TcBuf *b, const TcProgram *p)
{
	for (int i = 0; i < p->tunables.len; i++)
		print_tunable(b, p->tunables.items[i]);
	for (int i = 0; i < p->kernels.len; i++) {
		if (i || p->tunables.len)
			tc_buf_puts(b, "\n");
		tc_print_kernel(b, p->kernels.items[i]);
	}
}
