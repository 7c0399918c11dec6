/*
 * half_form.c - the form of a loop whose values the CUDA printer computes
 * two at a time in 16-bit arithmetic (passes/half_pairs.c decides where;
 * the verifier and the printer read the form back).
 *
 * tc_half_pairs_form takes the one assignment of a loop in runs apart:
 * the value rounded once to f16 or bf16, of an integer expression linear
 * in the run's element (4- or 8-bit) and a factor of the destination's
 * type, with bounds on what is added that keep every step exact in that
 * type (tilec_int.h says the form; passes/half_pairs.c says why it gives
 * the program's bits).  Depends on the IR only.
 */
#include "ir/tilec_int.h"

#include <math.h>

/* The largest magnitude of the integer added to the run's element (for
 * i4 and u8 into f16): 1032 + add (the bias of the low nibbles less it)
 * stays an integer of at most 2048, exact in f16, and so does every
 * partial result. */
enum { MAX_ADD = 1000 };

typedef struct Form {
	TcArena *a;
	const TcVar *j;
	const TcExpr *src; /* the integer load along the run, once found */
	const char *why;
} Form;

/* The magnitude bound of an integer element of type t, or -1. */
static long long
int_bound(TcDtype t)
{
	switch (t) {
	case TC_DT_I4:
		return 8;
	case TC_DT_I8:
		return 128;
	case TC_DT_U8:
		return 255;
	case TC_DT_BOOL:
		return 1;
	default:
		return -1;
	}
}

/* The integers an element of a run may be. */
bool
tc_half_pairs_source(TcDtype t)
{
	return t == TC_DT_I4 || t == TC_DT_I8 || t == TC_DT_U8;
}

static bool
fail(Form *f, const char *why)
{
	if (!f->why)
		f->why = why;
	return false;
}

typedef bool (*Part)(Form *f, const TcExpr *e, int *coef,
		     long long *bound);

/* A sum or difference of two parts of kind `part`. */
static bool
sum_part(Form *f, const TcExpr *e, int *coef, long long *bound, Part part)
{
	int cl, cr;
	long long bl, br;
	if (!part(f, e->u.bin.lhs, &cl, &bl) || !part(f, e->u.bin.rhs, &cr, &br))
		return false;
	*coef = e->u.bin.op == TC_OP_ADD ? cl + cr : cl - cr;
	*bound = bl + br;
	return true;
}

/* Integer expression e: linear in the run's element with coefficient
 * *coef, every other term bounded by *bound in total: sums of 8- and
 * 4-bit elements, constants and remainders by constants; no product,
 * quotient or shift. */
static bool float_part(Form *f, const TcExpr *e, int *coef,
		       long long *bound);

static bool
int_part(Form *f, const TcExpr *e, int *coef, long long *bound)
{
	switch (e->kind) {
	case TC_EX_INT:
		*coef = 0;
		*bound = e->u.ival < 0 ? -e->u.ival : e->u.ival;
		return *bound <= MAX_ADD || fail(f, "it adds a constant past 1000");
	case TC_EX_LOAD: {
		const TcVar *v = e->u.load.var;
		int r = v->rank;
		if (tc_half_pairs_source(v->dtype) && r > 0 &&
		    e->u.load.idx[r - 1]->kind == TC_EX_VAR &&
		    e->u.load.idx[r - 1]->u.var == f->j) {
			for (int i = 0; i < r - 1; i++)
				if (tc_expr_mentions(e->u.load.idx[i], f->j))
					return fail(f, "its element's row "
						    "moves along the run");
			if (f->src && !tc_expr_equal(f->src, e))
				return fail(f, "it reads two elements "
					    "along the run");
			f->src = e;
			*coef = 1;
			*bound = 0;
			return true;
		}
		long long b = int_bound(v->dtype);
		if (b < 0)
			return fail(f, tc_fmt(f->a, "it reads '%s' (%s), not an "
					      "8- or 4-bit integer",
					      tc_var_shown(v),
					      tc_dtype_name(v->dtype)));
		for (int i = 0; i < r; i++)
			if (tc_expr_mentions(e->u.load.idx[i], f->j))
				return fail(f, tc_fmt(f->a, "'%s' moves along "
						      "the run", tc_var_shown(v)));
		*coef = 0;
		*bound = b;
		return true;
	}
	case TC_EX_BINARY:
		/* x % C, x the same for every element: below |C|. */
		if (e->u.bin.op == TC_OP_REM && e->u.bin.rhs->kind == TC_EX_INT &&
		    e->u.bin.rhs->u.ival != 0 &&
		    !tc_expr_mentions(e->u.bin.lhs, f->j)) {
			long long c = e->u.bin.rhs->u.ival;
			*coef = 0;
			*bound = (c < 0 ? -c : c) - 1;
			return *bound <= MAX_ADD ||
			       fail(f, "it adds a remainder that may pass 1000");
		}
		if (e->u.bin.op == TC_OP_ADD || e->u.bin.op == TC_OP_SUB)
			return sum_part(f, e, coef, bound, int_part);
		break;
	case TC_EX_CAST:
		/* Widening only: a narrowing cast wraps. */
		if ((e->dtype != TC_DT_I32 && e->dtype != TC_DT_I64) ||
		    !tc_dtype_is_int(e->u.cast.arg->dtype))
			return fail(f, "it converts between integer types that "
				    "can wrap");
		return int_part(f, e->u.cast.arg, coef, bound);
	case TC_EX_UNARY:
		if (e->u.un.op != TC_UOP_NEG)
			break;
		if (!int_part(f, e->u.un.arg, coef, bound))
			return false;
		*coef = -*coef;
		return true;
	default:
		break;
	}
	return fail(f, "its integer part is not a sum of integer elements "
		    "and constants");
}

/* The same for an f32 expression of integers (I): conversions of integer
 * expressions, sums and differences of them, integral constants. */
static bool
float_part(Form *f, const TcExpr *e, int *coef, long long *bound)
{
	if (e->dtype != TC_DT_F32)
		return fail(f, "it computes in another type than f32");
	switch (e->kind) {
	case TC_EX_CAST: {
		const TcExpr *arg = e->u.cast.arg;
		if (tc_dtype_is_int(arg->dtype))
			return int_part(f, arg, coef, bound);
		if (arg->kind == TC_EX_LOAD)
			return fail(f, tc_fmt(f->a, "it adds '%s' (%s), not an "
					      "8- or 4-bit integer",
					      tc_var_shown(arg->u.load.var),
					      tc_dtype_name(arg->dtype)));
		return fail(f, tc_fmt(f->a, "it adds a value of type %s, "
				      "not an integer", tc_dtype_name(arg->dtype)));
	}
	case TC_EX_FLOAT:
		if (e->u.fval != (double)(long long)e->u.fval ||
		    e->u.fval > MAX_ADD || e->u.fval < -MAX_ADD)
			break;
		*coef = 0;
		*bound = e->u.fval < 0 ? -(long long)e->u.fval :
			 (long long)e->u.fval;
		return true;
	case TC_EX_UNARY:
		if (e->u.un.op != TC_UOP_NEG)
			break;
		if (!float_part(f, e->u.un.arg, coef, bound))
			return false;
		*coef = -*coef;
		return true;
	case TC_EX_BINARY:
		if (e->u.bin.op == TC_OP_ADD || e->u.bin.op == TC_OP_SUB)
			return sum_part(f, e, coef, bound, float_part);
		break;
	default:
		break;
	}
	return fail(f, "it is not an integer element plus integers, times a "
		    "factor");
}

/* e with the run's element `src` taken out (as 0), folded: NULL where
 * nothing is left. */
static TcExpr *
drop_src(TcArena *a, const TcExpr *e, const TcExpr *src)
{
	if (e == src)
		return NULL;
	switch (e->kind) {
	case TC_EX_CAST: {
		TcExpr *arg = drop_src(a, e->u.cast.arg, src);
		if (!arg)
			return NULL;
		TcExpr *c = tc_expr_new(a, TC_EX_CAST, e->dtype, e->loc);
		c->u.cast.arg = arg;
		return c;
	}
	case TC_EX_UNARY: {
		TcExpr *arg = drop_src(a, e->u.un.arg, src);
		return arg ? tc_expr_unary(a, e->u.un.op, arg, e->loc) : NULL;
	}
	case TC_EX_BINARY: {
		TcExpr *l = drop_src(a, e->u.bin.lhs, src);
		TcExpr *r = drop_src(a, e->u.bin.rhs, src);
		if (!l && !r)
			return NULL;
		if (!r)
			return l;
		if (!l)
			return e->u.bin.op == TC_OP_SUB ?
			       tc_expr_unary(a, TC_UOP_NEG, r, e->loc) : r;
		TcExpr *b = tc_expr_binary(a, e->u.bin.op, l, r, e->loc);
		b->dtype = e->dtype;
		return b;
	}
	default:
		return tc_expr_clone(a, e);
	}
}

/* Whether constant v is a value of t (f16 or bf16): finite, its
 * significand of 11 (8) bits at most above the smallest normal, a
 * multiple of the smallest subnormal below. */
static bool
half_exact(double v, TcDtype t)
{
	bool f16 = t == TC_DT_F16;
	double tiny = f16 ? 0x1p-14 : 0x1p-126, quantum = f16 ? 0x1p24 : 0x1p133;
	if (v < 0)
		v = -v;
	if (!(v <= (f16 ? 65504.0 : 0x1.fep127)))
		return false;
	if (v < tiny)
		return v * quantum == (double)(long long)(v * quantum);
	int e;
	double m = frexp(v, &e), bits = f16 ? 2048.0 : 256.0;
	return m * bits == (double)(long long)(m * bits);
}

/* Whether e is the same for every element of the run: it names neither
 * j nor a buffer element at an index that does. */
static bool
invariant(const TcExpr *e, const TcVar *j)
{
	return !tc_expr_mentions(e, j);
}

bool
tc_half_pairs_form(TcArena *a, const TcStmt *as, const TcVar *j, int run,
		   TcHalfPairs *hp, const char **why)
{
	Form f = { .a = a, .j = j };
	const TcExpr *dst = as->kind == TC_ST_ASSIGN ? as->u.assign.dst : NULL;
	const TcExpr *v = dst ? as->u.assign.value : NULL;
	*why = NULL;
	TcDtype t = dst && dst->kind == TC_EX_LOAD ? dst->u.load.var->dtype :
		    TC_DT_NONE;
	if (t != TC_DT_F16 && t != TC_DT_BF16) {
		*why = "its destination is not f16 or bf16";
		return false;
	}
	/* The store's rounding, then I * F, F * I or I. */
	if (v->kind != TC_EX_CAST || v->dtype != t) {
		*why = tc_fmt(a, "its value is not one rounding of an f32 to %s",
			      tc_dtype_name(t));
		return false;
	}
	const TcExpr *x = v->u.cast.arg, *ix = x, *fx = NULL;
	if (x->kind == TC_EX_BINARY && x->u.bin.op == TC_OP_MUL) {
		for (int side = 0; side < 2 && !fx; side++) {
			const TcExpr *m = side ? x->u.bin.lhs : x->u.bin.rhs;
			if (m->kind == TC_EX_CAST && m->dtype == TC_DT_F32 &&
			    m->u.cast.arg->dtype == t &&
			    invariant(m->u.cast.arg, j))
				fx = m->u.cast.arg;
			else if (m->kind == TC_EX_FLOAT && half_exact(m->u.fval, t))
				fx = m;
			if (fx)
				ix = side ? x->u.bin.rhs : x->u.bin.lhs;
		}
		if (!fx) {
			*why = tc_fmt(a, "its product's factors are not an "
				      "integer and a factor of type %s the "
				      "run does not change", tc_dtype_name(t));
			return false;
		}
	}
	int coef;
	long long bound;
	bool ok = tc_dtype_is_int(ix->dtype) ? int_part(&f, ix, &coef, &bound) :
		  float_part(&f, ix, &coef, &bound);
	if (!ok) {
		*why = f.why;
		return false;
	}
	if (!f.src || coef != 1) {
		*why = f.src ? "its element along the run is not added once" :
		       "it reads no 4- or 8-bit integer along the run";
		return false;
	}
	/* The bias less the integer stays an integer the type holds
	 * exactly (int_pairs' bias: 1032 for i4 into f16, 1152 for i8, 1024
	 * for u8, 136 for i4 into bf16), and so does every partial sum. */
	TcDtype st = f.src->u.load.var->dtype;
	long long max_add = t == TC_DT_BF16 ? 120 : st == TC_DT_I8 ? 890 : MAX_ADD;
	if (t == TC_DT_BF16 && st != TC_DT_I4) {
		*why = tc_fmt(a, "bf16 holds no %s element under one exponent",
			      tc_dtype_name(st));
		return false;
	}
	if (run % (st == TC_DT_I4 ? 8 : 4) != 0) {
		*why = tc_fmt(a, "its runs of %d are not whole 32-bit words of "
			      "%s", run, tc_dtype_name(st));
		return false;
	}
	if (bound > max_add) {
		*why = tc_fmt(a, "the integers it adds may pass %lld", max_add);
		return false;
	}
	if (!tc_run_reads_whole(f.src->u.load.var, run)) {
		*why = tc_fmt(a, "'%s' is not read along the run as one vector",
			      tc_var_shown(f.src->u.load.var));
		return false;
	}
	hp->src = f.src;
	hp->add = drop_src(a, ix, f.src);
	if (!hp->add)
		hp->add = tc_expr_float(a, 0, TC_DT_F32, ix->loc);
	hp->mul = fx;
	return true;
}
