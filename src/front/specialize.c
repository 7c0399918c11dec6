/*
 * specialize.c - bind tunables and check the shapes they fix.
 *
 * Input: a checked program and the -D bindings (or a tuning record's
 * values, which arrive the same way).  Output: every TUNABLE has `value`
 * set; buffer extents, parallel loop extents, stage counts and thread
 * counts are constants from here on (tc_expr_const succeeds on them).
 * Tunables stay VAR nodes so that later passes and the emitters can print
 * their names; dynamic tensor dims stay symbolic.
 */
#include "ir/tilec_int.h"

#include <limits.h>
#include <string.h>

static TcVar *
find_tunable(TcProgram *p, const char *name)
{
	for (int i = 0; i < p->tunables.len; i++) {
		TcVar *v = p->tunables.items[i];
		if (strcmp(v->name, name) == 0)
			return v;
	}
	return NULL;
}

/* Warn, at the tunable's declaration, when a binding from the command
 * line or a tuning record gives it a value its TILE_PARAM does not list
 * among its choices:
 * the program was written and tested for its choices, and a typo (-D
 * BLOCK_M=96 for 64) would otherwise pass unnoticed.  `tilec tune`'s own
 * bindings (--choices replaces the list) are not warned about. */
static void
outside_choices(const TcVar *v, TcLoc from, TcDiags *d)
{
	/* One value (TILE_PARAM(CAUSAL, 0)) is a constant with a default,
	 * not a list: any value may replace it. */
	if (v->nchoices == 0 ||
	    (v->nchoices == 1 && v->choices[0] == v->def_value) ||
	    (from.file && strcmp(from.file, "<tune>") == 0))
		return;
	for (int i = 0; i < v->nchoices; i++)
		if (v->choices[i] == v->value)
			return;
	TcBuf choices;
	tc_buf_init(&choices);
	for (int i = 0; i < v->nchoices; i++)
		tc_buf_printf(&choices, "%s%lld", i ? " " : "", v->choices[i]);
	bool cli = !from.file || strcmp(from.file, "<command line>") == 0;
	tc_diag(d, TC_WARNING, v->loc, "%s%s=%lld%s%s is not one of %s's "
		"choices (%s)", cli ? "-D " : "", v->name, v->value,
		cli ? "" : " from ", cli ? "" : from.file, v->name, choices.data);
	tc_buf_free(&choices);
}

static bool
bind_defines(TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	bool ok = true;
	for (int i = 0; i < p->tunables.len; i++) {
		TcVar *v = p->tunables.items[i];
		v->value = v->def_value;
		v->bound = false;
	}
	for (int i = 0; i < opt->ndefines; i++) {
		TcVar *v = find_tunable(p, opt->define_name[i]);
		if (!v) {
			TcBuf names;
			tc_buf_init(&names);
			for (int j = 0; j < p->tunables.len; j++)
				tc_buf_printf(&names, "%s%s", j ? ", " : "",
					      ((TcVar *)p->tunables.items[j])->name);
			tc_diag(d, TC_ERROR, opt->define_loc[i], "-D %s: no "
				"tunable of that name (%s)", opt->define_name[i],
				names.len ? names.data : "the program has none");
			tc_buf_free(&names);
			ok = false;
			continue;
		}
		/* The generated code makes each tunable an enum constant,
		 * and the language an int. */
		if (opt->define_value[i] < INT_MIN ||
		    opt->define_value[i] > INT_MAX) {
			tc_diag(d, TC_ERROR, opt->define_loc[i], "-D %s=%lld: "
				"a tunable is an int (%d .. %d)",
				opt->define_name[i], opt->define_value[i],
				INT_MIN, INT_MAX);
			ok = false;
			continue;
		}
		v->value = opt->define_value[i];
		v->bound = true;
		outside_choices(v, opt->define_loc[i], d);
	}
	return ok;
}

/* Report if e is not a constant in 1 .. max under the bound tunables;
 * why is what sets max.  The value goes to *out when out is not NULL. */
static bool
in_range(const TcExpr *e, const char *what, const char *name, long long max,
	 const char *why, long long *out, TcDiags *d)
{
	long long v;
	switch (tc_expr_eval(e, &v)) {
	case TC_EVAL_DYNAMIC:
		tc_diag(d, TC_ERROR, e->loc, "%s of '%s' must be a constant "
			"(literals and tunables)", what, name);
		return false;
	case TC_EVAL_OVERFLOW:
		tc_diag(d, TC_ERROR, e->loc, "%s of '%s' overflows: a step "
			"of it does not fit its C type (int, for tunables and "
			"literals)", what, name);
		return false;
	case TC_EVAL_CONST:
		break;
	}
	if (v <= 0) {
		tc_diag(d, TC_ERROR, e->loc, "%s of '%s' is %lld; it must be "
			"positive", what, name, v);
		return false;
	}
	if (v > max) {
		tc_diag(d, TC_ERROR, e->loc, "%s of '%s' is %lld; %s allows at "
			"most %lld", what, name, v, why, max);
		return false;
	}
	if (out)
		*out = v;
	return true;
}

static bool
positive(const TcExpr *e, const char *what, const char *name, TcDiags *d)
{
	return in_range(e, what, name, INT_MAX, "an int", NULL, d);
}

/* A buffer's extents, each positive, and its element count within an int:
 * generated code indexes buffers with int, and every size computed from
 * the count later (bytes, stages) stays far from overflow. */
static bool
buffer_extents(const TcVar *v, TcDiags *d)
{
	long long count = 1, n;
	for (int i = 0; i < v->rank; i++) {
		if (!in_range(v->shape[i], "extent", v->name, INT_MAX, "an int",
			      &n, d))
			return false;
		if (__builtin_mul_overflow(count, n, &count) || count > INT_MAX) {
			tc_diag(d, TC_ERROR, v->loc, "buffer '%s' has more than "
				"%d elements", v->name, INT_MAX);
			return false;
		}
	}
	return true;
}

/* A tensor's extents that are constant once the tunables are bound: none
 * negative (the C declaration would be an array of negative size), none
 * past what their C type holds. */
static bool
tensor_extents(const TcVar *v, TcDiags *d)
{
	for (int i = 0; i < v->rank; i++) {
		long long n;
		switch (tc_expr_eval(v->shape[i], &n)) {
		case TC_EVAL_DYNAMIC:
			break;
		case TC_EVAL_OVERFLOW:
			tc_diag(d, TC_ERROR, v->shape[i]->loc, "extent of dim "
				"%d of tensor '%s' overflows its C type", i,
				v->name);
			return false;
		case TC_EVAL_CONST:
			if (n < 0) {
				tc_diag(d, TC_ERROR, v->shape[i]->loc,
					"extent of dim %d of tensor '%s' is "
					"%lld; it must not be negative", i,
					v->name, n);
				return false;
			}
			break;
		}
	}
	return true;
}

static bool
stmt_consts(TcStmt *s, TcDiags *d)
{
	bool ok = true;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			ok &= stmt_consts(s->u.block.body.items[i], d);
		return ok;
	case TC_ST_DECL:
		if (s->u.decl.var->kind == TC_VAR_BUFFER)
			ok &= buffer_extents(s->u.decl.var, d);
		return ok;
	case TC_ST_FOR:
		if (s->u.loop.kind == TC_LOOP_PARALLEL) {
			/* min(C, e): C is the extent the compiler plans
			 * for, e is known at run time. */
			long long c;
			const TcExpr *end = s->u.loop.end;
			const TcExpr *rest = tc_parallel_bound(end, &c);
			if (rest)
				end = end->u.call.args[end->u.call.args[0] == rest];
			if (tc_expr_eval(end, &c) == TC_EVAL_DYNAMIC) {
				tc_diag(d, TC_ERROR, end->loc, "extent of '%s' "
					"must be a constant (literals and "
					"tunables), or min(C, n) with C a "
					"constant when n is known only at run "
					"time", s->u.loop.var->name);
				ok = false;
			} else {
				ok &= positive(end, "extent",
					       s->u.loop.var->name, d);
			}
		}
		if (s->u.loop.stages)
			ok &= in_range(s->u.loop.stages, "stage count",
				       s->u.loop.var->name, TC_MAX_STAGES,
				       "tilec", NULL, d);
		return ok & stmt_consts(s->u.loop.body, d);
	case TC_ST_IF:
		ok &= stmt_consts(s->u.cond.then, d);
		if (s->u.cond.els)
			ok &= stmt_consts(s->u.cond.els, d);
		return ok;
	default:
		return true;
	}
}

bool
tc_specialize(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	if (!bind_defines(p, opt, d))
		return false;
	bool ok = true;
	const TcTarget *t = &opt->target;
	char *why = tc_fmt(a, "%s/%s", t->name, t->arch);
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		if (k->threads)
			ok &= in_range(k->threads, "thread count", k->name,
				       t->max_threads, why, NULL, d);
		/* Groups of more rows than a grid has (65535 on every GPU
		 * target) mean nothing, and the printed group size,
		 * rows * grid x, must not wrap. */
		if (k->rasterize)
			ok &= in_range(k->rasterize, "row count", "tile_rasterize",
				       65535, "a grid's y dim", NULL, d);
		for (int j = 0; j < k->params.len; j++) {
			const TcVar *v = k->params.items[j];
			if (v->kind == TC_VAR_TENSOR)
				ok &= tensor_extents(v, d);
		}
		ok &= stmt_consts(k->body, d);
	}
	return ok;
}
