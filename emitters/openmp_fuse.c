/*
 * openmp_fuse.c - the OpenMP backend's row-wise runs printed: block-level
 * statements done as one pass per row.
 *
 * Input: the runs the fuse pass planned (kernel->fusions, TcFusion,
 * passes/cpu_fuse.c, which says which statements join and which buffers
 * stay in registers) and openmp.c's Emitter.  Output: while openmp.c
 * prints a block, tc_omp_fusion_at says whether a run starts at a
 * statement and tc_omp_emit_fusion prints it in place of its statements,
 * through openmp.c's printing helpers (openmp.h).
 *
 * For each row of the tile: the rows that are copied in, then one
 * vectorized loop over the row's elements doing every statement's work on
 * each element in turn, then the row's reduction results and the rows
 * copied out.  A REDUCE keeps an accumulator per row with an omp simd
 * reduction clause; float max and min reduce integer keys (tilec_max_key:
 * clang does not vectorize an omp simd max-reduction of floats).  A
 * buffer the run keeps in registers is a local of the row loop; a dead
 * run prints as a comment.  A copy in reads the tensor's elements in the
 * loop, into the local or into the buffer (a stored buffer over the
 * columns alone is copied once, before the rows).  Element loads run in
 * two loops: the columns inside the tensors, then (for partial tiles
 * only) the columns past an edge, which read as zero; gcc keeps a sum
 * reduction in a register only when the load is not masked, and an
 * element copy inside the loop costs less than a row copy before it
 * (rmsnorm: +8 %).
 *
 * The main loop runs each nest's main version (TcFuseOp.main,
 * passes/cpu_edge.c: the tests its columns decide, folded) and ends
 * where the edge pass says (TcFuseOp.ends_main), the edge loop the body
 * as written.  Whether the main loop runs on explicit vectors
 * (openmp_vec.c) and which rows it writes from them is the vector
 * pass's (TcFusion.vec, TcFuseOp.streamed); which run prefetches the
 * next block's rows, the ahead pass's (TcFusion.next).
 */
#include "openmp.h"

#include <stdio.h>
#include <string.h>

/* A statement's work in a run as it is printed: the pass's plan and the
 * names printing gives it. */
typedef struct FuseOp {
	const TcFuseOp *p;    /* the plan (passes/cpu_fuse.c) */
	CopyPlan cp;          /* LOAD, STORE: names of its bounds */
	const char *valid;    /* elided LOAD: the columns of the current row
				 inside the tensor, NULL if all are */
	const char *acc;      /* REDUCE: the accumulator's name */
	const char *vacc;     /* REDUCE: its vector's, in a vector loop */
	const char *vacc2;    /* REDUCE: the other vector sum it alternates
			       * with (tilec_vswap) */
	bool braced;          /* MAP: printed in braces, loop vars aliased */
	const char *bytes;    /* streamed STORE: the name of its tensor's size */
} FuseOp;

/* A run as it is printed. */
struct Fusion {
	const TcFusion *p;    /* the plan */
	int n;                /* p->n */
	FuseOp *ops;          /* one per p->ops[k] */
};

/* Whether s stores an element of buffer v (a Count predicate). */
static bool
is_store(const TcStmt *s, const void *v)
{
	return s->kind == TC_ST_ASSIGN && s->u.assign.dst->kind == TC_EX_LOAD &&
	       s->u.assign.dst->u.load.var == v;
}

/* --- Printing a run ---------------------------------------------------------- */

/* A name for the nest, reserved until the run is printed. */
static const char *
reserve(Emitter *E, const char *base)
{
	const char *name = tc_omp_fresh(E, base);
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
		      tc_omp_expr_text(E, o, TC_PREC_COMMA + 1));
	return name;
}

/* Fill op->cp's names: origins, valid extents (of the dims the edge pass
 * found partial), the fixed condition folded into the first extent, as
 * plan_copy does for one copy. */
static void
bounds_copy(Emitter *E, Bounds *bd, FuseOp *op, const char *const *idx)
{
	CopyPlan *cp = &op->cp;
	*cp = (CopyPlan){ .tile = op->p->buf, .reg = op->p->reg, .ten = op->p->reg->var,
			  .rank = op->p->buf->rank };
	int R = cp->rank;
	for (int t = 0; t < R; t++)
		cp->idx[t] = idx[2 - R + t];
	tc_omp_fixed_dims(E, cp);
	for (int t = 0; t < R; t++) {
		bool row = R == 2 && t == 0;
		int vd = cp->reg->dims[t];
		const TcExpr *o = cp->reg->origin[vd];
		cp->origin[t] = bounds_origin(E, bd, o, row ? "row0" : "col0");
		const char *tile_ext =
			tc_omp_expr_text(E, cp->tile->shape[t], 0);
		const char *fixed = t == 0 ? cp->fixed : NULL;
		if (!(row ? op->p->partial_rows : op->p->partial_cols)) {
			cp->ext[t] = tile_ext;
			cp->partial[t] = false;
			continue;
		}
		cp->partial[t] = true;
		const char *shape = tc_omp_expr_text(E, cp->ten->shape[vd],
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
	return tc_omp_tensor_value(E, &op->cp);
}

/* How many times the run writes v (a copy in counts once). */
static int
writes_of(const Fusion *F, const TcVar *v)
{
	int n = 0;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->p->kind == TC_FUSE_LOAD && op->p->buf == v)
			n++;
		else if (op->p->kind == TC_FUSE_MAP)
			n += tc_omp_count_nodes(
				NULL, op->p->body,
				(Count){.stmt = is_store, .arg = v});
	}
	return n;
}

/* The type a fused reduction accumulates in (tc_reduce_type); float
 * max and min reduce int keys. */
static TcDtype
acc_type(const FuseOp *op)
{
	return tc_reduce_type(op->p->s->u.reduce.dst.var, op->p->buf);
}

static bool
keyed(const FuseOp *op)
{
	return acc_type(op) == TC_DT_F32 && op->p->s->u.reduce.op != TC_RED_SUM;
}

/* The key function of a keyed reduction. */
static const char *
key_fn(const FuseOp *op)
{
	return op->p->s->u.reduce.op == TC_RED_MIN ? "tilec_min_key" : "tilec_max_key";
}

/* Whether a copy in reads its elements in the element loop: every copy
 * but one over the columns alone into a stored buffer, which copies its
 * row once before the rows. */
static bool
in_loop(const Fusion *F, const FuseOp *op)
{
	return op->p->kind == TC_FUSE_LOAD && (op->p->elided || op->p->rank == F->p->rank);
}

/* `[const] T v` for the local that holds an elided buffer's element
 * (with vec, its TILEC_VL elements). */
static const char *
elided_decl(Emitter *E, const Fusion *F, const TcVar *v, bool vec)
{
	return tc_fmt(E->a, "%s%s %s", writes_of(F, v) == 1 ? "const " : "",
		      vec ? "tilec_vf" : tc_omp_value_type(v->dtype), v->name);
}

/* A nest's body as the main loop (the edge pass's version, which knows
 * its columns are inside the tensors) or the edge loop prints it. */
static const TcStmt *
map_body(const FuseOp *op, bool edge)
{
	return !edge && op->p->main ? op->p->main : op->p->body;
}

/* The explicit-vector row accesses of a tensor's element type (the
 * vector pass allows f32, f16 and bf16). */
static const char *
vector_load(TcDtype t)
{
	return t == TC_DT_F16 ? "tilec_vload_f16"
	       : t == TC_DT_BF16 ? "tilec_vload_bf16" : "tilec_vload";
}

static const char *
vector_stream(TcDtype t)
{
	return t == TC_DT_F16 ? "tilec_vstream_f16("
	       : t == TC_DT_BF16 ? "tilec_vstream_bf16(" : "tilec_vstream(";
}

/* The loop body: each op's work on element (idx[0], idx[1]), or with vec
 * on the TILEC_VL elements from idx[1] on (openmp_vec.c). */
static void
emit_fused_body(Emitter *E, const Fusion *F, const char *const *idx,
		bool edge, bool vec)
{
	TcBuf *b = E->out;
	bool *declared =
		tc_alloc(E->a, ((size_t)E->k->vars.len + 1) * sizeof *declared);
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->p->kind != TC_FUSE_MAP || !op->braced)
			continue;
		for (int v = 0; v < E->k->vars.len; v++) {
			const TcVar *var = E->k->vars.items[v];
			if (F->p->elided[v] && !declared[v] &&
			    (tc_stmt_touches(op->p->body, NULL, var) & TC_ROLE_WRITE)) {
				tc_buf_printf(b, "%s %s;\n",
					      vec ? "tilec_vf"
						  : tc_omp_value_type(var->dtype),
					      var->name);
				declared[v] = true;
			}
		}
	}
	const bool *saved = E->elided;
	E->elided = F->p->elided;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		switch (op->p->kind) {
		case TC_FUSE_LOAD: {
			if (!in_loop(F, op))
				break;
			const char *val = elided_value(E, op);
			if (edge && op->valid) {
				/* Past the one edge the main loop stops at,
				 * nothing is inside (zero_past); else test
				 * this copy's. */
				const char *in = rows_inside(E, op, idx[0]);
				const char *test = in;
				if (op->cp.partial[op->cp.rank - 1]) {
					const char *c = tc_fmt(E->a, "%s < %s", idx[1],
							       op->cp.ext[op->cp.rank - 1]);
					test = in ? tc_fmt(E->a, "%s && %s", in, c) : c;
				}
				val = op->p->zero_past
					      ? "0"
					      : tc_fmt(E->a, "%s ? %s : 0", test, val);
			}
			/* A buffer copied in twice is declared once. */
			bool first = !declared[op->p->buf->index];
			declared[op->p->buf->index] = true;
			if (vec) {
				val = tc_fmt(E->a, "%s(&%s)",
					     vector_load(op->cp.ten->dtype),
					     tc_omp_tensor_elem(E, &op->cp, false));
				if (!op->p->elided) {
					const char *args[] = {
						tc_fmt(E->a, "&%s",
						       tc_omp_elem(E, op->p->buf,
								   &idx[2 - op->p->rank])),
						val,
					};
					tc_omp_print_wrapped(E, "tilec_vstore(",
							     args, 2, ");");
					break;
				}
			}
			const char *head = tc_fmt(
				E->a, "%s =",
				!op->p->elided ? tc_omp_elem(E, op->p->buf,
							  &idx[2 - op->p->rank])
				: first ? elided_decl(E, F, op->p->buf, vec)
					: op->p->buf->name);
			tc_omp_print_text(E, head, val);
			break;
		}
		case TC_FUSE_STORE:
			break;
		case TC_FUSE_MAP: {
			const TcStmt *body = map_body(op, edge);
			if (op->braced) {
				tc_buf_puts(b, "{\n");
				b->indent++;
				for (int d = 2 - op->p->rank; d < 2; d++)
					if (strcmp(op->p->var[d]->name, idx[d]) != 0)
						tc_buf_printf(b, "const int %s = %s;\n",
							      op->p->var[d]->name, idx[d]);
			}
			for (int i = 0; i < body->u.block.body.len; i++) {
				const TcStmt *s = body->u.block.body.items[i];
				const TcVar *v = s->kind == TC_ST_ASSIGN &&
						 s->u.assign.dst->kind == TC_EX_LOAD
					? s->u.assign.dst->u.load.var : NULL;
				if (v && F->p->elided[v->index] && !declared[v->index]) {
					/* The run's first write of an
					 * elided buffer: its local. */
					declared[v->index] = true;
					tc_omp_line_directive(E, s->loc);
					const char *head = tc_fmt(
						E->a, "%s =",
						elided_decl(E, F, v, vec));
					if (vec) {
						tc_omp_print_text(
							E, head,
							tc_omp_vec_text(
								E, s->u.assign.value));
					} else {
						tc_omp_print_statement(
							E, head, s->u.assign.value,
							v->dtype);
					}
					continue;
				}
				if (vec)
					tc_omp_vec_emit_stmt(E, s);
				else
					tc_omp_emit_stmt(E, s);
			}
			if (op->braced) {
				b->indent--;
				tc_buf_puts(b, "}\n");
			}
			break;
		}
		case TC_FUSE_REDUCE: {
			const TcVar *src = op->p->buf;
			TcReduceOp rop = op->p->s->u.reduce.op;
			const char *se = F->p->elided[src->index]
						 ? src->name
						 : tc_omp_elem(E, src, idx);
			if (!vec)
				se = tc_omp_to_buffer(E, se, src->dtype,
						      acc_type(op));
			if (vec) {
				/* A sum of f32 (vectorizable). */
				if (!F->p->elided[src->index])
					se = tc_fmt(E->a, "tilec_vload(&%s)", se);
				tc_buf_printf(b, "%s += %s;\n", op->vacc, se);
				break;
			}
			if (!keyed(op)) {
				tc_buf_printf(b, "%s;\n",
					      tc_omp_reduce_step(E, rop,
								 acc_type(op),
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

/* The end of a row the vector loop streamed out (TcFuseOp.streamed): the
 * columns past its whole vectors (the grid's threads fence once after
 * their blocks: kernel->streams). */
static void
print_row_rest(Emitter *E, const FuseOp *op, const char *i, const char *in)
{
	TcBuf *b = E->out;
	const CopyPlan *cp = &op->cp;
	const char *cols = cp->ext[cp->rank - 1];
	const char *rest = tc_fmt(E->a, "%s - %s %% TILEC_VL", cols, cols);
	if (in) {
		tc_buf_printf(b, "if (%s)\n", in);
		b->indent++;
	}
	const char *args[] = {
		tc_fmt(E->a, "&%s + %s", tc_omp_tensor_elem(E, cp, true), rest),
		cp->rank == 2 ? tc_fmt(E->a, "%s[%s] + %s", op->p->buf->name, i,
				       rest)
			      : tc_fmt(E->a, "%s + %s", op->p->buf->name, rest),
		tc_fmt(E->a, "%s %% TILEC_VL", cols),
	};
	tc_omp_print_wrapped(E,
			     tc_fmt(E->a, "tilec_store_%s(",
				    tc_omp_row_helper(cp->ten->dtype)),
			     args, 3, ");");
	if (in)
		b->indent--;
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
	for (int d = 2 - op->p->rank; d < 2; d++)
		if (strcmp(op->p->var[d]->name, idx[d]) != 0)
			return true;
	TcVec others = { 0 };
	for (int p = 0; p < F->n; p++)
		if (p != k)
			tc_omp_walk_vars(NULL, F->ops[p].p->s, push_name,
					 &(Names){E->a, &others});
	for (int v = 0; v < E->k->vars.len; v++)
		if (F->p->elided[v])
			tc_vec_push(E->a, &others,
				    (void *)((TcVar *)E->k->vars.items[v])->name);
	for (int i = 0; i < E->reserved.len; i++)
		tc_vec_push(E->a, &others, E->reserved.items[i]);
	const TcStmt *body = op->p->body;
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (s->kind == TC_ST_DECL && has_name(&others, s->u.decl.var->name))
			return true;
	}
	return false;
}

/* `tilec_load_T(row, &T[...], cols, width);` for a stored copy's row (or
 * whole rank-1 tile). */
static void
print_row_copy(Emitter *E, const FuseOp *op, const char *i)
{
	const CopyPlan *cp = &op->cp;
	int R = cp->rank;
	const char *helper = tc_omp_row_helper(cp->ten->dtype);
	const char *row = R == 2 ? tc_fmt(E->a, "%s[%s]", op->p->buf->name, i)
				 : op->p->buf->name;
	const char *start =
		tc_fmt(E->a, "&%s", tc_omp_tensor_elem(E, cp, true));
	const char *args[4];
	if (op->p->kind == TC_FUSE_LOAD) {
		args[0] = row;
		args[1] = start;
		args[2] = cp->ext[R - 1];
		args[3] = tc_omp_expr_text(E, cp->tile->shape[R - 1], 0);
		tc_omp_print_wrapped(E, tc_fmt(E->a, "tilec_load_%s(", helper),
				     args, 4, ");");
	} else {
		args[0] = start;
		args[1] = row;
		args[2] = cp->ext[R - 1];
		tc_omp_print_wrapped(E, tc_fmt(E->a, "tilec_store_%s(", helper),
				     args, 3, ");");
	}
}

/* --- The next block's rows --------------------------------------------------- */
/*
 * The run the ahead pass chose (passes/cpu_ahead.c) asks, one strip of
 * each row at a time, for the rows its next_block copy will read in the
 * next block (TcFusion.next: that copy's origin there), so they arrive
 * while this block computes.  A prefetch is a hint: it never faults or
 * changes a result; it is clipped to the tensor.
 */

typedef struct Ahead {
	const FuseOp *op;     /* the copy whose next rows are fetched */
	const char *origin[2];/* its next origins (declared names) */
	const char *ext[2];   /* and valid extents */
	long long strip;      /* elements per prefetch */
} Ahead;

/* Declare the next block's origins and extents of run F's prefetch;
 * false if F has none. */
static bool
print_ahead(Emitter *E, const Fusion *F, Ahead *ah)
{
	if (!F->p->next[0])
		return false;
	const FuseOp *op = NULL;
	for (int i = 0; i < F->n && !op; i++)
		if (F->ops[i].p->next_block)
			op = &F->ops[i];
	tc_assert(op);
	const TcVar *ten = op->p->reg->var;
	*ah = (Ahead){ .op = op, .strip = F->p->next_elems };
	ah->origin[0] = reserve(E, "next_row0");
	ah->origin[1] = reserve(E, "next_col0");
	ah->ext[0] = reserve(E, "next_rows");
	ah->ext[1] = reserve(E, "next_cols");
	TcBuf *b = E->out;
	for (int d = 0; d < 2; d++)
		tc_buf_printf(b, "const int %s = %s;\n", ah->origin[d],
			      tc_omp_expr_text(E, F->p->next[d], 0));
	for (int d = 0; d < 2; d++)
		tc_buf_printf(b, "const int %s = tilec_extent(%s, %s, %s);\n",
			      ah->ext[d],
			      tc_omp_expr_text(E, ten->shape[d],
					       TC_PREC_COMMA + 1),
			      ah->origin[d],
			      tc_omp_expr_text(E, op->p->buf->shape[d], 0));
	return true;
}

static void emit_fused_loop(Emitter *E, const Fusion *F, const char *const *idx,
			    const char *begin, const char *end,
			    bool edge, bool vec, const Ahead *ah);

/* The prefetch of the strip of the next block's row at column j0 (`if
 * (i < next_rows && j0 < next_cols) tilec_prefetch(...)`); in a loop over
 * every column (at_strips), only where a strip starts. */
static void
print_prefetch(Emitter *E, const char *const *idx, const Ahead *ah,
	       const char *j0, bool at_strips)
{
	TcBuf *b = E->out;
	tc_c_comment(&E->pr, tc_fmt(E->a, "the next block's %s, for later",
				    ah->op->p->reg->var->name));
	if (at_strips)
		tc_buf_printf(b, "if (%s %% %lld == 0 && %s < %s && %s < %s)\n", j0,
			      ah->strip, idx[0], ah->ext[0], j0, ah->ext[1]);
	else
		tc_buf_printf(b, "if (%s < %s && %s < %s)\n", idx[0], ah->ext[0],
			      j0, ah->ext[1]);
	const char *args[] = {
		tc_fmt(E->a, "&%s[%s + %s][%s + %s]", ah->op->p->reg->var->name,
		       ah->origin[0], idx[0], ah->origin[1], j0),
		tc_fmt(E->a, "sizeof(%s) * tilec_min(%lld, %s - %s)",
		       tc_omp_storage_type(ah->op->p->reg->var->dtype), ah->strip,
		       ah->ext[1], j0),
	};
	b->indent++;
	tc_omp_print_wrapped(E, "tilec_prefetch(", args, 2, ");");
	b->indent--;
}

/* The main element loop in strips, each starting with the prefetch of a
 * strip of the next block's row. */
static void
emit_strips(Emitter *E, const Fusion *F, const char *const *idx,
	    const char *end, const Ahead *ah)
{
	TcBuf *b = E->out;
	const char *j0 = reserve(E, tc_fmt(E->a, "%s0", idx[1]));
	const char *j1 = reserve(E, tc_fmt(E->a, "%s1", idx[1]));
	tc_buf_printf(b, "for (int %s = 0; %s < %s; %s += %lld) {\n", j0, j0, end,
		      j0, ah->strip);
	b->indent++;
	tc_buf_printf(b, "const int %s = tilec_min(%s + %lld, %s);\n", j1, j0,
		      ah->strip, end);
	print_prefetch(E, idx, ah, j0, false);
	emit_fused_loop(E, F, idx, j0, j1, false, false, NULL);
	b->indent--;
	tc_buf_puts(b, "}\n");
}

/* How many ops of run F bound its main loop (TcFuseOp.ends_main), the
 * first in *first (when first is not NULL); 0: it runs the whole row. */
static int
main_ends(const Fusion *F, const FuseOp **first)
{
	int n = 0;
	for (int k = 0; k < F->n; k++)
		if (F->ops[k].p->ends_main && n++ == 0 && first)
			*first = &F->ops[k];
	return n;
}

/* Ready the vector form of run F's main loop (TcFusion.vec): its nests'
 * column vars, and the locals that hold vectors as the vector pass found
 * them (TcFusion.lanes). */
static void
start_vectors(Emitter *E, const Fusion *F)
{
	const TcVar *cols[TC_OMP_VEC_COLS];
	int ncols = 0;
	for (int k = 0; k < F->n; k++)
		if (F->ops[k].p->kind == TC_FUSE_MAP && ncols < TC_OMP_VEC_COLS)
			cols[ncols++] = F->ops[k].p->var[1];
	tc_omp_vec_columns(E, cols, ncols);
	for (int v = 0; F->p->lanes && v < E->k->vars.len; v++)
		E->vector[v] = F->p->lanes[v];
}

/* The main loop's columns in whole vectors, from begin: the vector
 * accumulators, the loop (prefetching the next block's row a strip at a
 * time when ah says which), the sums added to the scalar ones.  Returns
 * where the scalar loop starts.  One loop over the row, not strips: gcc
 * would set up exp's constants and fold the sums again in every strip
 * (softmax 27 against 31 GB/s). */
static const char *
emit_vector_loop(Emitter *E, const Fusion *F, const char *const *idx,
		 const char *begin, const char *end,
		 const Ahead *ah)
{
	TcBuf *b = E->out;
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (op->p->kind != TC_FUSE_REDUCE)
			continue;
		op->vacc = reserve(E, tc_fmt(E->a, "%s_v", op->acc));
		op->vacc2 = reserve(E, tc_fmt(E->a, "%s_w", op->acc));
		tc_buf_printf(b, "tilec_vf %s = tilec_vsplat(0.0f);\n", op->vacc);
		tc_buf_printf(b, "tilec_vf %s = tilec_vsplat(0.0f);\n", op->vacc2);
	}
	const char *head = tc_fmt(E->a, "for (int %s = %s; %s + TILEC_VL <= %s;",
				  idx[1], begin, idx[1], end);
	const char *step = tc_fmt(E->a, "%s += TILEC_VL) {", idx[1]);
	if ((size_t)b->indent * 8 + strlen(head) + 1 + strlen(step) <= 80)
		tc_buf_printf(b, "%s %s\n", head, step);
	else
		tc_buf_printf(b, "%s\n     %s\n", head, step);
	b->indent++;
	if (ah)
		print_prefetch(E, idx, ah, idx[1], true);
	E->vec = true;
	emit_fused_body(E, F, idx, false, true);
	E->vec = false;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->p->kind == TC_FUSE_REDUCE)
			tc_buf_printf(b, "tilec_vswap(&%s, &%s);\n", op->vacc,
				      op->vacc2);
	}
	E->line = 0; /* the scalar loop's statements say their lines again */
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (!op->p->streamed)
			continue;
		const char *cols = op->cp.ext[op->cp.rank - 1];
		const char *in = rows_inside(E, op, idx[0]);
		const char *test = tc_fmt(E->a, "%s + TILEC_VL <= %s", idx[1], cols);
		tc_buf_printf(b, "if (%s%s%s)\n", in ? in : "", in ? " && " : "",
			      test);
		const char *args[] = {
			tc_fmt(E->a, "&%s", tc_omp_tensor_elem(E, &op->cp, false)),
			tc_fmt(E->a, "tilec_vload(&%s)",
			       tc_omp_elem(E, op->p->buf, &idx[2 - op->p->rank])),
			op->bytes,
		};
		b->indent++;
		tc_omp_print_wrapped(E, vector_stream(op->cp.ten->dtype),
				     args, 3, ");");
		b->indent--;
	}
	b->indent--;
	tc_buf_puts(b, "}\n");
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->p->kind == TC_FUSE_REDUCE)
			tc_buf_printf(b, "%s += tilec_vsum(%s + %s);\n", op->acc,
				      op->vacc, op->vacc2);
	}
	if (strcmp(begin, "0") == 0)
		return tc_fmt(E->a, "%s - %s %% TILEC_VL", end, end);
	return tc_fmt(E->a, "%s - (%s - %s) %% TILEC_VL", end, end, begin);
}

/* One element loop, j from begin to end; reductions joined in clauses.
 * The edge loop has no omp simd: it runs only on partial tiles, and clang
 * cannot vectorize a sum of what it folds to constants there.  With vec,
 * the whole vectors first (emit_vector_loop), then this loop over the
 * rest. */
static void
emit_fused_loop(Emitter *E, const Fusion *F, const char *const *idx,
		const char *begin, const char *end, bool edge,
		bool vec, const Ahead *ah)
{
	static const char *const omp_ops[] = {
		[TC_RED_SUM] = "+", [TC_RED_MAX] = "max",
		[TC_RED_MIN] = "min", [TC_RED_ABSMAX] = "max",
	};
	if (vec && !edge) {
		/* A loop over a whole tile of whole vectors leaves nothing. */
		bool whole = F->p->cols % E->t->explicit_lanes == 0 &&
			     strcmp(begin, "0") == 0 && !main_ends(F, NULL);
		begin = emit_vector_loop(E, F, idx, begin, end, ah);
		if (whole)
			return;
		tc_c_comment(&E->pr, "the columns left over");
	}
	bool scalar = false;
	for (int k = 0; k < F->n; k++)
		scalar |= tc_omp_scalar_calls(NULL, F->ops[k].p->s);
	if (F->p->cols >= 8 && !edge && !scalar) {
		TcBuf clauses;
		tc_buf_init(&clauses);
		for (int k = 0; k < F->n; k++)
			if (F->ops[k].p->kind == TC_FUSE_REDUCE)
				tc_buf_printf(&clauses, " reduction(%s : %s)",
					      omp_ops[F->ops[k].p->s->u.reduce.op],
					      F->ops[k].acc);
		tc_omp_pragma(E, "omp simd%s", clauses.len ? clauses.data : "");
		tc_buf_free(&clauses);
	}
	const char *head = tc_fmt(E->a, "for (int %s = %s; %s < %s;", idx[1],
				  begin, idx[1], end);
	if ((size_t)E->out->indent * 8 + strlen(head) + strlen(idx[1]) + 6 <= 80)
		tc_buf_printf(E->out, "%s %s++)", head, idx[1]);
	else
		tc_buf_printf(E->out, "%s\n     %s++)", head, idx[1]);
	/* The body, without braces if it is one line. */
	TcBuf body, *out = E->out;
	tc_buf_init(&body);
	body.indent = out->indent + 1;
	E->out = E->pr.out = &body;
	emit_fused_body(E, F, idx, edge, false);
	E->out = E->pr.out = out;
	/* A declaration is not a statement: a body that declares the
	 * local of an elided buffer keeps its braces, even alone (the
	 * buffer is then written and never read). */
	bool declares = false;
	for (int v = 0; v < E->k->vars.len; v++)
		if (F->p->elided[v] && writes_of(F, E->k->vars.items[v]))
			declares = true;
	const char *nl = strchr(body.data, '\n');
	bool one = nl && !nl[1] && !strchr(body.data, '#') && !declares;
	tc_buf_puts(out, one ? "\n" : " {\n");
	int indent = out->indent;
	out->indent = 0;
	tc_buf_puts(out, body.data);
	out->indent = indent;
	if (!one)
		tc_buf_puts(out, "}\n");
	tc_buf_free(&body);
}

/* Print a run as one loop nest (see the top of this file). */
static void
emit_run(Emitter *E, const Fusion *F)
{
	static const char *const acc_names[] = {
		[TC_RED_SUM] = "sum", [TC_RED_MAX] = "maxv",
		[TC_RED_MIN] = "minv", [TC_RED_ABSMAX] = "amax",
	};
	TcBuf *b = E->out;
	int reserved = E->reserved.len;
	for (int k = 0; k < F->n; k++) {
		const TcStmt *s = F->ops[k].p->s;
		const char *again = k < F->p->nagain ? ", again" : "";
		if (F->ops[k].p->kind == TC_FUSE_MAP)
			tc_omp_nest_comment(E, s, again);
		else
			tc_c_loc_comment(&E->pr, s->loc,
					 tc_fmt(E->a, "%s%s",
						tc_c_source_snippet(E->a, E->p->text,
								    s->loc),
						again));
	}
	if (F->p->dead) {
		/* Its buffers are recomputed where they are read. */
		tc_c_comment(&E->pr, "nothing to do here: what this computes is "
			     "computed again where it is read");
		return;
	}
	TcBuf note;
	tc_buf_init(&note);
	tc_buf_printf(&note, "as one loop over each %s's elements",
		      F->p->rank == 2 ? "row" : "tile");
	int nel = 0;
	for (int v = 0; v < E->k->vars.len; v++)
		if (F->p->elided[v])
			tc_buf_printf(&note, "%s%s", nel++ ? ", " : "; not stored: ",
				      ((TcVar *)E->k->vars.items[v])->name);
	tc_c_comment(&E->pr, note.data);
	tc_buf_free(&note);

	/* Index names: a nest's over the whole space, else fresh ones. */
	const char *idx[2] = { NULL, NULL };
	for (int k = 0; k < F->n && !idx[1]; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->p->kind == TC_FUSE_MAP && op->p->rank == F->p->rank) {
			idx[0] = op->p->var[0] ? op->p->var[0]->name : NULL;
			idx[1] = op->p->var[1]->name;
		}
	}
	if (!idx[1]) {
		const char *names[2];
		tc_omp_index_names(E, F->p->rank, names);
		idx[2 - F->p->rank] = names[0];
		if (F->p->rank == 2)
			idx[1] = names[1];
	}
	for (int d = 2 - F->p->rank; d < 2; d++)
		tc_vec_push(E->a, &E->reserved, (void *)idx[d]);
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (op->p->kind == TC_FUSE_MAP)
			op->braced = needs_braces(E, F, k, idx);
	}

	/* Bounds of the copies, then per-column copies into stored
	 * buffers, once. */
	Bounds bd = { 0 };
	tc_buf_init(&bd.odecl);
	tc_buf_init(&bd.edecl);
	for (int rank = 2; rank >= 1; rank--)
		for (int k = 0; k < F->n; k++)
			if ((F->ops[k].p->kind == TC_FUSE_LOAD ||
			     F->ops[k].p->kind == TC_FUSE_STORE) && F->ops[k].p->rank == rank)
				bounds_copy(E, &bd, &F->ops[k], idx);
	/* The sizes of the outputs the vector loop streams (tilec_vstream
	 * decides by them). */
	bool streams = false;
	for (int k = 0; k < F->n; k++)
		streams |= F->ops[k].p->streamed;
	bool opened = bd.odecl.len || bd.edecl.len || streams;
	if (opened) {
		tc_buf_puts(b, "{\n");
		b->indent++;
		if (bd.odecl.len)
			tc_buf_printf(b, "const int %s;\n", bd.odecl.data);
		if (bd.edecl.len)
			tc_buf_puts(b, bd.edecl.data);
	}
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (!op->p->streamed)
			continue;
		op->bytes = reserve(E, tc_fmt(E->a, "%s_bytes",
					      op->cp.ten->name));
		tc_buf_printf(b, "const size_t %s = %s;\n", op->bytes,
			      tc_omp_tensor_bytes(E, op->cp.ten));
	}
	tc_buf_free(&bd.odecl);
	tc_buf_free(&bd.edecl);
	Ahead ah;
	bool ahead = print_ahead(E, F, &ah);
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->p->kind == TC_FUSE_LOAD && !in_loop(F, op))
			print_row_copy(E, op, NULL);
	}
	const char *i = idx[0];
	if (F->p->rank == 2) {
		tc_omp_for_dim(E, i, "0", tc_omp_expr_text(E, F->p->ext[0], 0));
		tc_c_open(&E->pr);
	}
	/* The columns of this row inside each copy's tensor; the main loop
	 * runs, without tests, to the least of those the edge pass chose
	 * (TcFuseOp.ends_main). */
	const char *bound = NULL;
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (!in_loop(F, op))
			continue;
		int last = op->cp.rank - 1;
		const char *in = rows_inside(E, op, i);
		op->valid = in ? tc_fmt(E->a, "%s ? %s : 0", in, op->cp.ext[last])
			: op->cp.partial[last] ? op->cp.ext[last] : NULL;
		if (op->p->ends_main && !bound)
			bound = op->valid;
		else if (op->p->ends_main)
			bound = tc_fmt(E->a, "tilec_min(%s, %s)", bound,
				       op->valid);
	}
	const FuseOp *first = NULL;
	int nends = main_ends(F, &first);
	const char *end = tc_omp_expr_text(E, F->p->ext[1], 0);
	if (nends == 1 && !rows_inside(E, first, i)) {
		end = bound;
	} else if (nends > 0) {
		end = reserve(E, "n");
		tc_buf_printf(b, "const int %s = %s;\n", end, bound);
	}
	/* Accumulators. */
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (op->p->kind != TC_FUSE_REDUCE)
			continue;
		TcReduceOp rop = op->p->s->u.reduce.op;
		const TcVar *dst = op->p->s->u.reduce.dst.var;
		TcDtype t = acc_type(op);
		op->acc = reserve(E, acc_names[rop]);
		bool old = op->p->s->u.reduce.accumulate && rop != TC_RED_SUM;
		const char *start = tc_omp_reduce_start(
			E, rop, t, old ? tc_omp_elem(E, dst, idx) : NULL);
		if (keyed(op))
			tc_buf_printf(b, "int %s = %s(%s);\n", op->acc, key_fn(op),
				      start);
		else
			tc_buf_printf(b, "%s %s = %s;\n", tc_omp_value_type(t),
				      op->acc, start);
	}
	bool vec = F->p->vec;
	if (vec)
		start_vectors(E, F);
	if (ahead && !vec)
		emit_strips(E, F, idx, end, &ah);
	else
		emit_fused_loop(E, F, idx, "0", end, false, vec,
				ahead ? &ah : NULL);
	if (nends > 0) {
		tc_c_comment(&E->pr, "columns past an edge: copies read 0");
		emit_fused_loop(E, F, idx, end,
				tc_omp_expr_text(E, F->p->ext[1], 0), true,
				false, NULL);
	}
	/* Results of the row: reductions, then the rows copied out. */
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->p->kind != TC_FUSE_REDUCE)
			continue;
		TcReduceOp rop = op->p->s->u.reduce.op;
		const TcVar *dst = op->p->s->u.reduce.dst.var;
		TcDtype t = acc_type(op);
		const char *de = tc_omp_elem(E, dst, idx);
		const char *acc = keyed(op) ? tc_fmt(E->a, "tilec_key_float(%s)",
						     op->acc)
					    : op->acc;
		if (op->p->s->u.reduce.accumulate && rop == TC_RED_SUM &&
		    !tc_omp_rounds(dst->dtype))
			tc_buf_printf(b, "%s += %s;\n", de, op->acc);
		else if (op->p->s->u.reduce.accumulate && rop == TC_RED_SUM)
			tc_buf_printf(b, "%s = tilec_round_%s(%s + %s);\n", de,
				      tc_dtype_name(dst->dtype), de, op->acc);
		else
			tc_buf_printf(b, "%s = %s;\n", de,
				      tc_omp_to_buffer(E, acc, tc_omp_reduce_held(t),
						       dst->dtype));
	}
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->p->kind != TC_FUSE_STORE)
			continue;
		const char *in = F->p->rank == 2 ? rows_inside(E, op, i) : NULL;
		if (op->p->streamed) {
			/* The vector loop wrote the whole vectors. */
			print_row_rest(E, op, i, in);
			continue;
		}
		if (in) {
			tc_buf_printf(b, "if (%s)\n", in);
			b->indent++;
		}
		print_row_copy(E, op, i);
		if (in)
			b->indent--;
	}
	if (F->p->rank == 2)
		tc_c_close(&E->pr);
	if (opened) {
		b->indent--;
		tc_buf_puts(b, "}\n");
	}
	E->reserved.len = reserved;
}

/* The run of the fuse pass that starts at statement i of block, or NULL. */
const TcFusion *
tc_omp_fusion_at(Emitter *E, const TcStmt *block, int i)
{
	for (int f = 0; f < E->k->fusions.len; f++) {
		const TcFusion *F = E->k->fusions.items[f];
		if (F->block == block && F->first == i)
			return F;
	}
	return NULL;
}

void
tc_omp_emit_fusion(Emitter *E, const TcFusion *plan)
{
	Fusion F = { .p = plan, .n = plan->n };
	F.ops = tc_alloc(E->a, (size_t)(plan->n + 1) * sizeof *F.ops);
	for (int k = 0; k < plan->n; k++)
		F.ops[k].p = &plan->ops[k];
	emit_run(E, &F);
}
