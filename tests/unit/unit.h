/*
 * unit.h - shared pieces of the Check unit tests.
 *
 * Each test_NAME.c defines `Suite *unit_suite_NAME(void)`; UNIT_SUITES
 * lists them once, and both the runner (main.c) and tests/meson.build (one
 * meson test per suite) follow that list.  fixture.c builds IR by hand so
 * the printer and the verifier can be tested without the parser.
 */
#ifndef TILEC_UNIT_H
#define TILEC_UNIT_H

#include <check.h>

#include "ir/tilec_int.h"

/* Every suite: NAME.  Keep in step with tests/meson.build. */
#define UNIT_SUITES(X) \
	X(arena)       \
	X(buf)         \
	X(diag)        \
	X(ir)          \
	X(print)       \
	X(verify)      \
	X(runtime)     \
	X(cache)       \
	X(interp)      \
	X(target)      \
	X(harness)     \
	X(tmap)        \
	X(read)

#define X(name) Suite *unit_suite_##name(void);
UNIT_SUITES(X)
#undef X

/* samples/gemm.c, built by hand as the parser would build it.  Every
 * field is a handle the tests poke at to break one invariant. */
typedef struct Fixture {
	TcArena *a;         /* owns everything below */
	TcProgram *p;       /* the program: four tunables, one kernel */
	TcKernel *k;        /* gemm */
	TcVar *block_m, *block_n, *block_k, *stages; /* tunables */
	TcVar *m, *n, *kk;  /* scalar parameters M, N, K */
	TcVar *ta, *tb, *tcv; /* tensor parameters A, B, C */
	TcVar *bx, *by;     /* block indices */
	TcVar *as, *bs, *acc; /* buffers As, Bs (shared), acc (fragment) */
	TcVar *kloop;       /* the pipelined loop's variable k */
	TcStmt *decl_as;    /* DECL As */
	TcStmt *fill;       /* FILL acc, 0.0 */
	TcStmt *loop;       /* the pipelined loop */
	TcStmt *copy_a;     /* COPY As <- A[...] (in the loop) */
	TcStmt *copy_b;     /* COPY Bs <- B[...] (in the loop) */
	TcStmt *gemm;       /* GEMM acc += As * Bs (in the loop) */
	TcStmt *store;      /* COPY C[...] <- acc */
} Fixture;

void fixture_init(Fixture *f);
void fixture_free(Fixture *f);

/* A location in the fixture's file. */
TcLoc fx_loc(int line, int col);
/* Builders for hand-made IR, all in f->a. */
TcExpr *fx_call(Fixture *f, TcFunc fn, TcExpr *x, TcExpr *y, TcLoc loc);
TcExpr *fx_load(Fixture *f, TcVar *v, TcExpr *i, TcExpr *j, TcLoc loc);
TcVar *fx_buffer(Fixture *f, const char *name, TcScope scope, TcDtype t,
		 TcExpr *d0, TcExpr *d1, TcLoc loc);
TcStmt *fx_decl(Fixture *f, TcVar *v, TcExpr *init, TcLoc loc);
TcStmt *fx_block(Fixture *f, TcLoc loc);
TcStmt *fx_loop(Fixture *f, TcLoopKind kind, TcVar *var, TcExpr *end,
		TcLoc loc);
TcRegion fx_whole(Fixture *f, TcVar *v);
void fx_push(Fixture *f, TcStmt *block, TcStmt *s);

#endif /* TILEC_UNIT_H */
