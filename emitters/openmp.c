/*
 * openmp.c - the OpenMP backend: scheduled IR to C11 with OpenMP and AVX.
 *
 * Input: one specialized kernel (tunables bound, buffer shapes constant)
 * and the target (openmp/avx512, avx2 or generic).  Output, per kernel:
 *
 *   - a static function running one block, KERNEL_block(), whose buffers
 *     are aligned local arrays (cache resident; f16, bf16 and fp8 values
 *     are held as float, rounded on every store so results match the IR);
 *   - the kernel, with the tile program's signature (tensors as C99
 *     variably-modified parameters), running the grid as one
 *     `#pragma omp parallel for` over the blocks, its threads placed
 *     first where passes/cpu_bind.c says (tilec_bind_threads);
 *   - tilec_entry_KERNEL(void **args), the runtime's entry point: args[i]
 *     points to the value of parameter i, for a tensor to its data pointer.
 *
 * Tile ops become loops over the tile with bounds hoisted out of them
 * (copies compute the valid extent once, convert whole rows through
 * templates/cpu/tilec_cpu.h and zero-fill the rest), tile_gemm becomes a
 * call of a register-blocked micro-kernel (templates/cpu/gemm.h) chosen by
 * the target arch, parallel loops become plain loops whose innermost one is
 * `#pragma omp simd`.  Pipelined loops begin with the prefetches of the
 * rows their next iteration's copies will read (PREFETCH statements of
 * passes/cpu_prefetch.c): the CPU's form of pipelining.  The
 * first kernel emitted into an empty buffer also prints the file header,
 * the helper headers and the tunables.
 *
 * Runs of row-wise statements (copies, element-wise nests, reductions
 * along the last dim) are fused into one pass per row by openmp_fuse.c;
 * emit_body hands them over.
 *
 * Invariants relied on: check.c has run (tile ops only at block level,
 * regions fit, gemm operands are 2-dim whole buffers), buffer extents are
 * constants (tc_expr_const).  Every name printed is the tile program's,
 * except loop indices and extents of tile ops, which are chosen not to
 * collide with any name visible where they are declared.
 */
#include "openmp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* --- Types ----------------------------------------------------------------------- */

bool
tc_omp_is_narrow_float(TcDtype t)
{
	return t == TC_DT_F16 || t == TC_DT_BF16 || t == TC_DT_FP8E4M3 ||
	       t == TC_DT_FP8E5M2;
}

/* Whether t's C value type holds values t does not (the narrow floats,
 * held as float; i4, held as int8_t): a value stored into a buffer or
 * local of type t, or converted to it, goes through tilec_round_T, which
 * rounds to the nearest value of t or, for i4, wraps to its 4 bits. */
bool
tc_omp_rounds(TcDtype t)
{
	return tc_omp_is_narrow_float(t) || t == TC_DT_I4;
}

/* The C type of values (locals, expressions, buffer elements). */
const char *
tc_omp_value_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F64: return "double";
	case TC_DT_F32:
	case TC_DT_F16:
	case TC_DT_BF16:
	case TC_DT_FP8E4M3:
	case TC_DT_FP8E5M2: return "float";
	case TC_DT_I64: return "long long";
	case TC_DT_I32: return "int";
	case TC_DT_I8:
	case TC_DT_I4: return "int8_t";
	case TC_DT_U8: return "uint8_t";
	case TC_DT_BOOL: return "bool";
	default: tc_unreachable();
	}
}

/* The C type of tensor elements in memory. */
const char *
tc_omp_storage_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F16: return "tilec_f16";
	case TC_DT_BF16: return "tilec_bf16";
	case TC_DT_FP8E4M3: return "tilec_fp8e4m3";
	case TC_DT_FP8E5M2: return "tilec_fp8e5m2";
	case TC_DT_I4: return "tilec_i4x2";
	default: return tc_omp_value_type(t);
	}
}

const char *
tc_omp_held_type(const TcVar *v)
{
	return v->stored ? tc_omp_storage_type(v->dtype)
			 : tc_omp_value_type(v->dtype);
}

/* --- Expression hooks ----------------------------------------------------------- */

static const char *
func_name(TcCPrinter *pr, const TcExpr *call)
{
	TcFunc fn = call->u.call.fn;
	bool dbl = call->dtype == TC_DT_F64;
	const char *vec = tc_omp_vec_func(pr->ctx, call);
	if (vec)
		return vec;
	switch (fn) {
	case TC_FN_CEILDIV: return "tilec_ceildiv";
	case TC_FN_MIN: return "tilec_min";
	case TC_FN_MAX: return "tilec_max";
	case TC_FN_EXPF: return dbl ? "exp" : "tilec_expf";
	case TC_FN_EXP2F: return dbl ? "exp2" : "tilec_exp2f";
	case TC_FN_RSQRTF: return dbl ? "tilec_rsqrt" : "tilec_rsqrtf";
	case TC_FN_FMAXF: return dbl ? "fmax" : "tilec_fmaxf";
	case TC_FN_FMINF: return dbl ? "fmin" : "tilec_fminf";
	case TC_FN_LOGF: return dbl ? "log" : "logf";
	case TC_FN_LOG2F: return dbl ? "log2" : "log2f";
	case TC_FN_SQRTF: return dbl ? "sqrt" : "sqrtf";
	case TC_FN_FABSF: return dbl ? "fabs" : "fabsf";
	case TC_FN_TANHF: return dbl ? "tanh" : "tilec_tanhf";
	case TC_FN_ERFF: return dbl ? "erf" : "erff";
	case TC_FN_SINF: return dbl ? "sin" : "sinf";
	case TC_FN_COSF: return dbl ? "cos" : "cosf";
	case TC_FN_POWF: return dbl ? "pow" : "powf";
	case TC_FN_ABS: return "tilec_abs";
	case TC_FN_LOG1PF: return dbl ? "log1p" : "log1pf";
	case TC_FN_EXPM1F: return dbl ? "expm1" : "expm1f";
	case TC_FN_FMAF: return dbl ? "fma" : "fmaf";
	case TC_FN_ROUNDF: return dbl ? "round" : "roundf";
	case TC_FN_RINTF: return dbl ? "rint" : "rintf";
	case TC_FN_FLOORF: return dbl ? "floor" : "floorf";
	case TC_FN_CEILF: return dbl ? "ceil" : "ceilf";
	case TC_FN_TRUNCF: return dbl ? "trunc" : "truncf";
	case TC_FN_SAT_I8: return "tilec_sat_i8";
	case TC_FN_SAT_U8: return "tilec_sat_u8";
	case TC_FN_SAT_I32: return "tilec_sat_i32";
	default: tc_unreachable();
	}
}

/* Print the flat element offset of a load or store of v (for i4 tensors,
 * which are addressed by element number). */
static void
print_flat_index(TcCPrinter *pr, const TcVar *v, TcExpr *const *idx)
{
	TcBuf *b = pr->out;
	for (int i = 0; i < v->rank - 1; i++)
		tc_buf_puts(b, "(");
	tc_buf_puts(b, "(long long)");
	tc_c_expr_prec(pr, idx[0], TC_PREC_UNARY);
	for (int i = 1; i < v->rank; i++) {
		tc_buf_puts(b, " * ");
		tc_c_expr_prec(pr, v->shape[i], tc_binop_prec(TC_OP_MUL) + 1);
		tc_buf_puts(b, " + ");
		tc_c_expr_prec(pr, idx[i], tc_binop_prec(TC_OP_ADD) + 1);
		tc_buf_puts(b, ")");
	}
}

/* Print `name[i][j]` for an element of v. */
static void
print_element(TcCPrinter *pr, const TcVar *v, TcExpr *const *idx)
{
	tc_buf_puts(pr->out, v->name);
	for (int i = 0; i < v->rank; i++) {
		tc_buf_puts(pr->out, "[");
		tc_c_expr(pr, idx[i]);
		tc_buf_puts(pr->out, "]");
	}
}

static void
load(TcCPrinter *pr, const TcExpr *e)
{
	Emitter *E = pr->ctx;
	const TcVar *v = e->u.load.var;
	if (tc_omp_vec_load(pr, e)) {
		/* Printed as a vector (openmp_vec.c). */
	} else if (E->elided && E->elided[v->index]) {
		/* In a fused row loop: the element's local. */
		tc_buf_puts(pr->out, v->name);
	} else if (v->kind == TC_VAR_TENSOR && v->dtype == TC_DT_I4) {
		tc_buf_printf(pr->out, "tilec_i4_get(%s, ", v->name);
		print_flat_index(pr, v, e->u.load.idx);
		tc_buf_puts(pr->out, ")");
	} else if (v->kind == TC_VAR_TENSOR &&
		   tc_omp_is_narrow_float(v->dtype)) {
		tc_buf_printf(pr->out, "tilec_%s_to_f32(", tc_dtype_name(v->dtype));
		print_element(pr, v, e->u.load.idx);
		tc_buf_puts(pr->out, ")");
	} else {
		print_element(pr, v, e->u.load.idx);
	}
}

/* Narrowing to f16, bf16, fp8 rounds through the type (values stay
 * float), to i4 wraps (an int8_t); a cast between types with the same C
 * spelling prints nothing. */
static bool
convert(TcCPrinter *pr, const TcExpr *value, TcDtype t)
{
	if (tc_omp_rounds(t)) {
		/* f16 and bf16 lanes of a vector loop: tilec_vround_T */
		bool vec = ((Emitter *)pr->ctx)->vec &&
			   tc_omp_vec_varies(pr->ctx, value);
		tc_buf_printf(pr->out, "tilec_%sround_%s(", vec ? "v" : "",
			      tc_dtype_name(t));
		tc_c_expr_prec(pr, value, TC_PREC_COMMA + 1);
		tc_buf_puts(pr->out, ")");
		return true;
	}
	if (strcmp(tc_omp_value_type(t), tc_omp_value_type(value->dtype)) ==
	    0) {
		tc_c_expr_prec(pr, value, TC_PREC_UNARY);
		return true;
	}
	return false;
}

static const TcCHooks openmp_hooks = {
	.value_type = tc_omp_value_type,
	.func_name = func_name,
	.load = load,
	.convert = convert,
	.call_arg = tc_omp_vec_call_arg,
	.expr = tc_omp_vec_expr,
};

/* The text of value as stored into an element or local of dtype t held as
 * a value (buffers, locals): narrow floats round and i4 wraps unless the
 * value is already of type t. */
static const char *
stored_text(Emitter *E, const TcExpr *value, TcDtype t)
{
	const char *v = tc_omp_expr_text(E, value, TC_PREC_COMMA + 1);
	if (tc_omp_rounds(t) && value->dtype != t)
		return tc_fmt(E->a, "tilec_round_%s(%s)", tc_dtype_name(t), v);
	return v;
}

/* `HEAD VALUE;` for a value already printed, broken after HEAD if the
 * line would pass 80 columns. */
void
tc_omp_print_text(Emitter *E, const char *head, const char *value)
{
	TcBuf *b = E->out;
	if ((size_t)b->indent * 8 + strlen(head) + strlen(value) + 2 <= 80)
		tc_buf_printf(b, "%s %s;\n", head, value);
	else
		tc_buf_printf(b, "%s\n    %s;\n", head, value);
}

/* `HEAD VALUE;` where VALUE is stored as dtype t (TC_DT_NONE: as is),
 * with a long line broken as clang-format breaks it: after HEAD, or, if
 * VALUE still does not fit, at its top operator, aligned after HEAD. */
void
tc_omp_print_statement(Emitter *E, const char *head, const TcExpr *value,
		       TcDtype t)
{
	TcBuf *b = E->out;
	bool rounds = tc_omp_rounds(t) && value->dtype != t;
	const char *v = stored_text(E, value, t);
	size_t col = (size_t)b->indent * 8, hl = strlen(head);
	if (col + hl + 1 + strlen(v) + 1 <= 80) {
		tc_buf_printf(b, "%s %s;\n", head, v);
	} else if (col + 4 + strlen(v) + 1 <= 80) {
		tc_buf_printf(b, "%s\n    %s;\n", head, v);
	} else if (!rounds && value->kind == TC_EX_BINARY &&
		   tc_c_prec(value) > TC_PREC_COMMA) {
		TcBuf l, r;
		tc_buf_init(&l);
		tc_buf_init(&r);
		tc_c_binary_split(&E->pr, value, &l, &r);
		tc_buf_printf(b, "%s %s\n%*s%s;\n", head, l.data, (int)hl + 1, "",
			      r.data);
		tc_buf_free(&l);
		tc_buf_free(&r);
	} else {
		tc_buf_printf(b, "%s %s;\n", head, v);
	}
}

/* --- Analysis ------------------------------------------------------------------- */

/* tc_omp_walk_vars and tc_omp_count_nodes: callbacks on the IR's visitor
 * (tc_stmt_visit). */
typedef struct VarWalk {
	VarFn fn;  /* called on each var */
	void *ctx; /* its context */
} VarWalk;

static TcVisit
var_of_expr(void *ctx, const TcExpr *e)
{
	const VarWalk *w = ctx;
	if (e->kind == TC_EX_VAR)
		w->fn(w->ctx, e->u.var);
	else if (e->kind == TC_EX_LOAD)
		w->fn(w->ctx, e->u.load.var);
	return TC_VISIT_INTO;
}

static void
var_of_stmt(void *ctx, const TcVar *v)
{
	const VarWalk *w = ctx;
	w->fn(w->ctx, v);
}

void
tc_omp_walk_vars(const TcExpr *e, const TcStmt *s, VarFn fn, void *ctx)
{
	VarWalk w = { fn, ctx };
	TcVisitor vis = { .expr = var_of_expr, .var = var_of_stmt, .ctx = &w };
	tc_expr_visit(e, &vis);
	tc_stmt_visit(s, &vis);
}

static TcVisit
count_expr(void *ctx, const TcExpr *e)
{
	Count *c = ctx;
	c->n += c->expr && c->expr(e, c->arg);
	return TC_VISIT_INTO;
}

static TcVisit
count_stmt(void *ctx, const TcStmt *s)
{
	Count *c = ctx;
	c->n += c->stmt && c->stmt(s, c->arg);
	return TC_VISIT_INTO;
}

int
tc_omp_count_nodes(const TcExpr *e, const TcStmt *s, Count c)
{
	TcVisitor vis = { .expr = count_expr, .stmt = count_stmt, .ctx = &c };
	tc_expr_visit(e, &vis);
	tc_stmt_visit(s, &vis);
	return c.n;
}

static void
mark_used(void *ctx, const TcVar *v)
{
	Emitter *E = ctx;
	/* A tunable's index counts the program's tunables, not the
	 * kernel's vars: it names no slot here. */
	if (v->kind == TC_VAR_TUNABLE)
		return;
	E->used[v->index] = true;
	if (v->kind == TC_VAR_TENSOR)
		for (int i = 0; i < v->rank; i++)
			tc_omp_walk_vars(v->shape[i], NULL, mark_used, E);
}

static void
note_block_dep(void *ctx, const TcVar *v)
{
	Emitter *E = ctx;
	if (v->kind == TC_VAR_BLOCK ||
	    (v->kind == TC_VAR_LOCAL && E->block_dep[v->index]))
		E->dep_found = true;
}

/* Whether e's value can differ between blocks; a select on a constant
 * (CAUSAL ? ... : S) only looks at the branch taken. */
static bool
depends_on_block(Emitter *E, const TcExpr *e)
{
	long long c;
	if (e && e->kind == TC_EX_SELECT && tc_expr_const(e->u.sel.cond, &c))
		return depends_on_block(E, c ? e->u.sel.then : e->u.sel.els);
	E->dep_found = false;
	tc_omp_walk_vars(e, NULL, note_block_dep, E);
	return E->dep_found;
}

/* Which locals depend on the block, whether blocks do unequal work (a
 * tc_walk_stmts visitor). */
static void
note_block_work(void *ctx, TcStmt *s, int par_depth)
{
	Emitter *E = ctx;
	(void)par_depth;
	if (s->kind == TC_ST_DECL) {
		const TcVar *v = s->u.decl.var;
		if (v->kind == TC_VAR_LOCAL && s->u.decl.init)
			E->block_dep[v->index] =
				v->mutated || depends_on_block(E, s->u.decl.init);
	} else if (s->kind == TC_ST_FOR) {
		if (depends_on_block(E, s->u.loop.begin) ||
		    depends_on_block(E, s->u.loop.end))
			E->dynamic = true;
	}
}

/* Whether the bounds pass proved region r's origin along dim d >= 0. */
bool
tc_omp_origin_nonneg(const TcRegion *r, int d)
{
	return r->bounded && (r->nonneg >> d & 1);
}

/* --- Names ---------------------------------------------------------------------- */

/* Whether a name is taken where a tile op's loops are declared. */
static bool
name_taken(Emitter *E, const char *name)
{
	for (int i = 0; i < E->k->vars.len; i++) {
		const TcVar *v = E->k->vars.items[i];
		if (E->visible[v->index] && strcmp(v->name, name) == 0)
			return true;
	}
	for (int i = 0; i < E->p->tunables.len; i++)
		if (strcmp(((TcVar *)E->p->tunables.items[i])->name, name) == 0)
			return true;
	for (int i = 0; i < E->reserved.len; i++)
		if (strcmp(E->reserved.items[i], name) == 0)
			return true;
	return strcmp(E->k->name, name) == 0;
}

/* base, or base2, base3 ... if it is taken. */
const char *
tc_omp_fresh(Emitter *E, const char *base)
{
	if (!name_taken(E, base))
		return base;
	for (int n = 2;; n++) {
		const char *s = tc_fmt(E->a, "%s%d", base, n);
		if (!name_taken(E, s))
			return s;
	}
}

/* Index names for the dims of a tile of rank r: i, j, l, m, ... */
void
tc_omp_index_names(Emitter *E, int r, const char **names)
{
	static const char *const base[] = { "i", "j", "l", "m", "n", "p", "q", "r" };
	int next = 0;
	for (int d = 0; d < r; d++) {
		while (next < 8 && name_taken(E, base[next]))
			next++;
		names[d] = next < 8 ? base[next++]
				    : tc_omp_fresh(E, tc_fmt(E->a, "i%d", d));
	}
}

/* --- Printing helpers ------------------------------------------------------------ */

/* An expression as text (for names of extents in later lines). */
const char *
tc_omp_expr_text(Emitter *E, const TcExpr *e, int min_prec)
{
	TcBuf b;
	tc_buf_init(&b);
	TcCPrinter pr = E->pr;
	pr.out = &b;
	tc_c_expr_prec(&pr, e, min_prec);
	const char *s = tc_strdup(E->a, b.data ? b.data : "");
	tc_buf_free(&b);
	return s;
}

/* Where the run of whole-line comments that ends b's text begins (b->len
 * if it does not end with one). */
static size_t
comment_run_start(const TcBuf *b)
{
	size_t at = b->len;
	while (at > 0 && b->data[at - 1] == '\n') {
		size_t start = at - 1;
		while (start > 0 && b->data[start - 1] != '\n')
			start--;
		size_t t = start;
		while (t < at && b->data[t] == '\t')
			t++;
		if (t + 1 >= at || b->data[t] != '/' || b->data[t + 1] != '/')
			break;
		at = start;
	}
	return at;
}

/* `#pragma TEXT` at the start of the line, where clang-format puts it,
 * and before the comment lines just printed (the comment of the loop it
 * applies to): clang-format would move a comment that precedes a pragma
 * to column 0. */
void
tc_omp_pragma(Emitter *E, const char *fmt, ...)
{
	TcBuf *b = E->out;
	TcBuf line;
	tc_buf_init(&line);
	tc_buf_puts(&line, "#pragma ");
	va_list ap;
	va_start(ap, fmt);
	tc_buf_vprintf(&line, fmt, ap);
	va_end(ap);
	tc_buf_puts(&line, "\n");
	size_t at = comment_run_start(b), tail = b->len - at;
	int indent = b->indent;
	b->indent = 0;
	tc_buf_append(b, line.data, line.len);
	b->indent = indent;
	/* Rotate the pragma in front of the comments. */
	if (tail > 0) {
		memmove(b->data + at + line.len, b->data + at, tail);
		memcpy(b->data + at, line.data, line.len);
	}
	tc_buf_free(&line);
}

/* `#line N "file"` before a statement from a new source line. */
void
tc_omp_line_directive(Emitter *E, TcLoc loc)
{
	if (!E->opt->line_directives || loc.line <= 0 || loc.line == E->line ||
	    !loc.file)
		return;
	int indent = E->out->indent;
	E->out->indent = 0;
	tc_buf_printf(E->out, "#line %d \"", loc.line);
	tc_quote_string(E->out, loc.file);
	tc_buf_puts(E->out, "\"\n");
	E->out->indent = indent;
	E->line = loc.line;
}

/* The `// file:line source` comment above a tile op. */
static void
op_comment(Emitter *E, const TcStmt *s)
{
	tc_omp_line_directive(E, s->loc);
	tc_c_loc_comment(&E->pr, s->loc,
			 tc_c_source_snippet(E->a, E->p->text, s->loc));
}

/* `for (int i = 0; i < N; i++)` over tile dim d of a buffer. */
void
tc_omp_for_dim(Emitter *E, const char *idx, const char *begin, const char *end)
{
	tc_c_for_text(&E->pr, idx, begin, end);
}

/* `buf[i][j]` for a whole buffer indexed by names. */
const char *
tc_omp_elem(Emitter *E, const TcVar *v, const char *const *idx)
{
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_puts(&b, v->name);
	for (int i = 0; i < v->rank; i++)
		tc_buf_printf(&b, "[%s]", idx[i]);
	const char *s = tc_strdup(E->a, b.data);
	tc_buf_free(&b);
	return s;
}

/* --- Statements ------------------------------------------------------------------- */



const char *
tc_omp_sizeof(Emitter *E, const TcVar *v)
{
	if (E->strip_all && E->strip_all[v->index])
		return tc_fmt(E->a, "sizeof %s[0]", E->strip_all[v->index]);
	return tc_fmt(E->a, "sizeof %s", v->name);
}

static void emit_for(Emitter *E, const TcStmt *s, bool in_parallel);

static void
mark_strip_use(void *ctx, const TcVar *v)
{
	bool *uses = ctx;
	if (v->kind != TC_VAR_TUNABLE) /* indexed among the program's */
		uses[v->index] = true;
}

/* Statement i of seq, or the row-wise run that starts there (its
 * statements all shared or all each-block: cpu_strip.c); the index of
 * the last statement printed. */
static int
emit_strip_stmt(Emitter *E, const TcStmt *seq, int i)
{
	const TcFusion *F = tc_omp_fusion_at(E, seq, i);
	if (F) {
		tc_omp_emit_fusion(E, F);
		return i + F->nstmts - 1;
	}
	tc_omp_emit_stmt(E, seq->u.block.body.items[i]);
	return i;
}

/* Statements from..to-1 of a strip's sequence (passes/cpu_strip.c): the
 * shared ones in order, then the each-block ones once for each block of
 * the strip, with grid x and the buffers each block keeps its own of
 * named as the program names them. */
static void
emit_strip_part(Emitter *E, const TcStmt *seq, int from, int to)
{
	const TcKernel *k = E->k;
	TcBuf *b = E->out;
	bool each = false;
	bool *uses = tc_alloc(E->a, (size_t)k->vars.len + 1);
	for (int i = from; i < to; i++) {
		const TcStmt *st = seq->u.block.body.items[i];
		if (st->each_block) {
			each = true;
			tc_omp_walk_vars(NULL, st, mark_strip_use, uses);
		} else {
			i = emit_strip_stmt(E, seq, i);
		}
	}
	if (!each)
		return;
	const char *blk = tc_omp_fresh(E, "b");
	tc_buf_printf(b, "// each block of the strip in turn\n");
	tc_buf_printf(b, "for (int %s = 0; %s < %s; %s++) {\n", blk, blk,
		      E->strip_count, blk);
	b->indent++;
	const TcVar *bx = k->block[0];
	if (uses[bx->index])
		tc_buf_printf(b, "const int %s = %s + %s;\n", bx->name,
			      E->strip_first, blk);
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (!E->strip_all[i] || !uses[i])
			continue;
		if (v->rank == 1) {
			/* This block's row of a 1-D buffer: a plain pointer. */
			tc_buf_printf(b, "%s *const %s = %s[%s];\n",
				      tc_omp_held_type(v), v->name,
				      E->strip_all[i], blk);
			continue;
		}
		TcBuf inner;
		tc_buf_init(&inner);
		for (int d = 1; d < v->rank; d++)
			tc_buf_printf(&inner, "[%s]",
				      tc_omp_expr_text(E, v->shape[d], 0));
		tc_buf_printf(b, "%s (*const %s)%s = %s[%s];\n",
			      tc_omp_held_type(v), v->name, inner.data,
			      E->strip_all[i], blk);
		tc_buf_free(&inner);
	}
	for (int i = from; i < to; i++) {
		const TcStmt *st = seq->u.block.body.items[i];
		if (st->each_block)
			i = emit_strip_stmt(E, seq, i);
	}
	b->indent--;
	tc_buf_puts(b, "}\n");
}

/* A strip's sequence: the top level in two parts around the strip's
 * loop, which prints its body the same way; the loop's body in one. */
static void
emit_strip_seq(Emitter *E, const TcStmt *seq)
{
	int from = 0, n = seq->u.block.body.len;
	for (int i = 0; i <= n; i++) {
		const TcStmt *st = i < n ? seq->u.block.body.items[i] : NULL;
		if (st && st != E->k->strip_loop)
			continue;
		emit_strip_part(E, seq, from, i);
		if (st)
			emit_for(E, st, false);
		from = i + 1;
	}
}

/* Statements of a block, without braces; runs of fused statements as
 * their loop nest. */
static void
emit_body(Emitter *E, const TcStmt *s)
{
	tc_assert(s->kind == TC_ST_BLOCK);
	for (int i = 0; i < s->u.block.body.len; i++) {
		const TcFusion *F = tc_omp_fusion_at(E, s, i);
		if (F) {
			tc_omp_emit_fusion(E, F);
			i += F->nstmts - 1;
			continue;
		}
		tc_omp_emit_stmt(E, s->u.block.body.items[i]);
	}
}

/* Whether a block prints as one statement that needs no braces. */
static bool
single_simple(const TcStmt *s)
{
	if (s->kind != TC_ST_BLOCK || s->u.block.body.len != 1)
		return false;
	const TcStmt *only = s->u.block.body.items[0];
	return only->kind == TC_ST_ASSIGN;
}

/* ` {` body `}` or, for one assignment, the indented statement. */
static void
emit_nested(Emitter *E, const TcStmt *body)
{
	if (single_simple(body)) {
		tc_buf_puts(E->out, "\n");
		E->out->indent++;
		emit_body(E, body);
		E->out->indent--;
		return;
	}
	tc_c_open(&E->pr);
	emit_body(E, body);
	tc_c_close(&E->pr);
}

static void
emit_decl(Emitter *E, const TcStmt *s)
{
	const TcVar *v = s->u.decl.var;
	TcBuf *b = E->out;
	if (v->kind == TC_VAR_LOCAL) {
		tc_omp_line_directive(E, s->loc);
		bool is_const = !v->mutated && s->u.decl.init;
		const char *head =
			tc_fmt(E->a, "%s%s %s", is_const ? "const " : "",
			       tc_omp_value_type(v->dtype), v->name);
		if (s->u.decl.init)
			tc_omp_print_statement(E, tc_fmt(E->a, "%s =", head),
					       s->u.decl.init, v->dtype);
		else
			tc_buf_printf(b, "%s;\n", head);
		return;
	}
	/* A buffer: an aligned array in the block's frame.  One every fused
	 * run keeps in registers takes no memory (its size still counts
	 * against the frame pass's limit, a property of the program). */
	if (v->unstored)
		return;
	tc_omp_line_directive(E, v->loc);
	TcBuf shape;
	tc_buf_init(&shape);
	for (int i = 0; i < v->rank; i++)
		tc_buf_printf(&shape, "[%s]",
			      tc_omp_expr_text(E, v->shape[i], 0));
	const char *held = v->stored ? ", held as stored"
			   : tc_omp_is_narrow_float(v->dtype) ? ", held as float"
							      : "";
	if (E->strip_all && E->strip_all[v->index])
		held = tc_fmt(E->a, "%s; one for each block of the strip", held);
	tc_c_loc_comment(&E->pr, v->loc,
			 tc_fmt(E->a, "tile_%s %s %s%s%s", tc_scope_name(v->scope),
				tc_dtype_name(v->dtype), v->name, shape.data,
				held));
	if (E->strip_all && E->strip_all[v->index])
		tc_buf_printf(b, "_Alignas(64) %s %s[%d]%s;\n",
			      tc_omp_held_type(v), E->strip_all[v->index],
			      E->k->strip, shape.data);
	else
		tc_buf_printf(b, "_Alignas(64) %s %s%s;\n",
			      tc_omp_held_type(v), v->name, shape.data);
	tc_buf_free(&shape);
}

/* `x op= y` for `x = x op y` (dst needs no conversion). */
static bool
emit_compound(Emitter *E, const TcExpr *dst, const TcExpr *value)
{
	if (value->kind != TC_EX_BINARY || !tc_expr_equal(value->u.bin.lhs, dst))
		return false;
	switch (value->u.bin.op) {
	case TC_OP_MUL: case TC_OP_DIV: case TC_OP_REM: case TC_OP_ADD:
	case TC_OP_SUB: case TC_OP_SHL: case TC_OP_SHR: case TC_OP_BAND:
	case TC_OP_BXOR: case TC_OP_BOR:
		break;
	default:
		return false;
	}
	tc_omp_print_statement(E,
			       tc_fmt(E->a,
				      "%s %s=", tc_omp_expr_text(E, dst, 0),
				      tc_binop_name(value->u.bin.op)),
			       value->u.bin.rhs, TC_DT_NONE);
	return true;
}

/* Print `head` then the arguments separated by ", " and `tail`, breaking
 * lines before 80 columns with continuations aligned after `head`. */
void
tc_omp_print_wrapped(Emitter *E, const char *head, const char **args, int n,
		     const char *tail)
{
	TcBuf *b = E->out;
	size_t align = strlen(head);
	size_t col = (size_t)b->indent * 8 + align;
	tc_buf_puts(b, head);
	for (int i = 0; i < n; i++) {
		const char *end = i + 1 < n ? "," : tail;
		size_t len = strlen(args[i]) + strlen(end);
		if (i > 0 && col + 1 + len > 80) {
			tc_buf_printf(b, "\n%*s", (int)align, "");
			col = (size_t)b->indent * 8 + align;
		} else if (i > 0) {
			tc_buf_puts(b, " ");
			col++;
		}
		tc_buf_printf(b, "%s%s", args[i], end);
		col += len;
	}
	if (n == 0)
		tc_buf_puts(b, tail);
	tc_buf_puts(b, "\n");
}

static void
emit_assign(Emitter *E, const TcStmt *s)
{
	const TcExpr *dst = s->u.assign.dst, *value = s->u.assign.value;
	TcBuf *b = E->out;
	tc_omp_line_directive(E, s->loc);
	const TcVar *v = dst->kind == TC_EX_VAR ? dst->u.var : dst->u.load.var;
	bool tensor = v->kind == TC_VAR_TENSOR;
	if (tensor && v->dtype == TC_DT_I4) {
		tc_buf_printf(b, "tilec_i4_set(%s, ", v->name);
		print_flat_index(&E->pr, v, dst->u.load.idx);
		tc_buf_puts(b, ", ");
		tc_c_expr_prec(&E->pr, value, TC_PREC_COMMA + 1);
		tc_buf_puts(b, ");\n");
		return;
	}
	if (tensor && tc_omp_is_narrow_float(v->dtype)) {
		print_element(&E->pr, v, dst->u.load.idx);
		tc_buf_printf(b, " = tilec_f32_to_%s(", tc_dtype_name(v->dtype));
		tc_c_expr_prec(&E->pr, value, TC_PREC_COMMA + 1);
		tc_buf_puts(b, ");\n");
		return;
	}
	if (!tc_omp_rounds(v->dtype) && emit_compound(E, dst, value))
		return;
	tc_omp_print_statement(
		E, tc_fmt(E->a, "%s =", tc_omp_expr_text(E, dst, 0)), value,
		v->dtype);
}

static bool
is_loop(const TcStmt *s, const void *arg)
{
	(void)arg;
	return s->kind == TC_ST_FOR;
}

/* A call of a libm function no compiler vectorizes (gcc and clang have
 * no vector form of erf, log1p or expm1; clang warns of an `omp simd`
 * loop it cannot vectorize). */
static bool
is_scalar_call(const TcExpr *e, const void *arg)
{
	(void)arg;
	return e->kind == TC_EX_CALL &&
	       (e->u.call.fn == TC_FN_ERFF || e->u.call.fn == TC_FN_LOG1PF ||
		e->u.call.fn == TC_FN_EXPM1F);
}

/* Whether s or e calls such a function: no `omp simd` on its loop. */
bool
tc_omp_scalar_calls(const TcExpr *e, const TcStmt *s)
{
	return tc_omp_count_nodes(e, s, (Count){ .expr = is_scalar_call }) > 0;
}

/* An `if` inside an `if`: a loop body with one stays without `omp
 * simd` (locals assigned under nested conditions are what clang's
 * vectorizer gives up on, with a warning where omp simd asked for it;
 * the compilers still vectorize what they can unasked). */
static bool
is_if(const TcStmt *s, const void *arg)
{
	(void)arg;
	return s->kind == TC_ST_IF;
}

static bool
is_nested_if(const TcStmt *s, const void *arg)
{
	(void)arg;
	if (s->kind != TC_ST_IF)
		return false;
	Count c = { .stmt = is_if };
	return tc_omp_count_nodes(NULL, s->u.cond.then, c) > 0 ||
	       (s->u.cond.els && tc_omp_count_nodes(NULL, s->u.cond.els, c) > 0);
}

bool
tc_omp_nested_ifs(const TcStmt *s)
{
	return tc_omp_count_nodes(NULL, s, (Count){ .stmt = is_nested_if }) > 0;
}

/* A store to an element of an i4 tensor: a compare-and-swap loop
 * (tilec_i4_set), which no compiler vectorizes. */
static bool
is_i4_store(const TcStmt *s, const void *arg)
{
	(void)arg;
	if (s->kind != TC_ST_ASSIGN || s->u.assign.dst->kind != TC_EX_LOAD)
		return false;
	const TcVar *v = s->u.assign.dst->u.load.var;
	return v->kind == TC_VAR_TENSOR && v->dtype == TC_DT_I4;
}

static bool
tc_omp_i4_stores(const TcStmt *s)
{
	return tc_omp_count_nodes(NULL, s, (Count){ .stmt = is_i4_store }) > 0;
}

/* Whether a statement contains a loop (then `omp simd` stays off the
 * loop around it). */
bool
tc_omp_has_loop(const TcStmt *s)
{
	return tc_omp_count_nodes(NULL, s, (Count){ .stmt = is_loop }) > 0;
}

/* The parallel loop directly nested in s's body, if that is all it has. */
const TcStmt *
tc_omp_nested_parallel(const TcStmt *s)
{
	const TcStmt *body = s->u.loop.body;
	if (body->u.block.body.len != 1)
		return NULL;
	const TcStmt *only = body->u.block.body.items[0];
	return only->kind == TC_ST_FOR && only->u.loop.kind == TC_LOOP_PARALLEL
		       ? only : NULL;
}

/* One comment for a tile_parallel nest, in the program's spelling, with
 * what follows appended. */
void
tc_omp_nest_comment(Emitter *E, const TcStmt *s, const char *more)
{
	TcBuf nest;
	tc_buf_init(&nest);
	for (const TcStmt *l = s; l; l = tc_omp_nested_parallel(l))
		tc_buf_printf(&nest, "%stile_parallel(%s, %s)",
			      nest.len ? " " : "", l->u.loop.var->name,
			      tc_omp_expr_text(E, l->u.loop.end, 0));
	tc_buf_puts(&nest, more);
	tc_omp_line_directive(E, s->loc);
	tc_c_loc_comment(&E->pr, s->loc, nest.data);
	tc_buf_free(&nest);
}

/* A transposing nest (passes/cpu_transpose.c): 8 x 8 blocks through
 * registers, tilec_transpose32. */
static void
emit_transpose(Emitter *E, const TcStmt *s)
{
	TcTranspose t;
	tc_assert(tc_transpose_form(E->a, s, &t));
	const TcVar *D = t.dst->u.load.var, *S = t.src->u.load.var;
	tc_omp_nest_comment(E, s, ": 8 x 8 blocks through registers");
	tc_buf_puts(E->out, "tilec_transpose32(&");
	tc_c_expr(&E->pr, t.dst);
	tc_buf_printf(E->out, ", %s, &", tc_omp_expr_text(E, D->shape[1], 0));
	tc_c_expr(&E->pr, t.src);
	const TcStmt *inner = s->u.loop.body->u.block.body.items[0];
	tc_buf_printf(E->out, ", %s, %s, %s);\n",
		      tc_omp_expr_text(E, S->shape[1], 0),
		      tc_omp_expr_text(E, inner->u.loop.end, 0),
		      tc_omp_expr_text(E, s->u.loop.end, 0));
}

static void
emit_for(Emitter *E, const TcStmt *s, bool in_parallel)
{
	const TcVar *v = s->u.loop.var;
	TcBuf *b = E->out;
	tc_omp_line_directive(E, s->loc);
	if (s->u.loop.kind == TC_LOOP_PIPELINED) {
		const char *src = tc_c_source_snippet(E->a, E->p->text, s->loc);
		tc_c_loc_comment(&E->pr, s->loc,
				 tc_fmt(E->a, "%s: the CPU runs it in order",
					src ? src : "tile_pipelined"));
	}
	if (s->u.loop.transpose) {
		emit_transpose(E, s);
		return;
	}
	if (s->u.loop.kind == TC_LOOP_PARALLEL && !in_parallel)
		tc_omp_nest_comment(E, s, "");
	long long trips;
	if (s->u.loop.kind == TC_LOOP_PARALLEL &&
	    !tc_omp_has_loop(s->u.loop.body) &&
	    !tc_omp_scalar_calls(NULL, s->u.loop.body) &&
	    !tc_omp_nested_ifs(s->u.loop.body) &&
	    !tc_omp_i4_stores(s->u.loop.body) &&
	    !(tc_expr_const(s->u.loop.end, &trips) && trips < 8))
		tc_omp_pragma(E, "omp simd");
	tc_c_for(&E->pr, tc_omp_value_type(v->dtype), v->name, s->u.loop.begin,
		 s->u.loop.end, s->u.loop.step);
	bool par = in_parallel || s->u.loop.kind == TC_LOOP_PARALLEL;
	const TcStmt *body = s->u.loop.body;
	if (single_simple(body)) {
		tc_buf_puts(b, "\n");
		b->indent++;
		emit_body(E, body);
		b->indent--;
		return;
	}
	tc_c_open(&E->pr);
	for (int i = 0; i < body->u.block.body.len; i++) {
		if (s == E->k->strip_loop) {
			emit_strip_seq(E, body);
			break;
		}
		const TcFusion *F = par ? NULL : tc_omp_fusion_at(E, body, i);
		const TcStmt *st = body->u.block.body.items[i];
		if (F) {
			tc_omp_emit_fusion(E, F);
			i += F->nstmts - 1;
		} else if (st->kind == TC_ST_FOR) {
			emit_for(E, st, par);
		} else {
			tc_omp_emit_stmt(E, st);
		}
	}
	tc_c_close(&E->pr);
}

static void
emit_if(Emitter *E, const TcStmt *s)
{
	TcBuf *b = E->out;
	tc_omp_line_directive(E, s->loc);
	tc_buf_puts(b, "if (");
	tc_c_expr(&E->pr, s->u.cond.cond);
	tc_buf_puts(b, ")");
	if (!s->u.cond.els) {
		emit_nested(E, s->u.cond.then);
		return;
	}
	tc_c_open(&E->pr);
	emit_body(E, s->u.cond.then);
	b->indent--;
	tc_buf_puts(b, "} else");
	const TcStmt *els = s->u.cond.els;
	if (els->u.block.body.len == 1 &&
	    ((TcStmt *)els->u.block.body.items[0])->kind == TC_ST_IF) {
		tc_buf_puts(b, " ");
		emit_if(E, els->u.block.body.items[0]);
		return;
	}
	tc_c_open(&E->pr);
	emit_body(E, els);
	tc_c_close(&E->pr);
}

/* --- Tile ops: fill --------------------------------------------------------------- */

/* Open n nested loops `for (int idx[d] = 0; idx[d] < ext[d]; idx[d]++)`,
 * the innermost `#pragma omp simd` if simd.  The loop around the innermost
 * is braced, so the pragma sits in a block; close_loops(n) closes them. */
static void
open_loops(Emitter *E, int n, const char *const *idx, const char *const *ext,
	   bool simd)
{
	for (int d = 0; d < n; d++) {
		if (d == n - 1 && simd)
			tc_omp_pragma(E, "omp simd");
		tc_omp_for_dim(E, idx[d], "0", ext[d]);
		tc_buf_puts(E->out, d == n - 2 ? " {\n" : "\n");
		E->out->indent++;
	}
}

static void
close_loops(Emitter *E, int n)
{
	E->out->indent--;
	if (n >= 2) {
		tc_c_close(&E->pr);
		E->out->indent -= n - 2;
	}
}

/* Like open_loops without simd, all loops braced, so the innermost body
 * can start with a pragma (omp atomic); close with close_braced_loops. */
static void
open_braced_loops(Emitter *E, int n, const char *const *idx,
		  const char *const *ext)
{
	for (int d = 0; d < n; d++) {
		tc_omp_for_dim(E, idx[d], "0", ext[d]);
		tc_c_open(&E->pr);
	}
}

static void
close_braced_loops(Emitter *E, int n)
{
	for (int d = 0; d < n; d++)
		tc_c_close(&E->pr);
}

/* Loops over every element of buffer v; returns the element's text
 * (v[i][j]) for the statement the caller prints inside. */
static const char *
open_tile_loops(Emitter *E, const TcVar *v, const char **idx, bool simd)
{
	const char *ext[TC_MAX_RANK];
	for (int d = 0; d < v->rank; d++)
		ext[d] = tc_omp_expr_text(E, v->shape[d], 0);
	open_loops(E, v->rank, idx, ext, simd);
	return tc_omp_elem(E, v, idx);
}

static void
close_tile_loops(Emitter *E, int rank)
{
	close_loops(E, rank);
}

static void
emit_fill(Emitter *E, const TcStmt *s)
{
	const TcVar *v = s->u.fill.dst.var;
	const TcExpr *value = s->u.fill.value;
	op_comment(E, s);
	double c;
	if (tc_c_const_float(value, &c) && c == 0 && !signbit(c)) {
		tc_buf_printf(E->out, "memset(%s, 0, %s);\n", v->name,
			      tc_omp_sizeof(E, v));
		return;
	}
	const char *text;
	if (tc_c_const_float(value, &c) && tc_dtype_is_float(v->dtype)) {
		TcBuf lit;
		tc_buf_init(&lit);
		tc_c_float(&lit, c, v->dtype == TC_DT_F64 ? TC_DT_F64 : TC_DT_F32);
		text = tc_omp_is_narrow_float(v->dtype) && !isinf(c)
			       ? tc_fmt(E->a, "tilec_round_%s(%s)",
					tc_dtype_name(v->dtype), lit.data)
			       : tc_strdup(E->a, lit.data);
		tc_buf_free(&lit);
	} else {
		text = stored_text(E, value, v->dtype);
	}
	const char *idx[TC_MAX_RANK];
	tc_omp_index_names(E, v->rank, idx);
	const char *el = open_tile_loops(E, v, idx, true);
	tc_buf_printf(E->out, "%s = %s;\n", el, text);
	close_tile_loops(E, v->rank);
}

/* --- Tile ops: copy and atomic add ---------------------------------------------- */

/* Suffix of the tilec_load_* / tilec_store_* row helper for a tensor
 * dtype, or NULL if rows of it are not copied by a helper. */
const char *
tc_omp_row_helper(TcDtype t)
{
	switch (t) {
	case TC_DT_F32: return "f32";
	case TC_DT_F16:
	case TC_DT_BF16:
	case TC_DT_FP8E4M3:
	case TC_DT_FP8E5M2: return tc_dtype_name(t);
	default: return NULL;
	}
}

/* A value of dtype `from` (text) as stored into dtype `to` held as a value
 * (a buffer element). */
const char *
tc_omp_to_buffer(Emitter *E, const char *val, TcDtype from, TcDtype to)
{
	if (tc_omp_rounds(to) && from != to)
		return tc_fmt(E->a, "tilec_round_%s(%s)", tc_dtype_name(to), val);
	if (strcmp(tc_omp_value_type(from), tc_omp_value_type(to)) != 0)
		return tc_fmt(E->a, "(%s)%s", tc_omp_value_type(to), val);
	return val;
}

/* Index text of tensor dim `vd` at tile position (idx) or the row start
 * (start = true: the origin alone). */
static const char *
tensor_index(Emitter *E, const CopyPlan *cp, int vd, bool start)
{
	for (int t = 0; t < cp->rank; t++) {
		if (cp->reg->dims[t] != vd)
			continue;
		if (start && t == cp->rank - 1)
			return cp->origin[t] ? cp->origin[t] : "0";
		if (!cp->origin[t])
			return cp->idx[t];
		return tc_fmt(E->a, "%s + %s", cp->origin[t], cp->idx[t]);
	}
	return tc_omp_expr_text(E, cp->reg->origin[vd], 0);
}

/* `T[a][b]` (or the flat offset of an i4 tensor) for the current element
 * or, with start, the first element of the current row. */
const char *
tc_omp_tensor_elem(Emitter *E, const CopyPlan *cp, bool start)
{
	const TcVar *v = cp->ten;
	TcBuf b;
	tc_buf_init(&b);
	if (v->dtype == TC_DT_I4) {
		for (int d = 0; d < v->rank - 1; d++)
			tc_buf_puts(&b, "(");
		tc_buf_printf(&b, "(long long)(%s)", tensor_index(E, cp, 0, start));
		for (int d = 1; d < v->rank; d++)
			tc_buf_printf(
				&b, " * %s + (%s))",
				tc_omp_expr_text(E, v->shape[d],
						 tc_binop_prec(TC_OP_MUL) + 1),
				tensor_index(E, cp, d, start));
	} else {
		tc_buf_puts(&b, v->name);
		for (int d = 0; d < v->rank; d++)
			tc_buf_printf(&b, "[%s]", tensor_index(E, cp, d, start));
	}
	const char *s = tc_strdup(E->a, b.data);
	tc_buf_free(&b);
	return s;
}

/* The current element of the tensor as the buffer holds it: read (i4
 * unpacked, narrow floats widened), then stored as the buffer's dtype. */
const char *
tc_omp_tensor_value(Emitter *E, const CopyPlan *cp)
{
	TcDtype tt = cp->ten->dtype;
	const char *te = tc_omp_tensor_elem(E, cp, false);
	const char *val = te;
	if (cp->tile->stored)
		return te; /* the pass matched the dtypes */
	if (tt == TC_DT_I4)
		val = tc_fmt(E->a, "tilec_i4_get(%s, %s)", cp->ten->name, te);
	else if (tc_omp_is_narrow_float(tt))
		val = tc_fmt(E->a, "tilec_%s_to_f32(%s)", tc_dtype_name(tt), te);
	return tc_omp_to_buffer(E, val, tt, cp->tile->dtype);
}

/* Name of the origin and extent of tile dim t (row0/rows, col0/cols for
 * the last two dims, i0/n_i for the others). */
static void
plan_names(Emitter *E, const CopyPlan *cp, int t, const char **origin,
	   const char **extent)
{
	int from_end = cp->rank - 1 - t;
	if (cp->rank >= 2 && from_end <= 1) {
		*origin = tc_omp_fresh(E, from_end ? "row0" : "col0");
		*extent = tc_omp_fresh(E, from_end ? "rows" : "cols");
	} else {
		*origin = tc_omp_fresh(E, tc_fmt(E->a, "%s0", cp->idx[t]));
		*extent = tc_omp_fresh(
			E,
			cp->rank == 1 ? "n" : tc_fmt(E->a, "n_%s", cp->idx[t]));
	}
}

/* cp->fixed: the test that the tensor dims the tile does not cover hold
 * their origin index, NULL where that is proven. */
void
tc_omp_fixed_dims(Emitter *E, CopyPlan *cp)
{
	TcBuf cond;
	tc_buf_init(&cond);
	for (int vd = 0; vd < cp->ten->rank; vd++) {
		bool covered = false;
		for (int t = 0; t < cp->rank; t++)
			covered |= cp->reg->dims[t] == vd;
		const TcExpr *o = cp->reg->origin[vd];
		if (covered || tc_index_in_extent(E->k, o, cp->ten->shape[vd]))
			continue;
		int lt = tc_binop_prec(TC_OP_LT) + 1;
		if (!tc_omp_origin_nonneg(cp->reg, vd))
			tc_buf_printf(&cond, "%s0 <= %s",
				      cond.len ? " && " : "",
				      tc_omp_expr_text(E, o, lt));
		tc_buf_printf(&cond, "%s%s < %s", cond.len ? " && " : "",
			      tc_omp_expr_text(E, o, lt),
			      tc_omp_expr_text(E, cp->ten->shape[vd], lt));
	}
	cp->fixed = cond.len ? tc_strdup(E->a, cond.data) : NULL;
	tc_buf_free(&cond);
}

/* Decide names and bounds; print the declarations.  Returns false if an
 * origin may be negative (the caller then guards every element). */
static bool
plan_copy(Emitter *E, CopyPlan *cp, bool *opened)
{
	TcBuf *b = E->out;
	*opened = false;
	for (int t = 0; t < cp->rank; t++)
		if (!tc_omp_origin_nonneg(cp->reg, cp->reg->dims[t]))
			return false;
	tc_omp_fixed_dims(E, cp);

	const char *oname[TC_MAX_RANK], *ename[TC_MAX_RANK];
	bool declare_origin[TC_MAX_RANK];
	int ndecl = 0;
	for (int t = 0; t < cp->rank; t++) {
		const TcExpr *o = cp->reg->origin[cp->reg->dims[t]];
		plan_names(E, cp, t, &oname[t], &ename[t]);
		declare_origin[t] = false;
		if (o->kind == TC_EX_INT && o->u.ival == 0) {
			cp->origin[t] = NULL;
		} else if (o->kind == TC_EX_VAR) {
			cp->origin[t] = o->u.var->name;
		} else {
			cp->origin[t] = oname[t];
			declare_origin[t] = true;
			ndecl++;
		}
	}
	if (ndecl) {
		tc_buf_puts(b, "{\n");
		b->indent++;
		*opened = true;
		tc_buf_puts(b, "const int ");
		int n = 0;
		for (int t = 0; t < cp->rank; t++) {
			if (!declare_origin[t])
				continue;
			tc_buf_printf(b, "%s%s = %s", n++ ? ", " : "", oname[t],
				      tc_omp_expr_text(
					      E,
					      cp->reg->origin[cp->reg->dims[t]],
					      TC_PREC_COMMA + 1));
		}
		tc_buf_puts(b, ";\n");
	}
	for (int t = 0; t < cp->rank; t++) {
		int vd = cp->reg->dims[t];
		long long o, n, e = tc_var_extent(cp->tile, t);
		const char *tile_ext =
			tc_omp_expr_text(E, cp->tile->shape[t], 0);
		bool full = tc_expr_const(cp->reg->origin[vd], &o) &&
			    tc_expr_const(cp->ten->shape[vd], &n) && o >= 0 &&
			    o + e <= n;
		if (full && !(t == 0 && cp->fixed)) {
			cp->ext[t] = tile_ext;
			cp->partial[t] = false;
			continue;
		}
		if (!*opened) {
			tc_buf_puts(b, "{\n");
			b->indent++;
			*opened = true;
		}
		cp->ext[t] = ename[t];
		cp->partial[t] = true;
		const char *call =
			tc_fmt(E->a, "tilec_extent(%s, %s, %s)",
			       tc_omp_expr_text(E, cp->ten->shape[vd],
						TC_PREC_COMMA + 1),
			       cp->origin[t] ? cp->origin[t] : "0", tile_ext);
		if (t == 0 && cp->fixed)
			tc_buf_printf(b, "const int %s = %s ? %s : 0;\n", ename[t],
				      cp->fixed, call);
		else
			tc_buf_printf(b, "const int %s = %s;\n", ename[t], call);
	}
	return true;
}

static void print_element_copy(Emitter *E, const CopyPlan *cp, bool load,
			       bool atomic);

/* Copy element by element with a bounds test on each, when an origin may
 * be negative: a `const bool in_i` per outer tile dim says whether that
 * index is inside the tensor, the innermost test completes it. */
static void
emit_copy_guarded(Emitter *E, CopyPlan *cp, bool load, bool atomic)
{
	TcBuf *b = E->out;
	int R = cp->rank, lt = tc_binop_prec(TC_OP_LT) + 1;
	/* Origins: 0 and plain names as they are, others computed once. */
	TcBuf decl;
	tc_buf_init(&decl);
	for (int t = 0; t < R; t++) {
		const TcExpr *o = cp->reg->origin[cp->reg->dims[t]];
		if (o->kind == TC_EX_INT && o->u.ival == 0) {
			cp->origin[t] = NULL;
		} else if (o->kind == TC_EX_VAR) {
			cp->origin[t] = o->u.var->name;
		} else {
			const char *oname, *ename;
			plan_names(E, cp, t, &oname, &ename);
			cp->origin[t] = oname;
			tc_buf_printf(
				&decl, "%s%s = %s", decl.len ? ", " : "", oname,
				tc_omp_expr_text(E, o, TC_PREC_COMMA + 1));
		}
		cp->ext[t] = tc_omp_expr_text(E, cp->tile->shape[t], 0);
	}
	bool opened = decl.len > 0;
	if (opened) {
		tc_buf_printf(b, "{\n");
		b->indent++;
		tc_buf_printf(b, "const int %s;\n", decl.data);
	}
	tc_buf_free(&decl);
	/* The test for each tile dim; the dims the tile does not cover join
	 * the first. */
	const char *cond[TC_MAX_RANK];
	for (int t = 0; t < R; t++) {
		int vd = cp->reg->dims[t];
		const char *at = cp->origin[t] ? tc_fmt(E->a, "%s + %s", cp->origin[t],
							 cp->idx[t])
					       : cp->idx[t];
		const char *upper =
			tc_fmt(E->a, "%s < %s", at,
			       tc_omp_expr_text(E, cp->ten->shape[vd], lt));
		cond[t] = tc_omp_origin_nonneg(cp->reg, vd)
				  ? upper
				  : tc_fmt(E->a, "0 <= %s && %s", at, upper);
	}
	for (int vd = 0; vd < cp->ten->rank; vd++) {
		bool covered = false;
		for (int t = 0; t < R; t++)
			covered |= cp->reg->dims[t] == vd;
		const TcExpr *o = cp->reg->origin[vd];
		if (covered || tc_index_in_extent(E->k, o, cp->ten->shape[vd]))
			continue;
		const char *ot = tc_omp_expr_text(E, o, lt);
		const char *c =
			tc_fmt(E->a, "%s < %s", ot,
			       tc_omp_expr_text(E, cp->ten->shape[vd], lt));
		if (!tc_omp_origin_nonneg(cp->reg, vd))
			c = tc_fmt(E->a, "0 <= %s && %s", ot, c);
		cond[0] = tc_fmt(E->a, "%s && %s", c, cond[0]);
	}
	const char *inside = NULL;
	for (int t = 0; t < R; t++) {
		const char *test = inside ? tc_fmt(E->a, "%s && %s", inside, cond[t])
					  : cond[t];
		if (t == R - 1) {
			if (load || !atomic)
				tc_omp_pragma(E, "omp simd");
			tc_omp_for_dim(E, cp->idx[t], "0", cp->ext[t]);
			tc_buf_puts(b, atomic ? " {\n" : "\n");
			b->indent++;
			inside = test;
			break;
		}
		tc_omp_for_dim(E, cp->idx[t], "0", cp->ext[t]);
		tc_c_open(&E->pr);
		const char *name =
			tc_omp_fresh(E, tc_fmt(E->a, "in_%s", cp->idx[t]));
		tc_buf_printf(b, "const bool %s = %s;\n", name, test);
		inside = name;
	}
	if (load) {
		tc_buf_printf(b, "%s = %s ? %s : 0;\n",
			      tc_omp_elem(E, cp->tile, cp->idx), inside,
			      tc_omp_tensor_value(E, cp));
	} else if (atomic) {
		/* a pragma's statement, or a narrow float's helper call */
		tc_buf_printf(b, "if (%s)", inside);
		tc_c_open(&E->pr);
		print_element_copy(E, cp, false, true);
		tc_c_close(&E->pr);
	} else {
		tc_buf_printf(b, "if (%s)\n", inside);
		b->indent++;
		print_element_copy(E, cp, false, false);
		b->indent--;
	}
	b->indent--;
	if (atomic)
		tc_buf_puts(b, "}\n");
	for (int t = R - 2; t >= 0; t--)
		tc_c_close(&E->pr);
	if (opened) {
		b->indent--;
		tc_buf_puts(b, "}\n");
	}
}

/* A statement that reads or writes one element between tile and tensor. */
static void
print_element_copy(Emitter *E, const CopyPlan *cp, bool load, bool atomic)
{
	const char *el = tc_omp_elem(E, cp->tile, cp->idx);
	const char *te = tc_omp_tensor_elem(E, cp, false);
	TcDtype tt = cp->ten->dtype, bt = cp->tile->dtype;
	TcBuf *b = E->out;
	if (load) {
		tc_buf_printf(b, "%s = %s;\n", el, tc_omp_tensor_value(E, cp));
	} else if (atomic && tc_omp_is_narrow_float(tt)) {
		tc_buf_printf(b, "tilec_atomic_add_%s(&%s, %s);\n",
			      tc_dtype_name(tt), te, el);
	} else if (atomic) {
		const char *val = el;
		if (strcmp(tc_omp_value_type(tt), tc_omp_value_type(bt)) != 0)
			val = tc_fmt(E->a, "(%s)%s", tc_omp_value_type(tt), el);
		tc_omp_pragma(E, "omp atomic");
		tc_buf_printf(b, "%s += %s;\n", te, val);
	} else if (tt == TC_DT_I4) {
		tc_buf_printf(b, "tilec_i4_set(%s, %s, %s);\n", cp->ten->name, te,
			      el);
	} else if (tc_omp_is_narrow_float(tt)) {
		tc_buf_printf(b, "%s = tilec_f32_to_%s(%s);\n", te,
			      tc_dtype_name(tt), el);
	} else {
		tc_buf_printf(b, "%s = %s;\n", te, el);
	}
}

/* The size in bytes of tensor t, as C. */
const char *
tc_omp_tensor_bytes(Emitter *E, const TcVar *t)
{
	TcBuf n;
	tc_buf_init(&n);
	tc_buf_printf(&n, "sizeof(%s)", tc_omp_storage_type(t->dtype));
	for (int d = 0; d < t->rank; d++)
		tc_buf_printf(&n, " * %s%s", d == 0 ? "(size_t)" : "",
			      tc_omp_expr_text(E, t->shape[d],
					       tc_binop_prec(TC_OP_MUL) + 1));
	const char *s = tc_fmt(E->a, "%s", n.data);
	tc_buf_free(&n);
	return s;
}

/* A tile copy between buffer `tile` and the tensor region reg: a load
 * (reg into tile), else a store, an atomic add, or a store streamed past
 * the cache (copy.stream). */
static void
emit_copy_tensor(Emitter *E, const TcVar *tile, const TcRegion *reg,
		 bool load, bool atomic, bool streamed)
{
	CopyPlan cp = { .tile = tile, .reg = reg, .ten = reg->var,
			.rank = tile->rank };
	TcBuf *b = E->out;
	tc_omp_index_names(E, cp.rank, cp.idx);
	bool opened;
	if (!plan_copy(E, &cp, &opened)) {
		emit_copy_guarded(E, &cp, load, atomic);
		return;
	}
	int R = cp.rank;
	bool any_partial = false;
	for (int t = 0; t < R; t++)
		any_partial |= cp.partial[t];
	TcDtype tt = cp.ten->dtype, bt = tile->dtype;
	bool contiguous = reg->dims[R - 1] == cp.ten->rank - 1;
	const char *helper = tc_omp_row_helper(tt);
	bool rows = contiguous && helper && !atomic &&
		    strcmp(tc_omp_value_type(bt), "float") == 0 &&
		    !(load && tc_omp_is_narrow_float(bt) && bt != tt);
	if (load && tile->stored) /* the bits as they are */
		helper = tc_fmt(E->a, "%s_stored", helper);
	bool stream = rows && !load && streamed;
	/* Loads clear what lies outside the tensor first, unless the row
	 * helper does it (the last dim) and at most the first dim is left. */
	if (load && any_partial) {
		bool outer_partial = false;
		for (int t = 0; t < R - 1; t++)
			outer_partial |= cp.partial[t];
		if (rows && R == 2 && cp.partial[0]) {
			/* after the rows: below */
		} else if (!rows || outer_partial) {
			TcBuf cond;
			tc_buf_init(&cond);
			for (int t = 0; t < R; t++)
				if (cp.partial[t] && (!rows || t < R - 1))
					tc_buf_printf(
						&cond, "%s%s < %s",
						cond.len ? " || " : "",
						cp.ext[t],
						tc_omp_expr_text(
							E, tile->shape[t],
							tc_binop_prec(
								TC_OP_LT) +
								1));
			if (cond.len)
				tc_buf_printf(b, "if (%s)\n\tmemset(%s, 0, %s);\n",
					      cond.data, tile->name,
					      tc_omp_sizeof(E, tile));
			tc_buf_free(&cond);
		}
	}
	int loops = rows ? R - 1 : R;
	if (atomic)
		open_braced_loops(E, loops, cp.idx, cp.ext);
	else /* no simd over i4 stores: each is a compare-and-swap loop */
		open_loops(E, loops, cp.idx, cp.ext,
			   !rows && (load || tt != TC_DT_I4));
	if (rows) {
		TcBuf row;
		tc_buf_init(&row);
		tc_buf_puts(&row, tile->name);
		for (int t = 0; t < R - 1; t++)
			tc_buf_printf(&row, "[%s]", cp.idx[t]);
		const char *start =
			tc_fmt(E->a, "&%s", tc_omp_tensor_elem(E, &cp, true));
		const char *args[4];
		if (load) {
			args[0] = row.data;
			args[1] = start;
			args[2] = cp.ext[R - 1];
			args[3] = tc_omp_expr_text(E, tile->shape[R - 1], 0);
			tc_omp_print_wrapped(
				E, tc_fmt(E->a, "tilec_load_%s(", helper), args,
				4, ");");
		} else {
			args[0] = start;
			args[1] = row.data;
			args[2] = cp.ext[R - 1];
			/* An output only written here (cpu_stream.c): its
			 * size decides whether the rows pass the cache. */
			args[3] = stream ? tc_omp_tensor_bytes(E, cp.ten) : NULL;
			tc_omp_print_wrapped(
				E, tc_fmt(E->a, "tilec_store_%s%s(", helper,
					  stream ? "_out" : ""),
				args, stream ? 4 : 3, ");");
		}
		tc_buf_free(&row);
	} else {
		print_element_copy(E, &cp, load, atomic);
	}
	if (atomic)
		close_braced_loops(E, loops);
	else if (loops > 0)
		close_loops(E, loops);
	if (load && rows && R == 2 && cp.partial[0])
		tc_buf_printf(
			b, "memset(%s + %s, 0, sizeof %s[0] * (%s - %s));\n",
			tile->name, cp.ext[0], tile->name,
			tc_omp_expr_text(E, tile->shape[0], 0), cp.ext[0]);
	if (opened) {
		b->indent--;
		tc_buf_puts(b, "}\n");
	}
}

/* --- Prefetches ---------------------------------------------------------------- */

/* A PREFETCH (passes/cpu_prefetch.c): the start of each row of its
 * region, clipped to the tensor as the copy it anticipates is, asked into
 * cache; its origins are proven non-negative. */
static void
emit_prefetch(Emitter *E, const TcStmt *s)
{
	const TcRegion *reg = &s->u.copy.src;
	const TcVar *tile = s->u.copy.dst.var;
	CopyPlan cp = { .tile = tile, .reg = reg, .ten = reg->var,
			.rank = tile->rank };
	tc_omp_index_names(E, cp.rank, cp.idx);
	const char *what = tc_c_source_snippet(E->a, E->p->text, s->loc);
	tc_c_loc_comment(&E->pr, s->loc,
			 tc_fmt(E->a, "prefetch for the next iteration's %s",
				what ? what : "tile_copy"));
	bool opened;
	if (!plan_copy(E, &cp, &opened))
		tc_unreachable(); /* the origins are non-negative */
	int R = cp.rank;
	const char *bytes = tc_fmt(E->a, "%s * sizeof(%s)", cp.ext[R - 1],
				   tc_omp_storage_type(cp.ten->dtype));
	const char *start =
		tc_fmt(E->a, "&%s", tc_omp_tensor_elem(E, &cp, true));
	if (R == 1) {
		if (cp.partial[0])
			tc_buf_printf(E->out, "if (%s > 0)\n\t", cp.ext[0]);
		tc_buf_printf(E->out, "tilec_prefetch(%s, %s);\n", start, bytes);
	} else {
		/* Rows of the last dim start in bounds only if some of it is
		 * left. */
		if (cp.partial[R - 1])
			cp.ext[R - 2] = tc_fmt(E->a, "%s && %s > 0", cp.ext[R - 2],
					       cp.ext[R - 1]);
		open_loops(E, R - 1, cp.idx, cp.ext, false);
		const char *args[] = { start, bytes };
		tc_omp_print_wrapped(E, "tilec_prefetch(", args, 2, ");");
		close_loops(E, R - 1);
	}
	if (opened) {
		E->out->indent--;
		tc_buf_puts(E->out, "}\n");
	}
}

/* A copy between a whole buffer and a region of a buffer (or two whole
 * buffers): in bounds by check.c, element by element or one memcpy. */
static void
emit_copy_buffers(Emitter *E, const TcRegion *dst, const TcRegion *src)
{
	const TcVar *tile = dst->whole ? dst->var : src->var;
	const TcRegion *reg = dst->whole ? src : dst;
	if (dst->whole && src->whole &&
	    strcmp(tc_omp_value_type(dst->var->dtype),
		   tc_omp_value_type(src->var->dtype)) == 0 &&
	    !(tc_omp_rounds(dst->var->dtype) &&
	      dst->var->dtype != src->var->dtype)) {
		tc_buf_printf(E->out, "memcpy(%s, %s, %s);\n",
			      dst->var->name, src->var->name,
			      tc_omp_sizeof(E, dst->var));
		return;
	}
	const char *idx[TC_MAX_RANK];
	tc_omp_index_names(E, tile->rank, idx);
	const char *el = open_tile_loops(E, tile, idx, true);
	/* The region side's element. */
	TcBuf r;
	tc_buf_init(&r);
	tc_buf_puts(&r, reg->var->name);
	for (int vd = 0; vd < reg->var->rank; vd++) {
		int t = -1;
		for (int i = 0; i < reg->ndims && !reg->whole; i++)
			if (reg->dims[i] == vd)
				t = i;
		if (reg->whole)
			t = vd;
		const TcExpr *o = reg->origin[vd];
		bool zero = o->kind == TC_EX_INT && o->u.ival == 0;
		if (t < 0)
			tc_buf_printf(&r, "[%s]", tc_omp_expr_text(E, o, 0));
		else if (zero || reg->whole)
			tc_buf_printf(&r, "[%s]", idx[t]);
		else
			tc_buf_printf(&r, "[%s + %s]",
				      tc_omp_expr_text(
					      E, o, tc_binop_prec(TC_OP_ADD)),
				      idx[t]);
	}
	const char *re = tc_strdup(E->a, r.data);
	tc_buf_free(&r);
	if (dst->whole)
		tc_buf_printf(E->out, "%s = %s;\n", el,
			      tc_omp_to_buffer(E, re, src->var->dtype,
					       dst->var->dtype));
	else
		tc_buf_printf(E->out, "%s = %s;\n", re,
			      tc_omp_to_buffer(E, el, src->var->dtype,
					       dst->var->dtype));
	close_tile_loops(E, tile->rank);
}

static void
emit_copy(Emitter *E, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	bool atomic = s->kind == TC_ST_ATOMIC_ADD;
	op_comment(E, s);
	if (dst->var->kind == TC_VAR_TENSOR)
		emit_copy_tensor(E, src->var, dst, false, atomic,
				 s->u.copy.stream);
	else if (src->var->kind == TC_VAR_TENSOR)
		emit_copy_tensor(E, dst->var, src, true, false, false);
	else
		emit_copy_buffers(E, dst, src);
}

/* --- Tile ops: gemm ------------------------------------------------------------------ */

/* The panel depth as printed: the tile's k where one panel covers it. */
static const char *
kc_text(Emitter *E, const TcCpuGemm *g, const TcExpr *kext, const char *k)
{
	long long kv;
	if (tc_expr_const(kext, &kv) && g->kc >= kv)
		return k;
	return tc_fmt(E->a, "%d", g->kc);
}

static void
emit_gemm(Emitter *E, const TcStmt *s)
{
	const TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var,
		    *bv = s->u.gemm.b.var;
	bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
	TcBuf *b = E->out;
	op_comment(E, s);
	const char *m = tc_omp_expr_text(E, c->shape[0], 0);
	const char *n = tc_omp_expr_text(E, c->shape[1], 0);
	const char *k = tc_omp_expr_text(E, a->shape[ta ? 0 : 1], 0);
	const TcCpuGemm *g = &s->u.gemm.cpu;
	if (g->helper) {
		/* The cpu_gemm pass's helper: c += op(a) * op(b) on the
		 * block's tiles, b packed kc deep where it says so. */
		const char *args[] = {
			m,
			n,
			k,
			tc_fmt(E->a, "%s[0]", c->name),
			n,
			tc_fmt(E->a, "%s[0]", a->name),
			tc_omp_expr_text(E, a->shape[1], 0),
			ta ? "TILEC_TRANS" : "TILEC_NOTRANS",
			tc_fmt(E->a, "%s[0]", bv->name),
			tc_omp_expr_text(E, bv->shape[1], 0),
			tb ? "TILEC_TRANS" : "TILEC_NOTRANS",
			kc_text(E, g, a->shape[ta ? 0 : 1], k),
		};
		tc_omp_print_wrapped(E, tc_fmt(E->a, "%s(", g->helper), args,
				     12, ");");
		return;
	}
	/* Anything else (f64, integers, a narrow accumulator that rounds at
	 * every step) as a loop nest in the accumulator's type. */
	const char *idx[3];
	tc_omp_index_names(E, 3, idx);
	const char *i = idx[0], *j = idx[1], *p = idx[2];
	const char *order[3] = { i, p, j }, *ext[3] = { m, k, n };
	open_loops(E, 3, order, ext, true);
	const char *ae = ta ? tc_fmt(E->a, "%s[%s][%s]", a->name, p, i)
			    : tc_fmt(E->a, "%s[%s][%s]", a->name, i, p);
	const char *be = tb ? tc_fmt(E->a, "%s[%s][%s]", bv->name, j, p)
			    : tc_fmt(E->a, "%s[%s][%s]", bv->name, p, j);
	const char *ce = tc_fmt(E->a, "%s[%s][%s]", c->name, i, j);
	const char *ct = tc_omp_value_type(c->dtype);
	if (strcmp(tc_omp_value_type(a->dtype), ct) != 0) {
		ae = tc_fmt(E->a, "(%s)%s", ct, ae);
		be = tc_fmt(E->a, "(%s)%s", ct, be);
	}
	if (tc_omp_is_narrow_float(c->dtype))
		tc_buf_printf(b, "%s = tilec_round_%s(%s + %s * %s);\n", ce,
			      tc_dtype_name(c->dtype), ce, ae, be);
	else
		tc_buf_printf(b, "%s += %s * %s;\n", ce, ae, be);
	close_loops(E, 3);
}

/* --- Tile ops: reduce ------------------------------------------------------------------ */

/* The identity of a reduction in dtype t. */
static const char *
reduce_identity(TcReduceOp op, TcDtype t)
{
	if (op == TC_RED_SUM || op == TC_RED_ABSMAX)
		return tc_dtype_is_float(t) ? (t == TC_DT_F64 ? "0.0" : "0.0f")
					    : "0";
	bool max = op == TC_RED_MAX;
	switch (t) {
	case TC_DT_I64: return max ? "LLONG_MIN" : "LLONG_MAX";
	case TC_DT_I32: return max ? "INT_MIN" : "INT_MAX";
	case TC_DT_I8: return max ? "INT8_MIN" : "INT8_MAX";
	case TC_DT_I4: return max ? "-8" : "7";
	case TC_DT_U8: return max ? "0" : "UINT8_MAX";
	case TC_DT_BOOL: return max ? "false" : "true";
	default: return max ? "-INFINITY" : "INFINITY";
	}
}

/* The dtype of the value a reduction's accumulator of type t (from
 * tc_reduce_type) ends with: t, but an i4 sum adds in the int8_t that
 * holds an i4, so it ends with an i8, wrapped when stored. */
TcDtype
tc_omp_reduce_held(TcDtype t)
{
	return t == TC_DT_I4 ? TC_DT_I8 : t;
}

/* `acc op= x` for a reduction, as a statement body.  Max and min are
 * selects that compile to one vmaxps / vminps: a NaN x leaves acc alone,
 * as fmaxf does, and acc never holds a NaN (see reduce_start). */
const char *
tc_omp_reduce_step(Emitter *E, TcReduceOp op, TcDtype t, const char *acc,
		   const char *x)
{
	bool dbl = t == TC_DT_F64;
	switch (op) {
	case TC_RED_SUM:
		return tc_fmt(E->a, "%s += %s", acc, x);
	case TC_RED_MAX:
		return tc_fmt(E->a, "%s = %s > %s ? %s : %s", acc, x, acc, x, acc);
	case TC_RED_MIN:
		return tc_fmt(E->a, "%s = %s < %s ? %s : %s", acc, x, acc, x, acc);
	case TC_RED_ABSMAX:
		if (!tc_dtype_is_float(t)) {
			/* |x| in t itself: an i8 -128 has |x| 128 in int,
			 * -128 back in i8 (as the reference wraps it), which
			 * never beats the 0 the max starts at; taken in int,
			 * it would win and wrap when stored, so the result
			 * would hang on the order the lanes combine in.  The
			 * same for an i4 -8. */
			const char *ax = tc_fmt(E->a, "%s < 0 ? -%s : %s", x, x, x);
			if (t == TC_DT_I8)
				ax = tc_fmt(E->a, "(int8_t)(%s)", ax);
			else if (t == TC_DT_I4)
				ax = tc_fmt(E->a, "tilec_round_i4(%s)", ax);
			return tc_fmt(E->a, "%s = tilec_max(%s, %s)", acc, acc, ax);
		}
		x = tc_fmt(E->a, "%s(%s)", dbl ? "fabs" : "fabsf", x);
		return tc_fmt(E->a, "%s = %s > %s ? %s : %s", acc, x, acc, x, acc);
	default:
		tc_unreachable();
	}
}

/* The accumulator's first value: the identity, or with accumulate the
 * destination's value, of which a NaN is dropped (fmaxf's rule) and for
 * absmax the magnitude taken. */
const char *
tc_omp_reduce_start(Emitter *E, TcReduceOp op, TcDtype t, const char *old)
{
	if (!old)
		return reduce_identity(op, t);
	if (!tc_dtype_is_float(t) && op == TC_RED_ABSMAX)
		/* |old| in t, as each element's (reduce_step) */
		return t == TC_DT_I4 ? tc_fmt(E->a, "tilec_round_i4(%s < 0 ? -%s : %s)",
					      old, old, old)
				     : tc_fmt(E->a, "%s < 0 ? -%s : %s", old, old, old);
	if (!tc_dtype_is_float(t))
		return old;
	bool dbl = t == TC_DT_F64;
	switch (op) {
	case TC_RED_SUM:
		return old;
	case TC_RED_MAX:
		return tc_fmt(E->a, "%s(%s, -INFINITY)",
			      dbl ? "fmax" : "tilec_fmaxf", old);
	case TC_RED_MIN:
		return tc_fmt(E->a, "%s(%s, INFINITY)",
			      dbl ? "fmin" : "tilec_fminf", old);
	case TC_RED_ABSMAX:
		return tc_fmt(E->a, "%s(%s(%s), 0.0%s)",
			      dbl ? "fmax" : "tilec_fmaxf", dbl ? "fabs" : "fabsf",
			      old, dbl ? "" : "f");
	default:
		tc_unreachable();
	}
}

/* A float max, min or absmax reduces integer keys (tilec_max_key,
 * tilec_min_key: clang vectorizes no omp simd max-reduction of floats,
 * and warns of the loop; every compiler vectorizes one of ints), as the
 * fused reductions do (openmp_fuse.c). */
static bool
keyed_reduce(TcReduceOp op, TcDtype t)
{
	return t == TC_DT_F32 && op != TC_RED_SUM;
}

/* The key accumulator's start: the key of the float start value. */
static const char *
key_start(Emitter *E, TcReduceOp op, const char *start)
{
	return tc_fmt(E->a, "%s(%s)",
		      op == TC_RED_MIN ? "tilec_min_key" : "tilec_max_key", start);
}

/* One element's step on key accumulator acc. */
static const char *
key_step(Emitter *E, TcReduceOp op, const char *acc, const char *x)
{
	if (op == TC_RED_ABSMAX)
		x = tc_fmt(E->a, "fabsf(%s)", x);
	return tc_fmt(E->a, "%s = tilec_%s(%s, %s(%s))", acc,
		      op == TC_RED_MIN ? "min" : "max", acc,
		      op == TC_RED_MIN ? "tilec_min_key" : "tilec_max_key", x);
}

static void
emit_reduce(Emitter *E, const TcStmt *s)
{
	const TcVar *dst = s->u.reduce.dst.var, *src = s->u.reduce.src.var;
	TcReduceOp op = s->u.reduce.op;
	int rd = s->u.reduce.dim, R = src->rank;
	bool acc_old = s->u.reduce.accumulate;
	TcBuf *b = E->out;
	op_comment(E, s);
	const char *idx[TC_MAX_RANK], *didx[TC_MAX_RANK];
	tc_omp_index_names(E, R, idx);
	for (int d = 0, n = 0; d < R; d++)
		if (d != rd)
			didx[n++] = idx[d];
	const char *se = tc_omp_elem(E, src, idx);
	const char *de = tc_omp_elem(E, dst, didx);
	/* Each element converted to the type the reduction combines in (a
	 * narrow float destination rounds once at the end). */
	TcDtype t = tc_reduce_type(dst, src);
	se = tc_omp_to_buffer(E, se, src->dtype, t);
	if (rd == R - 1 && t == TC_DT_F32 &&
	    strcmp(tc_omp_held_type(src), "float") == 0) {
		/* Along the last dim of a float tile (one held as float,
		 * integers not): one call per row of a helper that keeps 64
		 * partial results in vector lanes. */
		static const char *const helpers[] = {
			[TC_RED_SUM] = "tilec_row_sum", [TC_RED_MAX] = "tilec_row_max",
			[TC_RED_MIN] = "tilec_row_min",
			[TC_RED_ABSMAX] = "tilec_row_absmax",
		};
		TcBuf row;
		tc_buf_init(&row);
		tc_buf_puts(&row, src->name);
		for (int d = 0; d < R - 1; d++)
			tc_buf_printf(&row, "[%s]", idx[d]);
		const char *val =
			tc_fmt(E->a, "%s(%s, %s)", helpers[op], row.data,
			       tc_omp_expr_text(E, src->shape[R - 1],
						TC_PREC_COMMA + 1));
		tc_buf_free(&row);
		const char *assign = "=";
		if (acc_old && op == TC_RED_SUM &&
		    !tc_omp_is_narrow_float(dst->dtype))
			assign = "+=";
		else if (acc_old && op == TC_RED_SUM)
			val = tc_fmt(E->a, "%s + %s", de, val);
		else if (acc_old)
			val = tc_fmt(E->a, "%s(%s, %s)",
				     op == TC_RED_MIN ? "tilec_fminf"
						      : "tilec_fmaxf",
				     tc_omp_reduce_start(E, op, t, de), val);
		const char *ext[TC_MAX_RANK];
		for (int d = 0; d < R - 1; d++)
			ext[d] = tc_omp_expr_text(E, src->shape[d], 0);
		open_loops(E, R - 1, idx, ext, false);
		const char *stored =
			tc_omp_is_narrow_float(dst->dtype)
				? tc_fmt(E->a, "tilec_round_%s(%s)",
					 tc_dtype_name(dst->dtype), val)
				: val;
		const char *args[] = { stored };
		tc_omp_print_wrapped(E, tc_fmt(E->a, "%s %s ", de, assign),
				     args, 1, ";");
		close_loops(E, R - 1);
		return;
	}
	if (rd == R - 1) {
		/* Along the last dim: a scalar accumulator per row, reduced
		 * across vector lanes. */
		static const char *const acc_names[] = {
			[TC_RED_SUM] = "sum", [TC_RED_MAX] = "maxv",
			[TC_RED_MIN] = "minv", [TC_RED_ABSMAX] = "amax",
		};
		static const char *const omp_ops[] = {
			[TC_RED_SUM] = "+", [TC_RED_MAX] = "max",
			[TC_RED_MIN] = "min", [TC_RED_ABSMAX] = "max",
		};
		const char *acc = tc_omp_fresh(E, acc_names[op]);
		for (int d = 0; d < R - 1; d++) {
			tc_omp_for_dim(E, idx[d], "0",
				       tc_omp_expr_text(E, src->shape[d], 0));
			tc_buf_puts(b, d == R - 2 ? " {\n" : "\n");
			b->indent++;
		}
		const char *start =
			tc_omp_reduce_start(E, op, t, acc_old ? de : NULL);
		bool key = keyed_reduce(op, t);
		tc_buf_printf(b, "%s %s = %s;\n",
			      key ? "int" : tc_omp_value_type(t), acc,
			      key ? key_start(E, op, start) : start);
		tc_omp_pragma(E, "omp simd reduction(%s : %s)", omp_ops[op],
			      acc);
		tc_omp_for_dim(E, idx[R - 1], "0",
			       tc_omp_expr_text(E, src->shape[R - 1], 0));
		tc_buf_printf(b, "\n\t%s;\n",
			      key ? key_step(E, op, acc, se)
				  : tc_omp_reduce_step(E, op, t, acc, se));
		const char *val =
			key ? tc_fmt(E->a, "tilec_key_float(%s)", acc) : acc;
		tc_buf_printf(b, "%s = %s;\n", de,
			      tc_omp_to_buffer(E, val, tc_omp_reduce_held(t),
					       dst->dtype));
		tc_c_close(&E->pr);
		b->indent -= R - 2;
		return;
	}
	/* Along an outer dim: accumulate whole rows into dst, vectorized
	 * along the last dim. */
	if (!acc_old) {
		const char *id = reduce_identity(op, t);
		if (strcmp(id, "0") == 0 || strcmp(id, "0.0f") == 0 ||
		    strcmp(id, "0.0") == 0) {
			tc_buf_printf(b, "memset(%s, 0, %s);\n", dst->name,
				      tc_omp_sizeof(E, dst));
		} else {
			const char *el = open_tile_loops(E, dst, didx, true);
			tc_buf_printf(b, "%s = %s;\n", el, id);
			close_tile_loops(E, dst->rank);
		}
	} else if (op != TC_RED_SUM) {
		/* Old values join as the row path's accumulator does. */
		const char *el = open_tile_loops(E, dst, didx, true);
		tc_buf_printf(b, "%s = %s;\n", el,
			      tc_omp_reduce_start(E, op, t, el));
		close_tile_loops(E, dst->rank);
	}
	const char *sext[TC_MAX_RANK];
	for (int d = 0; d < R; d++)
		sext[d] = tc_omp_expr_text(E, src->shape[d], 0);
	open_loops(E, R, idx, sext, true);
	tc_buf_printf(b, "%s;\n", tc_omp_reduce_step(E, op, t, de, se));
	close_loops(E, R);
	if (tc_omp_rounds(dst->dtype)) {
		const char *el = open_tile_loops(E, dst, didx, true);
		tc_buf_printf(b, "%s = tilec_round_%s(%s);\n", el,
			      tc_dtype_name(dst->dtype), el);
		close_tile_loops(E, dst->rank);
	}
}

/* REDUCE_ALL, `s = tile_sum(x)` and its kin: one accumulator over every
 * element, the last dim a simd reduction; the local itself when it has
 * the type the reduction combines in, else a temporary converted once at
 * the end. */
static void
emit_reduce_all(Emitter *E, const TcStmt *s)
{
	static const char *const acc_names[] = {
		[TC_RED_SUM] = "sum", [TC_RED_MAX] = "maxv",
		[TC_RED_MIN] = "minv", [TC_RED_ABSMAX] = "amax",
	};
	static const char *const omp_ops[] = {
		[TC_RED_SUM] = "+", [TC_RED_MAX] = "max",
		[TC_RED_MIN] = "min", [TC_RED_ABSMAX] = "max",
	};
	const TcVar *dst = s->u.reduce_all.dst, *src = s->u.reduce_all.src.var;
	TcReduceOp op = s->u.reduce_all.op;
	TcDtype t = tc_reduce_all_type(src->dtype);
	int R = src->rank;
	TcBuf *b = E->out;
	op_comment(E, s);
	bool key = keyed_reduce(op, t);
	bool direct = dst->dtype == t && !key;
	if (!direct) {
		tc_buf_puts(b, "{\n");
		b->indent++;
	}
	const char *idx[TC_MAX_RANK];
	tc_omp_index_names(E, R, idx);
	const char *acc = direct ? dst->name : tc_omp_fresh(E, acc_names[op]);
	const char *se = tc_omp_to_buffer(E, tc_omp_elem(E, src, idx),
					  src->dtype, t);
	const char *start = tc_omp_reduce_start(E, op, t, NULL);
	tc_buf_printf(b, "%s%s%s = %s;\n",
		      direct ? "" : key ? "int" : tc_omp_value_type(t),
		      direct ? "" : " ", acc,
		      key ? key_start(E, op, start) : start);
	for (int d = 0; d < R - 1; d++) {
		tc_omp_for_dim(E, idx[d], "0",
			       tc_omp_expr_text(E, src->shape[d], 0));
		tc_buf_puts(b, "\n");
		b->indent++;
	}
	tc_omp_pragma(E, "omp simd reduction(%s : %s)", omp_ops[op], acc);
	tc_omp_for_dim(E, idx[R - 1], "0",
		       tc_omp_expr_text(E, src->shape[R - 1], 0));
	tc_buf_printf(b, "\n\t%s;\n",
		      key ? key_step(E, op, acc, se)
			  : tc_omp_reduce_step(E, op, t, acc, se));
	b->indent -= R - 1;
	if (!direct) {
		const char *val =
			key ? tc_fmt(E->a, "tilec_key_float(%s)", acc) : acc;
		tc_buf_printf(b, "%s = %s;\n", dst->name,
			      tc_omp_to_buffer(E, val, t, dst->dtype));
		tc_c_close(&E->pr);
	}
}

/* ARG_REDUCE, tile_reduce_argmax / argmin: per output a scan along the
 * reduced dim keeping the index of the best element so far (strictly
 * better: ties keep the smaller index; a NaN never wins and is beaten by
 * any number). */
/* ARG_REDUCE as top-k: per position of the other dims, output r along
 * dim is the element that comes first (tilec_topk_before) among those
 * after output r - 1; a scan per r. */
static void
emit_topk(Emitter *E, const TcStmt *s)
{
	const TcVar *dst = s->u.arg_reduce.dst.var, *ix = s->u.arg_reduce.index.var,
		    *src = s->u.arg_reduce.src.var;
	int rd = s->u.arg_reduce.dim, R = src->rank;
	TcBuf *b = E->out;
	op_comment(E, s);
	const char *idx[TC_MAX_RANK], *oidx[TC_MAX_RANK], *aidx[TC_MAX_RANK],
		   *pidx[TC_MAX_RANK], *ridx[TC_MAX_RANK], *ext[TC_MAX_RANK];
	tc_omp_index_names(E, R, idx);
	const char *at = tc_omp_fresh(E, "at"), *rank = tc_omp_fresh(E, "rank");
	int n = 0;
	for (int d = 0; d < R; d++) {
		aidx[d] = d == rd ? at : idx[d];
		ridx[d] = d == rd ? rank : idx[d];
		pidx[d] = d == rd ? tc_fmt(E->a, "%s - 1", rank) : idx[d];
		if (d != rd) {
			ext[n] = tc_omp_expr_text(E, src->shape[d], 0);
			oidx[n++] = idx[d];
		}
	}
	ext[n] = tc_omp_expr_text(E, dst->shape[rd], 0);
	oidx[n++] = rank;
	open_braced_loops(E, n, oidx, ext);
	const char *before = tc_dtype_is_float(src->dtype) ? "tilec_topk_before"
							   : "tilec_topk_before_int";
	const char *prev = tc_omp_elem(E, ix, pidx);
	for (int d = 0; d < R; d++)
		if (d == rd)
			pidx[d] = prev;
	const char *x = tc_omp_elem(E, src, idx);
	tc_buf_printf(b, "%s %s = -1;\n", tc_omp_value_type(ix->dtype), at);
	tc_buf_printf(b, "for (int %s = 0; %s < %s; %s++)\n", idx[rd], idx[rd],
		      tc_omp_expr_text(E, src->shape[rd], 0), idx[rd]);
	tc_buf_printf(b, "\tif ((%s == 0 || %s(%s, %s, %s, %s)) &&\n", rank,
		      before, tc_omp_elem(E, src, pidx), prev, x, idx[rd]);
	tc_buf_printf(b, "\t    (%s < 0 || %s(%s, %s, %s, %s)))\n", at, before, x,
		      idx[rd], tc_omp_elem(E, src, aidx), at);
	tc_buf_printf(b, "\t\t%s = %s;\n", at, idx[rd]);
	tc_buf_printf(b, "%s = %s;\n", tc_omp_elem(E, dst, ridx),
		      tc_omp_to_buffer(E, tc_omp_elem(E, src, aidx), src->dtype,
				       dst->dtype));
	tc_buf_printf(b, "%s = %s;\n", tc_omp_elem(E, ix, ridx), at);
	close_braced_loops(E, n);
}

static void
emit_arg_reduce(Emitter *E, const TcStmt *s)
{
	if (s->u.arg_reduce.topk) {
		emit_topk(E, s);
		return;
	}
	const TcVar *dst = s->u.arg_reduce.dst.var, *ix = s->u.arg_reduce.index.var,
		    *src = s->u.arg_reduce.src.var;
	bool min = s->u.arg_reduce.min;
	int rd = s->u.arg_reduce.dim, R = src->rank;
	TcBuf *b = E->out;
	op_comment(E, s);
	const char *idx[TC_MAX_RANK], *didx[TC_MAX_RANK], *aidx[TC_MAX_RANK];
	const char *ext[TC_MAX_RANK];
	tc_omp_index_names(E, R, idx);
	const char *at = tc_omp_fresh(E, "at");
	for (int d = 0, n = 0; d < R; d++) {
		aidx[d] = d == rd ? at : idx[d];
		if (d != rd) {
			ext[n] = tc_omp_expr_text(E, src->shape[d], 0);
			didx[n++] = idx[d];
		}
	}
	open_braced_loops(E, R - 1, didx, ext);
	const char *x = tc_omp_elem(E, src, idx), *best = tc_omp_elem(E, src, aidx);
	tc_buf_printf(b, "%s %s = 0;\n", tc_omp_value_type(ix->dtype), at);
	tc_buf_printf(b, "for (int %s = 1; %s < %s; %s++)\n", idx[rd], idx[rd],
		      tc_omp_expr_text(E, src->shape[rd], 0), idx[rd]);
	const char *cmp = min ? "<" : ">";
	if (tc_dtype_is_float(src->dtype))
		tc_buf_printf(b, "\tif (%s %s %s || (%s != %s && %s == %s))\n",
			      x, cmp, best, best, best, x, x);
	else
		tc_buf_printf(b, "\tif (%s %s %s)\n", x, cmp, best);
	tc_buf_printf(b, "\t\t%s = %s;\n", at, idx[rd]);
	tc_buf_printf(b, "%s = %s;\n", tc_omp_elem(E, dst, didx),
		      tc_omp_to_buffer(E, best, src->dtype, dst->dtype));
	tc_buf_printf(b, "%s = %s;\n", tc_omp_elem(E, ix, didx), at);
	close_braced_loops(E, R - 1);
}

/* --- Statements ------------------------------------------------------------------------ */

void
tc_omp_emit_stmt(Emitter *E, const TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		tc_buf_puts(E->out, "{\n");
		E->out->indent++;
		emit_body(E, s);
		tc_c_close(&E->pr);
		break;
	case TC_ST_DECL:
		emit_decl(E, s);
		break;
	case TC_ST_ASSIGN:
		emit_assign(E, s);
		break;
	case TC_ST_FOR:
		emit_for(E, s, false);
		break;
	case TC_ST_IF:
		emit_if(E, s);
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
		emit_copy(E, s);
		break;
	case TC_ST_GEMM:
		emit_gemm(E, s);
		break;
	case TC_ST_FILL:
		emit_fill(E, s);
		break;
	case TC_ST_REDUCE:
		emit_reduce(E, s);
		break;
	case TC_ST_REDUCE_ALL:
		emit_reduce_all(E, s);
		break;
	case TC_ST_ARG_REDUCE:
		emit_arg_reduce(E, s);
		break;
	case TC_ST_PREFETCH:
		emit_prefetch(E, s);
		break;
	default:
		tc_unreachable();
	}
}

/* --- Functions --------------------------------------------------------------------------- */

/* The declaration of a kernel parameter. */
static const char *
param_decl(Emitter *E, const TcVar *v)
{
	if (v->kind == TC_VAR_SCALAR)
		return tc_fmt(E->a, "%s %s", tc_omp_value_type(v->dtype),
			      v->name);
	const char *cq = v->is_const ? "const " : "";
	if (v->dtype == TC_DT_I4)
		return tc_fmt(E->a, "%s%s *restrict %s", cq,
			      tc_omp_storage_type(v->dtype), v->name);
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_printf(&b, "%s%s %s[restrict %s]", cq,
		      tc_omp_storage_type(v->dtype), v->name,
		      tc_omp_expr_text(E, v->shape[0], 0));
	for (int i = 1; i < v->rank; i++)
		tc_buf_printf(&b, "[%s]", tc_omp_expr_text(E, v->shape[i], 0));
	const char *s = tc_strdup(E->a, b.data);
	tc_buf_free(&b);
	return s;
}

/* The block vars the body uses, in grid order x, y, z. */
static int
used_blocks(Emitter *E, const TcVar **out)
{
	int n = 0;
	for (int d = 0; d < 3; d++)
		if (E->k->block[d] && E->used[E->k->block[d]->index])
			out[n++] = E->k->block[d];
	return n;
}

/* static void KERNEL_block(params the body uses, block indices) { body } */
static void
emit_block_function(Emitter *E, const char *name)
{
	const TcKernel *k = E->k;
	TcBuf *b = E->out;
	const char *params[64 + 3];
	int n = 0;
	for (int i = 0; i < k->params.len && n < 64; i++) {
		const TcVar *v = k->params.items[i];
		if (E->used[v->index])
			params[n++] = param_decl(E, v);
	}
	const TcVar *blocks[3];
	int nb = used_blocks(E, blocks);
	for (int i = 0; i < nb; i++) {
		if (k->strip > 1 && blocks[i] == k->block[0]) {
			params[n++] = tc_fmt(E->a, "int %s", E->strip_first);
			params[n++] = tc_fmt(E->a, "int %s", E->strip_count);
			continue;
		}
		params[n++] = tc_fmt(E->a, "int %s", blocks[i]->name);
	}
	tc_buf_puts(b, "static void\n");
	if (n == 0)
		params[n++] = "void";
	tc_omp_print_wrapped(E, tc_fmt(E->a, "%s(", name), params, n, ")");
	tc_buf_puts(b, "{\n");
	b->indent++;
	if (k->strip > 1)
		emit_strip_seq(E, k->body);
	else
		emit_body(E, k->body);
	b->indent--;
	tc_buf_puts(b, "}\n");
}

static void
mark_kernel_use(void *ctx, const TcVar *v)
{
	Emitter *E = ctx;
	if (v->kind != TC_VAR_TUNABLE)
		E->used[v->index] = true;
}

/* void KERNEL(params) { the grid as an OpenMP loop over blocks } */
static void
emit_kernel_function(Emitter *E, const char *block_fn)
{
	const TcKernel *k = E->k;
	TcBuf *b = E->out;
	const char *params[64];
	int n = 0;
	for (int i = 0; i < k->params.len && n < 64; i++)
		params[n++] = param_decl(E, k->params.items[i]);
	tc_buf_puts(b, "void\n");
	if (n == 0)
		params[n++] = "void";
	tc_omp_print_wrapped(E, tc_fmt(E->a, "%s(", k->name), params, n, ")");
	tc_buf_puts(b, "{\n");
	b->indent++;
	/* Arguments of the block function: what it uses, then the block
	 * indices. */
	const char *args[64 + 3];
	int na = 0;
	for (int i = 0; i < k->params.len && na < 64; i++) {
		const TcVar *v = k->params.items[i];
		if (E->used[v->index])
			args[na++] = v->name;
	}
	const TcVar *blocks[3];
	int nb = used_blocks(E, blocks);
	for (int i = 0; i < nb; i++) {
		if (k->strip > 1 && blocks[i] == k->block[0]) {
			/* A strip: its first block and how many of the
			 * grid's remain, at most k->strip. */
			args[na++] = E->strip_first;
			args[na++] = tc_fmt(
				E->a, "tilec_min(%s, %s - %s)", E->strip_len,
				tc_omp_expr_text(E, k->grid[0],
						 tc_binop_prec(TC_OP_SUB) + 1),
				E->strip_first);
			continue;
		}
		args[na++] = blocks[i]->name;
	}
	/* Parameters nothing reads (not the blocks, the grid or a shape). */
	for (int d = 0; d < 3; d++)
		tc_omp_walk_vars(k->grid[d], NULL, mark_kernel_use, E);
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		for (int j = 0; j < v->rank; j++)
			tc_omp_walk_vars(v->shape[j], NULL, mark_kernel_use, E);
	}
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		if (!E->used[v->index])
			tc_buf_printf(b, "(void)%s;\n", v->name);
	}
	/* A strip's length, shortened where shorter strips spread the grid
	 * more evenly over the threads. */
	if (k->strip > 1) {
		TcBuf rows;
		tc_buf_init(&rows);
		for (int d = 1; d < 3; d++)
			if (k->grid[d])
				tc_buf_printf(&rows, "%s%s",
					      rows.len ? " * " : "(long long)",
					      tc_omp_expr_text(
						      E, k->grid[d],
						      tc_binop_prec(TC_OP_MUL) + 1));
		tc_buf_puts(b, "// blocks of a grid row each call runs: fewer "
			    "where shorter strips\n// spread the grid more "
			    "evenly over the threads\n");
		tc_omp_print_wrapped(
			E, tc_fmt(E->a, "const int %s = tilec_strip_blocks(",
				  E->strip_len),
			(const char *[]){ tc_fmt(E->a, "%d", k->strip),
					  tc_omp_expr_text(E, k->grid[0], 0),
					  rows.data },
			3, ");");
		tc_buf_free(&rows);
	}
	/* Where its threads run (passes/cpu_bind.c). */
	if (k->bind_close)
		tc_buf_puts(b, "// the threads one per core, as OMP_PLACES=cores "
			    "OMP_PROC_BIND=close\n// would place them, unless "
			    "OpenMP's environment says otherwise\n"
			    "tilec_bind_threads();\n");
	/* The grid, z outermost, as one collapsed parallel loop. */
	static const char *const grid_names[3] = { "block_x", "block_y",
						   "block_z" };
	int nloops = 0;
	for (int d = 0; d < 3; d++)
		nloops += k->grid[d] != NULL;
	/* Rows streamed past the cache (passes/cpu_stream.c): each thread
	 * fences once after its blocks, before the threads join. */
	bool fence = k->streams && nloops > 0;
	if (fence) {
		tc_omp_pragma(E, "omp parallel");
		tc_buf_puts(b, "{\n");
		b->indent++;
	}
	const char *sched = tc_fmt(E->a, "schedule(%s)%s",
				   E->dynamic ? "dynamic" : "static",
				   fence ? " nowait" : "");
	if (nloops > 0) {
		if (nloops > 1)
			tc_omp_pragma(E, "omp %sfor collapse(%d) %s",
				      fence ? "" : "parallel ", nloops, sched);
		else
			tc_omp_pragma(E, "omp %sfor %s",
				      fence ? "" : "parallel ", sched);
	}
	for (int d = 2; d >= 0; d--) {
		if (!k->grid[d])
			continue;
		const char *var = k->block[d] ? k->block[d]->name
					      : tc_omp_fresh(E, grid_names[d]);
		if (d == 0 && k->strip > 1) {
			var = E->strip_first;
			tc_buf_printf(b, "for (int %s = 0; %s < %s; %s += %s)\n",
				      var, var,
				      tc_omp_expr_text(E, k->grid[d],
						       tc_binop_prec(TC_OP_LT) + 1),
				      var, E->strip_len);
			b->indent++;
			continue;
		}
		tc_buf_printf(b, "for (int %s = 0; %s < %s; %s++)\n", var, var,
			      tc_omp_expr_text(E, k->grid[d],
					       tc_binop_prec(TC_OP_LT) + 1),
			      var);
		b->indent++;
	}
	tc_omp_print_wrapped(E, tc_fmt(E->a, "%s(", block_fn), args, na, ");");
	b->indent -= nloops;
	if (k->streams) {
		tc_buf_puts(b, "// streamed rows reach memory before the "
			    "threads join\ntilec_stream_fence();\n");
		if (fence) {
			b->indent--;
			tc_buf_puts(b, "}\n");
		}
	}
	b->indent--;
	tc_buf_puts(b, "}\n");
}

/* void tilec_entry_KERNEL(void **args): the runtime's way in. */
static void
emit_entry(Emitter *E)
{
	const TcKernel *k = E->k;
	TcBuf *b = E->out;
	tc_buf_puts(b, "// The runtime's entry: args[i] points to parameter i's "
		    "value (a tensor's\n// is its data pointer).\n");
	tc_buf_printf(b, "void\ntilec_entry_%s(void **args)\n{\n", k->name);
	b->indent++;
	const TcAbi *abi = tc_abi_of(E->a, k, E->t);
	const char *args[64];
	int n = 0;
	for (int i = 0; i < abi->nparams && n < 64; i++) {
		const TcAbiParam *p = &abi->params[i];
		args[n++] = p->tensor ? tc_fmt(E->a, "*(void **)args[%d]", i)
				      : tc_fmt(E->a, "*(%s *)args[%d]",
					       p->c_type, i);
	}
	tc_omp_print_wrapped(E, tc_fmt(E->a, "%s(", k->name), args, n, ");");
	b->indent--;
	tc_buf_puts(b, "}\n");
}

static bool
is_gemm(const TcStmt *s, const void *arg)
{
	(void)arg;
	return s->kind == TC_ST_GEMM;
}

/* Include (or, standalone, inline) one helper header. */
static void
emit_template(Emitter *E, const char *name)
{
	if (!E->opt->standalone) {
		tc_buf_printf(E->out, "#include \"tilec/%s\"\n", name);
		return;
	}
	const TcEmbedded *t = tc_embedded_find(name);
	tc_assert(t);
	tc_buf_printf(E->out, "\n// ---- tilec/%s ----\n", name);
	tc_buf_puts(E->out, t->text);
}

/* The top of the file: where it came from, helpers, tunables. */
/* The target's CPU features as data: tilec's runtime reads
 * tilec_cpu_needs after loading the compiled file and refuses to run it
 * on a CPU without them (a clear error, not an illegal instruction).
 * Weak, so vendored files of one arch can be linked together. */
static void
emit_cpu_needs(Emitter *E)
{
	TcBuf needs;
	tc_buf_init(&needs);
	tc_target_cpu_needs(&needs, E->t);
	if (needs.len) {
		tc_buf_puts(E->out, "\n");
		tc_c_comment(&E->pr, "What this file's code needs of the CPU; "
			     "tilec's runtime checks it before running a "
			     "kernel.");
		/* Adjacent literals, broken after a space within 64
		 * columns (clang-format would break them so). */
		const char *decl = "__attribute__((weak)) const char "
				   "tilec_cpu_needs[] =";
		tc_buf_puts(E->out, decl);
		if (strlen(decl) + needs.len + 4 <= 80) {
			tc_buf_printf(E->out, " \"%s\";\n", needs.data);
			tc_buf_free(&needs);
			return;
		}
		for (const char *m = needs.data; *m;) {
			size_t piece = strlen(m);
			if (piece > 64) {
				piece = 64;
				while (piece > 1 && m[piece - 1] != ' ')
					piece--;
			}
			tc_buf_printf(E->out, "\n    \"%.*s\"", (int)piece, m);
			m += piece;
		}
		tc_buf_puts(E->out, ";\n");
	}
	tc_buf_free(&needs);
}

static void
emit_file_header(Emitter *E)
{
	const TcProgram *p = E->p;
	TcBuf *b = E->out;
	TcBuf names;
	tc_buf_init(&names);
	bool gemm = false;
	for (int i = 0; i < p->kernels.len; i++) {
		const TcKernel *k = p->kernels.items[i];
		tc_buf_printf(&names, "%s%s", i ? ", " : "", k->name);
		gemm |= tc_omp_count_nodes(NULL, k->body,
					   (Count){.stmt = is_gemm}) > 0;
	}
	tc_c_comment(&E->pr, tc_fmt(E->a, "Generated by tilec %s from %s, "
				    "kernel%s %s, for %s/%s.", TILEC_VERSION,
				    p->path, p->kernels.len > 1 ? "s" : "",
				    names.data, E->t->name, E->t->arch));
	tc_buf_free(&names);
	if (p->tunables.len) {
		TcBuf tun;
		tc_buf_init(&tun);
		tc_buf_puts(&tun, "Tunables:");
		for (int i = 0; i < p->tunables.len; i++) {
			const TcVar *v = p->tunables.items[i];
			tc_buf_printf(&tun, " %s=%lld", v->name, v->value);
		}
		tc_buf_puts(&tun, ".");
		tc_c_comment(&E->pr, tun.data);
		tc_buf_free(&tun);
	}
	tc_c_comment(&E->pr, "Build: cc -O3 -march=native -fopenmp "
		     "-fno-math-errno (not -ffast-math).");
	/* The explicit vectors' lanes this file was printed for; tilec_cpu.h
	 * stops with #error where its vectors have another width. */
	if (E->t->explicit_lanes)
		tc_buf_printf(b, "#define TILEC_VL %d\n", E->t->explicit_lanes);
	if (gemm)
		emit_template(E, "cpu/gemm.h");
	emit_template(E, "cpu/tilec_cpu.h");
	emit_cpu_needs(E);
	if (p->tunables.len) {
		tc_buf_puts(b, "\nenum {\n");
		for (int i = 0; i < p->tunables.len; i++) {
			const TcVar *v = p->tunables.items[i];
			tc_buf_printf(b, "\t%s = %lld,\n", v->name, v->value);
		}
		tc_buf_puts(b, "};\n");
	}
}

static bool
emit(const TcProgram *p, const TcKernel *k, const TcTarget *t,
     const TcOptions *opt, TcBuf *out, TcDiags *d)
{
	Emitter E = { .p = p, .k = k, .t = t, .opt = opt, .d = d };
	E.a = tc_arena_new();
	size_t nv = (size_t)k->vars.len + 1;
	E.visible = tc_alloc(E.a, nv * sizeof *E.visible);
	E.used = tc_alloc(E.a, nv * sizeof *E.used);
	E.block_dep = tc_alloc(E.a, nv * sizeof *E.block_dep);
	E.vector = tc_alloc(E.a, nv * sizeof *E.vector);
	tc_walk_block_visible(k, E.visible);
	tc_omp_walk_vars(NULL, k->body, mark_used, &E);
	tc_walk_stmts(k->body, 0, note_block_work, &E);
	if (k->strip > 1) {
		E.strip_all = tc_alloc(E.a, nv * sizeof *E.strip_all);
		for (int i = 0; i < k->vars.len; i++) {
			const TcVar *v = k->vars.items[i];
			if (v->each_block)
				E.strip_all[i] = tc_omp_fresh(
					&E, tc_fmt(E.a, "%s_all", v->name));
		}
		E.strip_first = tc_omp_fresh(
			&E, tc_fmt(E.a, "%s0", k->block[0]->name));
		E.strip_count = tc_omp_fresh(
			&E, tc_fmt(E.a, "n%s", k->block[0]->name));
		E.strip_len = tc_omp_fresh(&E, "strip");
	}

	/* The block function first, into its own buffer, so an error leaves
	 * out untouched. */
	TcBuf body;
	tc_buf_init(&body);
	E.out = &body;
	E.pr = (TcCPrinter){ .out = &body, .hooks = &openmp_hooks, .ctx = &E };
	int errors = d->errors;
	const char *block_fn =
		tc_omp_fresh(&E, tc_fmt(E.a, "%s_block", k->name));
	emit_block_function(&E, block_fn);
	if (d->errors != errors) {
		tc_buf_free(&body);
		tc_arena_free(E.a);
		return false;
	}

	E.out = out;
	E.pr.out = out;
	size_t code = out->len; /* where this kernel's text starts */
	if (out->len == 0)
		emit_file_header(&E);
	tc_buf_puts(out, "\n");
	tc_c_loc_comment(&E.pr, k->loc,
			 k->strip > 1 ?
			 tc_fmt(E.a, "a strip of up to %d blocks of a row of "
				"%s; their buffers take %s of the thread's "
				"stack", k->strip, k->name,
				tc_size_text(E.a, k->stack_bytes)) :
			 tc_fmt(E.a, "one block of %s; its buffers take %s of "
				"the thread's stack", k->name,
				tc_size_text(E.a, k->stack_bytes)));
	int indent = out->indent;
	out->indent = 0;
	tc_buf_puts(out, body.data);
	out->indent = indent;
	tc_buf_free(&body);
	tc_buf_puts(out, "\n");
	tc_c_loc_comment(&E.pr, k->loc,
			 k->strip > 1 ?
			 tc_fmt(E.a, "%s: the grid, one strip of a row's "
				"blocks per OpenMP loop iteration; each thread "
				"runs consecutive strips", k->name) :
			 tc_fmt(E.a, "%s: the grid, one block per OpenMP loop "
				"iteration", k->name));
	emit_kernel_function(&E, block_fn);
	tc_buf_puts(out, "\n");
	emit_entry(&E);
	/* Code lines within the width (comments are wrapped as printed). */
	tc_wrap_code(out, code, TC_OMP_WIDTH);
	tc_arena_free(E.a);
	return true;
}

const TcBackend tc_backend_openmp = {
	.name = "openmp",
	.file_ext = ".c",
	.emit = emit,
};
