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
 *     `#pragma omp parallel for` over the blocks;
 *   - tilec_entry_KERNEL(void **args), the runtime's entry point: args[i]
 *     points to the value of parameter i, for a tensor to its data pointer.
 *
 * Tile ops become loops over the tile with bounds hoisted out of them
 * (copies compute the valid extent once, convert whole rows through
 * templates/cpu/tilec_cpu.h and zero-fill the rest), tile_gemm becomes a
 * call of a register-blocked micro-kernel (templates/cpu/gemm.h) chosen by
 * the target arch, parallel loops become plain loops whose innermost one is
 * `#pragma omp simd`.  Pipelined loops prefetch the rows their next
 * iteration's copies will read: the CPU's form of pipelining.  The
 * first kernel emitted into an empty buffer also prints the file header,
 * the helper headers and the tunables.
 *
 * Invariants relied on: check.c has run (tile ops only at block level,
 * regions fit, gemm operands are 2-dim whole buffers), buffer extents are
 * constants (tc_expr_const).  Every name printed is the tile program's,
 * except loop indices and extents of tile ops, which are chosen not to
 * collide with any name visible where they are declared.
 */
#include "cfamily.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct Emitter {
	TcArena *a;             /* scratch for this kernel */
	const TcProgram *p;     /* the program (its text, for comments) */
	const TcKernel *k;      /* the kernel being printed */
	const TcTarget *t;      /* openmp and its arch */
	const TcOptions *opt;   /* line directives, standalone */
	TcDiags *d;             /* where errors go */
	TcBuf *out;             /* the output */
	TcCPrinter pr;          /* expression printer with this file's hooks */
	/* Per kernel var (by index): */
	bool *visible;          /* in scope at block level (tile ops see it) */
	bool *used;             /* referenced by the block's body */
	const TcExpr **init;    /* LOCAL: initializer if never reassigned */
	const TcStmt **loop;    /* LOOP: the FOR binding it */
	bool *block_dep;        /* LOCAL: value depends on a block index */
	bool *extent;           /* SCALAR: a tensor's extent, so >= 0 */
	bool dynamic;           /* blocks do unequal work: schedule(dynamic) */
	bool dep_found;         /* set by note_block_dep's walk */
	long long frame_bytes;  /* bytes of buffers declared so far */
	long long stack_bytes;  /* of those, bytes in the block's frame */
	int line;               /* last #line printed, 0 for none */
	/* Fusion (the section "Fusion" below): */
	TcVec live;             /* LiveOut: buffers read after each statement */
	TcVec fusions;          /* Fusion *: the runs of statements fused */
	const bool *elided;     /* BUFFER: while a fused row loop is printed,
				   its element is a local of the loop */
	bool *unstored;         /* BUFFER: elided wherever it is written, so
				   never declared */
	TcVec reserved;         /* const char *: names the open fused loop
				   nest has declared */
	const TcStmt *around[16]; /* serial loops around what is printed */
	int naround;
	bool ahead;             /* a run has prefetched for the next block */
} Emitter;

/* --- Types ----------------------------------------------------------------------- */

static bool
is_narrow_float(TcDtype t)
{
	return t == TC_DT_F16 || t == TC_DT_BF16 || t == TC_DT_FP8E4M3 ||
	       t == TC_DT_FP8E5M2;
}

/* The C type of values (locals, expressions, buffer elements). */
static const char *
value_type(TcDtype t)
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
static const char *
storage_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F16: return "tilec_f16";
	case TC_DT_BF16: return "tilec_bf16";
	case TC_DT_FP8E4M3: return "tilec_fp8e4m3";
	case TC_DT_FP8E5M2: return "tilec_fp8e5m2";
	case TC_DT_I4: return "tilec_i4x2";
	default: return value_type(t);
	}
}

/* Bytes a buffer element takes in the block's frame. */
static int
buffer_elem_bytes(TcDtype t)
{
	if (t == TC_DT_BOOL || t == TC_DT_I4)
		return 1;
	return is_narrow_float(t) ? 4 : tc_dtype_bits(t) / 8;
}

static long long
dim(const TcVar *v, int i)
{
	long long n = 0;
	if (!tc_expr_const(v->shape[i], &n))
		tc_unreachable(); /* buffer shapes are constant after specialize */
	return n;
}

/* --- Expression hooks ----------------------------------------------------------- */

static const char *
func_name(TcFunc fn, TcDtype t)
{
	bool dbl = t == TC_DT_F64;
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
	const Emitter *E = pr->ctx;
	const TcVar *v = e->u.load.var;
	if (E->elided && E->elided[v->index]) {
		/* In a fused row loop: the element's local. */
		tc_buf_puts(pr->out, v->name);
	} else if (v->kind == TC_VAR_TENSOR && v->dtype == TC_DT_I4) {
		tc_buf_printf(pr->out, "tilec_i4_get(%s, ", v->name);
		print_flat_index(pr, v, e->u.load.idx);
		tc_buf_puts(pr->out, ")");
	} else if (v->kind == TC_VAR_TENSOR && is_narrow_float(v->dtype)) {
		tc_buf_printf(pr->out, "tilec_%s_to_f32(", tc_dtype_name(v->dtype));
		print_element(pr, v, e->u.load.idx);
		tc_buf_puts(pr->out, ")");
	} else {
		print_element(pr, v, e->u.load.idx);
	}
}

/* Narrowing to f16, bf16, fp8 rounds through the type (values stay
 * float); a cast between types with the same C spelling prints nothing. */
static bool
convert(TcCPrinter *pr, const TcExpr *value, TcDtype t)
{
	if (is_narrow_float(t)) {
		tc_buf_printf(pr->out, "tilec_round_%s(", tc_dtype_name(t));
		tc_c_expr_prec(pr, value, TC_PREC_COMMA + 1);
		tc_buf_puts(pr->out, ")");
		return true;
	}
	if (strcmp(value_type(t), value_type(value->dtype)) == 0) {
		tc_c_expr_prec(pr, value, TC_PREC_UNARY);
		return true;
	}
	return false;
}

static const TcCHooks openmp_hooks = {
	.value_type = value_type,
	.func_name = func_name,
	.load = load,
	.convert = convert,
};

static const char *expr_text(Emitter *E, const TcExpr *e, int min_prec);

/* The text of value as stored into an element or local of dtype t held as
 * a value (buffers, locals): narrow floats round unless already of type t. */
static const char *
stored_text(Emitter *E, const TcExpr *value, TcDtype t)
{
	const char *v = expr_text(E, value, TC_PREC_COMMA + 1);
	if (is_narrow_float(t) && value->dtype != t)
		return tc_fmt(E->a, "tilec_round_%s(%s)", tc_dtype_name(t), v);
	return v;
}

/* `HEAD VALUE;` where VALUE is stored as dtype t (TC_DT_NONE: as is),
 * with a long line broken as clang-format breaks it: after HEAD, or, if
 * VALUE still does not fit, at its top operator, aligned after HEAD. */
static void
print_statement(Emitter *E, const char *head, const TcExpr *value, TcDtype t)
{
	TcBuf *b = E->out;
	bool rounds = is_narrow_float(t) && value->dtype != t;
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

/* Call fn(ctx, v) on every var e and s (either may be NULL) name: vars
 * read, the tensors and buffers loaded, the vars statements declare or
 * loop over, their regions' vars. */
typedef void (*VarFn)(void *ctx, const TcVar *v);

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

static void
walk_vars(const TcExpr *e, const TcStmt *s, VarFn fn, void *ctx)
{
	VarWalk w = { fn, ctx };
	TcVisitor vis = { .expr = var_of_expr, .var = var_of_stmt, .ctx = &w };
	tc_expr_visit(e, &vis);
	tc_stmt_visit(s, &vis);
}

/* How many nodes of e and s (either may be NULL) match: expressions by
 * expr, statements by stmt (either may be NULL), given arg. */
typedef struct Count {
	bool (*expr)(const TcExpr *e, const void *arg); /* matches e */
	bool (*stmt)(const TcStmt *s, const void *arg); /* matches s */
	const void *arg;                                /* what they look for */
	int n;                                          /* matches seen */
} Count;

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

static int
count_nodes(const TcExpr *e, const TcStmt *s, Count c)
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
	E->used[v->index] = true;
	if (v->kind == TC_VAR_TENSOR)
		for (int i = 0; i < v->rank; i++)
			walk_vars(v->shape[i], NULL, mark_used, E);
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
	walk_vars(e, NULL, note_block_dep, E);
	return E->dep_found;
}

/* One pass over the body: scopes, initializers, loops, whether
 * blocks do unequal work, whether there is a gemm. */
static void
scan(Emitter *E, const TcStmt *s, int par_depth)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			scan(E, s->u.block.body.items[i], par_depth);
		break;
	case TC_ST_DECL: {
		const TcVar *v = s->u.decl.var;
		if (par_depth > 0)
			E->visible[v->index] = false;
		if (v->kind == TC_VAR_LOCAL && !v->mutated)
			E->init[v->index] = s->u.decl.init;
		if (v->kind == TC_VAR_LOCAL && s->u.decl.init)
			E->block_dep[v->index] =
				v->mutated || depends_on_block(E, s->u.decl.init);
		break;
	}
	case TC_ST_FOR: {
		const TcVar *v = s->u.loop.var;
		bool par = s->u.loop.kind == TC_LOOP_PARALLEL;
		E->loop[v->index] = s;
		if (par || par_depth > 0)
			E->visible[v->index] = false;
		if (depends_on_block(E, s->u.loop.begin) ||
		    depends_on_block(E, s->u.loop.end))
			E->dynamic = true;
		scan(E, s->u.loop.body, par_depth + par);
		break;
	}
	case TC_ST_IF:
		scan(E, s->u.cond.then, par_depth);
		if (s->u.cond.els)
			scan(E, s->u.cond.els, par_depth);
		break;
	default:
		break;
	}
}

static bool nonneg(Emitter *E, const TcExpr *e);

/* Whether e's value cannot change while the loops of the body run: it
 * reads only literals, tunables, scalars, block indices and locals never
 * reassigned. */
static bool
invariant(Emitter *E, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT:
		return true;
	case TC_EX_VAR:
		switch (e->u.var->kind) {
		case TC_VAR_TUNABLE:
		case TC_VAR_SCALAR:
		case TC_VAR_BLOCK: return true;
		case TC_VAR_LOCAL: return E->init[e->u.var->index] != NULL;
		default: return false;
		}
	case TC_EX_BINARY:
		return invariant(E, e->u.bin.lhs) && invariant(E, e->u.bin.rhs);
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!invariant(E, e->u.call.args[i]))
				return false;
		return !tc_dtype_is_float(e->dtype);
	default:
		return false;
	}
}

/* Whether a - r - k >= 0 for loop index r and constant k (0 or 1): r
 * counts up by a positive step from a non-negative start to below its
 * loop's end, an invariant expression that a equals, or a - 1 equals
 * when k is 0 (a reversed index, `n - 1 - r`). */
static bool
below_end(Emitter *E, const TcExpr *a, const TcExpr *r, long long k)
{
	if (r->kind != TC_EX_VAR || r->u.var->kind != TC_VAR_LOOP)
		return false;
	const TcStmt *loop = E->loop[r->u.var->index];
	long long step = 1, c;
	if (!loop || (loop->u.loop.step &&
		      !(tc_expr_const(loop->u.loop.step, &step) && step > 0)) ||
	    !nonneg(E, loop->u.loop.begin) || !invariant(E, loop->u.loop.end))
		return false;
	const TcExpr *end = loop->u.loop.end;
	if (tc_expr_equal(a, end))
		return k <= 1;
	return k == 0 && a->kind == TC_EX_BINARY && a->u.bin.op == TC_OP_SUB &&
	       tc_expr_const(a->u.bin.rhs, &c) && c == 1 &&
	       tc_expr_equal(a->u.bin.lhs, end);
}

/* Whether e >= 0 follows from its form: literals, tunables, block and
 * loop indices counting up from non-negative starts, scalars that are a
 * tensor's extent, a loop's end less its index (and less 1), and sums,
 * products, quotients, ceildiv, min, max and selects of those. */
static bool
nonneg(Emitter *E, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT:
		return e->u.ival >= 0;
	case TC_EX_VAR: {
		const TcVar *v = e->u.var;
		switch (v->kind) {
		case TC_VAR_TUNABLE: return v->value >= 0;
		case TC_VAR_BLOCK: return true;
		case TC_VAR_LOOP:
			return E->loop[v->index] &&
			       nonneg(E, E->loop[v->index]->u.loop.begin);
		case TC_VAR_LOCAL:
			return E->init[v->index] && nonneg(E, E->init[v->index]);
		case TC_VAR_SCALAR:
			return E->extent[v->index];
		default: return false;
		}
	}
	case TC_EX_BINARY:
		switch (e->u.bin.op) {
		case TC_OP_ADD:
		case TC_OP_MUL:
		case TC_OP_DIV:
		case TC_OP_REM:
		case TC_OP_SHR:
			return nonneg(E, e->u.bin.lhs) && nonneg(E, e->u.bin.rhs);
		case TC_OP_SUB: {
			/* end - r, end - 1 - r, end - r - 1 */
			const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
			long long k;
			if (tc_expr_const(r, &k) && l->kind == TC_EX_BINARY &&
			    l->u.bin.op == TC_OP_SUB)
				return below_end(E, l->u.bin.lhs, l->u.bin.rhs, k);
			return below_end(E, l, r, 0);
		}
		default:
			return false;
		}
	case TC_EX_CALL:
		if (e->u.call.fn != TC_FN_CEILDIV && e->u.call.fn != TC_FN_MIN &&
		    e->u.call.fn != TC_FN_MAX)
			return false;
		return nonneg(E, e->u.call.args[0]) && nonneg(E, e->u.call.args[1]);
	case TC_EX_SELECT:
		return nonneg(E, e->u.sel.then) && nonneg(E, e->u.sel.els);
	case TC_EX_CAST:
		return !tc_dtype_is_float(e->dtype) && nonneg(E, e->u.cast.arg);
	default:
		return false;
	}
}

/* Whether index e is inside [0, extent) for every block: a block index
 * over a grid of exactly that extent, or constants. */
static bool
in_range(Emitter *E, const TcExpr *e, const TcExpr *extent)
{
	long long c, n;
	if (tc_expr_const(e, &c) && tc_expr_const(extent, &n))
		return c >= 0 && c < n;
	if (e->kind != TC_EX_VAR || e->u.var->kind != TC_VAR_BLOCK)
		return false;
	const TcExpr *grid = E->k->grid[e->u.var->grid_dim];
	return grid && tc_expr_equal(grid, extent);
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
static const char *
fresh(Emitter *E, const char *base)
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
static void
index_names(Emitter *E, int r, const char **names)
{
	static const char *const base[] = { "i", "j", "l", "m", "n", "p", "q", "r" };
	int next = 0;
	for (int d = 0; d < r; d++) {
		while (next < 8 && name_taken(E, base[next]))
			next++;
		names[d] = next < 8 ? base[next++] : fresh(E, tc_fmt(E->a, "i%d", d));
	}
}

/* "96 KiB", "1.5 MiB", "100 bytes". */
static const char *
size_text(TcArena *a, long long bytes)
{
	if (bytes < 1024)
		return tc_fmt(a, "%lld bytes", bytes);
	const char *unit = bytes < 1024 * 1024 ? "KiB" : "MiB";
	long long scale = bytes < 1024 * 1024 ? 1024 : 1024 * 1024;
	if (bytes % scale == 0)
		return tc_fmt(a, "%lld %s", bytes / scale, unit);
	return tc_fmt(a, "%.1f %s", (double)bytes / (double)scale, unit);
}

/* --- Printing helpers ------------------------------------------------------------ */

/* An expression as text (for names of extents in later lines). */
static const char *
expr_text(Emitter *E, const TcExpr *e, int min_prec)
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

/* `#pragma TEXT` at the start of the line, where clang-format puts it. */
static void pragma(Emitter *E, const char *fmt, ...) TC_PRINTF(2, 3);

static void
pragma(Emitter *E, const char *fmt, ...)
{
	int indent = E->out->indent;
	E->out->indent = 0;
	tc_buf_puts(E->out, "#pragma ");
	va_list ap;
	va_start(ap, fmt);
	tc_buf_vprintf(E->out, fmt, ap);
	va_end(ap);
	tc_buf_puts(E->out, "\n");
	E->out->indent = indent;
}

/* `#line N "file"` before a statement from a new source line. */
static void
line_directive(Emitter *E, TcLoc loc)
{
	if (!E->opt->line_directives || loc.line <= 0 || loc.line == E->line ||
	    !loc.file)
		return;
	int indent = E->out->indent;
	E->out->indent = 0;
	tc_buf_printf(E->out, "#line %d \"%s\"\n", loc.line, loc.file);
	E->out->indent = indent;
	E->line = loc.line;
}

/* The `// file:line source` comment above a tile op. */
static void
op_comment(Emitter *E, const TcStmt *s)
{
	line_directive(E, s->loc);
	tc_c_loc_comment(&E->pr, s->loc,
			 tc_c_source_snippet(E->a, E->p->text, s->loc));
}

/* `for (int i = 0; i < N; i++)` over tile dim d of a buffer. */
static void
for_dim(Emitter *E, const char *idx, const char *begin, const char *end)
{
	tc_c_for_text(&E->pr, idx, begin, end);
}

/* `buf[i][j]` for a whole buffer indexed by names. */
static const char *
elem(Emitter *E, const TcVar *v, const char *const *idx)
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

static void emit_stmt(Emitter *E, const TcStmt *s);
static void emit_prefetches(Emitter *E, const TcStmt *loop);

typedef struct Fusion Fusion;
static const Fusion *fusion_at(Emitter *E, const TcStmt *block, int i);
static int fusion_len(const Fusion *F);
static void emit_fusion(Emitter *E, const Fusion *F);
static void nest_comment(Emitter *E, const TcStmt *s, const char *more);

/* Statements of a block, without braces; runs of fused statements as
 * their loop nest. */
static void
emit_body(Emitter *E, const TcStmt *s)
{
	tc_assert(s->kind == TC_ST_BLOCK);
	for (int i = 0; i < s->u.block.body.len; i++) {
		const Fusion *F = fusion_at(E, s, i);
		if (F) {
			emit_fusion(E, F);
			i += fusion_len(F) - 1;
			continue;
		}
		emit_stmt(E, s->u.block.body.items[i]);
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
		line_directive(E, s->loc);
		bool is_const = !v->mutated && s->u.decl.init;
		const char *head = tc_fmt(E->a, "%s%s %s", is_const ? "const " : "",
					  value_type(v->dtype), v->name);
		if (s->u.decl.init)
			print_statement(E, tc_fmt(E->a, "%s =", head),
					s->u.decl.init, v->dtype);
		else
			tc_buf_printf(b, "%s;\n", head);
		return;
	}
	/* A buffer: an aligned array in the block's frame. */
	long long n = 1;
	for (int i = 0; i < v->rank; i++)
		n *= dim(v, i);
	long long bytes = n * buffer_elem_bytes(v->dtype);
	E->frame_bytes += bytes;
	if (!E->unstored[v->index])
		E->stack_bytes += bytes;
	if (E->frame_bytes > E->t->smem_limit) {
		tc_diag(E->d, TC_ERROR, v->loc, "buffer '%s' (%s) brings the "
			"buffers of kernel '%s' to %s per block; the %s target "
			"allows %s (a block's buffers live on its thread's "
			"stack and should stay in cache)", v->name,
			size_text(E->a, bytes), E->k->name,
			size_text(E->a, E->frame_bytes), E->t->name,
			size_text(E->a, E->t->smem_limit));
		return;
	}
	/* A buffer every fused run keeps in registers takes no memory (its
	 * size still counts against the limit, a property of the program). */
	if (E->unstored[v->index])
		return;
	line_directive(E, v->loc);
	TcBuf shape;
	tc_buf_init(&shape);
	for (int i = 0; i < v->rank; i++)
		tc_buf_printf(&shape, "[%s]", expr_text(E, v->shape[i], 0));
	const char *held = is_narrow_float(v->dtype) ? ", held as float" : "";
	tc_c_loc_comment(&E->pr, v->loc,
			 tc_fmt(E->a, "tile_%s %s %s%s%s", tc_scope_name(v->scope),
				tc_dtype_name(v->dtype), v->name, shape.data,
				held));
	tc_buf_printf(b, "_Alignas(64) %s %s%s;\n", value_type(v->dtype),
		      v->name, shape.data);
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
	print_statement(E, tc_fmt(E->a, "%s %s=", expr_text(E, dst, 0),
				  tc_binop_name(value->u.bin.op)),
			value->u.bin.rhs, TC_DT_NONE);
	return true;
}

/* Print `head` then the arguments separated by ", " and `tail`, breaking
 * lines before 80 columns with continuations aligned after `head`. */
static void
print_wrapped(Emitter *E, const char *head, const char **args, int n,
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
	line_directive(E, s->loc);
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
	if (tensor && is_narrow_float(v->dtype)) {
		print_element(&E->pr, v, dst->u.load.idx);
		tc_buf_printf(b, " = tilec_f32_to_%s(", tc_dtype_name(v->dtype));
		tc_c_expr_prec(&E->pr, value, TC_PREC_COMMA + 1);
		tc_buf_puts(b, ");\n");
		return;
	}
	if (!is_narrow_float(v->dtype) && emit_compound(E, dst, value))
		return;
	print_statement(E, tc_fmt(E->a, "%s =", expr_text(E, dst, 0)), value,
			v->dtype);
}

static bool
is_loop(const TcStmt *s, const void *arg)
{
	(void)arg;
	return s->kind == TC_ST_FOR;
}

/* Whether a statement contains a loop (then `omp simd` stays off the
 * loop around it). */
static bool
has_loop(const TcStmt *s)
{
	return count_nodes(NULL, s, (Count){ .stmt = is_loop }) > 0;
}

/* The parallel loop directly nested in s's body, if that is all it has. */
static const TcStmt *
nested_parallel(const TcStmt *s)
{
	const TcStmt *body = s->u.loop.body;
	if (body->u.block.body.len != 1)
		return NULL;
	const TcStmt *only = body->u.block.body.items[0];
	return only->kind == TC_ST_FOR && only->u.loop.kind == TC_LOOP_PARALLEL
		       ? only : NULL;
}

static void
emit_for(Emitter *E, const TcStmt *s, bool in_parallel)
{
	const TcVar *v = s->u.loop.var;
	TcBuf *b = E->out;
	line_directive(E, s->loc);
	if (s->u.loop.kind == TC_LOOP_PIPELINED) {
		const char *src = tc_c_source_snippet(E->a, E->p->text, s->loc);
		tc_c_loc_comment(&E->pr, s->loc,
				 tc_fmt(E->a, "%s: the CPU runs it in order",
					src ? src : "tile_pipelined"));
	}
	if (s->u.loop.kind == TC_LOOP_PARALLEL && !in_parallel)
		nest_comment(E, s, "");
	long long trips;
	if (s->u.loop.kind == TC_LOOP_PARALLEL && !has_loop(s->u.loop.body) &&
	    !(tc_expr_const(s->u.loop.end, &trips) && trips < 8))
		pragma(E, "omp simd");
	tc_c_for(&E->pr, value_type(v->dtype), v->name, s->u.loop.begin,
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
	if (s->u.loop.kind == TC_LOOP_PIPELINED)
		emit_prefetches(E, s);
	bool around = !par && E->naround < 16;
	if (around)
		E->around[E->naround++] = s;
	for (int i = 0; i < body->u.block.body.len; i++) {
		const Fusion *F = par ? NULL : fusion_at(E, body, i);
		const TcStmt *st = body->u.block.body.items[i];
		if (F) {
			emit_fusion(E, F);
			i += fusion_len(F) - 1;
		} else if (st->kind == TC_ST_FOR) {
			emit_for(E, st, par);
		} else {
			emit_stmt(E, st);
		}
	}
	if (around)
		E->naround--;
	tc_c_close(&E->pr);
}

static void
emit_if(Emitter *E, const TcStmt *s)
{
	TcBuf *b = E->out;
	line_directive(E, s->loc);
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
			pragma(E, "omp simd");
		for_dim(E, idx[d], "0", ext[d]);
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
		for_dim(E, idx[d], "0", ext[d]);
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
		ext[d] = expr_text(E, v->shape[d], 0);
	open_loops(E, v->rank, idx, ext, simd);
	return elem(E, v, idx);
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
		tc_buf_printf(E->out, "memset(%s, 0, sizeof %s);\n", v->name,
			      v->name);
		return;
	}
	const char *text;
	if (tc_c_const_float(value, &c) && tc_dtype_is_float(v->dtype)) {
		TcBuf lit;
		tc_buf_init(&lit);
		tc_c_float(&lit, c, v->dtype == TC_DT_F64 ? TC_DT_F64 : TC_DT_F32);
		text = is_narrow_float(v->dtype) && !isinf(c)
			       ? tc_fmt(E->a, "tilec_round_%s(%s)",
					tc_dtype_name(v->dtype), lit.data)
			       : tc_strdup(E->a, lit.data);
		tc_buf_free(&lit);
	} else {
		text = stored_text(E, value, v->dtype);
	}
	const char *idx[TC_MAX_RANK];
	index_names(E, v->rank, idx);
	const char *el = open_tile_loops(E, v, idx, true);
	tc_buf_printf(E->out, "%s = %s;\n", el, text);
	close_tile_loops(E, v->rank);
}

/* --- Tile ops: copy and atomic add ---------------------------------------------- */

/* Suffix of the tilec_load_* / tilec_store_* row helper for a tensor
 * dtype, or NULL if rows of it are not copied by a helper. */
static const char *
row_helper(TcDtype t)
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
static const char *
to_buffer(Emitter *E, const char *val, TcDtype from, TcDtype to)
{
	if (is_narrow_float(to) && from != to)
		return tc_fmt(E->a, "tilec_round_%s(%s)", tc_dtype_name(to), val);
	if (strcmp(value_type(from), value_type(to)) != 0)
		return tc_fmt(E->a, "(%s)%s", value_type(to), val);
	return val;
}

/* One copy between a whole buffer (the tile) and a region of a tensor. */
typedef struct CopyPlan {
	const TcVar *tile;          /* the whole buffer */
	const TcRegion *reg;        /* the tensor region */
	const TcVar *ten;           /* reg->var */
	int rank;                   /* the tile's rank */
	const char *idx[TC_MAX_RANK];    /* loop index per tile dim */
	const char *origin[TC_MAX_RANK]; /* origin text per tile dim, NULL = 0 */
	const char *ext[TC_MAX_RANK];    /* valid extent per tile dim (text) */
	bool partial[TC_MAX_RANK];       /* ext may be less than the tile's */
	const char *fixed;          /* condition on the dims the tile does not
				     * cover, or NULL when proven in range */
} CopyPlan;

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
	return expr_text(E, cp->reg->origin[vd], 0);
}

/* `T[a][b]` (or the flat offset of an i4 tensor) for the current element
 * or, with start, the first element of the current row. */
static const char *
tensor_elem(Emitter *E, const CopyPlan *cp, bool start)
{
	const TcVar *v = cp->ten;
	TcBuf b;
	tc_buf_init(&b);
	if (v->dtype == TC_DT_I4) {
		for (int d = 0; d < v->rank - 1; d++)
			tc_buf_puts(&b, "(");
		tc_buf_printf(&b, "(long long)(%s)", tensor_index(E, cp, 0, start));
		for (int d = 1; d < v->rank; d++)
			tc_buf_printf(&b, " * %s + (%s))",
				      expr_text(E, v->shape[d],
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

/* Name of the origin and extent of tile dim t (row0/rows, col0/cols for
 * the last two dims, i0/n_i for the others). */
static void
plan_names(Emitter *E, const CopyPlan *cp, int t, const char **origin,
	   const char **extent)
{
	int from_end = cp->rank - 1 - t;
	if (cp->rank >= 2 && from_end <= 1) {
		*origin = fresh(E, from_end ? "row0" : "col0");
		*extent = fresh(E, from_end ? "rows" : "cols");
	} else {
		*origin = fresh(E, tc_fmt(E->a, "%s0", cp->idx[t]));
		*extent = fresh(E, cp->rank == 1 ? "n" : tc_fmt(E->a, "n_%s",
								 cp->idx[t]));
	}
}

/* cp->fixed: the test that the tensor dims the tile does not cover hold
 * their origin index, NULL where that is proven. */
static void
fixed_dims(Emitter *E, CopyPlan *cp)
{
	TcBuf cond;
	tc_buf_init(&cond);
	for (int vd = 0; vd < cp->ten->rank; vd++) {
		bool covered = false;
		for (int t = 0; t < cp->rank; t++)
			covered |= cp->reg->dims[t] == vd;
		const TcExpr *o = cp->reg->origin[vd];
		if (covered || in_range(E, o, cp->ten->shape[vd]))
			continue;
		int lt = tc_binop_prec(TC_OP_LT) + 1;
		if (!nonneg(E, o))
			tc_buf_printf(&cond, "%s0 <= %s", cond.len ? " && " : "",
				      expr_text(E, o, lt));
		tc_buf_printf(&cond, "%s%s < %s", cond.len ? " && " : "",
			      expr_text(E, o, lt),
			      expr_text(E, cp->ten->shape[vd], lt));
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
		if (!nonneg(E, cp->reg->origin[cp->reg->dims[t]]))
			return false;
	fixed_dims(E, cp);

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
				      expr_text(E, cp->reg->origin[cp->reg->dims[t]],
						TC_PREC_COMMA + 1));
		}
		tc_buf_puts(b, ";\n");
	}
	for (int t = 0; t < cp->rank; t++) {
		int vd = cp->reg->dims[t];
		long long o, n, e = dim(cp->tile, t);
		const char *tile_ext = expr_text(E, cp->tile->shape[t], 0);
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
		const char *call = tc_fmt(E->a, "tilec_extent(%s, %s, %s)",
					  expr_text(E, cp->ten->shape[vd],
						    TC_PREC_COMMA + 1),
					  cp->origin[t] ? cp->origin[t] : "0",
					  tile_ext);
		if (t == 0 && cp->fixed)
			tc_buf_printf(b, "const int %s = %s ? %s : 0;\n", ename[t],
				      cp->fixed, call);
		else
			tc_buf_printf(b, "const int %s = %s;\n", ename[t], call);
	}
	return true;
}

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
			tc_buf_printf(&decl, "%s%s = %s", decl.len ? ", " : "", oname,
				      expr_text(E, o, TC_PREC_COMMA + 1));
		}
		cp->ext[t] = expr_text(E, cp->tile->shape[t], 0);
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
		const TcExpr *o = cp->reg->origin[vd];
		const char *at = cp->origin[t] ? tc_fmt(E->a, "%s + %s", cp->origin[t],
							 cp->idx[t])
					       : cp->idx[t];
		const char *upper = tc_fmt(E->a, "%s < %s", at,
					   expr_text(E, cp->ten->shape[vd], lt));
		cond[t] = nonneg(E, o) ? upper
				       : tc_fmt(E->a, "0 <= %s && %s", at, upper);
	}
	for (int vd = 0; vd < cp->ten->rank; vd++) {
		bool covered = false;
		for (int t = 0; t < R; t++)
			covered |= cp->reg->dims[t] == vd;
		const TcExpr *o = cp->reg->origin[vd];
		if (covered || in_range(E, o, cp->ten->shape[vd]))
			continue;
		const char *ot = expr_text(E, o, lt);
		const char *c = tc_fmt(E->a, "%s < %s", ot,
				       expr_text(E, cp->ten->shape[vd], lt));
		if (!nonneg(E, o))
			c = tc_fmt(E->a, "0 <= %s && %s", ot, c);
		cond[0] = tc_fmt(E->a, "%s && %s", c, cond[0]);
	}
	const char *inside = NULL;
	for (int t = 0; t < R; t++) {
		const char *test = inside ? tc_fmt(E->a, "%s && %s", inside, cond[t])
					  : cond[t];
		if (t == R - 1) {
			if (load || !atomic)
				pragma(E, "omp simd");
			for_dim(E, cp->idx[t], "0", cp->ext[t]);
			tc_buf_puts(b, atomic ? " {\n" : "\n");
			b->indent++;
			inside = test;
			break;
		}
		for_dim(E, cp->idx[t], "0", cp->ext[t]);
		tc_c_open(&E->pr);
		const char *name = fresh(E, tc_fmt(E->a, "in_%s", cp->idx[t]));
		tc_buf_printf(b, "const bool %s = %s;\n", name, test);
		inside = name;
	}
	const char *el = elem(E, cp->tile, cp->idx);
	const char *te = tensor_elem(E, cp, false);
	TcDtype tt = cp->ten->dtype, bt = cp->tile->dtype;
	if (load) {
		const char *val = tt == TC_DT_I4
			? tc_fmt(E->a, "tilec_i4_get(%s, %s)", cp->ten->name, te)
			: is_narrow_float(tt)
			? tc_fmt(E->a, "tilec_%s_to_f32(%s)", tc_dtype_name(tt), te)
			: te;
		tc_buf_printf(b, "%s = %s ? %s : 0;\n", el, inside,
			      to_buffer(E, val, tt, bt));
	} else {
		tc_buf_printf(b, "if (%s)", inside);
		if (atomic) {
			tc_c_open(&E->pr);
			pragma(E, "omp atomic");
			tc_buf_printf(b, "%s += %s;\n", te, el);
			tc_c_close(&E->pr);
		} else {
			tc_buf_puts(b, "\n\t");
			if (tt == TC_DT_I4)
				tc_buf_printf(b, "tilec_i4_set(%s, %s, %s);\n",
					      cp->ten->name, te, el);
			else if (is_narrow_float(tt))
				tc_buf_printf(b, "%s = tilec_f32_to_%s(%s);\n", te,
					      tc_dtype_name(tt), el);
			else
				tc_buf_printf(b, "%s = %s;\n", te, el);
		}
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
	const char *el = elem(E, cp->tile, cp->idx);
	const char *te = tensor_elem(E, cp, false);
	TcDtype tt = cp->ten->dtype, bt = cp->tile->dtype;
	TcBuf *b = E->out;
	if (load) {
		const char *val = tt == TC_DT_I4
			? tc_fmt(E->a, "tilec_i4_get(%s, %s)", cp->ten->name, te)
			: is_narrow_float(tt)
			? tc_fmt(E->a, "tilec_%s_to_f32(%s)", tc_dtype_name(tt), te)
			: te;
		tc_buf_printf(b, "%s = %s;\n", el, to_buffer(E, val, tt, bt));
	} else if (atomic && is_narrow_float(tt)) {
		tc_buf_printf(b, "tilec_atomic_add_%s(&%s, %s);\n",
			      tc_dtype_name(tt), te, el);
	} else if (atomic) {
		const char *val = strcmp(value_type(tt), value_type(bt)) != 0
			? tc_fmt(E->a, "(%s)%s", value_type(tt), el) : el;
		pragma(E, "omp atomic");
		tc_buf_printf(b, "%s += %s;\n", te, val);
	} else if (tt == TC_DT_I4) {
		tc_buf_printf(b, "tilec_i4_set(%s, %s, %s);\n", cp->ten->name, te,
			      el);
	} else if (is_narrow_float(tt)) {
		tc_buf_printf(b, "%s = tilec_f32_to_%s(%s);\n", te,
			      tc_dtype_name(tt), el);
	} else {
		tc_buf_printf(b, "%s = %s;\n", te, el);
	}
}

static void
emit_copy_tensor(Emitter *E, const TcVar *tile, const TcRegion *reg,
		 bool load, bool atomic)
{
	CopyPlan cp = { .tile = tile, .reg = reg, .ten = reg->var,
			.rank = tile->rank };
	TcBuf *b = E->out;
	index_names(E, cp.rank, cp.idx);
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
	const char *helper = row_helper(tt);
	bool rows = contiguous && helper && !atomic &&
		    strcmp(value_type(bt), "float") == 0 &&
		    !(load && is_narrow_float(bt) && bt != tt);
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
					tc_buf_printf(&cond, "%s%s < %s",
						      cond.len ? " || " : "",
						      cp.ext[t],
						      expr_text(E, tile->shape[t],
								tc_binop_prec(TC_OP_LT) + 1));
			if (cond.len)
				tc_buf_printf(b, "if (%s)\n\tmemset(%s, 0, sizeof %s);\n",
					      cond.data, tile->name, tile->name);
			tc_buf_free(&cond);
		}
	}
	int loops = rows ? R - 1 : R;
	if (atomic)
		open_braced_loops(E, loops, cp.idx, cp.ext);
	else
		open_loops(E, loops, cp.idx, cp.ext, !rows);
	if (rows) {
		TcBuf row;
		tc_buf_init(&row);
		tc_buf_puts(&row, tile->name);
		for (int t = 0; t < R - 1; t++)
			tc_buf_printf(&row, "[%s]", cp.idx[t]);
		const char *start = tc_fmt(E->a, "&%s", tensor_elem(E, &cp, true));
		const char *args[4];
		if (load) {
			args[0] = row.data;
			args[1] = start;
			args[2] = cp.ext[R - 1];
			args[3] = expr_text(E, tile->shape[R - 1], 0);
			print_wrapped(E, tc_fmt(E->a, "tilec_load_%s(", helper),
				      args, 4, ");");
		} else {
			args[0] = start;
			args[1] = row.data;
			args[2] = cp.ext[R - 1];
			print_wrapped(E, tc_fmt(E->a, "tilec_store_%s(", helper),
				      args, 3, ");");
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
		tc_buf_printf(b, "memset(%s + %s, 0, sizeof %s[0] * (%s - %s));\n",
			      tile->name, cp.ext[0], tile->name,
			      expr_text(E, tile->shape[0], 0), cp.ext[0]);
	if (opened) {
		b->indent--;
		tc_buf_puts(b, "}\n");
	}
}

/* --- Prefetching the next iteration's copies ----------------------------------- */

static bool
is_decl_of(const TcStmt *s, const void *var)
{
	return s->kind == TC_ST_DECL && s->u.decl.var == var;
}

/* Whether var is declared (DECL) anywhere in s. */
static bool
declares(const TcStmt *s, const TcVar *var)
{
	return count_nodes(NULL, s, (Count){ .stmt = is_decl_of, .arg = var }) > 0;
}

/* Whether e's value in the next iteration of loop may differ from e with
 * the loop's var advanced: it loads, or reads a name the body changes. */
static bool
not_advanceable(const TcExpr *e, const void *arg)
{
	const TcStmt *loop = arg;
	if (e->kind == TC_EX_LOAD)
		return true;
	if (e->kind != TC_EX_VAR)
		return false;
	const TcVar *v = e->u.var;
	if (v->kind == TC_VAR_LOCAL)
		return v->mutated || declares(loop->u.loop.body, v);
	return v->kind == TC_VAR_LOOP && declares(loop->u.loop.body, v);
}

/* Whether e's value in the next iteration of loop follows from e with the
 * loop's var advanced: it reads only names the body does not change. */
static bool
advanceable(const TcExpr *e, const TcStmt *loop)
{
	return count_nodes(e, NULL, (Count){ .expr = not_advanceable,
					     .arg = loop }) == 0;
}

/* e with `var` replaced by `next` (shared subtrees are not copied). */
static TcExpr *
substitute(Emitter *E, const TcExpr *e, const TcVar *var, TcExpr *next)
{
	if (e->kind == TC_EX_VAR && e->u.var == var)
		return next;
	TcExpr *c = tc_expr_clone(E->a, e);
	switch (c->kind) {
	case TC_EX_BINARY:
		c->u.bin.lhs = substitute(E, e->u.bin.lhs, var, next);
		c->u.bin.rhs = substitute(E, e->u.bin.rhs, var, next);
		break;
	case TC_EX_UNARY:
		c->u.un.arg = substitute(E, e->u.un.arg, var, next);
		break;
	case TC_EX_SELECT:
		c->u.sel.cond = substitute(E, e->u.sel.cond, var, next);
		c->u.sel.then = substitute(E, e->u.sel.then, var, next);
		c->u.sel.els = substitute(E, e->u.sel.els, var, next);
		break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = substitute(E, e->u.call.args[i], var,
						       next);
		break;
	case TC_EX_CAST:
		c->u.cast.arg = substitute(E, e->u.cast.arg, var, next);
		break;
	default:
		break;
	}
	return c;
}

static bool
is_var_expr(const TcExpr *e, const void *var)
{
	return e->kind == TC_EX_VAR && e->u.var == var;
}

/* Whether e mentions var. */
static bool
mentions(const TcExpr *e, const TcVar *var)
{
	return count_nodes(e, NULL, (Count){ .expr = is_var_expr, .arg = var }) > 0;
}

/* Print the prefetch of what copy s would read with `var` replaced by
 * `next`, if its rows are contiguous and its origins stay provably
 * non-negative. */
static void
prefetch_copy(Emitter *E, const TcStmt *s, const TcVar *var, TcExpr *next)
{
	const TcRegion *src = &s->u.copy.src;
	const TcVar *tile = s->u.copy.dst.var;
	if (src->var->dtype == TC_DT_I4 ||
	    src->dims[tile->rank - 1] != src->var->rank - 1)
		return;
	TcRegion reg = *src;
	for (int d = 0; d < src->var->rank; d++) {
		reg.origin[d] = substitute(E, src->origin[d], var, next);
		if (!nonneg(E, reg.origin[d]))
			return;
	}
	CopyPlan cp = { .tile = tile, .reg = &reg, .ten = reg.var,
			.rank = tile->rank };
	index_names(E, cp.rank, cp.idx);
	const char *what = tc_c_source_snippet(E->a, E->p->text, s->loc);
	tc_c_loc_comment(&E->pr, s->loc,
			 tc_fmt(E->a, "prefetch for the next iteration's %s",
				what ? what : "tile_copy"));
	bool opened;
	if (!plan_copy(E, &cp, &opened))
		tc_unreachable(); /* the origins are non-negative */
	int R = cp.rank;
	const char *bytes = tc_fmt(E->a, "%s * sizeof(%s)", cp.ext[R - 1],
				   storage_type(cp.ten->dtype));
	const char *start = tc_fmt(E->a, "&%s", tensor_elem(E, &cp, true));
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
		print_wrapped(E, "tilec_prefetch(", args, 2, ");");
		close_loops(E, R - 1);
	}
	if (opened) {
		E->out->indent--;
		tc_buf_puts(E->out, "}\n");
	}
}

/* Whether s loads a tile from a tensor (what prefetching can help). */
static bool
is_tensor_load(const TcStmt *s)
{
	return s->kind == TC_ST_COPY && s->u.copy.dst.whole &&
	       s->u.copy.src.var->kind == TC_VAR_TENSOR;
}

/* The CPU's software pipeline: at the top of a tile_pipelined loop, ask
 * for the tensor rows the next iteration's copies will read, so the memory
 * system fetches them while this iteration computes (what the stages do on
 * a GPU).  Serial loops get none: on the row kernels it measured no gain.  Only direct loads whose origin
 * moves with the loop var alone; nothing is read, so a prefetch can never
 * change a result. */
static void
emit_prefetches(Emitter *E, const TcStmt *loop)
{
	const TcVar *var = loop->u.loop.var;
	const TcStmt *body = loop->u.loop.body;
	TcExpr *step = loop->u.loop.step ? loop->u.loop.step
					 : tc_expr_int(E->a, 1, loop->loc);
	TcExpr *next = tc_expr_binary(E->a, TC_OP_ADD,
				      tc_expr_var(E->a, (TcVar *)var, loop->loc),
				      step, loop->loc);
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (!is_tensor_load(s))
			continue;
		const TcRegion *src = &s->u.copy.src;
		bool moves = false, ok = true;
		for (int d = 0; d < src->var->rank; d++) {
			moves |= mentions(src->origin[d], var);
			ok &= advanceable(src->origin[d], loop);
		}
		if (moves && ok)
			prefetch_copy(E, s, var, next);
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
	    strcmp(value_type(dst->var->dtype), value_type(src->var->dtype)) == 0 &&
	    !(is_narrow_float(dst->var->dtype) &&
	      dst->var->dtype != src->var->dtype)) {
		tc_buf_printf(E->out, "memcpy(%s, %s, sizeof %s);\n",
			      dst->var->name, src->var->name, dst->var->name);
		return;
	}
	const char *idx[TC_MAX_RANK];
	index_names(E, tile->rank, idx);
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
			tc_buf_printf(&r, "[%s]", expr_text(E, o, 0));
		else if (zero || reg->whole)
			tc_buf_printf(&r, "[%s]", idx[t]);
		else
			tc_buf_printf(&r, "[%s + %s]",
				      expr_text(E, o, tc_binop_prec(TC_OP_ADD)),
				      idx[t]);
	}
	const char *re = tc_strdup(E->a, r.data);
	tc_buf_free(&r);
	if (dst->whole)
		tc_buf_printf(E->out, "%s = %s;\n", el,
			      to_buffer(E, re, src->var->dtype, dst->var->dtype));
	else
		tc_buf_printf(E->out, "%s = %s;\n", re,
			      to_buffer(E, el, src->var->dtype, dst->var->dtype));
	close_tile_loops(E, tile->rank);
}

static void
emit_copy(Emitter *E, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	bool atomic = s->kind == TC_ST_ATOMIC_ADD;
	op_comment(E, s);
	if (dst->var->kind == TC_VAR_TENSOR)
		emit_copy_tensor(E, src->var, dst, false, atomic);
	else if (src->var->kind == TC_VAR_TENSOR)
		emit_copy_tensor(E, dst->var, src, true, false);
	else
		emit_copy_buffers(E, dst, src);
}

/* --- Tile ops: gemm ------------------------------------------------------------------ */

static void
emit_gemm(Emitter *E, const TcStmt *s)
{
	const TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var,
		    *bv = s->u.gemm.b.var;
	bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
	TcBuf *b = E->out;
	op_comment(E, s);
	const char *m = expr_text(E, c->shape[0], 0);
	const char *n = expr_text(E, c->shape[1], 0);
	const char *k = expr_text(E, a->shape[ta ? 0 : 1], 0);
	bool floats = strcmp(value_type(a->dtype), "float") == 0 &&
		      strcmp(value_type(bv->dtype), "float") == 0;
	if (c->dtype == TC_DT_F32 && floats) {
		/* The micro-kernel: c += op(a) * op(b) on float tiles. */
		const char *args[] = {
			m, n, k,
			tc_fmt(E->a, "%s[0]", c->name), n,
			tc_fmt(E->a, "%s[0]", a->name),
			expr_text(E, a->shape[1], 0),
			ta ? "TILEC_TRANS" : "TILEC_NOTRANS",
			tc_fmt(E->a, "%s[0]", bv->name),
			expr_text(E, bv->shape[1], 0),
			tb ? "TILEC_TRANS" : "TILEC_NOTRANS",
		};
		print_wrapped(E, tc_fmt(E->a, "tilec_gemm_f32_%s(", E->t->arch),
			      args, 11, ");");
		return;
	}
	/* Anything else (f64, integers, a narrow accumulator that rounds at
	 * every step) as a loop nest in the accumulator's type. */
	const char *idx[3];
	index_names(E, 3, idx);
	const char *i = idx[0], *j = idx[1], *p = idx[2];
	const char *order[3] = { i, p, j }, *ext[3] = { m, k, n };
	open_loops(E, 3, order, ext, true);
	const char *ae = ta ? tc_fmt(E->a, "%s[%s][%s]", a->name, p, i)
			    : tc_fmt(E->a, "%s[%s][%s]", a->name, i, p);
	const char *be = tb ? tc_fmt(E->a, "%s[%s][%s]", bv->name, j, p)
			    : tc_fmt(E->a, "%s[%s][%s]", bv->name, p, j);
	const char *ce = tc_fmt(E->a, "%s[%s][%s]", c->name, i, j);
	const char *ct = value_type(c->dtype);
	if (strcmp(value_type(a->dtype), ct) != 0) {
		ae = tc_fmt(E->a, "(%s)%s", ct, ae);
		be = tc_fmt(E->a, "(%s)%s", ct, be);
	}
	if (is_narrow_float(c->dtype))
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
	bool fl = tc_dtype_is_float(t);
	switch (op) {
	case TC_RED_SUM:
	case TC_RED_ABSMAX: return fl ? (t == TC_DT_F64 ? "0.0" : "0.0f") : "0";
	case TC_RED_MAX: return fl ? "-INFINITY" : t == TC_DT_I64 ? "LLONG_MIN" : "INT_MIN";
	case TC_RED_MIN: return fl ? "INFINITY" : t == TC_DT_I64 ? "LLONG_MAX" : "INT_MAX";
	default: tc_unreachable();
	}
}

/* `acc op= x` for a reduction, as a statement body.  Max and min are
 * selects that compile to one vmaxps / vminps: a NaN x leaves acc alone,
 * as fmaxf does, and acc never holds a NaN (see reduce_start). */
static const char *
reduce_step(Emitter *E, TcReduceOp op, TcDtype t, const char *acc,
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
		if (!tc_dtype_is_float(t))
			return tc_fmt(E->a, "%s = tilec_max(%s, %s < 0 ? -%s : %s)",
				      acc, acc, x, x, x);
		x = tc_fmt(E->a, "%s(%s)", dbl ? "fabs" : "fabsf", x);
		return tc_fmt(E->a, "%s = %s > %s ? %s : %s", acc, x, acc, x, acc);
	default:
		tc_unreachable();
	}
}

/* The accumulator's first value: the identity, or with accumulate the
 * destination's value, of which a NaN is dropped (fmaxf's rule) and for
 * absmax the magnitude taken. */
static const char *
reduce_start(Emitter *E, TcReduceOp op, TcDtype t, const char *old)
{
	if (!old)
		return reduce_identity(op, t);
	if (!tc_dtype_is_float(t))
		return op == TC_RED_ABSMAX
			       ? tc_fmt(E->a, "%s < 0 ? -%s : %s", old, old, old)
			       : old;
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
	index_names(E, R, idx);
	for (int d = 0, n = 0; d < R; d++)
		if (d != rd)
			didx[n++] = idx[d];
	const char *se = elem(E, src, idx);
	const char *de = elem(E, dst, didx);
	/* The reduction happens in the source's value type (a narrow
	 * destination rounds once at the end). */
	TcDtype t = tc_dtype_is_float(src->dtype) && src->dtype != TC_DT_F64
			    ? TC_DT_F32 : src->dtype;
	if (rd == R - 1 && t == TC_DT_F32) {
		/* Along the last dim of a float tile: one call per row of a
		 * helper that keeps 64 partial results in vector lanes. */
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
		const char *val = tc_fmt(E->a, "%s(%s, %s)", helpers[op], row.data,
					 expr_text(E, src->shape[R - 1],
						   TC_PREC_COMMA + 1));
		tc_buf_free(&row);
		const char *assign = "=";
		if (acc_old && op == TC_RED_SUM && !is_narrow_float(dst->dtype))
			assign = "+=";
		else if (acc_old && op == TC_RED_SUM)
			val = tc_fmt(E->a, "%s + %s", de, val);
		else if (acc_old)
			val = tc_fmt(E->a, "%s(%s, %s)",
				     op == TC_RED_MIN ? "tilec_fminf" : "tilec_fmaxf",
				     reduce_start(E, op, t, de), val);
		const char *ext[TC_MAX_RANK];
		for (int d = 0; d < R - 1; d++)
			ext[d] = expr_text(E, src->shape[d], 0);
		open_loops(E, R - 1, idx, ext, false);
		const char *stored = is_narrow_float(dst->dtype)
			? tc_fmt(E->a, "tilec_round_%s(%s)", tc_dtype_name(dst->dtype),
				 val)
			: val;
		const char *args[] = { stored };
		print_wrapped(E, tc_fmt(E->a, "%s %s ", de, assign), args, 1, ";");
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
		const char *acc = fresh(E, acc_names[op]);
		for (int d = 0; d < R - 1; d++) {
			for_dim(E, idx[d], "0", expr_text(E, src->shape[d], 0));
			tc_buf_puts(b, d == R - 2 ? " {\n" : "\n");
			b->indent++;
		}
		tc_buf_printf(b, "%s %s = %s;\n", value_type(t), acc,
			      reduce_start(E, op, t, acc_old ? de : NULL));
		pragma(E, "omp simd reduction(%s : %s)", omp_ops[op], acc);
		for_dim(E, idx[R - 1], "0", expr_text(E, src->shape[R - 1], 0));
		tc_buf_printf(b, "\n\t%s;\n", reduce_step(E, op, t, acc, se));
		tc_buf_printf(b, "%s = %s;\n", de, to_buffer(E, acc, t, dst->dtype));
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
			tc_buf_printf(b, "memset(%s, 0, sizeof %s);\n", dst->name,
				      dst->name);
		} else {
			const char *el = open_tile_loops(E, dst, didx, true);
			tc_buf_printf(b, "%s = %s;\n", el, id);
			close_tile_loops(E, dst->rank);
		}
	} else if (op != TC_RED_SUM) {
		/* Old values join as the row path's accumulator does. */
		const char *el = open_tile_loops(E, dst, didx, true);
		tc_buf_printf(b, "%s = %s;\n", el, reduce_start(E, op, t, el));
		close_tile_loops(E, dst->rank);
	}
	const char *sext[TC_MAX_RANK];
	for (int d = 0; d < R; d++)
		sext[d] = expr_text(E, src->shape[d], 0);
	open_loops(E, R, idx, sext, true);
	tc_buf_printf(b, "%s;\n", reduce_step(E, op, t, de, se));
	close_loops(E, R);
	if (is_narrow_float(dst->dtype)) {
		const char *el = open_tile_loops(E, dst, didx, true);
		tc_buf_printf(b, "%s = tilec_round_%s(%s);\n", el,
			      tc_dtype_name(dst->dtype), el);
		close_tile_loops(E, dst->rank);
	}
}

/* --- Fusion: which statements run as one pass per row -------------------------- */
/*
 * Consecutive block-level statements that each touch a tile element by
 * element over the same index space run as one loop nest: for each row of
 * the tile, the rows that are copied in, then one vectorized loop over
 * the row's elements doing every statement's work on each element in
 * turn, then the row's reduction results and the rows copied out.  An
 * element then stays in registers from one statement to the next instead
 * of going through a buffer once per statement.  The statements that can
 * join (FuseOp):
 *
 *   - tile_copy of a whole buffer from a tensor region whose rows are
 *     contiguous (LOAD) or to one, by the row helper (STORE);
 *   - a tile_parallel nest over the tile (MAP) whose body has no loop
 *     and reads and writes buffers only at the nest's own indices: x[i][j]
 *     for a buffer of the tile's shape, and reads of r[i] and c[j] for
 *     per-row and per-column buffers; no tensor;
 *   - tile_reduce_* along the last dim into a per-row buffer (REDUCE):
 *     an accumulator per row, an omp simd reduction clause; float max
 *     and min reduce integer keys (tilec_max_key: clang does not
 *     vectorize an omp simd max-reduction of floats).
 *
 * Statements over the columns alone (a copy into a per-column buffer, a
 * nest over j) join a run over rows and columns as work repeated on each
 * row, when the buffer they write is kept in registers, or, for a copy,
 * done once before the rows.  A run is legal when no statement touches a
 * per-row buffer an earlier one reduces into (the reduction completes at
 * the end of the row) and no tensor is written by one statement and read
 * or written by another.  Element-wise access makes everything else keep
 * its order: statement k's work on element (i, j) follows statement
 * k - 1's on the same element.
 *
 * A buffer the run writes is not stored at all (elided: its element is a
 * local of the row loop) when nothing reads it after the run (the
 * liveness below), the run writes it in full before reading it, and no
 * copy in the run reads it out.  A copy in reads the tensor's elements
 * in the loop, into the local or into the buffer (a stored buffer over the
 * columns alone is copied once, before the rows).  Element loads run in
 * two loops: the columns inside the tensors, then (for partial tiles
 * only) the columns past an edge, which read as zero; gcc keeps a sum
 * reduction in a register only when the load is not masked, and an
 * element copy inside the loop costs less than a row copy before it
 * (rmsnorm: +8 %).
 */

/* How one block-level statement touches its tile, for fusion. */
typedef enum FuseKind {
	FUSE_LOAD,   /* tile_copy(buffer, tensor region) */
	FUSE_STORE,  /* tile_copy(tensor region, buffer) */
	FUSE_MAP,    /* element-wise tile_parallel nest */
	FUSE_REDUCE, /* tile_reduce_* along the last dim */
} FuseKind;

typedef struct FuseOp {
	const TcStmt *s;      /* the statement */
	FuseKind kind;        /* what it is */
	int rank;             /* 2: over rows and columns; 1: columns only */
	long long rows, cols; /* its index space (rows is 1 at rank 1) */
	const TcExpr *ext[2]; /* rows and columns as written (ext[0] NULL at
				 rank 1) */
	const TcVar *buf;     /* LOAD, STORE: the buffer; REDUCE: the source */
	const TcRegion *reg;  /* LOAD, STORE: the tensor region */
	const TcStmt *body;   /* MAP: the innermost loop's body (a BLOCK) */
	const TcVar *var[2];  /* MAP: its loop vars, rows then columns
				 (var[0] NULL at rank 1) */
	const TcVar *rowread[8]; /* MAP: per-row buffers it reads, r[i] */
	int nrowread;         /* (9 or more: not fusable) */
	bool helper;          /* LOAD, STORE: rows copy by tilec_load_* /
				 tilec_store_* */
	/* Decided when the run is planned and printed: */
	bool elided;          /* LOAD: its buffer is elided (element loads) */
	CopyPlan cp;          /* LOAD, STORE: names of its bounds */
	const char *valid;    /* elided LOAD: the columns of the current row
				 inside the tensor, NULL if all are */
	const char *acc;      /* REDUCE: the accumulator's name */
	bool braced;          /* MAP: printed in braces, loop vars aliased */
} FuseOp;

/* What one statement reads and writes (tc_stmt_access). */
typedef struct Touches {
	const TcVar *var[32]; /* distinct vars */
	int how[32];          /* TC_ROLE_* of each */
	int n;                /* how many */
	bool overflow;        /* more than 32: treat as touching everything */
} Touches;

/* A run of statements block[first .. first + nstmts) printed as one
 * nest. */
struct Fusion {
	const TcStmt *block;  /* the BLOCK holding them */
	int first, nstmts;    /* which of its statements */
	int n;                /* ops: nagain recomputed, then one per statement */
	int nagain;           /* ops[0 .. nagain) redo an earlier run's work */
	FuseOp *ops;          /* what each does */
	Touches *tt;          /* what each reads and writes */
	FuseOp *ops0;         /* the ops and touches without the redone work */
	Touches *tt0;
	const TcVar *again[8];   /* the buffers it recomputes */
	const Fusion *from[8];   /* the run whose writes of each it redoes */
	int nrecomputed;
	bool kept;            /* replan: all its ops could stay */
	int rank;             /* 2: rows and columns; 1: columns only */
	long long rows, cols; /* the index space */
	const TcExpr *ext[2]; /* rows (NULL at rank 1) and columns as written */
	bool *elided;         /* by var index: buffers kept in registers */
};

/* The index space of a whole rank-1 or rank-2 buffer with constant dims. */
static bool
tile_space(const TcVar *v, FuseOp *op)
{
	long long d[2];
	if (v->rank < 1 || v->rank > 2)
		return false;
	for (int i = 0; i < v->rank; i++)
		if (!tc_expr_const(v->shape[i], &d[i]) || d[i] <= 0)
			return false;
	op->rank = v->rank;
	op->rows = v->rank == 2 ? d[0] : 1;
	op->cols = d[v->rank - 1];
	op->ext[0] = v->rank == 2 ? v->shape[0] : NULL;
	op->ext[1] = v->shape[v->rank - 1];
	return true;
}

static bool
is_var(const TcExpr *e, const TcVar *v)
{
	return v && e->kind == TC_EX_VAR && e->u.var == v;
}

static bool
dim_is(const TcVar *v, int d, long long n)
{
	long long c;
	return tc_expr_const(v->shape[d], &c) && c == n;
}

/* Whether v[idx] is at a MAP's own indices: the tile's element, or (read
 * only, unless the nest is over the columns alone) a per-row or
 * per-column buffer's; per-row buffers read are noted in op->rowread. */
static bool
map_elem_ok(FuseOp *op, const TcVar *v, TcExpr *const *idx, bool write)
{
	if (v->kind != TC_VAR_BUFFER)
		return false;
	if (v->rank == 2)
		return op->rank == 2 && dim_is(v, 0, op->rows) &&
		       dim_is(v, 1, op->cols) && is_var(idx[0], op->var[0]) &&
		       is_var(idx[1], op->var[1]);
	if (v->rank != 1)
		return false;
	if (is_var(idx[0], op->var[1]) && dim_is(v, 0, op->cols))
		return op->rank == 1 || !write;
	if (!is_var(idx[0], op->var[0]) || !dim_is(v, 0, op->rows) || write)
		return false;
	for (int i = 0; i < op->nrowread; i++)
		if (op->rowread[i] == v)
			return true;
	if (op->nrowread == 8)
		return false;
	op->rowread[op->nrowread++] = v;
	return true;
}

/* Whether a MAP's body is element-wise (map_elem_ok): a walk that stops
 * at the first statement or element access that is not. */
typedef struct MapCheck {
	Emitter *E;     /* the emitter (which locals are visible) */
	FuseOp *op;     /* the nest checked */
	bool ok;        /* nothing failed yet */
	TcVisitor walk; /* the walk, for assignments' values */
} MapCheck;

static TcVisit
map_fail(MapCheck *m)
{
	m->ok = false;
	return TC_VISIT_STOP;
}

static TcVisit
map_expr_ok(void *ctx, const TcExpr *e)
{
	MapCheck *m = ctx;
	if (e->kind != TC_EX_LOAD)
		return TC_VISIT_INTO;
	if (!map_elem_ok(m->op, e->u.load.var, e->u.load.idx, false))
		return map_fail(m);
	return TC_VISIT_OVER;
}

static TcVisit
map_stmt_ok(void *ctx, const TcStmt *s)
{
	MapCheck *m = ctx;
	switch (s->kind) {
	case TC_ST_BLOCK:
	case TC_ST_IF:
		return TC_VISIT_INTO;
	case TC_ST_DECL:
		return s->u.decl.var->kind == TC_VAR_LOCAL ? TC_VISIT_INTO
							   : map_fail(m);
	case TC_ST_ASSIGN: {
		const TcExpr *dst = s->u.assign.dst;
		if (dst->kind == TC_EX_VAR) {
			/* Only the body's own locals. */
			const TcVar *v = dst->u.var;
			if (v->kind != TC_VAR_LOCAL || m->E->visible[v->index])
				return map_fail(m);
		} else if (!map_elem_ok(m->op, dst->u.load.var, dst->u.load.idx,
					true)) {
			return map_fail(m);
		}
		tc_expr_visit(s->u.assign.value, &m->walk);
		return m->ok ? TC_VISIT_OVER : TC_VISIT_STOP;
	}
	default:
		return map_fail(m);
	}
}

static bool
map_body_ok(Emitter *E, FuseOp *op, const TcStmt *body)
{
	MapCheck m = { E, op, true, { 0 } };
	m.walk = (TcVisitor){ .expr = map_expr_ok, .stmt = map_stmt_ok,
			      .ctx = &m };
	tc_stmt_visit(body, &m.walk);
	return m.ok;
}

/* A block-level tile_parallel nest of one or two loops with constant
 * extents whose innermost body has no loop and is element-wise. */
static bool
classify_map(Emitter *E, const TcStmt *s, FuseOp *op)
{
	*op = (FuseOp){ .s = s, .kind = FUSE_MAP };
	if (s->kind != TC_ST_FOR || s->u.loop.kind != TC_LOOP_PARALLEL)
		return false;
	const TcStmt *loops[2] = { s, nested_parallel(s) };
	int rank = loops[1] ? 2 : 1;
	if (rank == 2 && nested_parallel(loops[1]))
		return false;
	long long ext[2];
	for (int d = 0; d < rank; d++)
		if (!tc_expr_const(loops[d]->u.loop.end, &ext[d]) || ext[d] <= 0)
			return false;
	const TcStmt *body = loops[rank - 1]->u.loop.body;
	if (has_loop(body))
		return false;
	op->rank = rank;
	op->rows = rank == 2 ? ext[0] : 1;
	op->cols = ext[rank - 1];
	op->ext[0] = rank == 2 ? loops[0]->u.loop.end : NULL;
	op->ext[1] = loops[rank - 1]->u.loop.end;
	op->var[0] = rank == 2 ? loops[0]->u.loop.var : NULL;
	op->var[1] = loops[rank - 1]->u.loop.var;
	op->body = body;
	return map_body_ok(E, op, body);
}

/* Whether a block-level statement can join a fused run, and how. */
static bool
classify(Emitter *E, const TcStmt *s, FuseOp *op)
{
	*op = (FuseOp){ .s = s };
	switch (s->kind) {
	case TC_ST_COPY: {
		const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
		bool load = dst->whole && dst->var->kind == TC_VAR_BUFFER &&
			    src->var->kind == TC_VAR_TENSOR;
		bool store = src->whole && src->var->kind == TC_VAR_BUFFER &&
			     dst->var->kind == TC_VAR_TENSOR;
		if (!load && !store)
			return false;
		const TcVar *buf = load ? dst->var : src->var;
		const TcRegion *reg = load ? src : dst;
		if (!tile_space(buf, op) || reg->var->dtype == TC_DT_I4 ||
		    reg->dims[buf->rank - 1] != reg->var->rank - 1)
			return false;
		for (int t = 0; t < buf->rank; t++)
			if (!nonneg(E, reg->origin[reg->dims[t]]))
				return false;
		op->kind = load ? FUSE_LOAD : FUSE_STORE;
		op->buf = buf;
		op->reg = reg;
		op->helper = row_helper(reg->var->dtype) &&
			     strcmp(value_type(buf->dtype), "float") == 0 &&
			     !(load && is_narrow_float(buf->dtype) &&
			       buf->dtype != reg->var->dtype);
		return load || op->helper;
	}
	case TC_ST_REDUCE: {
		const TcVar *src = s->u.reduce.src.var;
		if (!s->u.reduce.src.whole || !s->u.reduce.dst.whole ||
		    src->rank != 2 || s->u.reduce.dim != 1 || !tile_space(src, op))
			return false;
		op->kind = FUSE_REDUCE;
		op->buf = src;
		return true;
	}
	case TC_ST_FOR:
		return classify_map(E, s, op);
	default:
		return false;
	}
}

/* Whether a MAP writes all of v before reading any of it: the first of
 * its body's top-level statements that touches v assigns v at the nest's
 * indices, unconditionally, from a value that does not read v. */
static bool
map_kills(const FuseOp *op, const TcVar *v)
{
	const TcStmt *body = op->body;
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (!tc_stmt_touches(s, NULL, v))
			continue;
		return s->kind == TC_ST_ASSIGN &&
		       s->u.assign.dst->kind == TC_EX_LOAD &&
		       s->u.assign.dst->u.load.var == v &&
		       v->rank == op->rank &&
		       !(tc_stmt_touches(s, NULL, v) & TC_ROLE_READ);
	}
	return false;
}

/* --- Fusion: liveness ---------------------------------------------------------- */
/*
 * Which buffers are read after a statement before being written in full
 * again, on some path: a backward walk over the body, loops iterated to a
 * fixed point, recorded for every statement of a block.  A statement
 * writes a buffer in full when it declares it, copies or fills the whole
 * buffer, reduces into it without TILE_ACCUMULATE, or is an element-wise
 * nest that assigns every element before reading any (map_kills).
 * Anything else that reads a buffer keeps it live.
 */

typedef struct LiveOut {
	const TcStmt *s; /* a statement of some block */
	bool *set;       /* by var index: buffers read after it */
} LiveOut;

static bool *
live_copy(Emitter *E, const bool *from)
{
	size_t n = (size_t)E->k->vars.len + 1;
	bool *set = tc_alloc(E->a, n * sizeof *set);
	if (from)
		memcpy(set, from, n * sizeof *set);
	return set;
}

static void
live_use(void *ctx, const TcVar *v, int how)
{
	bool *set = ctx;
	if (v->kind == TC_VAR_BUFFER && (how & TC_ROLE_READ))
		set[v->index] = true;
}

static void
live_record(Emitter *E, const TcStmt *s, const bool *set)
{
	for (int i = 0; i < E->live.len; i++) {
		LiveOut *r = E->live.items[i];
		if (r->s == s) {
			memcpy(r->set, set, ((size_t)E->k->vars.len + 1) * sizeof *set);
			return;
		}
	}
	LiveOut *r = tc_alloc(E->a, sizeof *r);
	r->s = s;
	r->set = live_copy(E, set);
	tc_vec_push(E->a, &E->live, r);
}

static const bool *
live_after(Emitter *E, const TcStmt *s)
{
	for (int i = 0; i < E->live.len; i++) {
		const LiveOut *r = E->live.items[i];
		if (r->s == s)
			return r->set;
	}
	tc_unreachable();
}

/* The buffer a simple statement writes in full, or NULL. */
static const TcVar *
killed(const TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_DECL:
		return s->u.decl.var->kind == TC_VAR_BUFFER ? s->u.decl.var : NULL;
	case TC_ST_COPY:
		return s->u.copy.dst.whole ? s->u.copy.dst.var : NULL;
	case TC_ST_FILL:
		return s->u.fill.dst.whole ? s->u.fill.dst.var : NULL;
	case TC_ST_REDUCE:
		return s->u.reduce.dst.whole && !s->u.reduce.accumulate
			       ? s->u.reduce.dst.var : NULL;
	default:
		return NULL;
	}
}

/* live: what is live after s on entry, before s on return. */
static void
live_stmt(Emitter *E, const TcStmt *s, bool *live)
{
	int nv = E->k->vars.len;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = s->u.block.body.len - 1; i >= 0; i--) {
			const TcStmt *it = s->u.block.body.items[i];
			live_record(E, it, live);
			live_stmt(E, it, live);
			/* A run that recomputes buffers writes them before
			 * its first statement, from what the redone work
			 * reads. */
			const Fusion *F = fusion_at(E, s, i);
			for (int k = 0; F && k < F->nagain; k++)
				tc_stmt_access(F->ops[k].s, NULL, live_use, live);
			for (int k = 0; F && k < F->nagain; k++)
				for (int t = 0; t < F->tt[k].n; t++)
					if (F->tt[k].how[t] & TC_ROLE_WRITE)
						live[F->tt[k].var[t]->index] = false;
		}
		return;
	case TC_ST_IF: {
		bool *els = live_copy(E, live);
		live_stmt(E, s->u.cond.then, live);
		if (s->u.cond.els)
			live_stmt(E, s->u.cond.els, els);
		for (int v = 0; v < nv; v++)
			live[v] |= els[v];
		tc_expr_access(s->u.cond.cond, live_use, live);
		return;
	}
	case TC_ST_FOR: {
		FuseOp op;
		if (classify_map(E, s, &op)) {
			for (int v = 0; v < nv; v++) {
				const TcVar *var = E->k->vars.items[v];
				if (var->kind == TC_VAR_BUFFER && map_kills(&op, var))
					live[v] = false;
			}
			tc_stmt_access(s, NULL, live_use, live);
			return;
		}
		/* The body runs zero or more times. */
		for (;;) {
			bool *in = live_copy(E, live);
			live_stmt(E, s->u.loop.body, in);
			bool changed = false;
			for (int v = 0; v < nv; v++)
				if (in[v] && !live[v])
					live[v] = changed = true;
			if (!changed)
				break;
		}
		tc_expr_access(s->u.loop.begin, live_use, live);
		tc_expr_access(s->u.loop.end, live_use, live);
		tc_expr_access(s->u.loop.step, live_use, live);
		return;
	}
	default: {
		const TcVar *k = killed(s);
		if (k)
			live[k->index] = false;
		tc_stmt_access(s, NULL, live_use, live);
		return;
	}
	}
}

/* --- Fusion: planning runs -------------------------------------------------------- */

static void
touches_add(void *ctx, const TcVar *v, int how)
{
	Touches *t = ctx;
	if (v->kind != TC_VAR_BUFFER && v->kind != TC_VAR_TENSOR)
		return;
	for (int i = 0; i < t->n; i++)
		if (t->var[i] == v) {
			t->how[i] |= how;
			return;
		}
	if (t->n == 32) {
		t->overflow = true;
		return;
	}
	t->var[t->n] = v;
	t->how[t->n++] = how;
}

static int
touches_of(const Touches *t, const TcVar *v)
{
	for (int i = 0; i < t->n; i++)
		if (t->var[i] == v)
			return t->how[i];
	return 0;
}

/* Whether op k may follow ops[0 .. k) in one run: same columns (and rows,
 * for two rank-2 ops), nothing touching a per-row buffer an earlier op
 * reduces into, no tensor written by one op and touched by another. */
static bool
joins(const FuseOp *ops, const Touches *tt, int k)
{
	const FuseOp *op = &ops[k];
	if (op->kind == FUSE_STORE && op->rank == 1 && ops[0].rank == 2)
		return false;
	for (int p = 0; p < k; p++) {
		const FuseOp *q = &ops[p];
		if (q->cols != op->cols ||
		    (q->rank == 2 && op->rank == 2 && q->rows != op->rows) ||
		    (op->kind == FUSE_STORE && op->rank == 1 && q->rank == 2))
			return false;
		if (tt[k].overflow || tt[p].overflow)
			return false;
		if (q->kind == FUSE_REDUCE &&
		    touches_of(&tt[k], q->s->u.reduce.dst.var))
			return false;
		/* A buffer read by the row (r[i]) is not written by the
		 * other op but at the end of a row, by a reduction. */
		for (int i = 0; i < op->nrowread; i++)
			if (q->kind != FUSE_REDUCE &&
			    (touches_of(&tt[p], op->rowread[i]) & TC_ROLE_WRITE))
				return false;
		for (int i = 0; i < q->nrowread; i++)
			if (op->kind != FUSE_REDUCE &&
			    (touches_of(&tt[k], q->rowread[i]) & TC_ROLE_WRITE))
				return false;
		for (int i = 0; i < tt[k].n; i++) {
			const TcVar *v = tt[k].var[i];
			int mine = tt[k].how[i], theirs = touches_of(&tt[p], v);
			if (v->kind == TC_VAR_TENSOR && theirs &&
			    ((mine | theirs) & TC_ROLE_WRITE))
				return false;
		}
	}
	return true;
}

/* Decide which buffers the run ops[0 .. n) elides, given what is live
 * after it; returns the index of the first op the run cannot keep (n if
 * all fit): a copy into a stored buffer without a row helper, a
 * statement over the columns writing a stored buffer in a run over rows,
 * a stored copy whose buffer an earlier op touches (the copy moves to the
 * start of the row), or a copy out whose buffer a later op writes (it
 * moves to the end). */
static int
plan_elision(Emitter *E, FuseOp *ops, const Touches *tt, int n,
	     const bool *live, bool *elided)
{
	int nv = E->k->vars.len, rank = 1;
	for (int k = 0; k < n; k++)
		rank = ops[k].rank > rank ? ops[k].rank : rank;
	memset(elided, 0, ((size_t)nv + 1) * sizeof *elided);
	for (int v = 0; v < nv; v++) {
		const TcVar *var = E->k->vars.items[v];
		if (var->kind != TC_VAR_BUFFER || live[v])
			continue;
		bool kill = false, written = false, stored = false;
		for (int k = 0; k < n && !stored; k++) {
			int how = touches_of(&tt[k], var);
			if (!how)
				continue;
			const FuseOp *op = &ops[k];
			bool first = !written;
			written |= (how & TC_ROLE_WRITE) != 0;
			stored |= op->kind == FUSE_STORE;
			if (first)
				kill = (op->kind == FUSE_LOAD && op->buf == var) ||
				       (op->kind == FUSE_MAP && map_kills(op, var));
		}
		elided[v] = kill && !stored &&
			    (var->rank == rank || (var->rank == 1 && rank == 2));
	}
	for (int k = 0; k < n; k++) {
		const FuseOp *op = &ops[k];
		bool broadcast = op->rank == 1 && rank == 2;
		if (op->kind == FUSE_LOAD) {
			/* A stored copy over the columns alone copies its row
			 * once, before the rows. */
			if (elided[op->buf->index] || !broadcast)
				continue;
			if (!op->helper)
				return k;
			for (int p = 0; p < k; p++)
				if (touches_of(&tt[p], op->buf))
					return k;
		} else if (op->kind == FUSE_STORE) {
			for (int p = k + 1; p < n; p++)
				if (touches_of(&tt[p], op->buf) & TC_ROLE_WRITE)
					return k;
		} else if (op->kind == FUSE_MAP && broadcast) {
			for (int i = 0; i < tt[k].n; i++)
				if ((tt[k].how[i] & TC_ROLE_WRITE) &&
				    !elided[tt[k].var[i]->index])
					return k;
		}
	}
	return n;
}

/* Plan the runs among the statements of one block, then of the blocks
 * inside them (not inside tile_parallel loops: tile ops live at block
 * level). */
static void
plan_block(Emitter *E, const TcStmt *block)
{
	int n = block->u.block.body.len;
	FuseOp *ops = tc_alloc(E->a, (size_t)(n + 1) * sizeof *ops);
	Touches *tt = tc_alloc(E->a, (size_t)(n + 1) * sizeof *tt);
	bool *ok = tc_alloc(E->a, (size_t)(n + 1) * sizeof *ok);
	for (int i = 0; i < n; i++) {
		const TcStmt *s = block->u.block.body.items[i];
		ok[i] = classify(E, s, &ops[i]);
		if (ok[i])
			tc_stmt_access(s, NULL, touches_add, &tt[i]);
	}
	for (int i = 0; i < n;) {
		int len = 0;
		while (i + len < n && ok[i + len] &&
		       joins(&ops[i], &tt[i], len))
			len++;
		bool *elided = live_copy(E, NULL);
		while (len >= 2) {
			const TcStmt *last = block->u.block.body.items[i + len - 1];
			int keep = plan_elision(E, &ops[i], &tt[i], len,
						live_after(E, last), elided);
			if (keep == len)
				break;
			len = keep;
		}
		/* Copies alone have no element loop to share. */
		bool work = false;
		for (int k = 0; k < len; k++)
			work |= ops[i + k].kind == FUSE_MAP ||
				ops[i + k].kind == FUSE_REDUCE;
		if (len < 2 || !work) {
			i++;
			continue;
		}
		Fusion *F = tc_alloc(E->a, sizeof *F);
		*F = (Fusion){ .block = block, .first = i, .nstmts = len,
			       .n = len, .ops = &ops[i], .tt = &tt[i],
			       .elided = elided, .rank = 1 };
		for (int k = 0; k < len; k++) {
			FuseOp *op = &ops[i + k];
			if (op->kind == FUSE_LOAD)
				op->elided = elided[op->buf->index];
			if (op->rank >= F->rank) {
				F->rank = op->rank;
				F->rows = op->rows;
				F->cols = op->cols;
				F->ext[0] = op->ext[0];
				F->ext[1] = op->ext[1];
			}
		}
		tc_vec_push(E->a, &E->fusions, F);
		i += len;
	}
	for (int i = 0; i < n; i++) {
		const TcStmt *s = block->u.block.body.items[i];
		if (s->kind == TC_ST_BLOCK)
			plan_block(E, s);
		else if (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL)
			plan_block(E, s->u.loop.body);
		else if (s->kind == TC_ST_IF) {
			plan_block(E, s->u.cond.then);
			if (s->u.cond.els)
				plan_block(E, s->u.cond.els);
		}
	}
}

static int
fusion_len(const Fusion *F)
{
	return F->nstmts;
}

/* The run that starts at statement i of block, or NULL. */
static const Fusion *
fusion_at(Emitter *E, const TcStmt *block, int i)
{
	for (int f = 0; f < E->fusions.len; f++) {
		const Fusion *F = E->fusions.items[f];
		if (F->block == block && F->first == i)
			return F;
	}
	return NULL;
}

static void
mark_all(void *ctx, const TcVar *v, int how)
{
	bool *set = ctx;
	(void)how;
	set[v->index] = true;
}

/* Mark in stored the buffers some statement accesses in memory: any
 * access outside a run, or inside one that keeps the buffer. */
static void
mark_stored(Emitter *E, const TcStmt *s, bool *stored)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++) {
			const Fusion *F = fusion_at(E, s, i);
			if (!F) {
				mark_stored(E, s->u.block.body.items[i], stored);
				continue;
			}
			bool *t = live_copy(E, NULL);
			for (int k = 0; k < F->n; k++)
				tc_stmt_access(F->ops[k].s, NULL, mark_all, t);
			for (int v = 0; v < E->k->vars.len; v++)
				stored[v] |= t[v] && !F->elided[v];
			i += F->nstmts - 1;
		}
		return;
	case TC_ST_FOR:
		tc_expr_access(s->u.loop.begin, mark_all, stored);
		tc_expr_access(s->u.loop.end, mark_all, stored);
		tc_expr_access(s->u.loop.step, mark_all, stored);
		mark_stored(E, s->u.loop.body, stored);
		return;
	case TC_ST_IF:
		tc_expr_access(s->u.cond.cond, mark_all, stored);
		mark_stored(E, s->u.cond.then, stored);
		if (s->u.cond.els)
			mark_stored(E, s->u.cond.els, stored);
		return;
	case TC_ST_DECL:
		tc_expr_access(s->u.decl.init, mark_all, stored);
		return;
	default:
		tc_stmt_access(s, NULL, mark_all, stored);
		return;
	}
}

/* --- Fusion: recomputing instead of storing ----------------------------------- */
/*
 * A run that reads a buffer an earlier run of the same block wrote can
 * redo that writing instead (softmax: the copy of X and the mask that the
 * max reduction's run computed, redone in the exp run): the buffer is
 * then written and read only inside runs, and, dead between them, stored
 * by neither.  Reading the tensor again from cache costs a core far less
 * than storing a row while it streams in from memory.  The redone work is
 * the earlier run's ops that write the buffer: the first writes all of
 * it, and each is a copy from a tensor or a nest without calls that
 * writes only the buffer and reads, besides it, per-row or per-column
 * buffers, scalars and locals.  Nothing from the first of those ops to
 * the later run may write what they read, nor touch the buffer outside
 * them; the later run may not write a tensor they read.  A recompute
 * that does not end with the buffer kept in registers by both runs is
 * undone.
 */

/* Whether s assigns local v, or (is_store) element v[...] of a buffer. */
static bool
is_assign_of(const TcStmt *s, const void *v)
{
	return s->kind == TC_ST_ASSIGN && is_var_expr(s->u.assign.dst, v);
}

static bool
is_store(const TcStmt *s, const void *v)
{
	return s->kind == TC_ST_ASSIGN && s->u.assign.dst->kind == TC_EX_LOAD &&
	       s->u.assign.dst->u.load.var == v;
}

/* The locals statements read, and whether they call anything. */
typedef struct Locals {
	TcArena *a; /* where out grows */
	TcVec *out; /* TcVar *: the locals read */
	bool calls; /* some expression is a call */
} Locals;

static TcVisit
local_read(void *ctx, const TcExpr *e)
{
	Locals *l = ctx;
	if (e->kind == TC_EX_VAR && e->u.var->kind == TC_VAR_LOCAL)
		tc_vec_push(l->a, l->out, e->u.var);
	l->calls |= e->kind == TC_EX_CALL;
	return TC_VISIT_INTO;
}

static bool
stmt_locals(const TcStmt *s, TcVec *out, TcArena *a)
{
	Locals l = { a, out, false };
	tc_stmt_visit(s, &(TcVisitor){ .expr = local_read, .ctx = &l });
	return l.calls;
}

/* The ops of F1 that F2 would redo to recompute b (their indices in
 * chain), or 0 if it may not. */
static int
recompute_chain(Emitter *E, const Fusion *F1, const Fusion *F2,
		const TcVar *b, int *chain)
{
	const TcStmt *block = F1->block;
	int nc = 0;
	for (int k = 0; k < F1->n && nc < 8; k++)
		if (touches_of(&F1->tt[k], b) & TC_ROLE_WRITE)
			chain[nc++] = k;
	if (nc == 0 || nc == 8)
		return 0;
	const FuseOp *first = &F1->ops[chain[0]];
	if (!(first->kind == FUSE_LOAD && first->buf == b) &&
	    !(first->kind == FUSE_MAP && map_kills(first, b)))
		return 0;
	/* What the chain reads, besides b. */
	TcVec locals = { 0 };
	const TcVar *reads[64];
	int nreads = 0;
	for (int c = 0; c < nc; c++) {
		const FuseOp *op = &F1->ops[chain[c]];
		const Touches *t = &F1->tt[chain[c]];
		if (op->kind != FUSE_LOAD && op->kind != FUSE_MAP)
			return 0;
		for (int i = 0; i < t->n; i++) {
			const TcVar *v = t->var[i];
			if (v == b)
				continue;
			if ((t->how[i] & TC_ROLE_WRITE) ||
			    (v->kind == TC_VAR_BUFFER && v->rank != 1) || nreads == 64)
				return 0;
			reads[nreads++] = v;
		}
		if (stmt_locals(op->s, &locals, E->a))
			return 0;
	}
	/* Nothing from the chain's start to F2 writes what it reads or
	 * touches b outside it; F2 writes none of its tensors. */
	for (int k = chain[0]; k < F1->n; k++) {
		bool in_chain = false;
		for (int c = 0; c < nc; c++)
			in_chain |= chain[c] == k;
		for (int r = 0; r < nreads; r++)
			if (touches_of(&F1->tt[k], reads[r]) & TC_ROLE_WRITE)
				return 0;
		if (!in_chain && (touches_of(&F1->tt[k], b) & TC_ROLE_WRITE))
			return 0;
	}
	for (int i = F1->first + F1->nstmts; i < F2->first; i++) {
		const TcStmt *s = block->u.block.body.items[i];
		if (tc_stmt_touches(s, NULL, b))
			return 0;
		for (int r = 0; r < nreads; r++)
			if (tc_stmt_touches(s, NULL, reads[r]) & TC_ROLE_WRITE)
				return 0;
		for (int l = 0; l < locals.len; l++)
			if (count_nodes(NULL, s, (Count){ .stmt = is_assign_of,
							  .arg = locals.items[l] }))
				return 0;
	}
	for (int k = 0; k < F2->n; k++)
		for (int r = 0; r < nreads; r++)
			if (touches_of(&F2->tt[k], reads[r]) & TC_ROLE_WRITE)
				return 0;
	return nc;
}

/* The latest run of F2's block before it that writes b, or NULL. */
static const Fusion *
writer_before(Emitter *E, const Fusion *F2, const TcVar *b)
{
	const Fusion *best = NULL;
	for (int f = 0; f < E->fusions.len; f++) {
		const Fusion *F = E->fusions.items[f];
		if (F->block != F2->block || F->first + F->nstmts > F2->first ||
		    (best && best->first > F->first))
			continue;
		for (int k = 0; k < F->n; k++)
			if (touches_of(&F->tt[k], b) & TC_ROLE_WRITE) {
				best = F;
				break;
			}
	}
	return best;
}

/* Give the runs that do not recompute anything yet what they can
 * recompute, but not the (run, buffer) pairs in rejected; returns whether
 * any run changed. */
static bool
add_recomputes(Emitter *E, const TcVec *rejected)
{
	bool changed = false;
	for (int f = 0; f < E->fusions.len; f++) {
		Fusion *F2 = E->fusions.items[f];
		if (F2->nagain)
			continue;
		for (int v = 0; v < E->k->vars.len && F2->nrecomputed < 8; v++) {
			const TcVar *b = E->k->vars.items[v];
			if (b->kind != TC_VAR_BUFFER || b->rank != F2->rank)
				continue;
			/* F2 reads b before it writes it. */
			int how = 0;
			for (int k = F2->nagain; k < F2->n && !how; k++)
				how = touches_of(&F2->tt[k], b);
			if (!(how & TC_ROLE_READ))
				continue;
			bool no = false;
			for (int r = 0; r + 1 < rejected->len; r += 2)
				no |= rejected->items[r] == F2 &&
				      rejected->items[r + 1] == b;
			const Fusion *F1 = writer_before(E, F2, b);
			int chain[8], nc;
			if (no || !F1 || F1->rows != F2->rows || F1->cols != F2->cols ||
			    !(nc = recompute_chain(E, F1, F2, b, chain)))
				continue;
			int n = F2->n + nc;
			FuseOp *ops = tc_alloc(E->a, (size_t)n * sizeof *ops);
			Touches *tt = tc_alloc(E->a, (size_t)n * sizeof *tt);
			for (int c = 0; c < nc; c++) {
				ops[c] = F1->ops[chain[c]];
				tt[c] = F1->tt[chain[c]];
			}
			memcpy(ops + nc, F2->ops, (size_t)F2->n * sizeof *ops);
			memcpy(tt + nc, F2->tt, (size_t)F2->n * sizeof *tt);
			bool ok = true;
			for (int k = nc; k < n && ok; k++)
				ok = joins(ops, tt, k);
			if (!ok)
				continue;
			if (!F2->ops0) {
				F2->ops0 = F2->ops;
				F2->tt0 = F2->tt;
			}
			F2->ops = ops;
			F2->tt = tt;
			F2->n = n;
			F2->nagain += nc;
			F2->again[F2->nrecomputed] = b;
			F2->from[F2->nrecomputed++] = F1;
			changed = true;
		}
	}
	return changed;
}

/* Liveness over the body as the runs now are, then each run's elided
 * buffers.  A run that recomputes and can no longer keep all its ops, or
 * whose recomputed buffer is not kept in registers by it and by the run
 * it redoes, goes back to its own statements; that (run, buffer) pair is
 * added to rejected.  Returns whether any run went back. */
static bool
replan(Emitter *E, TcVec *rejected)
{
	E->live.len = 0;
	bool *live = live_copy(E, NULL);
	live_stmt(E, E->k->body, live);
	for (int f = 0; f < E->fusions.len; f++) {
		Fusion *F = E->fusions.items[f];
		const TcStmt *last =
			F->block->u.block.body.items[F->first + F->nstmts - 1];
		bool *elided = live_copy(E, NULL);
		F->kept = plan_elision(E, F->ops, F->tt, F->n,
				       live_after(E, last), elided) == F->n;
		/* (Less is live than when the run was planned: its old
		 * choice stays valid if the new one fails.) */
		if (F->kept)
			F->elided = elided;
	}
	bool undone = false;
	for (int f = 0; f < E->fusions.len; f++) {
		Fusion *F = E->fusions.items[f];
		for (int r = 0; r < F->nrecomputed; r++) {
			const TcVar *b = F->again[r];
			if (F->kept && F->elided[b->index] &&
			    F->from[r]->elided[b->index])
				continue;
			tc_vec_push(E->a, rejected, F);
			tc_vec_push(E->a, rejected, (void *)b);
			F->ops = F->ops0;
			F->tt = F->tt0;
			F->n -= F->nagain;
			F->nagain = F->nrecomputed = 0;
			undone = true;
			break;
		}
	}
	return undone;
}

/* Liveness, then the runs of the whole body and what they recompute,
 * then the buffers no statement stores (their declarations are left
 * out). */
static void
plan_fusion(Emitter *E)
{
	bool *live = live_copy(E, NULL);
	live_stmt(E, E->k->body, live);
	plan_block(E, E->k->body);
	TcVec rejected = { 0 };
	while (add_recomputes(E, &rejected)) {
		while (replan(E, &rejected))
			;
	}
	for (int f = 0; f < E->fusions.len; f++) {
		Fusion *F = E->fusions.items[f];
		for (int k = 0; k < F->n; k++)
			if (F->ops[k].kind == FUSE_LOAD)
				F->ops[k].elided = F->elided[F->ops[k].buf->index];
	}
	bool *stored = live_copy(E, NULL);
	bool *elided = live_copy(E, NULL);
	mark_stored(E, E->k->body, stored);
	for (int f = 0; f < E->fusions.len; f++) {
		const Fusion *F = E->fusions.items[f];
		for (int v = 0; v < E->k->vars.len; v++)
			elided[v] |= F->elided[v];
	}
	for (int v = 0; v < E->k->vars.len; v++)
		E->unstored[v] = elided[v] && !stored[v];
}

/* --- Fusion: printing a run ------------------------------------------------------ */

/* A name for the nest, reserved until the run is printed. */
static const char *
reserve(Emitter *E, const char *base)
{
	const char *name = fresh(E, base);
	tc_vec_push(E->a, &E->reserved, (void *)name);
	return name;
}

/* Bounds shared by the copies of a run: each distinct origin and extent
 * declared once. */
typedef struct Bounds {
	const TcExpr *origin[16]; /* origin expressions declared */
	const char *oname[16];    /* their names */
	int norigins;
	const char *ekey[16];     /* "shape|origin|tile|fixed" of an extent */
	const char *ename[16];    /* its name */
	int nextents;
	TcBuf odecl;              /* `const int row0 = ..., col0 = ...;` */
	TcBuf edecl;              /* one `const int rows = ...;` per extent */
} Bounds;

static const char *
bounds_origin(Emitter *E, Bounds *bd, const TcExpr *o, const char *base)
{
	if (o->kind == TC_EX_INT && o->u.ival == 0)
		return NULL;
	if (o->kind == TC_EX_VAR)
		return o->u.var->name;
	for (int i = 0; i < bd->norigins; i++)
		if (tc_expr_equal(bd->origin[i], o))
			return bd->oname[i];
	tc_assert(bd->norigins < 16);
	const char *name = reserve(E, base);
	bd->origin[bd->norigins] = o;
	bd->oname[bd->norigins++] = name;
	tc_buf_printf(&bd->odecl, "%s%s = %s", bd->odecl.len ? ", " : "", name,
		      expr_text(E, o, TC_PREC_COMMA + 1));
	return name;
}

/* Fill op->cp's names: origins, valid extents, the fixed condition folded
 * into the first extent, as plan_copy does for one copy. */
static void
bounds_copy(Emitter *E, Bounds *bd, FuseOp *op, const char *const *idx)
{
	CopyPlan *cp = &op->cp;
	*cp = (CopyPlan){ .tile = op->buf, .reg = op->reg, .ten = op->reg->var,
			  .rank = op->buf->rank };
	int R = cp->rank;
	for (int t = 0; t < R; t++)
		cp->idx[t] = idx[2 - R + t];
	fixed_dims(E, cp);
	for (int t = 0; t < R; t++) {
		bool row = R == 2 && t == 0;
		int vd = cp->reg->dims[t];
		const TcExpr *o = cp->reg->origin[vd];
		cp->origin[t] = bounds_origin(E, bd, o, row ? "row0" : "col0");
		long long oc, n, e = dim(cp->tile, t);
		const char *tile_ext = expr_text(E, cp->tile->shape[t], 0);
		bool full = tc_expr_const(o, &oc) &&
			    tc_expr_const(cp->ten->shape[vd], &n) && oc >= 0 &&
			    oc + e <= n;
		const char *fixed = t == 0 ? cp->fixed : NULL;
		if (full && !fixed) {
			cp->ext[t] = tile_ext;
			cp->partial[t] = false;
			continue;
		}
		cp->partial[t] = true;
		const char *shape = expr_text(E, cp->ten->shape[vd],
					      TC_PREC_COMMA + 1);
		const char *origin = cp->origin[t] ? cp->origin[t] : "0";
		const char *key = tc_fmt(E->a, "%s|%s|%s|%s", shape, origin,
					 tile_ext, fixed ? fixed : "");
		cp->ext[t] = NULL;
		for (int i = 0; i < bd->nextents; i++)
			if (strcmp(bd->ekey[i], key) == 0)
				cp->ext[t] = bd->ename[i];
		if (cp->ext[t])
			continue;
		tc_assert(bd->nextents < 16);
		const char *name = reserve(E, row ? "rows" : "cols");
		bd->ekey[bd->nextents] = key;
		bd->ename[bd->nextents++] = name;
		cp->ext[t] = name;
		const char *call = tc_fmt(E->a, "tilec_extent(%s, %s, %s)", shape,
					  origin, tile_ext);
		if (fixed)
			tc_buf_printf(&bd->edecl, "const int %s = %s ? %s : 0;\n",
				      name, fixed, call);
		else
			tc_buf_printf(&bd->edecl, "const int %s = %s;\n", name,
				      call);
	}
}

/* `i < rows` for the rows of a copy that lie inside its tensor, or NULL
 * when all do. */
static const char *
rows_inside(Emitter *E, const FuseOp *op, const char *i)
{
	if (op->cp.rank < 2 || !op->cp.partial[0])
		return NULL;
	return tc_fmt(E->a, "%s < %s", i, op->cp.ext[0]);
}

/* The value an elided copy's element loads, converted as the buffer
 * holds it. */
static const char *
elided_value(Emitter *E, const FuseOp *op)
{
	TcDtype tt = op->cp.ten->dtype, bt = op->buf->dtype;
	const char *te = tensor_elem(E, &op->cp, false);
	const char *val = is_narrow_float(tt)
		? tc_fmt(E->a, "tilec_%s_to_f32(%s)", tc_dtype_name(tt), te) : te;
	return to_buffer(E, val, tt, bt);
}

/* How many times the run writes v (a copy in counts once). */
static int
writes_of(const Fusion *F, const TcVar *v)
{
	int n = 0;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_LOAD && op->buf == v)
			n++;
		else if (op->kind == FUSE_MAP)
			n += count_nodes(NULL, op->body, (Count){ .stmt = is_store, .arg = v });
	}
	return n;
}

/* The type a fused reduction accumulates in: the source's value type,
 * f32 for narrow floats; float max and min reduce int keys. */
static TcDtype
acc_type(const FuseOp *op)
{
	const TcVar *src = op->buf;
	return tc_dtype_is_float(src->dtype) && src->dtype != TC_DT_F64
		       ? TC_DT_F32 : src->dtype;
}

static bool
keyed(const FuseOp *op)
{
	return acc_type(op) == TC_DT_F32 && op->s->u.reduce.op != TC_RED_SUM;
}

/* The key function of a keyed reduction. */
static const char *
key_fn(const FuseOp *op)
{
	return op->s->u.reduce.op == TC_RED_MIN ? "tilec_min_key" : "tilec_max_key";
}

/* Whether a copy in reads its elements in the element loop: every copy
 * but one over the columns alone into a stored buffer, which copies its
 * row once before the rows. */
static bool
in_loop(const Fusion *F, const FuseOp *op)
{
	return op->kind == FUSE_LOAD && (op->elided || op->rank == F->rank);
}

/* `[const] T v` for the local that holds an elided buffer's element. */
static const char *
elided_decl(Emitter *E, const Fusion *F, const TcVar *v)
{
	return tc_fmt(E->a, "%s%s %s", writes_of(F, v) == 1 ? "const " : "",
		      value_type(v->dtype), v->name);
}

/* --- Fusion: what the main loop knows ------------------------------------------- */
/*
 * The main element loop runs only over columns (and rows) that lie inside
 * the tensors its elided copies read: col0 + j < N, row0 + i < M.  Tile
 * programs test exactly that to mask a partial tile (softmax's
 * `if (c * BLOCK_N + j >= N) x[i][j] = -INFINITY`, layernorm's
 * `n0 + j < N ? ... : 0`); in the main loop such a test is known, so the
 * nest's body prints without it: the if and its branch go, a select keeps
 * its one arm.  (Beyond the saved compare, a select with a constant arm
 * makes gcc run all the arithmetic after it under masks: softmax's exp
 * loop ran 25 % slower with the test in it.)  The edge loop keeps every
 * test.  Facts are comparisons `A < B` written as in the copy's region:
 * A the origin plus the nest's index (either order), B the tensor's
 * extent.
 */

typedef struct Fact {
	TcExpr *lhs;       /* origin + index */
	const TcExpr *rhs; /* the tensor's extent there */
} Fact;

/* The facts of the main loop for one nest of run F (at most max). */
static int
main_facts(Emitter *E, const Fusion *F, const FuseOp *map, Fact *out, int max)
{
	int n = 0;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (!in_loop(F, op))
			continue;
		int R = op->buf->rank;
		for (int t = 0; t < R; t++) {
			/* t: the tile dim; the nest's var for it. */
			const TcVar *var = map->var[2 - R + t];
			if (!var || (R == 1 && map->rank == 2 && t != 0) || n + 2 > max)
				continue;
			int vd = op->reg->dims[t];
			const TcExpr *o = op->reg->origin[vd];
			TcExpr *v = tc_expr_var(E->a, (TcVar *)var, o->loc);
			const TcExpr *ext = op->reg->var->shape[vd];
			if (o->kind == TC_EX_INT && o->u.ival == 0) {
				out[n++] = (Fact){ v, ext };
				continue;
			}
			out[n++] = (Fact){ tc_expr_binary(E->a, TC_OP_ADD,
							  (TcExpr *)o, v, o->loc), ext };
			out[n++] = (Fact){ tc_expr_binary(E->a, TC_OP_ADD, v,
							  (TcExpr *)o, o->loc), ext };
		}
	}
	return n;
}

/* 1 if a < b is a fact, else 0 if unknown. */
static bool
is_fact(const Fact *facts, int n, const TcExpr *a, const TcExpr *b)
{
	for (int i = 0; i < n; i++)
		if (tc_expr_equal(facts[i].lhs, a) && tc_expr_equal(facts[i].rhs, b))
			return true;
	return false;
}

static bool
const_truth(const TcExpr *e, bool *v)
{
	long long c;
	if (e->kind != TC_EX_INT || !tc_expr_const(e, &c))
		return false;
	*v = c != 0;
	return true;
}

/* e with the facts' comparisons replaced by their truth, and what that
 * decides folded (selects, !, &&, ||). */
static TcExpr *
simplify_expr(Emitter *E, const TcExpr *e, const Fact *facts, int nf)
{
	if (!e)
		return NULL;
	TcExpr *c = tc_expr_clone(E->a, e);
	bool v = false, w = false;
	switch (e->kind) {
	case TC_EX_BINARY: {
		const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
		switch (e->u.bin.op) {
		case TC_OP_LT:
			if (is_fact(facts, nf, l, r))
				return tc_expr_int(E->a, 1, e->loc);
			break;
		case TC_OP_GT:
			if (is_fact(facts, nf, r, l))
				return tc_expr_int(E->a, 1, e->loc);
			break;
		case TC_OP_GE:
			if (is_fact(facts, nf, l, r))
				return tc_expr_int(E->a, 0, e->loc);
			break;
		case TC_OP_LE:
			if (is_fact(facts, nf, r, l))
				return tc_expr_int(E->a, 0, e->loc);
			break;
		default:
			break;
		}
		c->u.bin.lhs = simplify_expr(E, l, facts, nf);
		c->u.bin.rhs = simplify_expr(E, r, facts, nf);
		bool lc = const_truth(c->u.bin.lhs, &v), rc = const_truth(c->u.bin.rhs, &w);
		if (e->u.bin.op == TC_OP_LAND && ((lc && !v) || (rc && !w)))
			return tc_expr_int(E->a, 0, e->loc);
		if (e->u.bin.op == TC_OP_LOR && ((lc && v) || (rc && w)))
			return tc_expr_int(E->a, 1, e->loc);
		if ((e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR) && lc)
			return c->u.bin.rhs;
		if ((e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR) && rc)
			return c->u.bin.lhs;
		return c;
	}
	case TC_EX_UNARY:
		c->u.un.arg = simplify_expr(E, e->u.un.arg, facts, nf);
		if (e->u.un.op == TC_UOP_NOT && const_truth(c->u.un.arg, &v))
			return tc_expr_int(E->a, !v, e->loc);
		return c;
	case TC_EX_SELECT:
		c->u.sel.cond = simplify_expr(E, e->u.sel.cond, facts, nf);
		if (const_truth(c->u.sel.cond, &v))
			return simplify_expr(E, v ? e->u.sel.then : e->u.sel.els,
					     facts, nf);
		c->u.sel.then = simplify_expr(E, e->u.sel.then, facts, nf);
		c->u.sel.els = simplify_expr(E, e->u.sel.els, facts, nf);
		return c;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = simplify_expr(E, e->u.call.args[i],
							  facts, nf);
		return c;
	case TC_EX_CAST:
		c->u.cast.arg = simplify_expr(E, e->u.cast.arg, facts, nf);
		return c;
	default:
		return c;
	}
}

/* Append to out the statements of block s, simplified: an if whose test
 * is decided becomes the statements of its branch. */
static void
simplify_block(Emitter *E, const TcStmt *s, const Fact *facts, int nf,
	       TcStmt *out)
{
	for (int i = 0; i < s->u.block.body.len; i++) {
		const TcStmt *st = s->u.block.body.items[i];
		TcStmt *c = tc_alloc(E->a, sizeof *c);
		*c = *st;
		bool v;
		switch (st->kind) {
		case TC_ST_DECL:
			c->u.decl.init = simplify_expr(E, st->u.decl.init, facts, nf);
			break;
		case TC_ST_ASSIGN:
			c->u.assign.value = simplify_expr(E, st->u.assign.value,
							  facts, nf);
			/* x = cond ? x : y with cond known: nothing left. */
			if (tc_expr_equal(c->u.assign.value, st->u.assign.dst))
				continue;
			break;
		case TC_ST_IF:
			c->u.cond.cond = simplify_expr(E, st->u.cond.cond, facts, nf);
			if (const_truth(c->u.cond.cond, &v)) {
				if (v)
					simplify_block(E, st->u.cond.then, facts, nf,
						       out);
				else if (st->u.cond.els)
					simplify_block(E, st->u.cond.els, facts, nf,
						       out);
				continue;
			}
			c->u.cond.then = tc_stmt_new(E->a, TC_ST_BLOCK, st->loc);
			simplify_block(E, st->u.cond.then, facts, nf, c->u.cond.then);
			if (st->u.cond.els) {
				c->u.cond.els = tc_stmt_new(E->a, TC_ST_BLOCK, st->loc);
				simplify_block(E, st->u.cond.els, facts, nf,
					       c->u.cond.els);
			}
			break;
		default:
			break;
		}
		tc_vec_push(E->a, &out->u.block.body, c);
	}
}

/* The element loop's body: every op's work on element (i, j) in order.
 * In the edge loop (edge), elided copies read zero past their tensor's
 * edge; only is the valid extent the main loop ran to, if it was one
 * copy's.  An elided buffer's local is declared where the run first
 * writes it, or before everything if that is inside a braced nest. */
static void
emit_fused_body(Emitter *E, const Fusion *F, const char *const *idx,
		const char *only, bool edge)
{
	TcBuf *b = E->out;
	bool *declared = live_copy(E, NULL);
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_MAP || !op->braced)
			continue;
		for (int v = 0; v < E->k->vars.len; v++) {
			const TcVar *var = E->k->vars.items[v];
			if (F->elided[v] && !declared[v] &&
			    (tc_stmt_touches(op->body, NULL, var) & TC_ROLE_WRITE)) {
				tc_buf_printf(b, "%s %s;\n", value_type(var->dtype),
					      var->name);
				declared[v] = true;
			}
		}
	}
	const bool *saved = E->elided;
	E->elided = F->elided;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		switch (op->kind) {
		case FUSE_LOAD: {
			if (!in_loop(F, op))
				break;
			const char *val = elided_value(E, op);
			if (edge && op->valid) {
				/* Past the one edge the main loop stops at,
				 * nothing is inside; else test this copy's. */
				const char *in = rows_inside(E, op, idx[0]);
				const char *test = in;
				if (op->cp.partial[op->cp.rank - 1]) {
					const char *c = tc_fmt(E->a, "%s < %s", idx[1],
							       op->cp.ext[op->cp.rank - 1]);
					test = in ? tc_fmt(E->a, "%s && %s", in, c) : c;
				}
				val = only && strcmp(only, op->valid) == 0
					      ? "0"
					      : tc_fmt(E->a, "%s ? %s : 0", test, val);
			}
			declared[op->buf->index] = true;
			const char *head = tc_fmt(E->a, "%s =",
				op->elided ? elided_decl(E, F, op->buf)
					   : elem(E, op->buf, &idx[2 - op->rank]));
			if ((size_t)b->indent * 8 + strlen(head) + strlen(val) + 2 <= 80)
				tc_buf_printf(b, "%s %s;\n", head, val);
			else
				tc_buf_printf(b, "%s\n    %s;\n", head, val);
			break;
		}
		case FUSE_STORE:
			break;
		case FUSE_MAP: {
			const TcStmt *body = op->body;
			Fact facts[32];
			int nf = edge ? 0 : main_facts(E, F, op, facts, 32);
			if (nf) {
				TcStmt *simple = tc_stmt_new(E->a, TC_ST_BLOCK,
							     body->loc);
				simplify_block(E, body, facts, nf, simple);
				body = simple;
			}
			if (op->braced) {
				tc_buf_puts(b, "{\n");
				b->indent++;
				for (int d = 2 - op->rank; d < 2; d++)
					if (strcmp(op->var[d]->name, idx[d]) != 0)
						tc_buf_printf(b, "const int %s = %s;\n",
							      op->var[d]->name, idx[d]);
			}
			for (int i = 0; i < body->u.block.body.len; i++) {
				const TcStmt *s = body->u.block.body.items[i];
				const TcVar *v = s->kind == TC_ST_ASSIGN &&
						 s->u.assign.dst->kind == TC_EX_LOAD
					? s->u.assign.dst->u.load.var : NULL;
				if (v && F->elided[v->index] && !declared[v->index]) {
					/* The run's first write of an
					 * elided buffer: its local. */
					declared[v->index] = true;
					line_directive(E, s->loc);
					print_statement(E, tc_fmt(E->a, "%s =",
								  elided_decl(E, F, v)),
							s->u.assign.value, v->dtype);
					continue;
				}
				emit_stmt(E, s);
			}
			if (op->braced) {
				b->indent--;
				tc_buf_puts(b, "}\n");
			}
			break;
		}
		case FUSE_REDUCE: {
			const TcVar *src = op->buf;
			TcReduceOp rop = op->s->u.reduce.op;
			const char *se = F->elided[src->index] ? src->name
							       : elem(E, src, idx);
			if (!keyed(op)) {
				tc_buf_printf(b, "%s;\n", reduce_step(E, rop, acc_type(op),
								    op->acc, se));
				break;
			}
			if (rop == TC_RED_ABSMAX)
				se = tc_fmt(E->a, "fabsf(%s)", se);
			tc_buf_printf(b, "%s = tilec_%s(%s, %s(%s));\n", op->acc,
				      rop == TC_RED_MIN ? "min" : "max", op->acc,
				      key_fn(op), se);
			break;
		}
		}
	}
	E->elided = saved;
}

/* Names a statement refers to (vars of any kind) and its body's
 * top-level declarations, for deciding which nests need braces. */
typedef struct Names {
	TcArena *a; /* where out grows */
	TcVec *out; /* const char *: the names */
} Names;

static void
push_name(void *ctx, const TcVar *v)
{
	Names *n = ctx;
	tc_vec_push(n->a, n->out, (void *)v->name);
}

static bool
has_name(const TcVec *v, const char *name)
{
	for (int i = 0; i < v->len; i++)
		if (strcmp(v->items[i], name) == 0)
			return true;
	return false;
}

/* Whether a nest is printed in braces: its loop vars are not the run's
 * index names, or a local it declares at the top of its body would
 * collide with a name another statement of the run uses or declares. */
static bool
needs_braces(Emitter *E, const Fusion *F, int k, const char *const *idx)
{
	const FuseOp *op = &F->ops[k];
	for (int d = 2 - op->rank; d < 2; d++)
		if (strcmp(op->var[d]->name, idx[d]) != 0)
			return true;
	TcVec others = { 0 };
	for (int p = 0; p < F->n; p++)
		if (p != k)
			walk_vars(NULL, F->ops[p].s, push_name,
				  &(Names){ E->a, &others });
	for (int v = 0; v < E->k->vars.len; v++)
		if (F->elided[v])
			tc_vec_push(E->a, &others,
				    (void *)((TcVar *)E->k->vars.items[v])->name);
	for (int i = 0; i < E->reserved.len; i++)
		tc_vec_push(E->a, &others, E->reserved.items[i]);
	const TcStmt *body = op->body;
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (s->kind == TC_ST_DECL && has_name(&others, s->u.decl.var->name))
			return true;
	}
	return false;
}

/* One comment for a tile_parallel nest, in the program's spelling, with
 * what follows appended. */
static void
nest_comment(Emitter *E, const TcStmt *s, const char *more)
{
	TcBuf nest;
	tc_buf_init(&nest);
	for (const TcStmt *l = s; l; l = nested_parallel(l))
		tc_buf_printf(&nest, "%stile_parallel(%s, %s)",
			      nest.len ? " " : "", l->u.loop.var->name,
			      expr_text(E, l->u.loop.end, 0));
	tc_buf_puts(&nest, more);
	line_directive(E, s->loc);
	tc_c_loc_comment(&E->pr, s->loc, nest.data);
	tc_buf_free(&nest);
}

/* `tilec_load_T(row, &T[...], cols, width);` for a stored copy's row (or
 * whole rank-1 tile). */
static void
print_row_copy(Emitter *E, const FuseOp *op, const char *i)
{
	const CopyPlan *cp = &op->cp;
	int R = cp->rank;
	const char *helper = row_helper(cp->ten->dtype);
	const char *row = R == 2 ? tc_fmt(E->a, "%s[%s]", op->buf->name, i)
				 : op->buf->name;
	const char *start = tc_fmt(E->a, "&%s", tensor_elem(E, cp, true));
	const char *args[4];
	if (op->kind == FUSE_LOAD) {
		args[0] = row;
		args[1] = start;
		args[2] = cp->ext[R - 1];
		args[3] = expr_text(E, cp->tile->shape[R - 1], 0);
		print_wrapped(E, tc_fmt(E->a, "tilec_load_%s(", helper), args, 4,
			      ");");
	} else {
		args[0] = start;
		args[1] = row;
		args[2] = cp->ext[R - 1];
		print_wrapped(E, tc_fmt(E->a, "tilec_store_%s(", helper), args, 3,
			      ");");
	}
}

/* --- Fusion: the next block's rows --------------------------------------------- */
/*
 * The blocks of a one-dimensional grid run in order on each thread
 * (schedule(static) gives each a range), so the block after this one is
 * usually the next this thread runs.  A run whose element work calls
 * heavy math (exp, tanh, log ...) leaves memory idle while it computes:
 * the first such run of the kernel asks, one strip of each row at a time,
 * for the rows the next block's copy of the same tensor will read, so
 * they arrive while this block computes (softmax: the next row streams in
 * during this row's exps).  The copy's origin is taken at the next block
 * index and at the first iteration of the loops around the run, locals
 * replaced by their initializers; only two-dimensional copies whose row
 * origin moves with the block and whose origins stay provably
 * non-negative.  A prefetch is a hint: it never faults or changes a
 * result.
 */

typedef struct Ahead {
	const FuseOp *op;     /* the copy whose next rows are fetched */
	const char *origin[2];/* its next origins (declared names) */
	const char *ext[2];   /* and valid extents */
	long long strip;      /* elements per prefetch: 1 KiB */
} Ahead;

/* Whether e calls a function dearer than a compare (exp, tanh, log ...). */
static bool
heavy_call(const TcExpr *e, const void *arg)
{
	(void)arg;
	if (e->kind != TC_EX_CALL)
		return false;
	switch (e->u.call.fn) {
	case TC_FN_CEILDIV: case TC_FN_MIN: case TC_FN_MAX:
	case TC_FN_FMAXF: case TC_FN_FMINF: case TC_FN_FABSF:
		return false;
	default:
		return true;
	}
}

/* e as it will be in the next block's first pass here: the grid index
 * plus one (if next), the loops around at their first iteration, locals
 * as their initializers; NULL if it reads anything else that varies. */
static TcExpr *
next_block_expr(Emitter *E, const TcExpr *e, bool next, int depth)
{
	if (depth > 8)
		return NULL;
	TcExpr *c = tc_expr_clone(E->a, e);
	switch (e->kind) {
	case TC_EX_INT:
		return c;
	case TC_EX_VAR: {
		const TcVar *v = e->u.var;
		switch (v->kind) {
		case TC_VAR_TUNABLE:
		case TC_VAR_SCALAR:
			return c;
		case TC_VAR_BLOCK:
			if (v != E->k->block[0] || !next)
				return c;
			return tc_expr_binary(E->a, TC_OP_ADD, c,
					      tc_expr_int(E->a, 1, e->loc), e->loc);
		case TC_VAR_LOCAL:
			return E->init[v->index]
				       ? next_block_expr(E, E->init[v->index], next,
							 depth + 1)
				       : NULL;
		case TC_VAR_LOOP:
			for (int i = 0; i < E->naround; i++)
				if (E->around[i]->u.loop.var == v)
					return next_block_expr(E,
							       E->around[i]->u.loop.begin,
							       next, depth + 1);
			return NULL;
		default:
			return NULL;
		}
	}
	case TC_EX_BINARY:
		c->u.bin.lhs = next_block_expr(E, e->u.bin.lhs, next, depth);
		c->u.bin.rhs = next_block_expr(E, e->u.bin.rhs, next, depth);
		return c->u.bin.lhs && c->u.bin.rhs ? c : NULL;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!(c->u.call.args[i] = next_block_expr(
				      E, e->u.call.args[i], next, depth)))
				return NULL;
		return c;
	case TC_EX_CAST:
		c->u.cast.arg = next_block_expr(E, e->u.cast.arg, next, depth);
		return c->u.cast.arg ? c : NULL;
	default:
		return NULL;
	}
}

/* Plan the next block's prefetch for run F, printing its bounds; false if
 * F is not the run for it. */
static bool
plan_ahead(Emitter *E, const Fusion *F, Ahead *ah)
{
	const TcKernel *k = E->k;
	if (E->ahead || F->rank != 2 || !k->block[0] || k->grid[1] || k->grid[2])
		return false;
	bool heavy = false;
	for (int i = 0; i < F->n; i++)
		heavy |= F->ops[i].kind == FUSE_MAP && count_nodes(NULL, F->ops[i].body,
						    (Count){ .expr = heavy_call });
	if (!heavy)
		return false;
	for (int i = 0; i < F->n; i++) {
		const FuseOp *op = &F->ops[i];
		if (op->kind != FUSE_LOAD || op->rank != 2 || op->reg->var->rank != 2)
			continue;
		const TcExpr *row = op->reg->origin[0], *col = op->reg->origin[1];
		TcExpr *now = next_block_expr(E, row, false, 0);
		TcExpr *nrow = next_block_expr(E, row, true, 0);
		TcExpr *ncol = next_block_expr(E, col, true, 0);
		if (!now || !nrow || !ncol || !mentions(now, k->block[0]) ||
		    !nonneg(E, nrow) || !nonneg(E, ncol))
			continue;
		const TcVar *ten = op->reg->var;
		int bits = ten->dtype == TC_DT_BOOL ? 8 : tc_dtype_bits(ten->dtype);
		*ah = (Ahead){ .op = op, .strip = 1024 * 8 / bits };
		ah->origin[0] = reserve(E, "next_row0");
		ah->origin[1] = reserve(E, "next_col0");
		ah->ext[0] = reserve(E, "next_rows");
		ah->ext[1] = reserve(E, "next_cols");
		TcBuf *b = E->out;
		long long c;
		if (tc_expr_const(ncol, &c))
			ncol = tc_expr_int(E->a, c, ncol->loc);
		tc_buf_printf(b, "const int %s = %s, %s = %s;\n", ah->origin[0],
			      expr_text(E, nrow, TC_PREC_COMMA + 1), ah->origin[1],
			      expr_text(E, ncol, TC_PREC_COMMA + 1));
		for (int d = 0; d < 2; d++)
			tc_buf_printf(b, "const int %s = tilec_extent(%s, %s, %s);\n",
				      ah->ext[d],
				      expr_text(E, ten->shape[d], TC_PREC_COMMA + 1),
				      ah->origin[d],
				      expr_text(E, op->buf->shape[d], 0));
		E->ahead = true;
		return true;
	}
	return false;
}

static void emit_fused_loop(Emitter *E, const Fusion *F, const char *const *idx,
			    const char *begin, const char *end, const char *only,
			    bool edge);

/* The main element loop in strips, each starting with the prefetch of a
 * strip of the next block's row. */
static void
emit_strips(Emitter *E, const Fusion *F, const char *const *idx,
	    const char *end, const char *only, const Ahead *ah)
{
	TcBuf *b = E->out;
	const char *j0 = reserve(E, tc_fmt(E->a, "%s0", idx[1]));
	const char *j1 = reserve(E, tc_fmt(E->a, "%s1", idx[1]));
	tc_buf_printf(b, "for (int %s = 0; %s < %s; %s += %lld) {\n", j0, j0, end,
		      j0, ah->strip);
	b->indent++;
	tc_buf_printf(b, "const int %s = tilec_min(%s + %lld, %s);\n", j1, j0,
		      ah->strip, end);
	tc_c_comment(&E->pr, tc_fmt(E->a, "the next block's %s, for later",
				    ah->op->reg->var->name));
	tc_buf_printf(b, "if (%s < %s && %s < %s)\n", idx[0], ah->ext[0], j0,
		      ah->ext[1]);
	const char *args[] = {
		tc_fmt(E->a, "&%s[%s + %s][%s + %s]", ah->op->reg->var->name,
		       ah->origin[0], idx[0], ah->origin[1], j0),
		tc_fmt(E->a, "sizeof(%s) * tilec_min(%lld, %s - %s)",
		       storage_type(ah->op->reg->var->dtype), ah->strip,
		       ah->ext[1], j0),
	};
	b->indent++;
	print_wrapped(E, "tilec_prefetch(", args, 2, ");");
	b->indent--;
	emit_fused_loop(E, F, idx, j0, j1, only, false);
	b->indent--;
	tc_buf_puts(b, "}\n");
}

/* One element loop, j from begin to end; reductions joined in clauses.
 * The edge loop has no omp simd: it runs only on partial tiles, and clang
 * cannot vectorize a sum of what it folds to constants there. */
static void
emit_fused_loop(Emitter *E, const Fusion *F, const char *const *idx,
		const char *begin, const char *end, const char *only, bool edge)
{
	static const char *const omp_ops[] = {
		[TC_RED_SUM] = "+", [TC_RED_MAX] = "max",
		[TC_RED_MIN] = "min", [TC_RED_ABSMAX] = "max",
	};
	if (F->cols >= 8 && !edge) {
		TcBuf clauses;
		tc_buf_init(&clauses);
		for (int k = 0; k < F->n; k++)
			if (F->ops[k].kind == FUSE_REDUCE)
				tc_buf_printf(&clauses, " reduction(%s : %s)",
					      omp_ops[F->ops[k].s->u.reduce.op],
					      F->ops[k].acc);
		pragma(E, "omp simd%s", clauses.len ? clauses.data : "");
		tc_buf_free(&clauses);
	}
	for_dim(E, idx[1], begin, end);
	/* The body, without braces if it is one line. */
	TcBuf body, *out = E->out;
	tc_buf_init(&body);
	body.indent = out->indent + 1;
	E->out = E->pr.out = &body;
	emit_fused_body(E, F, idx, only, edge);
	E->out = E->pr.out = out;
	const char *nl = strchr(body.data, '\n');
	bool one = nl && !nl[1] && !strchr(body.data, '#');
	tc_buf_puts(out, one ? "\n" : " {\n");
	int indent = out->indent;
	out->indent = 0;
	tc_buf_puts(out, body.data);
	out->indent = indent;
	if (!one)
		tc_buf_puts(out, "}\n");
	tc_buf_free(&body);
}

/* Print a run as one loop nest (see "Fusion" above). */
static void
emit_fusion(Emitter *E, const Fusion *F)
{
	static const char *const acc_names[] = {
		[TC_RED_SUM] = "sum", [TC_RED_MAX] = "maxv",
		[TC_RED_MIN] = "minv", [TC_RED_ABSMAX] = "amax",
	};
	TcBuf *b = E->out;
	int reserved = E->reserved.len;
	for (int k = 0; k < F->n; k++) {
		const TcStmt *s = F->ops[k].s;
		const char *again = k < F->nagain ? ", again" : "";
		if (F->ops[k].kind == FUSE_MAP)
			nest_comment(E, s, again);
		else
			tc_c_loc_comment(&E->pr, s->loc,
					 tc_fmt(E->a, "%s%s",
						tc_c_source_snippet(E->a, E->p->text,
								    s->loc),
						again));
	}
	TcBuf note;
	tc_buf_init(&note);
	tc_buf_printf(&note, "as one loop over each %s's elements",
		      F->rank == 2 ? "row" : "tile");
	int nel = 0;
	for (int v = 0; v < E->k->vars.len; v++)
		if (F->elided[v])
			tc_buf_printf(&note, "%s%s", nel++ ? ", " : "; not stored: ",
				      ((TcVar *)E->k->vars.items[v])->name);
	tc_c_comment(&E->pr, note.data);
	tc_buf_free(&note);

	/* Index names: a nest's over the whole space, else fresh ones. */
	const char *idx[2] = { NULL, NULL };
	for (int k = 0; k < F->n && !idx[1]; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_MAP && op->rank == F->rank) {
			idx[0] = op->var[0] ? op->var[0]->name : NULL;
			idx[1] = op->var[1]->name;
		}
	}
	if (!idx[1]) {
		const char *names[2];
		index_names(E, F->rank, names);
		idx[2 - F->rank] = names[0];
		if (F->rank == 2)
			idx[1] = names[1];
	}
	for (int d = 2 - F->rank; d < 2; d++)
		tc_vec_push(E->a, &E->reserved, (void *)idx[d]);
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_MAP)
			op->braced = needs_braces(E, F, k, idx);
	}

	/* Bounds of the copies, then per-column copies into stored
	 * buffers, once. */
	Bounds bd = { 0 };
	tc_buf_init(&bd.odecl);
	tc_buf_init(&bd.edecl);
	for (int rank = 2; rank >= 1; rank--)
		for (int k = 0; k < F->n; k++)
			if ((F->ops[k].kind == FUSE_LOAD ||
			     F->ops[k].kind == FUSE_STORE) && F->ops[k].rank == rank)
				bounds_copy(E, &bd, &F->ops[k], idx);
	bool opened = bd.odecl.len || bd.edecl.len;
	if (opened) {
		tc_buf_puts(b, "{\n");
		b->indent++;
		if (bd.odecl.len)
			tc_buf_printf(b, "const int %s;\n", bd.odecl.data);
		if (bd.edecl.len)
			tc_buf_puts(b, bd.edecl.data);
	}
	tc_buf_free(&bd.odecl);
	tc_buf_free(&bd.edecl);
	Ahead ah;
	bool ahead = opened && plan_ahead(E, F, &ah);
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_LOAD && !in_loop(F, op))
			print_row_copy(E, op, NULL);
	}
	const char *i = idx[0];
	if (F->rank == 2) {
		for_dim(E, i, "0", expr_text(E, F->ext[0], 0));
		tc_c_open(&E->pr);
	}
	/* The columns of this row that the copies can read: the main loop
	 * runs over those inside every tensor, without tests. */
	const char *distinct[16];
	int nd = 0;
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (!in_loop(F, op))
			continue;
		int last = op->cp.rank - 1;
		const char *in = rows_inside(E, op, i);
		op->valid = in ? tc_fmt(E->a, "%s ? %s : 0", in, op->cp.ext[last])
			: op->cp.partial[last] ? op->cp.ext[last] : NULL;
		bool seen = !op->valid;
		for (int d = 0; d < nd && !seen; d++)
			seen = strcmp(distinct[d], op->valid) == 0;
		if (!seen && nd < 16)
			distinct[nd++] = op->valid;
	}
	/* cols is no tighter than `i < rows ? cols : 0`. */
	for (int d = 0; d < nd; d++) {
		const char *tail = tc_fmt(E->a, " ? %s : 0", distinct[d]);
		bool looser = false;
		for (int e = 0; e < nd && !looser; e++) {
			size_t l = strlen(distinct[e]), t = strlen(tail);
			looser = e != d && l > t &&
				 strcmp(distinct[e] + l - t, tail) == 0;
		}
		if (looser) {
			distinct[d--] = distinct[--nd];
		}
	}
	const char *end = expr_text(E, F->ext[1], 0), *only = NULL;
	if (nd == 1 && !strchr(distinct[0], '?')) {
		end = only = distinct[0];
	} else if (nd >= 1) {
		const char *n = reserve(E, "n");
		const char *v = distinct[0];
		for (int d = 1; d < nd; d++)
			v = tc_fmt(E->a, "tilec_min(%s, %s)", v, distinct[d]);
		tc_buf_printf(b, "const int %s = %s;\n", n, v);
		end = n;
		only = nd == 1 ? distinct[0] : NULL;
	}
	/* Accumulators. */
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_REDUCE)
			continue;
		TcReduceOp rop = op->s->u.reduce.op;
		const TcVar *dst = op->s->u.reduce.dst.var;
		TcDtype t = acc_type(op);
		op->acc = reserve(E, acc_names[rop]);
		bool old = op->s->u.reduce.accumulate && rop != TC_RED_SUM;
		const char *start = reduce_start(E, rop, t,
						 old ? elem(E, dst, idx) : NULL);
		if (keyed(op))
			tc_buf_printf(b, "int %s = %s(%s);\n", op->acc, key_fn(op),
				      start);
		else
			tc_buf_printf(b, "%s %s = %s;\n", value_type(t), op->acc,
				      start);
	}
	if (ahead)
		emit_strips(E, F, idx, end, only, &ah);
	else
		emit_fused_loop(E, F, idx, "0", end, only, false);
	if (nd > 0) {
		tc_c_comment(&E->pr, "columns past an edge: copies read 0");
		emit_fused_loop(E, F, idx, end, expr_text(E, F->ext[1], 0), only,
				true);
	}
	/* Results of the row: reductions, then the rows copied out. */
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_REDUCE)
			continue;
		TcReduceOp rop = op->s->u.reduce.op;
		const TcVar *dst = op->s->u.reduce.dst.var;
		TcDtype t = acc_type(op);
		const char *de = elem(E, dst, idx);
		const char *acc = keyed(op) ? tc_fmt(E->a, "tilec_key_float(%s)",
						     op->acc)
					    : op->acc;
		if (op->s->u.reduce.accumulate && rop == TC_RED_SUM &&
		    !is_narrow_float(dst->dtype))
			tc_buf_printf(b, "%s += %s;\n", de, op->acc);
		else if (op->s->u.reduce.accumulate && rop == TC_RED_SUM)
			tc_buf_printf(b, "%s = tilec_round_%s(%s + %s);\n", de,
				      tc_dtype_name(dst->dtype), de, op->acc);
		else
			tc_buf_printf(b, "%s = %s;\n", de,
				      to_buffer(E, acc, t, dst->dtype));
	}
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_STORE)
			continue;
		const char *in = F->rank == 2 ? rows_inside(E, op, i) : NULL;
		if (in) {
			tc_buf_printf(b, "if (%s)\n", in);
			b->indent++;
		}
		print_row_copy(E, op, i);
		if (in)
			b->indent--;
	}
	if (F->rank == 2)
		tc_c_close(&E->pr);
	if (opened) {
		b->indent--;
		tc_buf_puts(b, "}\n");
	}
	E->reserved.len = reserved;
}

/* --- Statements ------------------------------------------------------------------------ */

static void
emit_stmt(Emitter *E, const TcStmt *s)
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
		return tc_fmt(E->a, "%s %s", value_type(v->dtype), v->name);
	const char *cq = v->is_const ? "const " : "";
	if (v->dtype == TC_DT_I4)
		return tc_fmt(E->a, "%s%s *restrict %s", cq, storage_type(v->dtype),
			      v->name);
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_printf(&b, "%s%s %s[restrict %s]", cq, storage_type(v->dtype),
		      v->name, expr_text(E, v->shape[0], 0));
	for (int i = 1; i < v->rank; i++)
		tc_buf_printf(&b, "[%s]", expr_text(E, v->shape[i], 0));
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
	for (int i = 0; i < nb; i++)
		params[n++] = tc_fmt(E->a, "int %s", blocks[i]->name);
	tc_buf_puts(b, "static void\n");
	if (n == 0)
		params[n++] = "void";
	print_wrapped(E, tc_fmt(E->a, "%s(", name), params, n, ")");
	tc_buf_puts(b, "{\n");
	b->indent++;
	emit_body(E, k->body);
	b->indent--;
	tc_buf_puts(b, "}\n");
}

static void
mark_kernel_use(void *ctx, const TcVar *v)
{
	Emitter *E = ctx;
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
	print_wrapped(E, tc_fmt(E->a, "%s(", k->name), params, n, ")");
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
	for (int i = 0; i < nb; i++)
		args[na++] = blocks[i]->name;
	/* Parameters nothing reads (not the blocks, the grid or a shape). */
	for (int d = 0; d < 3; d++)
		walk_vars(k->grid[d], NULL, mark_kernel_use, E);
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		for (int j = 0; j < v->rank; j++)
			walk_vars(v->shape[j], NULL, mark_kernel_use, E);
	}
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		if (!E->used[v->index])
			tc_buf_printf(b, "(void)%s;\n", v->name);
	}
	/* The grid, z outermost, as one collapsed parallel loop. */
	static const char *const grid_names[3] = { "block_x", "block_y",
						   "block_z" };
	int nloops = 0;
	for (int d = 0; d < 3; d++)
		nloops += k->grid[d] != NULL;
	if (nloops > 0) {
		if (nloops > 1)
			pragma(E, "omp parallel for collapse(%d) schedule(%s)",
			       nloops, E->dynamic ? "dynamic" : "static");
		else
			pragma(E, "omp parallel for schedule(%s)",
			       E->dynamic ? "dynamic" : "static");
	}
	for (int d = 2; d >= 0; d--) {
		if (!k->grid[d])
			continue;
		const char *var = k->block[d] ? k->block[d]->name
					      : fresh(E, grid_names[d]);
		tc_buf_printf(b, "for (int %s = 0; %s < %s; %s++)\n", var, var,
			      expr_text(E, k->grid[d], tc_binop_prec(TC_OP_LT) + 1),
			      var);
		b->indent++;
	}
	print_wrapped(E, tc_fmt(E->a, "%s(", block_fn), args, na, ");");
	b->indent -= nloops;
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
	const char *args[64];
	int n = 0;
	for (int i = 0; i < k->params.len && n < 64; i++) {
		const TcVar *v = k->params.items[i];
		args[n++] = v->kind == TC_VAR_TENSOR
				    ? tc_fmt(E->a, "*(void **)args[%d]", i)
				    : tc_fmt(E->a, "*(%s *)args[%d]",
					     value_type(v->dtype), i);
	}
	print_wrapped(E, tc_fmt(E->a, "%s(", k->name), args, n, ");");
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
		gemm |= count_nodes(NULL, k->body, (Count){ .stmt = is_gemm }) > 0;
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
	if (gemm)
		emit_template(E, "cpu/gemm.h");
	emit_template(E, "cpu/tilec_cpu.h");
	if (p->tunables.len) {
		tc_buf_puts(b, "\nenum {\n");
		for (int i = 0; i < p->tunables.len; i++) {
			const TcVar *v = p->tunables.items[i];
			tc_buf_printf(b, "\t%s = %lld,\n", v->name, v->value);
		}
		tc_buf_puts(b, "};\n");
	}
}

/* clang-format moves a comment that precedes a `#pragma` line to column
 * 0; a pragma may come before the comment of the loop it applies to, so
 * put it there and the comment keeps its indentation. */
static void
hoist_pragmas(TcBuf *out, const char *text)
{
	const char *p = text;
	while (*p) {
		/* A run of comment lines, then maybe a pragma line. */
		const char *q = p;
		for (;;) {
			const char *t = q;
			while (*t == '\t')
				t++;
			if (t[0] != '/' || t[1] != '/')
				break;
			const char *nl = strchr(q, '\n');
			q = nl ? nl + 1 : q + strlen(q);
		}
		if (q > p && strncmp(q, "#pragma", 7) == 0) {
			const char *nl = strchr(q, '\n');
			size_t n = nl ? (size_t)(nl - q) + 1 : strlen(q);
			tc_buf_printf(out, "%.*s", (int)n, q);
			tc_buf_printf(out, "%.*s", (int)(q - p), p);
			p = q + n;
			continue;
		}
		const char *nl = strchr(q, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		tc_buf_printf(out, "%.*s", (int)n, p);
		p += n;
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
	E.init = tc_alloc(E.a, nv * sizeof *E.init);
	E.loop = tc_alloc(E.a, nv * sizeof *E.loop);
	E.block_dep = tc_alloc(E.a, nv * sizeof *E.block_dep);
	E.extent = tc_alloc(E.a, nv * sizeof *E.extent);
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		for (int j = 0; j < v->rank; j++)
			if (v->shape[j]->kind == TC_EX_VAR &&
			    v->shape[j]->u.var->kind == TC_VAR_SCALAR)
				E.extent[v->shape[j]->u.var->index] = true;
	}
	E.unstored = tc_alloc(E.a, nv * sizeof *E.unstored);
	for (size_t i = 0; i < nv; i++)
		E.visible[i] = true;
	walk_vars(NULL, k->body, mark_used, &E);
	scan(&E, k->body, 0);
	plan_fusion(&E);

	/* The block function first, into its own buffer, so an error leaves
	 * out untouched and the frame size is known for its comment. */
	TcBuf body;
	tc_buf_init(&body);
	E.out = &body;
	E.pr = (TcCPrinter){ .out = &body, .hooks = &openmp_hooks, .ctx = &E };
	int errors = d->errors;
	const char *block_fn = fresh(&E, tc_fmt(E.a, "%s_block", k->name));
	emit_block_function(&E, block_fn);
	if (d->errors != errors) {
		tc_buf_free(&body);
		tc_arena_free(E.a);
		return false;
	}

	E.out = out;
	E.pr.out = out;
	if (out->len == 0)
		emit_file_header(&E);
	tc_buf_puts(out, "\n");
	tc_c_loc_comment(&E.pr, k->loc,
			 tc_fmt(E.a, "one block of %s; its buffers take %s of "
				"the thread's stack", k->name,
				size_text(E.a, E.stack_bytes)));
	int indent = out->indent;
	out->indent = 0;
	hoist_pragmas(out, body.data);
	out->indent = indent;
	tc_buf_free(&body);
	tc_buf_puts(out, "\n");
	tc_c_loc_comment(&E.pr, k->loc,
			 tc_fmt(E.a, "%s: the grid, one block per OpenMP loop "
				"iteration", k->name));
	emit_kernel_function(&E, block_fn);
	tc_buf_puts(out, "\n");
	emit_entry(&E);
	tc_arena_free(E.a);
	return true;
}

const TcBackend tc_backend_openmp = {
	.name = "openmp",
	.file_ext = ".c",
	.emit = emit,
};
