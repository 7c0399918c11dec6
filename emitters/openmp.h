/*
 * openmp.h - what the two files of the OpenMP backend share.
 *
 * openmp.c prints a kernel statement by statement; openmp_fuse.c prints
 * the runs of row-wise statements the fuse pass planned (kernel->fusions)
 * as one pass per row.  Both print through one Emitter: openmp_fuse.c
 * calls the printing helpers of openmp.c, and openmp.c asks openmp_fuse.c,
 * at each statement of a block, whether a run starts there.  Private to the
 * backend: nothing outside emitters/openmp*.c includes it.
 */
#ifndef TILEC_OPENMP_H
#define TILEC_OPENMP_H

#include "analysis/walk.h"
#include "cfamily.h"

/* The column generated code lines stay within (tc_wrap_code). */
enum { TC_OMP_WIDTH = 100 };

/* A run of statements printed as one loop nest (openmp_fuse.c). */
typedef struct Fusion Fusion;

/* The state of printing one kernel. */
typedef struct Emitter {
	TcArena *a;             /* scratch for this kernel */
	const TcProgram *p;     /* the program (its text, for comments) */
	const TcKernel *k;      /* the kernel being printed */
	const TcTarget *t;      /* openmp and its arch */
	const TcOptions *opt;   /* line directives, standalone */
	TcDiags *d;             /* where errors go */
	TcBuf *out;             /* the output */
	TcCPrinter pr;          /* expression printer with openmp.c's hooks */
	/* Per kernel var (by index): */
	bool *visible;          /* in scope at block level (tile ops see it) */
	bool *used;             /* referenced by the block's body */
	bool *block_dep;        /* LOCAL: value depends on a block index */
	bool dynamic;           /* blocks do unequal work: schedule(dynamic) */
	bool dep_found;         /* set by note_block_dep's walk */
	int line;               /* last #line printed, 0 for none */
	/* Fusion (openmp_fuse.c): */
	const bool *elided;     /* BUFFER: while a fused row loop is printed,
				   its element is a local of the loop */
	TcVec reserved;         /* const char *: names the open fused loop
				   nest has declared */
	/* Explicit vectors (openmp_vec.c): */
	bool vec;               /* a vector loop's body is being printed */
	bool *vector;           /* by var index: a local holding a tilec_vf */
#define TC_OMP_VEC_COLS 8
	const TcVar *vcol[TC_OMP_VEC_COLS]; /* the column vars of the loop's
					       nests */
	int nvcol;              /* how many */
	/* A strip of blocks (passes/cpu_strip.c): */
	const char **strip_all; /* by var index: the array of a buffer each
				   block keeps its own of (var->each_block) */
	const char *strip_first; /* the block function's first grid x */
	const char *strip_count; /* and how many blocks from it it runs */
	const char *strip_len;  /* the kernel function's blocks a strip */
} Emitter;

/* ==== openmp.c: kernels, statements and tile ops ========================== */

/* `sizeof v` of a buffer: one block's, where each block of a strip keeps
 * its own (`sizeof acc_all[0]`). */
const char *tc_omp_sizeof(Emitter *E, const TcVar *v);

/* --- Types ------------------------------------------------------------------- */

/* f16, bf16, fp8: held as float, rounded on every store. */
bool tc_omp_is_narrow_float(TcDtype t);
bool tc_omp_rounds(TcDtype t);
TcDtype tc_omp_reduce_held(TcDtype t);
/* The C type of values (locals, expressions, buffer elements). */
const char *tc_omp_value_type(TcDtype t);
/* The C type of tensor elements in memory. */
const char *tc_omp_storage_type(TcDtype t);
/* The C type of buffer v's elements: its dtype's values, or as stored
 * where a pass says so (var->stored: passes/cpu_gemm.c). */
const char *tc_omp_held_type(const TcVar *v);

/* --- Analysis ---------------------------------------------------------------- */

/* How many nodes of e and s (either may be NULL) match: expressions by
 * expr, statements by stmt (either may be NULL), given arg. */
typedef struct Count {
	bool (*expr)(const TcExpr *e, const void *arg); /* matches e */
	bool (*stmt)(const TcStmt *s, const void *arg); /* matches s */
	const void *arg;                                /* what they look for */
	int n;                                          /* matches seen */
} Count;

/* Call fn(ctx, v) on every var e and s (either may be NULL) name: vars
 * read, the tensors and buffers loaded, the vars statements declare or
 * loop over, their regions' vars. */
typedef void (*VarFn)(void *ctx, const TcVar *v);
void tc_omp_walk_vars(const TcExpr *e, const TcStmt *s, VarFn fn, void *ctx);
/* The matches of c in e and s. */
int tc_omp_count_nodes(const TcExpr *e, const TcStmt *s, Count c);
/* Whether e or s calls a libm function with no vector form (erf, log1p,
 * expm1): the loop around it gets no `omp simd`. */
bool tc_omp_scalar_calls(const TcExpr *e, const TcStmt *s);
/* Whether s holds an `if` inside an `if`: the loop around it gets no
 * `omp simd` either. */
bool tc_omp_nested_ifs(const TcStmt *s);
/* Whether a statement contains a loop (then `omp simd` stays off the
 * loop around it). */
bool tc_omp_has_loop(const TcStmt *s);
/* The parallel loop directly nested in s's body, if that is all it has. */
const TcStmt *tc_omp_nested_parallel(const TcStmt *s);
/* Whether the bounds pass proved region r's origin along dim d >= 0. */
bool tc_omp_origin_nonneg(const TcRegion *r, int d);

/* --- Names ------------------------------------------------------------------- */

/* base, or base2, base3 ... if it is taken. */
const char *tc_omp_fresh(Emitter *E, const char *base);
/* Index names for the dims of a tile of rank r: i, j, l, m, ... */
void tc_omp_index_names(Emitter *E, int r, const char **names);

/* --- Printing ---------------------------------------------------------------- */

/* An expression as text (for names of extents in later lines). */
const char *tc_omp_expr_text(Emitter *E, const TcExpr *e, int min_prec);
/* `#pragma TEXT` at the start of the line, where clang-format puts it. */
void tc_omp_pragma(Emitter *E, const char *fmt, ...) TC_PRINTF(2, 3);
/* `#line N "file"` before a statement from a new source line. */
void tc_omp_line_directive(Emitter *E, TcLoc loc);
/* `for (int i = 0; i < N; i++)` over tile dim d of a buffer. */
void tc_omp_for_dim(Emitter *E, const char *idx, const char *begin,
		    const char *end);
/* `buf[i][j]` for a whole buffer indexed by names. */
const char *tc_omp_elem(Emitter *E, const TcVar *v, const char *const *idx);
/* Print `head` then the arguments separated by ", " and `tail`, breaking
 * lines before 80 columns with continuations aligned after `head`. */
void tc_omp_print_wrapped(Emitter *E, const char *head, const char **args,
			  int n, const char *tail);
/* `HEAD VALUE;` for a value already printed, broken after HEAD if the
 * line would pass 80 columns. */
void tc_omp_print_text(Emitter *E, const char *head, const char *value);
/* `HEAD VALUE;` where VALUE is stored as dtype t (TC_DT_NONE: as is),
 * with a long line broken as clang-format breaks it: after HEAD, or, if
 * VALUE still does not fit, at its top operator, aligned after HEAD. */
void tc_omp_print_statement(Emitter *E, const char *head, const TcExpr *value,
			    TcDtype t);
/* One comment for a tile_parallel nest, in the program's spelling, with
 * what follows appended. */
void tc_omp_nest_comment(Emitter *E, const TcStmt *s, const char *more);
/* Print one statement of the body (a tile op, a loop, ...). */
void tc_omp_emit_stmt(Emitter *E, const TcStmt *s);

/* --- Tile ops ---------------------------------------------------------------- */

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

/* Suffix of the tilec_load_* / tilec_store_* row helper for a tensor
 * dtype, or NULL if rows of it are not copied by a helper. */
const char *tc_omp_row_helper(TcDtype t);
const char *tc_omp_tensor_bytes(Emitter *E, const TcVar *t);
/* A value of dtype `from` (text) as stored into dtype `to` held as a value
 * (a buffer element). */
const char *tc_omp_to_buffer(Emitter *E, const char *val, TcDtype from,
			     TcDtype to);
/* `T[a][b]` (or the flat offset of an i4 tensor) for the current element
 * or, with start, the first element of the current row. */
const char *tc_omp_tensor_elem(Emitter *E, const CopyPlan *cp, bool start);
/* The current element of the tensor as the buffer holds it: read (i4
 * unpacked, narrow floats widened), then stored as the buffer's dtype. */
const char *tc_omp_tensor_value(Emitter *E, const CopyPlan *cp);
/* cp->fixed: the test that the tensor dims the tile does not cover hold
 * their origin index, NULL where that is proven. */
void tc_omp_fixed_dims(Emitter *E, CopyPlan *cp);
/* The accumulator's first value: the identity, or with accumulate the
 * destination's value, of which a NaN is dropped (fmaxf's rule) and for
 * absmax the magnitude taken. */
const char *tc_omp_reduce_start(Emitter *E, TcReduceOp op, TcDtype t,
				const char *old);
/* `acc op= x` for a reduction, as a statement body.  Max and min are
 * selects that compile to one vmaxps / vminps: a NaN x leaves acc alone,
 * as fmaxf does, and acc never holds a NaN (see reduce_start). */
const char *tc_omp_reduce_step(Emitter *E, TcReduceOp op, TcDtype t,
			       const char *acc, const char *x);

/* ==== openmp_fuse.c: row-wise runs printed ================================ */

/* The run (kernel->fusions, passes/cpu_fuse.c) that starts at statement i
 * of block, or NULL. */
const TcFusion *tc_omp_fusion_at(Emitter *E, const TcStmt *block, int i);
/* Print a run as one loop nest in place of its plan->nstmts statements
 * (the file-top comment of openmp_fuse.c). */
void tc_omp_emit_fusion(Emitter *E, const TcFusion *plan);

/* ==== openmp_vec.c: explicit vectors for a run's element loop ============== */

/* Start a loop: its nests' column vars; no local is a vector yet (the
 * caller marks the run's lanes, TcFusion.lanes, in E->vector). */
void tc_omp_vec_columns(Emitter *E, const TcVar *const *cols, int n);
/* Whether e differs between the lanes (E->elided: the run's locals). */
bool tc_omp_vec_varies(const Emitter *E, const TcExpr *e);
/* Hooks of the expression printer while E->vec: a call's vector form
 * (NULL: the scalar name), and a load of the lanes' elements
 * (tilec_vload; false: print it as a scalar). */
const char *tc_omp_vec_func(const Emitter *E, const TcExpr *call);
/* Argument i of a call on vectors that does not vary, printed broadcast
 * (tilec_vsplat); false for any other argument. */
bool tc_omp_vec_call_arg(TcCPrinter *pr, const TcExpr *call, int i);
/* A select that varies over the lanes, printed on vectors (tilec_vselect
 * of a lane mask); false for anything else. */
bool tc_omp_vec_expr(TcCPrinter *pr, const TcExpr *e);
bool tc_omp_vec_load(TcCPrinter *pr, const TcExpr *e);
/* e as a vector: its text, broadcast if uniform. */
const char *tc_omp_vec_text(Emitter *E, const TcExpr *e);
/* Print a statement of a nest's body on vectors (one the vector pass
 * found a form for, TcFuseOp.vector). */
void tc_omp_vec_emit_stmt(Emitter *E, const TcStmt *s);

#endif
