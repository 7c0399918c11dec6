/*
 * ir.c - the tile IR: name tables, constructors and small queries.
 *
 * The tables here are generated from the X-macro lists in tilec_int.h; the
 * printer (print.c) and verifier (verify.c) use them rather than spelling
 * names of their own.
 */
#include "ir/tilec_int.h"

#include <limits.h>

#include <string.h>

/* --- Name tables ----------------------------------------------------------- */

static const struct {
	const char *name;
	int bits;    /* bits of the value */
	int storage; /* bits an element takes in memory */
	char kind;   /* F, I, U or B (TC_DTYPES) */
} dtype_info[TC_DT_COUNT] = {
	[TC_DT_NONE] = { "none", 0, 0, 0 },
#define X(name, spelling, bits, storage, kind) \
	[TC_DT_##name] = { spelling, bits, storage, kind },
	TC_DTYPES(X)
#undef X
};

const char *
tc_dtype_name(TcDtype t)
{
	tc_assert(t >= 0 && t < TC_DT_COUNT);
	return dtype_info[t].name;
}

int
tc_dtype_bits(TcDtype t)
{
	return dtype_info[t].bits;
}

int
tc_dtype_storage_bits(TcDtype t)
{
	return dtype_info[t].storage;
}

bool
tc_dtype_is_float(TcDtype t)
{
	return dtype_info[t].kind == 'F';
}

bool
tc_dtype_is_int(TcDtype t)
{
	char k = dtype_info[t].kind;
	return k == 'I' || k == 'U' || k == 'B';
}

bool
tc_dtype_is_unsigned(TcDtype t)
{
	char k = dtype_info[t].kind;
	return k == 'U' || k == 'B';
}

TcDtype
tc_dtype_from_name(const char *name)
{
	for (int t = TC_DT_NONE + 1; t < TC_DT_COUNT; t++)
		if (strcmp(dtype_info[t].name, name) == 0)
			return (TcDtype)t;
	return TC_DT_NONE;
}

static const struct {
	const char *name;
	int prec;
} binop_info[] = {
#define X(name, spelling, prec) [TC_OP_##name] = { spelling, prec },
	TC_BINOPS(X)
#undef X
};

const char *
tc_binop_name(TcBinop op)
{
	return binop_info[op].name;
}

int
tc_binop_prec(TcBinop op)
{
	return binop_info[op].prec;
}

static const char *const unop_names[] = {
#define X(name, spelling) [TC_UOP_##name] = spelling,
	TC_UNOPS(X)
#undef X
};

const char *
tc_unop_name(TcUnop op)
{
	return unop_names[op];
}

static const struct {
	const char *name;
	int arity;
	TcDtype arg, result;
} func_info[] = {
#define X(name, spelling, arity, arg, result) \
	[TC_FN_##name] = { spelling, arity, TC_DT_##arg, TC_DT_##result },
	TC_FUNCS(X)
#undef X
};

const char *
tc_func_name(TcFunc fn)
{
	return func_info[fn].name;
}

int
tc_func_arity(TcFunc fn)
{
	return func_info[fn].arity;
}

TcDtype
tc_func_arg_type(TcFunc fn)
{
	return func_info[fn].arg;
}

TcDtype
tc_func_result_type(TcFunc fn)
{
	return func_info[fn].result;
}

TcFunc
tc_func_from_name(const char *name)
{
	for (int f = 0; f < TC_FN_COUNT; f++)
		if (strcmp(func_info[f].name, name) == 0)
			return (TcFunc)f;
	return TC_FN_COUNT;
}

static const char *const varkind_names[] = {
#define X(name, printed) [TC_VAR_##name] = printed,
	TC_VARKINDS(X)
#undef X
};

const char *
tc_varkind_name(TcVarKind k)
{
	return varkind_names[k];
}

static const char *const scope_names[] = {
	[TC_SCOPE_NONE] = "none",
#define X(name, spelling) [TC_SCOPE_##name] = spelling,
	TC_SCOPES(X)
#undef X
};

const char *
tc_scope_name(TcScope s)
{
	return scope_names[s];
}

static const char *const exprkind_names[] = {
#define X(name, printed) [TC_EX_##name] = printed,
	TC_EXPRKINDS(X)
#undef X
};

const char *
tc_exprkind_name(TcExprKind k)
{
	return exprkind_names[k];
}

static const char *const stmtkind_names[] = {
#define X(name, printed) [TC_ST_##name] = printed,
	TC_STMTKINDS(X)
#undef X
};

const char *
tc_stmtkind_name(TcStmtKind k)
{
	return stmtkind_names[k];
}

static const char *const reduce_names[] = {
#define X(name, spelling) [TC_RED_##name] = spelling,
	TC_REDUCES(X)
#undef X
};

static const char *const copy_lower_names[] = {
	[TC_COPY_ANY] = "any",
	[TC_COPY_VECTOR] = "vector",
	[TC_COPY_STRIDED] = "strided",
	[TC_COPY_REGISTER] = "register",
	[TC_COPY_GENERIC] = "generic",
	[TC_COPY_TMA] = "tma",
	[TC_COPY_TMA_STORE] = "tma_store",
};

const char *
tc_copy_lower_name(TcCopyLower l)
{
	return l >= 0 && l <= TC_COPY_TMA_STORE ? copy_lower_names[l] : "<lower>";
}

const char *
tc_reduce_name(TcReduceOp op)
{
	return reduce_names[op];
}

TcDtype
tc_reduce_all_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F16:
	case TC_DT_BF16:
	case TC_DT_FP8E4M3:
	case TC_DT_FP8E5M2: return TC_DT_F32;
	case TC_DT_BOOL:
	case TC_DT_I4:
	case TC_DT_I8:
	case TC_DT_U8: return TC_DT_I32;
	default: return t;
	}
}

/* --- Constructors ----------------------------------------------------------- */

TcExpr *
tc_expr_new(TcArena *a, TcExprKind k, TcDtype t, TcLoc loc)
{
	TcExpr *e = tc_alloc(a, sizeof *e);
	e->kind = k;
	e->dtype = t;
	e->loc = loc;
	return e;
}

const char *
tc_cpu_gemm_name(TcCpuGemmKind k)
{
	switch (k) {
	case TC_CPU_GEMM_LOOPS: return "loops";
	case TC_CPU_GEMM_F32: return "f32";
	case TC_CPU_GEMM_VNNI_I8: return "vnni_i8";
	case TC_CPU_GEMM_AMX_BF16: return "amx_bf16";
	case TC_CPU_GEMM_AMX_I8: return "amx_i8";
	case TC_CPU_GEMM_AVX2_I8: return "avx2_i8";
	default: return "none";
	}
}

TcExpr *
tc_expr_int(TcArena *a, long long v, TcLoc loc)
{
	TcExpr *e = tc_expr_new(a, TC_EX_INT, TC_DT_I32, loc);
	e->u.ival = v;
	return e;
}

TcExpr *
tc_expr_float(TcArena *a, double v, TcDtype t, TcLoc loc)
{
	TcExpr *e = tc_expr_new(a, TC_EX_FLOAT, t, loc);
	e->u.fval = v;
	return e;
}

TcExpr *
tc_expr_var(TcArena *a, TcVar *v, TcLoc loc)
{
	TcExpr *e = tc_expr_new(a, TC_EX_VAR, v->dtype, loc);
	e->u.var = v;
	return e;
}

/* Rank of a dtype under C's usual arithmetic conversions. */
static int
conv_rank(TcDtype t)
{
	switch (t) {
	case TC_DT_F64: return 10;
	case TC_DT_F32: return 9;
	case TC_DT_F16:
	case TC_DT_BF16:
	case TC_DT_FP8E4M3:
	case TC_DT_FP8E5M2: return 8; /* promoted to f32 when combined */
	case TC_DT_I64: return 5;
	default: return 4; /* int and narrower promote to int */
	}
}

TcDtype
tc_binop_type(TcBinop op, TcDtype l, TcDtype r)
{
	switch (op) {
	case TC_OP_LT: case TC_OP_LE: case TC_OP_GT: case TC_OP_GE:
	case TC_OP_EQ: case TC_OP_NE: case TC_OP_LAND: case TC_OP_LOR:
		return TC_DT_I32;
	case TC_OP_SHL: case TC_OP_SHR:
		return conv_rank(l) >= 5 ? TC_DT_I64 : TC_DT_I32;
	default:
		break;
	}
	int rl = conv_rank(l), rr = conv_rank(r);
	int m = rl > rr ? rl : rr;
	if (m == 10) return TC_DT_F64;
	if (m >= 8) return TC_DT_F32;
	if (m == 5) return TC_DT_I64;
	return TC_DT_I32;
}

TcExpr *
tc_expr_binary(TcArena *a, TcBinop op, TcExpr *l, TcExpr *r, TcLoc loc)
{
	TcExpr *e = tc_expr_new(a, TC_EX_BINARY,
				tc_binop_type(op, l->dtype, r->dtype), loc);
	e->u.bin.op = op;
	e->u.bin.lhs = l;
	e->u.bin.rhs = r;
	return e;
}

TcExpr *
tc_expr_unary(TcArena *a, TcUnop op, TcExpr *arg, TcLoc loc)
{
	TcDtype t = arg->dtype;
	if (op == TC_UOP_NOT)
		t = TC_DT_I32;
	else if (tc_dtype_is_int(t) && t != TC_DT_I64)
		t = TC_DT_I32;
	else if (t == TC_DT_F16 || t == TC_DT_BF16)
		t = TC_DT_F32;
	TcExpr *e = tc_expr_new(a, TC_EX_UNARY, t, loc);
	e->u.un.op = op;
	e->u.un.arg = arg;
	return e;
}

TcStmt *
tc_stmt_new(TcArena *a, TcStmtKind k, TcLoc loc)
{
	TcStmt *s = tc_alloc(a, sizeof *s);
	s->kind = k;
	s->loc = loc;
	return s;
}

static bool
names_var(const TcVec *vars, const char *name)
{
	for (int i = 0; i < vars->len; i++)
		if (strcmp(((const TcVar *)vars->items[i])->name, name) == 0)
			return true;
	return false;
}

const char *
tc_fresh_name(TcArena *a, const TcProgram *p, const TcKernel *k,
	      const char *base)
{
	const char *name = base;
	for (int n = 2; names_var(&k->vars, name) ||
			names_var(&p->tunables, name); n++)
		name = tc_fmt(a, "%s_%d", base, n);
	return tc_strdup(a, name); /* base may be the caller's buffer */
}

TcVar *
tc_var_new(TcArena *a, TcKernel *k, TcVarKind kind, const char *name,
	   TcDtype t, TcLoc loc)
{
	TcVar *v = tc_alloc(a, sizeof *v);
	v->kind = kind;
	v->name = tc_strdup(a, name);
	v->dtype = t;
	v->loc = loc;
	v->param = -1;
	v->index = -1;
	if (k) {
		v->index = k->vars.len;
		tc_vec_push(a, &k->vars, v);
	}
	return v;
}

/* --- Queries ----------------------------------------------------------------- */

const TcExpr *
tc_parallel_bound(const TcExpr *end, long long *bound)
{
	if (!end || end->kind != TC_EX_CALL || end->u.call.fn != TC_FN_MIN ||
	    end->u.call.nargs != 2)
		return NULL;
	const TcExpr *a = end->u.call.args[0], *b = end->u.call.args[1];
	long long x, y;
	bool ca = tc_expr_const(a, &x), cb = tc_expr_const(b, &y);
	if (ca && !cb) {
		*bound = x;
		return b;
	}
	if (cb && !ca) {
		*bound = y;
		return a;
	}
	/* Both constant: a plain extent, unless one is 0 or less (the loop
	 * runs nothing, as min(C, e) with e <= 0 does) and the other, the
	 * extent planned for, is positive. */
	if (ca && cb && (x <= 0) != (y <= 0)) {
		*bound = x > 0 ? x : y;
		return x > 0 ? b : a;
	}
	return NULL;
}

/* ceil(a / b) for b > 0, without forming a + b - 1 (which overflows near
 * the top of the range); the templates' ceildiv is the same formula. */
long long
tc_ceildiv(long long a, long long b)
{
	return a / b + (a % b > 0);
}

/* v as a value of dtype t: an error if a signed int type cannot hold it
 * (the generated code computes constants in C's int or long long). */
static TcEval
fits(TcDtype t, long long v, long long *out)
{
	if (t == TC_DT_I32 && (v < INT32_MIN || v > INT32_MAX))
		return TC_EVAL_OVERFLOW;
	*out = v;
	return TC_EVAL_CONST;
}

TcEval
tc_expr_eval(const TcExpr *e, long long *out)
{
	long long l, r, v;
	TcEval st;
	switch (e->kind) {
	case TC_EX_INT:
		return fits(e->dtype, e->u.ival, out);
	case TC_EX_VAR:
		if (e->u.var->kind != TC_VAR_TUNABLE)
			return TC_EVAL_DYNAMIC;
		return fits(e->dtype, e->u.var->value, out);
	case TC_EX_UNARY:
		if ((st = tc_expr_eval(e->u.un.arg, &l)) != TC_EVAL_CONST)
			return st;
		switch (e->u.un.op) {
		case TC_UOP_NEG:
			if (l == LLONG_MIN)
				return TC_EVAL_OVERFLOW;
			return fits(e->dtype, -l, out);
		case TC_UOP_NOT: *out = !l; return TC_EVAL_CONST;
		case TC_UOP_BNOT: return fits(e->dtype, ~l, out);
		default: return TC_EVAL_DYNAMIC;
		}
	case TC_EX_BINARY:
		if (tc_dtype_is_float(e->dtype))
			return TC_EVAL_DYNAMIC;
		if ((st = tc_expr_eval(e->u.bin.lhs, &l)) != TC_EVAL_CONST ||
		    (st = tc_expr_eval(e->u.bin.rhs, &r)) != TC_EVAL_CONST)
			return st;
		switch (e->u.bin.op) {
		case TC_OP_ADD:
			if (__builtin_add_overflow(l, r, &v))
				return TC_EVAL_OVERFLOW;
			return fits(e->dtype, v, out);
		case TC_OP_SUB:
			if (__builtin_sub_overflow(l, r, &v))
				return TC_EVAL_OVERFLOW;
			return fits(e->dtype, v, out);
		case TC_OP_MUL:
			if (__builtin_mul_overflow(l, r, &v))
				return TC_EVAL_OVERFLOW;
			return fits(e->dtype, v, out);
		case TC_OP_DIV:
		case TC_OP_REM:
			if (r == 0)
				return TC_EVAL_DYNAMIC; /* check's error, not ours */
			if (l == LLONG_MIN && r == -1)
				return TC_EVAL_OVERFLOW;
			return fits(e->dtype, e->u.bin.op == TC_OP_DIV ? l / r
								 : l % r, out);
		case TC_OP_SHL:
			if (r < 0 || r > 62 || l < 0 || l > (LLONG_MAX >> r))
				return r < 0 || r > 62 ? TC_EVAL_DYNAMIC
						       : TC_EVAL_OVERFLOW;
			return fits(e->dtype, l << r, out);
		case TC_OP_SHR:
			if (r < 0 || r > 62)
				return TC_EVAL_DYNAMIC;
			return fits(e->dtype, l >> r, out);
		case TC_OP_LT: *out = l < r; return TC_EVAL_CONST;
		case TC_OP_LE: *out = l <= r; return TC_EVAL_CONST;
		case TC_OP_GT: *out = l > r; return TC_EVAL_CONST;
		case TC_OP_GE: *out = l >= r; return TC_EVAL_CONST;
		case TC_OP_EQ: *out = l == r; return TC_EVAL_CONST;
		case TC_OP_NE: *out = l != r; return TC_EVAL_CONST;
		case TC_OP_BAND: *out = l & r; return TC_EVAL_CONST;
		case TC_OP_BXOR: *out = l ^ r; return TC_EVAL_CONST;
		case TC_OP_BOR: *out = l | r; return TC_EVAL_CONST;
		case TC_OP_LAND: *out = l && r; return TC_EVAL_CONST;
		case TC_OP_LOR: *out = l || r; return TC_EVAL_CONST;
		default: return TC_EVAL_DYNAMIC;
		}
	case TC_EX_SELECT:
		if ((st = tc_expr_eval(e->u.sel.cond, &l)) != TC_EVAL_CONST)
			return st;
		return tc_expr_eval(l ? e->u.sel.then : e->u.sel.els, out);
	case TC_EX_CALL: {
		if (e->u.call.fn == TC_FN_ABS) {
			if ((st = tc_expr_eval(e->u.call.args[0], &l)) !=
			    TC_EVAL_CONST)
				return st;
			if (l == INT32_MIN)
				return TC_EVAL_OVERFLOW;
			*out = l < 0 ? -l : l;
			return TC_EVAL_CONST;
		}
		if (e->u.call.fn != TC_FN_CEILDIV && e->u.call.fn != TC_FN_MIN &&
		    e->u.call.fn != TC_FN_MAX)
			return TC_EVAL_DYNAMIC;
		if ((st = tc_expr_eval(e->u.call.args[0], &l)) != TC_EVAL_CONST ||
		    (st = tc_expr_eval(e->u.call.args[1], &r)) != TC_EVAL_CONST)
			return st;
		if (e->u.call.fn == TC_FN_CEILDIV) {
			if (r <= 0)
				return TC_EVAL_DYNAMIC;
			*out = tc_ceildiv(l, r);
		} else if (e->u.call.fn == TC_FN_MIN) {
			*out = l < r ? l : r;
		} else {
			*out = l > r ? l : r;
		}
		return TC_EVAL_CONST;
	}
	case TC_EX_CAST:
		if (tc_dtype_is_float(e->dtype))
			return TC_EVAL_DYNAMIC;
		if ((st = tc_expr_eval(e->u.cast.arg, &l)) != TC_EVAL_CONST)
			return st;
		return fits(e->dtype, l, out);
	default:
		return TC_EVAL_DYNAMIC;
	}
}

bool
tc_expr_const(const TcExpr *e, long long *out)
{
	return tc_expr_eval(e, out) == TC_EVAL_CONST;
}

long long
tc_var_extent(const TcVar *v, int i)
{
	long long n;
	return tc_expr_const(v->shape[i], &n) ? n : -1;
}

bool
tc_index_in_extent(const TcKernel *k, const TcExpr *e, const TcExpr *extent)
{
	long long c, n;
	if (tc_expr_const(e, &c) && tc_expr_const(extent, &n))
		return c >= 0 && c < n;
	if (e->kind != TC_EX_VAR || e->u.var->kind != TC_VAR_BLOCK)
		return false;
	const TcExpr *grid = k->grid[e->u.var->grid_dim];
	return grid && tc_expr_equal(grid, extent);
}

TcDtype
tc_reduce_type(const TcVar *dst, const TcVar *src)
{
	if (tc_dtype_is_int(dst->dtype))
		return dst->dtype;
	return dst->dtype == TC_DT_F64 || src->dtype == TC_DT_F64 ? TC_DT_F64
								 : TC_DT_F32;
}

bool
tc_vector_row_type(TcDtype t)
{
	return t == TC_DT_F32 || t == TC_DT_F16 || t == TC_DT_BF16;
}

bool
tc_vector_row_copy(const TcFuseOp *op)
{
	TcDtype t = op->reg->var->dtype, b = op->buf->dtype;
	return tc_vector_row_type(t) && (b == TC_DT_F32 || b == t);
}

bool
tc_vector_sum(const TcFuseOp *op)
{
	return op->s->u.reduce.op == TC_RED_SUM &&
	       tc_reduce_type(op->s->u.reduce.dst.var, op->buf) == TC_DT_F32 &&
	       tc_vector_row_type(op->buf->dtype);
}

bool
tc_in_smem(const TcVar *v)
{
	return v->kind == TC_VAR_BUFFER && !v->folded &&
	       (v->scope == TC_SCOPE_SHARED || v->layout.kind == TC_LAYOUT_SMEM);
}

const char *
tc_var_shown(const TcVar *v)
{
	return v->view_of ? v->view_of->name : v->name;
}

const TcStmt *
tc_gemm_b_assign(const TcStmt *gemm)
{
	const TcStmt *s = gemm->u.gemm.b_from;
	while (s && s->kind == TC_ST_FOR)
		s = s->u.loop.body->u.block.body.items[0];
	return s;
}

bool
tc_run_reads_whole(const TcVar *v, int run)
{
	if (run < 2 || !tc_in_smem(v) || v->swizzle || v->panels || v->rank < 1)
		return false;
	int bits = tc_dtype_storage_bits(v->dtype);
	if (bits % 8 && v->dtype != TC_DT_I4)
		return false;
	long long pitch = tc_var_extent(v, v->rank - 1) + v->pad;
	return pitch > 0 && pitch % run == 0;
}

typedef struct WholeLoads {
	const TcExpr *dst; /* the assignment's destination */
	const TcVar *j;    /* the loop's variable */
	int run;
	const TcExpr **out;
	int max, n;
} WholeLoads;

/* The loads of e read as vectors; `cond`: e is evaluated only where a
 * condition holds, so only the destination's own element (written
 * anyway) may be read ahead of it. */
static void
whole_loads(WholeLoads *w, const TcExpr *e, bool cond)
{
	switch (e->kind) {
	case TC_EX_BINARY: {
		bool lazy = e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR;
		whole_loads(w, e->u.bin.lhs, cond);
		whole_loads(w, e->u.bin.rhs, cond || lazy);
		break;
	}
	case TC_EX_UNARY: whole_loads(w, e->u.un.arg, cond); break;
	case TC_EX_CAST: whole_loads(w, e->u.cast.arg, cond); break;
	case TC_EX_SELECT:
		whole_loads(w, e->u.sel.cond, cond);
		whole_loads(w, e->u.sel.then, true);
		whole_loads(w, e->u.sel.els, true);
		break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			whole_loads(w, e->u.call.args[i], cond);
		break;
	case TC_EX_LOAD: {
		const TcVar *v = e->u.load.var;
		int r = v->rank;
		bool along = r > 0 && e->u.load.idx[r - 1]->kind == TC_EX_VAR &&
			     e->u.load.idx[r - 1]->u.var == w->j;
		for (int d = 0; d + 1 < r; d++)
			if (tc_expr_mentions(e->u.load.idx[d], w->j))
				along = false;
		if (along && tc_run_reads_whole(v, w->run) &&
		    (!cond || tc_expr_equal(e, w->dst))) {
			int i = 0;
			while (i < w->n && !tc_expr_equal(w->out[i], e))
				i++;
			if (i == w->n && w->n < w->max)
				w->out[w->n++] = e;
		}
		for (int d = 0; d < r; d++)
			whole_loads(w, e->u.load.idx[d], cond);
		break;
	}
	default:
		break;
	}
}

int
tc_run_whole_loads(const TcExpr *dst, const TcExpr *value, const TcVar *j,
		   int run, const TcExpr **out, int max)
{
	WholeLoads w = { dst, j, run, out, max, 0 };
	whole_loads(&w, value, false);
	return w.n;
}

bool
tc_expr_equal(const TcExpr *a, const TcExpr *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind || a->dtype != b->dtype)
		return false;
	switch (a->kind) {
	case TC_EX_INT: return a->u.ival == b->u.ival;
	case TC_EX_FLOAT: return a->u.fval == b->u.fval;
	case TC_EX_VAR: return a->u.var == b->u.var;
	case TC_EX_SMS: return true;
	case TC_EX_BINARY:
		return a->u.bin.op == b->u.bin.op &&
		       tc_expr_equal(a->u.bin.lhs, b->u.bin.lhs) &&
		       tc_expr_equal(a->u.bin.rhs, b->u.bin.rhs);
	case TC_EX_UNARY:
		return a->u.un.op == b->u.un.op &&
		       tc_expr_equal(a->u.un.arg, b->u.un.arg);
	case TC_EX_SELECT:
		return tc_expr_equal(a->u.sel.cond, b->u.sel.cond) &&
		       tc_expr_equal(a->u.sel.then, b->u.sel.then) &&
		       tc_expr_equal(a->u.sel.els, b->u.sel.els);
	case TC_EX_CALL:
		if (a->u.call.fn != b->u.call.fn ||
		    a->u.call.nargs != b->u.call.nargs)
			return false;
		for (int i = 0; i < a->u.call.nargs; i++)
			if (!tc_expr_equal(a->u.call.args[i], b->u.call.args[i]))
				return false;
		return true;
	case TC_EX_CAST:
		return tc_expr_equal(a->u.cast.arg, b->u.cast.arg);
	case TC_EX_LOAD:
		if (a->u.load.var != b->u.load.var)
			return false;
		for (int i = 0; i < a->u.load.var->rank; i++)
			if (!tc_expr_equal(a->u.load.idx[i], b->u.load.idx[i]))
				return false;
		return true;
	default:
		tc_unreachable();
	}
}

TcExpr *
tc_expr_clone(TcArena *a, const TcExpr *e)
{
	if (!e)
		return NULL;
	TcExpr *c = tc_alloc(a, sizeof *c);
	*c = *e;
	switch (e->kind) {
	case TC_EX_BINARY:
		c->u.bin.lhs = tc_expr_clone(a, e->u.bin.lhs);
		c->u.bin.rhs = tc_expr_clone(a, e->u.bin.rhs);
		break;
	case TC_EX_UNARY:
		c->u.un.arg = tc_expr_clone(a, e->u.un.arg);
		break;
	case TC_EX_SELECT:
		c->u.sel.cond = tc_expr_clone(a, e->u.sel.cond);
		c->u.sel.then = tc_expr_clone(a, e->u.sel.then);
		c->u.sel.els = tc_expr_clone(a, e->u.sel.els);
		break;
	case TC_EX_CALL:
		c->u.call.args = tc_alloc(a, sizeof(TcExpr *) *
						 (size_t)(e->u.call.nargs + 1));
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = tc_expr_clone(a, e->u.call.args[i]);
		break;
	case TC_EX_CAST:
		c->u.cast.arg = tc_expr_clone(a, e->u.cast.arg);
		break;
	case TC_EX_LOAD:
		for (int i = 0; i < e->u.load.var->rank; i++)
			c->u.load.idx[i] = tc_expr_clone(a, e->u.load.idx[i]);
		break;
	default:
		break;
	}
	return c;
}

/* --- Visiting -------------------------------------------------------------------
 * The one walk over expression and statement trees; every other walk (the
 * accesses below, the emitters' analyses) is a pair of callbacks on it. */

/* Whether the walk goes into a node its callback answered r for. */
static bool
visit_into(TcVisitor *v, TcVisit r)
{
	if (r == TC_VISIT_STOP)
		v->stop = true;
	return r == TC_VISIT_INTO;
}

void
tc_expr_visit(const TcExpr *e, TcVisitor *v)
{
	if (!e || v->stop ||
	    !visit_into(v, v->expr ? v->expr(v->ctx, e) : TC_VISIT_INTO))
		return;
	switch (e->kind) {
	case TC_EX_BINARY:
		tc_expr_visit(e->u.bin.lhs, v);
		tc_expr_visit(e->u.bin.rhs, v);
		break;
	case TC_EX_UNARY: tc_expr_visit(e->u.un.arg, v); break;
	case TC_EX_SELECT:
		tc_expr_visit(e->u.sel.cond, v);
		tc_expr_visit(e->u.sel.then, v);
		tc_expr_visit(e->u.sel.els, v);
		break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			tc_expr_visit(e->u.call.args[i], v);
		break;
	case TC_EX_CAST: tc_expr_visit(e->u.cast.arg, v); break;
	case TC_EX_LOAD:
		for (int i = 0; i < e->u.load.var->rank; i++)
			tc_expr_visit(e->u.load.idx[i], v);
		break;
	default:
		break;
	}
}

static void
region_visit(const TcRegion *g, TcVisitor *v)
{
	if (!g->var)
		return;
	if (v->var)
		v->var(v->ctx, g->var);
	for (int i = 0; i < g->var->rank; i++)
		tc_expr_visit(g->origin[i], v);
	for (int i = 0; i < TC_MAX_RANK && g->bound[i]; i++)
		tc_expr_visit(g->bound[i], v);
	if (v->var && g->mask)
		v->var(v->ctx, g->mask);
	if (v->var && g->rows)
		v->var(v->ctx, g->rows);
}

void
tc_stmt_visit(const TcStmt *s, TcVisitor *v)
{
	if (!s || v->stop ||
	    !visit_into(v, v->stmt ? v->stmt(v->ctx, s) : TC_VISIT_INTO))
		return;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			tc_stmt_visit(s->u.block.body.items[i], v);
		break;
	case TC_ST_DECL:
		if (v->var)
			v->var(v->ctx, s->u.decl.var);
		tc_expr_visit(s->u.decl.init, v);
		break;
	case TC_ST_ASSIGN:
		tc_expr_visit(s->u.assign.dst, v);
		tc_expr_visit(s->u.assign.value, v);
		break;
	case TC_ST_FOR:
		if (v->var)
			v->var(v->ctx, s->u.loop.var);
		tc_expr_visit(s->u.loop.begin, v);
		tc_expr_visit(s->u.loop.end, v);
		tc_expr_visit(s->u.loop.step, v);
		tc_stmt_visit(s->u.loop.body, v);
		break;
	case TC_ST_IF:
		tc_expr_visit(s->u.cond.cond, v);
		tc_stmt_visit(s->u.cond.then, v);
		tc_stmt_visit(s->u.cond.els, v);
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
	case TC_ST_ASYNC_COPY:
	case TC_ST_PREFETCH:
		region_visit(&s->u.copy.dst, v);
		region_visit(&s->u.copy.src, v);
		tc_expr_visit(s->u.copy.stage, v);
		tc_expr_visit(s->u.copy.iter, v);
		break;
	case TC_ST_COPY_PLAN:
		if (v->var)
			v->var(v->ctx, s->u.plan.var);
		if (s->u.plan.copy) {
			const TcStmt *c = s->u.plan.copy;
			for (int i = 0; c->u.copy.src.var &&
					i < c->u.copy.src.var->rank; i++)
				tc_expr_visit(c->u.copy.first[i], v);
			tc_expr_visit(c->u.copy.advance, v);
		}
		break;
	case TC_ST_STAGE_BAR_INIT:
		if (v->var)
			v->var(v->ctx, s->u.bars.var);
		break;
	case TC_ST_WGMMA_WAIT:
		if (v->var)
			v->var(v->ctx, s->u.wait.acc);
		break;
	case TC_ST_STAGE_BAR_ARRIVE:
	case TC_ST_STAGE_BAR_WAIT:
		if (v->var)
			v->var(v->ctx, s->u.bar.bars);
		tc_expr_visit(s->u.bar.stage, v);
		tc_expr_visit(s->u.bar.parity, v);
		break;
	case TC_ST_STAGE_VIEW:
		if (v->var) {
			v->var(v->ctx, s->u.view.var);
			v->var(v->ctx, s->u.view.of);
		}
		tc_expr_visit(s->u.view.stage, v);
		break;
	case TC_ST_PIPE_SELECT:
		tc_stmt_visit(s->u.select.fast, v);
		tc_stmt_visit(s->u.select.fallback, v);
		break;
	case TC_ST_ROLES:
		tc_stmt_visit(s->u.roles.producer, v);
		tc_stmt_visit(s->u.roles.consumer, v);
		break;
	case TC_ST_TILES:
		tc_stmt_visit(s->u.tiles.body, v);
		break;
	case TC_ST_GEMM:
		region_visit(&s->u.gemm.c, v);
		region_visit(&s->u.gemm.a, v);
		region_visit(&s->u.gemm.b, v);
		tc_stmt_visit(s->u.gemm.issue, v);
		tc_stmt_visit(s->u.gemm.b_from, v);
		break;
	case TC_ST_FILL:
		region_visit(&s->u.fill.dst, v);
		tc_expr_visit(s->u.fill.value, v);
		break;
	case TC_ST_REDUCE:
		region_visit(&s->u.reduce.dst, v);
		region_visit(&s->u.reduce.src, v);
		break;
	case TC_ST_REDUCE_ALL:
		if (v->var)
			v->var(v->ctx, s->u.reduce_all.dst);
		region_visit(&s->u.reduce_all.src, v);
		break;
	case TC_ST_ARG_REDUCE:
		region_visit(&s->u.arg_reduce.dst, v);
		region_visit(&s->u.arg_reduce.index, v);
		region_visit(&s->u.arg_reduce.src, v);
		break;
	default:
		break;
	}
}

/* --- Accesses ------------------------------------------------------------------
 * What statements read and write, for every pass that asks: barriers,
 * pipelining, layouts, and the tensor roles below.  A visit whose
 * statement callback reports the tile operands and assignments with their
 * roles, and whose expression callback reports the loads. */

typedef struct Access {
	TcAccessFn fn;       /* the caller's callback */
	void *ctx;           /* and its context */
	const TcStmt *skip;  /* a statement not to look into, or NULL */
	TcVisitor visit;     /* the walk reporting into this */
} Access;

static TcVisit
access_expr(void *ctx, const TcExpr *e)
{
	Access *acc = ctx;
	if (e->kind == TC_EX_LOAD)
		acc->fn(acc->ctx, e->u.load.var, TC_ROLE_READ);
	return TC_VISIT_INTO;
}

static void
region_access(Access *acc, const TcRegion *g, int how)
{
	if (!g->var)
		return;
	acc->fn(acc->ctx, g->var, how);
	for (int i = 0; i < g->var->rank; i++)
		tc_expr_visit(g->origin[i], &acc->visit);
	for (int i = 0; i < TC_MAX_RANK && g->bound[i]; i++)
		tc_expr_visit(g->bound[i], &acc->visit);
	if (g->mask)
		acc->fn(acc->ctx, g->mask, TC_ROLE_READ);
	if (g->rows)
		acc->fn(acc->ctx, g->rows, TC_ROLE_READ);
}

static TcVisit
access_stmt(void *ctx, const TcStmt *s)
{
	Access *acc = ctx;
	const int rw = TC_ROLE_READ | TC_ROLE_WRITE;
	if (s == acc->skip)
		return TC_VISIT_OVER;
	switch (s->kind) {
	case TC_ST_ASSIGN: {
		const TcExpr *dst = s->u.assign.dst;
		tc_expr_visit(s->u.assign.value, &acc->visit);
		if (dst->kind == TC_EX_LOAD) {
			acc->fn(acc->ctx, dst->u.load.var, TC_ROLE_WRITE);
			for (int i = 0; i < dst->u.load.var->rank; i++)
				tc_expr_visit(dst->u.load.idx[i], &acc->visit);
		}
		return TC_VISIT_OVER;
	}
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
	case TC_ST_ASYNC_COPY:
		region_access(acc, &s->u.copy.src, TC_ROLE_READ);
		region_access(acc, &s->u.copy.dst, s->kind != TC_ST_ATOMIC_ADD
						? TC_ROLE_WRITE : rw);
		tc_expr_visit(s->u.copy.stage, &acc->visit);
		tc_expr_visit(s->u.copy.iter, &acc->visit);
		return TC_VISIT_OVER;
	case TC_ST_COPY_PLAN:
		/* Reads nothing yet: its ASYNC_COPYs do. */
		return TC_VISIT_OVER;
	case TC_ST_WGMMA_WAIT:
		/* The gemms in flight write acc until it returns. */
		acc->fn(acc->ctx, s->u.wait.acc, rw);
		return TC_VISIT_OVER;
	case TC_ST_PREFETCH:
		/* Reads no element: only its origins are evaluated. */
		for (int i = 0; s->u.copy.src.var &&
				i < s->u.copy.src.var->rank; i++)
			tc_expr_visit(s->u.copy.src.origin[i], &acc->visit);
		return TC_VISIT_OVER;
	case TC_ST_GEMM:
		region_access(acc, &s->u.gemm.a, TC_ROLE_READ);
		region_access(acc, &s->u.gemm.c, rw);
		tc_stmt_visit(s->u.gemm.issue, &acc->visit);
		/* B computed as it is loaded: what its element loop reads
		 * (B itself is no buffer). */
		if (s->u.gemm.b_from)
			tc_expr_visit(tc_gemm_b_assign(s)->u.assign.value,
				      &acc->visit);
		else
			region_access(acc, &s->u.gemm.b, TC_ROLE_READ);
		return TC_VISIT_OVER;
	case TC_ST_FILL:
		tc_expr_visit(s->u.fill.value, &acc->visit);
		region_access(acc, &s->u.fill.dst, TC_ROLE_WRITE);
		return TC_VISIT_OVER;
	case TC_ST_REDUCE:
		region_access(acc, &s->u.reduce.src, TC_ROLE_READ);
		region_access(acc, &s->u.reduce.dst, s->u.reduce.accumulate
						? rw : TC_ROLE_WRITE);
		return TC_VISIT_OVER;
	case TC_ST_REDUCE_ALL:
		region_access(acc, &s->u.reduce_all.src, TC_ROLE_READ);
		return TC_VISIT_OVER;
	case TC_ST_ARG_REDUCE:
		region_access(acc, &s->u.arg_reduce.src, TC_ROLE_READ);
		region_access(acc, &s->u.arg_reduce.dst, TC_ROLE_WRITE);
		region_access(acc, &s->u.arg_reduce.index, TC_ROLE_WRITE);
		return TC_VISIT_OVER;
	default:
		return TC_VISIT_INTO;
	}
}

static void
access_init(Access *acc, const TcStmt *skip, TcAccessFn fn, void *ctx)
{
	*acc = (Access){ fn, ctx, skip, { 0 } };
	acc->visit = (TcVisitor){ .expr = access_expr, .stmt = access_stmt,
				  .ctx = acc };
}

void
tc_expr_access(const TcExpr *e, TcAccessFn fn, void *ctx)
{
	Access acc;
	access_init(&acc, NULL, fn, ctx);
	tc_expr_visit(e, &acc.visit);
}

void
tc_stmt_access(const TcStmt *s, const TcStmt *skip, TcAccessFn fn, void *ctx)
{
	Access acc;
	access_init(&acc, skip, fn, ctx);
	tc_stmt_visit(s, &acc.visit);
}

/* How statements touch one var: the union of tc_stmt_access's reports. */
typedef struct Touch {
	const TcVar *var; /* the var asked about */
	int how;          /* TC_ROLE_READ | TC_ROLE_WRITE seen */
} Touch;

static void
touch(void *ctx, const TcVar *v, int how)
{
	Touch *t = ctx;
	if (v == t->var)
		t->how |= how;
}

int
tc_stmt_touches(const TcStmt *s, const TcStmt *skip, const TcVar *v)
{
	Touch t = { v, 0 };
	tc_stmt_access(s, skip, touch, &t);
	return t.how;
}

int
tc_expr_touches(const TcExpr *e, const TcVar *v)
{
	Touch t = { v, 0 };
	if (e)
		tc_expr_access(e, touch, &t);
	return t.how;
}

int
tc_stmt_own_touches(const TcStmt *s, const TcVar *v)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		return 0;
	case TC_ST_DECL:
		return tc_expr_touches(s->u.decl.init, v);
	case TC_ST_FOR:
		return tc_expr_touches(s->u.loop.begin, v) |
		       tc_expr_touches(s->u.loop.end, v) |
		       tc_expr_touches(s->u.loop.step, v) |
		       tc_expr_touches(s->u.loop.stages, v);
	case TC_ST_IF:
		return tc_expr_touches(s->u.cond.cond, v);
	default:
		return tc_stmt_touches(s, NULL, v);
	}
}

static TcVisit
find_var(void *ctx, const TcExpr *e)
{
	const TcVar **v = ctx;
	if (e->kind == TC_EX_VAR && e->u.var == *v) {
		*v = NULL;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

bool
tc_expr_mentions(const TcExpr *e, const TcVar *v)
{
	TcVisitor vis = { .expr = find_var, .ctx = &v };
	if (e)
		tc_expr_visit(e, &vis);
	return v == NULL;
}

static TcVisit
find_sms(void *ctx, const TcExpr *e)
{
	if (e->kind != TC_EX_SMS)
		return TC_VISIT_INTO;
	*(bool *)ctx = true;
	return TC_VISIT_STOP;
}

bool
tc_expr_has_sms(const TcExpr *e)
{
	bool found = false;
	TcVisitor vis = { .expr = find_sms, .ctx = &found };
	if (e)
		tc_expr_visit(e, &vis);
	return found;
}

bool
tc_stmt_mentions(const TcStmt *s, const TcVar *v)
{
	TcVisitor vis = { .expr = find_var, .ctx = &v };
	tc_stmt_visit(s, &vis);
	return v == NULL;
}

/* --- Tensor roles ------------------------------------------------------------- */

static void
mark_role(void *ctx, const TcVar *v, int how)
{
	int *role = ctx;
	if (v->kind == TC_VAR_TENSOR && v->param >= 0)
		role[v->param] |= how;
}

void
tc_tensor_roles(const TcKernel *k, int *role)
{
	tc_stmt_access(k->body, NULL, mark_role, role);
}

/* --- Transposing element nests (passes/cpu_transpose.c) --- */

/* The offset of index e from loop var v, e = v or v + o or o + v with o
 * naming neither v nor w; NULL if e is not of that form.  *zero: the
 * offset is nothing (e = v). */
static const TcExpr *
transpose_offset(const TcExpr *e, const TcVar *v, const TcVar *w, bool *zero)
{
	*zero = false;
	if (e->kind == TC_EX_VAR && e->u.var == v) {
		*zero = true;
		return e;
	}
	if (e->kind != TC_EX_BINARY || e->u.bin.op != TC_OP_ADD)
		return NULL;
	const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
	if (r->kind == TC_EX_VAR && r->u.var == v) {
		const TcExpr *t = l;
		l = r;
		r = t;
	}
	if (l->kind != TC_EX_VAR || l->u.var != v || tc_expr_mentions(r, v) ||
	    tc_expr_mentions(r, w))
		return NULL;
	return r;
}

/* Whether buffer v's elements are 32 bits in the CPU's frame. */
static bool
transpose_held_32(const TcVar *v)
{
	if (v->kind != TC_VAR_BUFFER || v->rank != 2 || v->stored || v->unstored)
		return false;
	switch (v->dtype) {
	case TC_DT_F32: case TC_DT_F16: case TC_DT_BF16:
	case TC_DT_FP8E4M3: case TC_DT_FP8E5M2: case TC_DT_I32:
		return true;
	default:
		return false;
	}
}

/* A parallel loop from 0 by 1 over a constant extent of whole 8s. */
static bool
transpose_whole_8s(const TcStmt *s, long long *n)
{
	long long b, st;
	return s->kind == TC_ST_FOR && s->u.loop.kind == TC_LOOP_PARALLEL &&
	       tc_expr_const(s->u.loop.begin, &b) && b == 0 &&
	       tc_expr_const(s->u.loop.step, &st) && st == 1 &&
	       tc_expr_const(s->u.loop.end, n) && *n > 0 && *n % 8 == 0;
}

static const TcStmt *
transpose_only(const TcStmt *block)
{
	return block->u.block.body.len == 1 ? block->u.block.body.items[0] : NULL;
}

/* The first element of a region: a load of v at offsets o[0], o[1]
 * (NULL: 0). */
static TcExpr *
transpose_corner(TcArena *a, const TcExpr *like, const TcExpr *const *o, bool *zero)
{
	TcExpr *e = tc_expr_clone(a, like);
	for (int d = 0; d < 2; d++)
		e->u.load.idx[d] = zero[d] ? tc_expr_int(a, 0, like->loc)
					   : tc_expr_clone(a, o[d]);
	return e;
}

bool
tc_transpose_form(TcArena *a, const TcStmt *outer, TcTranspose *t)
{
	long long cols, rows;
	if (!transpose_whole_8s(outer, &cols))
		return false;
	const TcStmt *inner = transpose_only(outer->u.loop.body);
	if (!inner || !transpose_whole_8s(inner, &rows))
		return false;
	const TcStmt *as = transpose_only(inner->u.loop.body);
	if (!as || as->kind != TC_ST_ASSIGN)
		return false;
	const TcExpr *dst = as->u.assign.dst, *src = as->u.assign.value;
	if (dst->kind != TC_EX_LOAD || src->kind != TC_EX_LOAD)
		return false;
	const TcVar *D = dst->u.load.var, *S = src->u.load.var;
	const TcVar *j = outer->u.loop.var, *i = inner->u.loop.var;
	if (D == S || !transpose_held_32(D) || !transpose_held_32(S) || D->dtype != S->dtype)
		return false;
	const TcExpr *od[2], *os[2];
	bool zd[2], zs[2];
	od[0] = transpose_offset(dst->u.load.idx[0], j, i, &zd[0]);
	od[1] = transpose_offset(dst->u.load.idx[1], i, j, &zd[1]);
	os[0] = transpose_offset(src->u.load.idx[0], i, j, &zs[0]);
	os[1] = transpose_offset(src->u.load.idx[1], j, i, &zs[1]);
	if (!od[0] || !od[1] || !os[0] || !os[1])
		return false;
	if (a) {
		t->dst = transpose_corner(a, dst, od, zd);
		t->src = transpose_corner(a, src, os, zs);
	}
	t->rows = rows;
	t->cols = cols;
	return true;
}
