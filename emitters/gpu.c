/*
 * gpu.c - the GPU emitter: CUDA C++ and HIP C++ from one printer.
 *
 * Input: a program scheduled by the GPU passes (layout, pipeline, smem,
 * barrier) and the target's dialect (gpu.h; one const table each in
 * cuda.c and hip.c).  Output: one `extern "C" __global__` kernel per tile
 * kernel, calling the helpers of the target's header (templates/cuda,
 * templates/hip), whose function names and arguments match.
 *
 * How the block-serial program becomes GPU code (docs/backend-cuda.md,
 * docs/backend-hip.md):
 *   - every thread runs the kernel body; scalars at block level are
 *     computed by all threads alike (uniform);
 *   - buffers in shared memory are slices of one dynamic shared array, at
 *     the offsets smem.c chose; register fragments are per-thread arrays
 *     x[R::count][C::count] of their dtype's value type (float for f32,
 *     f16 and bf16, double, int, long long);
 *   - tile operations are cooperative: all threads share the elements, or,
 *     for register fragments, each thread handles the elements it holds;
 *   - tile_gemm with a matrix-instruction accumulator (Mma on CUDA, Mfma
 *     on HIP) calls the dialect's gemm helpers (operands in shared memory,
 *     or A in registers), each shared operand a tilec::SharedTile whose
 *     type, declared with its buffer, carries the shape, padded rows,
 *     swizzle and stages the smem pass gave it; any other gemm runs from
 *     shared memory element by element;
 *   - a tile_parallel nest spreads its iterations over the threads, unless
 *     layout.c anchored it to a register fragment: then each thread visits
 *     the rows and columns it holds (stores to shared or global memory are
 *     done by one of the threads holding the element);
 *   - stores at block level to shared or global memory are done by thread
 *     0; BARRIER statements become __syncthreads();
 *   - the statements expand_pipeline.c makes of a tile_pipelined loop
 *     print one by one: ASYNC_COPY as tilec::copy_g2s with cp.async
 *     (VECTOR) or a tilec::G2S plan's issue() (STRIDED, the plan a
 *     COPY_PLAN), COMMIT_GROUP and WAIT_GROUP as tilec::cp_async_commit
 *     and cp_async_wait, STAGE_VIEW as a pointer to the stage, the
 *     STAGE_BAR_* statements as tilec::StageBarriers calls, a gemm's
 *     issue block as the gemm helper's hook, PIPE_SELECT as an `if` on
 *     its plans' alignment.  Where the dialect has no cp.async (HIP) the
 *     pipeline pass plans none and the loop runs its copies in order.
 * The output names things after the tile program and comments each tile
 * operation with its source line.
 */
#include "cfamily.h"
#include "gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The columns a line of the output fits in (comments wrap there too). */
enum { TC_GPU_WIDTH = 100 };

typedef struct Gpu {
	TcCPrinter pr;          /* the printer (pr.out is the output) */
	const TcGpuDialect *dialect; /* the target's spellings and choices */
	TcArena *a;             /* scratch for names and snippets */
	const TcProgram *prog;  /* the program */
	const TcKernel *k;      /* the kernel being printed */
	const TcTarget *t;      /* the target */
	const TcOptions *opt;   /* options */
	TcDiags *d;             /* errors */
	long long threads;      /* threads per block */
	const char *nthreads;   /* the same as the program says it (THREADS) */
	/* The warp grid of the matrix-instruction fragments, 0 if none. */
	int warps_m, warps_n;
	int unit;               /* threads of one matrix-grid cell: a warp, or
				 * a wgmma warpgroup */
	const char **dist;      /* per distribution class id: its C++ alias */
	/* Anchored loops being printed, outermost first: each runs over the
	 * indices its class gives this thread. */
	const TcStmt *anchors[TC_MAX_RANK];
	int nanchors;
	int spread;             /* depth of spread parallel loops */
	bool block_level;       /* not inside any parallel loop */
	bool producer;          /* inside a ROLES' producer block (one
				   thread's) */
	bool failed;            /* an error was reported */
	/* The emitter's own names (loop counters, tile indices, ...), each
	 * made distinct from every name of the program (fresh()). */
	const char *e, *tix[TC_MAX_RANK], *row, *col, *r0, *r1, *o, *kk;
	const char *warp_m, *warp_n;
	/* Names the emitter declares in the scope of a statement of the
	 * program (not in a block of its own): fresh_decl() keeps two such
	 * declarations in one scope (two reduces into one tile) apart. */
	TcVec decls;            /* const char * */
	/* By var index: the tilec::SharedTile type of a shared buffer the
	 * matrix-instruction gemm helpers read (declared with it), and of
	 * each stage view of one; NULL for the rest. */
	const char **tile;
	/* Inside a loop in runs (emit_runs): the loads its value reads along
	 * the run as one vector (tc_run_whole_loads), each held in the
	 * tilec::Run named run_names[i]; run_v names the run's element. */
	const TcExpr *run_loads[16];
	const char *run_names[16];
	int nrun_loads;
	const char *run_v;
	/* Printing a packed i4 load converted to f32 (hook_convert): the
	 * load prints as tilec::i4_float, not i4_get. */
	bool i4_float;
} Gpu;

/* Whether fragments of layout kind `kind` are spread like the target's
 * matrix-instruction accumulators (TcTarget.mma). */
static bool
is_mma_layout(const Gpu *G, TcLayoutKind kind)
{
	return (G->t->mma && kind == G->t->mma->layout) ||
	       (G->t->wgmma && kind == G->t->wgmma->layout);
}

/* Whether the kernel's gemms are wgmma's (layout.c): its accumulators
 * are spread over warpgroups, and it needs the sm_90a helpers. */
static bool
uses_wgmma(const Gpu *G)
{
	return G->t->wgmma && G->unit > G->t->warp_size;
}

/* Whether the kernel needs the sm_90a helpers: wgmma's, or TMA copies
 * (tensor maps); both need its swizzled tiles 1024-byte aligned. */
static bool
uses_sm90(const Gpu *G)
{
	return uses_wgmma(G) || G->k->tmaps.len > 0;
}

/* Whether any kernel of the program has wgmma accumulators or TMA
 * copies: then every kernel declares the dynamic shared memory
 * 1024-byte aligned, since the declarations of one translation unit
 * must agree. */
static bool
program_uses_wgmma(const Gpu *G)
{
	for (int i = 0; i < G->prog->kernels.len; i++) {
		const TcKernel *k = G->prog->kernels.items[i];
		if (k->tmaps.len)
			return true;
		for (int j = 0; j < k->vars.len; j++)
			if (((const TcVar *)k->vars.items[j])->layout.kind ==
			    TC_LAYOUT_WGMMA)
				return true;
	}
	return false;
}

TC_PRINTF(3, 4)
static void
error(Gpu *G, TcLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(G->d, TC_ERROR, loc, fmt, ap);
	va_end(ap);
	G->failed = true;
}

/* Names a C program may give its variables that the printed C++ cannot:
 * C++'s keywords, and what the kernel's body names itself (the block's
 * and thread's indices, min and max of the ragged extents, size_t of the
 * offsets, the helpers' namespace, the atomics).  NULL-terminated. */
static const char *const cxx_keywords[] = {
	"alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor",
	"catch", "char8_t", "char16_t", "char32_t", "class", "compl",
	"concept", "const_cast", "consteval", "constexpr", "constinit",
	"co_await", "co_return", "co_yield", "decltype", "delete",
	"dynamic_cast", "explicit", "export", "false", "friend", "mutable",
	"namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator",
	"or", "or_eq", "private", "protected", "public", "reinterpret_cast",
	"requires", "static_assert", "static_cast", "template", "this",
	"thread_local", "throw", "true", "try", "typeid", "typename", "using",
	"virtual", "wchar_t", "xor", "xor_eq", NULL
};
static const char *const body_names[] = {
	"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "min",
	"max", "size_t", "tilec", "atomicAdd", "atomicMax", "atomicMin",
	"atomicCAS", "atomicExch", "atomicOr", "atomicAnd", "atomicXor", NULL
};

static bool
listed(const char *const *list, const char *name)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

/* A located error for each name of the kernel the printed C++ cannot
 * use; false if any. */
static bool
names_printable(Gpu *G)
{
	const TcKernel *k = G->k;
	bool ok = true;
	for (int i = -1; i < k->vars.len; i++) {
		const char *name = i < 0 ? k->name : ((TcVar *)k->vars.items[i])->name;
		TcLoc loc = i < 0 ? k->loc : ((TcVar *)k->vars.items[i])->loc;
		if (!loc.line)
			continue; /* a pass's, named after the program's */
		if (i < 0 && strcmp(name, "main") == 0)
			error(G, loc, "'main' cannot name a kernel in %s output: "
			      "C++ keeps it for the program's entry; rename it",
			      G->dialect->name);
		else if (listed(cxx_keywords, name))
			error(G, loc, "'%s' cannot name %s in %s output: it is a "
			      "C++ keyword; rename it", name, i < 0 ? "a kernel" :
			      "a variable", G->dialect->name);
		else if (listed(body_names, name))
			error(G, loc, "'%s' cannot name %s in %s output: the "
			      "kernel's code uses the %s of that name; rename "
			      "it", name, i < 0 ? "a kernel" : "a variable",
			      G->dialect->name, strcmp(name, "tilec") == 0
						? "namespace of its helpers"
						: "built-in or function");
		else
			continue;
		ok = false;
	}
	return ok;
}

/* Is `name` a name of the program (a var of the kernel or a tunable)? */
static bool
name_taken(const Gpu *G, const char *name)
{
	for (int i = 0; i < G->k->vars.len; i++)
		if (strcmp(((const TcVar *)G->k->vars.items[i])->name, name) == 0)
			return true;
	for (int i = 0; i < G->prog->tunables.len; i++)
		if (strcmp(((const TcVar *)G->prog->tunables.items[i])->name, name) == 0)
			return true;
	return false;
}

/* `base`, or base with underscores appended until no name of the program
 * has it: generated names never shadow the program's. */
static const char *
fresh(Gpu *G, const char *base)
{
	const char *n = base;
	while (name_taken(G, n))
		n = tc_fmt(G->a, "%s_", n);
	return n;
}

/* fresh(), also distinct from every name fresh_decl() gave before in
 * this kernel. */
static const char *
fresh_decl(Gpu *G, const char *base)
{
	const char *n = fresh(G, base);
	for (int i = 0; i < G->decls.len; i++)
		if (strcmp(G->decls.items[i], n) == 0) {
			n = fresh(G, tc_fmt(G->a, "%s_", n));
			i = -1;
		}
	tc_vec_push(G->a, &G->decls, (void *)n);
	return n;
}

/* Is v a register fragment (of either target's layouts)? */
static bool
is_reg(const TcVar *v)
{
	return v->kind == TC_VAR_BUFFER &&
	       (tc_layout_is_matrix(v->layout.kind) ||
		v->layout.kind == TC_LAYOUT_BLOCKED);
}

/* The alias of the distribution of register fragment v's dim d. */
static const char *
dist_of(Gpu *G, const TcVar *v, int d)
{
	return G->dist[v->layout.dim[d].id];
}

/* --- Types -------------------------------------------------------------------- */

/* The C++ type that stores a dtype in memory (bf16: the dialect's). */
static const char *
storage_type(const Gpu *G, TcDtype t)
{
	switch (t) {
	case TC_DT_F64: return "double";
	case TC_DT_F32: return "float";
	case TC_DT_F16: return "__half";
	case TC_DT_BF16: return G->dialect->bf16_type;
	case TC_DT_I64: return "long long";
	case TC_DT_I32: return "int";
	case TC_DT_I8: return "signed char";
	case TC_DT_U8: return "unsigned char";
	case TC_DT_FP8E4M3: return "tilec::fp8e4m3";
	case TC_DT_FP8E5M2: return "tilec::fp8e5m2";
	case TC_DT_BOOL: return "bool";
	case TC_DT_I4: return "tilec::i4x2"; /* a byte of two, packed */
	default: return NULL;
	}
}

/* The type of a value of dtype t in expressions: 16-bit floats compute in
 * float, like the tile language says. */
static const char *
value_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F64: return "double";
	case TC_DT_F16:
	case TC_DT_BF16:
	case TC_DT_FP8E4M3:
	case TC_DT_FP8E5M2:
	case TC_DT_F32: return "float";
	case TC_DT_I64: return "long long";
	case TC_DT_BOOL: return "bool";
	default: return "int";
	}
}

/* The C++ type of a register fragment's elements: the value type, but
 * the 8-bit integers keep their own type, so every write to a fragment
 * wraps as it would in memory (a copy of an i32 -3 into a u8 fragment
 * holds 253) and every read promotes to int. */
static const char *
reg_type(Gpu *G, TcDtype t)
{
	return t == TC_DT_I8 || t == TC_DT_U8 ? storage_type(G, t) : value_type(t);
}

/* A float narrower than f32 (f16, bf16, fp8): it computes as float and
 * converts through tilec::to_float / from_float. */
static bool
narrow_float(TcDtype t)
{
	return t == TC_DT_F16 || t == TC_DT_BF16 || t == TC_DT_FP8E4M3 ||
	       t == TC_DT_FP8E5M2;
}

/* Whether values of dtype t compute as float (f32, f16, bf16). */
static bool
float_valued(TcDtype t)
{
	return strcmp(value_type(t), "float") == 0;
}

/* The start of a conversion of an element in memory to the value type of
 * dtype t, closed by ")": tilec::to_float for values that are floats,
 * tilec::to_value<V> for the others (doubles, integers: exact). */
static const char *
to_value_of(Gpu *G, TcDtype t)
{
	return float_valued(t) ? "tilec::to_float(" :
	       tc_fmt(G->a, "tilec::to_value<%s>(", value_type(t));
}

/* The zero of dtype t's value type, as an expression. */
static TcExpr *
zero_of(Gpu *G, TcDtype t, TcLoc loc)
{
	if (float_valued(t))
		return tc_expr_float(G->a, 0.0, TC_DT_F32, loc);
	if (t == TC_DT_F64)
		return tc_expr_float(G->a, 0.0, TC_DT_F64, loc);
	return tc_expr_int(G->a, 0, loc);
}

/* The start of a conversion of a value of dtype `from` to the element type
 * of dtype t in memory, closed by ")". */
static const char *
from_value_of(Gpu *G, TcDtype t, TcDtype from)
{
	if (t == TC_DT_I4) /* an int, which tilec::i4_put wraps */
		return "(int)(";
	return tc_fmt(G->a, "tilec::%s<%s>(", float_valued(from) ? "from_float" :
		      "from_value", storage_type(G, t));
}

static const char *
func_name(TcCPrinter *pr, const TcExpr *call)
{
	(void)pr;
	TcFunc fn = call->u.call.fn;
	switch (fn) {
	case TC_FN_CEILDIV: return "tilec::ceildiv";
	case TC_FN_MIN: return "min";
	case TC_FN_MAX: return "max";
	case TC_FN_ABS: return "tilec::abs";
	case TC_FN_SAT_I8: return "tilec::sat_i8";
	case TC_FN_SAT_U8: return "tilec::sat_u8";
	case TC_FN_SAT_I32: return "tilec::sat_i32";
	default: return tc_func_name(fn);
	}
}

/* --- Element references ------------------------------------------------------------ */

static bool
is_zero(const TcExpr *e)
{
	return e->kind == TC_EX_INT && e->u.ival == 0;
}

/* Elements per row of a buffer in shared memory, padding included. */
static long long
row_stride(const TcVar *v)
{
	return tc_var_extent(v, v->rank - 1) + v->pad;
}

/* The text of e as printed, parenthesized if it binds looser than prec. */
static const char *
expr_text(Gpu *G, const TcExpr *e, int prec)
{
	TcBuf t;
	tc_buf_init(&t);
	TcBuf *out = G->pr.out;
	G->pr.out = &t;
	tc_c_expr_prec(&G->pr, e, prec);
	G->pr.out = out;
	const char *text = tc_strdup(G->a, t.data ? t.data : "");
	tc_buf_free(&t);
	return text;
}

/* Extent i of v as the program declares it (the tunables' names, which
 * the kernel's enum declares, not their values), parenthesized if it
 * binds looser than prec. */
static const char *
extent_text(Gpu *G, const TcVar *v, int i, int prec)
{
	return expr_text(G, v->shape[i], prec);
}

/* row_stride(v) as the program declares it: `BLOCK_K`, `BLOCK_K + 8`. */
static const char *
row_stride_text(Gpu *G, const TcVar *v, int prec)
{
	const TcExpr *last = v->shape[v->rank - 1];
	if (!v->pad)
		return expr_text(G, last, prec);
	const char *t = tc_fmt(G->a, "%s + %d",
			       expr_text(G, last, tc_binop_prec(TC_OP_ADD)), v->pad);
	return prec > tc_binop_prec(TC_OP_ADD) ? tc_fmt(G->a, "(%s)", t) : t;
}

/* The elements in one stage of staged buffer v, as the program declares
 * them: `BLOCK_M * BLOCK_K`, parenthesized as a factor if `factor`; for
 * packed i4, the bytes that hold them, `((BLOCK_N * BLOCK_K + 1) / 2)`
 * (smem.c's stage_bytes). */
static const char *
stage_elems_text(Gpu *G, const TcVar *v, bool factor)
{
	int mul = tc_binop_prec(TC_OP_MUL);
	bool i4 = v->dtype == TC_DT_I4;
	if (v->rank == 1 && !i4)
		return row_stride_text(G, v, factor ? mul + 1 : 0);
	const char *t = v->rank == 1 ? row_stride_text(G, v, tc_binop_prec(TC_OP_ADD))
				     : extent_text(G, v, 0, mul);
	for (int i = 1; i < v->rank - 1; i++)
		t = tc_fmt(G->a, "%s * %s", t, extent_text(G, v, i, mul + 1));
	if (v->rank > 1)
		t = tc_fmt(G->a, "%s * %s", t, row_stride_text(G, v, mul + 1));
	if (i4)
		return tc_fmt(G->a, "((%s + 1) / 2)", t);
	return factor ? tc_fmt(G->a, "(%s)", t) : t;
}

/* Byte `offset` of the block's shared memory: `tilec_smem + OFFSET`. */
static const char *
smem_at(Gpu *G, long long offset)
{
	return offset ? tc_fmt(G->a, "tilec_smem + %lld", offset) : "tilec_smem";
}

/* The base of a buffer in shared memory: its name.  A staged buffer is
 * named through a STAGE_VIEW, or filled by stage (smem_stage). */
static void
smem_base(Gpu *G, const TcVar *v)
{
	tc_buf_puts(G->pr.out, v->name);
}

/* Stage `stage` of staged buffer v: `NAME + STAGE * (ELEMS)`, for a
 * shared tile `NAME_tile::stage(NAME, STAGE)`, or NAME for stage 0. */
static void
smem_stage(Gpu *G, const TcVar *v, const TcExpr *stage)
{
	if (is_zero(stage)) {
		tc_buf_puts(G->pr.out, v->name);
		return;
	}
	if (G->tile[v->index]) {
		tc_buf_printf(G->pr.out, "%s::stage(%s, ", G->tile[v->index],
			      v->name);
		tc_c_expr_prec(&G->pr, stage, TC_PREC_COMMA + 1);
		tc_buf_puts(G->pr.out, ")");
		return;
	}
	tc_buf_printf(G->pr.out, "%s + ", v->name);
	tc_c_expr_prec(&G->pr, stage, tc_binop_prec(TC_OP_MUL) + 1);
	tc_buf_printf(G->pr.out, " * %s", stage_elems_text(G, v, true));
}

/* The row bytes of a swizzled shared buffer (the helpers' SW), else 0. */
static long long
swizzle_bytes(const TcVar *v)
{
	if (!v->swizzle)
		return 0;
	return tc_var_extent(v, v->rank - 1) * tc_dtype_storage_bits(v->dtype) / 8;
}

/* The declaration of the SharedTile type of shared buffer v (G->tile):
 * `using As_tile = tilec::SharedTile<T, ROWS, COLS>` with the padded
 * rows, the swizzle and the stages the smem pass gave it. */
static void
shared_tile_type(Gpu *G, const TcVar *v)
{
	TcBuf *b = G->pr.out;
	const char *shape = tc_fmt(G->a, "using %s = tilec::SharedTile<%s, %s, %s>",
				   G->tile[v->index], storage_type(G, v->dtype),
				   extent_text(G, v, 0, TC_PREC_COMMA + 1),
				   extent_text(G, v, 1, TC_PREC_COMMA + 1));
	const char *more = "";
	if (v->pad)
		more = tc_fmt(G->a, "::padded<%s>",
			      row_stride_text(G, v, TC_PREC_COMMA + 1));
	if (v->swizzle)
		more = tc_fmt(G->a, "%s::swizzled<%lld>", more, swizzle_bytes(v));
	if (v->stages > 1)
		more = tc_fmt(G->a, "%s::staged<%d>", more, v->stages);
	/* Too long for a line: the properties on the next. */
	bool split = (size_t)b->indent * 8 + strlen(shape) + strlen(more) + 1 >
		     TC_GPU_WIDTH;
	tc_buf_printf(b, "%s%s%s;\n", shape, split ? "\n\t" : "", more);
}

/* The copy helpers' SWIZZLE argument for a swizzled buffer: `, true`
 * for swizzled rows, `, tilec::SWIZZLE_PANELS` for 128-byte panels,
 * `, tilec::swizzle_groups(N)` for a tile read by columns. */
static const char *
swizzle_arg(Gpu *G, const TcVar *v)
{
	if (v->swizzle_rows)
		return tc_fmt(G->a, ", tilec::swizzle_groups(%d)", v->swizzle_rows);
	return v->panels ? ", tilec::SWIZZLE_PANELS" : ", true";
}

/* Offset of element idx[] of a shared buffer: row-major, the last extent
 * padded: ((i0 * e1 + i1) * e2p + i2).  A tile swizzled for column reads:
 * `tilec::tile_index<ROW_BYTES, T, GROUP>(i0, i1)`.  Other swizzled
 * buffers are only touched by the helpers (smem.c), never element by
 * element. */
static void
smem_offset(Gpu *G, const TcVar *v, TcExpr *const *idx)
{
	TcBuf *b = G->pr.out;
	if (v->swizzle_rows) {
		tc_buf_printf(b, "tilec::tile_index<%lld, %s, %d>(", swizzle_bytes(v),
			      storage_type(G, v->dtype), v->swizzle_rows);
		tc_c_expr_prec(&G->pr, idx[0], TC_PREC_COMMA + 1);
		tc_buf_puts(b, ", ");
		tc_c_expr_prec(&G->pr, idx[1], TC_PREC_COMMA + 1);
		tc_buf_puts(b, ")");
		return;
	}
	if (v->swizzle)
		error(G, v->loc, "internal error: element access to swizzled "
		      "shared buffer '%s'", v->name);
	for (int i = 0; i < v->rank - 2; i++)
		tc_buf_puts(b, "(");
	for (int i = 0; i < v->rank; i++) {
		if (i == 0) {
			tc_c_expr_prec(&G->pr, idx[0], v->rank > 1 ?
				       tc_binop_prec(TC_OP_MUL) : TC_PREC_COMMA + 1);
			continue;
		}
		int mul = tc_binop_prec(TC_OP_MUL) + 1;
		tc_buf_printf(b, " * %s + ", i == v->rank - 1 ?
			      row_stride_text(G, v, mul) : extent_text(G, v, i, mul));
		tc_c_expr_prec(&G->pr, idx[i], tc_binop_prec(TC_OP_ADD) + 1);
		if (i < v->rank - 1)
			tc_buf_puts(b, ")");
	}
}


/* Offset of tensor element idx[]: row-major over its shape, in size_t
 * when the tensor's offsets are 64-bit (index_width.c), else in int.
 * Leading and added zero indices are left out. */
static void
tensor_offset(Gpu *G, const TcVar *v, TcExpr *const *idx)
{
	int first = 0;
	while (first < v->rank - 1 && is_zero(idx[first]))
		first++;
	int add = tc_binop_prec(TC_OP_ADD), mul = tc_binop_prec(TC_OP_MUL);
	bool wide = first < v->rank - 1 && v->index64;
	/* Horner's rule from the first index on: ((i0 * e1 + i1) * e2 + i2). */
	const char *t = wide ? tc_fmt(G->a, "(size_t)%s",
				      expr_text(G, idx[first], TC_PREC_UNARY))
			     : expr_text(G, idx[first], first < v->rank - 1 ? mul
									  : add);
	bool sum = false; /* t ends in an addition */
	for (int i = first + 1; i < v->rank; i++) {
		t = tc_fmt(G->a, sum ? "(%s) * %s" : "%s * %s", t,
			   extent_text(G, v, i, mul + 1));
		sum = !is_zero(idx[i]);
		if (sum)
			t = tc_fmt(G->a, "%s + %s", t, expr_text(G, idx[i], add + 1));
	}
	tc_buf_printf(G->pr.out, sum || first < v->rank - 1 ? "(%s)" : "%s", t);
}

/* The address of tensor element idx[]: `T + OFFSET`, or T for offset 0. */
static void
tensor_at(Gpu *G, const TcVar *v, TcExpr *const *idx)
{
	bool origin = true;
	for (int i = 0; i < v->rank; i++)
		origin &= is_zero(idx[i]);
	tc_buf_puts(G->pr.out, v->name);
	if (origin)
		return;
	tc_buf_puts(G->pr.out, " + ");
	tensor_offset(G, v, idx);
}

/* An element F[i][j] of a register fragment inside the loops anchored on
 * its dims: F[i_r][j_r], the loops' counters. */
static void
reg_element(Gpu *G, const TcVar *v, TcExpr *const *idx)
{
	tc_buf_puts(G->pr.out, v->name);
	for (int d = 0; d < v->rank; d++) {
		const TcVar *lv = idx[d]->kind == TC_EX_VAR ? idx[d]->u.var : NULL;
		bool found = false;
		for (int i = 0; i < G->nanchors && lv; i++)
			found |= G->anchors[i]->u.loop.var == lv;
		if (!found) {
			error(G, idx[d]->loc, "internal error: element of register "
			      "fragment '%s' outside the loops that own it", v->name);
			return;
		}
		tc_buf_printf(G->pr.out, "[%s]",
			      fresh(G, tc_fmt(G->a, "%s_r", lv->name)));
	}
}

/* Whether the printed text of s names loop variable v: v's uses less
 * those as a register fragment's index, which print as the anchored
 * loop's counter (reg_element). */
typedef struct Uses {
	const TcVar *var; /* the loop variable */
	bool found;       /* a use that prints as its name */
	/* Loads printed without their indices (a run's, emit_runs). */
	const TcExpr *const *skip;
	int nskip;
} Uses;

static TcVisit
find_use(void *ctx, const TcExpr *e)
{
	Uses *u = ctx;
	for (int i = 0; i < u->nskip; i++)
		if (tc_expr_equal(e, u->skip[i]))
			return TC_VISIT_OVER;
	if (e->kind == TC_EX_VAR && e->u.var == u->var) {
		u->found = true;
		return TC_VISIT_STOP;
	}
	if (e->kind != TC_EX_LOAD || !is_reg(e->u.load.var))
		return TC_VISIT_INTO;
	TcVisitor vis = { .expr = find_use, .ctx = u };
	for (int d = 0; d < e->u.load.var->rank && !u->found; d++)
		if (e->u.load.idx[d]->kind != TC_EX_VAR)
			tc_expr_visit(e->u.load.idx[d], &vis);
	return u->found ? TC_VISIT_STOP : TC_VISIT_OVER;
}

static bool
prints_var(const TcStmt *s, const TcVar *v)
{
	Uses u = { v, false, NULL, 0 };
	TcVisitor vis = { .expr = find_use, .ctx = &u };
	tc_stmt_visit(s, &vis);
	return u.found;
}

/* Packed i4 elements (a tensor, a shared tile) are no lvalues: they are
 * read and written through the helpers, by their base and flat offset. */
static bool
packed_i4(const TcVar *v)
{
	return v->dtype == TC_DT_I4 && !is_reg(v);
}

/* `BASE, OFFSET` of element idx[] of packed i4 tensor or tile v. */
static void
i4_args(Gpu *G, const TcVar *v, TcExpr *const *idx)
{
	if (v->kind == TC_VAR_TENSOR) {
		tc_buf_printf(G->pr.out, "%s, ", v->name);
		tensor_offset(G, v, idx);
	} else {
		smem_base(G, v);
		tc_buf_puts(G->pr.out, ", ");
		smem_offset(G, v, idx);
	}
}

/* The element as an lvalue in its storage type. */
static void
element_ref(Gpu *G, const TcVar *v, TcExpr *const *idx)
{
	if (packed_i4(v))
		error(G, v->loc, "internal error: i4 element of '%s' as an lvalue",
		      v->name);
	if (v->kind == TC_VAR_TENSOR) {
		tc_buf_printf(G->pr.out, "%s[", v->name);
		tensor_offset(G, v, idx);
		tc_buf_puts(G->pr.out, "]");
	} else if (is_reg(v)) {
		reg_element(G, v, idx);
	} else {
		smem_base(G, v);
		tc_buf_puts(G->pr.out, "[");
		smem_offset(G, v, idx);
		tc_buf_puts(G->pr.out, "]");
	}
}

/* The element as a value of its storage type (an int for packed i4:
 * tilec::i4_get). */
static void
element_value(Gpu *G, const TcVar *v, TcExpr *const *idx)
{
	if (!packed_i4(v)) {
		element_ref(G, v, idx);
		return;
	}
	tc_buf_puts(G->pr.out, G->i4_float ? "tilec::i4_float(" : "tilec::i4_get(");
	i4_args(G, v, idx);
	tc_buf_puts(G->pr.out, ")");
}

static void
hook_load(TcCPrinter *pr, const TcExpr *e)
{
	Gpu *G = pr->ctx;
	const TcVar *v = e->u.load.var;
	for (int i = 0; i < G->nrun_loads; i++) {
		if (!tc_expr_equal(e, G->run_loads[i]))
			continue;
		/* The element of the run read as one vector (emit_runs). */
		if (packed_i4(v) && G->i4_float)
			tc_buf_printf(pr->out, "tilec::i4_run_float(%s, %s)",
				      G->run_names[i], G->run_v);
		else if (packed_i4(v))
			tc_buf_printf(pr->out, "tilec::i4_get(%s.e, %s)",
				      G->run_names[i], G->run_v);
		else if (narrow_float(v->dtype))
			tc_buf_printf(pr->out, "tilec::to_float(%s.e[%s])",
				      G->run_names[i], G->run_v);
		else
			tc_buf_printf(pr->out, "%s.e[%s]", G->run_names[i], G->run_v);
		return;
	}
	if (packed_i4(v)) {
		element_value(G, v, e->u.load.idx);
		return;
	}
	bool wrap = narrow_float(v->dtype) && !is_reg(v);
	if (wrap)
		tc_buf_puts(pr->out, "tilec::to_float(");
	element_ref(G, v, e->u.load.idx);
	if (wrap)
		tc_buf_puts(pr->out, ")");
}

static bool
hook_convert(TcCPrinter *pr, const TcExpr *value, TcDtype t)
{
	Gpu *G = pr->ctx;
	TcDtype from = value->dtype;
	if (t == TC_DT_F32 && (from == TC_DT_I4 || from == TC_DT_I8 ||
			       from == TC_DT_U8 || from == TC_DT_BOOL)) {
		/* Exactly, without I2F (tilec::int_float); a packed i4
		 * element straight from its nibble (i4_float). */
		if (value->kind == TC_EX_LOAD && packed_i4(value->u.load.var)) {
			G->i4_float = true;
			tc_c_expr(pr, value);
			G->i4_float = false;
			return true;
		}
		tc_buf_puts(pr->out, "tilec::int_float(");
		tc_c_expr(pr, value);
		tc_buf_puts(pr->out, ")");
		return true;
	}
	if (t == TC_DT_I4) {
		/* Wrap to 4 bits, as i4's storage would. */
		tc_buf_puts(pr->out, "tilec::i4_wrap(");
		tc_c_expr(pr, value);
		tc_buf_puts(pr->out, ")");
		return true;
	}
	if (t == TC_DT_I8 || t == TC_DT_U8) {
		/* Wrap to the 8-bit type (u8 of -5 is 251); the value is then
		 * an int again by C++'s promotions. */
		tc_buf_printf(pr->out, "(%s)", storage_type(pr->ctx, t));
		tc_c_expr_prec(pr, value, TC_PREC_UNARY);
		return true;
	}
	if (!narrow_float(t))
		return false;
	/* Round through the narrow type; the value stays a float. */
	tc_buf_printf(pr->out, "tilec::to_float(tilec::from_float<%s>(",
		      storage_type(pr->ctx, t));
	tc_c_expr(pr, value);
	tc_buf_puts(pr->out, "))");
	return true;
}

static const char *
hook_neg_func(TcCPrinter *pr, const TcExpr *neg)
{
	Gpu *G = pr->ctx;
	TcDtype t = neg->dtype;
	if (!G->dialect->int_neg || !tc_dtype_is_int(t))
		return NULL;
	return G->dialect->int_neg;
}

static const TcCHooks gpu_hooks = {
	.value_type = value_type,
	.func_name = func_name,
	.load = hook_load,
	.convert = hook_convert,
	.neg_func = hook_neg_func,
	.bool_truth = true,
};

static void
expr(Gpu *G, const TcExpr *e)
{
	tc_c_expr(&G->pr, e);
}

/* Whether a store into an element of v goes through the dialect's
 * byte_store: v's elements are one byte each, in shared memory. */
static bool
stores_bytes(const Gpu *G, const TcVar *v)
{
	return G->dialect->byte_store && v->kind != TC_VAR_TENSOR && !is_reg(v) &&
	       tc_dtype_storage_bits(v->dtype) == 8;
}

/* The start of a store into the element, `REF = ` or `FN(&REF, ` for the
 * byte stores (stores_bytes); the value follows, then store_close. */
static void
store_open(Gpu *G, const TcVar *v, TcExpr *const *idx)
{
	if (packed_i4(v)) {
		tc_buf_puts(G->pr.out, "tilec::i4_put(");
		i4_args(G, v, idx);
		tc_buf_puts(G->pr.out, ", ");
	} else if (stores_bytes(G, v)) {
		tc_buf_printf(G->pr.out, "%s(&", G->dialect->byte_store);
		element_ref(G, v, idx);
		tc_buf_puts(G->pr.out, ", ");
	} else {
		element_ref(G, v, idx);
		tc_buf_puts(G->pr.out, " = ");
	}
}

static void
store_close(Gpu *G, const TcVar *v)
{
	tc_buf_puts(G->pr.out, stores_bytes(G, v) || packed_i4(v) ? ");\n" : ";\n");
}

/* `value`, stored into an element of v, less the casts to v's narrow
 * float type of float values: the store rounds once.  The assignment's
 * conversion would print to_float(from_float<T>(x)), which nothing
 * downstream folds (two more instructions an element). */
static const TcExpr *
rounded_by_store(const TcVar *v, const TcExpr *value)
{
	while (narrow_float(v->dtype) && value->kind == TC_EX_CAST &&
	       value->dtype == v->dtype && float_valued(value->u.cast.arg->dtype))
		value = value->u.cast.arg;
	return value;
}

/* `value` converted to what an element of v holds. */
static void
stored_value(Gpu *G, const TcVar *v, const TcExpr *value)
{
	TcBuf *b = G->pr.out;
	value = rounded_by_store(v, value);
	/* An element of v's type is a float v's registers hold as it is. */
	bool exact = value->kind == TC_EX_LOAD && value->dtype == v->dtype;
	if (narrow_float(v->dtype) && is_reg(v) && exact) {
		expr(G, value);
	} else if (narrow_float(v->dtype) && !is_reg(v)) {
		tc_buf_printf(b, "tilec::from_float<%s>(", storage_type(G, v->dtype));
		expr(G, value);
		tc_buf_puts(b, ")");
	} else if (narrow_float(v->dtype)) {
		/* Registers hold floats; round them to the fragment's type. */
		tc_buf_printf(b, "tilec::to_float(tilec::from_float<%s>(",
			      storage_type(G, v->dtype));
		expr(G, value);
		tc_buf_puts(b, "))");
	} else {
		expr(G, value);
	}
}

/* Store `value` into the element, converting to the storage type. */
static void
store(Gpu *G, const TcVar *v, TcExpr *const *idx, const TcExpr *value)
{
	store_open(G, v, idx);
	stored_value(G, v, value);
	store_close(G, v);
}

/* --- Comments ---------------------------------------------------------------------- */

static void
stmt_comment(Gpu *G, const TcStmt *s, const char *extra)
{
	char *snip = tc_c_source_snippet(G->a, G->prog->text, s->loc);
	if (extra)
		snip = tc_fmt(G->a, "%s%s", snip ? snip : "", extra);
	tc_c_loc_comment(&G->pr, s->loc, snip);
}

/* --- Cooperative element loops --------------------------------------------------------
 * A loop over every element of a tile shape, spread over the block's threads:
 *   for (int e = threadIdx.x; e < N; e += THREADS) { const int t0 = ..., t1 = ...; */

static const char *const tile_idx[TC_MAX_RANK] = {
	"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"
};

static void
spread_loop_open(Gpu *G, const TcVar *shape)
{
	TcBuf *b = G->pr.out;
	int mul = tc_binop_prec(TC_OP_MUL) + 1;
	/* inner[i]: the product of the extents after dim i, as a divisor. */
	const char *inner[TC_MAX_RANK];
	const char *total = NULL;
	for (int i = shape->rank - 1; i >= 0; i--) {
		inner[i] = i + 2 < shape->rank ? tc_fmt(G->a, "(%s)", total) : total;
		const char *ext = extent_text(G, shape, i, mul);
		total = total ? tc_fmt(G->a, "%s * %s", ext, total) : ext;
	}
	if (shape->rank == 1)
		total = extent_text(G, shape, 0, tc_binop_prec(TC_OP_LT) + 1);
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %s; %s += %s) {\n",
		      G->e, G->e, total, G->e, G->nthreads);
	b->indent++;
	tc_buf_puts(b, "const int ");
	for (int i = 0; i < shape->rank; i++) {
		if (i)
			tc_buf_puts(b, ", ");
		const char *ext = extent_text(G, shape, i, mul);
		const char *in = inner[i];
		if (i == 0 && shape->rank == 1)
			tc_buf_printf(b, "%s = %s", G->tix[i], G->e);
		else if (i == 0)
			tc_buf_printf(b, "%s = %s / %s", G->tix[i], G->e, in);
		else if (i == shape->rank - 1)
			tc_buf_printf(b, "%s = %s %% %s", G->tix[i], G->e, ext);
		else
			tc_buf_printf(b, "%s = %s / %s %% %s", G->tix[i], G->e, in, ext);
	}
	tc_buf_puts(b, ";\n");
}

/* Expressions naming t0.. as IR: variables for the tile indices. */
typedef struct TileIdx {
	TcVar vars[TC_MAX_RANK]; /* t0, t1, ... as LOCAL i32 vars */
	TcExpr *e[TC_MAX_RANK];  /* VAR expressions of them */
} TileIdx;

static void
tile_idx_init(Gpu *G, TileIdx *ti)
{
	for (int i = 0; i < TC_MAX_RANK; i++) {
		memset(&ti->vars[i], 0, sizeof ti->vars[i]);
		ti->vars[i].kind = TC_VAR_LOCAL;
		ti->vars[i].name = G->tix[i];
		ti->vars[i].dtype = TC_DT_I32;
		ti->e[i] = tc_expr_var(G->a, &ti->vars[i], (TcLoc){ 0 });
	}
}

/* The indices into r's var of tile element (t0, t1, ...): origin plus the
 * tile index on the covered dims. */
static void
region_index(Gpu *G, const TcRegion *r, const TileIdx *ti, TcExpr **out)
{
	for (int i = 0; i < r->var->rank; i++)
		out[i] = r->origin[i];
	for (int i = 0; i < r->ndims; i++) {
		int d = r->dims[i];
		long long o;
		if (tc_expr_const(r->origin[d], &o) && o == 0)
			out[d] = ti->e[i];
		else
			out[d] = tc_expr_binary(G->a, TC_OP_ADD, r->origin[d],
						ti->e[i], r->loc);
	}
}

/* --- Bounds of tensor regions -------------------------------------------------------
 * A tile copy reads (writes) only the tensor elements inside the tensor:
 * 0 <= index < extent along every dim, the dims the tile covers and the
 * ones it does not.  The upper bounds are always tested; the lower one
 * wherever the bounds pass could not prove the region's origin
 * along that dim non-negative (lower_bound), which the forms of most origins rule out (block indices
 * times tile sizes).  Every copy's bounds, element by element
 * (print_bounds) or as a box helper's arguments (box_extents, box_lows),
 * come from these two functions. */

/* Whether the elements of tensor region r need a test of index >= 0
 * along tensor dim d: the bounds pass did not prove its origin >= 0. */
static bool
lower_bound(const TcRegion *r, int d)
{
	return r->var->kind == TC_VAR_TENSOR &&
	       !(r->bounded && (r->nonneg >> d & 1));
}

/* `0 <= idx0 && idx0 < E0 && idx1 < E1 ...` for a tensor region element
 * (lower bounds where lower_bound says); false (and nothing printed) when
 * the region is a buffer, always in bounds. */
static bool
print_bounds(Gpu *G, const TcRegion *r, TcExpr *const *idx)
{
	if (r->var->kind != TC_VAR_TENSOR)
		return false;
	TcBuf *b = G->pr.out;
	for (int i = 0; i < r->var->rank; i++) {
		if (i)
			tc_buf_puts(b, " && ");
		if (lower_bound(r, i)) {
			tc_buf_puts(b, "0 <= ");
			tc_c_expr_prec(&G->pr, idx[i], tc_binop_prec(TC_OP_LE) + 1);
			tc_buf_puts(b, " && ");
		}
		tc_c_expr_prec(&G->pr, idx[i], tc_binop_prec(TC_OP_LT) + 1);
		tc_buf_puts(b, " < ");
		tc_c_expr_prec(&G->pr, r->var->shape[i], tc_binop_prec(TC_OP_LT) + 1);
	}
	return true;
}

/* --- Tile operations ----------------------------------------------------------------- */

static void
close_brace(Gpu *G)
{
	G->pr.out->indent--;
	tc_buf_puts(G->pr.out, "}\n");
}

/* The bits of threadIdx.x that the enclosing anchored loops' classes depend
 * on, as C++ text ("x_rows::BITS | x_cols::BITS"), or NULL if none. */
static const char *
anchored_bits(Gpu *G)
{
	const char *bits = NULL;
	for (int i = 0; i < G->nanchors; i++) {
		const TcStmt *l = G->anchors[i];
		const char *d = dist_of(G, l->u.loop.anchor, l->u.loop.anchor_dim);
		bits = bits ? tc_fmt(G->a, "%s | %s::BITS", bits, d)
			    : tc_fmt(G->a, "%s::BITS", d);
	}
	return bits;
}

/* The row and column distributions of a register fragment for the copy
 * helpers: one-dim fragments are one row (tilec::One). */
static const char *
rows_of(Gpu *G, const TcVar *v)
{
	return v->rank == 2 ? dist_of(G, v, 0) : "tilec::One";
}

static const char *
cols_of(Gpu *G, const TcVar *v)
{
	return dist_of(G, v, v->rank - 1);
}

static const char *
as_2d(Gpu *G, const TcVar *v)
{
	return v->rank == 2 ? v->name : tc_fmt(G->a, "tilec::as_row(%s)", v->name);
}

/* Loops over every element a thread holds of register fragment v, with
 * counters r0 and r1. */
static void
reg_loops_open(Gpu *G, const TcVar *v)
{
	TcBuf *b = G->pr.out;
	for (int d = 0; d < v->rank; d++) {
		const char *r = d ? G->r1 : G->r0;
		tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++)\n",
			      r, r, dist_of(G, v, d), r);
	}
	tc_buf_puts(b, "{\n");
	b->indent++;
}

static const char *
reg_at(Gpu *G, const TcVar *v)
{
	return v->rank == 2 ? tc_fmt(G->a, "%s[%s][%s]", v->name, G->r0, G->r1)
			    : tc_fmt(G->a, "%s[%s]", v->name, G->r0);
}

static bool
same_dists(const TcVar *a, const TcVar *b)
{
	if (a->rank != b->rank)
		return false;
	for (int d = 0; d < a->rank; d++)
		if (a->layout.dim[d].id != b->layout.dim[d].id)
			return false;
	return true;
}

/* Text of the number of valid elements along tile dim i of a tensor region:
 * min(extent, shape - origin), or shape - origin unclamped (for helpers
 * that take any count, even past the tile or negative). */
static void
valid_extent(Gpu *G, const TcRegion *r, const TcVar *tile, int i, bool clamp)
{
	TcBuf *b = G->pr.out;
	int d = r->dims[i];
	/* A tile at least as long as the whole dim needs no clamp. */
	long long te, se;
	if (clamp && is_zero(r->origin[d]) &&
	    (tc_expr_equal(tile->shape[i], r->var->shape[d]) ||
	     (tc_expr_const(tile->shape[i], &te) &&
	      tc_expr_const(r->var->shape[d], &se) && te >= se)))
		clamp = false;
	/* An i64 extent (a long long parameter) against the tile's int
	 * one: C++'s min overloads need one type for both. */
	bool wide = r->var->shape[d]->dtype == TC_DT_I64 ||
		    r->origin[d]->dtype == TC_DT_I64;
	if (clamp)
		tc_buf_printf(b, "min(%s%s, ", wide ? "(long long)" : "",
			      extent_text(G, tile, i, wide ? TC_PREC_UNARY : TC_PREC_COMMA + 1));
	if (is_zero(r->origin[d])) {
		tc_c_expr_prec(&G->pr, r->var->shape[d], tc_binop_prec(TC_OP_SUB));
	} else {
		tc_c_expr_prec(&G->pr, r->var->shape[d], tc_binop_prec(TC_OP_SUB));
		tc_buf_puts(b, " - ");
		tc_c_expr_prec(&G->pr, r->origin[d], tc_binop_prec(TC_OP_SUB) + 1);
	}
	if (clamp)
		tc_buf_puts(b, ")");
}

/* The row stride of a tensor region along the tile's first dim (0 for a
 * one-dim tile). */
static void
box_ld(Gpu *G, const TcRegion *r, const TcVar *tile)
{
	TcBuf *b = G->pr.out;
	const TcVar *t = r->var;
	if (tile->rank != 2) {
		tc_buf_puts(b, "0");
		return;
	}
	for (int i = r->dims[0] + 1; i < t->rank; i++) {
		if (i > r->dims[0] + 1)
			tc_buf_puts(b, " * ");
		tc_c_expr_prec(&G->pr, t->shape[i], tc_binop_prec(TC_OP_MUL) + 1);
	}
}

/* The valid rows and the valid columns of a tensor region (zero rows
 * when a dim the tile does not cover is out of range): `ROWS, COLS`,
 * clamped to the tile or not (valid_extent). */
static void
box_extents(Gpu *G, const TcRegion *r, const TcVar *tile, bool clamp)
{
	TcBuf *b = G->pr.out;
	const TcVar *t = r->var;
	bool two = tile->rank == 2;
	bool fixed = false;
	for (int i = 0; i < t->rank; i++) {
		bool covered = false;
		for (int j = 0; j < r->ndims; j++)
			covered |= r->dims[j] == i;
		if (covered)
			continue;
		tc_buf_puts(b, fixed ? " && " : "(");
		if (lower_bound(r, i)) {
			tc_buf_puts(b, "0 <= ");
			tc_c_expr_prec(&G->pr, r->origin[i], tc_binop_prec(TC_OP_LE) + 1);
			tc_buf_puts(b, " && ");
		}
		tc_c_expr_prec(&G->pr, r->origin[i], tc_binop_prec(TC_OP_LT) + 1);
		tc_buf_puts(b, " < ");
		tc_c_expr_prec(&G->pr, t->shape[i], tc_binop_prec(TC_OP_LT) + 1);
		fixed = true;
	}
	if (fixed)
		tc_buf_puts(b, ") ? ");
	if (two)
		valid_extent(G, r, tile, 0, clamp);
	else
		tc_buf_puts(b, "1");
	if (fixed)
		tc_buf_puts(b, " : 0");
	tc_buf_puts(b, ", ");
	valid_extent(G, r, tile, r->ndims - 1, clamp);
}

/* The first valid row and column of a tensor region, relative to the
 * tile: `, -(ROW_ORIGIN), -(COL_ORIGIN)` (0 for a dim whose origin is
 * known to be >= 0; the rows of a one-dim tile are its one row), the box
 * helpers' last, optional arguments; nothing where both are known 0. */
static void
box_lows(Gpu *G, const TcRegion *r, const TcVar *tile)
{
	int row = tile->rank == 2 ? r->dims[0] : -1, col = r->dims[r->ndims - 1];
	bool low_row = row >= 0 && lower_bound(r, row), low_col = lower_bound(r, col);
	if (!low_row && !low_col)
		return;
	for (int i = 0; i < 2; i++) {
		int d = i ? col : row;
		tc_buf_puts(G->pr.out, ", ");
		if (i ? low_col : low_row)
			tc_c_expr_prec(&G->pr, tc_expr_unary(G->a, TC_UOP_NEG, r->origin[d],
							     r->loc), TC_PREC_COMMA + 1);
		else
			tc_buf_puts(G->pr.out, "0");
	}
}

/* The arguments a box helper takes after the tensor pointer: the row
 * stride along the tile's first dim, the valid rows and the valid columns:
 * `, LD, ROWS, COLS`. */
static void
box_args(Gpu *G, const TcRegion *r, const TcVar *tile)
{
	tc_buf_puts(G->pr.out, ", ");
	box_ld(G, r, tile);
	tc_buf_puts(G->pr.out, ", ");
	box_extents(G, r, tile, true);
}

/* tensor -> shared (a COPY, or an ASYNC_COPY into stage copy.stage):
 * tilec::copy_g2s, 16-byte vectors.  With cp.async the helper also takes
 * whether to copy asynchronously (an ASYNC_COPY) as its last template
 * argument, and the tensor's base as a valid address for the zero-filled
 * vectors. */
static void
copy_g2s(Gpu *G, const TcStmt *s)
{
	bool async = s->kind == TC_ST_ASYNC_COPY;
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	const TcVar *v = dst->var, *t = src->var;
	TcBuf *b = G->pr.out;
	if (v->dtype == TC_DT_I4) {
		/* Packed bytes to packed bytes, by cp.async where async. */
		tc_buf_printf(b, "tilec::copy_g2s_i4<%s, %s, %s%s>(",
			      v->rank == 2 ? extent_text(G, v, 0, TC_PREC_COMMA + 1) : "1",
			      extent_text(G, v, v->rank - 1, TC_PREC_COMMA + 1), G->nthreads,
			      async ? ", true" : "");
		if (s->u.copy.stage)
			smem_stage(G, v, s->u.copy.stage);
		else
			smem_base(G, v);
		tc_buf_printf(b, ", %s, %s, ", row_stride_text(G, v, TC_PREC_COMMA + 1),
			      t->name);
		tensor_offset(G, t, src->origin);
		box_args(G, src, v);
		box_lows(G, src, v);
		tc_buf_puts(b, ");\n");
		return;
	}
	tc_buf_printf(b, "tilec::copy_g2s<%s, %s, %s, %s",
		      storage_type(G, v->dtype),
		      v->rank == 2 ? extent_text(G, v, 0, TC_PREC_COMMA + 1) : "1",
		      extent_text(G, v, v->rank - 1, TC_PREC_COMMA + 1), G->nthreads);
	if (G->t->cp_async)
		tc_buf_puts(b, async ? ", true" : ", false");
	if (v->swizzle)
		tc_buf_puts(b, swizzle_arg(G, v));
	else if (G->t->cp_async && s->u.copy.launch_aligned)
		tc_buf_puts(b, ", false");
	if (s->u.copy.launch_aligned)
		tc_buf_puts(b, ", TILEC_ALIGNED");
	tc_buf_puts(b, ">(");
	if (s->u.copy.stage)
		smem_stage(G, v, s->u.copy.stage);
	else
		smem_base(G, v);
	tc_buf_printf(b, ", %s, ", row_stride_text(G, v, TC_PREC_COMMA + 1));
	tensor_at(G, t, src->origin);
	box_args(G, src, v);
	if (G->t->cp_async)
		tc_buf_printf(b, ", %s", t->name);
	box_lows(G, src, v);
	tc_buf_puts(b, ");\n");
}

/* The setup of a pipelined copy planned as strided (copy.first,
 * copy.advance): `const tilec::G2S<...> NAME(S_LD, FIRST_TILE, LD,
 * ADVANCE);`, the per-thread part of every iteration's copy (packed i4:
 * `TENSOR, OFFSET` for FIRST_TILE, in elements). */
static void
g2s_setup(Gpu *G, const TcStmt *s, const char *name)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	const TcVar *v = dst->var, *t = src->var;
	TcBuf *b = G->pr.out;
	tc_buf_printf(b, "const tilec::G2S<%s, %s, %s, %s%s> %s(%s, ",
		      storage_type(G, v->dtype),
		      v->rank == 2 ? extent_text(G, v, 0, TC_PREC_COMMA + 1) : "1",
		      extent_text(G, v, v->rank - 1, TC_PREC_COMMA + 1), G->nthreads,
		      v->swizzle ? swizzle_arg(G, v) : "", name,
		      row_stride_text(G, v, TC_PREC_COMMA + 1));
	if (t->dtype == TC_DT_I4) {
		tc_buf_printf(b, "%s, ", t->name);
		tensor_offset(G, t, s->u.copy.first);
	} else {
		tensor_at(G, t, s->u.copy.first);
	}
	tc_buf_puts(b, ", ");
	box_ld(G, src, v);
	tc_buf_puts(b, ", ");
	expr(G, s->u.copy.advance);
	tc_buf_puts(b, ");\n");
}

/* The plan of a pipelined copy the mbarrier loop issues by TMA:
 * `const tilec::TmaCopy<T, ROWS, COLS, RANK> NAME(MAP, FIRST_TILE,
 * ADVANCE);` (copy.first, copy.advance: what its `aligned` tests, as
 * G2S's). */
static void
tma_setup(Gpu *G, const TcStmt *s, const TcTensorMap *m, const char *name)
{
	const TcVar *v = s->u.copy.dst.var;
	TcBuf *b = G->pr.out;
	tc_buf_printf(b, "const tilec::TmaCopy<%s, %s, %s, %d> %s(%s, ",
		      storage_type(G, v->dtype), extent_text(G, v, 0, TC_PREC_COMMA + 1),
		      extent_text(G, v, 1, TC_PREC_COMMA + 1), m->tensor->rank, name,
		      m->name);
	tensor_at(G, s->u.copy.src.var, s->u.copy.first);
	tc_buf_puts(b, ", ");
	expr(G, s->u.copy.advance);
	tc_buf_puts(b, ");\n");
}

/* A tensor region's origin as a TMA box's coordinates, innermost first
 * (32-bit: `{COL, ROW, ...}`). */
static void
tma_coords(Gpu *G, const TcRegion *r)
{
	TcBuf *b = G->pr.out;
	tc_buf_puts(b, "{");
	for (int d = r->var->rank - 1; d >= 0; d--) {
		const TcExpr *e = r->origin[d];
		tc_buf_puts(b, d < r->var->rank - 1 ? ", " : "");
		if (e->dtype != TC_DT_I32) {
			tc_buf_puts(b, "(int)");
			tc_c_expr_prec(&G->pr, e, TC_PREC_UNARY);
		} else {
			tc_c_expr_prec(&G->pr, e, TC_PREC_COMMA + 1);
		}
	}
	tc_buf_puts(b, "}");
}

/* An ASYNC_COPY lowered TMA: iteration copy.iter's tile into stage
 * copy.stage, `PLAN.issue(STAGE, BARS.full_bar(STAGE), {COORDS});`, the
 * source origin innermost first. */
static void
tma_issue(Gpu *G, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	TcBuf *b = G->pr.out;
	tc_buf_printf(b, "%s.%s(", s->u.copy.plan->name,
		      G->producer ? "issue_here" : "issue");
	smem_stage(G, dst->var, s->u.copy.stage);
	tc_buf_printf(b, ", %s.full_bar(", s->u.copy.bars->name);
	expr(G, s->u.copy.stage);
	tc_buf_puts(b, "), ");
	tma_coords(G, src);
	tc_buf_puts(b, ");\n");
}

/* A COPY lowered TMA_STORE (tma_store.c): `using T_store =
 * tilec::TmaStore<ROWS_DIST, COLS_DIST, T, ROWS, COLS, RANK, BUFFERS,
 * SYNC>;` then `T_store::store(MAP, TILE, LD, ROWS, COLS, {COORDS},
 * STAGING, FRAGMENT[, R_LO, C_LO]);`, the box arguments copy_r2g's (its
 * fallback). */
static void
tma_store(Gpu *G, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst;
	const TcVar *f = s->u.copy.src.var, *t = dst->var;
	TcBuf *b = G->pr.out;
	const char *alias = fresh_decl(G, tc_fmt(G->a, "%s_store", t->name));
	tc_buf_printf(b, "using %s = tilec::TmaStore<%s, %s, %s, %s, %s, %d, %d, %lld%s>;\n",
		      alias, rows_of(G, f), cols_of(G, f), storage_type(G, t->dtype),
		      extent_text(G, f, 0, TC_PREC_COMMA + 1),
		      extent_text(G, f, 1, TC_PREC_COMMA + 1), t->rank,
		      s->u.copy.staged, s->u.copy.sync,
		      s->u.copy.launch_aligned ? ", TILEC_ALIGNED" : "");
	tc_buf_printf(b, "%s::store(%s, ", alias, s->u.copy.tmap->name);
	tensor_at(G, t, dst->origin);
	box_args(G, dst, f);
	tc_buf_puts(b, ", ");
	tma_coords(G, dst);
	if (s->u.copy.staging)
		tc_buf_printf(b, ", tilec_smem + %lld", s->u.copy.staging);
	else
		tc_buf_puts(b, ", tilec_smem");
	tc_buf_printf(b, ", %s", f->name);
	box_lows(G, dst, f);
	tc_buf_puts(b, ");\n");
}

/* An ASYNC_COPY lowered STRIDED: iteration copy.iter's tile into stage
 * copy.stage through its plan, `PLAN.issue(STAGE, IT, ROWS, COLS,
 * TENSOR);` (the source origin is that iteration's). */
static void
g2s_issue(Gpu *G, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	TcBuf *b = G->pr.out;
	tc_buf_printf(b, "%s.issue(", s->u.copy.plan->name);
	smem_stage(G, dst->var, s->u.copy.stage);
	tc_buf_puts(b, ", ");
	expr(G, s->u.copy.iter);
	tc_buf_puts(b, ", ");
	box_extents(G, src, dst->var, false);
	tc_buf_printf(b, ", %s", src->var->name);
	box_lows(G, src, dst->var);
	tc_buf_puts(b, ");\n");
}

/* dst += value atomically: the dialect's FN(&ELEMENT, VALUE), VALUE
 * being value_text if not NULL, else value; `from` is its dtype. */
static void
atomic_add(Gpu *G, const TcVar *t, TcExpr *const *idx, const char *value_text,
	   const TcExpr *value, TcDtype from)
{
	TcBuf *b = G->pr.out;
	bool convert = G->dialect->atomic_narrow_value && narrow_float(t->dtype);
	/* A value of another type in the element's own value type, so the
	 * call names one overload whatever the value's type. */
	bool cast = !narrow_float(t->dtype) && from != t->dtype;
	tc_buf_printf(b, "%s(&", G->dialect->atomic_add);
	element_ref(G, t, idx);
	tc_buf_puts(b, ", ");
	if (convert)
		tc_buf_printf(b, "tilec::from_float<%s>(", storage_type(G, t->dtype));
	else if (cast)
		tc_buf_printf(b, "(%s)(", value_type(t->dtype));
	if (value_text)
		tc_buf_puts(b, value_text);
	else
		expr(G, value);
	tc_buf_puts(b, convert || cast ? "));\n" : ");\n");
}

/* Any copy, element by element over the block's threads. */
static void
copy_generic(Gpu *G, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	const TcVar *tile = src->whole ? src->var : dst->var;
	TcBuf *b = G->pr.out;
	TileIdx ti;
	tile_idx_init(G, &ti);
	TcExpr *di[TC_MAX_RANK], *si[TC_MAX_RANK];
	region_index(G, dst, &ti, di);
	region_index(G, src, &ti, si);
	spread_loop_open(G, tile);
	TcExpr *load = tc_expr_new(G->a, TC_EX_LOAD, src->var->dtype, s->loc);
	load->u.load.var = src->var;
	for (int i = 0; i < src->var->rank; i++)
		load->u.load.idx[i] = si[i];
	if (dst->var->kind == TC_VAR_TENSOR) {
		tc_buf_puts(b, "if (");
		print_bounds(G, dst, di);
		tc_buf_puts(b, ")\n");
		b->indent++;
		if (s->kind == TC_ST_ATOMIC_ADD)
			atomic_add(G, dst->var, di, NULL, load, src->var->dtype);
		else
			store(G, dst->var, di, load);
		b->indent--;
	} else if (src->var->kind == TC_VAR_TENSOR) {
		/* (in bounds) ? src : 0, with the bounds printed as text; the
		 * zero has the value type, or an integer destination would see
		 * its value pass through float (u8 255 read as -1.0f, then 0). */
		TcExpr *zero = zero_of(G, dst->var->dtype, s->loc);
		store_open(G, dst->var, di);
		bool narrow = narrow_float(dst->var->dtype);
		if (narrow)
			tc_buf_printf(b, "tilec::from_float<%s>(",
				      storage_type(G, dst->var->dtype));
		tc_buf_puts(b, "(");
		print_bounds(G, src, si);
		tc_buf_puts(b, ") ? ");
		tc_buf_printf(b, "(%s)", value_type(dst->var->dtype));
		tc_c_expr_prec(&G->pr, load, TC_PREC_UNARY);
		tc_buf_puts(b, " : ");
		tc_c_expr_prec(&G->pr, zero, TC_PREC_SELECT);
		tc_buf_puts(b, narrow ? ")" : "");
		store_close(G, dst->var);
	} else {
		store(G, dst->var, di, load);
	}
	close_brace(G);
}

/* Whether every value of dtype `from` is one of dtype `to` (fp8 in f16
 * and bf16), so a copy between them needs no rounding. */
static bool
narrow_holds(TcDtype from, TcDtype to)
{
	bool fp8 = from == TC_DT_FP8E4M3 || from == TC_DT_FP8E5M2;
	return from == to || (fp8 && (to == TC_DT_F16 || to == TC_DT_BF16));
}

/* After a copy into narrow-float fragment f (its elements held as
 * floats) from elements of dtype `from`: each rounded to f's dtype, as a
 * store into f does. */
static void
round_reg(Gpu *G, const TcVar *f, TcDtype from)
{
	if (!narrow_float(f->dtype) || f->stored || narrow_holds(from, f->dtype))
		return;
	TcBuf *b = G->pr.out;
	reg_loops_open(G, f);
	tc_buf_printf(b, "%s = tilec::to_float(tilec::from_float<%s>(%s));\n",
		      reg_at(G, f), storage_type(G, f->dtype), reg_at(G, f));
	close_brace(G);
}

/* Copies that involve a register fragment. */
static void
copy_reg(Gpu *G, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	TcBuf *b = G->pr.out;
	bool atomic = s->kind == TC_ST_ATOMIC_ADD;
	const TcVar *f = is_reg(dst->var) ? dst->var : src->var;
	const TcRegion *other = f == dst->var ? src : dst;
	const TcVar *o = other->var;
	/* Register <-> register, one distribution. */
	if (is_reg(dst->var) && is_reg(src->var)) {
		if (!same_dists(dst->var, src->var)) {
			error(G, s->loc, "internal error: copy between register "
			      "fragments of different layouts");
			return;
		}
		reg_loops_open(G, dst->var);
		/* A fragment that holds its elements as stored converts
		 * them to values here, as a load from memory would. */
		const char *from = src->var->stored ?
			tc_fmt(G->a, "%s%s)", to_value_of(G, src->var->dtype),
			       reg_at(G, src->var)) : reg_at(G, src->var);
		if (narrow_float(dst->var->dtype) && dst->var->dtype == src->var->dtype &&
		    src->var->stored)
			tc_buf_printf(b, "%s = %s;\n", reg_at(G, dst->var), from);
		else if (narrow_float(dst->var->dtype))
			tc_buf_printf(b, "%s = tilec::to_float(tilec::from_float<%s>(%s));\n",
				      reg_at(G, dst->var), storage_type(G, dst->var->dtype),
				      from);
		else if (strcmp(value_type(dst->var->dtype), value_type(src->var->dtype)))
			tc_buf_printf(b, "%s = (%s)%s;\n", reg_at(G, dst->var),
				      value_type(dst->var->dtype), from);
		else
			tc_buf_printf(b, "%s = %s;\n", reg_at(G, dst->var), from);
		close_brace(G);
		return;
	}
	/* Register <-> shared memory (a whole buffer).  Packed i4 tiles go
	 * element by element (below). */
	if (o->kind == TC_VAR_BUFFER && other->whole && !atomic && !packed_i4(o)) {
		if (f == dst->var) {
			tc_buf_printf(b, "tilec::copy_s2r<%s, %s>(%s, ", rows_of(G, f),
				      cols_of(G, f), as_2d(G, f));
			smem_base(G, o);
			tc_buf_printf(b, ", %s);\n",
				      row_stride_text(G, o, TC_PREC_COMMA + 1));
			round_reg(G, f, o->dtype);
		} else {
			tc_buf_printf(b, "tilec::copy_r2s<%s, %s>(", rows_of(G, f),
				      cols_of(G, f));
			smem_base(G, o);
			tc_buf_printf(b, ", %s, %s);\n",
				      row_stride_text(G, o, TC_PREC_COMMA + 1), as_2d(G, f));
		}
		return;
	}
	/* Register <-> a tensor region whose last tile dim is the tensor's
	 * last (unit stride): the vectorized helpers. */
	if (o->kind == TC_VAR_TENSOR && !atomic &&
	    other->dims[other->ndims - 1] == o->rank - 1 &&
	    (other->ndims < 2 || other->dims[0] < other->dims[1]) &&
	    (!packed_i4(o) || f == dst->var)) {
		if (f == dst->var)
			tc_buf_printf(b, "tilec::copy_g2r<%s, %s>(%s, ", rows_of(G, f),
				      cols_of(G, f), as_2d(G, f));
		else
			tc_buf_printf(b, "tilec::copy_r2g<%s, %s>(", rows_of(G, f),
				      cols_of(G, f));
		if (packed_i4(o)) {
			/* Unpacked in registers (tilec::I4Ptr's copy_g2r). */
			tc_buf_printf(b, "tilec::i4_ptr(%s, ", o->name);
			tensor_offset(G, o, other->origin);
			tc_buf_puts(b, ")");
		} else {
			tensor_at(G, o, other->origin);
		}
		box_args(G, other, f);
		if (f != dst->var)
			tc_buf_printf(b, ", %s", as_2d(G, f));
		box_lows(G, other, f);
		tc_buf_puts(b, ");\n");
		if (f == dst->var)
			round_reg(G, f, o->dtype);
		return;
	}
	/* Anything else: element by element over what this thread holds. */
	TileIdx ti;
	tile_idx_init(G, &ti);
	ti.vars[0].name = f->rank == 2 ? G->row : G->col;
	ti.vars[1].name = G->col;
	TcExpr *oi[TC_MAX_RANK];
	region_index(G, other, &ti, oi);
	reg_loops_open(G, f);
	if (f->rank == 2)
		tc_buf_printf(b, "const int %s = %s::index(%s), %s = %s::index(%s);\n",
			      G->row, dist_of(G, f, 0), G->r0, G->col,
			      dist_of(G, f, 1), G->r1);
	else
		tc_buf_printf(b, "const int %s = %s::index(%s);\n", G->col,
			      dist_of(G, f, 0), G->r0);
	if (f == src->var) {
		tc_buf_printf(b, "if (tilec::leader<%s::BITS", dist_of(G, f, 0));
		if (f->rank == 2)
			tc_buf_printf(b, " | %s::BITS", dist_of(G, f, 1));
		tc_buf_puts(b, ">()");
		if (o->kind == TC_VAR_TENSOR) {
			tc_buf_puts(b, " && ");
			print_bounds(G, other, oi);
		}
		tc_buf_puts(b, ")\n");
		b->indent++;
		if (atomic) {
			atomic_add(G, o, oi, reg_at(G, f), NULL, f->dtype);
		} else {
			store_open(G, o, oi);
			tc_buf_printf(b, "%s%s)", from_value_of(G, o->dtype, f->dtype),
				      reg_at(G, f));
			store_close(G, o);
		}
		b->indent--;
	} else {
		tc_buf_printf(b, "%s = ", reg_at(G, f));
		bool bounded = o->kind == TC_VAR_TENSOR;
		if (bounded) {
			tc_buf_puts(b, "(");
			print_bounds(G, other, oi);
			tc_buf_puts(b, ") ? ");
		}
		if (f->stored) { /* the element as stored, o's dtype */
			element_ref(G, o, oi);
			if (bounded)
				tc_buf_printf(b, " : tilec::from_value<%s>(0)",
					      storage_type(G, f->dtype));
			tc_buf_puts(b, ";\n");
			close_brace(G);
			return;
		}
		tc_buf_puts(b, to_value_of(G, f->dtype));
		element_value(G, o, oi);
		tc_buf_puts(b, !bounded ? ");\n" : float_valued(f->dtype) ? ") : 0.0f;\n" :
			    ") : 0;\n");
	}
	close_brace(G);
	if (f == dst->var)
		round_reg(G, f, o->dtype);
}

/* A COPY, ATOMIC_ADD or ASYNC_COPY as expand_pipeline.c lowered it. */
static void
emit_copy(Gpu *G, const TcStmt *s)
{
	switch (s->u.copy.lower) {
	case TC_COPY_REGISTER: copy_reg(G, s); break;
	case TC_COPY_VECTOR: copy_g2s(G, s); break;
	case TC_COPY_STRIDED: g2s_issue(G, s); break;
	case TC_COPY_TMA: tma_issue(G, s); break;
	case TC_COPY_TMA_STORE: tma_store(G, s); break;
	case TC_COPY_GENERIC: copy_generic(G, s); break;
	default:
		error(G, s->loc, "internal error: a copy lowered as %s reached "
		      "the %s backend", tc_copy_lower_name(s->u.copy.lower),
		      G->dialect->name);
		break;
	}
}

static void emit_body(Gpu *G, const TcStmt *blk);

/* The block a gemm runs after its first matrix instruction (gemm.issue),
 * as the helper's hook: `, [&] { ... }`. */
static void
gemm_hook(Gpu *G, const TcStmt *issue)
{
	TcBuf *b = G->pr.out;
	tc_buf_puts(b, ", [&] {\n");
	b->indent++;
	emit_body(G, issue);
	b->indent--;
	tc_buf_puts(b, "}");
}

/* A wgmma operand: `tilec::SwizzledTile<T, ROWS, COLS>(BASE)`, the
 * shared tile as the descriptors describe it. */
static void
swizzled_tile(Gpu *G, const TcVar *v)
{
	if (!v->swizzle)
		error(G, v->loc, "internal error: wgmma operand '%s' is not "
		      "swizzled", v->name);
	tc_buf_printf(G->pr.out, "tilec::SwizzledTile<%s, %lld, %lld>(",
		      storage_type(G, v->dtype), tc_var_extent(v, 0),
		      tc_var_extent(v, 1));
	smem_base(G, v);
	tc_buf_puts(G->pr.out, ")");
}

/* tile_gemm by wgmma (sm_90a): each warpgroup multiplies its TM 64-row
 * tiles by its TN 8-column tiles, in instructions of gemm.wgmma_n
 * columns, B (and A, unless it is a register fragment) read from shared
 * memory through descriptors. */
static void
emit_wgmma(Gpu *G, const TcStmt *s)
{
	const TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var;
	TcBuf *b = G->pr.out;
	int tm = c->layout.dim[0].tiles, tn = c->layout.dim[1].tiles;
	if (is_reg(a)) {
		tc_buf_printf(b, "tilec::wgmma_rs<%d, %d, %d, %s>(%s, %s, ", tm, tn,
			      s->u.gemm.wgmma_n, s->u.gemm.trans_b ? "true" :
			      "false", c->name, a->name);
		swizzled_tile(G, s->u.gemm.b.var);
		tc_buf_printf(b, ", %s * %d", G->warp_n, tn * G->t->wgmma->n);
		if (s->u.gemm.issue)
			gemm_hook(G, s->u.gemm.issue);
		tc_buf_puts(b, ");\n");
		return;
	}
	const char *sum = s->u.gemm.wgmma_promote ? "tilec::SUM_PROMOTED" :
			  "tilec::SUM_IN_PLACE";
	const char *tail = s->u.gemm.wgmma_pending ?
			   tc_fmt(G->a, ", %s, %d", sum, s->u.gemm.wgmma_pending) :
			   s->u.gemm.wgmma_promote ? tc_fmt(G->a, ", %s", sum) : "";
	tc_buf_printf(b, "tilec::wgmma_ss<%d, %d, %d, %s, %s%s>(%s, ", tm, tn,
		      s->u.gemm.wgmma_n, s->u.gemm.trans_a ? "true" : "false",
		      s->u.gemm.trans_b ? "true" : "false", tail, c->name);
	swizzled_tile(G, s->u.gemm.a.var);
	tc_buf_puts(b, ", ");
	swizzled_tile(G, s->u.gemm.b.var);
	tc_buf_printf(b, ", %s * %d, %s * %d", G->warp_m, tm * G->t->wgmma->m,
		      G->warp_n, tn * G->t->wgmma->n);
	if (s->u.gemm.issue)
		gemm_hook(G, s->u.gemm.issue);
	tc_buf_puts(b, ");\n");
}

/* A gemm helper's shared operand: `As_tile(As_stage)`, the buffer (or
 * its stage view) as its SharedTile. */
static void
shared_tile(Gpu *G, const TcVar *v)
{
	if (!G->tile[v->index])
		error(G, v->loc, "internal error: gemm operand '%s' has no "
		      "shared tile type", v->name);
	tc_buf_printf(G->pr.out, "%s(", G->tile[v->index] ? G->tile[v->index] : "?");
	smem_base(G, v);
	tc_buf_puts(G->pr.out, ")");
}

static void emit_run_values(Gpu *G, const TcStmt *loop, const char *first,
			    int run, const char *vals, bool declare,
			    const char *row);
static bool pairs_form(Gpu *G, const TcStmt *loop, int run, TcHalfPairs *hp);
static void emit_pairs_row(Gpu *G, const TcStmt *loop, const TcHalfPairs *hp,
			   bool type);

/* tile_gemm with B computed as it is loaded (fuse_b.c, gemm.b_from):
 * tilec::mma_sr calls a lambda for each lane's run of 8 elements of a row
 * of B, which computes them as the element loop would have: `n` and
 * `j_run` are the loop's variables, the row and the run's first column. */
static void
emit_mma_sr(Gpu *G, const TcStmt *s, int tm, int tn, const char *n0)
{
	TcBuf *b = G->pr.out;
	const TcStmt *outer = s->u.gemm.b_from;
	const TcStmt *inner = outer->u.loop.body->u.block.body.items[0];
	const TcVar *c = s->u.gemm.c.var, *bv = s->u.gemm.b.var;
	const TcVar *rv = outer->u.loop.var, *cv = inner->u.loop.var;
	tc_c_comment(&G->pr, tc_fmt(G->a, "%s is held nowhere: each warp computes "
				  "the elements it multiplies as it loads them, by "
				  "the loop at line %d (lanes take runs of 8 along "
				  "K).", bv->name, outer->loc.line));
	tc_buf_printf(b, "tilec::mma_sr<%d, %d, %lld>(%s, ", tm, tn,
		      tc_var_extent(bv, 1), c->name);
	shared_tile(G, s->u.gemm.a.var);
	tc_buf_printf(b, ", %s * %d, %s,\n", G->warp_m, tm * 16, n0);
	const char *first = fresh(G, tc_fmt(G->a, "%s_run", cv->name));
	const char *vals = fresh(G, tc_fmt(G->a, "%s_vals", bv->name));
	const char *row = NULL;
	TcHalfPairs hp;
	bool saved = G->block_level;
	G->block_level = false;
	G->spread++;
	b->indent++;
	/* In half pairs: the row's integer and factor packed once a row
	 * (tilec::int_pairs_row), not once a run. */
	if (inner->u.loop.pairs && pairs_form(G, inner, 8, &hp)) {
		row = fresh(G, tc_fmt(G->a, "%s_row", bv->name));
		tc_buf_printf(b, "[&](const int %s) {\n", rv->name);
		b->indent++;
		tc_buf_puts(b, "return ");
		emit_pairs_row(G, inner, &hp, false);
		tc_buf_puts(b, ";\n");
		b->indent--;
		tc_buf_puts(b, "},\n");
		tc_buf_puts(b, "[&](const ");
		emit_pairs_row(G, inner, &hp, true);
		tc_buf_printf(b, " &%s, ", row);
	} else
		tc_buf_puts(b, "[&](");
	tc_buf_printf(b, "const int %s, const int %s, tilec::Run<8, %s> &%s) {\n",
		      rv->name, first, storage_type(G, bv->dtype), vals);
	b->indent++;
	emit_run_values(G, inner, first, 8, vals, false, row);
	G->spread--;
	G->block_level = saved;
	b->indent--;
	tc_buf_puts(b, "});\n");
	b->indent--;
}

/* tile_gemm.  With a matrix-instruction accumulator: the dialect's
 * gemm helper with A and B in shared memory (tilec::mma_ss, mfma_ss) or
 * with A in registers (mma_rs, mfma_rs), each shared operand as its
 * SharedTile; each warp multiplies its TM x TN instruction tiles
 * (TcTarget.mma: m rows, n columns).  Otherwise C is in shared memory and
 * each thread computes some of its elements with a plain k loop. */
static void
emit_gemm(Gpu *G, const TcStmt *s)
{
	const TcGpuDialect *g = G->dialect;
	const TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var,
		    *bv = s->u.gemm.b.var;
	TcBuf *b = G->pr.out;
	bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
	long long K = tc_var_extent(a, ta ? 0 : 1);
	if (c->layout.kind == TC_LAYOUT_WGMMA) {
		emit_wgmma(G, s);
		return;
	}
	if (is_mma_layout(G, c->layout.kind)) {
		int tm = c->layout.dim[0].tiles, tn = c->layout.dim[1].tiles;
		const char *n0 = tc_fmt(G->a, "%s * %d", G->warp_n,
					tn * G->t->mma->n);
		if (is_reg(a)) {
			tc_buf_printf(b, "tilec::%s<%d, %d, %s>(%s, %s, ", g->mma_rs,
				      tm, tn, tb ? "true" : "false", c->name, a->name);
			shared_tile(G, bv);
			tc_buf_printf(b, ", %s);\n", n0);
			return;
		}
		if (s->u.gemm.b_from) {
			emit_mma_sr(G, s, tm, tn, n0);
			return;
		}
		tc_buf_printf(b, "tilec::%s<%d, %d, %s, %s>(%s, ", g->mma_ss, tm, tn,
			      ta ? "true" : "false", tb ? "true" : "false", c->name);
		shared_tile(G, a);
		tc_buf_puts(b, ", ");
		shared_tile(G, bv);
		tc_buf_printf(b, ", %s * %d, %s", G->warp_m, tm * 16, n0);
		if (s->u.gemm.issue)
			gemm_hook(G, s->u.gemm.issue);
		tc_buf_puts(b, ");\n");
		return;
	}
	/* Everything in shared memory: each thread owns elements of C. */
	const char *m = fresh(G, "m"), *n = fresh(G, "n"), *sum = fresh(G, "sum");
	long long M = tc_var_extent(c, 0), N = tc_var_extent(c, 1);
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %s) {\n",
		      G->e, G->e, M * N, G->e, G->nthreads);
	b->indent++;
	tc_buf_printf(b, "const int %s = %s / %lld, %s = %s %% %lld;\n", m, G->e, N,
		      n, G->e, N);
	int mul = tc_binop_prec(TC_OP_MUL) + 1;
	const char *ld_a = row_stride_text(G, a, mul), *ld_b = row_stride_text(G, bv, mul),
		   *ld_c = row_stride_text(G, c, mul);
	/* In the accumulator's value type (integers exactly). */
	const char *conv = to_value_of(G, c->dtype);
	tc_buf_printf(b, "%s %s = %s", value_type(c->dtype), sum, conv);
	smem_base(G, c);
	tc_buf_printf(b, "[%s * %s + %s]);\n", m, ld_c, n);
	tc_buf_printf(b, "for (int %s = 0; %s < %lld; %s++)\n\t%s += %s",
		      G->kk, G->kk, K, G->kk, sum, conv);
	smem_base(G, a);
	if (ta)
		tc_buf_printf(b, "[%s * %s + %s]", G->kk, ld_a, m);
	else
		tc_buf_printf(b, "[%s * %s + %s]", m, ld_a, G->kk);
	tc_buf_printf(b, ") * %s", conv);
	smem_base(G, bv);
	if (tb)
		tc_buf_printf(b, "[%s * %s + %s]", n, ld_b, G->kk);
	else
		tc_buf_printf(b, "[%s * %s + %s]", G->kk, ld_b, n);
	tc_buf_puts(b, ");\n");
	smem_base(G, c);
	tc_buf_printf(b, "[%s * %s + %s] = %s%s);\n", m, ld_c, n,
		      from_value_of(G, c->dtype, c->dtype), sum);
	close_brace(G);
}

static void
emit_fill(Gpu *G, const TcStmt *s)
{
	const TcVar *v = s->u.fill.dst.var;
	TcBuf *b = G->pr.out;
	double cv;
	bool is_const = tc_c_const_float(s->u.fill.value, &cv);
	TcExpr *lit = is_const ? tc_expr_float(G->a, cv, TC_DT_F32, s->loc) : NULL;
	if (is_reg(v)) {
		reg_loops_open(G, v);
		tc_buf_printf(b, "%s = ", reg_at(G, v));
		if (lit && float_valued(v->dtype)) {
			expr(G, lit);
		} else if (lit && tc_dtype_is_int(v->dtype) && cv > -1e18 && cv < 1e18 &&
			   cv == (double)(long long)cv) {
			tc_buf_printf(b, "%lld", (long long)cv);
		} else {
			tc_buf_printf(b, "(%s)(", value_type(v->dtype));
			expr(G, s->u.fill.value);
			tc_buf_puts(b, ")");
		}
		tc_buf_puts(b, ";\n");
		close_brace(G);
		return;
	}
	TileIdx ti;
	tile_idx_init(G, &ti);
	spread_loop_open(G, v);
	TcExpr *idx[TC_MAX_RANK];
	for (int i = 0; i < v->rank; i++)
		idx[i] = ti.e[i];
	TcExpr *val = lit;
	if (!val || !tc_dtype_is_float(v->dtype) || v->dtype == TC_DT_F64) {
		val = tc_expr_new(G->a, TC_EX_CAST, tc_dtype_is_int(v->dtype) ?
				  v->dtype : v->dtype == TC_DT_F64 ? TC_DT_F64 :
				  TC_DT_F32, s->loc);
		val->u.cast.arg = s->u.fill.value;
	}
	store(G, v, idx, val);
	close_brace(G);
}

static const char *
reduce_op(TcReduceOp op)
{
	switch (op) {
	case TC_RED_SUM: return "tilec::REDUCE_SUM";
	case TC_RED_MAX: return "tilec::REDUCE_MAX";
	case TC_RED_MIN: return "tilec::REDUCE_MIN";
	default: return "tilec::REDUCE_ABSMAX";
	}
}

/* tilec::reduce_value for a reduction into dtype t: an i8 destination
 * takes |x| in i8, an i4 one in i4 (templates/gpu/tilec_gpu.h). */
static const char *
reduce_value_fn(Gpu *G, const char *op, TcDtype t)
{
	return tc_fmt(G->a, "tilec::reduce_value<%s%s>", op,
		      t == TC_DT_I8 ? ", signed char" :
		      t == TC_DT_I4 ? ", tilec::i4x2" : "");
}

static void
emit_reduce(Gpu *G, const TcStmt *s)
{
	const TcVar *src = s->u.reduce.src.var, *dst = s->u.reduce.dst.var;
	TcBuf *b = G->pr.out;
	int dim = s->u.reduce.dim;
	bool acc = s->u.reduce.accumulate;
	bool absmax = s->u.reduce.op == TC_RED_ABSMAX;
	const char *op = reduce_op(s->u.reduce.op);
	if (is_reg(src)) {
		/* Each thread reduces what it holds; the threads holding the
		 * same output combine (shuffles, and shared memory across
		 * warps). */
		const char *out = dist_of(G, src, 1 - dim);
		const char *part = fresh_decl(G, tc_fmt(G->a, "%s_part", dst->name));
		/* In dst's value type (integers exactly). */
		const char *acc_type = value_type(dst->dtype);
		tc_buf_printf(b, "%s %s[%s::count];\n", acc_type, part, out);
		/* smem.c reserves scratch only where warps must combine. */
		const char *scratch = G->k->smem_bytes > G->k->scratch_offset ?
			tc_fmt(G->a, "reinterpret_cast<%s *>(%s)", acc_type,
			       smem_at(G, G->k->scratch_offset)) : "nullptr";
		tc_buf_printf(b, "tilec::reduce2d<%s, %d, %s, %s, %s, %s>(%s, %s, %s);\n",
			      op, dim, dist_of(G, src, 0), dist_of(G, src, 1),
			      G->nthreads, storage_type(G, dst->dtype), part,
			      src->name, scratch);
		tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++)",
			      G->r0, G->r0, out, G->r0);
		if (is_reg(dst)) {
			tc_buf_printf(b, "\n\t%s[%s] = ", dst->name, G->r0);
			/* The old value in the partials' type (an 8-bit
			 * fragment holds its own type). */
			const char *old = tc_fmt(G->a, "%s%s[%s]",
				strcmp(reg_type(G, dst->dtype), acc_type) != 0 ?
				tc_fmt(G->a, "(%s)", acc_type) : "", dst->name, G->r0);
			if (acc && absmax)
				tc_buf_printf(b, "tilec::reduce_combine<%s>(%s"
					      "(%s), %s[%s]);\n", op,
					      reduce_value_fn(G, op, dst->dtype), old, part,
					      G->r0);
			else if (acc)
				tc_buf_printf(b, "tilec::reduce_combine<%s>(%s, %s[%s]);\n",
					      op, old, part, G->r0);
			else
				tc_buf_printf(b, "%s[%s];\n", part, G->r0);
			return;
		}
		tc_buf_printf(b, " {\n");
		b->indent++;
		tc_buf_printf(b, "if (tilec::leader<%s::BITS>()) {\n", out);
		b->indent++;
		tc_buf_printf(b, "const int %s = %s::index(%s);\n", G->o, out, G->r0);
		bool put = stores_bytes(G, dst), i4 = packed_i4(dst);
		if (i4) {
			tc_buf_puts(b, "tilec::i4_put(");
			smem_base(G, dst);
			tc_buf_printf(b, ", %s, %s", G->o,
				      from_value_of(G, dst->dtype, dst->dtype));
		} else {
			if (put)
				tc_buf_printf(b, "%s(&", G->dialect->byte_store);
			smem_base(G, dst);
			tc_buf_printf(b, "[%s]%s%s", G->o, put ? ", " : " = ",
				      from_value_of(G, dst->dtype, dst->dtype));
		}
		if (acc) {
			tc_buf_printf(b, "tilec::reduce_combine<%s>(", op);
			if (absmax)
				tc_buf_printf(b, "%s(", reduce_value_fn(G, op, dst->dtype));
			tc_buf_puts(b, i4 ? "tilec::i4_get(" : to_value_of(G, dst->dtype));
			smem_base(G, dst);
			tc_buf_printf(b, i4 ? ", %s)%s, %s[%s]))" : "[%s])%s, %s[%s]))",
				      G->o, absmax ? ")" : "", part, G->r0);
		} else {
			tc_buf_printf(b, "%s[%s])", part, G->r0);
		}
		store_close(G, dst);
		close_brace(G);
		close_brace(G);
		return;
	}
	if (src->rank == 2) {
		tc_buf_printf(b, "tilec::smem_reduce<%s, %d, %s, %s, %s, %s>(",
			      op, dim, acc ? "true" : "false",
			      extent_text(G, src, 0, TC_PREC_COMMA + 1),
			      extent_text(G, src, 1, TC_PREC_COMMA + 1), G->nthreads);
		smem_base(G, src);
		tc_buf_printf(b, ", %s, ", row_stride_text(G, src, TC_PREC_COMMA + 1));
		smem_base(G, dst);
		tc_buf_puts(b, ");\n");
		return;
	}
	/* Higher ranks: one thread per output, a serial loop over dim. */
	TileIdx ti;
	tile_idx_init(G, &ti);
	spread_loop_open(G, dst);
	TcExpr *si[TC_MAX_RANK], *di[TC_MAX_RANK];
	TcVar kv = { .kind = TC_VAR_LOCAL, .name = G->kk, .dtype = TC_DT_I32 };
	for (int i = 0, j = 0; i < src->rank; i++)
		si[i] = i == dim ? tc_expr_var(G->a, &kv, s->loc) : ti.e[j++];
	for (int i = 0; i < dst->rank; i++)
		di[i] = ti.e[i];
	TcExpr *ld = tc_expr_new(G->a, TC_EX_LOAD, src->dtype, s->loc);
	ld->u.load.var = (TcVar *)src;
	memcpy(ld->u.load.idx, si, sizeof si);
	TcExpr *old = tc_expr_new(G->a, TC_EX_LOAD, dst->dtype, s->loc);
	old->u.load.var = (TcVar *)dst;
	memcpy(old->u.load.idx, di, sizeof di);
	/* In dst's value type, each element converted to it first (an
	 * element read from memory has its storage type: i8, u8, bool; only
	 * float-valued ones already read as floats). */
	const char *v = fresh(G, "v"), *acc_type = value_type(dst->dtype);
	const char *src_type = storage_type(G, src->dtype);
	bool convert = src->dtype != dst->dtype || !src_type ||
		       strcmp(acc_type, src_type) != 0;
	tc_buf_printf(b, "%s %s = ", acc_type, v);
	if (acc && absmax) {
		tc_buf_printf(b, "%s(", reduce_value_fn(G, op, dst->dtype));
		expr(G, old);
		tc_buf_puts(b, ")");
	} else if (acc) {
		expr(G, old);
	}
	else if (float_valued(dst->dtype))
		tc_buf_printf(b, "tilec::reduce_init<%s>()", op);
	else
		tc_buf_printf(b, "tilec::reduce_init<%s, %s>()", op, acc_type);
	tc_buf_puts(b, ";\n");
	tc_buf_printf(b, "for (int %s = 0; %s < %lld; %s++)\n\t", G->kk, G->kk,
		      tc_var_extent(src, dim), G->kk);
	tc_buf_printf(b, "%s = tilec::reduce_combine<%s>(%s, %s(", v, op, v,
		      reduce_value_fn(G, op, dst->dtype));
	/* An integer dst takes each element converted to its own type
	 * first (an i32 -3 is a u8 253, a 9 an i4 -7), a float one in its
	 * value type. */
	bool wrap = tc_dtype_is_int(dst->dtype) &&
		    strcmp(acc_type, storage_type(G, dst->dtype)) != 0;
	if (convert)
		tc_buf_printf(b, "(%s)(", acc_type);
	if (wrap && dst->dtype == TC_DT_I4)
		tc_buf_puts(b, "tilec::i4_wrap(");
	else if (wrap)
		tc_buf_printf(b, "(%s)(", storage_type(G, dst->dtype));
	expr(G, ld);
	tc_buf_puts(b, wrap ? ")" : "");
	tc_buf_puts(b, convert ? ")));\n" : "));\n");
	store_open(G, dst, di);
	tc_buf_printf(b, "%s%s)", from_value_of(G, dst->dtype, dst->dtype), v);
	store_close(G, dst);
	close_brace(G);
}

/* REDUCE_ALL, `s = tile_sum(x)` and its kin: a register fragment through
 * tilec::reduce_all; a tile in shared memory read by every thread in
 * turn, each thread's part combined by tilec::reduce_block.  Every thread
 * gets the value, as a block-level scalar is every thread's. */
static void
emit_reduce_all(Gpu *G, const TcStmt *s)
{
	const TcVar *src = s->u.reduce_all.src.var, *dst = s->u.reduce_all.dst;
	TcBuf *b = G->pr.out;
	const char *op = reduce_op(s->u.reduce_all.op);
	TcDtype t = tc_reduce_all_type(src->dtype);
	const char *acc_type = value_type(t);
	const char *scratch = G->k->smem_bytes > G->k->scratch_offset ?
		smem_at(G, G->k->scratch_offset) : "nullptr";
	const char *val;
	bool braces = false;
	if (is_reg(src)) {
		bool one = src->rank == 1;
		val = tc_fmt(G->a, "tilec::reduce_all<%s, %s, %s, %s, %s>(%s%s%s, %s)",
			     op, one ? "tilec::One" : dist_of(G, src, 0),
			     dist_of(G, src, one ? 0 : 1), G->nthreads, acc_type,
			     one ? "tilec::as_row(" : "", src->name, one ? ")" : "",
			     scratch);
	} else {
		tc_buf_puts(b, "{\n");
		b->indent++;
		braces = true;
		const char *part = fresh(G, tc_fmt(G->a, "%s_part", dst->name));
		tc_buf_printf(b, "%s %s = tilec::reduce_init<%s, %s>();\n",
			      acc_type, part, op, acc_type);
		TileIdx ti;
		tile_idx_init(G, &ti);
		spread_loop_open(G, src);
		TcExpr *ld = tc_expr_new(G->a, TC_EX_LOAD, src->dtype, s->loc);
		ld->u.load.var = (TcVar *)src;
		memcpy(ld->u.load.idx, ti.e, sizeof ld->u.load.idx);
		/* Elements read from memory have their storage type (i8,
		 * u8, bool): converted to the value type first. */
		bool convert = strcmp(value_type(src->dtype), acc_type) != 0 ||
			       !tc_dtype_is_float(src->dtype);
		tc_buf_printf(b, "%s = tilec::reduce_combine<%s>(%s, tilec::reduce_value<%s>(%s",
			      part, op, part, op,
			      convert ? tc_fmt(G->a, "(%s)(", acc_type) : "");
		expr(G, ld);
		tc_buf_puts(b, convert ? ")));\n" : "));\n");
		close_brace(G);
		val = tc_fmt(G->a, "tilec::reduce_block<%s, %s>(%s, %s)", op,
			     G->nthreads, part, scratch);
	}
	if (dst->dtype == t) {
		tc_buf_printf(b, "%s = %s;\n", dst->name, val);
	} else {
		/* Converted as an assignment converts. */
		if (!braces) {
			tc_buf_puts(b, "{\n");
			b->indent++;
			braces = true;
		}
		TcVar tv = { .kind = TC_VAR_LOCAL, .dtype = t, .index = -1,
			     .name = fresh(G, tc_fmt(G->a, "%s_value", dst->name)) };
		tc_buf_printf(b, "const %s %s = %s;\n", acc_type, tv.name, val);
		TcExpr *cast = tc_expr_new(G->a, TC_EX_CAST, dst->dtype, s->loc);
		cast->u.cast.arg = tc_expr_var(G->a, &tv, s->loc);
		tc_buf_printf(b, "%s = ", dst->name);
		expr(G, cast);
		tc_buf_puts(b, ";\n");
	}
	if (braces)
		close_brace(G);
}

/* ARG_REDUCE, tile_reduce_argmax / argmin: every operand in shared memory
 * (layout.c); one thread per output scans the reduced dim from index 0,
 * keeping the best element's index (tilec::arg_better). */
/* ARG_REDUCE as top-k: one thread per position of the other dims runs
 * the scans, output r the first (tilec::topk_before) of the elements
 * after output r - 1. */
static void
emit_topk(Gpu *G, const TcStmt *s)
{
	const TcVar *dst = s->u.arg_reduce.dst.var, *ix = s->u.arg_reduce.index.var,
		    *src = s->u.arg_reduce.src.var;
	TcBuf *b = G->pr.out;
	int dim = s->u.arg_reduce.dim;
	/* The positions of the other dims, as a shape to spread over. */
	TcVar outer = { .kind = TC_VAR_BUFFER, .name = "outer", .dtype = src->dtype };
	for (int i = 0; i < src->rank; i++)
		if (i != dim)
			outer.shape[outer.rank++] =
				tc_expr_int(G->a, tc_var_extent(src, i), s->loc);
	if (outer.rank == 0)
		outer.shape[outer.rank++] = tc_expr_int(G->a, 1, s->loc);
	TileIdx ti;
	tile_idx_init(G, &ti);
	spread_loop_open(G, &outer);
	const char *at = fresh(G, "at"), *rank = fresh(G, "rank");
	TcVar kv = { .kind = TC_VAR_LOCAL, .name = G->kk, .dtype = TC_DT_I32 };
	TcVar av = { .kind = TC_VAR_LOCAL, .name = at, .dtype = ix->dtype };
	TcVar rv = { .kind = TC_VAR_LOCAL, .name = rank, .dtype = TC_DT_I32 };
	TcExpr *ki = tc_expr_var(G->a, &kv, s->loc), *ai = tc_expr_var(G->a, &av, s->loc);
	TcExpr *ri = tc_expr_var(G->a, &rv, s->loc);
	TcExpr *pi = tc_expr_binary(G->a, TC_OP_SUB, ri, tc_expr_int(G->a, 1, s->loc),
				    s->loc);
	TcExpr *oi[TC_MAX_RANK], *prev_i[TC_MAX_RANK];
	for (int i = 0, j = 0; i < src->rank; i++) {
		oi[i] = i == dim ? ri : ti.e[j];
		prev_i[i] = i == dim ? pi : ti.e[j];
		j += i != dim;
	}
	TcExpr *prev = tc_expr_new(G->a, TC_EX_LOAD, ix->dtype, s->loc);
	prev->u.load.var = (TcVar *)ix;
	memcpy(prev->u.load.idx, prev_i, sizeof prev_i);
	TcExpr *load[3], *at_idx[3] = { ki, ai, prev };
	for (int n = 0; n < 3; n++) {
		load[n] = tc_expr_new(G->a, TC_EX_LOAD, src->dtype, s->loc);
		load[n]->u.load.var = (TcVar *)src;
		for (int i = 0, j = 0; i < src->rank; i++) {
			load[n]->u.load.idx[i] = i == dim ? at_idx[n] : ti.e[j];
			j += i != dim;
		}
	}
	tc_buf_printf(b, "for (int %s = 0; %s < %lld; %s++) {\n", rank, rank,
		      tc_var_extent(dst, dim), rank);
	b->indent++;
	tc_buf_printf(b, "%s %s = -1;\n", value_type(ix->dtype), at);
	tc_buf_printf(b, "for (int %s = 0; %s < %lld; %s++)\n", G->kk, G->kk,
		      tc_var_extent(src, dim), G->kk);
	tc_buf_printf(b, "\tif ((%s == 0 || tilec::topk_before(", rank);
	expr(G, load[2]);
	tc_buf_puts(b, ", ");
	expr(G, prev);
	tc_buf_puts(b, ", ");
	expr(G, load[0]);
	tc_buf_printf(b, ", %s)) &&\n\t    (%s < 0 || tilec::topk_before(", G->kk, at);
	expr(G, load[0]);
	tc_buf_printf(b, ", %s, ", G->kk);
	expr(G, load[1]);
	tc_buf_printf(b, ", %s)))\n\t\t%s = %s;\n", at, at, G->kk);
	store_open(G, dst, oi);
	tc_buf_puts(b, from_value_of(G, dst->dtype, src->dtype));
	expr(G, load[1]);
	tc_buf_puts(b, ")");
	store_close(G, dst);
	store_open(G, ix, oi);
	tc_buf_puts(b, at);
	store_close(G, ix);
	close_brace(G);
	close_brace(G);
}

static void
emit_arg_reduce(Gpu *G, const TcStmt *s)
{
	if (s->u.arg_reduce.topk) {
		emit_topk(G, s);
		return;
	}
	const TcVar *dst = s->u.arg_reduce.dst.var, *ix = s->u.arg_reduce.index.var,
		    *src = s->u.arg_reduce.src.var;
	TcBuf *b = G->pr.out;
	int dim = s->u.arg_reduce.dim;
	TileIdx ti;
	tile_idx_init(G, &ti);
	spread_loop_open(G, dst);
	const char *at = fresh(G, "at");
	TcVar kv = { .kind = TC_VAR_LOCAL, .name = G->kk, .dtype = TC_DT_I32 };
	TcVar av = { .kind = TC_VAR_LOCAL, .name = at, .dtype = ix->dtype };
	TcExpr *x = tc_expr_new(G->a, TC_EX_LOAD, src->dtype, s->loc);
	TcExpr *best = tc_expr_new(G->a, TC_EX_LOAD, src->dtype, s->loc);
	x->u.load.var = best->u.load.var = (TcVar *)src;
	for (int i = 0, j = 0; i < src->rank; i++) {
		x->u.load.idx[i] = i == dim ? tc_expr_var(G->a, &kv, s->loc) : ti.e[j];
		best->u.load.idx[i] = i == dim ? tc_expr_var(G->a, &av, s->loc)
					       : ti.e[j];
		j += i != dim;
	}
	tc_buf_printf(b, "%s %s = 0;\n", value_type(ix->dtype), at);
	tc_buf_printf(b, "for (int %s = 1; %s < %lld; %s++)\n", G->kk, G->kk,
		      tc_var_extent(src, dim), G->kk);
	tc_buf_printf(b, "\tif (tilec::arg_better<%s>(",
		      s->u.arg_reduce.min ? "true" : "false");
	expr(G, x);
	tc_buf_puts(b, ", ");
	expr(G, best);
	tc_buf_printf(b, "))\n\t\t%s = %s;\n", at, G->kk);
	store_open(G, dst, ti.e);
	tc_buf_puts(b, from_value_of(G, dst->dtype, src->dtype));
	expr(G, best);
	tc_buf_puts(b, ")");
	store_close(G, dst);
	store_open(G, ix, ti.e);
	tc_buf_puts(b, at);
	store_close(G, ix);
	close_brace(G);
}

/* --- Statements ------------------------------------------------------------------------- */

static void emit_stmt(Gpu *G, const TcStmt *s);

static void
emit_body(Gpu *G, const TcStmt *blk)
{
	for (int i = 0; i < blk->u.block.body.len; i++)
		emit_stmt(G, blk->u.block.body.items[i]);
}

/* A store to memory other threads see, where several threads run the
 * statement alike: only one of them does it. */
static const char *
single_writer(Gpu *G)
{
	if (G->block_level)
		return "threadIdx.x == 0";
	if (G->spread)
		return NULL;
	const char *bits = anchored_bits(G);
	return bits ? tc_fmt(G->a, "tilec::leader<%s>()", bits) : NULL;
}

static void
emit_assign(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	const TcExpr *dst = s->u.assign.dst;
	if (dst->kind == TC_EX_VAR) {
		tc_buf_printf(b, "%s = ", dst->u.var->name);
		expr(G, s->u.assign.value);
		tc_buf_puts(b, ";\n");
		return;
	}
	const TcVar *v = dst->u.load.var;
	const char *guard = is_reg(v) ? NULL : single_writer(G);
	if (guard) {
		tc_buf_printf(b, "if (%s)\n", guard);
		b->indent++;
	}
	store(G, v, dst->u.load.idx, s->u.assign.value);
	if (guard)
		b->indent--;
}

/* A tile_parallel loop whose iterations are spread over the threads
 * (TC_THREADS_SPREAD): with the SPREAD loops nested in it as its only
 * statement (layout.c), one flat loop. */
/* e with every use of var v replaced by `to` (a copy; e is kept). */
static TcExpr *
replace_var(Gpu *G, const TcExpr *e, const TcVar *v, const TcExpr *to)
{
	if (!e)
		return NULL;
	if (e->kind == TC_EX_VAR && e->u.var == v)
		return tc_expr_clone(G->a, to);
	TcExpr *n = tc_alloc(G->a, sizeof *n);
	*n = *e;
	switch (e->kind) {
	case TC_EX_BINARY:
		n->u.bin.lhs = replace_var(G, e->u.bin.lhs, v, to);
		n->u.bin.rhs = replace_var(G, e->u.bin.rhs, v, to);
		break;
	case TC_EX_UNARY: n->u.un.arg = replace_var(G, e->u.un.arg, v, to); break;
	case TC_EX_CAST: n->u.cast.arg = replace_var(G, e->u.cast.arg, v, to); break;
	case TC_EX_SELECT:
		n->u.sel.cond = replace_var(G, e->u.sel.cond, v, to);
		n->u.sel.then = replace_var(G, e->u.sel.then, v, to);
		n->u.sel.els = replace_var(G, e->u.sel.els, v, to);
		break;
	case TC_EX_CALL:
		n->u.call.args = tc_alloc(G->a, sizeof(TcExpr *) * (size_t)(e->u.call.nargs + 1));
		for (int i = 0; i < e->u.call.nargs; i++)
			n->u.call.args[i] = replace_var(G, e->u.call.args[i], v, to);
		break;
	case TC_EX_LOAD:
		for (int i = 0; i < e->u.load.var->rank; i++)
			n->u.load.idx[i] = replace_var(G, e->u.load.idx[i], v, to);
		break;
	default:
		break;
	}
	return n;
}

/* The assignment of a column loop whose rows move as vectors (ragged.c,
 * loop.row_vec) when the emitter can print them so: into a shared tile,
 * unswizzled, whose rows keep 16-byte vectors aligned; NULL otherwise. */
static const TcStmt *
row_vector_assign(const TcStmt *col)
{
	if (!col->u.loop.row_vec)
		return NULL;
	const TcStmt *as = col->u.loop.body->u.block.body.items[0];
	const TcVar *tile = as->u.assign.dst->u.load.var;
	if (!tc_in_smem(tile) || tile->swizzle ||
	    row_stride(tile) * tc_dtype_storage_bits(tile->dtype) % 128 != 0)
		return NULL;
	return as;
}

/* A spread nest whose column loop moves its rows as vectors: each thread
 * takes runs of row_vec columns; a run whose row is inside (row_in),
 * whose last column is inside (col_in) and whose tensor address is
 * 16-byte aligned is one 16-byte load and store, any other goes element
 * by element through the loop's own body. */
static void
emit_row_vectors(Gpu *G, const TcStmt *const *loops, const long long *ext, int n,
		 const TcStmt *as)
{
	TcBuf *b = G->pr.out;
	const TcStmt *col = loops[n - 1];
	const TcVar *cv = col->u.loop.var;
	int vec = col->u.loop.row_vec;
	long long runs = ext[n - 1] / vec, total = runs;
	for (int i = 0; i < n - 1; i++)
		total *= ext[i];
	const char *e = fresh(G, tc_fmt(G->a, "%s_e", loops[0]->u.loop.var->name));
	const char *first = fresh(G, tc_fmt(G->a, "%s_run", cv->name));
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %s) {\n", e, e, total,
		      e, G->nthreads);
	b->indent++;
	long long inner = total;
	tc_buf_puts(b, "const int ");
	for (int i = 0; i < n; i++) {
		long long x = i == n - 1 ? runs : ext[i];
		inner /= x;
		const char *name = i == n - 1 ? first : loops[i]->u.loop.var->name;
		if (i)
			tc_buf_puts(b, ", ");
		if (i == n - 1)
			tc_buf_printf(b, "%s = %s %% %lld * %d", name, e, runs, vec);
		else if (i == 0)
			tc_buf_printf(b, "%s = %s / %lld", name, e, inner);
		else
			tc_buf_printf(b, "%s = %s / %lld %% %lld", name, e, inner, x);
	}
	tc_buf_puts(b, ";\n");
	/* The run's first column, and its last for the column tests. */
	TcVar run = { .kind = TC_VAR_LOCAL, .name = first, .dtype = TC_DT_I32 };
	TcExpr *at = tc_expr_var(G->a, &run, col->loc);
	TcExpr *last = tc_expr_binary(G->a, TC_OP_ADD, at,
				      tc_expr_int(G->a, vec - 1, col->loc), col->loc);
	const TcExpr *dst = replace_var(G, as->u.assign.dst, cv, at);
	const TcExpr *src = replace_var(G, as->u.assign.value->u.sel.then, cv, at);
	tc_buf_puts(b, "if (");
	if (col->u.loop.row_in) {
		tc_c_expr_prec(&G->pr, col->u.loop.row_in, tc_binop_prec(TC_OP_LAND));
		tc_buf_puts(b, " && ");
	}
	if (col->u.loop.col_in) {
		tc_c_expr_prec(&G->pr, replace_var(G, col->u.loop.col_in, cv, last),
			       tc_binop_prec(TC_OP_LAND));
		tc_buf_puts(b, " && ");
	}
	tc_buf_puts(b, "tilec::aligned16(&");
	element_ref(G, src->u.load.var, src->u.load.idx);
	tc_buf_puts(b, "))\n");
	b->indent++;
	tc_buf_puts(b, "tilec::copy16(&");
	element_ref(G, dst->u.load.var, dst->u.load.idx);
	tc_buf_puts(b, ", &");
	element_ref(G, src->u.load.var, src->u.load.idx);
	tc_buf_puts(b, ");\n");
	b->indent--;
	tc_buf_puts(b, "else\n");
	b->indent++;
	tc_buf_printf(b, "for (int %s = %s; %s < %s + %d; %s++) {\n", cv->name, first, cv->name,
		      first, vec, cv->name);
	b->indent++;
	bool saved = G->block_level;
	G->block_level = false;
	G->spread++;
	emit_body(G, col->u.loop.body);
	G->spread--;
	G->block_level = saved;
	close_brace(G);
	b->indent--;
	close_brace(G);
}

/* The form of a loop in half pairs (the pass's decision), in *hp. */
static bool
pairs_form(Gpu *G, const TcStmt *loop, int run, TcHalfPairs *hp)
{
	const TcStmt *as = loop->u.loop.body->u.block.body.items[0];
	const char *why;
	if (tc_half_pairs_form(G->a, as, loop->u.loop.var, run, hp, &why))
		return true;
	error(G, loop->loc, "internal error: loop '%s' in half pairs: %s",
	      loop->u.loop.var->name, why);
	return false;
}

/* What a row of a loop in half pairs (of form hp) adds and multiplies
 * by, packed: `tilec::int_pairs_row<T, S>(add, mul)` (T the destination's
 * storage type, S the source's), or its type where `type`. */
static void
emit_pairs_row(Gpu *G, const TcStmt *loop, const TcHalfPairs *hp, bool type)
{
	TcBuf *b = G->pr.out;
	const TcStmt *as = loop->u.loop.body->u.block.body.items[0];
	const char *t = storage_type(G, as->u.assign.dst->u.load.var->dtype);
	const TcVar *src = hp->src->u.load.var;
	const char *st = packed_i4(src) ? "tilec::i4x2" : storage_type(G, src->dtype);
	if (type) {
		tc_buf_printf(b, "tilec::PairsRow<%s, %s, %s>", t, st,
			      hp->mul ? "true" : "false");
		return;
	}
	tc_buf_printf(b, "tilec::int_pairs_row<%s, %s>(", t, st);
	expr(G, hp->add);
	if (hp->mul) {
		tc_buf_puts(b, ", ");
		expr(G, hp->mul);
	}
	tc_buf_puts(b, ")");
}

/* A run's values in half pairs: tilec::int_pairs(vals, the integers'
 * run, the integer added, the factor), or (vals, the run, row) with the
 * row's packed values named `row`; the run loads (nl of them) named
 * already. */
static void
emit_pairs(Gpu *G, const TcStmt *loop, int run, const char *vals, int nl,
	   const char *row)
{
	TcBuf *b = G->pr.out;
	TcHalfPairs hp;
	const char *src = NULL;
	if (!pairs_form(G, loop, run, &hp))
		return;
	for (int i = 0; i < nl && !src; i++)
		if (tc_expr_equal(G->run_loads[i], hp.src))
			src = G->run_names[i];
	if (!src) {
		error(G, loop->loc, "internal error: loop '%s' in half pairs "
		      "reads no integer run", loop->u.loop.var->name);
		return;
	}
	tc_buf_printf(b, "tilec::int_pairs(%s, %s, ", vals, src);
	if (row)
		tc_buf_puts(b, row);
	else {
		expr(G, hp.add);
		if (hp.mul) {
			tc_buf_puts(b, ", ");
			expr(G, hp.mul);
		}
	}
	tc_buf_puts(b, ");\n");
}

/* The values of `run` iterations from `first` (a name) of `loop`, whose
 * one statement is an assignment, into the tilec::Run named vals: what
 * the value reads along the run, each as one vector, vals declared
 * (where `declare`), and the unrolled loop computing each element, or,
 * for a loop in half pairs (half_pairs.c), tilec::int_pairs.  The caller
 * is inside the spread loop (G->spread). */
static void
emit_run_values(Gpu *G, const TcStmt *loop, const char *first, int run,
		const char *vals, bool declare, const char *row)
{
	TcBuf *b = G->pr.out;
	const TcStmt *as = loop->u.loop.body->u.block.body.items[0];
	const TcVar *cv = loop->u.loop.var;
	const TcExpr *dst = as->u.assign.dst;
	const TcVar *t = dst->u.load.var;
	TcVar at_var = { .kind = TC_VAR_LOCAL, .name = first, .dtype = TC_DT_I32 };
	TcExpr *at = tc_expr_var(G->a, &at_var, as->loc);
	const char *v = fresh(G, tc_fmt(G->a, "%s_v", cv->name));
	/* What the value reads along the run, each as one vector. */
	int nl = tc_run_whole_loads(dst, as->u.assign.value, cv, run, G->run_loads,
				    (int)(sizeof G->run_loads / sizeof *G->run_loads));
	for (int i = 0; i < nl; i++) {
		const TcVar *src = G->run_loads[i]->u.load.var;
		const TcExpr *from = replace_var(G, G->run_loads[i], cv, at);
		/* Two reads of one buffer along the run (t[i][j] and t[j][i])
		 * are two vectors, named apart. */
		const char *name = fresh(G, tc_fmt(G->a, "%s_run", src->name));
		for (int k = 0; k < i; k++)
			if (strcmp(G->run_names[k], name) == 0) {
				name = fresh(G, tc_fmt(G->a, "%s_", name));
				k = -1;
			}
		G->run_names[i] = name;
		if (packed_i4(src)) {
			tc_buf_printf(b, "tilec::Run<%d, tilec::i4x2> %s;\n", run / 2, name);
			tc_buf_printf(b, "%s.load(&", name);
			smem_base(G, src);
			tc_buf_puts(b, "[(");
			smem_offset(G, src, from->u.load.idx);
			tc_buf_puts(b, ") >> 1]);\n");
		} else {
			tc_buf_printf(b, "tilec::Run<%d, %s> %s;\n", run,
				      storage_type(G, src->dtype), name);
			tc_buf_printf(b, "%s.load(&", name);
			element_ref(G, src, from->u.load.idx);
			tc_buf_puts(b, ");\n");
		}
	}
	if (declare)
		tc_buf_printf(b, "tilec::Run<%d, %s> %s;\n", run,
			      storage_type(G, t->dtype), vals);
	if (loop->u.loop.pairs) {
		emit_pairs(G, loop, run, vals, nl, row);
		return;
	}
	/* A float value into 16-bit floats: the run's floats, rounded a
	 * pair at a time (tilec::round_run), once each, as the store
	 * would. */
	const TcExpr *value = rounded_by_store(t, as->u.assign.value);
	const char *fl = NULL;
	if ((t->dtype == TC_DT_F16 || t->dtype == TC_DT_BF16) && run % 2 == 0 &&
	    !(value->kind == TC_EX_LOAD && value->dtype == t->dtype)) {
		fl = fresh(G, tc_fmt(G->a, "%s_f", t->name));
		tc_buf_printf(b, "float %s[%d];\n", fl, run);
	}
	tc_buf_puts(b, "#pragma unroll\n");
	tc_buf_printf(b, "for (int %s = 0; %s < %d; %s++) {\n", v, v, run, v);
	b->indent++;
	/* The iteration's own index, where the value still prints it. */
	Uses u = { cv, false, G->run_loads, nl };
	TcVisitor vis = { .expr = find_use, .ctx = &u };
	tc_expr_visit(as->u.assign.value, &vis);
	if (u.found)
		tc_buf_printf(b, "const int %s = %s + %s;\n", cv->name, first, v);
	G->nrun_loads = nl;
	G->run_v = v;
	if (fl) {
		tc_buf_printf(b, "%s[%s] = ", fl, v);
		expr(G, value);
	} else {
		tc_buf_printf(b, "%s.e[%s] = ", vals, v);
		stored_value(G, t, as->u.assign.value);
	}
	G->nrun_loads = 0;
	tc_buf_puts(b, ";\n");
	close_brace(G);
	if (fl)
		tc_buf_printf(b, "tilec::round_run(%s, %s);\n", vals, fl);
}

/* A spread nest whose innermost loop goes in runs (runs.c, loop.run):
 * each thread takes `run` consecutive iterations of it, computes their
 * values into a tilec::Run and stores that into the row as one vector. */
static void
emit_runs(Gpu *G, const TcStmt *const *loops, const long long *ext, int n)
{
	TcBuf *b = G->pr.out;
	const TcStmt *col = loops[n - 1];
	const TcVar *cv = col->u.loop.var;
	int run = col->u.loop.run;
	long long runs = ext[n - 1] / run, total = runs;
	for (int i = 0; i < n - 1; i++)
		total *= ext[i];
	const TcStmt *as = col->u.loop.body->u.block.body.items[0];
	const TcExpr *dst = as->u.assign.dst;
	const TcVar *t = dst->u.load.var;
	const char *e = fresh(G, tc_fmt(G->a, "%s_e", loops[0]->u.loop.var->name));
	const char *first = fresh(G, tc_fmt(G->a, "%s_run", cv->name));
	const char *vals = fresh(G, tc_fmt(G->a, "%s_vals", t->name));
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %s) {\n", e, e, total,
		      e, G->nthreads);
	b->indent++;
	/* The outer loops' variables the body uses, and the run's first
	 * column, from the flat index. */
	long long inner = total;
	tc_buf_puts(b, "const int ");
	for (int i = 0; i < n; i++) {
		long long x = i == n - 1 ? runs : ext[i];
		inner /= x;
		if (i < n - 1 && !prints_var(col->u.loop.body, loops[i]->u.loop.var))
			continue;
		const char *name = i == n - 1 ? first : loops[i]->u.loop.var->name;
		if (i == n - 1)
			tc_buf_printf(b, "%s = %s %% %lld * %d", name, e, runs, run);
		else if (i == 0)
			tc_buf_printf(b, "%s = %s / %lld, ", name, e, inner);
		else
			tc_buf_printf(b, "%s = %s / %lld %% %lld, ", name, e, inner, x);
	}
	tc_buf_puts(b, ";\n");
	bool saved = G->block_level;
	G->block_level = false;
	G->spread++;
	emit_run_values(G, col, first, run, vals, true, NULL);
	TcVar at_var = { .kind = TC_VAR_LOCAL, .name = first, .dtype = TC_DT_I32 };
	TcExpr *at = tc_expr_var(G->a, &at_var, col->loc);
	const TcExpr *to = replace_var(G, dst, cv, at);
	tc_buf_printf(b, "%s.store(&", vals);
	element_ref(G, t, to->u.load.idx);
	tc_buf_puts(b, ");\n");
	G->spread--;
	G->block_level = saved;
	close_brace(G);
}

static void
emit_spread(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	const TcStmt *loops[TC_MAX_RANK];
	long long ext_[TC_MAX_RANK];
	int n = 0;
	const TcStmt *cur = s;
	for (;;) {
		loops[n] = cur;
		tc_expr_const(cur->u.loop.end, &ext_[n]);
		n++;
		const TcVec *body = &cur->u.loop.body->u.block.body;
		if (n == TC_MAX_RANK || body->len != 1)
			break;
		const TcStmt *inner = body->items[0];
		if (inner->kind != TC_ST_FOR || inner->u.loop.kind != TC_LOOP_PARALLEL ||
		    inner->u.loop.threads != TC_THREADS_SPREAD)
			break;
		cur = inner;
	}
	const TcStmt *as = row_vector_assign(loops[n - 1]);
	if (as && (n > 1 || loops[0] == loops[n - 1])) {
		emit_row_vectors(G, loops, ext_, n, as);
		return;
	}
	if (loops[n - 1]->u.loop.run > 1) {
		emit_runs(G, loops, ext_, n);
		return;
	}
	long long total = 1;
	for (int i = 0; i < n; i++)
		total *= ext_[i];
	const char *e = fresh(G, tc_fmt(G->a, "%s_e", loops[0]->u.loop.var->name));
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %s) {\n",
		      e, e, total, e, G->nthreads);
	b->indent++;
	/* The loop variables the body uses, from the flat index. */
	long long inner = total;
	bool any = false;
	for (int i = 0; i < n; i++) {
		inner /= ext_[i];
		const TcVar *v = loops[i]->u.loop.var;
		if (!prints_var(loops[n - 1]->u.loop.body, v))
			continue;
		tc_buf_puts(b, any ? ", " : "const int ");
		any = true;
		if (n == 1)
			tc_buf_printf(b, "%s = %s", v->name, e);
		else if (i == 0)
			tc_buf_printf(b, "%s = %s / %lld", v->name, e, inner);
		else if (i == n - 1)
			tc_buf_printf(b, "%s = %s %% %lld", v->name, e, ext_[i]);
		else
			tc_buf_printf(b, "%s = %s / %lld %% %lld", v->name, e, inner, ext_[i]);
	}
	if (any)
		tc_buf_puts(b, ";\n");
	bool saved = G->block_level;
	G->block_level = false;
	G->spread++;
	emit_body(G, loops[n - 1]->u.loop.body);
	G->spread--;
	G->block_level = saved;
	close_brace(G);
}

/* A tile_parallel loop inside a spread iteration (TC_THREADS_SERIAL): the
 * thread that runs that iteration runs all of this loop's. */
static void
emit_serial_parallel(Gpu *G, const TcStmt *s)
{
	tc_c_for(&G->pr, "int", s->u.loop.var->name, s->u.loop.begin,
		 s->u.loop.end, s->u.loop.step);
	tc_buf_puts(G->pr.out, " {\n");
	G->pr.out->indent++;
	emit_body(G, s->u.loop.body);
	close_brace(G);
}

/* A tile_parallel loop inside an anchored iteration (TC_THREADS_PEERS):
 * its iterations go round-robin over the threads that run that iteration
 * alike, each store done by the one that runs its iteration. */
static void
emit_peers(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	const char *bits = anchored_bits(G);
	const char *v = s->u.loop.var->name;
	if (!bits) {
		error(G, s->loc, "internal error: a loop spread over peers "
		      "outside anchored loops");
		return;
	}
	long long begin = -1;
	tc_buf_printf(b, "for (int %s = ", v);
	if (!tc_expr_const(s->u.loop.begin, &begin) || begin != 0) {
		expr(G, s->u.loop.begin);
		tc_buf_puts(b, " + ");
	}
	tc_buf_printf(b, "tilec::peer_rank<%s>(); %s < ", bits, v);
	expr(G, s->u.loop.end);
	tc_buf_printf(b, "; %s += tilec::peer_count<%s, %lld>()", v, bits,
		      G->threads);
	long long step = 1;
	if (s->u.loop.step && (!tc_expr_const(s->u.loop.step, &step) || step != 1)) {
		tc_buf_puts(b, " * ");
		expr(G, s->u.loop.step);
	}
	tc_buf_puts(b, ") {\n");
	b->indent++;
	G->spread++;
	emit_body(G, s->u.loop.body);
	G->spread--;
	close_brace(G);
}

/* A tile_parallel loop that follows a register fragment's distribution:
 * each thread visits the indices it holds. */
static void
emit_anchored(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	const TcVar *v = s->u.loop.var;
	const char *d = dist_of(G, s->u.loop.anchor, s->u.loop.anchor_dim);
	const char *r = fresh(G, tc_fmt(G->a, "%s_r", v->name));
	tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++) {\n",
		      r, r, d, r);
	b->indent++;
	if (prints_var(s->u.loop.body, v))
		tc_buf_printf(b, "const int %s = %s::index(%s);\n", v->name, d, r);
	bool saved_block = G->block_level;
	G->block_level = false;
	G->anchors[G->nanchors++] = s;
	emit_body(G, s->u.loop.body);
	G->nanchors--;
	G->block_level = saved_block;
	close_brace(G);
}

/* ROLES: the producer warpgroup gives back registers and its first
 * thread runs the producer block; the program's threads take them and
 * run the consumer block.  Within the consumer, G->threads is the
 * program's count, as everywhere. */
static void
emit_roles(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	const char *roles = fresh(G, "roles");
	tc_buf_printf(b, "using %s = tilec::Roles<%lld, %d, %d>;\n", roles,
		      s->u.roles.threads, s->u.roles.producer_regs,
		      s->u.roles.consumer_regs);
	tc_buf_printf(b, "if (%s::producer()) {\n", roles);
	b->indent++;
	tc_buf_printf(b, "%s::producer_registers();\n", roles);
	tc_buf_printf(b, "if (%s::producer_thread()) {\n", roles);
	b->indent++;
	G->producer = true;
	emit_body(G, s->u.roles.producer);
	G->producer = false;
	close_brace(G);
	b->indent--;
	tc_buf_puts(b, "} else {\n");
	b->indent++;
	tc_buf_printf(b, "%s::consumer_registers();\n", roles);
	emit_body(G, s->u.roles.consumer);
	close_brace(G);
}

/* TILES: a persistent block's walk over the output tiles, from
 * blockIdx.x in steps of the grid; each tile binds the block vars as a
 * block of the grid the tiles were would (emit_rasterize's order within
 * each z). */
static void
emit_tiles(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	const TcKernel *k = G->k;
	static const char *const dims = "xyz";
	const char *ext[3] = { "1", "1", "1" };
	tc_buf_puts(b, "// The output tiles (the grid without persistence): this "
		    "block takes every\n// gridDim.x-th from blockIdx.x on.\n");
	for (int d = 0; d < 3; d++) {
		if (!k->tiles[d])
			continue;
		ext[d] = fresh(G, tc_fmt(G->a, "tiles_%c", dims[d]));
		tc_buf_printf(b, "const int %s = %s;\n", ext[d],
			      expr_text(G, k->tiles[d], TC_PREC_COMMA + 1));
	}
	const char *tile = fresh(G, "tile");
	const char *plane = fresh(G, "plane");
	tc_buf_printf(b, "const int %s = %s * %s;\n", plane, ext[0], ext[1]);
	if (k->tiles[2])
		tc_buf_printf(b, "for (int %s = blockIdx.x; %s < %s * %s; %s += "
			      "gridDim.x) {\n", tile, tile, plane, ext[2], tile);
	else
		tc_buf_printf(b, "for (int %s = blockIdx.x; %s < %s; %s += "
			      "gridDim.x) {\n", tile, tile, plane, tile);
	b->indent++;
	long long group = 0;
	if (k->rasterize)
		tc_expr_const(k->rasterize, &group);
	const char *linear = fresh(G, "linear");
	tc_buf_printf(b, "const int %s = %s %% %s;\n", linear, tile, plane);
	if (group > 1 && k->tiles[1]) {
		const char *size = fresh(G, "group_size");
		const char *first = fresh(G, "first_row");
		const char *rows = fresh(G, "group_rows");
		tc_buf_printf(b, "// tile_rasterize(%lld): groups of %lld rows "
			      "column by column.\n", group, group);
		tc_buf_printf(b, "const int %s = %lld * %s;\n", size, group, ext[0]);
		tc_buf_printf(b, "const int %s = %s / %s * %lld;\n", first, linear,
			      size, group);
		tc_buf_printf(b, "const int %s = min(%s - %s, %lld);\n", rows,
			      ext[1], first, group);
		if (k->block[0])
			tc_buf_printf(b, "const int %s = %s %% %s / %s;\n",
				      k->block[0]->name, linear, size, rows);
		if (k->block[1])
			tc_buf_printf(b, "const int %s = %s + %s %% %s %% %s;\n",
				      k->block[1]->name, first, linear, size, rows);
	} else {
		if (k->block[0])
			tc_buf_printf(b, "const int %s = %s %% %s;\n",
				      k->block[0]->name, linear, ext[0]);
		if (k->block[1])
			tc_buf_printf(b, "const int %s = %s / %s;\n",
				      k->block[1]->name, linear, ext[0]);
	}
	if (k->block[2])
		tc_buf_printf(b, "const int %s = %s / %s;\n", k->block[2]->name,
			      tile, plane);
	emit_body(G, s->u.tiles.body);
	close_brace(G);
}

/* PIPE_SELECT: `if (P.aligned && ...) { FAST } else { FALLBACK }`, no
 * else for an empty fallback; `TILEC_ALIGNED || ` first where an aligned
 * launch passes every test (select.launch_aligned). */
static void
emit_select(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	int n = s->u.select.plans.len;
	bool launch = s->u.select.launch_aligned;
	tc_buf_puts(b, launch ? (n > 1 ? "if (TILEC_ALIGNED || (" : "if (TILEC_ALIGNED || ") : "if (");
	for (int i = 0; i < n; i++)
		tc_buf_printf(b, "%s%s.aligned", i ? " && " : "",
			      ((const TcVar *)s->u.select.plans.items[i])->name);
	tc_buf_puts(b, launch && n > 1 ? ")) {\n" : ") {\n");
	b->indent++;
	emit_body(G, s->u.select.fast);
	if (s->u.select.fallback->u.block.body.len == 0) {
		close_brace(G);
		return;
	}
	b->indent--;
	tc_buf_puts(b, "} else {\n");
	b->indent++;
	emit_body(G, s->u.select.fallback);
	close_brace(G);
}

/* STAGE_BAR_INIT: `const tilec::StageBarriers<STAGES, THREADS>
 * NAME(tilec_smem + OFFSET);` and thread 0's init(). */
static void
emit_bars_init(Gpu *G, const TcStmt *s)
{
	long long tma = s->u.bars.full_arrivals - s->u.bars.copiers;
	tc_buf_printf(G->pr.out, "const tilec::StageBarriers<%d, %lld", s->u.bars.stages,
		      G->threads);
	if (tma > 0 || s->u.bars.copiers != G->threads)
		tc_buf_printf(G->pr.out, ", %lld", tma);
	if (s->u.bars.copiers != G->threads)
		tc_buf_printf(G->pr.out, ", %lld", s->u.bars.copiers);
	tc_buf_printf(G->pr.out, "> %s(tilec_smem + %lld);\nif (threadIdx.x == 0)\n\t%s.init();\n",
		      s->u.bars.var->name, s->u.bars.offset, s->u.bars.var->name);
}

/* STAGE_BAR_ARRIVE (`copied`: full, `read`: empty) and STAGE_BAR_WAIT
 * (`wait_full`, `wait_empty`). */
static void
emit_bar(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	bool wait = s->kind == TC_ST_STAGE_BAR_WAIT;
	tc_buf_printf(b, "%s.%s(", s->u.bar.bars->name,
		      wait ? (s->u.bar.full ? "wait_full" : "wait_empty") :
			     (s->u.bar.full ? "copied" : "read"));
	expr(G, s->u.bar.stage);
	if (wait) {
		tc_buf_puts(b, ", ");
		expr(G, s->u.bar.parity);
	}
	tc_buf_puts(b, ");\n");
}

/* A serial loop.  A tile_pipelined loop reaches here only without async
 * copies (expand_pipeline.c carries out the others): its copies run in
 * order, before the compute of the same iteration. */
static void
emit_for(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	if (s->u.loop.async_copies) {
		error(G, s->loc, "internal error: a pipelined loop with async "
		      "copies reached the %s backend unexpanded",
		      G->dialect->name);
		return;
	}
	if (s->u.loop.kind == TC_LOOP_PIPELINED && !G->t->cp_async)
		stmt_comment(G, s, ": its copies in order, not pipelined");
	tc_c_for(&G->pr, "int", s->u.loop.var->name, s->u.loop.begin,
		 s->u.loop.end, s->u.loop.step);
	tc_buf_puts(b, " {\n");
	b->indent++;
	emit_body(G, s->u.loop.body);
	close_brace(G);
}

/* STAGE_VIEW: `T *const VIEW = OF + STAGE * ELEMS;`, or for a shared
 * tile `T *const VIEW = OF_tile::stage(OF, STAGE);`. */
static void
emit_view(Gpu *G, const TcStmt *s)
{
	const TcVar *v = s->u.view.var;
	TcBuf *b = G->pr.out;
	tc_buf_printf(b, "%s *const %s = ", storage_type(G, v->dtype), v->name);
	smem_stage(G, s->u.view.of, s->u.view.stage);
	tc_buf_puts(b, ";\n");
}

/* A declaration: a scalar, a register fragment (an array of reg_type
 * over what this thread holds, of the storage type if it holds its
 * elements as stored) or a buffer in shared memory (a slice of
 * tilec_smem, each stage of a staged buffer after the other). */
static void
emit_decl(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	const TcVar *v = s->u.decl.var;
	if (v->kind != TC_VAR_BUFFER) {
		/* A local never assigned after its declaration is const. */
		bool fixed = v->kind == TC_VAR_LOCAL && !v->mutated && s->u.decl.init;
		tc_buf_printf(b, "%s%s %s", fixed ? "const " : "", value_type(v->dtype),
			      v->name);
		if (s->u.decl.init) {
			tc_buf_puts(b, " = ");
			expr(G, s->u.decl.init);
		}
		tc_buf_puts(b, ";\n");
		return;
	}
	if (v->computed)
		return; /* held nowhere: its gemm computes it (emit_mma_sr) */
	if (is_reg(v)) {
		if (s->loc.line > 0)
			stmt_comment(G, s, tc_fmt(G->a, ": registers, %s",
			v->rank == 2 ? tc_fmt(G->a, "%s x %s", dist_of(G, v, 0),
					      dist_of(G, v, 1)) :
			dist_of(G, v, 0)));
		const char *type = v->stored ? storage_type(G, v->dtype) :
				   reg_type(G, v->dtype);
		if (v->stored)
			tc_buf_printf(b, "tilec::Stored<%s, %s, %s> %s;\n", type,
				      dist_of(G, v, 0), dist_of(G, v, 1), v->name);
		else if (v->rank == 2)
			tc_buf_printf(b, "%s %s[%s::count][%s::count];\n", type,
				      v->name, dist_of(G, v, 0), dist_of(G, v, 1));
		else
			tc_buf_printf(b, "%s %s[%s::count];\n", type, v->name,
				      dist_of(G, v, 0));
		return;
	}
	stmt_comment(G, s, tc_fmt(G->a, ": shared memory%s%s",
		v->stages > 1 ? tc_fmt(G->a, ", %d stages", v->stages) : "",
		v->pad ? tc_fmt(G->a, ", rows padded to %lld", row_stride(v))
		: v->swizzle_rows ? tc_fmt(G->a, ", 16-byte chunks swizzled by groups "
					   "of %d rows for column reads", v->swizzle_rows)
		: v->swizzle ? ", 16-byte chunks swizzled" : ""));
	if (G->tile[v->index])
		shared_tile_type(G, v);
	tc_buf_printf(b, "%s *const %s = reinterpret_cast<%s *>(%s);\n",
		      storage_type(G, v->dtype), v->name, storage_type(G, v->dtype),
		      smem_at(G, v->smem_offset));
}

static void
emit_stmt(Gpu *G, const TcStmt *s)
{
	TcBuf *b = G->pr.out;
	if (s->note)
		tc_c_comment(&G->pr, s->note);
	switch (s->kind) {
	case TC_ST_BLOCK:
		if (s->u.block.cite)
			stmt_comment(G, s, NULL);
		tc_buf_puts(b, "{\n");
		b->indent++;
		emit_body(G, s);
		close_brace(G);
		break;
	case TC_ST_DECL:
		emit_decl(G, s);
		break;
	case TC_ST_ASSIGN:
		emit_assign(G, s);
		break;
	case TC_ST_FOR:
		if (s->u.loop.kind == TC_LOOP_PARALLEL) {
			stmt_comment(G, s, NULL);
			if (s->u.loop.anchor)
				emit_anchored(G, s);
			else if (s->u.loop.threads == TC_THREADS_SERIAL)
				emit_serial_parallel(G, s);
			else if (s->u.loop.threads == TC_THREADS_PEERS)
				emit_peers(G, s);
			else if (s->u.loop.threads == TC_THREADS_SPREAD)
				emit_spread(G, s);
			else
				error(G, s->loc, "internal error: parallel loop without "
				      "a thread mapping");
			break;
		}
		emit_for(G, s);
		break;
	case TC_ST_IF:
		if (s->u.cond.box && s->u.cond.els)
			tc_buf_puts(b, "// The loop's element tests at the corner of the tile "
				    "where they are tightest: where they hold there, they "
				    "hold for every element, and the loop runs without "
				    "them.\n");
		else if (s->u.cond.box)
			tc_buf_puts(b, "// The loop's element tests at the corner of the tile "
				    "where they are tightest: where they hold there, they "
				    "hold for every element and the loop changes nothing, so "
				    "it runs only where one fails there.\n");
		tc_buf_puts(b, "if (");
		expr(G, s->u.cond.cond);
		tc_buf_puts(b, ") {\n");
		b->indent++;
		emit_body(G, s->u.cond.then);
		b->indent--;
		if (s->u.cond.els) {
			tc_buf_puts(b, "} else {\n");
			b->indent++;
			emit_body(G, s->u.cond.els);
			b->indent--;
		}
		tc_buf_puts(b, "}\n");
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
	case TC_ST_ASYNC_COPY:
		if (s->loc.line > 0)
			stmt_comment(G, s, NULL);
		emit_copy(G, s);
		break;
	case TC_ST_COMMIT_GROUP:
		tc_buf_puts(b, "tilec::cp_async_commit();\n");
		break;
	case TC_ST_WAIT_GROUP:
		tc_buf_printf(b, "tilec::cp_async_wait<%d>();\n", s->u.wait.pending);
		break;
	case TC_ST_WGMMA_WAIT:
		tc_buf_printf(b, "tilec::wgmma_wait<%d>(%s);\n", s->u.wait.pending,
			      s->u.wait.acc->name);
		break;
	case TC_ST_STAGE_VIEW:
		emit_view(G, s);
		break;
	case TC_ST_PIPE_SELECT:
		emit_select(G, s);
		break;
	case TC_ST_ROLES:
		emit_roles(G, s);
		break;
	case TC_ST_TILES:
		emit_tiles(G, s);
		break;
	case TC_ST_COPY_PLAN:
		if (s->u.plan.tmap)
			tma_setup(G, s->u.plan.copy, s->u.plan.tmap, s->u.plan.var->name);
		else
			g2s_setup(G, s->u.plan.copy, s->u.plan.var->name);
		break;
	case TC_ST_STAGE_BAR_INIT:
		emit_bars_init(G, s);
		break;
	case TC_ST_STAGE_BAR_ARRIVE:
	case TC_ST_STAGE_BAR_WAIT:
		emit_bar(G, s);
		break;
	case TC_ST_GEMM:
		stmt_comment(G, s, NULL);
		emit_gemm(G, s);
		break;
	case TC_ST_FILL:
		stmt_comment(G, s, NULL);
		emit_fill(G, s);
		break;
	case TC_ST_REDUCE:
		stmt_comment(G, s, NULL);
		emit_reduce(G, s);
		break;
	case TC_ST_REDUCE_ALL:
		stmt_comment(G, s, NULL);
		emit_reduce_all(G, s);
		break;
	case TC_ST_ARG_REDUCE:
		stmt_comment(G, s, NULL);
		emit_arg_reduce(G, s);
		break;
	case TC_ST_BARRIER:
		if (s->u.barrier.threads)
			tc_buf_printf(b, "tilec::sync_threads<%lld>();\n",
				      s->u.barrier.threads);
		else
			tc_buf_puts(b, "__syncthreads();\n");
		break;
	default:
		tc_unreachable();
	}
}

/* --- The kernel ----------------------------------------------------------------------- */

/* Whether operand v of statement s is not packed i4, which the helpers
 * of `what` do not read or write (a located error if it is).  i4 tiles
 * are copied (unpacked), read, written and reduced element by element;
 * arg-reductions, top-k and gemm take them once copied to a wider type. */
static bool
i4_operand(Gpu *G, const TcStmt *s, const char *what, const TcVar *v)
{
	if (!packed_i4(v))
		return true;
	error(G, s->loc, "the %s backend does not take i4 %s '%s' in %s yet; "
	      "copy it to a wider type first", G->dialect->name,
	      v->kind == TC_VAR_TENSOR ? "tensor" : "tile", v->name, what);
	return false;
}

/* Element types the backend cannot store, i4 operands of the tile
 * operations that do not take them, and (where the dialect checks them)
 * atomic additions into tensors the helpers cannot add to atomically, are
 * located errors. */
static bool
dtypes_supported(Gpu *G, const TcStmt *s)
{
	if (!s) {
		for (int i = 0; i < G->k->vars.len; i++) {
			const TcVar *v = G->k->vars.items[i];
			if ((v->kind == TC_VAR_TENSOR || v->kind == TC_VAR_BUFFER) &&
			    !storage_type(G, v->dtype)) {
				error(G, v->loc, "the %s backend does not support %s "
				      "%s yet ('%s')", G->dialect->name,
				      tc_dtype_name(v->dtype),
				      v->kind == TC_VAR_TENSOR ? "tensors" : "buffers",
				      v->name);
				return false;
			}
		}
		return dtypes_supported(G, G->k->body);
	}
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!dtypes_supported(G, s->u.block.body.items[i]))
				return false;
		return true;
	case TC_ST_FOR: return dtypes_supported(G, s->u.loop.body);
	case TC_ST_IF:
		return dtypes_supported(G, s->u.cond.then) &&
		       (!s->u.cond.els || dtypes_supported(G, s->u.cond.els));
	case TC_ST_PIPE_SELECT:
		return dtypes_supported(G, s->u.select.fast) &&
		       dtypes_supported(G, s->u.select.fallback);
	case TC_ST_ROLES:
		return dtypes_supported(G, s->u.roles.producer) &&
		       dtypes_supported(G, s->u.roles.consumer);
	case TC_ST_ARG_REDUCE:
		return i4_operand(G, s, s->u.arg_reduce.topk ? "tile_topk" :
				  "tile_reduce_argmax/argmin", s->u.arg_reduce.src.var) &&
		       i4_operand(G, s, "tile_topk", s->u.arg_reduce.dst.var);
	case TC_ST_GEMM:
		return i4_operand(G, s, "tile_gemm", s->u.gemm.a.var) &&
		       i4_operand(G, s, "tile_gemm", s->u.gemm.b.var) &&
		       i4_operand(G, s, "tile_gemm", s->u.gemm.c.var);
	case TC_ST_TILES:
		return dtypes_supported(G, s->u.tiles.body);
	case TC_ST_ATOMIC_ADD: {
		TcDtype t = s->u.copy.dst.var->dtype;
		bool fp8 = t == TC_DT_FP8E4M3 || t == TC_DT_FP8E5M2;
		if (t != TC_DT_I4 && !fp8 && (!G->dialect->atomic_checked || t == TC_DT_F32 ||
			     t == TC_DT_F64 || t == TC_DT_I32 || narrow_float(t)))
			return true;
		error(G, s->loc, "the %s backend cannot add to %s tensors "
		      "atomically ('%s')", G->dialect->name, tc_dtype_name(t),
		      s->u.copy.dst.var->name);
		return false;
	}
	default:
		return true;
	}
}

/* Helper headers one standalone file carries, at most. */
enum { MAX_HELPERS = 4 };

/* Print the embedded helper header `path` (e.g. "cuda/tilec_cuda.cuh")
 * inline, for --standalone: its text without the include guard, and in
 * place of each `#include "tilec/NAME"` line the header NAME, printed the
 * same way where it stands (the helpers shared by the GPU dialects,
 * gpu/tilec_gpu.h).  `inlined` lists the headers printed so far; each is
 * printed once. */
static void
inline_helpers(Gpu *G, const char *path, const char **inlined, int *ninlined)
{
	static const char guard[] = "#pragma once\n";
	static const char include[] = "#include \"tilec/";
	for (int i = 0; i < *ninlined; i++)
		if (strcmp(inlined[i], path) == 0)
			return;
	tc_assert(*ninlined < MAX_HELPERS);
	inlined[(*ninlined)++] = path;
	const TcEmbedded *t = tc_embedded_find(path);
	tc_assert(t);
	for (const char *line = t->text; *line;) {
		const char *nl = strchr(line, '\n');
		int len = nl ? (int)(nl - line) + 1 : (int)strlen(line);
		if (strncmp(line, include, sizeof include - 1) == 0) {
			const char *name = line + sizeof include - 1;
			const char *quote = strchr(name, '"');
			tc_assert(quote && quote < line + len);
			inline_helpers(G, tc_fmt(G->a, "%.*s",
						 (int)(quote - name), name),
				       inlined, ninlined);
		} else if (strncmp(line, guard, sizeof guard - 1) != 0) {
			tc_buf_printf(G->pr.out, "%.*s", len, line);
		}
		line += len;
	}
}

/* The file's header for one kernel.  With --standalone the helpers are
 * inlined once per output, before its first kernel (`first`): the others
 * of a multi-kernel file share them. */
static void
emit_header(Gpu *G, bool first)
{
	TcBuf *b = G->pr.out;
	/* Wrapped to the width (a long path, many tunables). */
	tc_c_comment(&G->pr, tc_fmt(G->a, "Generated by tilec %s from %s, kernel "
				    "%s, for %s %s.", TILEC_VERSION,
				    G->prog->path, G->k->name, G->t->name,
				    G->t->arch));
	if (G->prog->tunables.len) {
		TcBuf tun;
		tc_buf_init(&tun);
		tc_buf_puts(&tun, "Tunables:");
		for (int i = 0; i < G->prog->tunables.len; i++) {
			const TcVar *v = G->prog->tunables.items[i];
			tc_buf_printf(&tun, " %s=%lld", v->name, v->value);
		}
		tc_buf_puts(&tun, ".");
		tc_c_comment(&G->pr, tun.data);
		tc_buf_free(&tun);
	}
	tc_buf_printf(b, "// %lld threads", G->threads);
	if (G->k->producer_threads)
		tc_buf_printf(b, " and a producer warpgroup of %lld",
			      G->k->producer_threads);
	if (G->dialect->count_warps) {
		int width = G->t->warp_size;
		long long warps = (G->threads + width - 1) / width;
		tc_buf_printf(b, " (%lld %s%s of %d)", warps, G->dialect->warp,
			      warps == 1 ? "" : "s", width);
	}
	tc_buf_printf(b, "; %lld bytes of shared memory.\n", G->k->smem_bytes);
	if (G->k->aligned.len) {
		TcBuf names;
		tc_buf_init(&names);
		for (int i = 0; i < G->k->aligned.len; i++) {
			const TcVar *v = G->k->aligned.items[i];
			tc_buf_printf(&names, "%s%s", i == 0 ? "" : i + 1 < G->k->aligned.len ? ", " : " and ",
				      v->name);
		}
		tc_c_comment(&G->pr, tc_fmt(G->a, "TILEC_ALIGNED is 1 in the runtime's build for launches "
					    "whose %s %s on 16 bytes and %s rows of whole 16-byte "
					    "vectors%s: the copies that name it skip their alignment "
					    "tests there.", names.data,
					    G->k->aligned.len > 1 ? "start" : "starts",
					    G->k->aligned.len > 1 ? "have" : "has",
					    G->k->tmaps.len ? " (and whose tensor maps were built)" : ""));
		tc_buf_free(&names);
	}
	/* The wgmma helpers come with the kernels that use them; a
	 * standalone file for an arch with wgmma carries them for all. */
	if (G->opt->standalone && first) {
		const char *inlined[MAX_HELPERS];
		int ninlined = 0;
		tc_buf_puts(b, "\n");
		inline_helpers(G, G->dialect->helpers, inlined, &ninlined);
		if (G->t->wgmma)
			inline_helpers(G, "cuda/tilec_sm90.cuh", inlined, &ninlined);
	} else if (!G->opt->standalone) {
		tc_buf_printf(b, "#include \"%s\"\n", G->dialect->helpers_include);
		if (uses_sm90(G))
			tc_buf_puts(b, "#include \"tilec/cuda/tilec_sm90.cuh\"\n");
	}
}

/* Whether identifier `name` occurs in text as a whole token. */
static bool
names(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text; (p = strstr(p, name)); p += n) {
		bool before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		bool after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return true;
	}
	return false;
}

/* The kernel's signature; `body` is the kernel's printed body: a scalar
 * parameter it never names (a tensor's extent the kernel needs no bound
 * on) is [[maybe_unused]], part of the kernel ABI all the same. */
static void
emit_signature(Gpu *G, const char *body)
{
	TcBuf *b = G->pr.out;
	/* With a producer warpgroup, the blocks per SM the registers
	 * were split for (the consumers' are what the producer gives
	 * back). */
	if (G->k->producer_threads)
		tc_buf_printf(b, "\nextern \"C\" __global__ void __launch_bounds__(%lld, %d)\n%s(",
			      G->threads + G->k->producer_threads,
			      G->k->producer_blocks, G->k->name);
	else
		tc_buf_printf(b, "\nextern \"C\" __global__ void __launch_bounds__(%lld)\n%s(",
			      G->threads, G->k->name);
	const TcAbi *abi = tc_abi_of(G->a, G->k, G->t);
	for (int i = 0; i < abi->nparams; i++) {
		const TcAbiParam *p = &abi->params[i];
		const TcVar *v = p->var;
		if (i)
			tc_buf_puts(b, ", ");
		if (p->tensor)
			tc_buf_printf(b, "%s%s *__restrict__ %s",
				      v->is_const ? "const " : "",
				      storage_type(G, v->dtype), v->name);
		else
			tc_buf_printf(b, "%s%s %s", names(body, v->name) ? "" :
				      "[[maybe_unused]] ", value_type(p->pass), v->name);
	}
	for (int i = 0; i < abi->ntmaps; i++)
		tc_buf_printf(b, ",\n\tconst __grid_constant__ tilec::TensorMap %s",
			      abi->tmaps[i]->name);
	tc_buf_puts(b, ")\n{\n");
}

/* tile_rasterize(rows): launch order walks groups of `rows` block rows
 * column by column, so blocks running together share operands in L2. */
static void
emit_rasterize(Gpu *G, long long group)
{
	TcBuf *b = G->pr.out;
	const char *linear = fresh(G, "linear"), *size = fresh(G, "group_size");
	const char *first = fresh(G, "first_row"), *rows = fresh(G, "group_rows");
	tc_buf_printf(b, "// tile_rasterize(%lld): blocks visit groups of %lld rows "
		      "column by column.\n", group, group);
	tc_buf_printf(b, "const int %s = blockIdx.y * gridDim.x + blockIdx.x;\n",
		      linear);
	tc_buf_printf(b, "const int %s = %lld * gridDim.x;\n", size, group);
	tc_buf_printf(b, "const int %s = %s / %s * %lld;\n", first, linear, size,
		      group);
	tc_buf_printf(b, "const int %s = min((int)gridDim.y - %s, %lld);\n", rows,
		      first, group);
	if (G->k->block[0])
		tc_buf_printf(b, "const int %s = %s %% %s / %s;\n",
			      G->k->block[0]->name, linear, size, rows);
	if (G->k->block[1])
		tc_buf_printf(b, "const int %s = %s + %s %% %s %% %s;\n",
			      G->k->block[1]->name, first, linear, size, rows);
	if (G->k->block[2])
		tc_buf_printf(b, "const int %s = blockIdx.z;\n", G->k->block[2]->name);
}

static void
emit_prologue(Gpu *G)
{
	TcBuf *b = G->pr.out;
	if (G->prog->tunables.len) {
		tc_buf_puts(b, "enum {");
		for (int i = 0; i < G->prog->tunables.len; i++) {
			const TcVar *v = G->prog->tunables.items[i];
			tc_buf_printf(b, "%s %s = %lld", i ? "," : "", v->name,
				      v->value);
		}
		tc_buf_puts(b, " };\n");
	}
	int width = G->unit;
	/* wgmma's swizzled tiles start 1024-byte aligned (smem.c). */
	if (G->k->smem_bytes)
		tc_buf_printf(b, "extern __shared__ %s unsigned char tilec_smem[];\n",
			      program_uses_wgmma(G) ? "__align__(1024)" :
			      G->dialect->smem_align);
	if (G->k->smem_bytes && uses_sm90(G))
		tc_buf_puts(b, "tilec::require_aligned<1024>(tilec_smem);\n");
	if (G->warps_m && G->warps_n == 1)
		tc_buf_printf(b, "const int %s = threadIdx.x / %d, %s = 0;\n",
			      G->warp_m, width, G->warp_n);
	else if (G->warps_m)
		tc_buf_printf(b, "const int %s = threadIdx.x / %d / %d, "
			      "%s = threadIdx.x / %d %% %d;\n", G->warp_m, width,
			      G->warps_n, G->warp_n, width, G->warps_n);
	/* One alias per distribution class of the register fragments. */
	for (int i = 0; i < G->k->vars.len; i++) {
		const TcVar *v = G->k->vars.items[i];
		if (!is_reg(v))
			continue;
		for (int d = 0; d < v->rank; d++) {
			const TcDist *t = &v->layout.dim[d];
			if (G->dist[t->id])
				continue;
			const char *name = fresh(G, tc_fmt(G->a, "%s_%s", v->name,
							   t->axis ? "cols" : "rows"));
			G->dist[t->id] = name;
			if (is_mma_layout(G, t->kind))
				tc_buf_printf(b, "using %s = tilec::%s<%d, %d, %d, %d>;\n",
					      name, t->kind == TC_LAYOUT_WGMMA ?
					      "Wgmma" : G->dialect->mma_dist,
					      t->axis, t->tiles, v->layout.warps_m,
					      v->layout.warps_n);
			else
				tc_buf_printf(b, "using %s = tilec::Blocked<%d, %d, %d, %d, %d>;\n",
					      name, t->axis, t->count, t->tr, t->tc,
					      t->vec);
		}
	}
	/* A persistent kernel's TILES statements bind the block vars. */
	if (G->k->persistent)
		return;
	long long group = 0;
	if (G->k->rasterize)
		tc_expr_const(G->k->rasterize, &group);
	if (group > 1 && G->k->grid[1]) {
		emit_rasterize(G, group);
		return;
	}
	static const char *const dims = "xyz";
	for (int d = 0; d < 3; d++)
		if (G->k->block[d])
			tc_buf_printf(b, "const int %s = blockIdx.%c;\n",
				      G->k->block[d]->name, dims[d]);
}

/* What find_tiles collects: the staged buffer of each stage view, and
 * the gemm operands read by the matrix-instruction helpers. */
typedef struct Tiles {
	Gpu *G;
	const TcVar **of;   /* by var index: a stage view's buffer */
	bool *operand;      /* by var index: a gemm helper reads it */
} Tiles;

static TcVisit
find_tiles(void *ctx, const TcStmt *s)
{
	Tiles *T = ctx;
	if (s->kind == TC_ST_STAGE_VIEW)
		T->of[s->u.view.var->index] = s->u.view.of;
	if (s->kind == TC_ST_GEMM && T->G->t->mma &&
	    s->u.gemm.c.var->layout.kind == T->G->t->mma->layout) {
		if (!is_reg(s->u.gemm.a.var))
			T->operand[s->u.gemm.a.var->index] = true;
		T->operand[s->u.gemm.b.var->index] = true;
	}
	return TC_VISIT_INTO;
}

/* Name the SharedTile type of each shared buffer the gemm helpers read
 * (directly or through a stage view): `As_tile` (G->tile). */
static void
name_tiles(Gpu *G)
{
	size_t n = (size_t)G->k->vars.len + 1;
	Tiles T = { G, tc_alloc(G->a, n * sizeof *T.of),
		    tc_alloc(G->a, n * sizeof *T.operand) };
	G->tile = tc_alloc(G->a, n * sizeof *G->tile);
	TcVisitor vis = { .stmt = find_tiles, .ctx = &T };
	tc_stmt_visit(G->k->body, &vis);
	for (int i = 0; i < G->k->vars.len; i++) {
		const TcVar *v = G->k->vars.items[i];
		const TcVar *buf = T.of[i] ? T.of[i] : v;
		if (!T.operand[i] || G->tile[buf->index])
			continue;
		G->tile[buf->index] = fresh(G, tc_fmt(G->a, "%s_tile", buf->name));
	}
	for (int i = 0; i < G->k->vars.len; i++)
		if (T.of[i])
			G->tile[i] = G->tile[T.of[i]->index];
}

bool
tc_gpu_emit(const TcGpuDialect *g, const TcProgram *p, const TcKernel *k,
	    const TcTarget *t, const TcOptions *opt, TcBuf *out, TcDiags *d)
{
	TcArena *a = tc_arena_new();
	Gpu G = {
		.pr = { .out = out, .hooks = &gpu_hooks, .width = TC_GPU_WIDTH },
		.dialect = g, .a = a, .prog = p, .k = k, .t = t, .opt = opt, .d = d,
		.threads = tc_abi_threads(k, t), .block_level = true,
		.unit = t->warp_size,
	};
	G.pr.ctx = &G;
	G.nthreads = k->threads && t->simt ? expr_text(&G, k->threads, TC_PREC_COMMA + 1)
					   : tc_fmt(a, "%lld", G.threads);
	int nclass = 0;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind == TC_VAR_BUFFER && is_mma_layout(&G, v->layout.kind)) {
			G.warps_m = v->layout.warps_m;
			G.warps_n = v->layout.warps_n;
			if (v->layout.kind == TC_LAYOUT_WGMMA)
				G.unit = t->warp_size * t->wgmma->group_warps;
		}
		for (int j = 0; is_reg(v) && j < v->rank; j++)
			if (v->layout.dim[j].id >= nclass)
				nclass = v->layout.dim[j].id + 1;
	}
	G.dist = tc_alloc(a, sizeof(char *) * (size_t)(nclass + 1));
	G.e = fresh(&G, "e");
	for (int i = 0; i < TC_MAX_RANK; i++)
		G.tix[i] = fresh(&G, tile_idx[i]);
	G.row = fresh(&G, "row");
	G.col = fresh(&G, "col");
	G.r0 = fresh(&G, "r0");
	G.r1 = fresh(&G, "r1");
	G.o = fresh(&G, "o");
	G.kk = fresh(&G, "kk");
	const char *cell = uses_wgmma(&G) ? "group" : g->warp;
	G.warp_m = fresh(&G, tc_fmt(a, "%s_m", cell));
	G.warp_n = fresh(&G, tc_fmt(a, "%s_n", cell));
	name_tiles(&G);
	if (names_printable(&G) && dtypes_supported(&G, NULL)) {
		bool first = out->len == 0;
		if (!first)
			tc_buf_puts(out, "\n");
		emit_header(&G, first);
		/* The body first, into a buffer of its own: the signature
		 * says which parameters it names. */
		TcBuf body;
		tc_buf_init(&body);
		body.indent = 1;
		G.pr.out = &body;
		emit_prologue(&G);
		emit_body(&G, k->body);
		G.pr.out = out;
		size_t code = out->len;
		emit_signature(&G, body.data ? body.data : "");
		tc_buf_append(out, body.data ? body.data : "", body.len);
		tc_buf_free(&body);
		tc_buf_puts(out, "}\n");
		tc_wrap_code(out, code, TC_GPU_WIDTH);
	}
	tc_arena_free(a);
	return !G.failed;
}
