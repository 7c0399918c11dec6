/*
 * cuda.c - the CUDA C++ backend.
 *
 * Input: a program scheduled by the GPU passes (layout, pipeline, smem,
 * barrier).  Output: one `extern "C" __global__` kernel per tile kernel,
 * calling the helpers of templates/cuda/tilec_cuda.cuh.
 *
 * How the block-serial program becomes CUDA (docs/backend-cuda.md):
 *   - every thread runs the kernel body; scalars at block level are
 *     computed by all threads alike (uniform);
 *   - buffers in shared memory are slices of one dynamic shared array, at
 *     the offsets smem.c chose; MMA fragments are per-thread register
 *     arrays acc[tiles_m][tiles_n][4];
 *   - tile operations are cooperative: all threads share the elements, or,
 *     for MMA fragments, each thread handles the elements it holds;
 *   - a tile_parallel nest spreads its iterations over the threads, unless
 *     layout.c anchored it to an MMA fragment: then each thread visits the
 *     rows and columns it holds (a row loop runs in the four lanes and the
 *     warps that share the row; its writes to shared memory are done by
 *     one of them);
 *   - stores at block level to shared or global memory are done by thread
 *     0; BARRIER statements become __syncthreads();
 *   - tile_pipelined loops with async copies issue them STAGES - 1
 *     iterations ahead with cp.async, waiting and synchronizing once per
 *     iteration.
 * The output names things after the tile program and comments each tile
 * operation with its source line.
 */
#include "cfamily.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Cuda {
	TcCPrinter pr;          /* the printer (pr.out is the output) */
	TcArena *a;             /* scratch for names and snippets */
	const TcProgram *prog;  /* the program */
	const TcKernel *k;      /* the kernel being printed */
	const TcTarget *t;      /* the target */
	const TcOptions *opt;   /* options */
	TcDiags *d;             /* errors */
	long long threads;      /* threads per block */
	int warps_m, warps_n;   /* the MMA warp grid, 0 if no MMA fragment */
	const char **dist;      /* per distribution class id: its C++ alias */
	/* Anchored loops being printed, outermost first: each runs over the
	 * indices its class gives this thread. */
	const TcStmt *anchors[TC_MAX_RANK];
	int nanchors;
	int spread;             /* depth of spread parallel loops */
	bool block_level;       /* not inside any parallel loop */
	/* The pipelined loop being printed: its stage index, for references
	 * to staged buffers. */
	const char *stage;      /* e.g. "k_stage", or NULL */
	bool failed;            /* an error was reported */
	/* The emitter's own names (loop counters, tile indices, ...), each
	 * made distinct from every name of the program (fresh()). */
	const char *e, *tix[TC_MAX_RANK], *row, *col, *r0, *r1, *o;
	const char *warp_m, *warp_n;
} Cuda;

TC_PRINTF(3, 4)
static void
error(Cuda *C, TcLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(C->d, TC_ERROR, loc, fmt, ap);
	va_end(ap);
	C->failed = true;
}

/* Is `name` a name of the program (a var of the kernel or a tunable)? */
static bool
name_taken(const Cuda *C, const char *name)
{
	for (int i = 0; i < C->k->vars.len; i++)
		if (strcmp(((const TcVar *)C->k->vars.items[i])->name, name) == 0)
			return true;
	for (int i = 0; i < C->prog->tunables.len; i++)
		if (strcmp(((const TcVar *)C->prog->tunables.items[i])->name, name) == 0)
			return true;
	return false;
}

/* `base`, or base with underscores appended until no name of the program
 * has it: generated names never shadow the program's. */
static const char *
fresh(Cuda *C, const char *base)
{
	const char *n = base;
	while (name_taken(C, n))
		n = tc_fmt(C->a, "%s_", n);
	return n;
}

static long long
ext(const TcVar *v, int i)
{
	long long n = 0;
	tc_expr_const(v->shape[i], &n);
	return n;
}

static long long
count(const TcVar *v)
{
	long long n = 1;
	for (int i = 0; i < v->rank; i++)
		n *= ext(v, i);
	return n;
}

static bool
is_reg(const TcVar *v)
{
	return v->kind == TC_VAR_BUFFER && (v->layout.kind == TC_LAYOUT_MMA ||
					    v->layout.kind == TC_LAYOUT_BLOCKED);
}

/* The alias of the distribution of register fragment v's dim d. */
static const char *
dist_of(Cuda *C, const TcVar *v, int d)
{
	return C->dist[v->layout.dim[d].id];
}

/* --- Types -------------------------------------------------------------------- */

/* The C++ type that stores a dtype in memory. */
static const char *
storage_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F64: return "double";
	case TC_DT_F32: return "float";
	case TC_DT_F16: return "__half";
	case TC_DT_BF16: return "__nv_bfloat16";
	case TC_DT_I64: return "long long";
	case TC_DT_I32: return "int";
	case TC_DT_I8: return "signed char";
	case TC_DT_U8: return "unsigned char";
	case TC_DT_BOOL: return "bool";
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

static bool
narrow_float(TcDtype t)
{
	return t == TC_DT_F16 || t == TC_DT_BF16;
}

static const char *
func_name(TcFunc fn, TcDtype t)
{
	(void)t;
	switch (fn) {
	case TC_FN_CEILDIV: return "tilec::ceildiv";
	case TC_FN_MIN: return "min";
	case TC_FN_MAX: return "max";
	default: return tc_func_name(fn);
	}
}

/* --- Element references ------------------------------------------------------------ */

/* Elements per row of a buffer in shared memory, padding included. */
static long long
row_stride(const TcVar *v)
{
	return ext(v, v->rank - 1) + v->pad;
}

/* Elements in one stage of a staged buffer. */
static long long
stage_elems(const TcVar *v)
{
	long long n = row_stride(v);
	for (int i = 0; i < v->rank - 1; i++)
		n *= ext(v, i);
	return n;
}

/* The base of a buffer in shared memory: its name, or name + stage. */
static void
smem_base(Cuda *C, const TcVar *v)
{
	if (v->stages > 1 && C->stage)
		tc_buf_printf(C->pr.out, "(%s + %s * %lld)", v->name, C->stage,
			      stage_elems(v));
	else
		tc_buf_puts(C->pr.out, v->name);
}

/* Offset of element idx[] of a shared buffer: row-major, the last extent
 * padded: ((i0 * e1 + i1) * e2p + i2). */
static void
smem_offset(Cuda *C, const TcVar *v, TcExpr *const *idx)
{
	TcBuf *b = C->pr.out;
	for (int i = 0; i < v->rank - 2; i++)
		tc_buf_puts(b, "(");
	for (int i = 0; i < v->rank; i++) {
		if (i == 0) {
			tc_c_expr_prec(&C->pr, idx[0], v->rank > 1 ?
				       tc_binop_prec(TC_OP_MUL) : TC_PREC_COMMA + 1);
			continue;
		}
		long long stride = i == v->rank - 1 ? row_stride(v) : ext(v, i);
		tc_buf_printf(b, " * %lld + ", stride);
		tc_c_expr_prec(&C->pr, idx[i], tc_binop_prec(TC_OP_ADD) + 1);
		if (i < v->rank - 1)
			tc_buf_puts(b, ")");
	}
}

/* Offset of tensor element idx[]: (size_t) row-major over its shape. */
static void
tensor_offset(Cuda *C, const TcVar *v, TcExpr *const *idx)
{
	TcBuf *b = C->pr.out;
	for (int i = 0; i < v->rank - 1; i++)
		tc_buf_puts(b, "(");
	for (int i = 0; i < v->rank; i++) {
		if (i == 0) {
			if (v->rank > 1)
				tc_buf_puts(b, "(size_t)");
			tc_c_expr_prec(&C->pr, idx[0], v->rank > 1 ?
				       TC_PREC_UNARY : TC_PREC_COMMA + 1);
			continue;
		}
		tc_buf_puts(b, " * ");
		tc_c_expr_prec(&C->pr, v->shape[i], tc_binop_prec(TC_OP_MUL) + 1);
		tc_buf_puts(b, " + ");
		tc_c_expr_prec(&C->pr, idx[i], tc_binop_prec(TC_OP_ADD) + 1);
		tc_buf_puts(b, ")");
	}
}

/* An element F[i][j] of a register fragment inside the loops anchored on
 * its dims: F[i_r][j_r], the loops' counters. */
static void
reg_element(Cuda *C, const TcVar *v, TcExpr *const *idx)
{
	tc_buf_puts(C->pr.out, v->name);
	for (int d = 0; d < v->rank; d++) {
		const TcVar *lv = idx[d]->kind == TC_EX_VAR ? idx[d]->u.var : NULL;
		bool found = false;
		for (int i = 0; i < C->nanchors && lv; i++)
			found |= C->anchors[i]->u.loop.var == lv;
		if (!found) {
			error(C, idx[d]->loc, "internal error: element of register "
			      "fragment '%s' outside the loops that own it", v->name);
			return;
		}
		tc_buf_printf(C->pr.out, "[%s]",
			      fresh(C, tc_fmt(C->a, "%s_r", lv->name)));
	}
}

/* The element as an lvalue in its storage type. */
static void
element_ref(Cuda *C, const TcVar *v, TcExpr *const *idx)
{
	if (v->kind == TC_VAR_TENSOR) {
		tc_buf_printf(C->pr.out, "%s[", v->name);
		tensor_offset(C, v, idx);
		tc_buf_puts(C->pr.out, "]");
	} else if (is_reg(v)) {
		reg_element(C, v, idx);
	} else {
		smem_base(C, v);
		tc_buf_puts(C->pr.out, "[");
		smem_offset(C, v, idx);
		tc_buf_puts(C->pr.out, "]");
	}
}

static void
hook_load(TcCPrinter *pr, const TcExpr *e)
{
	Cuda *C = pr->ctx;
	const TcVar *v = e->u.load.var;
	bool wrap = narrow_float(v->dtype) && !is_reg(v);
	if (wrap)
		tc_buf_puts(pr->out, "tilec::to_float(");
	element_ref(C, v, e->u.load.idx);
	if (wrap)
		tc_buf_puts(pr->out, ")");
}

static bool
hook_convert(TcCPrinter *pr, const TcExpr *value, TcDtype t)
{
	if (!narrow_float(t))
		return false;
	/* Round through the narrow type; the value stays a float. */
	tc_buf_printf(pr->out, "tilec::to_float(tilec::from_float<%s>(",
		      storage_type(t));
	tc_c_expr(pr, value);
	tc_buf_puts(pr->out, "))");
	return true;
}

static const TcCHooks cuda_hooks = {
	.value_type = value_type,
	.func_name = func_name,
	.load = hook_load,
	.convert = hook_convert,
};

static void
expr(Cuda *C, const TcExpr *e)
{
	tc_c_expr(&C->pr, e);
}

/* Store `value` (a float-typed expression printed by print_value) into the
 * element, converting to the storage type. */
static void
store(Cuda *C, const TcVar *v, TcExpr *const *idx, const TcExpr *value)
{
	TcBuf *b = C->pr.out;
	element_ref(C, v, idx);
	tc_buf_puts(b, " = ");
	if (narrow_float(v->dtype) && !is_reg(v)) {
		tc_buf_printf(b, "tilec::from_float<%s>(", storage_type(v->dtype));
		expr(C, value);
		tc_buf_puts(b, ")");
	} else if (narrow_float(v->dtype)) {
		/* Registers hold floats; round them to the fragment's type. */
		tc_buf_printf(b, "tilec::to_float(tilec::from_float<%s>(",
			      storage_type(v->dtype));
		expr(C, value);
		tc_buf_puts(b, "))");
	} else {
		expr(C, value);
	}
	tc_buf_puts(b, ";\n");
}

/* --- Comments ---------------------------------------------------------------------- */

static void
stmt_comment(Cuda *C, const TcStmt *s, const char *extra)
{
	char *snip = tc_c_source_snippet(C->a, C->prog->text, s->loc);
	if (extra)
		snip = tc_fmt(C->a, "%s%s", snip ? snip : "", extra);
	tc_c_loc_comment(&C->pr, s->loc, snip);
}

/* --- Cooperative element loops --------------------------------------------------------
 * A loop over every element of a tile shape, spread over the block's threads:
 *   for (int e = threadIdx.x; e < N; e += THREADS) { const int t0 = ..., t1 = ...; */

static const char *const tile_idx[TC_MAX_RANK] = {
	"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"
};

static void
spread_loop_open(Cuda *C, const TcVar *shape)
{
	TcBuf *b = C->pr.out;
	long long total = count(shape);
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %lld) {\n",
		      C->e, C->e, total, C->e, C->threads);
	b->indent++;
	long long inner = total;
	tc_buf_puts(b, "const int ");
	for (int i = 0; i < shape->rank; i++) {
		inner /= ext(shape, i);
		if (i)
			tc_buf_puts(b, ", ");
		if (i == 0 && shape->rank == 1)
			tc_buf_printf(b, "%s = %s", C->tix[i], C->e);
		else if (i == 0)
			tc_buf_printf(b, "%s = %s / %lld", C->tix[i], C->e, inner);
		else if (i == shape->rank - 1)
			tc_buf_printf(b, "%s = %s %% %lld", C->tix[i], C->e, ext(shape, i));
		else
			tc_buf_printf(b, "%s = %s / %lld %% %lld", C->tix[i], C->e, inner,
				      ext(shape, i));
	}
	tc_buf_puts(b, ";\n");
}

/* Expressions naming t0.. as IR: variables for the tile indices. */
typedef struct TileIdx {
	TcVar vars[TC_MAX_RANK]; /* t0, t1, ... as LOCAL i32 vars */
	TcExpr *e[TC_MAX_RANK];  /* VAR expressions of them */
} TileIdx;

static void
tile_idx_init(Cuda *C, TileIdx *ti)
{
	for (int i = 0; i < TC_MAX_RANK; i++) {
		memset(&ti->vars[i], 0, sizeof ti->vars[i]);
		ti->vars[i].kind = TC_VAR_LOCAL;
		ti->vars[i].name = C->tix[i];
		ti->vars[i].dtype = TC_DT_I32;
		ti->e[i] = tc_expr_var(C->a, &ti->vars[i], (TcLoc){ 0 });
	}
}

/* The indices into r's var of tile element (t0, t1, ...): origin plus the
 * tile index on the covered dims. */
static void
region_index(Cuda *C, const TcRegion *r, const TileIdx *ti, TcExpr **out)
{
	for (int i = 0; i < r->var->rank; i++)
		out[i] = r->origin[i];
	for (int i = 0; i < r->ndims; i++) {
		int d = r->dims[i];
		long long o;
		if (tc_expr_const(r->origin[d], &o) && o == 0)
			out[d] = ti->e[i];
		else
			out[d] = tc_expr_binary(C->a, TC_OP_ADD, r->origin[d],
						ti->e[i], r->loc);
	}
}

/* `idx0 < E0 && idx1 < E1 ...` for a tensor region element, or NULL when
 * the region is a buffer (always in bounds). */
static bool
print_bounds(Cuda *C, const TcRegion *r, TcExpr *const *idx)
{
	if (r->var->kind != TC_VAR_TENSOR)
		return false;
	TcBuf *b = C->pr.out;
	for (int i = 0; i < r->var->rank; i++) {
		if (i)
			tc_buf_puts(b, " && ");
		tc_c_expr_prec(&C->pr, idx[i], tc_binop_prec(TC_OP_LT) + 1);
		tc_buf_puts(b, " < ");
		tc_c_expr_prec(&C->pr, r->var->shape[i], tc_binop_prec(TC_OP_LT) + 1);
	}
	return true;
}

/* --- Tile operations ----------------------------------------------------------------- */

static void
close_brace(Cuda *C)
{
	C->pr.out->indent--;
	tc_buf_puts(C->pr.out, "}\n");
}

/* The bits of threadIdx.x that the enclosing anchored loops' classes depend
 * on, as C++ text ("x_rows::BITS | x_cols::BITS"), or NULL if none. */
static const char *
anchored_bits(Cuda *C)
{
	const char *bits = NULL;
	for (int i = 0; i < C->nanchors; i++) {
		const TcStmt *l = C->anchors[i];
		const char *d = dist_of(C, l->u.loop.anchor, l->u.loop.anchor_dim);
		bits = bits ? tc_fmt(C->a, "%s | %s::BITS", bits, d)
			    : tc_fmt(C->a, "%s::BITS", d);
	}
	return bits;
}

/* The row and column distributions of a register fragment for the copy
 * helpers: one-dim fragments are one row (tilec::One). */
static const char *
rows_of(Cuda *C, const TcVar *v)
{
	return v->rank == 2 ? dist_of(C, v, 0) : "tilec::One";
}

static const char *
cols_of(Cuda *C, const TcVar *v)
{
	return dist_of(C, v, v->rank - 1);
}

static const char *
as_2d(Cuda *C, const TcVar *v)
{
	return v->rank == 2 ? v->name : tc_fmt(C->a, "tilec::as_row(%s)", v->name);
}

/* Loops over every element a thread holds of register fragment v, with
 * counters r0, r1 and indices (text) row, col. */
static void
reg_loops_open(Cuda *C, const TcVar *v)
{
	TcBuf *b = C->pr.out;
	for (int d = 0; d < v->rank; d++)
		tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++)\n",
			      d ? C->r1 : C->r0, d ? C->r1 : C->r0, dist_of(C, v, d),
			      d ? C->r1 : C->r0);
	tc_buf_puts(b, "{\n");
	b->indent++;
}

static const char *
reg_at(Cuda *C, const TcVar *v)
{
	return v->rank == 2 ? tc_fmt(C->a, "%s[%s][%s]", v->name, C->r0, C->r1)
			    : tc_fmt(C->a, "%s[%s]", v->name, C->r0);
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

/* A 2-dim (or 1-dim) tensor -> shared copy of one dtype whose tile columns
 * run along the tensor's last dim: the vectorized helper.  Prints the
 * call with `it` substituted for the region's loop var when not NULL. */
static bool
copy_g2s_fits(const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	if (!dst->whole || !tc_in_smem(dst->var) ||
	    src->var->kind != TC_VAR_TENSOR || src->var->dtype != dst->var->dtype ||
	    dst->var->rank > 2 || tc_dtype_bits(dst->var->dtype) < 8)
		return false;
	return src->dims[src->ndims - 1] == src->var->rank - 1 &&
	       (src->ndims < 2 || src->dims[0] < src->dims[1]);
}

/* Text of the number of valid elements along tile dim i of a tensor region:
 * min(extent, shape - origin), and 0 when a fixed dim is out of range. */
static void
valid_extent(Cuda *C, const TcRegion *r, const TcVar *tile, int i)
{
	TcBuf *b = C->pr.out;
	int d = r->dims[i];
	tc_buf_printf(b, "min(%lld, ", ext(tile, i));
	tc_c_expr_prec(&C->pr, r->var->shape[d], tc_binop_prec(TC_OP_SUB));
	tc_buf_puts(b, " - ");
	tc_c_expr_prec(&C->pr, r->origin[d], tc_binop_prec(TC_OP_SUB) + 1);
	tc_buf_puts(b, ")");
}

static void
copy_g2s(Cuda *C, const TcStmt *s, bool async)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	const TcVar *v = dst->var, *t = src->var;
	TcBuf *b = C->pr.out;
	bool two = v->rank == 2;
	/* Fixed dims out of range make the whole tile zeros. */
	bool fixed = false;
	for (int i = 0; i < t->rank; i++) {
		bool covered = false;
		for (int j = 0; j < src->ndims; j++)
			covered |= src->dims[j] == i;
		fixed |= !covered;
	}
	tc_buf_printf(b, "tilec::copy_g2s<%s, %lld, %lld, %lld, %s>(",
		      storage_type(v->dtype), two ? ext(v, 0) : 1LL,
		      ext(v, v->rank - 1), C->threads, async ? "true" : "false");
	smem_base(C, v);
	tc_buf_printf(b, ", %lld, %s + ", row_stride(v), t->name);
	tensor_offset(C, t, src->origin);
	tc_buf_puts(b, ",\n\t");
	/* Row stride of the tensor along the tile's first dim. */
	if (two) {
		bool first = true;
		for (int i = src->dims[0] + 1; i < t->rank; i++) {
			if (!first)
				tc_buf_puts(b, " * ");
			tc_c_expr_prec(&C->pr, t->shape[i], tc_binop_prec(TC_OP_MUL) + 1);
			first = false;
		}
	} else {
		tc_buf_puts(b, "0");
	}
	tc_buf_puts(b, ", ");
	if (fixed) {
		tc_buf_puts(b, "(");
		bool first = true;
		for (int i = 0; i < t->rank; i++) {
			bool covered = false;
			for (int j = 0; j < src->ndims; j++)
				covered |= src->dims[j] == i;
			if (covered)
				continue;
			if (!first)
				tc_buf_puts(b, " && ");
			tc_c_expr_prec(&C->pr, src->origin[i], tc_binop_prec(TC_OP_LT) + 1);
			tc_buf_puts(b, " < ");
			tc_c_expr_prec(&C->pr, t->shape[i], tc_binop_prec(TC_OP_LT) + 1);
			first = false;
		}
		tc_buf_puts(b, ") ? ");
	}
	if (two)
		valid_extent(C, src, v, 0);
	else
		tc_buf_puts(b, "1");
	if (fixed)
		tc_buf_puts(b, " : 0");
	tc_buf_puts(b, ", ");
	valid_extent(C, src, v, src->ndims - 1);
	tc_buf_printf(b, ", %s);\n", t->name);
}

/* Any copy, element by element over the block's threads. */
static void
copy_generic(Cuda *C, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	const TcVar *tile = src->whole ? src->var : dst->var;
	bool atomic = s->kind == TC_ST_ATOMIC_ADD;
	TcBuf *b = C->pr.out;
	TileIdx ti;
	tile_idx_init(C, &ti);
	TcExpr *di[TC_MAX_RANK], *si[TC_MAX_RANK];
	region_index(C, dst, &ti, di);
	region_index(C, src, &ti, si);
	spread_loop_open(C, tile);
	TcExpr *load = tc_expr_new(C->a, TC_EX_LOAD, src->var->dtype, s->loc);
	load->u.load.var = src->var;
	for (int i = 0; i < src->var->rank; i++)
		load->u.load.idx[i] = si[i];
	if (dst->var->kind == TC_VAR_TENSOR) {
		tc_buf_puts(b, "if (");
		print_bounds(C, dst, di);
		tc_buf_puts(b, ")\n");
		b->indent++;
		if (atomic) {
			tc_buf_puts(b, "atomicAdd(&");
			element_ref(C, dst->var, di);
			tc_buf_puts(b, ", ");
			if (narrow_float(dst->var->dtype))
				tc_buf_printf(b, "tilec::from_float<%s>(",
					      storage_type(dst->var->dtype));
			expr(C, load);
			tc_buf_puts(b, narrow_float(dst->var->dtype) ? "));\n" : ");\n");
		} else {
			store(C, dst->var, di, load);
		}
		b->indent--;
	} else if (src->var->kind == TC_VAR_TENSOR) {
		TcExpr *zero = tc_expr_float(C->a, 0.0, TC_DT_F32, s->loc);
		TcExpr *sel = tc_expr_new(C->a, TC_EX_SELECT, load->dtype, s->loc);
		/* (in bounds) ? src : 0, with the bounds printed as text. */
		element_ref(C, dst->var, di);
		tc_buf_puts(b, " = ");
		bool narrow = narrow_float(dst->var->dtype);
		if (narrow)
			tc_buf_printf(b, "tilec::from_float<%s>(",
				      storage_type(dst->var->dtype));
		tc_buf_puts(b, "(");
		print_bounds(C, src, si);
		tc_buf_puts(b, ") ? ");
		tc_buf_printf(b, "(%s)", value_type(dst->var->dtype));
		tc_c_expr_prec(&C->pr, load, TC_PREC_UNARY);
		tc_buf_puts(b, " : ");
		tc_c_expr_prec(&C->pr, zero, TC_PREC_SELECT);
		tc_buf_puts(b, narrow ? ");\n" : ";\n");
		(void)sel;
	} else {
		store(C, dst->var, di, load);
	}
	close_brace(C);
}

/* Copies that involve a register fragment. */
static bool
copy_reg(Cuda *C, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	TcBuf *b = C->pr.out;
	bool atomic = s->kind == TC_ST_ATOMIC_ADD;
	const TcVar *f = is_reg(dst->var) ? dst->var : src->var;
	const TcRegion *other = f == dst->var ? src : dst;
	const TcVar *o = other->var;
	/* Register <-> register, one distribution. */
	if (is_reg(dst->var) && is_reg(src->var)) {
		if (!same_dists(dst->var, src->var)) {
			error(C, s->loc, "internal error: copy between register "
			      "fragments of different layouts");
			return true;
		}
		reg_loops_open(C, dst->var);
		if (narrow_float(dst->var->dtype))
			tc_buf_printf(b, "%s = tilec::to_float(tilec::from_float<%s>(%s));\n",
				      reg_at(C, dst->var), storage_type(dst->var->dtype),
				      reg_at(C, src->var));
		else
			tc_buf_printf(b, "%s = %s;\n", reg_at(C, dst->var),
				      reg_at(C, src->var));
		close_brace(C);
		return true;
	}
	/* Register <-> shared memory (a whole buffer). */
	if (o->kind == TC_VAR_BUFFER && other->whole && !atomic) {
		if (f == dst->var) {
			tc_buf_printf(b, "tilec::copy_s2r<%s, %s>(%s, ", rows_of(C, f),
				      cols_of(C, f), as_2d(C, f));
			smem_base(C, o);
			tc_buf_printf(b, ", %lld);\n", row_stride(o));
		} else {
			tc_buf_printf(b, "tilec::copy_r2s<%s, %s>(", rows_of(C, f),
				      cols_of(C, f));
			smem_base(C, o);
			tc_buf_printf(b, ", %lld, %s);\n", row_stride(o), as_2d(C, f));
		}
		return true;
	}
	/* Register <-> a tensor region whose last tile dim is the tensor's
	 * last (unit stride): the vectorized helpers. */
	if (o->kind == TC_VAR_TENSOR && !atomic &&
	    other->dims[other->ndims - 1] == o->rank - 1 &&
	    (other->ndims < 2 || other->dims[0] < other->dims[1])) {
		bool fixed = false;
		for (int i = 0; i < o->rank; i++) {
			bool covered = false;
			for (int j = 0; j < other->ndims; j++)
				covered |= other->dims[j] == i;
			fixed |= !covered;
		}
		if (f == dst->var)
			tc_buf_printf(b, "tilec::copy_g2r<%s, %s>(%s, %s + ", rows_of(C, f),
				      cols_of(C, f), as_2d(C, f), o->name);
		else
			tc_buf_printf(b, "tilec::copy_r2g<%s, %s>(%s + ", rows_of(C, f),
				      cols_of(C, f), o->name);
		tensor_offset(C, o, other->origin);
		tc_buf_puts(b, ",\n\t");
		if (f->rank == 2) {
			bool first = true;
			for (int i = other->dims[0] + 1; i < o->rank; i++) {
				if (!first)
					tc_buf_puts(b, " * ");
				tc_c_expr_prec(&C->pr, o->shape[i], tc_binop_prec(TC_OP_MUL) + 1);
				first = false;
			}
		} else {
			tc_buf_puts(b, "0");
		}
		tc_buf_puts(b, ", ");
		if (fixed) {
			tc_buf_puts(b, "(");
			bool first = true;
			for (int i = 0; i < o->rank; i++) {
				bool covered = false;
				for (int j = 0; j < other->ndims; j++)
					covered |= other->dims[j] == i;
				if (covered)
					continue;
				if (!first)
					tc_buf_puts(b, " && ");
				tc_c_expr_prec(&C->pr, other->origin[i], tc_binop_prec(TC_OP_LT) + 1);
				tc_buf_puts(b, " < ");
				tc_c_expr_prec(&C->pr, o->shape[i], tc_binop_prec(TC_OP_LT) + 1);
				first = false;
			}
			tc_buf_puts(b, ") ? ");
		}
		if (f->rank == 2)
			valid_extent(C, other, f, 0);
		else
			tc_buf_puts(b, "1");
		if (fixed)
			tc_buf_puts(b, " : 0");
		tc_buf_puts(b, ", ");
		valid_extent(C, other, f, f->rank - 1);
		if (f == dst->var)
			tc_buf_puts(b, ");\n");
		else
			tc_buf_printf(b, ", %s);\n", as_2d(C, f));
		return true;
	}
	/* Anything else: element by element over what this thread holds. */
	TileIdx ti;
	tile_idx_init(C, &ti);
	ti.vars[0].name = f->rank == 2 ? C->row : C->col;
	ti.vars[1].name = C->col;
	TcExpr *oi[TC_MAX_RANK];
	region_index(C, other, &ti, oi);
	reg_loops_open(C, f);
	if (f->rank == 2)
		tc_buf_printf(b, "const int %s = %s::index(%s), %s = %s::index(%s);\n",
			      C->row, dist_of(C, f, 0), C->r0, C->col,
			      dist_of(C, f, 1), C->r1);
	else
		tc_buf_printf(b, "const int %s = %s::index(%s);\n", C->col,
			      dist_of(C, f, 0), C->r0);
	if (f == src->var) {
		const char *lead = tc_fmt(C->a, "tilec::leader<%s::BITS%s%s%s>()",
					  dist_of(C, f, 0), f->rank == 2 ? " | " : "",
					  f->rank == 2 ? dist_of(C, f, 1) : "",
					  f->rank == 2 ? "::BITS" : "");
		tc_buf_printf(b, "if (%s", lead);
		if (o->kind == TC_VAR_TENSOR) {
			tc_buf_puts(b, " && ");
			print_bounds(C, other, oi);
		}
		tc_buf_puts(b, ")\n");
		b->indent++;
		if (atomic) {
			tc_buf_puts(b, "atomicAdd(&");
			element_ref(C, o, oi);
			if (narrow_float(o->dtype))
				tc_buf_printf(b, ", tilec::from_float<%s>(%s));\n",
					      storage_type(o->dtype), reg_at(C, f));
			else
				tc_buf_printf(b, ", %s);\n", reg_at(C, f));
		} else {
			element_ref(C, o, oi);
			tc_buf_printf(b, " = tilec::from_float<%s>(%s);\n",
				      storage_type(o->dtype), reg_at(C, f));
		}
		b->indent--;
	} else {
		tc_buf_printf(b, "%s = ", reg_at(C, f));
		bool bounded = o->kind == TC_VAR_TENSOR;
		if (bounded) {
			tc_buf_puts(b, "(");
			print_bounds(C, other, oi);
			tc_buf_puts(b, ") ? ");
		}
		tc_buf_puts(b, "tilec::to_float(");
		element_ref(C, o, oi);
		tc_buf_puts(b, bounded ? ") : 0.0f;\n" : ");\n");
	}
	close_brace(C);
	return true;
}

static void
emit_copy(Cuda *C, const TcStmt *s, bool async)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	if (is_reg(dst->var) || is_reg(src->var))
		copy_reg(C, s);
	else if (s->kind == TC_ST_COPY && copy_g2s_fits(s))
		copy_g2s(C, s, async);
	else
		copy_generic(C, s);
}

static void
emit_gemm(Cuda *C, const TcStmt *s)
{
	const TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var,
		    *bv = s->u.gemm.b.var;
	TcBuf *b = C->pr.out;
	bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
	long long K = ext(a, ta ? 0 : 1);
	if (c->layout.kind == TC_LAYOUT_MMA) {
		int tm = c->layout.dim[0].tiles, tn = c->layout.dim[1].tiles;
		const char *n0 = tc_fmt(C->a, "%s * %d", C->warp_n, tn * 8);
		if (is_reg(a)) {
			tc_buf_printf(b, "tilec::mma_rs<%d, %d, %lld, %s>(%s, %s, ", tm, tn,
				      K, tb ? "true" : "false", c->name, a->name);
			smem_base(C, bv);
			tc_buf_printf(b, ", %lld, %s);\n", row_stride(bv), n0);
			return;
		}
		tc_buf_printf(b, "tilec::mma_ss<%d, %d, %lld, %s, %s>(%s, ", tm, tn, K,
			      ta ? "true" : "false", tb ? "true" : "false", c->name);
		smem_base(C, a);
		tc_buf_printf(b, ", %lld, ", row_stride(a));
		smem_base(C, bv);
		tc_buf_printf(b, ", %lld, %s * %d, %s);\n", row_stride(bv), C->warp_m,
			      tm * 16, n0);
		return;
	}
	/* Everything in shared memory: each thread owns elements of C. */
	long long M = ext(c, 0), N = ext(c, 1);
	tc_buf_printf(b, "for (int e = threadIdx.x; e < %lld; e += %lld) {\n",
		      M * N, C->threads);
	b->indent++;
	tc_buf_printf(b, "const int m = e / %lld, n = e %% %lld;\n", N, N);
	tc_buf_puts(b, "float sum = tilec::to_float(");
	smem_base(C, c);
	tc_buf_printf(b, "[m * %lld + n]);\n", row_stride(c));
	tc_buf_printf(b, "for (int kk = 0; kk < %lld; kk++)\n\tsum += tilec::to_float(", K);
	smem_base(C, a);
	if (ta)
		tc_buf_printf(b, "[kk * %lld + m]", row_stride(a));
	else
		tc_buf_printf(b, "[m * %lld + kk]", row_stride(a));
	tc_buf_puts(b, ") * tilec::to_float(");
	smem_base(C, bv);
	if (tb)
		tc_buf_printf(b, "[n * %lld + kk]", row_stride(bv));
	else
		tc_buf_printf(b, "[kk * %lld + n]", row_stride(bv));
	tc_buf_puts(b, ");\n");
	smem_base(C, c);
	tc_buf_printf(b, "[m * %lld + n] = tilec::from_float<%s>(sum);\n",
		      row_stride(c), storage_type(c->dtype));
	close_brace(C);
}

static void
emit_fill(Cuda *C, const TcStmt *s)
{
	const TcVar *v = s->u.fill.dst.var;
	TcBuf *b = C->pr.out;
	double cv;
	bool is_const = tc_c_const_float(s->u.fill.value, &cv);
	TcExpr *lit = is_const ? tc_expr_float(C->a, cv, TC_DT_F32, s->loc) : NULL;
	if (is_reg(v)) {
		reg_loops_open(C, v);
		tc_buf_printf(b, "%s = ", reg_at(C, v));
		if (lit) {
			expr(C, lit);
		} else {
			tc_buf_puts(b, "(float)(");
			expr(C, s->u.fill.value);
			tc_buf_puts(b, ")");
		}
		tc_buf_puts(b, ";\n");
		close_brace(C);
		return;
	}
	TileIdx ti;
	tile_idx_init(C, &ti);
	spread_loop_open(C, v);
	TcExpr *idx[TC_MAX_RANK];
	for (int i = 0; i < v->rank; i++)
		idx[i] = ti.e[i];
	TcExpr *val = lit;
	if (!val || !tc_dtype_is_float(v->dtype) || v->dtype == TC_DT_F64) {
		val = tc_expr_new(C->a, TC_EX_CAST, tc_dtype_is_int(v->dtype) ?
				  v->dtype : v->dtype == TC_DT_F64 ? TC_DT_F64 :
				  TC_DT_F32, s->loc);
		val->u.cast.arg = s->u.fill.value;
	}
	store(C, v, idx, val);
	close_brace(C);
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

static void
emit_reduce(Cuda *C, const TcStmt *s)
{
	const TcVar *src = s->u.reduce.src.var, *dst = s->u.reduce.dst.var;
	TcBuf *b = C->pr.out;
	int dim = s->u.reduce.dim;
	bool acc = s->u.reduce.accumulate;
	const char *op = reduce_op(s->u.reduce.op);
	if (is_reg(src)) {
		/* Each thread reduces what it holds; the threads holding the
		 * same output combine. */
		const char *out = dist_of(C, src, 1 - dim);
		const char *part = fresh(C, tc_fmt(C->a, "%s_part", dst->name));
		const char *r0 = C->r0, *o = C->o;
		tc_buf_printf(b, "float %s[%s::count];\n", part, out);
		tc_buf_printf(b, "tilec::reduce2d<%s, %d, %s, %s, %lld>(%s, %s, "
			      "reinterpret_cast<float *>(tilec_smem + %lld));\n", op, dim,
			      dist_of(C, src, 0), dist_of(C, src, 1), C->threads, part,
			      src->name, C->k->scratch_offset);
		tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++)",
			      r0, r0, out, r0);
		if (is_reg(dst)) {
			tc_buf_printf(b, "\n\t%s[%s] = ", dst->name, r0);
			if (acc)
				tc_buf_printf(b, "tilec::reduce_combine<%s>(%s[%s], %s[%s]);\n",
					      op, dst->name, r0, part, r0);
			else
				tc_buf_printf(b, "%s[%s];\n", part, r0);
			return;
		}
		tc_buf_printf(b, " {\n");
		b->indent++;
		tc_buf_printf(b, "if (tilec::leader<%s::BITS>()) {\n", out);
		b->indent++;
		tc_buf_printf(b, "const int %s = %s::index(%s);\n", o, out, r0);
		smem_base(C, dst);
		tc_buf_printf(b, "[%s] = tilec::from_float<%s>(", o, storage_type(dst->dtype));
		if (acc) {
			tc_buf_printf(b, "tilec::reduce_combine<%s>(tilec::to_float(", op);
			smem_base(C, dst);
			tc_buf_printf(b, "[%s]), %s[%s]));\n", o, part, r0);
		} else {
			tc_buf_printf(b, "%s[%s]);\n", part, r0);
		}
		close_brace(C);
		close_brace(C);
		return;
	}
	if (src->rank == 2) {
		tc_buf_printf(b, "tilec::smem_reduce<%s, %d, %s, %lld, %lld, %lld>(",
			      op, dim, acc ? "true" : "false", ext(src, 0),
			      ext(src, 1), C->threads);
		smem_base(C, src);
		tc_buf_printf(b, ", %lld, ", row_stride(src));
		smem_base(C, dst);
		tc_buf_puts(b, ");\n");
		return;
	}
	/* Higher ranks: one thread per output, a serial loop over dim. */
	TileIdx ti;
	tile_idx_init(C, &ti);
	spread_loop_open(C, dst);
	TcExpr *si[TC_MAX_RANK], *di[TC_MAX_RANK];
	TcVar kv = { .kind = TC_VAR_LOCAL, .name = "kk", .dtype = TC_DT_I32 };
	for (int i = 0, j = 0; i < src->rank; i++)
		si[i] = i == dim ? tc_expr_var(C->a, &kv, s->loc) : ti.e[j++];
	for (int i = 0; i < dst->rank; i++)
		di[i] = ti.e[i];
	TcExpr *ld = tc_expr_new(C->a, TC_EX_LOAD, src->dtype, s->loc);
	ld->u.load.var = (TcVar *)src;
	memcpy(ld->u.load.idx, si, sizeof si);
	TcExpr *old = tc_expr_new(C->a, TC_EX_LOAD, dst->dtype, s->loc);
	old->u.load.var = (TcVar *)dst;
	memcpy(old->u.load.idx, di, sizeof di);
	tc_buf_puts(b, "float v = ");
	if (acc)
		expr(C, old);
	else
		tc_buf_printf(b, "tilec::reduce_init<%s>()", op);
	tc_buf_puts(b, ";\n");
	tc_buf_printf(b, "for (int kk = 0; kk < %lld; kk++)\n\t", ext(src, dim));
	tc_buf_printf(b, "v = tilec::reduce_combine<%s>(v, tilec::reduce_value<%s>(", op, op);
	expr(C, ld);
	tc_buf_puts(b, "));\n");
	element_ref(C, dst, di);
	tc_buf_printf(b, " = tilec::from_float<%s>(v);\n", storage_type(dst->dtype));
	close_brace(C);
}

/* --- Statements ------------------------------------------------------------------------- */

static void emit_stmt(Cuda *C, const TcStmt *s);

static void
emit_body(Cuda *C, const TcStmt *blk)
{
	for (int i = 0; i < blk->u.block.body.len; i++)
		emit_stmt(C, blk->u.block.body.items[i]);
}

/* A store to memory other threads see, where several threads run the
 * statement alike: only one of them does it. */
static const char *
single_writer(Cuda *C)
{
	if (C->block_level)
		return "threadIdx.x == 0";
	if (C->spread)
		return NULL;
	const char *bits = anchored_bits(C);
	return bits ? tc_fmt(C->a, "tilec::leader<%s>()", bits) : NULL;
}

static void
emit_assign(Cuda *C, const TcStmt *s)
{
	TcBuf *b = C->pr.out;
	const TcExpr *dst = s->u.assign.dst;
	if (dst->kind == TC_EX_VAR) {
		tc_buf_printf(b, "%s = ", dst->u.var->name);
		expr(C, s->u.assign.value);
		tc_buf_puts(b, ";\n");
		return;
	}
	const TcVar *v = dst->u.load.var;
	const char *guard = is_reg(v) ? NULL : single_writer(C);
	if (guard) {
		tc_buf_printf(b, "if (%s)\n", guard);
		b->indent++;
	}
	store(C, v, dst->u.load.idx, s->u.assign.value);
	if (guard)
		b->indent--;
}

/* A tile_parallel loop whose iterations are spread over the threads: a
 * perfect nest becomes one flat loop. */
static void
emit_spread(Cuda *C, const TcStmt *s)
{
	TcBuf *b = C->pr.out;
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
		    inner->u.loop.anchor)
			break;
		cur = inner;
	}
	long long total = 1;
	for (int i = 0; i < n; i++)
		total *= ext_[i];
	const char *e = fresh(C, tc_fmt(C->a, "%s_e", loops[0]->u.loop.var->name));
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %lld) {\n",
		      e, e, total, e, C->threads);
	b->indent++;
	long long inner = total;
	tc_buf_puts(b, "const int ");
	for (int i = 0; i < n; i++) {
		inner /= ext_[i];
		if (i)
			tc_buf_puts(b, ", ");
		const char *name = loops[i]->u.loop.var->name;
		if (n == 1)
			tc_buf_printf(b, "%s = %s", name, e);
		else if (i == 0)
			tc_buf_printf(b, "%s = %s / %lld", name, e, inner);
		else if (i == n - 1)
			tc_buf_printf(b, "%s = %s %% %lld", name, e, ext_[i]);
		else
			tc_buf_printf(b, "%s = %s / %lld %% %lld", name, e, inner, ext_[i]);
	}
	tc_buf_puts(b, ";\n");
	bool saved = C->block_level;
	C->block_level = false;
	C->spread++;
	emit_body(C, loops[n - 1]->u.loop.body);
	C->spread--;
	C->block_level = saved;
	close_brace(C);
}

/* A tile_parallel loop that follows a register fragment's distribution:
 * each thread visits the indices it holds. */
static void
emit_anchored(Cuda *C, const TcStmt *s)
{
	TcBuf *b = C->pr.out;
	const TcVar *v = s->u.loop.var;
	const char *d = dist_of(C, s->u.loop.anchor, s->u.loop.anchor_dim);
	const char *r = fresh(C, tc_fmt(C->a, "%s_r", v->name));
	tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++) {\n",
		      r, r, d, r);
	b->indent++;
	tc_buf_printf(b, "const int %s = %s::index(%s);\n", v->name, d, r);
	bool saved_block = C->block_level;
	C->block_level = false;
	C->anchors[C->nanchors++] = s;
	emit_body(C, s->u.loop.body);
	C->nanchors--;
	C->block_level = saved_block;
	close_brace(C);
}

/* The leading copies of a pipelined loop for iteration `it`: those into
 * shared memory (regs false) land in stage `stage`; those into register
 * fragments (regs true) land in the fragment's prefetch copy NAME_next. */
static void
issue_copies(Cuda *C, const TcStmt *loop, const char *it, const char *stage,
	     bool regs)
{
	TcVar *var = loop->u.loop.var;
	const char *saved_name = var->name, *saved_stage = C->stage;
	var->name = it;
	C->stage = stage;
	const TcVec *body = &loop->u.loop.body->u.block.body;
	for (int i = 0; i < loop->u.loop.async_copies; i++) {
		const TcStmt *c = body->items[i];
		TcVar *dst = c->u.copy.dst.var;
		if (is_reg(dst) != regs)
			continue;
		const char *dst_name = dst->name;
		if (regs)
			dst->name = fresh(C, tc_fmt(C->a, "%s_next", dst_name));
		stmt_comment(C, c, NULL);
		emit_copy(C, c, true);
		dst->name = dst_name;
	}
	var->name = saved_name;
	C->stage = saved_stage;
}

/* tile_pipelined with leading copies: shared destinations are filled
 * STAGES - 1 iterations ahead with cp.async; register destinations are
 * loaded one iteration ahead into NAME_next. */
static void
emit_pipelined(Cuda *C, const TcStmt *s)
{
	TcBuf *b = C->pr.out;
	const char *k = s->u.loop.var->name;
	long long stages = 1;
	tc_expr_const(s->u.loop.stages, &stages);
	const char *end = fresh(C, tc_fmt(C->a, "%s_end", k));
	const char *pre = fresh(C, tc_fmt(C->a, "%s_pre", k));
	const char *next = fresh(C, tc_fmt(C->a, "%s_next", k));
	const char *stage = fresh(C, tc_fmt(C->a, "%s_stage", k));
	const TcVec *body = &s->u.loop.body->u.block.body;
	bool smem = false, regs = false;
	for (int i = 0; i < s->u.loop.async_copies; i++) {
		const TcStmt *c = body->items[i];
		if (is_reg(c->u.copy.dst.var))
			regs = true;
		else
			smem = true;
	}
	/* A scope of its own: the loop's bookkeeping names stay local. */
	tc_buf_puts(b, "{\n");
	b->indent++;
	tc_buf_printf(b, "const int %s = ", end);
	expr(C, s->u.loop.end);
	tc_buf_puts(b, ";\n");
	if (regs) {
		tc_buf_puts(b, "// Register fragments are loaded one iteration ahead.\n");
		for (int i = 0; i < s->u.loop.async_copies; i++) {
			const TcVar *v = ((const TcStmt *)body->items[i])->u.copy.dst.var;
			if (!is_reg(v))
				continue;
			const char *nx = fresh(C, tc_fmt(C->a, "%s_next", v->name));
			if (v->rank == 2)
				tc_buf_printf(b, "float %s[%s::count][%s::count];\n",
					      nx, dist_of(C, v, 0), dist_of(C, v, 1));
			else
				tc_buf_printf(b, "float %s[%s::count];\n", nx,
					      dist_of(C, v, 0));
		}
		tc_buf_printf(b, "if (0 < %s) {\n", end);
		b->indent++;
		issue_copies(C, s, "0", NULL, true);
		close_brace(C);
	}
	if (smem) {
		tc_buf_printf(b, "// Prologue: the copies of the first %lld iterations.\n",
			      stages - 1);
		tc_buf_printf(b, "for (int %s = 0; %s < %lld; %s++) {\n", pre, pre,
			      stages - 1, pre);
		b->indent++;
		tc_buf_printf(b, "if (%s < %s) {\n", pre, end);
		b->indent++;
		issue_copies(C, s, pre, pre, false);
		close_brace(C);
		tc_buf_puts(b, "tilec::cp_async_commit();\n");
		close_brace(C);
	}
	tc_buf_printf(b, "for (int %s = 0; %s < %s; %s++) {\n", k, k, end, k);
	b->indent++;
	if (regs) {
		for (int i = 0; i < s->u.loop.async_copies; i++) {
			const TcVar *v = ((const TcStmt *)body->items[i])->u.copy.dst.var;
			if (!is_reg(v))
				continue;
			const char *nx = fresh(C, tc_fmt(C->a, "%s_next", v->name));
			reg_loops_open(C, v);
			tc_buf_printf(b, "%s = %s;\n", reg_at(C, v),
				      v->rank == 2 ? tc_fmt(C->a, "%s[%s][%s]", nx, C->r0, C->r1)
						   : tc_fmt(C->a, "%s[%s]", nx, C->r0));
			close_brace(C);
		}
		tc_buf_printf(b, "if (%s + 1 < %s) {\n", k, end);
		b->indent++;
		issue_copies(C, s, tc_fmt(C->a, "(%s + 1)", k), NULL, true);
		close_brace(C);
	}
	if (smem) {
		tc_buf_printf(b, "const int %s = %s %% %lld;\n", stage, k, stages);
		tc_buf_printf(b, "// Wait for this iteration's copies; every thread is "
			      "done with stage (%s - 1) %% %lld.\n", k, stages);
		tc_buf_printf(b, "tilec::cp_async_wait<%lld>();\n__syncthreads();\n",
			      stages - 2);
		tc_buf_printf(b, "const int %s = %s + %lld;\n", next, k, stages - 1);
		tc_buf_printf(b, "if (%s < %s) {\n", next, end);
		b->indent++;
		issue_copies(C, s, next, tc_fmt(C->a, "(%s %% %lld)", next, stages),
			     false);
		close_brace(C);
		tc_buf_puts(b, "tilec::cp_async_commit();\n");
	}
	const char *saved = C->stage;
	C->stage = smem ? stage : NULL;
	for (int i = s->u.loop.async_copies; i < body->len; i++)
		emit_stmt(C, body->items[i]);
	C->stage = saved;
	close_brace(C);
	if (smem)
		tc_buf_puts(b, "tilec::cp_async_wait<0>();\n");
	close_brace(C);
}

static void
emit_stmt(Cuda *C, const TcStmt *s)
{
	TcBuf *b = C->pr.out;
	switch (s->kind) {
	case TC_ST_BLOCK:
		tc_buf_puts(b, "{\n");
		b->indent++;
		emit_body(C, s);
		close_brace(C);
		break;
	case TC_ST_DECL: {
		const TcVar *v = s->u.decl.var;
		if (v->kind == TC_VAR_BUFFER) {
			if (is_reg(v)) {
				stmt_comment(C, s, tc_fmt(C->a, ": registers, %s",
					v->rank == 2 ? tc_fmt(C->a, "%s x %s",
						dist_of(C, v, 0), dist_of(C, v, 1)) :
					dist_of(C, v, 0)));
				if (v->rank == 2)
					tc_buf_printf(b, "float %s[%s::count][%s::count];\n",
						      v->name, dist_of(C, v, 0),
						      dist_of(C, v, 1));
				else
					tc_buf_printf(b, "float %s[%s::count];\n", v->name,
						      dist_of(C, v, 0));
			} else {
				const char *extra = tc_fmt(C->a, ": shared memory%s%s",
					v->stages > 1 ? tc_fmt(C->a, ", %d stages",
							       v->stages) : "",
					v->pad ? tc_fmt(C->a, ", rows padded to %lld",
							row_stride(v)) : "");
				stmt_comment(C, s, extra);
				tc_buf_printf(b, "%s *%s = reinterpret_cast<%s *>"
					      "(tilec_smem + %lld);\n",
					      storage_type(v->dtype), v->name,
					      storage_type(v->dtype), v->smem_offset);
			}
			break;
		}
		tc_buf_printf(b, "%s %s", value_type(v->dtype), v->name);
		if (s->u.decl.init) {
			tc_buf_puts(b, " = ");
			expr(C, s->u.decl.init);
		}
		tc_buf_puts(b, ";\n");
		break;
	}
	case TC_ST_ASSIGN:
		emit_assign(C, s);
		break;
	case TC_ST_FOR:
		if (s->u.loop.kind == TC_LOOP_PARALLEL) {
			stmt_comment(C, s, NULL);
			if (s->u.loop.anchor)
				emit_anchored(C, s);
			else
				emit_spread(C, s);
			break;
		}
		if (s->u.loop.kind == TC_LOOP_PIPELINED && s->u.loop.async_copies) {
			stmt_comment(C, s, NULL);
			emit_pipelined(C, s);
			break;
		}
		tc_c_for(&C->pr, "int", s->u.loop.var->name, s->u.loop.begin,
			 s->u.loop.end, s->u.loop.step);
		tc_buf_puts(b, " {\n");
		b->indent++;
		emit_body(C, s->u.loop.body);
		close_brace(C);
		break;
	case TC_ST_IF:
		tc_buf_puts(b, "if (");
		expr(C, s->u.cond.cond);
		tc_buf_puts(b, ") {\n");
		b->indent++;
		emit_body(C, s->u.cond.then);
		b->indent--;
		if (s->u.cond.els) {
			tc_buf_puts(b, "} else {\n");
			b->indent++;
			emit_body(C, s->u.cond.els);
			b->indent--;
		}
		tc_buf_puts(b, "}\n");
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
		stmt_comment(C, s, NULL);
		emit_copy(C, s, false);
		break;
	case TC_ST_GEMM:
		stmt_comment(C, s, NULL);
		emit_gemm(C, s);
		break;
	case TC_ST_FILL:
		stmt_comment(C, s, NULL);
		emit_fill(C, s);
		break;
	case TC_ST_REDUCE:
		stmt_comment(C, s, NULL);
		emit_reduce(C, s);
		break;
	case TC_ST_BARRIER:
		tc_buf_puts(b, "__syncthreads();\n");
		break;
	default:
		tc_unreachable();
	}
}

/* --- The kernel ----------------------------------------------------------------------- */

static bool
dtypes_supported(Cuda *C)
{
	for (int i = 0; i < C->k->vars.len; i++) {
		const TcVar *v = C->k->vars.items[i];
		if ((v->kind == TC_VAR_TENSOR || v->kind == TC_VAR_BUFFER) &&
		    !storage_type(v->dtype)) {
			error(C, v->loc, "the cuda backend does not support %s "
			      "%s yet ('%s')", tc_dtype_name(v->dtype),
			      v->kind == TC_VAR_TENSOR ? "tensors" : "buffers",
			      v->name);
			return false;
		}
	}
	return true;
}

static void
emit_header(Cuda *C)
{
	TcBuf *b = C->pr.out;
	tc_buf_printf(b, "// Generated by tilec %s from %s, kernel %s, for %s %s.\n",
		      TILEC_VERSION, C->prog->path, C->k->name, C->t->name,
		      C->t->arch);
	if (C->prog->tunables.len) {
		tc_buf_puts(b, "// Tunables:");
		for (int i = 0; i < C->prog->tunables.len; i++) {
			const TcVar *v = C->prog->tunables.items[i];
			tc_buf_printf(b, " %s=%lld", v->name, v->value);
		}
		tc_buf_puts(b, ".\n");
	}
	tc_buf_printf(b, "// %lld threads; %lld bytes of shared memory.\n",
		      C->threads, C->k->smem_bytes);
	if (C->opt->standalone) {
		/* The helpers inline, without their include guard. */
		const TcEmbedded *t = tc_embedded_find("cuda/tilec_cuda.cuh");
		const char *once = strstr(t->text, "#pragma once\n");
		tc_buf_puts(b, "\n");
		if (once) {
			tc_buf_printf(b, "%.*s", (int)(once - t->text), t->text);
			tc_buf_puts(b, once + strlen("#pragma once\n"));
		} else {
			tc_buf_puts(b, t->text);
		}
	} else {
		tc_buf_puts(b, "#include \"tilec/cuda/tilec_cuda.cuh\"\n");
	}
}

static void
emit_signature(Cuda *C)
{
	TcBuf *b = C->pr.out;
	tc_buf_printf(b, "\nextern \"C\" __global__ void __launch_bounds__(%lld)\n%s(",
		      C->threads, C->k->name);
	for (int i = 0; i < C->k->params.len; i++) {
		const TcVar *v = C->k->params.items[i];
		if (i)
			tc_buf_puts(b, ", ");
		if (v->kind == TC_VAR_TENSOR)
			tc_buf_printf(b, "%s%s *__restrict__ %s",
				      v->is_const ? "const " : "",
				      storage_type(v->dtype), v->name);
		else
			tc_buf_printf(b, "%s %s", value_type(v->dtype), v->name);
	}
	tc_buf_puts(b, ")\n{\n");
	b->indent++;
}

static void
emit_prologue(Cuda *C)
{
	TcBuf *b = C->pr.out;
	if (C->prog->tunables.len) {
		tc_buf_puts(b, "enum {");
		for (int i = 0; i < C->prog->tunables.len; i++) {
			const TcVar *v = C->prog->tunables.items[i];
			tc_buf_printf(b, "%s %s = %lld", i ? "," : "", v->name,
				      v->value);
		}
		tc_buf_puts(b, " };\n");
	}
	if (C->k->smem_bytes)
		tc_buf_puts(b, "extern __shared__ __align__(128) unsigned char "
			    "tilec_smem[];\n");
	if (C->warps_m && C->warps_n == 1)
		tc_buf_printf(b, "const int %s = threadIdx.x / 32, %s = 0;\n",
			      C->warp_m, C->warp_n);
	else if (C->warps_m)
		tc_buf_printf(b, "const int %s = threadIdx.x / 32 / %d, "
			      "%s = threadIdx.x / 32 %% %d;\n", C->warp_m, C->warps_n,
			      C->warp_n, C->warps_n);
	/* One alias per distribution class of the register fragments. */
	for (int i = 0; i < C->k->vars.len; i++) {
		const TcVar *v = C->k->vars.items[i];
		if (!is_reg(v))
			continue;
		for (int d = 0; d < v->rank; d++) {
			const TcDist *t = &v->layout.dim[d];
			if (C->dist[t->id])
				continue;
			const char *name = fresh(C, tc_fmt(C->a, "%s_%s", v->name,
							   t->axis ? "cols" : "rows"));
			C->dist[t->id] = name;
			if (t->kind == TC_LAYOUT_MMA)
				tc_buf_printf(b, "using %s = tilec::Mma<%d, %d, %d, %d>;\n",
					      name, t->axis, t->tiles,
					      v->layout.warps_m, v->layout.warps_n);
			else
				tc_buf_printf(b, "using %s = tilec::Blocked<%d, %d, %d, %d, %d>;\n",
					      name, t->axis, t->count, t->tr, t->tc,
					      t->vec);
		}
	}
	static const char *const dims = "xyz";
	long long group = 0;
	if (C->k->rasterize)
		tc_expr_const(C->k->rasterize, &group);
	if (group > 1 && C->k->grid[1]) {
		/* tile_rasterize: launch order walks groups of `group` block
		 * rows column by column, so blocks running together share
		 * their operands in L2. */
		tc_buf_printf(b, "// tile_rasterize(%lld): blocks visit groups of %lld rows "
			      "column by column.\n", group, group);
		const char *lin = fresh(C, "linear"), *gsz = fresh(C, "group_size");
		const char *first = fresh(C, "first_row"), *rows = fresh(C, "group_rows");
		tc_buf_printf(b, "const int %s = blockIdx.y * gridDim.x + blockIdx.x;\n", lin);
		tc_buf_printf(b, "const int %s = %lld * gridDim.x;\n", gsz, group);
		tc_buf_printf(b, "const int %s = %s / %s * %lld;\n", first, lin, gsz, group);
		tc_buf_printf(b, "const int %s = min((int)gridDim.y - %s, %lld);\n",
			      rows, first, group);
		if (C->k->block[0])
			tc_buf_printf(b, "const int %s = %s %% %s / %s;\n",
				      C->k->block[0]->name, lin, gsz, rows);
		if (C->k->block[1])
			tc_buf_printf(b, "const int %s = %s + %s %% %s %% %s;\n",
				      C->k->block[1]->name, first, lin, gsz, rows);
		if (C->k->block[2])
			tc_buf_printf(b, "const int %s = blockIdx.z;\n",
				      C->k->block[2]->name);
		return;
	}
	for (int d = 0; d < 3; d++)
		if (C->k->block[d])
			tc_buf_printf(b, "const int %s = blockIdx.%c;\n",
				      C->k->block[d]->name, dims[d]);
}

static bool
cuda_emit(const TcProgram *p, const TcKernel *k, const TcTarget *t,
	  const TcOptions *opt, TcBuf *out, TcDiags *d)
{
	TcArena *a = tc_arena_new();
	Cuda C = {
		.pr = { .out = out, .hooks = &cuda_hooks },
		.a = a, .prog = p, .k = k, .t = t, .opt = opt, .d = d,
		.threads = 128, .block_level = true,
	};
	C.pr.ctx = &C;
	if (k->threads)
		tc_expr_const(k->threads, &C.threads);
	int nclass = 0;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind == TC_VAR_BUFFER && v->layout.kind == TC_LAYOUT_MMA) {
			C.warps_m = v->layout.warps_m;
			C.warps_n = v->layout.warps_n;
		}
		for (int j = 0; is_reg(v) && j < v->rank; j++)
			if (v->layout.dim[j].id >= nclass)
				nclass = v->layout.dim[j].id + 1;
	}
	C.dist = tc_alloc(a, sizeof(char *) * (size_t)(nclass + 1));
	C.e = fresh(&C, "e");
	for (int i = 0; i < TC_MAX_RANK; i++)
		C.tix[i] = fresh(&C, tile_idx[i]);
	C.row = fresh(&C, "row");
	C.col = fresh(&C, "col");
	C.r0 = fresh(&C, "r0");
	C.r1 = fresh(&C, "r1");
	C.o = fresh(&C, "o");
	C.warp_m = fresh(&C, "warp_m");
	C.warp_n = fresh(&C, "warp_n");
	if (dtypes_supported(&C)) {
		if (out->len)
			tc_buf_puts(out, "\n");
		emit_header(&C);
		emit_signature(&C);
		emit_prologue(&C);
		emit_body(&C, k->body);
		close_brace(&C);
	}
	tc_arena_free(a);
	return !C.failed;
}

const TcBackend tc_backend_cuda = {
	.name = "cuda",
	.file_ext = ".cu",
	.emit = cuda_emit,
};
