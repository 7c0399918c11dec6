/*
 * verify.c - the IR checker run between passes.
 *
 * Input: a program at any stage of the pipeline and the name of the pass
 * that produced it.  Output: one diagnostic per broken invariant,
 *
 *     file:line:col: error: internal error: IR invalid after PASS: ...
 *
 * at the offending node, and the count of them.  The program is not
 * changed.  A violation is a translator bug, never a user error: passes
 * must leave the IR in the shape docs/ir.md describes.  The checks:
 *
 *   - every node's kind and union arm are valid, no child is NULL;
 *   - every var used belongs to the kernel (kernel->vars, or the program's
 *     tunables) and is in scope: params, tunables and block indices
 *     everywhere, LOCAL and BUFFER vars after their DECL up to the end of
 *     the enclosing BLOCK, LOOP vars inside their loop only;
 *   - loads have one index per dim of their var, of an integer type;
 *   - regions: 1 <= ndims <= rank, dims distinct and within the rank, an
 *     origin for every dim, whole regions are whole buffers spanning every
 *     dim in order; copies have a whole buffer on one side;
 *   - GEMM operands are whole rank-2 buffers and c is a fragment; REDUCE's
 *     dim is within src's tile rank and dst's rank is one less;
 *   - expression dtypes agree with C's conversions (tc_binop_type),
 *     literals are int, long long, float or double;
 *   - the bounds pass marked every region of a kernel or none;
 *   - loop bodies are BLOCKs, parallel and pipelined loops start at 0 with
 *     step 1, pipelined loops have a stage count;
 *   - GPU schedule marks: a parallel loop follows a dim of an MMA fragment
 *     in scope; a pipelined loop's async copies are its leading COPYs.
 *
 * The checker allocates its scope tables per kernel and frees them before
 * returning; it keeps no state between calls.
 */
#include "ir/tilec_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Which var kinds an expression may name, as bits (1 << TcVarKind). */
#define KIND(k) (1u << TC_VAR_##k)
#define BODY_VARS (KIND(SCALAR) | KIND(TUNABLE) | KIND(LOOP) | KIND(BLOCK) | \
		   KIND(LOCAL))
#define HEADER_VARS (KIND(SCALAR) | KIND(TUNABLE))

typedef struct Verifier {
	const TcProgram *prog; /* the program being checked */
	const TcKernel *kernel; /* the kernel being checked, or NULL */
	const char *pass;      /* the pass whose output this is */
	TcDiags *d;            /* where violations go */
	int errors;            /* violations found */
	/* Per kernel var (by index): nonzero while it is in scope. */
	unsigned char *in_scope;
	/* The LOCAL and BUFFER vars declared in the open blocks, innermost
	 * last, so each block can take its own back out of scope. */
	const TcVar **decls;
	int ndecls;            /* entries used in decls */
	/* The kernel's regions so far: 1 marked by the bounds pass, -1
	 * not, 0 none seen. */
	int bounded;
	/* Inside a ROLES statement's producer (one thread) or consumer
	 * block: the statement, else NULL. */
	const TcStmt *producer, *consumer;
	/* Checking a persistent kernel's grid, the one place the device's
	 * SM count (SMS) may appear. */
	bool sms;
	/* Checking the loops of a gemm's computed B (gemm.b_from), whose
	 * column loop goes in runs of 8 without loop.run. */
	bool b_from;
} Verifier;

static void
fail(Verifier *v, TcLoc loc, const char *fmt, ...) TC_PRINTF(3, 4);

static void
fail(Verifier *v, TcLoc loc, const char *fmt, ...)
{
	TcBuf msg;
	va_list ap;
	tc_buf_init(&msg);
	va_start(ap, fmt);
	tc_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	tc_diag(v->d, TC_ERROR, loc, "internal error: IR invalid after %s: %s",
		v->pass, msg.data ? msg.data : "");
	tc_buf_free(&msg);
	v->errors++;
}

/* The node's own location, or its statement's when it has none. */
static TcLoc
loc_or(TcLoc loc, TcLoc fallback)
{
	return loc.line > 0 ? loc : fallback;
}

static const char *
name_of(const TcVar *var)
{
	return var->name ? var->name : "<unnamed>";
}

/* Table names that tolerate the out-of-range values broken IR may hold. */
static const char *
dt(TcDtype t)
{
	return t >= 0 && t < TC_DT_COUNT ? tc_dtype_name(t) : "<bad dtype>";
}

static const char *
vk(TcVarKind k)
{
	return k >= 0 && k < TC_VAR_COUNT ? tc_varkind_name(k) : "<bad var>";
}

static const char *
sc(TcScope s)
{
	return s >= 0 && s < TC_SCOPE_COUNT ? tc_scope_name(s) : "<bad scope>";
}

static bool
dtype_valid(TcDtype t)
{
	return t > TC_DT_NONE && t < TC_DT_COUNT;
}

static bool
is_tunable_of(const TcProgram *p, const TcVar *var)
{
	for (int i = 0; i < p->tunables.len; i++)
		if (p->tunables.items[i] == var)
			return true;
	return false;
}

/* Whether var is one of this program's names (a tunable, or a var of the
 * kernel being checked); reports it if not. */
static bool
check_owned(Verifier *v, const TcVar *var, TcLoc loc)
{
	if (var->kind == TC_VAR_TUNABLE) {
		if (is_tunable_of(v->prog, var))
			return true;
		fail(v, loc, "tunable '%s' is not one of the program's",
		     name_of(var));
		return false;
	}
	const TcKernel *k = v->kernel;
	if (!k || var->index < 0 || var->index >= k->vars.len ||
	    k->vars.items[var->index] != var) {
		fail(v, loc, "%s '%s' does not belong to kernel '%s'",
		     vk(var->kind), name_of(var),
		     k && k->name ? k->name : "<none>");
		return false;
	}
	return true;
}

/* Whether var may be used here: owned, and in scope if it is scoped. */
static bool
check_use(Verifier *v, const TcVar *var, TcLoc loc)
{
	if (var->kind < 0 || var->kind >= TC_VAR_COUNT) {
		fail(v, loc, "var of invalid kind %d", (int)var->kind);
		return false;
	}
	if (!check_owned(v, var, loc))
		return false;
	if (var->kind == TC_VAR_LOCAL || var->kind == TC_VAR_BUFFER ||
	    var->kind == TC_VAR_LOOP) {
		if (!v->in_scope || !v->in_scope[var->index]) {
			fail(v, loc, "%s '%s' used out of its scope",
			     vk(var->kind), name_of(var));
			return false;
		}
	}
	return true;
}

/* The dtype tc_expr_unary gives. */
static TcDtype
unary_type(TcUnop op, TcDtype t)
{
	if (op == TC_UOP_NOT)
		return TC_DT_I32;
	if (tc_dtype_is_int(t) && t != TC_DT_I64)
		return TC_DT_I32;
	if (t == TC_DT_F16 || t == TC_DT_BF16)
		return TC_DT_F32;
	return t;
}

static void check_expr(Verifier *v, const TcExpr *e, unsigned kinds,
		       bool loads, TcLoc at);

/* An index or extent: present, well formed, of an integer type. */
static void
check_index(Verifier *v, const TcExpr *e, unsigned kinds, bool loads,
	    TcLoc at, const char *what)
{
	if (!e) {
		fail(v, at, "%s is NULL", what);
		return;
	}
	check_expr(v, e, kinds, loads, at);
	if (dtype_valid(e->dtype) && !tc_dtype_is_int(e->dtype))
		fail(v, loc_or(e->loc, at), "%s has type %s, not an integer",
		     what, dt(e->dtype));
}

static void
check_load(Verifier *v, const TcExpr *e, unsigned kinds, TcLoc at)
{
	const TcVar *var = e->u.load.var;
	if (!var) {
		fail(v, at, "load of a NULL var");
		return;
	}
	if (var->kind != TC_VAR_TENSOR && var->kind != TC_VAR_BUFFER) {
		fail(v, at, "load of %s '%s', not a tensor or buffer",
		     vk(var->kind), name_of(var));
		return;
	}
	if (!check_use(v, var, at))
		return;
	if (var->rank < 1 || var->rank > TC_MAX_RANK) {
		fail(v, at, "load of '%s' of rank %d", name_of(var), var->rank);
		return;
	}
	int n = 0;
	while (n < TC_MAX_RANK && e->u.load.idx[n])
		n++;
	int more = n;
	while (more < TC_MAX_RANK && !e->u.load.idx[more])
		more++;
	if (n != var->rank || more != TC_MAX_RANK) {
		int given = 0;
		for (int i = 0; i < TC_MAX_RANK; i++)
			given += e->u.load.idx[i] != NULL;
		fail(v, at, "load of '%s' has %d indices for rank %d",
		     name_of(var), given, var->rank);
		return;
	}
	for (int i = 0; i < var->rank; i++)
		check_index(v, e->u.load.idx[i], kinds, true, at, "load index");
	if (e->dtype != var->dtype)
		fail(v, at, "load of %s '%s' typed %s", dt(var->dtype),
		     name_of(var), dt(e->dtype));
}

/* Check e; `kinds` are the var kinds it may name, `loads` whether it may
 * read tensors and buffers; `at` is the enclosing statement's location. */
static void
check_expr(Verifier *v, const TcExpr *e, unsigned kinds, bool loads,
	   TcLoc at)
{
	if (!e) {
		fail(v, at, "NULL expression");
		return;
	}
	at = loc_or(e->loc, at);
	if (e->kind < 0 || e->kind >= TC_EX_COUNT) {
		fail(v, at, "expression of invalid kind %d", (int)e->kind);
		return;
	}
	const char *kind = tc_exprkind_name(e->kind);
	if (!dtype_valid(e->dtype)) {
		fail(v, at, "%s expression without a valid dtype (%d)", kind,
		     (int)e->dtype);
		return;
	}
	switch (e->kind) {
	/* Literals are C's: int or long long, float or double (what the
	 * printer's suffixes say, so the IR reader gets them back). */
	case TC_EX_INT:
		if (e->dtype != TC_DT_I32 && e->dtype != TC_DT_I64)
			fail(v, at, "integer literal typed %s",
			     dt(e->dtype));
		break;
	case TC_EX_FLOAT:
		if (e->dtype != TC_DT_F32 && e->dtype != TC_DT_F64)
			fail(v, at, "float literal typed %s",
			     dt(e->dtype));
		break;
	case TC_EX_VAR: {
		const TcVar *var = e->u.var;
		if (!var) {
			fail(v, at, "reference to a NULL var");
			break;
		}
		if (var->kind < 0 || var->kind >= TC_VAR_COUNT ||
		    !(kinds & (1u << var->kind))) {
			fail(v, at, "%s '%s' cannot be named here",
			     vk(var->kind), name_of(var));
			break;
		}
		if (check_use(v, var, at) && e->dtype != var->dtype)
			fail(v, at, "reference to %s '%s' typed %s",
			     dt(var->dtype), name_of(var),
			     dt(e->dtype));
		break;
	}
	case TC_EX_BINARY: {
		const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
		if (e->u.bin.op < 0 || e->u.bin.op >= TC_OP_COUNT) {
			fail(v, at, "binary operator %d", (int)e->u.bin.op);
			break;
		}
		if (!l || !r) {
			fail(v, at, "operand of '%s' is NULL",
			     tc_binop_name(e->u.bin.op));
			break;
		}
		check_expr(v, l, kinds, loads, at);
		check_expr(v, r, kinds, loads, at);
		if (!dtype_valid(l->dtype) || !dtype_valid(r->dtype))
			break;
		TcDtype want = tc_binop_type(e->u.bin.op, l->dtype, r->dtype);
		if (e->dtype != want)
			fail(v, at, "%s %s %s typed %s, not %s",
			     dt(l->dtype),
			     tc_binop_name(e->u.bin.op),
			     dt(r->dtype), dt(e->dtype),
			     dt(want));
		break;
	}
	case TC_EX_UNARY: {
		const TcExpr *arg = e->u.un.arg;
		if (e->u.un.op < 0 || e->u.un.op >= TC_UOP_COUNT) {
			fail(v, at, "unary operator %d", (int)e->u.un.op);
			break;
		}
		if (!arg) {
			fail(v, at, "operand of unary '%s' is NULL",
			     tc_unop_name(e->u.un.op));
			break;
		}
		check_expr(v, arg, kinds, loads, at);
		if (!dtype_valid(arg->dtype))
			break;
		TcDtype want = unary_type(e->u.un.op, arg->dtype);
		if (e->dtype != want)
			fail(v, at, "%s%s typed %s, not %s",
			     tc_unop_name(e->u.un.op), dt(arg->dtype),
			     dt(e->dtype), dt(want));
		break;
	}
	case TC_EX_SELECT:
		if (!e->u.sel.cond || !e->u.sel.then || !e->u.sel.els) {
			fail(v, at, "select with a NULL operand");
			break;
		}
		check_expr(v, e->u.sel.cond, kinds, loads, at);
		check_expr(v, e->u.sel.then, kinds, loads, at);
		check_expr(v, e->u.sel.els, kinds, loads, at);
		break;
	case TC_EX_CALL: {
		TcFunc fn = e->u.call.fn;
		if (fn < 0 || fn >= TC_FN_COUNT) {
			fail(v, at, "call of function %d", (int)fn);
			break;
		}
		if (e->u.call.nargs != tc_func_arity(fn) ||
		    (e->u.call.nargs > 0 && !e->u.call.args)) {
			fail(v, at, "call of %s with %d arguments, not %d",
			     tc_func_name(fn), e->u.call.nargs,
			     tc_func_arity(fn));
			break;
		}
		for (int i = 0; i < e->u.call.nargs; i++)
			check_expr(v, e->u.call.args[i], kinds, loads, at);
		bool is_float = tc_dtype_is_float(tc_func_result_type(fn));
		if (is_float ? !tc_dtype_is_float(e->dtype) :
			       !tc_dtype_is_int(e->dtype))
			fail(v, at, "%s() typed %s", tc_func_name(fn),
			     dt(e->dtype));
		break;
	}
	case TC_EX_CAST:
		check_expr(v, e->u.cast.arg, kinds, loads, at);
		break;
	case TC_EX_LOAD:
		if (!loads) {
			fail(v, at, "load of '%s' where only scalars may appear",
			     e->u.load.var ? name_of(e->u.load.var) : "<null>");
			break;
		}
		check_load(v, e, kinds, at);
		break;
	case TC_EX_SMS:
		if (!v->sms)
			fail(v, at, "the device's SM count outside a persistent "
			     "kernel's grid");
		if (e->dtype != TC_DT_I32)
			fail(v, at, "the device's SM count typed %s",
			     dt(e->dtype));
		break;
	default:
		tc_unreachable();
	}
}

/* The rank of the tile a region spans. */
static int
tile_rank(const TcRegion *r)
{
	return r->ndims;
}

/* Check one tile operand; false if it is too broken to look further. */
static bool
check_region(Verifier *v, const TcRegion *r, TcLoc at, const char *what)
{
	at = loc_or(r->loc, at);
	const TcVar *var = r->var;
	if (!var) {
		fail(v, at, "%s region of a NULL var", what);
		return false;
	}
	/* The bounds pass marks every region of a kernel or none. */
	int bounded = r->bounded ? 1 : -1;
	if (v->bounded && v->bounded != bounded)
		fail(v, at, "%s region of '%s' %s by the bounds pass, another "
		     "region of the kernel %s", what, name_of(var),
		     r->bounded ? "marked" : "not marked",
		     r->bounded ? "not" : "marked");
	v->bounded = bounded;
	if (var->kind != TC_VAR_TENSOR && var->kind != TC_VAR_BUFFER) {
		fail(v, at, "%s region of %s '%s', not a tensor or buffer",
		     what, vk(var->kind), name_of(var));
		return false;
	}
	if (!check_use(v, var, at))
		return false;
	if (var->rank < 1 || var->rank > TC_MAX_RANK) {
		fail(v, at, "%s region of '%s' of rank %d", what, name_of(var),
		     var->rank);
		return false;
	}
	if (r->whole && var->kind != TC_VAR_BUFFER) {
		fail(v, at, "%s region: whole tensor '%s' (only buffers are "
		     "named whole)", what, name_of(var));
		return false;
	}
	if (r->ndims < 1 || r->ndims > var->rank) {
		fail(v, at, "%s region of '%s' spans %d dims of %d", what,
		     name_of(var), r->ndims, var->rank);
		return false;
	}
	if (r->bounded && (r->nonneg >> var->rank) != 0)
		fail(v, at, "%s region of '%s': origin bits past its rank", what,
		     name_of(var));
	for (int d = 0; r->bounded && d < var->rank; d++) {
		long long o;
		if ((r->nonneg >> d & 1) && r->origin[d] &&
		    tc_expr_const(r->origin[d], &o) && o < 0)
			fail(v, at, "%s region of '%s': origin %lld along dim "
			     "%d marked non-negative", what, name_of(var), o, d);
	}
	bool ok = true;
	unsigned seen = 0;
	for (int i = 0; i < r->ndims; i++) {
		int dim = r->dims[i];
		if (dim < 0 || dim >= var->rank) {
			fail(v, at, "%s region of '%s': dim %d out of rank %d",
			     what, name_of(var), dim, var->rank);
			ok = false;
		} else if (seen & (1u << dim)) {
			fail(v, at, "%s region of '%s': dim %d listed twice",
			     what, name_of(var), dim);
			ok = false;
		} else {
			seen |= 1u << dim;
		}
		if (r->whole && dim != i) {
			fail(v, at, "%s region: whole '%s' with dims out of "
			     "order", what, name_of(var));
			ok = false;
		}
	}
	if (r->whole && r->ndims != var->rank) {
		fail(v, at, "%s region: whole '%s' spans %d of its %d dims",
		     what, name_of(var), r->ndims, var->rank);
		ok = false;
	}
	for (int i = 0; i < var->rank; i++)
		check_index(v, r->origin[i], BODY_VARS, true, at,
			    "region origin");
	return ok;
}

/* A whole buffer of the given scope (TC_SCOPE_NONE: any) and rank (0:
 * any), as gemm and fill need. */
static bool
check_whole(Verifier *v, const TcRegion *r, TcLoc at, const char *what,
	    TcScope scope, int rank)
{
	at = loc_or(r->loc, at);
	if (!r->whole) {
		fail(v, at, "%s operand '%s' is not a whole buffer", what,
		     name_of(r->var));
		return false;
	}
	if (scope != TC_SCOPE_NONE && r->var->scope != scope) {
		fail(v, at, "%s operand '%s' is %s, not %s", what,
		     name_of(r->var), sc(r->var->scope),
		     sc(scope));
		return false;
	}
	if (rank && r->var->rank != rank) {
		fail(v, at, "%s operand '%s' has rank %d, not %d", what,
		     name_of(r->var), r->var->rank, rank);
		return false;
	}
	return true;
}

static void
check_writable(Verifier *v, const TcVar *var, TcLoc at, const char *what)
{
	if (var->kind == TC_VAR_TENSOR && var->is_const)
		fail(v, at, "%s writes const tensor '%s'", what, name_of(var));
}

static void check_stmt(Verifier *v, const TcStmt *s);

/* A loop or branch body: must be a BLOCK. */
static void
check_body(Verifier *v, const TcStmt *body, TcLoc at, const char *what)
{
	if (!body) {
		fail(v, at, "%s body is NULL", what);
		return;
	}
	if (body->kind != TC_ST_BLOCK) {
		fail(v, loc_or(body->loc, at), "%s body is a %s, not a block",
		     what, body->kind >= 0 && body->kind < TC_ST_COUNT ?
		     tc_stmtkind_name(body->kind) : "statement");
		return;
	}
	check_stmt(v, body);
}

static void
check_block(Verifier *v, const TcStmt *s)
{
	int mark = v->ndecls;
	for (int i = 0; i < s->u.block.body.len; i++) {
		const TcStmt *c = s->u.block.body.items[i];
		if (!c)
			fail(v, s->loc, "NULL statement in a block");
		else
			check_stmt(v, c);
	}
	while (v->ndecls > mark)
		v->in_scope[v->decls[--v->ndecls]->index] = 0;
}

static void
check_decl(Verifier *v, const TcStmt *s)
{
	const TcVar *var = s->u.decl.var;
	if (!var) {
		fail(v, s->loc, "declaration of a NULL var");
		return;
	}
	if (var->kind != TC_VAR_LOCAL && var->kind != TC_VAR_BUFFER) {
		fail(v, s->loc, "declaration of %s '%s'",
		     vk(var->kind), name_of(var));
		return;
	}
	if (!check_owned(v, var, s->loc))
		return;
	if (var->kind == TC_VAR_BUFFER && s->u.decl.init)
		fail(v, s->loc, "buffer '%s' declared with an initializer",
		     name_of(var));
	if (s->u.decl.init)
		check_expr(v, s->u.decl.init, BODY_VARS, true, s->loc);
	if (v->in_scope[var->index]) {
		fail(v, s->loc, "'%s' declared again in its own scope",
		     name_of(var));
		return;
	}
	v->in_scope[var->index] = 1;
	v->decls[v->ndecls++] = var;
}

static void
check_assign(Verifier *v, const TcStmt *s)
{
	const TcExpr *dst = s->u.assign.dst;
	if (!dst) {
		fail(v, s->loc, "assignment to NULL");
	} else if (dst->kind == TC_EX_VAR) {
		if (dst->u.var && dst->u.var->kind != TC_VAR_LOCAL)
			fail(v, loc_or(dst->loc, s->loc),
			     "assignment to %s '%s', not a local",
			     vk(dst->u.var->kind),
			     name_of(dst->u.var));
		else
			check_expr(v, dst, BODY_VARS, true, s->loc);
	} else if (dst->kind == TC_EX_LOAD) {
		check_expr(v, dst, BODY_VARS, true, s->loc);
		if (dst->u.load.var)
			check_writable(v, dst->u.load.var, s->loc,
				       "assignment");
	} else {
		fail(v, loc_or(dst->loc, s->loc),
		     "assignment to a %s expression",
		     dst->kind >= 0 && dst->kind < TC_EX_COUNT ?
		     tc_exprkind_name(dst->kind) : "malformed");
	}
	check_expr(v, s->u.assign.value, BODY_VARS, true, s->loc);
}

/* What the GPU scheduling passes record on loops: a parallel loop that
 * follows an MMA fragment's layout names it and one of its dims, the
 * others may say how the threads run them; a pipelined loop issues at
 * most its leading copies asynchronously. */
static void
check_schedule(Verifier *v, const TcStmt *s)
{
	const TcVar *anchor = s->u.loop.anchor;
	if (anchor) {
		if (s->u.loop.kind != TC_LOOP_PARALLEL)
			fail(v, s->loc, "a %s loop follows the layout of '%s'",
			     s->u.loop.kind == TC_LOOP_SERIAL ? "serial" :
			     "pipelined", name_of(anchor));
		if (anchor->kind != TC_VAR_BUFFER ||
		    (!tc_layout_is_matrix(anchor->layout.kind) &&
		     anchor->layout.kind != TC_LAYOUT_BLOCKED))
			fail(v, s->loc, "loop follows '%s', not a fragment in "
			     "registers", name_of(anchor));
		else if (check_use(v, anchor, s->loc) &&
			 (s->u.loop.anchor_dim < 0 ||
			  s->u.loop.anchor_dim >= anchor->rank))
			fail(v, s->loc, "loop follows dim %d of rank-%d '%s'",
			     s->u.loop.anchor_dim, anchor->rank,
			     name_of(anchor));
	}
	/* A column loop whose rows move as vectors (ragged.c): parallel,
	 * a whole number of 16-byte vectors of 1- to 8-byte elements, its
	 * body the one assignment into a shared tile. */
	int rv = s->u.loop.row_vec;
	if (rv) {
		const TcVec *body = &s->u.loop.body->u.block.body;
		const TcStmt *as = body->len == 1 ? body->items[0] : NULL;
		long long ext;
		if (s->u.loop.kind != TC_LOOP_PARALLEL || (rv != 2 && rv != 4 &&
		    rv != 8 && rv != 16) || !tc_expr_const(s->u.loop.end, &ext) ||
		    ext % rv != 0 || !as || as->kind != TC_ST_ASSIGN ||
		    as->u.assign.dst->kind != TC_EX_LOAD ||
		    as->u.assign.value->kind != TC_EX_SELECT ||
		    as->u.assign.value->u.sel.then->kind != TC_EX_LOAD)
			fail(v, s->loc, "loop '%s' moves rows in vectors of %d, "
			     "but is not a whole number of them over one "
			     "guarded element copy", name_of(s->u.loop.var), rv);
	}
	/* A transposing nest (cpu_transpose.c): of that form. */
	TcTranspose tr;
	if (s->u.loop.transpose && !tc_transpose_form(NULL, s, &tr))
		fail(v, s->loc, "loop '%s' is marked transposed, but is not a "
		     "nest moving S[i][j] to D[j][i] over whole 8s",
		     name_of(s->u.loop.var));
	/* A loop in runs (runs.c): spread, innermost, a whole number of
	 * runs, its body the one assignment to an element of a shared
	 * buffer at the loop's variable along its rows. */
	int run = s->u.loop.run;
	if (run) {
		const TcVec *body = &s->u.loop.body->u.block.body;
		const TcStmt *as = body->len == 1 ? body->items[0] : NULL;
		const TcExpr *dst = as && as->kind == TC_ST_ASSIGN ?
				    as->u.assign.dst : NULL;
		long long ext;
		if (s->u.loop.threads != TC_THREADS_SPREAD ||
		    (run != 2 && run != 4 && run != 8 && run != 16) ||
		    !tc_expr_const(s->u.loop.end, &ext) || ext % run != 0 ||
		    !dst || dst->kind != TC_EX_LOAD ||
		    !tc_in_smem(dst->u.load.var) ||
		    dst->u.load.idx[dst->u.load.var->rank - 1]->kind != TC_EX_VAR ||
		    dst->u.load.idx[dst->u.load.var->rank - 1]->u.var !=
			    s->u.loop.var)
			fail(v, s->loc, "loop '%s' runs in runs of %d, but is not "
			     "a spread loop of whole runs over one assignment "
			     "along a shared row", name_of(s->u.loop.var), run);
	}
	/* Half pairs (half_pairs.c): a run of whole words of i4, or a
	 * gemm's B, whose value has the form the printer computes. */
	if (s->u.loop.pairs) {
		const TcVec *body = &s->u.loop.body->u.block.body;
		const TcStmt *as = body->len == 1 ? body->items[0] : NULL;
		int r = run ? run : v->b_from ? 8 : 0;
		TcArena *a = tc_arena_new();
		TcHalfPairs hp;
		const char *why = "it is not a loop in runs";
		if (!r || !as || !tc_half_pairs_form(a, as, s->u.loop.var, r,
						     &hp, &why))
			fail(v, s->loc, "loop '%s' is marked in half pairs, but "
			     "%s", name_of(s->u.loop.var), why);
		tc_arena_free(a);
	}
	if (s->u.loop.threads != TC_THREADS_NONE &&
	    (s->u.loop.kind != TC_LOOP_PARALLEL || anchor))
		fail(v, s->loc, "a %s loop has a thread mapping of its own",
		     anchor ? "anchored" : "non-parallel");
	int async = s->u.loop.async_copies;
	if (async == 0)
		return;
	if (s->u.loop.kind != TC_LOOP_PIPELINED || async < 0) {
		fail(v, s->loc, "%d async copies on a loop that is not "
		     "pipelined", async);
		return;
	}
	const TcStmt *body = s->u.loop.body;
	int copies = 0;
	if (body && body->kind == TC_ST_BLOCK)
		while (copies < body->u.block.body.len &&
		       body->u.block.body.items[copies] &&
		       ((const TcStmt *)body->u.block.body.items[copies])
				       ->kind == TC_ST_COPY)
			copies++;
	if (async > copies)
		fail(v, s->loc, "%d async copies, but the loop body begins "
		     "with %d copies", async, copies);
	const TcStmt *gemm = s->u.loop.copies_in_gemm;
	bool found = false;
	for (int i = async; gemm && body && body->kind == TC_ST_BLOCK &&
			    i < body->u.block.body.len; i++)
		found |= body->u.block.body.items[i] == gemm;
	if (gemm && (!found || gemm->kind != TC_ST_GEMM))
		fail(v, s->loc, "async copies issued in a gemm that is not "
		     "one of the loop body's statements");
}

static void
check_loop(Verifier *v, const TcStmt *s)
{
	TcLoopKind kind = s->u.loop.kind;
	const TcVar *var = s->u.loop.var;
	if (kind != TC_LOOP_SERIAL && kind != TC_LOOP_PARALLEL &&
	    kind != TC_LOOP_PIPELINED) {
		fail(v, s->loc, "loop of invalid kind %d", (int)kind);
		return;
	}
	check_index(v, s->u.loop.begin, BODY_VARS, true, s->loc, "loop begin");
	check_index(v, s->u.loop.end, BODY_VARS, true, s->loc, "loop end");
	check_index(v, s->u.loop.step, BODY_VARS, true, s->loc, "loop step");
	if (kind != TC_LOOP_SERIAL) {
		const char *what = kind == TC_LOOP_PARALLEL ? "parallel" :
							      "pipelined";
		const TcExpr *b = s->u.loop.begin, *st = s->u.loop.step;
		if (b && !(b->kind == TC_EX_INT && b->u.ival == 0))
			fail(v, s->loc, "%s loop does not begin at 0", what);
		if (st && !(st->kind == TC_EX_INT && st->u.ival == 1))
			fail(v, s->loc, "%s loop step is not 1", what);
	}
	if (kind == TC_LOOP_PIPELINED)
		check_index(v, s->u.loop.stages, BODY_VARS, true, s->loc,
			    "pipeline stage count");
	check_schedule(v, s);
	if (!var) {
		fail(v, s->loc, "loop without an induction variable");
		return;
	}
	if (var->kind != TC_VAR_LOOP) {
		fail(v, s->loc, "loop variable '%s' is a %s", name_of(var),
		     vk(var->kind));
		return;
	}
	if (!check_owned(v, var, s->loc))
		return;
	if (v->in_scope[var->index]) {
		fail(v, s->loc, "loop variable '%s' reused by a nested loop",
		     name_of(var));
		return;
	}
	v->in_scope[var->index] = 1;
	check_body(v, s->u.loop.body, s->loc, "loop");
	v->in_scope[var->index] = 0;
}

/* Two whole buffers copied one to the other have the same shape. */
static void
check_same_shape(Verifier *v, const TcRegion *a, const TcRegion *b,
		 TcLoc at)
{
	for (int i = 0; i < a->var->rank; i++) {
		long long x, y;
		const TcExpr *ea = a->var->shape[i], *eb = b->var->shape[i];
		if (!ea || !eb)
			return;
		bool same = tc_expr_const(ea, &x) && tc_expr_const(eb, &y) ?
				    x == y : tc_expr_equal(ea, eb);
		if (!same) {
			fail(v, at, "copy between '%s' and '%s' of different "
			     "shapes (dim %d)", name_of(a->var),
			     name_of(b->var), i);
			return;
		}
	}
}

static void
check_copy(Verifier *v, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	bool atomic = s->kind == TC_ST_ATOMIC_ADD;
	const char *what = atomic ? "atomic_add" : "copy";
	bool ok = check_region(v, dst, s->loc, what);
	ok = check_region(v, src, s->loc, what) && ok;
	if (!ok)
		return;
	check_writable(v, dst->var, s->loc, what);
	if (atomic) {
		if (dst->var->kind != TC_VAR_TENSOR)
			fail(v, s->loc, "atomic_add into '%s', not a tensor",
			     name_of(dst->var));
		if (!src->whole)
			fail(v, s->loc, "atomic_add from '%s', not a whole "
			     "buffer", name_of(src->var));
	} else if (!dst->whole && !src->whole) {
		fail(v, s->loc, "copy between '%s' and '%s': neither is a "
		     "whole buffer", name_of(dst->var), name_of(src->var));
		return;
	}
	if (tile_rank(dst) != tile_rank(src))
		fail(v, s->loc, "%s between tiles of rank %d and %d", what,
		     tile_rank(dst), tile_rank(src));
	else if (dst->whole && src->whole)
		check_same_shape(v, dst, src, s->loc);
}

/* A prefetch (passes/cpu_prefetch.c): rows of a tensor region that a
 * copy into the whole buffer would read, contiguous, never a ragged or
 * i4 region, and once the bounds pass ran, every origin proven >= 0 (a
 * row's start address is formed without a lower test). */
static void
check_prefetch(Verifier *v, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	bool ok = check_region(v, dst, s->loc, "prefetch");
	ok = check_region(v, src, s->loc, "prefetch") && ok;
	if (!ok || !check_whole(v, dst, s->loc, "prefetch", TC_SCOPE_NONE, 0))
		return;
	const TcVar *t = src->var;
	if (t->kind != TC_VAR_TENSOR || t->dtype == TC_DT_I4 ||
	    tc_region_ragged(src)) {
		fail(v, s->loc, "prefetch of '%s', not a plain tensor region",
		     name_of(t));
		return;
	}
	if (tile_rank(dst) != tile_rank(src)) {
		fail(v, s->loc, "prefetch between tiles of rank %d and %d",
		     tile_rank(dst), tile_rank(src));
		return;
	}
	if (src->dims[src->ndims - 1] != t->rank - 1)
		fail(v, s->loc, "prefetch of '%s' along dim %d: its rows are "
		     "not contiguous", name_of(t), src->dims[src->ndims - 1]);
	unsigned all = (1u << t->rank) - 1;
	if (src->bounded && (src->nonneg & all) != all)
		fail(v, s->loc, "prefetch of '%s' with an origin not proven "
		     "non-negative", name_of(t));
	if (s->u.copy.stage || s->u.copy.plan || s->u.copy.lower != TC_COPY_ANY)
		fail(v, s->loc, "prefetch of '%s' with async copy fields",
		     name_of(t));
}

/* fuse_b.c: B, folded, is computed by a spread nest of two loops over
 * its rows and columns (0 .. extent) whose one statement assigns
 * B[row][column]; B is stored N x K, and the gemm has no issue block. */
static void
check_b_from(Verifier *v, const TcStmt *s)
{
	const TcStmt *outer = s->u.gemm.b_from, *inner = NULL, *as = NULL;
	const TcVar *b = s->u.gemm.b.var;
	if (outer->kind == TC_ST_FOR && outer->u.loop.body->kind == TC_ST_BLOCK &&
	    outer->u.loop.body->u.block.body.len == 1)
		inner = outer->u.loop.body->u.block.body.items[0];
	if (inner && inner->kind == TC_ST_FOR &&
	    inner->u.loop.body->kind == TC_ST_BLOCK &&
	    inner->u.loop.body->u.block.body.len == 1)
		as = inner->u.loop.body->u.block.body.items[0];
	bool ok = as && as->kind == TC_ST_ASSIGN && b && b->folded &&
		  b->rank == 2 && s->u.gemm.trans_b && !s->u.gemm.issue;
	for (int i = 0; ok && i < 2; i++) {
		const TcStmt *l = i ? inner : outer;
		long long end;
		ok = l->u.loop.kind == TC_LOOP_PARALLEL &&
		     l->u.loop.threads == TC_THREADS_SPREAD &&
		     tc_expr_const(l->u.loop.end, &end) &&
		     end == tc_var_extent(b, i);
	}
	const TcExpr *dst = ok ? as->u.assign.dst : NULL;
	ok = ok && dst->kind == TC_EX_LOAD && dst->u.load.var == b &&
	     dst->u.load.idx[0]->kind == TC_EX_VAR &&
	     dst->u.load.idx[0]->u.var == outer->u.loop.var &&
	     dst->u.load.idx[1]->kind == TC_EX_VAR &&
	     dst->u.load.idx[1]->u.var == inner->u.loop.var;
	if (!ok) {
		fail(v, s->loc, "gemm computes B from what is not a spread "
		     "loop nest over its folded N x K buffer assigning it");
		return;
	}
	v->b_from = true;
	check_stmt(v, outer);
	v->b_from = false;
}

static void
check_gemm(Verifier *v, const TcStmt *s)
{
	const TcRegion *c = &s->u.gemm.c, *a = &s->u.gemm.a, *b = &s->u.gemm.b;
	if (check_region(v, c, s->loc, "gemm"))
		check_whole(v, c, s->loc, "gemm accumulator", TC_SCOPE_FRAGMENT,
			    2);
	if (check_region(v, a, s->loc, "gemm"))
		check_whole(v, a, s->loc, "gemm", TC_SCOPE_NONE, 2);
	if (check_region(v, b, s->loc, "gemm"))
		check_whole(v, b, s->loc, "gemm", TC_SCOPE_NONE, 2);
	if (s->u.gemm.issue)
		check_body(v, s->u.gemm.issue, s->loc, "gemm issue");
	if (s->u.gemm.b_from)
		check_b_from(v, s);
	/* reg_operands.c: an f32 register fragment rounded to B's f16 or
	 * bf16 as it is packed. */
	if (s->u.gemm.round_a &&
	    (!a->var || !b->var || a->var->kind != TC_VAR_BUFFER ||
	     a->var->dtype != TC_DT_F32 || s->u.gemm.trans_a ||
	     (b->var->dtype != TC_DT_F16 && b->var->dtype != TC_DT_BF16)))
		fail(v, s->loc, "gemm rounds A, which is not an f32 fragment "
		     "read untransposed beside a 16-bit float B");
	/* wgmma (layout.c, smem.c): a WGMMA accumulator, instructions of a
	 * power-of-two n from 16 to 256 that tile each warpgroup's columns;
	 * operands in panels only when swizzled, of whole 128-byte rows. */
	int n = s->u.gemm.wgmma_n;
	const TcVar *cv = c->var;
	bool wg = cv && cv->kind == TC_VAR_BUFFER &&
		  cv->layout.kind == TC_LAYOUT_WGMMA;
	if (n && (!wg || n < 16 || n > 256 || (n & (n - 1)) ||
		  (cv->layout.dim[1].tiles * 8) % n != 0))
		fail(v, s->loc, "gemm by wgmma n%d on '%s', not a wgmma "
		     "accumulator it tiles", n, name_of(cv));
	else if (wg && !n)
		fail(v, s->loc, "gemm into wgmma accumulator '%s' has no "
		     "instruction width", name_of(cv));
	const TcVar *ops[2] = { a->var, b->var };
	for (int i = 0; i < 2; i++)
		if (ops[i] && ops[i]->kind == TC_VAR_BUFFER && ops[i]->panels &&
		    (!ops[i]->swizzle || ops[i]->rank != 2 ||
		     tc_var_extent(ops[i], 1) *
		     tc_dtype_storage_bits(ops[i]->dtype) % 1024 != 0))
			fail(v, s->loc, "'%s' in panels, not swizzled rows of "
			     "whole 128 bytes", name_of(ops[i]));
	/* The gemm helpers read the ldmatrix pattern, never the one of a
	 * tile swizzled for column reads (smem.c). */
	for (int i = 0; i < 2; i++)
		if (ops[i] && ops[i]->kind == TC_VAR_BUFFER && ops[i]->swizzle_rows)
			fail(v, s->loc, "gemm operand '%s' swizzled for column "
			     "reads", name_of(ops[i]));
}

static void
check_reduce(Verifier *v, const TcStmt *s)
{
	if (s->u.reduce.op < 0 || s->u.reduce.op >= TC_RED_COUNT)
		fail(v, s->loc, "reduction of invalid kind %d",
		     (int)s->u.reduce.op);
	const TcRegion *dst = &s->u.reduce.dst, *src = &s->u.reduce.src;
	bool ok = check_region(v, dst, s->loc, "reduce");
	ok = check_region(v, src, s->loc, "reduce") && ok;
	if (!ok)
		return;
	check_writable(v, dst->var, s->loc, "reduce");
	int dim = s->u.reduce.dim;
	if (dim < 0 || dim >= tile_rank(src))
		fail(v, s->loc, "reduce along dim %d of a rank-%d tile", dim,
		     tile_rank(src));
	if (tile_rank(dst) != tile_rank(src) - 1)
		fail(v, s->loc, "reduce of a rank-%d tile into rank %d",
		     tile_rank(src), tile_rank(dst));
}

/* REDUCE_ALL: a whole buffer into a LOCAL of the kernel. */
static void
check_reduce_all(Verifier *v, const TcStmt *s)
{
	if (s->u.reduce_all.op < 0 || s->u.reduce_all.op >= TC_RED_COUNT)
		fail(v, s->loc, "reduction of invalid kind %d",
		     (int)s->u.reduce_all.op);
	const TcVar *dst = s->u.reduce_all.dst;
	if (!dst) {
		fail(v, s->loc, "reduce_all into NULL");
	} else if (check_owned(v, dst, s->loc) && dst->kind != TC_VAR_LOCAL) {
		fail(v, s->loc, "reduce_all into %s '%s', not a local",
		     vk(dst->kind), name_of(dst));
	}
	const TcRegion *src = &s->u.reduce_all.src;
	if (check_region(v, src, s->loc, "reduce_all"))
		check_whole(v, src, s->loc, "reduce_all", TC_SCOPE_NONE, 0);
}

/* ARG_REDUCE: whole buffers; values and indices of src's shape less dim,
 * the indices of an integer dtype. */
static void
check_arg_reduce(Verifier *v, const TcStmt *s)
{
	const TcRegion *dst = &s->u.arg_reduce.dst, *idx = &s->u.arg_reduce.index,
		       *src = &s->u.arg_reduce.src;
	bool ok = check_region(v, dst, s->loc, "arg_reduce");
	ok = check_region(v, idx, s->loc, "arg_reduce") && ok;
	ok = check_region(v, src, s->loc, "arg_reduce") && ok;
	if (!ok || !check_whole(v, dst, s->loc, "arg_reduce", TC_SCOPE_NONE, 0) ||
	    !check_whole(v, idx, s->loc, "arg_reduce", TC_SCOPE_NONE, 0) ||
	    !check_whole(v, src, s->loc, "arg_reduce", TC_SCOPE_NONE, 0))
		return;
	int dim = s->u.arg_reduce.dim;
	if (dim < 0 || dim >= src->var->rank)
		fail(v, s->loc, "arg_reduce along dim %d of a rank-%d tile", dim,
		     src->var->rank);
	if (dst->var->rank != src->var->rank - !s->u.arg_reduce.topk ||
	    idx->var->rank != dst->var->rank)
		fail(v, s->loc, "arg_reduce of a rank-%d tile into ranks %d "
		     "and %d", src->var->rank, dst->var->rank, idx->var->rank);
	if (idx->var->dtype != TC_DT_I32 && idx->var->dtype != TC_DT_I64)
		fail(v, s->loc, "arg_reduce indices of dtype %s",
		     dt(idx->var->dtype));
}

static bool
is_reg(const TcVar *var)
{
	return var->kind == TC_VAR_BUFFER &&
	       (tc_layout_is_matrix(var->layout.kind) ||
		var->layout.kind == TC_LAYOUT_BLOCKED);
}

/* A HANDLE declared here (a copy plan, stage barriers). */
static void
declare_handle(Verifier *v, const TcVar *h, TcLoc at)
{
	if (h->kind != TC_VAR_HANDLE) {
		fail(v, at, "%s '%s' declared as a handle", vk(h->kind),
		     name_of(h));
		return;
	}
	if (v->in_scope[h->index]) {
		fail(v, at, "'%s' declared again in its own scope", name_of(h));
		return;
	}
	v->in_scope[h->index] = 1;
	v->decls[v->ndecls++] = h;
}

/* A HANDLE used here: declared in an enclosing scope. */
static void
check_handle(Verifier *v, const TcVar *h, TcLoc at)
{
	if (!h || h->kind != TC_VAR_HANDLE) {
		fail(v, at, "'%s' used as a handle", h ? name_of(h) : "<null>");
		return;
	}
	if (check_owned(v, h, at) && !v->in_scope[h->index])
		fail(v, at, "handle '%s' used out of its scope", name_of(h));
}

/* A TMA store (tma_store.c): a COPY of a two-dim wgmma accumulator-
 * layout fragment into a tile of a tensor through one of the kernel's
 * maps of that tensor, whose box is the tile's rows by one column panel
 * (`staged` of them at once, at a 1024-aligned offset inside the
 * kernel's shared memory), its barriers those of the block or, in a
 * consumer block, of the program's threads; never in a producer. */
static void
check_tma_store(Verifier *v, const TcStmt *s)
{
	const TcVar *dst = s->u.copy.dst.var, *src = s->u.copy.src.var;
	const TcTensorMap *m = s->u.copy.tmap;
	const TcKernel *k = v->kernel;
	bool listed = false;
	for (int i = 0; m && k && i < k->tmaps.len; i++)
		listed |= k->tmaps.items[i] == m;
	long long rows = 0, cols = 0;
	if (s->kind != TC_ST_COPY || src->layout.kind != TC_LAYOUT_WGMMA ||
	    src->rank != 2 || dst->kind != TC_VAR_TENSOR || !listed ||
	    m->tensor != dst || s->u.copy.dst.ndims != 2 ||
	    !tc_expr_const(src->shape[0], &rows) ||
	    !tc_expr_const(src->shape[1], &cols)) {
		fail(v, s->loc, "TMA store into '%s' not of a wgmma fragment "
		     "into a tensor tile through a map of it in its kernel",
		     name_of(dst));
		return;
	}
	long long e = tc_dtype_storage_bits(dst->dtype) / 8;
	const TcRegion *r = &s->u.copy.dst;
	long long span = m->swizzle, panels = span ? cols * e / span : 0;
	if (m->box[r->dims[0]] != rows || m->box[dst->rank - 1] * e != span ||
	    r->dims[1] != dst->rank - 1 || panels < 1 ||
	    panels * span != cols * e || s->u.copy.staged < 1 ||
	    s->u.copy.staged > panels || s->u.copy.staging < 0 ||
	    s->u.copy.staging % 1024 ||
	    s->u.copy.staging + s->u.copy.staged * rows * span > k->smem_bytes)
		fail(v, s->loc, "TMA store of a %lld x %lld tile into '%s': box "
		     "[%d, %d], %d of %lld panels at +%lld of %lld bytes", rows,
		     cols, name_of(dst), m->box[r->dims[0]],
		     m->box[dst->rank - 1], s->u.copy.staged, panels,
		     s->u.copy.staging, k->smem_bytes);
	if (v->producer || (v->consumer ? s->u.copy.sync !=
			    v->consumer->u.roles.threads : s->u.copy.sync != 0))
		fail(v, s->loc, "TMA store into '%s' with barriers of %lld "
		     "threads %s", name_of(dst), s->u.copy.sync, v->producer ?
		     "in a producer" : v->consumer ? "in a consumer block (the "
		     "program's threads, there)" : "outside a consumer block "
		     "(0: the block's, there)");
}

/* What expand_pipeline.c records on a copy: a register lowering exactly
 * when an operand is a register fragment (or a TMA store, tma_store.c),
 * a strided one only with the set-up it needs; an async copy fills a
 * stage of a staged shared buffer from a tensor, in vectors or element
 * by element. */
static void
check_lowering(Verifier *v, const TcStmt *s)
{
	const TcVar *dst = s->u.copy.dst.var, *src = s->u.copy.src.var;
	TcCopyLower l = s->u.copy.lower;
	if (l < TC_COPY_ANY || l > TC_COPY_TMA_STORE) {
		fail(v, s->loc, "copy lowering of invalid kind %d", (int)l);
		return;
	}
	bool reg = is_reg(dst) || is_reg(src);
	if (l == TC_COPY_TMA_STORE) {
		check_tma_store(v, s);
		return;
	}
	if (s->u.copy.staging || s->u.copy.staged || s->u.copy.sync)
		fail(v, s->loc, "%s copy into '%s' with a TMA store's staging",
		     tc_copy_lower_name(l), name_of(dst));
	if (l != TC_COPY_ANY && (l == TC_COPY_REGISTER) != reg)
		fail(v, s->loc, "copy into '%s' lowered as %s, but %s operand "
		     "is in registers", name_of(dst), tc_copy_lower_name(l),
		     reg ? "an" : "no");
	if (s->kind != TC_ST_ASYNC_COPY) {
		if (l == TC_COPY_STRIDED || l == TC_COPY_TMA)
			fail(v, s->loc, "%s copy into '%s' outside a "
			     "copy plan", tc_copy_lower_name(l), name_of(dst));
		return;
	}
	if (l != TC_COPY_VECTOR && l != TC_COPY_GENERIC &&
	    l != TC_COPY_STRIDED && l != TC_COPY_TMA)
		fail(v, s->loc, "async copy into '%s' lowered as %s",
		     name_of(dst), tc_copy_lower_name(l));
	if (l == TC_COPY_TMA) {
		const TcTensorMap *m = s->u.copy.tmap;
		bool listed = false;
		for (int i = 0; m && v->kernel && i < v->kernel->tmaps.len; i++)
			listed |= v->kernel->tmaps.items[i] == m;
		if (!listed || m->tensor != src || !dst->swizzle ||
		    !s->u.copy.bars)
			fail(v, s->loc, "TMA copy into '%s' without a tensor map "
			     "of '%s' in its kernel, a swizzled tile and stage "
			     "barriers", name_of(dst), name_of(src));
		else
			check_handle(v, s->u.copy.bars, s->loc);
	} else if (s->u.copy.tmap || s->u.copy.bars) {
		fail(v, s->loc, "%s copy into '%s' with a tensor map",
		     tc_copy_lower_name(l), name_of(dst));
	}
	if ((l == TC_COPY_STRIDED || l == TC_COPY_TMA) != (s->u.copy.plan != NULL))
		fail(v, s->loc, "async copy into '%s' lowered as %s %s a plan",
		     name_of(dst), tc_copy_lower_name(l),
		     s->u.copy.plan ? "with" : "without");
	if (s->u.copy.plan) {
		check_handle(v, s->u.copy.plan, s->loc);
		check_index(v, s->u.copy.iter, BODY_VARS, true, s->loc,
			    "strided copy iteration");
	}
	if (!s->u.copy.dst.whole || dst->scope != TC_SCOPE_SHARED ||
	    dst->stages < 2 || src->kind != TC_VAR_TENSOR)
		fail(v, s->loc, "async copy into '%s', not a whole staged "
		     "shared buffer filled from a tensor", name_of(dst));
	check_index(v, s->u.copy.stage, BODY_VARS, true, s->loc,
		    "async copy stage");
}

/* STAGE_VIEW: a new one-stage buffer like `of`, in scope from here to the
 * end of its block. */
static void
check_view(Verifier *v, const TcStmt *s)
{
	const TcVar *view = s->u.view.var, *of = s->u.view.of;
	if (!view || !of) {
		fail(v, s->loc, "stage view without its buffers");
		return;
	}
	if (!check_use(v, of, s->loc) || !check_owned(v, view, s->loc))
		return;
	if (of->kind != TC_VAR_BUFFER || of->scope != TC_SCOPE_SHARED ||
	    of->stages < 2)
		fail(v, s->loc, "stage view of '%s', not a staged shared buffer",
		     name_of(of));
	if (view->kind != TC_VAR_BUFFER || view->stages != 1 ||
	    view->dtype != of->dtype || view->rank != of->rank ||
	    view->swizzle != of->swizzle)
		fail(v, s->loc, "stage view '%s' is not one stage of '%s'",
		     name_of(view), name_of(of));
	check_index(v, s->u.view.stage, BODY_VARS, true, s->loc,
		    "stage view stage");
	if (v->in_scope[view->index]) {
		fail(v, s->loc, "'%s' declared again in its own scope",
		     name_of(view));
		return;
	}
	v->in_scope[view->index] = 1;
	v->decls[v->ndecls++] = view;
}

/* COPY_PLAN: a strided copy set up from its first tile and its step. */
static void
check_plan(Verifier *v, const TcStmt *s)
{
	const TcStmt *c = s->u.plan.copy;
	if (!s->u.plan.var || !c || c->kind != TC_ST_COPY ||
	    c->u.copy.lower != TC_COPY_STRIDED || !c->u.copy.advance ||
	    !c->u.copy.dst.var || !c->u.copy.src.var) {
		fail(v, s->loc, "copy plan without a strided copy");
		return;
	}
	if (!check_owned(v, s->u.plan.var, s->loc) ||
	    !check_use(v, c->u.copy.dst.var, s->loc) ||
	    !check_use(v, c->u.copy.src.var, s->loc))
		return;
	if (c->u.copy.src.var->kind != TC_VAR_TENSOR)
		fail(v, s->loc, "copy plan from '%s', not a tensor",
		     name_of(c->u.copy.src.var));
	for (int i = 0; i < c->u.copy.src.var->rank; i++)
		check_index(v, c->u.copy.first[i], BODY_VARS, true, s->loc,
			    "copy plan origin");
	check_index(v, c->u.copy.advance, BODY_VARS, true, s->loc,
		    "copy plan advance");
	declare_handle(v, s->u.plan.var, s->loc);
}

/* STAGE_BAR_INIT: stages and arrival counts, in the kernel's shared
 * memory. */
static void
check_bars(Verifier *v, const TcStmt *s)
{
	if (!s->u.bars.var || !check_owned(v, s->u.bars.var, s->loc))
		return;
	if (s->u.bars.stages < 2 || s->u.bars.full_arrivals < 1 ||
	    s->u.bars.empty_arrivals < 1 || s->u.bars.offset % 8 ||
	    s->u.bars.offset < 0 || s->u.bars.offset + 16LL * s->u.bars.stages >
	    v->kernel->smem_bytes)
		fail(v, s->loc, "stage barriers '%s': %d stages, %lld and %lld "
		     "arrivals, at +%lld of %lld bytes", name_of(s->u.bars.var),
		     s->u.bars.stages, s->u.bars.full_arrivals,
		     s->u.bars.empty_arrivals, s->u.bars.offset,
		     v->kernel->smem_bytes);
	declare_handle(v, s->u.bars.var, s->loc);
}

/* STAGE_BAR_ARRIVE, STAGE_BAR_WAIT: on declared barriers; a wait names a
 * parity, an arrival none. */
static void
check_bar(Verifier *v, const TcStmt *s)
{
	bool wait = s->kind == TC_ST_STAGE_BAR_WAIT;
	if (!s->u.bar.bars) {
		fail(v, s->loc, "stage barrier operation without its barriers");
		return;
	}
	check_handle(v, s->u.bar.bars, s->loc);
	check_index(v, s->u.bar.stage, BODY_VARS, true, s->loc,
		    "stage barrier stage");
	if (wait)
		check_index(v, s->u.bar.parity, BODY_VARS, true, s->loc,
			    "stage barrier parity");
	else if (s->u.bar.parity)
		fail(v, s->loc, "stage barrier arrival with a parity");
}

/* ROLES: one per kernel, not nested, the kernel's producer warpgroup;
 * whole warpgroups each side, register counts setmaxnreg can ask for
 * that fit the register file; the producer's one thread takes part in
 * no barrier and multiplies nothing. */
static bool
producer_stmt_ok(const TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BARRIER:
	case TC_ST_GEMM:
	case TC_ST_ROLES:
	case TC_ST_WGMMA_WAIT:
		return false;
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!producer_stmt_ok(s->u.block.body.items[i]))
				return false;
		return true;
	case TC_ST_FOR:
		return producer_stmt_ok(s->u.loop.body);
	case TC_ST_IF:
		return producer_stmt_ok(s->u.cond.then) &&
		       (!s->u.cond.els || producer_stmt_ok(s->u.cond.els));
	case TC_ST_PIPE_SELECT:
		return producer_stmt_ok(s->u.select.fast) &&
		       producer_stmt_ok(s->u.select.fallback);
	default:
		return true;
	}
}

static bool
regs_ok(int regs)
{
	return regs >= 24 && regs <= 256 && regs % 8 == 0;
}

static void
check_roles(Verifier *v, const TcStmt *s)
{
	const TcKernel *k = v->kernel;
	long long t = s->u.roles.threads, p = s->u.roles.producer_threads;
	if (v->producer || v->consumer)
		fail(v, s->loc, "roles inside roles");
	if (t < 128 || t % 128 || p != 128 || k->producer_threads != p ||
	    !regs_ok(s->u.roles.producer_regs) || !regs_ok(s->u.roles.consumer_regs) ||
	    s->u.roles.blocks < 1 || k->producer_blocks != s->u.roles.blocks ||
	    (s->u.roles.producer_regs * p + s->u.roles.consumer_regs * t) *
	    s->u.roles.blocks > 65536)
		fail(v, s->loc, "roles: %lld consumer threads with %d registers, "
		     "%lld producer threads (the kernel's %lld) with %d",
		     t, s->u.roles.consumer_regs, p, k->producer_threads,
		     s->u.roles.producer_regs);
	if (s->u.roles.producer && !producer_stmt_ok(s->u.roles.producer))
		fail(v, s->loc, "roles: the producer's one thread takes part "
		     "in a barrier or a gemm");
	v->producer = s;
	check_body(v, s->u.roles.producer, s->loc, "roles producer");
	v->producer = NULL;
	v->consumer = s;
	check_body(v, s->u.roles.consumer, s->loc, "roles consumer");
	v->consumer = NULL;
}

/* BARRIER: every thread's, or outside a ROLES' producer the program's
 * (and then only in its consumer block, where the producer warpgroup
 * runs elsewhere). */
static void
check_barrier(Verifier *v, const TcStmt *s)
{
	long long t = s->u.barrier.threads;
	if (v->consumer ? t != v->consumer->u.roles.threads : t != 0)
		fail(v, s->loc, "barrier of %lld threads %s", t, v->consumer ?
		     "in a consumer block (the program's threads, there)" :
		     "outside a consumer block (0: the block's, there)");
}

/* PIPE_SELECT: plans declared before it, two blocks. */
static void
check_select(Verifier *v, const TcStmt *s)
{
	if (s->u.select.plans.len == 0)
		fail(v, s->loc, "pipe_select tests no copy plan");
	for (int i = 0; i < s->u.select.plans.len; i++)
		check_handle(v, s->u.select.plans.items[i], s->loc);
	check_body(v, s->u.select.fast, s->loc, "pipe_select");
	check_body(v, s->u.select.fallback, s->loc, "pipe_select fallback");
}

static void
check_stmt(Verifier *v, const TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		check_block(v, s);
		break;
	case TC_ST_DECL:
		check_decl(v, s);
		break;
	case TC_ST_ASSIGN:
		check_assign(v, s);
		break;
	case TC_ST_FOR:
		check_loop(v, s);
		break;
	case TC_ST_IF:
		check_expr(v, s->u.cond.cond, BODY_VARS, true, s->loc);
		check_body(v, s->u.cond.then, s->loc, "if");
		if (s->u.cond.els)
			check_body(v, s->u.cond.els, s->loc, "else");
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
	case TC_ST_ASYNC_COPY:
		check_copy(v, s);
		if (s->u.copy.dst.var && s->u.copy.src.var)
			check_lowering(v, s);
		/* A streamed copy (cpu_stream.c): rows of a buffer along a
		 * tensor's. */
		if (s->u.copy.stream &&
		    (s->kind != TC_ST_COPY || !s->u.copy.dst.var ||
		     s->u.copy.dst.var->kind != TC_VAR_TENSOR ||
		     !s->u.copy.src.var ||
		     s->u.copy.src.var->kind != TC_VAR_BUFFER ||
		     s->u.copy.dst.dims[s->u.copy.src.var->rank - 1] !=
			     s->u.copy.dst.var->rank - 1))
			fail(v, s->loc, "a streamed copy that is not a buffer's "
			     "rows copied along a tensor's rows");
		else if (s->u.copy.stream && v->kernel && !v->kernel->streams)
			fail(v, s->loc, "a streamed copy in a kernel whose "
			     "threads do not fence (streams past the cache)");
		break;
	case TC_ST_PREFETCH:
		check_prefetch(v, s);
		break;
	case TC_ST_COMMIT_GROUP:
		break;
	case TC_ST_WAIT_GROUP:
		if (s->u.wait.pending < 0)
			fail(v, s->loc, "wait_group for %d groups",
			     s->u.wait.pending);
		break;
	case TC_ST_WGMMA_WAIT:
		if (s->u.wait.pending < 0 || !s->u.wait.acc ||
		    s->u.wait.acc->layout.kind != TC_LAYOUT_WGMMA)
			fail(v, s->loc, "wgmma_wait for %d groups of '%s', not "
			     "a wgmma accumulator", s->u.wait.pending,
			     name_of(s->u.wait.acc));
		break;
	case TC_ST_STAGE_VIEW:
		check_view(v, s);
		break;
	case TC_ST_PIPE_SELECT:
		check_select(v, s);
		break;
	case TC_ST_COPY_PLAN:
		check_plan(v, s);
		break;
	case TC_ST_STAGE_BAR_INIT:
		check_bars(v, s);
		break;
	case TC_ST_STAGE_BAR_ARRIVE:
	case TC_ST_STAGE_BAR_WAIT:
		check_bar(v, s);
		break;
	case TC_ST_GEMM:
		check_gemm(v, s);
		break;
	case TC_ST_FILL:
		if (check_region(v, &s->u.fill.dst, s->loc, "fill"))
			check_whole(v, &s->u.fill.dst, s->loc, "fill",
				    TC_SCOPE_NONE, 0);
		check_expr(v, s->u.fill.value, BODY_VARS, true, s->loc);
		break;
	case TC_ST_REDUCE:
		check_reduce(v, s);
		break;
	case TC_ST_REDUCE_ALL:
		check_reduce_all(v, s);
		break;
	case TC_ST_ARG_REDUCE:
		check_arg_reduce(v, s);
		break;
	case TC_ST_BARRIER:
		check_barrier(v, s);
		break;
	case TC_ST_ROLES:
		check_roles(v, s);
		break;
	case TC_ST_TILES:
		/* A persistent kernel's tile walk: each role has its own
		 * (both walk the same tiles in the same order). */
		if (!v->kernel->persistent || (!v->producer && !v->consumer))
			fail(v, s->loc, "tiles outside the roles of a "
			     "persistent kernel");
		check_body(v, s->u.tiles.body, s->loc, "tiles");
		break;
	default:
		fail(v, s->loc, "statement of invalid kind %d", (int)s->kind);
		break;
	}
}

/* The kernel's own vars: indices, kinds, dtypes and shapes. */
static void
check_vars(Verifier *v, const TcKernel *k)
{
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *var = k->vars.items[i];
		if (!var) {
			fail(v, k->loc, "kernel '%s': var %d is NULL", k->name, i);
			continue;
		}
		if (var->index != i)
			fail(v, var->loc, "var '%s' at %d has index %d",
			     name_of(var), i, var->index);
		if (var->kind < 0 || var->kind >= TC_VAR_COUNT ||
		    var->kind == TC_VAR_TUNABLE) {
			fail(v, var->loc, "var '%s' of kind %d in a kernel",
			     name_of(var), (int)var->kind);
			continue;
		}
		if (!dtype_valid(var->dtype))
			fail(v, var->loc, "%s '%s' without a valid dtype",
			     vk(var->kind), name_of(var));
		if (var->kind == TC_VAR_BLOCK &&
		    (var->grid_dim < 0 || var->grid_dim > 2 ||
		     k->block[var->grid_dim] != var))
			fail(v, var->loc, "block index '%s' not bound to grid "
			     "dim %d", name_of(var), var->grid_dim);
		if (var->kind != TC_VAR_TENSOR && var->kind != TC_VAR_BUFFER)
			continue;
		if (var->kind == TC_VAR_BUFFER &&
		    (var->scope <= TC_SCOPE_NONE ||
		     var->scope >= TC_SCOPE_COUNT))
			fail(v, var->loc, "buffer '%s' without a memory scope",
			     name_of(var));
		if (var->rank < 1 || var->rank > TC_MAX_RANK) {
			fail(v, var->loc, "%s '%s' of rank %d",
			     vk(var->kind), name_of(var),
			     var->rank);
			continue;
		}
		/* Tensor dims are over scalar parameters and tunables,
		 * buffer dims over tunables alone. */
		unsigned kinds = var->kind == TC_VAR_TENSOR ? HEADER_VARS :
							      KIND(TUNABLE);
		for (int d = 0; d < var->rank; d++)
			check_index(v, var->shape[d], kinds, false, var->loc,
				    "dim extent");
	}
}

static void
check_params(Verifier *v, const TcKernel *k)
{
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *var = k->params.items[i];
		if (!var) {
			fail(v, k->loc, "kernel '%s': parameter %d is NULL",
			     k->name, i);
			continue;
		}
		if (var->kind != TC_VAR_TENSOR && var->kind != TC_VAR_SCALAR)
			fail(v, var->loc, "parameter '%s' is a %s",
			     name_of(var), vk(var->kind));
		else if (var->param != i)
			fail(v, var->loc, "parameter '%s' at %d has index %d",
			     name_of(var), i, var->param);
		check_owned(v, var, var->loc);
	}
}

static void
check_kernel(Verifier *v, const TcKernel *k)
{
	if (!k->name)
		fail(v, k->loc, "kernel without a name");
	if (!k->name)
		return;
	check_params(v, k);
	check_vars(v, k);
	if (k->threads)
		check_index(v, k->threads, HEADER_VARS, false, k->loc,
			    "thread count");
	for (int d = 0; d < 3; d++) {
		v->sms = d == 0 && k->persistent > 0;
		if (k->grid[d])
			check_index(v, k->grid[d], HEADER_VARS, false, k->loc,
				    "grid extent");
		v->sms = false;
		const TcVar *bv = k->block[d];
		if (bv && (bv->kind != TC_VAR_BLOCK || bv->grid_dim != d))
			fail(v, k->loc, "grid dim %d bound to '%s', not its "
			     "block index", d, name_of(bv));
		else if (bv)
			check_owned(v, bv, k->loc);
	}
	if (k->rasterize)
		check_index(v, k->rasterize, HEADER_VARS, false, k->loc,
			    "rasterization");
	for (int d = 0; d < 3; d++)
		if (k->tiles[d])
			check_index(v, k->tiles[d], HEADER_VARS, false, k->loc,
				    "tile extent");
	if (k->persistent < 0 || (k->persistent && (!k->producer_threads ||
	    !tc_expr_has_sms(k->grid[0]) || k->grid[1] || k->grid[2])))
		fail(v, k->loc, "persistent kernel of %lld blocks per SM without "
		     "a producer warpgroup or a one-dimensional grid of the "
		     "device's SMs", k->persistent);
	if (!k->body) {
		fail(v, k->loc, "kernel '%s' without a body", k->name);
		return;
	}
	if (k->body->kind != TC_ST_BLOCK) {
		fail(v, k->body->loc, "kernel '%s' body is not a block",
		     k->name);
		return;
	}
	check_stmt(v, k->body);
}

/* Whether block is s or a statement inside it (not inside a parallel
 * loop: runs hold block-level statements). */
static bool
holds_block(const TcStmt *s, const TcStmt *block)
{
	if (!s)
		return false;
	if (s == block)
		return true;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (holds_block(s->u.block.body.items[i], block))
				return true;
		return false;
	case TC_ST_FOR:
		return s->u.loop.kind != TC_LOOP_PARALLEL &&
		       holds_block(s->u.loop.body, block);
	case TC_ST_IF:
		return holds_block(s->u.cond.then, block) ||
		       holds_block(s->u.cond.els, block);
	default:
		return false;
	}
}

/* Whether op's statement is of the kind its plan says. */
static bool
fuse_op_matches(const TcFuseOp *op)
{
	const TcStmt *s = op->s;
	if (!s || op->rank < 1 || op->rank > 2 || op->cols <= 0 ||
	    op->rows <= 0 || (op->rank == 1 && op->rows != 1))
		return false;
	switch (op->kind) {
	case TC_FUSE_LOAD:
		return s->kind == TC_ST_COPY && s->u.copy.dst.whole &&
		       op->buf == s->u.copy.dst.var && op->reg == &s->u.copy.src;
	case TC_FUSE_STORE:
		return s->kind == TC_ST_COPY && s->u.copy.src.whole &&
		       op->buf == s->u.copy.src.var && op->reg == &s->u.copy.dst;
	case TC_FUSE_MAP:
		return s->kind == TC_ST_FOR &&
		       s->u.loop.kind == TC_LOOP_PARALLEL && op->body &&
		       op->body->kind == TC_ST_BLOCK;
	case TC_FUSE_REDUCE:
		return s->kind == TC_ST_REDUCE && op->buf == s->u.reduce.src.var;
	default:
		return false;
	}
}

/* kernel->fusions (passes/cpu_fuse.c): each run takes statements of a
 * block of the body, in order and apart from every other run's; its ops
 * are the recomputed ones, then one per statement, each of the kind its
 * statement is, over the run's columns; it recomputes only buffers, from
 * earlier runs of its block. */
/* The vars named in a statement tree (by index, into a table of
 * kernel->vars.len + 1), or whether it holds a loop. */
typedef struct Named {
	const TcKernel *k;
	bool *seen;    /* NULL: only look for loops */
	bool loop;     /* it holds a FOR */
} Named;

static void
named_var(void *ctx, const TcVar *var)
{
	Named *n = ctx;
	if (n->seen && var->kind != TC_VAR_TUNABLE && var->index >= 0 &&
	    var->index <= n->k->vars.len)
		n->seen[var->index] = true;
}

static TcVisit
named_expr(void *ctx, const TcExpr *e)
{
	if (e->kind == TC_EX_VAR)
		named_var(ctx, e->u.var);
	else if (e->kind == TC_EX_LOAD)
		named_var(ctx, e->u.load.var);
	return TC_VISIT_INTO;
}

static TcVisit
named_stmt(void *ctx, const TcStmt *s)
{
	Named *n = ctx;
	n->loop |= s->kind == TC_ST_FOR;
	return TC_VISIT_INTO;
}

static void
names_of(Named *n, const TcStmt *s)
{
	TcVisitor vis = { .expr = named_expr, .stmt = named_stmt,
			  .var = named_var, .ctx = n };
	tc_stmt_visit(s, &vis);
}

/* A MAP's main version (passes/cpu_edge.c): a BLOCK without loops naming
 * nothing the nest's body does not; no other op has one. */
static void
check_main(Verifier *v, const TcKernel *k, int f, const TcFuseOp *op)
{
	if (!op->main)
		return;
	TcLoc at = op->s ? op->s->loc : k->loc;
	if (op->kind != TC_FUSE_MAP || !op->body) {
		fail(v, at, "run %d: a main version of an op that is not a "
		     "nest", f);
		return;
	}
	if (op->main->kind != TC_ST_BLOCK) {
		fail(v, at, "run %d: the nest's main version is a %s, not a "
		     "block", f, tc_stmtkind_name(op->main->kind));
		return;
	}
	size_t nv = (size_t)k->vars.len + 1;
	Named body = { k, calloc(nv, 1), false };
	Named main = { k, calloc(nv, 1), false };
	if (!body.seen || !main.seen)
		tc_bug(__FILE__, __LINE__, "out of memory");
	names_of(&body, op->body);
	names_of(&main, op->main);
	if (main.loop)
		fail(v, at, "run %d: the nest's main version holds a loop", f);
	for (size_t i = 0; i < nv; i++)
		if (main.seen[i] && !body.seen[i]) {
			fail(v, at, "run %d: the nest's main version names '%s', "
			     "which its body does not", f,
			     name_of(k->vars.items[i]));
			break;
		}
	free(body.seen);
	free(main.seen);
}

/* Whether tile dim t of copy op surely lies inside its tensor: a
 * constant origin and extent that hold the whole tile and, for the first
 * dim, every dim the tile does not cover at an index inside it for every
 * block (what the edge pass leaves unmarked). */
static bool
surely_inside(const TcKernel *k, const TcFuseOp *op, int t)
{
	const TcRegion *r = op->reg;
	int vd = r->dims[t];
	long long o, n;
	if (!tc_expr_const(r->origin[vd], &o) ||
	    !tc_expr_const(r->var->shape[vd], &n) || o < 0 ||
	    o + tc_var_extent(op->buf, t) > n)
		return false;
	for (int d = 0; t == 0 && d < r->var->rank; d++) {
		bool covered = false;
		for (int u = 0; u < op->buf->rank; u++)
			covered |= r->dims[u] == d;
		if (!covered &&
		    !tc_index_in_extent(k, r->origin[d], r->var->shape[d]))
			return false;
	}
	return true;
}

typedef struct Around {
	const TcStmt *find; /* a statement */
	const TcVar *var;   /* a loop var */
	bool in_loop;       /* inside var's loop, while searching */
	bool found;         /* find is inside var's loop */
} Around;

static TcVisit
find_around(void *ctx, const TcStmt *s)
{
	Around *ar = ctx;
	if (s->kind == TC_ST_FOR && s->u.loop.var == ar->var) {
		Around in = { .find = ar->find, .var = ar->var, .in_loop = true };
		TcVisitor vis = { .stmt = find_around, .ctx = &in };
		tc_stmt_visit(s->u.loop.body, &vis);
		ar->found |= in.found;
		return ar->found ? TC_VISIT_STOP : TC_VISIT_OVER;
	}
	if (s == ar->find && ar->in_loop) {
		ar->found = true;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

typedef struct NextOk {
	const TcKernel *k;
	const TcStmt *block; /* the run's */
	bool ok;
} NextOk;

/* What a next block's origin may name: what does not vary in the block,
 * and the vars of the loops around the run (cpu_ahead.c, along_loops). */
static TcVisit
next_expr_ok(void *ctx, const TcExpr *e)
{
	NextOk *n = ctx;
	TcVarKind kind = e->kind == TC_EX_VAR ? e->u.var->kind : TC_VAR_TUNABLE;
	bool around = false;
	if (kind == TC_VAR_LOOP) {
		Around ar = { .find = n->block, .var = e->u.var };
		TcVisitor vis = { .stmt = find_around, .ctx = &ar };
		tc_stmt_visit(n->k->body, &vis);
		around = ar.found;
	}
	if (e->kind == TC_EX_LOAD || (kind != TC_VAR_TUNABLE &&
				      kind != TC_VAR_SCALAR &&
				      kind != TC_VAR_BLOCK && !around)) {
		n->ok = false;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

/* The loops of run f (passes/cpu_edge.c, cpu_vector.c, cpu_ahead.c):
 * marks only on ops of their kind; once the edges are marked, every dim
 * left unmarked surely inside its tensor, and a main loop that ends
 * somewhere when a copy it reads is partial; a vector loop only where
 * every op has its vector form; a prefetch of the next block from one
 * two-dimensional copy, at an origin that names nothing that varies in
 * the block. */
static void
check_run_loops(Verifier *v, const TcKernel *k, int f, const TcFusion *F)
{
	TcLoc at = F->block->loc;
	int ends = 0, nexts = 0;
	bool partial_read = false;
	for (int o = 0; o < F->n; o++) {
		const TcFuseOp *op = &F->ops[o];
		bool copy = op->kind == TC_FUSE_LOAD ||
			    op->kind == TC_FUSE_STORE;
		bool read = op->kind == TC_FUSE_LOAD &&
			    (op->elided || op->rank == F->rank);
		bool partial = op->partial_rows || op->partial_cols;
		if ((partial && (!copy || !F->edged)) ||
		    (op->partial_rows && op->buf->rank != 2))
			fail(v, at, "run %d: op %d has partial %s it cannot "
			     "have", f, o, op->partial_rows ? "rows" : "columns");
		if ((op->ends_main || op->zero_past) && (!read || !partial))
			fail(v, at, "run %d: op %d %s the main loop but is no "
			     "partial copy the loop reads", f, o,
			     op->ends_main ? "ends" : "reads zero past");
		if (op->streamed && (op->kind != TC_FUSE_STORE || !F->vec ||
				     op->rank != F->rank ||
				     !tc_vector_row_copy(op)))
			fail(v, at, "run %d: op %d is streamed but no copy out "
			     "of a vector loop's rows", f, o);
		else if (op->streamed && !k->streams)
			fail(v, at, "run %d: op %d is streamed in a kernel whose "
			     "threads do not fence (streams past the cache)", f,
			     o);
		ends += op->ends_main;
		nexts += op->next_block;
		partial_read |= read && partial;
		if (copy && F->edged) {
			int R = op->buf->rank;
			bool rows = R == 2 && !op->partial_rows;
			if ((rows && !surely_inside(k, op, 0)) ||
			    (!op->partial_cols && !surely_inside(k, op, R - 1)))
				fail(v, at, "run %d: op %d's tensor may end "
				     "inside its tile, which it does not mark "
				     "partial", f, o);
		}
		if (F->vec) {
			bool ok = true;
			if (op->kind == TC_FUSE_MAP)
				ok = op->vector;
			else if (read)
				ok = tc_vector_row_copy(op);
			else if (op->kind == TC_FUSE_REDUCE)
				ok = tc_vector_sum(op);
			if (!ok)
				fail(v, at, "run %d: a vector loop, but op %d "
				     "has no vector form", f, o);
		}
		if (op->next_block &&
		    (op->kind != TC_FUSE_LOAD || op->buf->rank != 2 ||
		     op->reg->var->rank != 2))
			fail(v, at, "run %d: op %d prefetches the next block's "
			     "rows but is no two-dimensional copy in", f, o);
	}
	if (F->vec && !F->edged)
		fail(v, at, "run %d: a vector loop before its edges are marked",
		     f);
	if (F->edged && partial_read && ends == 0)
		fail(v, at, "run %d: its loop reads partial copies but its "
		     "main loop ends nowhere", f);
	for (int o = 0; o < F->n && ends != 1; o++)
		if (F->ops[o].zero_past)
			fail(v, at, "run %d: op %d reads zero past a main loop "
			     "that ends at %d extents", f, o, ends);
	bool next = F->next[0] || F->next[1];
	if (next != (nexts == 1) || (next && !(F->next[0] && F->next[1])) ||
	    nexts > 1) {
		fail(v, at, "run %d: %d ops prefetch the next block's rows, %s",
		     f, nexts, next ? "with an origin" : "without an origin");
		return;
	}
	if (!next)
		return;
	NextOk n = { .k = k, .block = F->block,
		     .ok = F->rank == 2 && F->next_elems > 0 && k->block[0] &&
			   !k->grid[1] && !k->grid[2] };
	for (int d = 0; d < 2 && n.ok; d++) {
		TcVisitor vis = { .expr = next_expr_ok, .ctx = &n };
		tc_expr_visit(F->next[d], &vis);
	}
	if (!n.ok)
		fail(v, at, "run %d: a prefetch of the next block's rows that "
		     "is not two-dimensional in a one-dimensional grid, or "
		     "whose origin names what varies in the block other than "
		     "the loops around the run", f);
}

static void
check_fusions(Verifier *v, const TcKernel *k)
{
	int nexts = 0;
	for (int f = 0; f < k->fusions.len; f++) {
		const TcFusion *F = k->fusions.items[f];
		const TcStmt *blk = F->block;
		if (!blk || blk->kind != TC_ST_BLOCK ||
		    !holds_block(k->body, blk)) {
			fail(v, k->loc, "run %d: not a block of kernel '%s'", f,
			     k->name);
			continue;
		}
		if (F->first < 0 || F->nstmts < 2 ||
		    F->first + F->nstmts > blk->u.block.body.len ||
		    F->nagain < 0 || F->n != F->nagain + F->nstmts ||
		    !F->ops || !F->elided || F->rank < 1 || F->rank > 2) {
			fail(v, blk->loc, "run %d: malformed (statements %d + %d "
			     "of %d, %d ops)", f, F->first, F->nstmts,
			     blk->u.block.body.len, F->n);
			continue;
		}
		bool matched = true;
		for (int o = 0; o < F->n; o++) {
			const TcFuseOp *op = &F->ops[o];
			if (!fuse_op_matches(op) || op->cols != F->cols ||
			    op->rank > F->rank) {
				matched = false;
				fail(v, op->s ? op->s->loc : blk->loc, "run %d: "
				     "op %d does not match its statement", f, o);
			} else if (o >= F->nagain &&
				 op->s != blk->u.block.body.items[F->first + o -
								  F->nagain])
				fail(v, op->s->loc, "run %d: op %d is not statement "
				     "%d of its block", f, o,
				     F->first + o - F->nagain);
			check_main(v, k, f, op);
			if (op->vector && op->kind != TC_FUSE_MAP)
				fail(v, blk->loc, "run %d: op %d has a vector form "
				     "but is not a nest", f, o);
		}
		if (matched)
			check_run_loops(v, k, f, F);
		if (F->next[0] && ++nexts == 2)
			fail(v, blk->loc, "run %d: a second run prefetches the "
			     "next block's rows", f);
		for (int i = 0; F->lanes && i < k->vars.len; i++) {
			const TcVar *l = k->vars.items[i];
			if (F->lanes[i] && l->kind != TC_VAR_LOCAL)
				fail(v, blk->loc, "run %d: '%s' is not a local but "
				     "varies over the lanes", f, name_of(l));
		}
		for (int r = 0; r < F->nrecomputed; r++) {
			const TcFusion *G = F->from[r] >= 0 &&
						    F->from[r] < k->fusions.len
					    ? k->fusions.items[F->from[r]] : NULL;
			if (!F->again[r] || F->again[r]->kind != TC_VAR_BUFFER ||
			    !G || G->block != blk ||
			    G->first + G->nstmts > F->first)
				fail(v, blk->loc, "run %d: recomputes '%s' from "
				     "no earlier run of its block", f,
				     F->again[r] ? name_of(F->again[r]) : "?");
		}
		for (int g = 0; g < f; g++) {
			const TcFusion *G = k->fusions.items[g];
			if (G->block == blk && G->first < F->first + F->nstmts &&
			    F->first < G->first + G->nstmts)
				fail(v, blk->loc, "runs %d and %d overlap", g, f);
		}
	}
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *b = k->vars.items[i];
		if (b->unstored && b->kind != TC_VAR_BUFFER)
			fail(v, b->loc, "'%s' is not a buffer but not stored",
			     name_of(b));
	}
}

/* kernel->frame_bytes (passes/cpu_frame.c), once set, holds every buffer
 * the kernel declares at one to eight bytes an element (kernel->strip of
 * each one a strip's blocks keep their own of); stack_bytes the
 * same of the buffers that are stored (not var->unstored), the rest the
 * same of those kept in registers. */
static void
check_frame(Verifier *v, const TcKernel *k)
{
	if (k->frame_bytes == 0)
		return;
	long long elems = 0, stored = 0;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *b = k->vars.items[i];
		if (b->kind != TC_VAR_BUFFER)
			continue;
		long long n = b->each_block && k->strip > 1 ? k->strip : 1;
		for (int d = 0; d < b->rank; d++)
			n *= tc_var_extent(b, d);
		elems += n;
		if (!b->unstored)
			stored += n;
	}
	if (k->frame_bytes < elems || k->frame_bytes > 8 * elems)
		fail(v, k->loc, "kernel '%s': frame of %lld bytes for %lld "
		     "buffer elements", k->name, k->frame_bytes, elems);
	long long kept = k->frame_bytes - k->stack_bytes; /* in registers */
	if (k->stack_bytes < stored || k->stack_bytes > 8 * stored ||
	    kept < elems - stored || kept > 8 * (elems - stored))
		fail(v, k->loc, "kernel '%s': %lld of its frame's %lld bytes "
		     "stored for %lld stored buffer elements", k->name,
		     k->stack_bytes, k->frame_bytes, stored);
}

/* Whether statement s names var x (reads, writes or declares it). */
typedef struct Names {
	const TcVar *x;
	bool found;
} Names;

static TcVisit
names_expr(void *ctx, const TcExpr *e)
{
	Names *n = ctx;
	if ((e->kind == TC_EX_VAR && e->u.var == n->x) ||
	    (e->kind == TC_EX_LOAD && e->u.load.var == n->x))
		n->found = true;
	return TC_VISIT_INTO;
}

static void
names_var(void *ctx, const TcVar *v)
{
	Names *n = ctx;
	if (v == n->x)
		n->found = true;
}

static bool
stmt_names(const TcStmt *s, const TcVar *x)
{
	Names n = { x, false };
	TcVisitor vis = { .expr = names_expr, .var = names_var, .ctx = &n };
	tc_stmt_visit(s, &vis);
	return n.found;
}

typedef struct EachWalk {
	Verifier *v;
	const TcKernel *k;
	const TcStmt *top, *loop_body; /* where each-block statements may be */
	bool in_place;                 /* the statement being walked is in one */
} EachWalk;

static TcVisit
stray_each(void *ctx, const TcStmt *s)
{
	EachWalk *w = ctx;
	if (s->each_block)
		fail(w->v, s->loc, "kernel '%s': a statement runs once a block "
		     "of a strip outside the top level and the strip's loop",
		     w->k->name);
	return TC_VISIT_INTO;
}

/* One sequence a strip prints in two parts: its each-block statements
 * are exactly those that name grid x or an each-block buffer (other than
 * the buffers' declarations); the strip loop itself is shared. */
static void
check_strip_seq(Verifier *v, const TcKernel *k, const TcStmt *seq)
{
	for (int i = 0; i < seq->u.block.body.len; i++) {
		const TcStmt *s = seq->u.block.body.items[i];
		if (s == k->strip_loop) {
			if (s->each_block)
				fail(v, s->loc, "kernel '%s': the strip's loop "
				     "runs once a block", k->name);
			continue;
		}
		bool each = stmt_names(s, k->block[0]);
		for (int j = 0; !each && j < k->vars.len; j++) {
			const TcVar *b = k->vars.items[j];
			if (b->each_block && stmt_names(s, b) &&
			    !(s->kind == TC_ST_DECL && s->u.decl.var == b))
				each = true;
		}
		if (each && !s->each_block)
			fail(v, s->loc, "kernel '%s': a statement that names grid "
			     "x or a block's own buffer runs once for the "
			     "strip", k->name);
		/* A nested each-block statement is allowed; not here. */
		if (s->each_block || s->kind != TC_ST_BLOCK) {
			EachWalk w = { v, k, NULL, NULL, false };
			TcVisitor vis = { .stmt = stray_each, .ctx = &w };
			const TcStmt *inner[3] = { NULL, NULL, NULL };
			if (s->kind == TC_ST_FOR)
				inner[0] = s->u.loop.body;
			else if (s->kind == TC_ST_IF) {
				inner[0] = s->u.cond.then;
				inner[1] = s->u.cond.els;
			}
			for (int m = 0; m < 2; m++)
				if (inner[m])
					tc_stmt_visit(inner[m], &vis);
		}
	}
}

/* kernel->strip (passes/cpu_strip.c): a strip needs grid x's block and
 * a top-level serial or pipelined loop; each-block statements sit at
 * the top level or in that loop's body; each-block buffers are declared
 * at the top level.  Without a strip nothing is marked. */
static void
check_strip(Verifier *v, const TcKernel *k)
{
	if (k->strip <= 1) {
		for (int i = 0; i < k->vars.len; i++) {
			const TcVar *b = k->vars.items[i];
			if (b->each_block)
				fail(v, b->loc, "'%s' is kept by each block of a "
				     "strip the kernel does not have", b->name);
		}
		EachWalk w = { v, k, NULL, NULL, false };
		TcVisitor vis = { .stmt = stray_each, .ctx = &w };
		tc_stmt_visit(k->body, &vis);
		return;
	}
	const TcStmt *loop = k->strip_loop;
	bool top = false;
	for (int i = 0; loop && i < k->body->u.block.body.len; i++)
		top |= k->body->u.block.body.items[i] == loop;
	if (!k->grid[0] || !k->block[0] || !loop || !top ||
	    loop->kind != TC_ST_FOR || loop->u.loop.kind == TC_LOOP_PARALLEL) {
		fail(v, k->loc, "kernel '%s': a strip of %d blocks without "
		     "grid x's block or a top-level serial loop", k->name,
		     k->strip);
		return;
	}
	/* The text names the loop by its each-block statements. */
	bool each = false;
	for (int i = 0; i < loop->u.loop.body->u.block.body.len; i++)
		each |= ((const TcStmt *)loop->u.loop.body->u.block.body
				 .items[i])->each_block;
	if (!each)
		fail(v, loop->loc, "kernel '%s': the strip's loop holds no "
		     "each-block statement", k->name);
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *b = k->vars.items[i];
		if (!b->each_block)
			continue;
		bool declared = false;
		for (int j = 0; j < k->body->u.block.body.len; j++) {
			const TcStmt *s = k->body->u.block.body.items[j];
			declared |= s->kind == TC_ST_DECL && s->u.decl.var == b;
		}
		if (b->kind != TC_VAR_BUFFER || !declared)
			fail(v, b->loc, "'%s' is kept by each block of a strip "
			     "but is not a buffer of the kernel's top level",
			     b->name);
	}
	check_strip_seq(v, k, k->body);
	check_strip_seq(v, k, loop->u.loop.body);
}

int
tc_verify(const TcProgram *p, const char *after_pass, TcDiags *d)
{
	Verifier v = { .prog = p, .d = d,
		       .pass = after_pass ? after_pass : "?" };
	for (int i = 0; i < p->tunables.len; i++) {
		const TcVar *t = p->tunables.items[i];
		if (!t || t->kind != TC_VAR_TUNABLE)
			fail(&v, t ? t->loc : (TcLoc){ 0 },
			     "tunable %d is not a tunable", i);
	}
	for (int i = 0; i < p->kernels.len; i++) {
		const TcKernel *k = p->kernels.items[i];
		if (!k) {
			fail(&v, (TcLoc){ 0 }, "kernel %d is NULL", i);
			continue;
		}
		size_t n = (size_t)k->vars.len + 1;
		v.kernel = k;
		v.bounded = 0;
		v.in_scope = calloc(n, 1);
		v.decls = calloc(n, sizeof *v.decls);
		v.ndecls = 0;
		if (!v.in_scope || !v.decls)
			tc_bug(__FILE__, __LINE__, "out of memory");
		/* Parameters and block indices are in scope throughout;
		 * their kinds are not scoped, so nothing to mark. */
		check_kernel(&v, k);
		check_frame(&v, k);
		check_fusions(&v, k);
		check_strip(&v, k);
		free(v.in_scope);
		free(v.decls);
		v.in_scope = NULL;
		v.decls = NULL;
	}
	return v.errors;
}

/* Statements only some targets have: the expanded pipeline and barriers
 * (GPU targets, whose threads share a block), prefetches (openmp); and,
 * for IR about to be printed, what the target's passes decide. */
typedef struct TargetCheck {
	const TcTarget *t;
	bool scheduled; /* the IR must be the target's last pass's */
	TcDiags *d;
	int errors;
} TargetCheck;

static void target_fail(TargetCheck *c, TcLoc loc, const char *fmt, ...)
	TC_PRINTF(3, 4);

static void
target_fail(TargetCheck *c, TcLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!c->errors)
		tc_vdiag(c->d, TC_ERROR, loc, fmt, ap);
	va_end(ap);
	c->errors++;
}

static TcVisit
target_stmt(void *ctx, const TcStmt *s)
{
	TargetCheck *c = ctx;
	const TcTarget *t = c->t;
	bool gpu_only = s->kind == TC_ST_BARRIER ||
			(s->kind >= TC_ST_ASYNC_COPY &&
			 s->kind <= TC_ST_STAGE_BAR_WAIT);
	bool cpu_only = s->kind == TC_ST_PREFETCH;
	if ((gpu_only && !t->simt) || (cpu_only && t->simt)) {
		target_fail(c, s->loc, "a %s statement, which the %s target "
			    "does not have: the IR is for a %s target",
			    tc_stmtkind_name(s->kind), t->name,
			    gpu_only ? "GPU" : "CPU");
		return TC_VISIT_STOP;
	}
	if (s->kind == TC_ST_FOR && s->u.loop.pairs &&
	    t->kind != TC_TARGET_CUDA)
		target_fail(c, s->loc, "a loop in half pairs, which the %s "
			    "target does not print", t->name);
	if (s->kind == TC_ST_GEMM && s->u.gemm.wgmma_n && !t->wgmma)
		target_fail(c, s->loc, "a wgmma gemm, which %s %s does not "
			    "have", t->name, t->arch);
	if (!c->scheduled)
		return c->errors ? TC_VISIT_STOP : TC_VISIT_INTO;
	const TcRegion *r = NULL;
	switch (s->kind) {
	case TC_ST_COPY: case TC_ST_ATOMIC_ADD: case TC_ST_PREFETCH:
		r = &s->u.copy.dst;
		if (t->simt && s->kind != TC_ST_PREFETCH &&
		    s->u.copy.lower == TC_COPY_ANY)
			target_fail(c, s->loc, "a %s not lowered (the IR is "
				    "before expand_pipeline)",
				    tc_stmtkind_name(s->kind));
		break;
	case TC_ST_GEMM:
		r = &s->u.gemm.c;
		if (!t->simt && s->u.gemm.cpu.kind == TC_CPU_GEMM_NONE)
			target_fail(c, s->loc, "a gemm cpu_gemm has not "
				    "scheduled");
		break;
	case TC_ST_FILL: r = &s->u.fill.dst; break;
	case TC_ST_REDUCE: r = &s->u.reduce.dst; break;
	case TC_ST_REDUCE_ALL: r = &s->u.reduce_all.src; break;
	case TC_ST_ARG_REDUCE: r = &s->u.arg_reduce.dst; break;
	default: break;
	}
	if (r && !r->bounded)
		target_fail(c, s->loc, "a region the bounds pass has not "
			    "marked (the IR is before it)");
	return c->errors ? TC_VISIT_STOP : TC_VISIT_INTO;
}

bool
tc_verify_target(const TcProgram *p, const TcTarget *t, bool scheduled,
		 TcDiags *d)
{
	TargetCheck c = { t, scheduled, d, 0 };
	for (int i = 0; i < p->kernels.len && !c.errors; i++) {
		const TcKernel *k = p->kernels.items[i];
		if (k->tmaps.len && !t->tma)
			target_fail(&c, k->loc, "kernel '%s' has tensor maps, "
				    "which %s %s does not", k->name, t->name,
				    t->arch);
		if (k->streams && t->simt)
			target_fail(&c, k->loc, "kernel '%s' streams rows past "
				    "the CPU's cache, on %s %s", k->name,
				    t->name, t->arch);
		if (k->bind_close && t->simt)
			target_fail(&c, k->loc, "kernel '%s' binds its threads "
				    "to CPU cores (bind close), on %s %s",
				    k->name, t->name, t->arch);
		for (int j = 0; j < k->vars.len && !c.errors; j++) {
			const TcVar *v = k->vars.items[j];
			TcLayoutKind want = TC_LAYOUT_NONE;
			if (t->mma)
				want = t->mma->layout;
			if (tc_layout_is_matrix(v->layout.kind) &&
			    v->layout.kind != want &&
			    !(t->wgmma && v->layout.kind == t->wgmma->layout))
				target_fail(&c, v->loc, "'%s' has a matrix layout "
					    "%s %s does not have", v->name,
					    t->name, t->arch);
			else if (v->layout.kind != TC_LAYOUT_NONE && !t->simt)
				target_fail(&c, v->loc, "'%s' has a GPU layout",
					    v->name);
			else if (scheduled && t->simt &&
				 v->kind == TC_VAR_BUFFER &&
				 v->scope != TC_SCOPE_SHARED &&
				 v->layout.kind == TC_LAYOUT_NONE)
				target_fail(&c, v->loc, "'%s' has no layout (the "
					    "IR is before the layout pass)",
					    v->name);
		}
		for (int f = 0; f < k->fusions.len && !c.errors; f++) {
			const TcFusion *F = k->fusions.items[f];
			if (F->vec && (t->explicit_lanes <= 0 ||
				       F->cols < t->explicit_lanes))
				target_fail(&c, F->block->loc, "run %d of %lld "
					    "columns runs on explicit vectors, "
					    "which %s %s has none of or more "
					    "lanes", f, F->cols, t->name,
					    t->arch);
		}
		TcVisitor v = { .stmt = target_stmt, .ctx = &c };
		if (!c.errors)
			tc_stmt_visit(k->body, &v);
	}
	return c.errors == 0;
}
