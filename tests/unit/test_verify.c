/*
 * test_verify.c - the verifier accepts the hand-built gemm program and
 * catches each invariant broken on purpose, with a located internal error
 * naming the pass.
 */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const TcLoc noloc;

/* Verify f's program as the output of pass "testpass"; returns the
 * violation count and leaves the report in d (freed by the caller). */
static int
verify(Fixture *f, TcDiags *d)
{
	tc_diags_init(d, "gemm.c", NULL, 0);
	return tc_verify(f->p, "testpass", d);
}

/* Assert that verifying f reports something containing `what`. */
#define expect_violation(f, what)                                         \
	do {                                                              \
		TcDiags d_;                                               \
		int n_ = verify(f, &d_);                                  \
		ck_assert_msg(n_ > 0, "no violation reported for: %s",    \
			      what);                                      \
		ck_assert_int_eq(d_.errors, n_);                          \
		ck_assert_msg(d_.text.data && strstr(d_.text.data, what), \
			      "wanted '%s' in:\n%s", what,                \
			      d_.text.data ? d_.text.data : "");          \
		tc_diags_free(&d_);                                       \
		fixture_free(f);                                          \
	} while (0)

START_TEST(valid_program_passes)
{
	Fixture f;
	fixture_init(&f);
	TcDiags d;
	ck_assert_int_eq(verify(&f, &d), 0);
	ck_assert_int_eq(d.errors, 0);
	ck_assert_uint_eq(d.text.len, 0);
	tc_diags_free(&d);
	fixture_free(&f);
}
END_TEST

START_TEST(message_names_the_pass_and_location)
{
	Fixture f;
	fixture_init(&f);
	f.gemm->u.gemm.c.var = f.as;
	f.gemm->u.gemm.c = fx_whole(&f, f.as);
	f.gemm->u.gemm.c.loc = noloc;
	TcDiags d;
	ck_assert_int_eq(verify(&f, &d), 1);
	ck_assert_str_eq(d.text.data,
			 "gemm.c:31:3: error: internal error: IR invalid after "
			 "testpass: gemm accumulator operand 'As' is shared, "
			 "not fragment\n");
	tc_diags_free(&d);
	fixture_free(&f);
}
END_TEST

START_TEST(bad_union_arms)
{
	Fixture f;
	fixture_init(&f);
	f.k->threads->kind = (TcExprKind)42;
	expect_violation(&f, "expression of invalid kind 42");

	fixture_init(&f);
	f.fill->kind = (TcStmtKind)99;
	expect_violation(&f, "statement of invalid kind 99");

	fixture_init(&f);
	f.loop->u.loop.kind = (TcLoopKind)7;
	expect_violation(&f, "loop of invalid kind 7");

	fixture_init(&f);
	f.k->grid[0]->u.call.fn = TC_FN_COUNT;
	expect_violation(&f, "call of function");

	fixture_init(&f);
	f.k->grid[0]->u.call.nargs = 1;
	expect_violation(&f, "call of ceildiv with 1 arguments, not 2");

	fixture_init(&f);
	f.fill->u.fill.value->kind = TC_EX_INT;
	expect_violation(&f, "integer literal typed f32");

	fixture_init(&f);
	f.fill->u.fill.value->dtype = TC_DT_NONE;
	expect_violation(&f, "without a valid dtype");
}
END_TEST

START_TEST(null_children)
{
	Fixture f;
	fixture_init(&f);
	f.copy_a->u.copy.src.origin[0]->u.bin.rhs = NULL;
	expect_violation(&f, "operand of '*' is NULL");

	fixture_init(&f);
	f.copy_a->u.copy.src.origin[1] = NULL;
	expect_violation(&f, "region origin is NULL");

	fixture_init(&f);
	f.fill->u.fill.value = NULL;
	expect_violation(&f, "NULL expression");

	fixture_init(&f);
	f.loop->u.loop.body = NULL;
	expect_violation(&f, "loop body is NULL");

	fixture_init(&f);
	f.loop->u.loop.end = NULL;
	expect_violation(&f, "loop end is NULL");

	fixture_init(&f);
	f.loop->u.loop.stages = NULL;
	expect_violation(&f, "pipeline stage count is NULL");

	fixture_init(&f);
	f.k->body->u.block.body.items[1] = NULL;
	expect_violation(&f, "NULL statement in a block");

	fixture_init(&f);
	f.store->u.copy.dst.var = NULL;
	expect_violation(&f, "copy region of a NULL var");

	fixture_init(&f);
	f.k->body = NULL;
	expect_violation(&f, "kernel 'gemm' without a body");
}
END_TEST

START_TEST(vars_belong_to_the_kernel)
{
	Fixture f;
	fixture_init(&f);
	/* A var made outside the kernel. */
	TcVar *stray = tc_var_new(f.a, NULL, TC_VAR_SCALAR, "stray",
				  TC_DT_I32, noloc);
	f.k->threads = tc_expr_var(f.a, stray, noloc);
	expect_violation(&f, "scalar 'stray' does not belong to kernel 'gemm'");

	fixture_init(&f);
	TcVar *t = tc_var_new(f.a, NULL, TC_VAR_TUNABLE, "LOOSE", TC_DT_I32,
			      noloc);
	f.loop->u.loop.stages = tc_expr_var(f.a, t, noloc);
	expect_violation(&f, "tunable 'LOOSE' is not one of the program's");

	fixture_init(&f);
	/* A var of another kernel. */
	TcKernel other = { 0 };
	TcVar *buf = tc_var_new(f.a, &other, TC_VAR_BUFFER, "As", TC_DT_F16,
				noloc);
	buf->rank = 2;
	buf->scope = TC_SCOPE_SHARED;
	f.gemm->u.gemm.a.var = buf;
	expect_violation(&f, "buffer 'As' does not belong to kernel 'gemm'");

	fixture_init(&f);
	((TcVar *)f.k->vars.items[2])->index = 5;
	expect_violation(&f, "var 'K' at 2 has index 5");
}
END_TEST

START_TEST(declared_before_use)
{
	Fixture f;
	fixture_init(&f);
	/* Move DECL As after its use in the loop. */
	TcVec *top = &f.k->body->u.block.body;
	top->items[0] = top->items[1];
	top->items[1] = top->items[2];
	top->items[2] = f.fill;
	top->items[3] = f.loop;
	top->items[4] = f.decl_as;
	expect_violation(&f, "buffer 'As' used out of its scope");

	fixture_init(&f);
	/* Declared inside the loop, used after it. */
	top = &f.k->body->u.block.body;
	top->items[0] = fx_block(&f, noloc);
	TcVec *in_loop = &f.loop->u.loop.body->u.block.body;
	fx_push(&f, f.loop->u.loop.body, NULL);
	memmove(in_loop->items + 1, in_loop->items,
		sizeof(void *) * (size_t)(in_loop->len - 1));
	in_loop->items[0] = f.decl_as;
	f.store->u.copy.src = fx_whole(&f, f.as);
	f.store->u.copy.src.loc = fx_loc(33, 40);
	{
		TcDiags d;
		ck_assert_int_gt(verify(&f, &d), 0);
		ck_assert_ptr_nonnull(strstr(d.text.data,
					     "gemm.c:33:40: error: internal "
					     "error: IR invalid after testpass: "
					     "buffer 'As' used out of its "
					     "scope"));
		tc_diags_free(&d);
		fixture_free(&f);
	}

	fixture_init(&f);
	/* A local used before its declaration. */
	TcVar *x = tc_var_new(f.a, f.k, TC_VAR_LOCAL, "x", TC_DT_F32, noloc);
	f.fill->u.fill.value = tc_expr_var(f.a, x, fx_loc(27, 20));
	fx_push(&f, f.k->body, fx_decl(&f, x, NULL, fx_loc(34, 2)));
	expect_violation(&f, "gemm.c:27:20: error: internal error: IR invalid "
			 "after testpass: local 'x' used out of its scope");

	fixture_init(&f);
	/* Declared twice in the same scope. */
	fx_push(&f, f.k->body, f.decl_as);
	expect_violation(&f, "'As' declared again in its own scope");
}
END_TEST

START_TEST(loop_vars_only_inside_their_loop)
{
	Fixture f;
	fixture_init(&f);
	f.store->u.copy.dst.origin[0] = tc_expr_var(f.a, f.kloop, noloc);
	expect_violation(&f, "loop 'k' used out of its scope");

	fixture_init(&f);
	/* The same var drives a nested loop. */
	TcStmt *inner = fx_loop(&f, TC_LOOP_PARALLEL, f.kloop,
				tc_expr_int(f.a, 4, noloc), fx_loc(32, 3));
	fx_push(&f, f.loop->u.loop.body, inner);
	expect_violation(&f, "loop variable 'k' reused by a nested loop");

	fixture_init(&f);
	f.loop->u.loop.var = f.bx;
	expect_violation(&f, "loop variable 'bx' is a block");

	fixture_init(&f);
	/* Fine: a loop var reused by a later, sibling loop. */
	TcStmt *again = fx_loop(&f, TC_LOOP_SERIAL, f.kloop,
				tc_expr_int(f.a, 4, noloc), fx_loc(34, 2));
	fx_push(&f, f.k->body, again);
	TcDiags d;
	ck_assert_int_eq(verify(&f, &d), 0);
	tc_diags_free(&d);
	fixture_free(&f);
}
END_TEST

START_TEST(loads_match_the_rank)
{
	Fixture f;
	fixture_init(&f);
	TcStmt *asg = tc_stmt_new(f.a, TC_ST_ASSIGN, fx_loc(32, 3));
	asg->u.assign.dst = fx_load(&f, f.acc, tc_expr_int(f.a, 0, noloc), NULL,
				    noloc);
	asg->u.assign.value = tc_expr_float(f.a, 1.0, TC_DT_F32, noloc);
	fx_push(&f, f.loop->u.loop.body, asg);
	expect_violation(&f, "load of 'acc' has 1 indices for rank 2");

	fixture_init(&f);
	asg = tc_stmt_new(f.a, TC_ST_ASSIGN, fx_loc(32, 3));
	asg->u.assign.dst = fx_load(&f, f.acc, tc_expr_int(f.a, 0, noloc),
				    tc_expr_int(f.a, 0, noloc), noloc);
	asg->u.assign.dst->u.load.idx[2] = tc_expr_int(f.a, 0, noloc);
	asg->u.assign.value = tc_expr_float(f.a, 1.0, TC_DT_F32, noloc);
	fx_push(&f, f.loop->u.loop.body, asg);
	expect_violation(&f, "load of 'acc' has 3 indices for rank 2");

	fixture_init(&f);
	asg = tc_stmt_new(f.a, TC_ST_ASSIGN, fx_loc(32, 3));
	asg->u.assign.dst = fx_load(&f, f.acc,
				    tc_expr_float(f.a, 0.0, TC_DT_F32, noloc),
				    tc_expr_int(f.a, 0, noloc), noloc);
	asg->u.assign.value = tc_expr_float(f.a, 1.0, TC_DT_F32, noloc);
	fx_push(&f, f.loop->u.loop.body, asg);
	expect_violation(&f, "load index has type f32, not an integer");

	fixture_init(&f);
	asg = tc_stmt_new(f.a, TC_ST_ASSIGN, fx_loc(32, 3));
	asg->u.assign.dst = fx_load(&f, f.ta, tc_expr_int(f.a, 0, noloc),
				    tc_expr_int(f.a, 0, noloc), noloc);
	asg->u.assign.value = tc_expr_float(f.a, 1.0, TC_DT_F32, noloc);
	fx_push(&f, f.loop->u.loop.body, asg);
	expect_violation(&f, "assignment writes const tensor 'A'");

	fixture_init(&f);
	asg = tc_stmt_new(f.a, TC_ST_ASSIGN, fx_loc(32, 3));
	asg->u.assign.dst = tc_expr_var(f.a, f.m, noloc);
	asg->u.assign.value = tc_expr_int(f.a, 1, noloc);
	fx_push(&f, f.loop->u.loop.body, asg);
	expect_violation(&f, "assignment to scalar 'M', not a local");

	fixture_init(&f);
	f.k->threads = fx_load(&f, f.ta, tc_expr_int(f.a, 0, noloc),
			       tc_expr_int(f.a, 0, noloc), noloc);
	expect_violation(&f, "load of 'A' where only scalars may appear");
}
END_TEST

START_TEST(region_invariants)
{
	Fixture f;
	fixture_init(&f);
	f.copy_a->u.copy.src.ndims = 0;
	expect_violation(&f, "copy region of 'A' spans 0 dims of 2");

	fixture_init(&f);
	f.copy_a->u.copy.src.ndims = 3;
	expect_violation(&f, "copy region of 'A' spans 3 dims of 2");

	fixture_init(&f);
	f.copy_a->u.copy.src.dims[1] = 2;
	expect_violation(&f, "copy region of 'A': dim 2 out of rank 2");

	fixture_init(&f);
	f.copy_a->u.copy.src.dims[1] = 0;
	expect_violation(&f, "copy region of 'A': dim 0 listed twice");

	fixture_init(&f);
	f.copy_a->u.copy.src.whole = true;
	expect_violation(&f, "whole tensor 'A'");

	fixture_init(&f);
	f.copy_a->u.copy.dst.ndims = 1;
	expect_violation(&f, "whole 'As' spans 1 of its 2 dims");

	fixture_init(&f);
	f.copy_a->u.copy.dst.dims[0] = 1;
	f.copy_a->u.copy.dst.dims[1] = 0;
	expect_violation(&f, "whole 'As' with dims out of order");

	fixture_init(&f);
	f.copy_a->u.copy.dst = f.copy_a->u.copy.src;
	f.copy_a->u.copy.dst.var = f.tcv;
	expect_violation(&f, "neither is a whole buffer");

	fixture_init(&f);
	f.copy_a->u.copy.src.ndims = 1;
	f.copy_a->u.copy.src.dims[0] = 1;
	expect_violation(&f, "copy between tiles of rank 2 and 1");

	fixture_init(&f);
	f.store->u.copy.dst.var = f.ta;
	expect_violation(&f, "copy writes const tensor 'A'");

	fixture_init(&f);
	f.copy_a->u.copy.src = fx_whole(&f, f.acc);
	expect_violation(&f, "copy between 'As' and 'acc' of different shapes");

	fixture_init(&f);
	f.copy_a->u.copy.src.var = f.m;
	expect_violation(&f, "copy region of scalar 'M', not a tensor or "
			 "buffer");
}
END_TEST

START_TEST(tile_op_operands)
{
	Fixture f;
	fixture_init(&f);
	f.gemm->u.gemm.b = f.copy_b->u.copy.src;
	expect_violation(&f, "gemm operand 'B' is not a whole buffer");

	fixture_init(&f);
	TcVar *v = fx_buffer(&f, "v", TC_SCOPE_SHARED, TC_DT_F16,
			     tc_expr_var(f.a, f.block_m, noloc), NULL, noloc);
	fx_push(&f, f.k->body, fx_decl(&f, v, NULL, noloc));
	TcStmt *g = tc_stmt_new(f.a, TC_ST_GEMM, fx_loc(34, 2));
	g->u.gemm.c = fx_whole(&f, f.acc);
	g->u.gemm.a = fx_whole(&f, v);
	g->u.gemm.b = fx_whole(&f, f.bs);
	fx_push(&f, f.k->body, g);
	expect_violation(&f, "gemm operand 'v' has rank 1, not 2");

	fixture_init(&f);
	f.fill->u.fill.dst = f.store->u.copy.dst;
	expect_violation(&f, "fill operand 'C' is not a whole buffer");

	fixture_init(&f);
	TcStmt *at = tc_stmt_new(f.a, TC_ST_ATOMIC_ADD, fx_loc(34, 2));
	at->u.copy.dst = f.store->u.copy.src;
	at->u.copy.src = f.store->u.copy.src;
	fx_push(&f, f.k->body, at);
	expect_violation(&f, "atomic_add into 'acc', not a tensor");

	fixture_init(&f);
	TcVar *row = fx_buffer(&f, "row", TC_SCOPE_FRAGMENT, TC_DT_F32,
			       tc_expr_var(f.a, f.block_m, noloc), NULL, noloc);
	fx_push(&f, f.k->body, fx_decl(&f, row, NULL, noloc));
	TcStmt *red = tc_stmt_new(f.a, TC_ST_REDUCE, fx_loc(35, 2));
	red->u.reduce.op = TC_RED_SUM;
	red->u.reduce.dst = fx_whole(&f, row);
	red->u.reduce.src = fx_whole(&f, f.acc);
	red->u.reduce.dim = 2;
	fx_push(&f, f.k->body, red);
	expect_violation(&f, "reduce along dim 2 of a rank-2 tile");

	fixture_init(&f);
	red = tc_stmt_new(f.a, TC_ST_REDUCE, fx_loc(35, 2));
	red->u.reduce.op = TC_RED_SUM;
	red->u.reduce.dst = fx_whole(&f, f.as);
	red->u.reduce.src = fx_whole(&f, f.acc);
	red->u.reduce.dim = 1;
	fx_push(&f, f.k->body, red);
	expect_violation(&f, "reduce of a rank-2 tile into rank 2");

	fixture_init(&f);
	red = tc_stmt_new(f.a, TC_ST_REDUCE, fx_loc(35, 2));
	red->u.reduce.op = TC_RED_COUNT;
	red->u.reduce.dst = fx_whole(&f, f.acc);
	red->u.reduce.src = fx_whole(&f, f.acc);
	fx_push(&f, f.k->body, red);
	expect_violation(&f, "reduction of invalid kind");
}
END_TEST

START_TEST(expression_types)
{
	Fixture f;
	fixture_init(&f);
	f.copy_a->u.copy.src.origin[0]->dtype = TC_DT_I64;
	expect_violation(&f, "i32 * i32 typed i64, not i32");

	fixture_init(&f);
	TcExpr *half = tc_expr_float(f.a, 0.5, TC_DT_F16, noloc);
	TcExpr *sum = tc_expr_binary(f.a, TC_OP_ADD, half, half, noloc);
	sum->dtype = TC_DT_F16;
	f.fill->u.fill.value = sum;
	expect_violation(&f, "f16 + f16 typed f16, not f32");

	fixture_init(&f);
	half = tc_expr_float(f.a, 0.5, TC_DT_F16, noloc);
	TcExpr *neg = tc_expr_unary(f.a, TC_UOP_NOT, half, noloc);
	neg->dtype = TC_DT_F16;
	f.fill->u.fill.value = neg;
	expect_violation(&f, "!f16 typed f16, not i32");

	fixture_init(&f);
	f.k->grid[0]->dtype = TC_DT_F32;
	expect_violation(&f, "ceildiv() typed f32");

	fixture_init(&f);
	f.k->grid[0]->u.call.args[0]->dtype = TC_DT_I64;
	expect_violation(&f, "reference to i32 'N' typed i64");

	fixture_init(&f);
	f.loop->u.loop.end = tc_expr_float(f.a, 4.0, TC_DT_F32, noloc);
	expect_violation(&f, "loop end has type f32, not an integer");
}
END_TEST

START_TEST(loop_shapes)
{
	Fixture f;
	fixture_init(&f);
	f.loop->u.loop.body = f.gemm;
	expect_violation(&f, "loop body is a gemm, not a block");

	fixture_init(&f);
	f.loop->u.loop.begin = tc_expr_int(f.a, 1, noloc);
	expect_violation(&f, "pipelined loop does not begin at 0");

	fixture_init(&f);
	f.loop->u.loop.kind = TC_LOOP_PARALLEL;
	f.loop->u.loop.step = tc_expr_int(f.a, 2, noloc);
	expect_violation(&f, "parallel loop step is not 1");

	fixture_init(&f);
	f.loop->u.loop.kind = TC_LOOP_SERIAL;
	f.loop->u.loop.begin = tc_expr_int(f.a, 1, noloc);
	f.loop->u.loop.step = tc_expr_int(f.a, 2, noloc);
	TcDiags d;
	ck_assert_int_eq(verify(&f, &d), 0);
	tc_diags_free(&d);
	fixture_free(&f);

	fixture_init(&f);
	TcStmt *cond = tc_stmt_new(f.a, TC_ST_IF, fx_loc(34, 2));
	cond->u.cond.cond = tc_expr_int(f.a, 1, noloc);
	cond->u.cond.then = f.fill;
	fx_push(&f, f.k->body, cond);
	expect_violation(&f, "if body is a fill, not a block");
}
END_TEST

/* --- The expanded pipeline ------------------------------------------------------ */

/* samples/SAMPLE through every pass for target and arch. */
static TcProgram *
compiled_sample(TcArena *a, TcDiags *d, const char *sample,
		const char *target, const char *arch)
{
	TcOptions opt;
	ck_assert(tc_options_init(&opt, target, arch));
	const char *root = getenv("TILEC_SOURCE_ROOT");
	char path[4096];
	snprintf(path, sizeof path, "%s/samples/%s", root ? root : ".",
		 sample);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f, "cannot read %s (set TILEC_SOURCE_ROOT)", path);
	static char text[65536];
	size_t len = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[len] = '\0';
	tc_diags_init(d, tc_strdup(a, path), text, len);
	TcProgram *p = tc_parse(a, tc_strdup(a, path), text, &opt, d);
	ck_assert_msg(p, "cannot parse %s (set TILEC_SOURCE_ROOT)", path);
	ck_assert_msg(tc_run_pipeline(a, p, &opt, d, NULL), "%s",
		      d->text.data ? d->text.data : "");
	tc_diags_free(d);
	return p;
}

/* samples/gemm.c through every pass for cuda sm_80 (its loop becomes the
 * mbarrier loop and the cp.async fallback, passes/expand_pipeline.c). */
static TcProgram *
expanded_gemm(TcArena *a, TcDiags *d)
{
	return compiled_sample(a, d, "gemm.c", "cuda", "sm_80");
}

/* The first statement of kind `kind` in s, in source order (into loops,
 * branches, both blocks of a pipe_select and a gemm's issue block). */
static TcStmt *
find_kind(TcStmt *s, TcStmtKind kind, int lower)
{
	if (!s)
		return NULL;
	if (s->kind == kind && (lower < 0 || (int)s->u.copy.lower == lower))
		return s;
	TcStmt *kids[2] = { NULL, NULL };
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++) {
			TcStmt *r = find_kind(s->u.block.body.items[i], kind, lower);
			if (r)
				return r;
		}
		return NULL;
	case TC_ST_FOR: kids[0] = s->u.loop.body; break;
	case TC_ST_IF: kids[0] = s->u.cond.then; kids[1] = s->u.cond.els; break;
	case TC_ST_PIPE_SELECT:
		kids[0] = s->u.select.fast;
		kids[1] = s->u.select.fallback;
		break;
	case TC_ST_GEMM: kids[0] = s->u.gemm.issue; break;
	default: return NULL;
	}
	TcStmt *r = find_kind(kids[0], kind, lower);
	return r ? r : find_kind(kids[1], kind, lower);
}

/* Verify p as testpass's output: the number of violations; `what` must
 * be in the report when there are any. */
static int
verify_has(TcProgram *p, const char *what)
{
	TcDiags d;
	tc_diags_init(&d, "gemm.c", NULL, 0);
	int n = tc_verify(p, "testpass", &d);
	if (what)
		ck_assert_msg(n > 0 && d.text.data && strstr(d.text.data, what),
			      "wanted '%s' in:\n%s", what,
			      d.text.data ? d.text.data : "");
	tc_diags_free(&d);
	return n;
}

START_TEST(expanded_pipeline)
{
	TcArena *a = tc_arena_new();
	TcDiags d;
	TcProgram *p = expanded_gemm(a, &d);
	TcKernel *k = p->kernels.items[0];
	ck_assert_int_eq(verify_has(p, NULL), 0);

	/* Every statement kind of both loops is there. */
	const TcStmtKind kinds[] = {
		TC_ST_ASYNC_COPY, TC_ST_COMMIT_GROUP, TC_ST_WAIT_GROUP,
		TC_ST_STAGE_VIEW, TC_ST_COPY_PLAN, TC_ST_PIPE_SELECT,
		TC_ST_STAGE_BAR_INIT, TC_ST_STAGE_BAR_ARRIVE, TC_ST_STAGE_BAR_WAIT,
	};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		ck_assert_msg(find_kind(k->body, kinds[i], -1), "no %s",
			      tc_stmtkind_name(kinds[i]));

	TcStmt *vec = find_kind(k->body, TC_ST_ASYNC_COPY, TC_COPY_VECTOR);
	ck_assert(vec && vec->u.copy.stage);
	vec->u.copy.lower = TC_COPY_REGISTER;
	verify_has(p, "lowered as register, but no operand is in registers");
	vec->u.copy.lower = TC_COPY_STRIDED;
	verify_has(p, "lowered as strided without a plan");
	vec->u.copy.lower = TC_COPY_VECTOR;

	TcStmt *strided = find_kind(k->body, TC_ST_ASYNC_COPY, TC_COPY_STRIDED);
	ck_assert(strided && strided->u.copy.plan);
	TcVar *plan = strided->u.copy.plan;
	strided->u.copy.plan = NULL;
	verify_has(p, "lowered as strided without a plan");
	strided->u.copy.plan = plan;

	TcStmt *wait = find_kind(k->body, TC_ST_WAIT_GROUP, -1);
	wait->u.wait.pending = -1;
	verify_has(p, "wait_group for -1 groups");
	wait->u.wait.pending = 0;

	TcStmt *bw = find_kind(k->body, TC_ST_STAGE_BAR_WAIT, -1);
	TcExpr *parity = bw->u.bar.parity;
	bw->u.bar.parity = NULL;
	verify_has(p, "stage barrier parity is NULL");
	bw->u.bar.parity = parity;

	TcStmt *view = find_kind(k->body, TC_ST_STAGE_VIEW, -1);
	view->u.view.var->stages = 2;
	verify_has(p, "is not one stage of");
	view->u.view.var->stages = 1;

	TcStmt *sel = find_kind(k->body, TC_ST_PIPE_SELECT, -1);
	int plans = sel->u.select.plans.len;
	sel->u.select.plans.len = 0;
	verify_has(p, "pipe_select tests no copy plan");
	sel->u.select.plans.len = plans;

	ck_assert_int_eq(verify_has(p, NULL), 0);
	tc_arena_free(a);
}
END_TEST

START_TEST(schedule_marks)
{
	Fixture f;
	fixture_init(&f);
	f.loop->u.loop.async_copies = 2;
	TcDiags d;
	ck_assert_int_eq(verify(&f, &d), 0);
	tc_diags_free(&d);
	fixture_free(&f);

	fixture_init(&f);
	f.loop->u.loop.async_copies = 3;
	expect_violation(&f, "3 async copies, but the loop body begins with "
			 "2 copies");

	fixture_init(&f);
	f.loop->u.loop.async_copies = 2;
	f.loop->u.loop.copies_in_gemm = f.gemm;
	ck_assert_int_eq(verify(&f, &d), 0);
	tc_diags_free(&d);
	fixture_free(&f);

	fixture_init(&f);
	f.loop->u.loop.async_copies = 2;
	f.loop->u.loop.copies_in_gemm = f.fill;
	expect_violation(&f, "async copies issued in a gemm that is not one "
			 "of the loop body's statements");

	fixture_init(&f);
	f.loop->u.loop.kind = TC_LOOP_SERIAL;
	f.loop->u.loop.async_copies = 1;
	expect_violation(&f, "1 async copies on a loop that is not pipelined");

	fixture_init(&f);
	TcVar *i = tc_var_new(f.a, f.k, TC_VAR_LOOP, "i", TC_DT_I32, noloc);
	TcStmt *par = fx_loop(&f, TC_LOOP_PARALLEL, i,
			      tc_expr_var(f.a, f.block_m, noloc), fx_loc(34, 2));
	par->u.loop.anchor = f.acc;
	par->u.loop.anchor_dim = 1;
	fx_push(&f, f.k->body, par);
	expect_violation(&f, "loop follows 'acc', not a fragment in "
			 "registers");

	fixture_init(&f);
	i = tc_var_new(f.a, f.k, TC_VAR_LOOP, "i", TC_DT_I32, noloc);
	par = fx_loop(&f, TC_LOOP_PARALLEL, i,
		      tc_expr_var(f.a, f.block_m, noloc), fx_loc(34, 2));
	f.acc->layout.kind = TC_LAYOUT_MMA;
	par->u.loop.anchor = f.acc;
	par->u.loop.anchor_dim = 2;
	fx_push(&f, f.k->body, par);
	expect_violation(&f, "loop follows dim 2 of rank-2 'acc'");

	fixture_init(&f);
	f.acc->layout.kind = TC_LAYOUT_MMA;
	f.loop->u.loop.anchor = f.acc;
	expect_violation(&f, "a pipelined loop follows the layout of 'acc'");
}
END_TEST

/* The openmp target's schedule: samples/softmax.c (a fused run keeps
 * buffers in registers, its mask folded in the main loop) and gemm_f32.c
 * (prefetches) through every pass for avx512. */
START_TEST(cpu_schedule)
{
	TcArena *a = tc_arena_new();
	TcDiags d;
	TcProgram *p = compiled_sample(a, &d, "softmax.c", "openmp", "avx512");
	TcKernel *k = p->kernels.items[0];
	ck_assert_int_eq(verify_has(p, NULL), 0);

	ck_assert(k->stack_bytes > 0 && k->stack_bytes < k->frame_bytes);
	long long stack = k->stack_bytes;
	k->stack_bytes = k->frame_bytes;
	verify_has(p, "bytes stored for");
	k->stack_bytes = 0;
	verify_has(p, "bytes stored for");
	k->stack_bytes = stack;
	ck_assert_int_eq(verify_has(p, NULL), 0);

	/* Run 0's nest (the mask of columns past N) has a main version, the
	 * edge pass's: the test folded away. */
	ck_assert_int_ge(k->fusions.len, 2);
	TcFusion *run0 = k->fusions.items[0], *run1 = k->fusions.items[1];
	TcFuseOp *mask = &run0->ops[1], *exps = &run1->ops[2];
	ck_assert(mask->kind == TC_FUSE_MAP && mask->main);
	ck_assert(exps->kind == TC_FUSE_MAP);
	const TcStmt *main = mask->main;
	mask->main = exps->body;
	verify_has(p, "the nest's main version names 'e', which its body "
		   "does not");
	mask->main = mask->s;
	verify_has(p, "the nest's main version is a for, not a block");
	mask->main = run0->block;
	verify_has(p, "the nest's main version holds a loop");
	mask->main = main;
	run0->ops[0].main = main;
	verify_has(p, "a main version of an op that is not a nest");
	run0->ops[0].main = NULL;
	ck_assert_int_eq(verify_has(p, NULL), 0);

	/* Run 0's copy of X (a partial tile) ends its main loop; run 1 runs
	 * on vectors and prefetches the next block's rows (the edge, vector
	 * and ahead passes). */
	TcFuseOp *load = &run0->ops[0];
	ck_assert(run0->edged && load->partial_cols && load->ends_main);
	ck_assert(run1->vec && run1->next[0]);
	load->partial_cols = false;
	verify_has(p, "run 0: op 0's tensor may end inside its tile");
	load->partial_cols = true;
	load->partial_rows = false;
	verify_has(p, "run 0: op 0's tensor may end inside its tile");
	load->partial_rows = true;
	load->ends_main = false;
	verify_has(p, "run 0: its loop reads partial copies but its main "
		   "loop ends nowhere");
	load->ends_main = true;
	run0->ops[2].zero_past = true;
	verify_has(p, "run 0: op 2 reads zero past the main loop but is no "
		   "partial copy");
	run0->ops[2].zero_past = false;
	load->streamed = true;
	verify_has(p, "run 0: op 0 is streamed but no copy out of a vector "
		   "loop's rows");
	load->streamed = false;
	run0->vec = true;
	verify_has(p, "run 0: a vector loop, but op 2 has no vector form");
	run0->vec = false;
	run0->edged = false;
	verify_has(p, "run 0: op 0 has partial rows it cannot have");
	run0->edged = true;
	ck_assert_int_eq(verify_has(p, NULL), 0);
	const TcExpr *next = run1->next[0];
	run0->next[0] = next;
	run0->next[1] = run1->next[1];
	run0->ops[0].next_block = true;
	verify_has(p, "a second run prefetches the next block's rows");
	run0->next[0] = run0->next[1] = NULL;
	run0->ops[0].next_block = false;
	TcVar *chunks = find_kind(k->body, TC_ST_DECL, -1)->u.decl.var;
	ck_assert(chunks->kind == TC_VAR_LOCAL);
	run1->next[0] = tc_expr_var(a, chunks,
				    next->loc);
	verify_has(p, "run 1: a prefetch of the next block's rows that is not "
		   "two-dimensional in a one-dimensional grid, or whose origin "
		   "names what varies in the block");
	run1->next[0] = NULL;
	verify_has(p, "run 1: 1 ops prefetch the next block's rows, with an "
		   "origin");
	run1->next[0] = next;
	ck_assert_int_eq(verify_has(p, NULL), 0);

	/* samples/gemm_f32.c's pipelined loop begins with the prefetches of
	 * its two copies (passes/cpu_prefetch.c). */
	p = compiled_sample(a, &d, "gemm_f32.c", "openmp", "avx512");
	k = p->kernels.items[0];
	ck_assert_int_eq(verify_has(p, NULL), 0);
	TcStmt *pf = find_kind(k->body, TC_ST_PREFETCH, -1);
	ck_assert(pf && pf->u.copy.src.bounded);
	unsigned nonneg = pf->u.copy.src.nonneg;
	pf->u.copy.src.nonneg &= ~1u;
	verify_has(p, "with an origin not proven non-negative");
	pf->u.copy.src.nonneg = nonneg;
	pf->u.copy.src.dims[1] = 0;
	pf->u.copy.src.dims[0] = 1;
	verify_has(p, "its rows are not contiguous");
	pf->u.copy.src.dims[0] = 0;
	pf->u.copy.src.dims[1] = 1;
	pf->u.copy.dst.whole = false;
	verify_has(p, "is not a whole buffer");
	pf->u.copy.dst.whole = true;
	pf->u.copy.lower = TC_COPY_VECTOR;
	verify_has(p, "with async copy fields");
	pf->u.copy.lower = TC_COPY_ANY;

	ck_assert_int_eq(verify_has(p, NULL), 0);
	tc_arena_free(a);
}
END_TEST

START_TEST(kernel_header)
{
	Fixture f;
	fixture_init(&f);
	f.k->grid[0] = tc_expr_var(f.a, f.bx, noloc);
	expect_violation(&f, "block 'bx' cannot be named here");

	fixture_init(&f);
	f.as->shape[0] = tc_expr_var(f.a, f.m, noloc);
	expect_violation(&f, "scalar 'M' cannot be named here");

	fixture_init(&f);
	f.k->block[0] = f.by;
	expect_violation(&f, "grid dim 0 bound to 'by'");

	fixture_init(&f);
	f.as->scope = TC_SCOPE_NONE;
	expect_violation(&f, "buffer 'As' without a memory scope");

	fixture_init(&f);
	f.ta->param = 0;
	expect_violation(&f, "parameter 'A' at 3 has index 0");

	fixture_init(&f);
	f.k->params.items[0] = f.as;
	expect_violation(&f, "parameter 'As' is a buffer");
}
END_TEST

Suite *
unit_suite_verify(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("verify");
	tcase_add_test(tc, valid_program_passes);
	tcase_add_test(tc, message_names_the_pass_and_location);
	tcase_add_test(tc, bad_union_arms);
	tcase_add_test(tc, null_children);
	tcase_add_test(tc, vars_belong_to_the_kernel);
	tcase_add_test(tc, declared_before_use);
	tcase_add_test(tc, loop_vars_only_inside_their_loop);
	tcase_add_test(tc, loads_match_the_rank);
	tcase_add_test(tc, region_invariants);
	tcase_add_test(tc, tile_op_operands);
	tcase_add_test(tc, expression_types);
	tcase_add_test(tc, loop_shapes);
	tcase_add_test(tc, schedule_marks);
	tcase_add_test(tc, expanded_pipeline);
	tcase_add_test(tc, cpu_schedule);
	tcase_add_test(tc, kernel_header);
	suite_add_tcase(s, tc);
	return s;
}
