/*
 * hip.c - the HIP C++ backend (AMD CDNA GPUs: gfx90a, gfx942; wave64).
 *
 * Input: a program scheduled by the GPU passes (layout, pipeline, smem,
 * barrier) for the hip target: warps are 64-lane waves, gemm accumulators
 * have the MFMA layout.  Output: one `extern "C" __global__` kernel per tile
 * kernel, calling the helpers of templates/hip/tilec_hip.hpp.
 *
 * The structure follows the CUDA backend (emitters/cuda.c) function for
 * function, and the helpers have the CUDA helpers' names, so the two print
 * the same program in the same shape (docs/backend-hip.md lists what
 * differs, and which parts are to become one shared GPU emitter):
 *   - every thread runs the kernel body; scalars at block level are
 *     computed by all threads alike (uniform);
 *   - buffers in shared memory (LDS) are slices of one dynamic shared
 *     array, at the offsets smem.c chose; register fragments are
 *     per-thread float arrays x[R::count][C::count];
 *   - tile operations are cooperative: all threads share the elements, or,
 *     for register fragments, each thread handles the elements it holds;
 *   - tile_gemm with an MFMA accumulator is tilec::mfma_ss (operands in
 *     LDS) or tilec::mfma_rs (A in registers); any other gemm runs from
 *     shared memory element by element;
 *   - a tile_parallel nest spreads its iterations over the threads, unless
 *     layout.c anchored it to a register fragment: then each thread visits
 *     the rows and columns it holds (stores to shared or global memory are
 *     done by one of the threads holding the element);
 *   - stores at block level to shared or global memory are done by thread
 *     0; BARRIER statements become __syncthreads();
 *   - tile_pipelined loops run their copies in order: the pipeline pass
 *     plans asynchronous copies for CUDA only (docs/backend-hip.md).
 * The output names things after the tile program and comments each tile
 * operation with its source line.
 */
#include "cfamily.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lanes per wave on every architecture of the hip target. */
#define WAVE 64

typedef struct Hip {
	TcCPrinter pr;          /* the printer (pr.out is the output) */
	TcArena *a;             /* scratch for names and snippets */
	const TcProgram *prog;  /* the program */
	const TcKernel *k;      /* the kernel being printed */
	const TcTarget *t;      /* the target */
	const TcOptions *opt;   /* options */
	TcDiags *d;             /* errors */
	long long threads;      /* threads per block */
	int waves_m, waves_n;   /* the MFMA wave grid, 0 if no MFMA fragment */
	const char **dist;      /* per distribution class id: its C++ alias */
	/* Anchored loops being printed, outermost first: each runs over the
	 * indices its class gives this thread. */
	const TcStmt *anchors[TC_MAX_RANK];
	int nanchors;
	int spread;             /* depth of spread parallel loops */
	bool block_level;       /* not inside any parallel loop */
	bool failed;            /* an error was reported */
	/* The emitter's own names (loop counters, tile indices, ...), each
	 * made distinct from every name of the program (fresh()). */
	const char *e, *tix[TC_MAX_RANK], *row, *col, *r0, *r1, *o, *kk;
	const char *wave_m, *wave_n;
} Hip;

TC_PRINTF(3, 4)
static void
error(Hip *H, TcLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(H->d, TC_ERROR, loc, fmt, ap);
	va_end(ap);
	H->failed = true;
}

/* Is `name` a name of the program (a var of the kernel or a tunable)? */
static bool
name_taken(const Hip *H, const char *name)
{
	for (int i = 0; i < H->k->vars.len; i++)
		if (strcmp(((const TcVar *)H->k->vars.items[i])->name, name) == 0)
			return true;
	for (int i = 0; i < H->prog->tunables.len; i++)
		if (strcmp(((const TcVar *)H->prog->tunables.items[i])->name, name) == 0)
			return true;
	return false;
}

/* `base`, or base with underscores appended until no name of the program
 * has it: generated names never shadow the program's. */
static const char *
fresh(Hip *H, const char *base)
{
	const char *n = base;
	while (name_taken(H, n))
		n = tc_fmt(H->a, "%s_", n);
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
	return v->kind == TC_VAR_BUFFER && (v->layout.kind == TC_LAYOUT_MFMA ||
					    v->layout.kind == TC_LAYOUT_BLOCKED);
}

/* The alias of the distribution of register fragment v's dim d. */
static const char *
dist_of(Hip *H, const TcVar *v, int d)
{
	return H->dist[v->layout.dim[d].id];
}

/* --- Types -------------------------------------------------------------------- */

/* The C++ type that stores a dtype in memory (tilec::bf16 is the
 * helpers' own: HIP's bfloat16 types differ between releases). */
static const char *
storage_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F64: return "double";
	case TC_DT_F32: return "float";
	case TC_DT_F16: return "__half";
	case TC_DT_BF16: return "tilec::bf16";
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

/* The base of a buffer in shared memory.  (The hip target has no staged
 * buffers: the pipeline pass leaves them single.) */
static void
smem_base(Hip *H, const TcVar *v)
{
	tc_buf_puts(H->pr.out, v->name);
}

/* Offset of element idx[] of a shared buffer: row-major, the last extent
 * padded: ((i0 * e1 + i1) * e2p + i2). */
static void
smem_offset(Hip *H, const TcVar *v, TcExpr *const *idx)
{
	TcBuf *b = H->pr.out;
	for (int i = 0; i < v->rank - 2; i++)
		tc_buf_puts(b, "(");
	for (int i = 0; i < v->rank; i++) {
		if (i == 0) {
			tc_c_expr_prec(&H->pr, idx[0], v->rank > 1 ?
				       tc_binop_prec(TC_OP_MUL) : TC_PREC_COMMA + 1);
			continue;
		}
		long long stride = i == v->rank - 1 ? row_stride(v) : ext(v, i);
		tc_buf_printf(b, " * %lld + ", stride);
		tc_c_expr_prec(&H->pr, idx[i], tc_binop_prec(TC_OP_ADD) + 1);
		if (i < v->rank - 1)
			tc_buf_puts(b, ")");
	}
}

/* Offset of tensor element idx[]: (size_t) row-major over its shape. */
static void
tensor_offset(Hip *H, const TcVar *v, TcExpr *const *idx)
{
	TcBuf *b = H->pr.out;
	for (int i = 0; i < v->rank - 1; i++)
		tc_buf_puts(b, "(");
	for (int i = 0; i < v->rank; i++) {
		if (i == 0) {
			if (v->rank > 1)
				tc_buf_puts(b, "(size_t)");
			tc_c_expr_prec(&H->pr, idx[0], v->rank > 1 ?
				       TC_PREC_UNARY : TC_PREC_COMMA + 1);
			continue;
		}
		tc_buf_puts(b, " * ");
		tc_c_expr_prec(&H->pr, v->shape[i], tc_binop_prec(TC_OP_MUL) + 1);
		tc_buf_puts(b, " + ");
		tc_c_expr_prec(&H->pr, idx[i], tc_binop_prec(TC_OP_ADD) + 1);
		tc_buf_puts(b, ")");
	}
}

/* An element F[i][j] of a register fragment inside the loops anchored on
 * its dims: F[i_r][j_r], the loops' counters. */
static void
reg_element(Hip *H, const TcVar *v, TcExpr *const *idx)
{
	tc_buf_puts(H->pr.out, v->name);
	for (int d = 0; d < v->rank; d++) {
		const TcVar *lv = idx[d]->kind == TC_EX_VAR ? idx[d]->u.var : NULL;
		bool found = false;
		for (int i = 0; i < H->nanchors && lv; i++)
			found |= H->anchors[i]->u.loop.var == lv;
		if (!found) {
			error(H, idx[d]->loc, "internal error: element of register "
			      "fragment '%s' outside the loops that own it", v->name);
			return;
		}
		tc_buf_printf(H->pr.out, "[%s]",
			      fresh(H, tc_fmt(H->a, "%s_r", lv->name)));
	}
}

/* The element as an lvalue in its storage type. */
static void
element_ref(Hip *H, const TcVar *v, TcExpr *const *idx)
{
	if (v->kind == TC_VAR_TENSOR) {
		tc_buf_printf(H->pr.out, "%s[", v->name);
		tensor_offset(H, v, idx);
		tc_buf_puts(H->pr.out, "]");
	} else if (is_reg(v)) {
		reg_element(H, v, idx);
	} else {
		smem_base(H, v);
		tc_buf_puts(H->pr.out, "[");
		smem_offset(H, v, idx);
		tc_buf_puts(H->pr.out, "]");
	}
}

static void
hook_load(TcCPrinter *pr, const TcExpr *e)
{
	Hip *H = pr->ctx;
	const TcVar *v = e->u.load.var;
	bool wrap = narrow_float(v->dtype) && !is_reg(v);
	if (wrap)
		tc_buf_puts(pr->out, "tilec::to_float(");
	element_ref(H, v, e->u.load.idx);
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

static const TcCHooks hip_hooks = {
	.value_type = value_type,
	.func_name = func_name,
	.load = hook_load,
	.convert = hook_convert,
};

static void
expr(Hip *H, const TcExpr *e)
{
	tc_c_expr(&H->pr, e);
}

/* Store `value` into the element, converting to the storage type. */
static void
store(Hip *H, const TcVar *v, TcExpr *const *idx, const TcExpr *value)
{
	TcBuf *b = H->pr.out;
	element_ref(H, v, idx);
	tc_buf_puts(b, " = ");
	if (narrow_float(v->dtype) && !is_reg(v)) {
		tc_buf_printf(b, "tilec::from_float<%s>(", storage_type(v->dtype));
		expr(H, value);
		tc_buf_puts(b, ")");
	} else if (narrow_float(v->dtype)) {
		/* Registers hold floats; round them to the fragment's type. */
		tc_buf_printf(b, "tilec::to_float(tilec::from_float<%s>(",
			      storage_type(v->dtype));
		expr(H, value);
		tc_buf_puts(b, "))");
	} else {
		expr(H, value);
	}
	tc_buf_puts(b, ";\n");
}

/* --- Comments ---------------------------------------------------------------------- */

static void
stmt_comment(Hip *H, const TcStmt *s, const char *extra)
{
	char *snip = tc_c_source_snippet(H->a, H->prog->text, s->loc);
	if (extra)
		snip = tc_fmt(H->a, "%s%s", snip ? snip : "", extra);
	tc_c_loc_comment(&H->pr, s->loc, snip);
}

/* --- Cooperative element loops --------------------------------------------------------
 * A loop over every element of a tile shape, spread over the block's threads:
 *   for (int e = threadIdx.x; e < N; e += THREADS) { const int t0 = ..., t1 = ...; */

static const char *const tile_idx[TC_MAX_RANK] = {
	"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"
};

static void
spread_loop_open(Hip *H, const TcVar *shape)
{
	TcBuf *b = H->pr.out;
	long long total = count(shape);
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %lld) {\n",
		      H->e, H->e, total, H->e, H->threads);
	b->indent++;
	long long inner = total;
	tc_buf_puts(b, "const int ");
	for (int i = 0; i < shape->rank; i++) {
		inner /= ext(shape, i);
		if (i)
			tc_buf_puts(b, ", ");
		if (i == 0 && shape->rank == 1)
			tc_buf_printf(b, "%s = %s", H->tix[i], H->e);
		else if (i == 0)
			tc_buf_printf(b, "%s = %s / %lld", H->tix[i], H->e, inner);
		else if (i == shape->rank - 1)
			tc_buf_printf(b, "%s = %s %% %lld", H->tix[i], H->e,
				      ext(shape, i));
		else
			tc_buf_printf(b, "%s = %s / %lld %% %lld", H->tix[i], H->e,
				      inner, ext(shape, i));
	}
	tc_buf_puts(b, ";\n");
}

/* Expressions naming t0.. as IR: variables for the tile indices. */
typedef struct TileIdx {
	TcVar vars[TC_MAX_RANK]; /* t0, t1, ... as LOCAL i32 vars */
	TcExpr *e[TC_MAX_RANK];  /* VAR expressions of them */
} TileIdx;

static void
tile_idx_init(Hip *H, TileIdx *ti)
{
	for (int i = 0; i < TC_MAX_RANK; i++) {
		memset(&ti->vars[i], 0, sizeof ti->vars[i]);
		ti->vars[i].kind = TC_VAR_LOCAL;
		ti->vars[i].name = H->tix[i];
		ti->vars[i].dtype = TC_DT_I32;
		ti->e[i] = tc_expr_var(H->a, &ti->vars[i], (TcLoc){ 0 });
	}
}

/* The indices into r's var of tile element (t0, t1, ...): origin plus the
 * tile index on the covered dims. */
static void
region_index(Hip *H, const TcRegion *r, const TileIdx *ti, TcExpr **out)
{
	for (int i = 0; i < r->var->rank; i++)
		out[i] = r->origin[i];
	for (int i = 0; i < r->ndims; i++) {
		int d = r->dims[i];
		long long o;
		if (tc_expr_const(r->origin[d], &o) && o == 0)
			out[d] = ti->e[i];
		else
			out[d] = tc_expr_binary(H->a, TC_OP_ADD, r->origin[d],
						ti->e[i], r->loc);
	}
}

/* `idx0 < E0 && idx1 < E1 ...` for a tensor region element; false (and
 * nothing printed) when the region is a buffer, always in bounds. */
static bool
print_bounds(Hip *H, const TcRegion *r, TcExpr *const *idx)
{
	if (r->var->kind != TC_VAR_TENSOR)
		return false;
	TcBuf *b = H->pr.out;
	for (int i = 0; i < r->var->rank; i++) {
		if (i)
			tc_buf_puts(b, " && ");
		tc_c_expr_prec(&H->pr, idx[i], tc_binop_prec(TC_OP_LT) + 1);
		tc_buf_puts(b, " < ");
		tc_c_expr_prec(&H->pr, r->var->shape[i], tc_binop_prec(TC_OP_LT) + 1);
	}
	return true;
}

/* --- Tile operations ----------------------------------------------------------------- */

static void
close_brace(Hip *H)
{
	H->pr.out->indent--;
	tc_buf_puts(H->pr.out, "}\n");
}

/* The bits of threadIdx.x that the enclosing anchored loops' classes depend
 * on, as C++ text ("x_rows::BITS | x_cols::BITS"), or NULL if none. */
static const char *
anchored_bits(Hip *H)
{
	const char *bits = NULL;
	for (int i = 0; i < H->nanchors; i++) {
		const TcStmt *l = H->anchors[i];
		const char *d = dist_of(H, l->u.loop.anchor, l->u.loop.anchor_dim);
		bits = bits ? tc_fmt(H->a, "%s | %s::BITS", bits, d)
			    : tc_fmt(H->a, "%s::BITS", d);
	}
	return bits;
}

/* The row and column distributions of a register fragment for the copy
 * helpers: one-dim fragments are one row (tilec::One). */
static const char *
rows_of(Hip *H, const TcVar *v)
{
	return v->rank == 2 ? dist_of(H, v, 0) : "tilec::One";
}

static const char *
cols_of(Hip *H, const TcVar *v)
{
	return dist_of(H, v, v->rank - 1);
}

static const char *
as_2d(Hip *H, const TcVar *v)
{
	return v->rank == 2 ? v->name : tc_fmt(H->a, "tilec::as_row(%s)", v->name);
}

/* Loops over every element a thread holds of register fragment v, with
 * counters r0 and r1. */
static void
reg_loops_open(Hip *H, const TcVar *v)
{
	TcBuf *b = H->pr.out;
	for (int d = 0; d < v->rank; d++) {
		const char *r = d ? H->r1 : H->r0;
		tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++)\n",
			      r, r, dist_of(H, v, d), r);
	}
	tc_buf_puts(b, "{\n");
	b->indent++;
}

static const char *
reg_at(Hip *H, const TcVar *v)
{
	return v->rank == 2 ? tc_fmt(H->a, "%s[%s][%s]", v->name, H->r0, H->r1)
			    : tc_fmt(H->a, "%s[%s]", v->name, H->r0);
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
 * run along the tensor's last dim: the vectorized helper. */
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
 * min(extent, shape - origin). */
static void
valid_extent(Hip *H, const TcRegion *r, const TcVar *tile, int i)
{
	TcBuf *b = H->pr.out;
	int d = r->dims[i];
	tc_buf_printf(b, "min(%lld, ", ext(tile, i));
	tc_c_expr_prec(&H->pr, r->var->shape[d], tc_binop_prec(TC_OP_SUB));
	tc_buf_puts(b, " - ");
	tc_c_expr_prec(&H->pr, r->origin[d], tc_binop_prec(TC_OP_SUB) + 1);
	tc_buf_puts(b, ")");
}

/* The arguments a box helper takes after the tensor pointer: the row
 * stride along the tile's first dim, the valid rows and the valid columns
 * (zero rows when a dim the tile does not cover is out of range):
 * `,\n\tLD, ROWS, COLS`. */
static void
box_args(Hip *H, const TcRegion *r, const TcVar *tile)
{
	TcBuf *b = H->pr.out;
	const TcVar *t = r->var;
	bool two = tile->rank == 2;
	tc_buf_puts(b, ",\n\t");
	if (two) {
		bool first = true;
		for (int i = r->dims[0] + 1; i < t->rank; i++) {
			if (!first)
				tc_buf_puts(b, " * ");
			tc_c_expr_prec(&H->pr, t->shape[i], tc_binop_prec(TC_OP_MUL) + 1);
			first = false;
		}
	} else {
		tc_buf_puts(b, "0");
	}
	tc_buf_puts(b, ", ");
	bool fixed = false;
	for (int i = 0; i < t->rank; i++) {
		bool covered = false;
		for (int j = 0; j < r->ndims; j++)
			covered |= r->dims[j] == i;
		if (covered)
			continue;
		tc_buf_puts(b, fixed ? " && " : "(");
		tc_c_expr_prec(&H->pr, r->origin[i], tc_binop_prec(TC_OP_LT) + 1);
		tc_buf_puts(b, " < ");
		tc_c_expr_prec(&H->pr, t->shape[i], tc_binop_prec(TC_OP_LT) + 1);
		fixed = true;
	}
	if (fixed)
		tc_buf_puts(b, ") ? ");
	if (two)
		valid_extent(H, r, tile, 0);
	else
		tc_buf_puts(b, "1");
	if (fixed)
		tc_buf_puts(b, " : 0");
	tc_buf_puts(b, ", ");
	valid_extent(H, r, tile, r->ndims - 1);
}

/* tensor -> shared: tilec::copy_g2s, 16-byte vectors. */
static void
copy_g2s(Hip *H, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	const TcVar *v = dst->var, *t = src->var;
	TcBuf *b = H->pr.out;
	tc_buf_printf(b, "tilec::copy_g2s<%s, %lld, %lld, %lld>(",
		      storage_type(v->dtype), v->rank == 2 ? ext(v, 0) : 1LL,
		      ext(v, v->rank - 1), H->threads);
	smem_base(H, v);
	tc_buf_printf(b, ", %lld, %s + ", row_stride(v), t->name);
	tensor_offset(H, t, src->origin);
	box_args(H, src, v);
	tc_buf_puts(b, ");\n");
}

/* dst += value atomically: tilec::atomic_add(&ELEMENT, VALUE). */
static void
atomic_add(Hip *H, const TcVar *t, TcExpr *const *idx, const char *value_text,
	   const TcExpr *value)
{
	TcBuf *b = H->pr.out;
	tc_buf_puts(b, "tilec::atomic_add(&");
	element_ref(H, t, idx);
	tc_buf_puts(b, ", ");
	if (value_text)
		tc_buf_puts(b, value_text);
	else
		expr(H, value);
	tc_buf_puts(b, ");\n");
}

/* Any copy, element by element over the block's threads. */
static void
copy_generic(Hip *H, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	const TcVar *tile = src->whole ? src->var : dst->var;
	TcBuf *b = H->pr.out;
	TileIdx ti;
	tile_idx_init(H, &ti);
	TcExpr *di[TC_MAX_RANK], *si[TC_MAX_RANK];
	region_index(H, dst, &ti, di);
	region_index(H, src, &ti, si);
	spread_loop_open(H, tile);
	TcExpr *load = tc_expr_new(H->a, TC_EX_LOAD, src->var->dtype, s->loc);
	load->u.load.var = src->var;
	for (int i = 0; i < src->var->rank; i++)
		load->u.load.idx[i] = si[i];
	if (dst->var->kind == TC_VAR_TENSOR) {
		tc_buf_puts(b, "if (");
		print_bounds(H, dst, di);
		tc_buf_puts(b, ")\n");
		b->indent++;
		if (s->kind == TC_ST_ATOMIC_ADD)
			atomic_add(H, dst->var, di, NULL, load);
		else
			store(H, dst->var, di, load);
		b->indent--;
	} else if (src->var->kind == TC_VAR_TENSOR) {
		/* (in bounds) ? src : 0, with the bounds printed as text. */
		TcExpr *zero = tc_expr_float(H->a, 0.0, TC_DT_F32, s->loc);
		element_ref(H, dst->var, di);
		tc_buf_puts(b, " = ");
		bool narrow = narrow_float(dst->var->dtype);
		if (narrow)
			tc_buf_printf(b, "tilec::from_float<%s>(",
				      storage_type(dst->var->dtype));
		tc_buf_puts(b, "(");
		print_bounds(H, src, si);
		tc_buf_puts(b, ") ? ");
		tc_buf_printf(b, "(%s)", value_type(dst->var->dtype));
		tc_c_expr_prec(&H->pr, load, TC_PREC_UNARY);
		tc_buf_puts(b, " : ");
		tc_c_expr_prec(&H->pr, zero, TC_PREC_SELECT);
		tc_buf_puts(b, narrow ? ");\n" : ";\n");
	} else {
		store(H, dst->var, di, load);
	}
	close_brace(H);
}

/* Copies that involve a register fragment. */
static void
copy_reg(Hip *H, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	TcBuf *b = H->pr.out;
	bool atomic = s->kind == TC_ST_ATOMIC_ADD;
	const TcVar *f = is_reg(dst->var) ? dst->var : src->var;
	const TcRegion *other = f == dst->var ? src : dst;
	const TcVar *o = other->var;
	/* Register <-> register, one distribution. */
	if (is_reg(dst->var) && is_reg(src->var)) {
		if (!same_dists(dst->var, src->var)) {
			error(H, s->loc, "internal error: copy between register "
			      "fragments of different layouts");
			return;
		}
		reg_loops_open(H, dst->var);
		if (narrow_float(dst->var->dtype))
			tc_buf_printf(b, "%s = tilec::to_float(tilec::from_float<%s>(%s));\n",
				      reg_at(H, dst->var), storage_type(dst->var->dtype),
				      reg_at(H, src->var));
		else
			tc_buf_printf(b, "%s = %s;\n", reg_at(H, dst->var),
				      reg_at(H, src->var));
		close_brace(H);
		return;
	}
	/* Register <-> shared memory (a whole buffer). */
	if (o->kind == TC_VAR_BUFFER && other->whole && !atomic) {
		if (f == dst->var) {
			tc_buf_printf(b, "tilec::copy_s2r<%s, %s>(%s, ", rows_of(H, f),
				      cols_of(H, f), as_2d(H, f));
			smem_base(H, o);
			tc_buf_printf(b, ", %lld);\n", row_stride(o));
		} else {
			tc_buf_printf(b, "tilec::copy_r2s<%s, %s>(", rows_of(H, f),
				      cols_of(H, f));
			smem_base(H, o);
			tc_buf_printf(b, ", %lld, %s);\n", row_stride(o), as_2d(H, f));
		}
		return;
	}
	/* Register <-> a tensor region whose last tile dim is the tensor's
	 * last (unit stride): the vectorized helpers. */
	if (o->kind == TC_VAR_TENSOR && !atomic &&
	    other->dims[other->ndims - 1] == o->rank - 1 &&
	    (other->ndims < 2 || other->dims[0] < other->dims[1])) {
		if (f == dst->var)
			tc_buf_printf(b, "tilec::copy_g2r<%s, %s>(%s, %s + ", rows_of(H, f),
				      cols_of(H, f), as_2d(H, f), o->name);
		else
			tc_buf_printf(b, "tilec::copy_r2g<%s, %s>(%s + ", rows_of(H, f),
				      cols_of(H, f), o->name);
		tensor_offset(H, o, other->origin);
		box_args(H, other, f);
		if (f == dst->var)
			tc_buf_puts(b, ");\n");
		else
			tc_buf_printf(b, ", %s);\n", as_2d(H, f));
		return;
	}
	/* Anything else: element by element over what this thread holds. */
	TileIdx ti;
	tile_idx_init(H, &ti);
	ti.vars[0].name = f->rank == 2 ? H->row : H->col;
	ti.vars[1].name = H->col;
	TcExpr *oi[TC_MAX_RANK];
	region_index(H, other, &ti, oi);
	reg_loops_open(H, f);
	if (f->rank == 2)
		tc_buf_printf(b, "const int %s = %s::index(%s), %s = %s::index(%s);\n",
			      H->row, dist_of(H, f, 0), H->r0, H->col,
			      dist_of(H, f, 1), H->r1);
	else
		tc_buf_printf(b, "const int %s = %s::index(%s);\n", H->col,
			      dist_of(H, f, 0), H->r0);
	if (f == src->var) {
		tc_buf_printf(b, "if (tilec::leader<%s::BITS", dist_of(H, f, 0));
		if (f->rank == 2)
			tc_buf_printf(b, " | %s::BITS", dist_of(H, f, 1));
		tc_buf_puts(b, ">()");
		if (o->kind == TC_VAR_TENSOR) {
			tc_buf_puts(b, " && ");
			print_bounds(H, other, oi);
		}
		tc_buf_puts(b, ")\n");
		b->indent++;
		if (atomic) {
			atomic_add(H, o, oi, reg_at(H, f), NULL);
		} else {
			element_ref(H, o, oi);
			tc_buf_printf(b, " = tilec::from_float<%s>(%s);\n",
				      storage_type(o->dtype), reg_at(H, f));
		}
		b->indent--;
	} else {
		tc_buf_printf(b, "%s = ", reg_at(H, f));
		bool bounded = o->kind == TC_VAR_TENSOR;
		if (bounded) {
			tc_buf_puts(b, "(");
			print_bounds(H, other, oi);
			tc_buf_puts(b, ") ? ");
		}
		tc_buf_puts(b, "tilec::to_float(");
		element_ref(H, o, oi);
		tc_buf_puts(b, bounded ? ") : 0.0f;\n" : ");\n");
	}
	close_brace(H);
}

static void
emit_copy(Hip *H, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	if (is_reg(dst->var) || is_reg(src->var))
		copy_reg(H, s);
	else if (s->kind == TC_ST_COPY && copy_g2s_fits(s))
		copy_g2s(H, s);
	else
		copy_generic(H, s);
}

/* tile_gemm.  With an MFMA accumulator: tilec::mfma_ss (A and B in LDS)
 * or tilec::mfma_rs (A in registers); each wave multiplies its TM x TN
 * 16x16 tiles.  Otherwise C is in shared memory and each thread computes
 * some of its elements with a plain k loop. */
static void
emit_gemm(Hip *H, const TcStmt *s)
{
	const TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var,
		    *bv = s->u.gemm.b.var;
	TcBuf *b = H->pr.out;
	bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
	long long K = ext(a, ta ? 0 : 1);
	if (c->layout.kind == TC_LAYOUT_MFMA) {
		int tm = c->layout.dim[0].tiles, tn = c->layout.dim[1].tiles;
		const char *n0 = tc_fmt(H->a, "%s * %d", H->wave_n, tn * 16);
		if (is_reg(a)) {
			tc_buf_printf(b, "tilec::mfma_rs<%d, %d, %lld, %s>(%s, %s, ", tm,
				      tn, K, tb ? "true" : "false", c->name, a->name);
			smem_base(H, bv);
			tc_buf_printf(b, ", %lld, %s);\n", row_stride(bv), n0);
			return;
		}
		tc_buf_printf(b, "tilec::mfma_ss<%d, %d, %lld, %s, %s>(%s, ", tm, tn, K,
			      ta ? "true" : "false", tb ? "true" : "false", c->name);
		smem_base(H, a);
		tc_buf_printf(b, ", %lld, ", row_stride(a));
		smem_base(H, bv);
		tc_buf_printf(b, ", %lld, %s * %d, %s);\n", row_stride(bv), H->wave_m,
			      tm * 16, n0);
		return;
	}
	/* Everything in shared memory: each thread owns elements of C. */
	const char *m = fresh(H, "m"), *n = fresh(H, "n"), *sum = fresh(H, "sum");
	long long M = ext(c, 0), N = ext(c, 1);
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %lld) {\n",
		      H->e, H->e, M * N, H->e, H->threads);
	b->indent++;
	tc_buf_printf(b, "const int %s = %s / %lld, %s = %s %% %lld;\n", m, H->e, N,
		      n, H->e, N);
	tc_buf_printf(b, "float %s = tilec::to_float(", sum);
	smem_base(H, c);
	tc_buf_printf(b, "[%s * %lld + %s]);\n", m, row_stride(c), n);
	tc_buf_printf(b, "for (int %s = 0; %s < %lld; %s++)\n\t%s += tilec::to_float(",
		      H->kk, H->kk, K, H->kk, sum);
	smem_base(H, a);
	if (ta)
		tc_buf_printf(b, "[%s * %lld + %s]", H->kk, row_stride(a), m);
	else
		tc_buf_printf(b, "[%s * %lld + %s]", m, row_stride(a), H->kk);
	tc_buf_puts(b, ") * tilec::to_float(");
	smem_base(H, bv);
	if (tb)
		tc_buf_printf(b, "[%s * %lld + %s]", n, row_stride(bv), H->kk);
	else
		tc_buf_printf(b, "[%s * %lld + %s]", H->kk, row_stride(bv), n);
	tc_buf_puts(b, ");\n");
	smem_base(H, c);
	tc_buf_printf(b, "[%s * %lld + %s] = tilec::from_float<%s>(%s);\n", m,
		      row_stride(c), n, storage_type(c->dtype), sum);
	close_brace(H);
}

static void
emit_fill(Hip *H, const TcStmt *s)
{
	const TcVar *v = s->u.fill.dst.var;
	TcBuf *b = H->pr.out;
	double cv;
	bool is_const = tc_c_const_float(s->u.fill.value, &cv);
	TcExpr *lit = is_const ? tc_expr_float(H->a, cv, TC_DT_F32, s->loc) : NULL;
	if (is_reg(v)) {
		reg_loops_open(H, v);
		tc_buf_printf(b, "%s = ", reg_at(H, v));
		if (lit) {
			expr(H, lit);
		} else {
			tc_buf_puts(b, "(float)(");
			expr(H, s->u.fill.value);
			tc_buf_puts(b, ")");
		}
		tc_buf_puts(b, ";\n");
		close_brace(H);
		return;
	}
	TileIdx ti;
	tile_idx_init(H, &ti);
	spread_loop_open(H, v);
	TcExpr *idx[TC_MAX_RANK];
	for (int i = 0; i < v->rank; i++)
		idx[i] = ti.e[i];
	TcExpr *val = lit;
	if (!val || !tc_dtype_is_float(v->dtype) || v->dtype == TC_DT_F64) {
		val = tc_expr_new(H->a, TC_EX_CAST, tc_dtype_is_int(v->dtype) ?
				  v->dtype : v->dtype == TC_DT_F64 ? TC_DT_F64 :
				  TC_DT_F32, s->loc);
		val->u.cast.arg = s->u.fill.value;
	}
	store(H, v, idx, val);
	close_brace(H);
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
emit_reduce(Hip *H, const TcStmt *s)
{
	const TcVar *src = s->u.reduce.src.var, *dst = s->u.reduce.dst.var;
	TcBuf *b = H->pr.out;
	int dim = s->u.reduce.dim;
	bool acc = s->u.reduce.accumulate;
	const char *op = reduce_op(s->u.reduce.op);
	if (is_reg(src)) {
		/* Each thread reduces what it holds; the threads holding the
		 * same output combine (shuffles, and LDS across waves). */
		const char *out = dist_of(H, src, 1 - dim);
		const char *part = fresh(H, tc_fmt(H->a, "%s_part", dst->name));
		tc_buf_printf(b, "float %s[%s::count];\n", part, out);
		/* smem.c reserves scratch only where waves must combine. */
		const char *scratch = H->k->smem_bytes > H->k->scratch_offset ?
			tc_fmt(H->a, "reinterpret_cast<float *>(tilec_smem + %lld)",
			       H->k->scratch_offset) : "nullptr";
		tc_buf_printf(b, "tilec::reduce2d<%s, %d, %s, %s, %lld>(%s, %s, %s);\n",
			      op, dim, dist_of(H, src, 0), dist_of(H, src, 1),
			      H->threads, part, src->name, scratch);
		tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++)",
			      H->r0, H->r0, out, H->r0);
		if (is_reg(dst)) {
			tc_buf_printf(b, "\n\t%s[%s] = ", dst->name, H->r0);
			if (acc)
				tc_buf_printf(b, "tilec::reduce_combine<%s>(%s[%s], %s[%s]);\n",
					      op, dst->name, H->r0, part, H->r0);
			else
				tc_buf_printf(b, "%s[%s];\n", part, H->r0);
			return;
		}
		tc_buf_printf(b, " {\n");
		b->indent++;
		tc_buf_printf(b, "if (tilec::leader<%s::BITS>()) {\n", out);
		b->indent++;
		tc_buf_printf(b, "const int %s = %s::index(%s);\n", H->o, out, H->r0);
		smem_base(H, dst);
		tc_buf_printf(b, "[%s] = tilec::from_float<%s>(", H->o,
			      storage_type(dst->dtype));
		if (acc) {
			tc_buf_printf(b, "tilec::reduce_combine<%s>(tilec::to_float(", op);
			smem_base(H, dst);
			tc_buf_printf(b, "[%s]), %s[%s]));\n", H->o, part, H->r0);
		} else {
			tc_buf_printf(b, "%s[%s]);\n", part, H->r0);
		}
		close_brace(H);
		close_brace(H);
		return;
	}
	if (src->rank == 2) {
		tc_buf_printf(b, "tilec::smem_reduce<%s, %d, %s, %lld, %lld, %lld>(",
			      op, dim, acc ? "true" : "false", ext(src, 0),
			      ext(src, 1), H->threads);
		smem_base(H, src);
		tc_buf_printf(b, ", %lld, ", row_stride(src));
		smem_base(H, dst);
		tc_buf_puts(b, ");\n");
		return;
	}
	/* Higher ranks: one thread per output, a serial loop over dim. */
	TileIdx ti;
	tile_idx_init(H, &ti);
	spread_loop_open(H, dst);
	TcExpr *si[TC_MAX_RANK], *di[TC_MAX_RANK];
	TcVar kv = { .kind = TC_VAR_LOCAL, .name = H->kk, .dtype = TC_DT_I32 };
	for (int i = 0, j = 0; i < src->rank; i++)
		si[i] = i == dim ? tc_expr_var(H->a, &kv, s->loc) : ti.e[j++];
	for (int i = 0; i < dst->rank; i++)
		di[i] = ti.e[i];
	TcExpr *ld = tc_expr_new(H->a, TC_EX_LOAD, src->dtype, s->loc);
	ld->u.load.var = (TcVar *)src;
	memcpy(ld->u.load.idx, si, sizeof si);
	TcExpr *old = tc_expr_new(H->a, TC_EX_LOAD, dst->dtype, s->loc);
	old->u.load.var = (TcVar *)dst;
	memcpy(old->u.load.idx, di, sizeof di);
	const char *v = fresh(H, "v");
	tc_buf_printf(b, "float %s = ", v);
	if (acc)
		expr(H, old);
	else
		tc_buf_printf(b, "tilec::reduce_init<%s>()", op);
	tc_buf_puts(b, ";\n");
	tc_buf_printf(b, "for (int %s = 0; %s < %lld; %s++)\n\t", H->kk, H->kk,
		      ext(src, dim), H->kk);
	tc_buf_printf(b, "%s = tilec::reduce_combine<%s>(%s, tilec::reduce_value<%s>(",
		      v, op, v, op);
	expr(H, ld);
	tc_buf_puts(b, "));\n");
	element_ref(H, dst, di);
	tc_buf_printf(b, " = tilec::from_float<%s>(%s);\n", storage_type(dst->dtype), v);
	close_brace(H);
}

/* --- Statements ------------------------------------------------------------------------- */

static void emit_stmt(Hip *H, const TcStmt *s);

static void
emit_body(Hip *H, const TcStmt *blk)
{
	for (int i = 0; i < blk->u.block.body.len; i++)
		emit_stmt(H, blk->u.block.body.items[i]);
}

/* A store to memory other threads see, where several threads run the
 * statement alike: only one of them does it. */
static const char *
single_writer(Hip *H)
{
	if (H->block_level)
		return "threadIdx.x == 0";
	if (H->spread)
		return NULL;
	const char *bits = anchored_bits(H);
	return bits ? tc_fmt(H->a, "tilec::leader<%s>()", bits) : NULL;
}

static void
emit_assign(Hip *H, const TcStmt *s)
{
	TcBuf *b = H->pr.out;
	const TcExpr *dst = s->u.assign.dst;
	if (dst->kind == TC_EX_VAR) {
		tc_buf_printf(b, "%s = ", dst->u.var->name);
		expr(H, s->u.assign.value);
		tc_buf_puts(b, ";\n");
		return;
	}
	const TcVar *v = dst->u.load.var;
	const char *guard = is_reg(v) ? NULL : single_writer(H);
	if (guard) {
		tc_buf_printf(b, "if (%s)\n", guard);
		b->indent++;
	}
	store(H, v, dst->u.load.idx, s->u.assign.value);
	if (guard)
		b->indent--;
}

/* A tile_parallel loop whose iterations are spread over the threads: a
 * perfect nest becomes one flat loop. */
static void
emit_spread(Hip *H, const TcStmt *s)
{
	TcBuf *b = H->pr.out;
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
	const char *e = fresh(H, tc_fmt(H->a, "%s_e", loops[0]->u.loop.var->name));
	tc_buf_printf(b, "for (int %s = threadIdx.x; %s < %lld; %s += %lld) {\n",
		      e, e, total, e, H->threads);
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
	bool saved = H->block_level;
	H->block_level = false;
	H->spread++;
	emit_body(H, loops[n - 1]->u.loop.body);
	H->spread--;
	H->block_level = saved;
	close_brace(H);
}

/* A tile_parallel loop that follows a register fragment's distribution:
 * each thread visits the indices it holds. */
static void
emit_anchored(Hip *H, const TcStmt *s)
{
	TcBuf *b = H->pr.out;
	const TcVar *v = s->u.loop.var;
	const char *d = dist_of(H, s->u.loop.anchor, s->u.loop.anchor_dim);
	const char *r = fresh(H, tc_fmt(H->a, "%s_r", v->name));
	tc_buf_printf(b, "#pragma unroll\nfor (int %s = 0; %s < %s::count; %s++) {\n",
		      r, r, d, r);
	b->indent++;
	tc_buf_printf(b, "const int %s = %s::index(%s);\n", v->name, d, r);
	bool saved_block = H->block_level;
	H->block_level = false;
	H->anchors[H->nanchors++] = s;
	emit_body(H, s->u.loop.body);
	H->nanchors--;
	H->block_level = saved_block;
	close_brace(H);
}

/* A serial loop (tile_pipelined included: its copies run in order, before
 * the compute of the same iteration). */
static void
emit_for(Hip *H, const TcStmt *s)
{
	TcBuf *b = H->pr.out;
	if (s->u.loop.async_copies) {
		error(H, s->loc, "internal error: the hip backend has no "
		      "asynchronous copies for the pipeline pass to plan");
		return;
	}
	if (s->u.loop.kind == TC_LOOP_PIPELINED)
		stmt_comment(H, s, ": its copies in order, not pipelined");
	tc_c_for(&H->pr, "int", s->u.loop.var->name, s->u.loop.begin,
		 s->u.loop.end, s->u.loop.step);
	tc_buf_puts(b, " {\n");
	b->indent++;
	emit_body(H, s->u.loop.body);
	close_brace(H);
}

static void
emit_decl(Hip *H, const TcStmt *s)
{
	TcBuf *b = H->pr.out;
	const TcVar *v = s->u.decl.var;
	if (v->kind != TC_VAR_BUFFER) {
		tc_buf_printf(b, "%s %s", value_type(v->dtype), v->name);
		if (s->u.decl.init) {
			tc_buf_puts(b, " = ");
			expr(H, s->u.decl.init);
		}
		tc_buf_puts(b, ";\n");
		return;
	}
	if (is_reg(v)) {
		stmt_comment(H, s, tc_fmt(H->a, ": registers, %s",
			v->rank == 2 ? tc_fmt(H->a, "%s x %s", dist_of(H, v, 0),
					      dist_of(H, v, 1)) :
			dist_of(H, v, 0)));
		if (v->rank == 2)
			tc_buf_printf(b, "float %s[%s::count][%s::count];\n", v->name,
				      dist_of(H, v, 0), dist_of(H, v, 1));
		else
			tc_buf_printf(b, "float %s[%s::count];\n", v->name,
				      dist_of(H, v, 0));
		return;
	}
	stmt_comment(H, s, tc_fmt(H->a, ": shared memory%s",
		v->pad ? tc_fmt(H->a, ", rows padded to %lld", row_stride(v)) : ""));
	tc_buf_printf(b, "%s *%s = reinterpret_cast<%s *>(tilec_smem + %lld);\n",
		      storage_type(v->dtype), v->name, storage_type(v->dtype),
		      v->smem_offset);
}

static void
emit_stmt(Hip *H, const TcStmt *s)
{
	TcBuf *b = H->pr.out;
	switch (s->kind) {
	case TC_ST_BLOCK:
		tc_buf_puts(b, "{\n");
		b->indent++;
		emit_body(H, s);
		close_brace(H);
		break;
	case TC_ST_DECL:
		emit_decl(H, s);
		break;
	case TC_ST_ASSIGN:
		emit_assign(H, s);
		break;
	case TC_ST_FOR:
		if (s->u.loop.kind == TC_LOOP_PARALLEL) {
			stmt_comment(H, s, NULL);
			if (s->u.loop.anchor)
				emit_anchored(H, s);
			else
				emit_spread(H, s);
			break;
		}
		emit_for(H, s);
		break;
	case TC_ST_IF:
		tc_buf_puts(b, "if (");
		expr(H, s->u.cond.cond);
		tc_buf_puts(b, ") {\n");
		b->indent++;
		emit_body(H, s->u.cond.then);
		b->indent--;
		if (s->u.cond.els) {
			tc_buf_puts(b, "} else {\n");
			b->indent++;
			emit_body(H, s->u.cond.els);
			b->indent--;
		}
		tc_buf_puts(b, "}\n");
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
		stmt_comment(H, s, NULL);
		emit_copy(H, s);
		break;
	case TC_ST_GEMM:
		stmt_comment(H, s, NULL);
		emit_gemm(H, s);
		break;
	case TC_ST_FILL:
		stmt_comment(H, s, NULL);
		emit_fill(H, s);
		break;
	case TC_ST_REDUCE:
		stmt_comment(H, s, NULL);
		emit_reduce(H, s);
		break;
	case TC_ST_BARRIER:
		tc_buf_puts(b, "__syncthreads();\n");
		break;
	default:
		tc_unreachable();
	}
}

/* --- The kernel ----------------------------------------------------------------------- */

/* Element types the backend cannot store, and atomic additions into
 * tensors the helpers cannot add to atomically, are located errors. */
static bool
dtypes_supported(Hip *H, const TcStmt *s)
{
	if (!s) {
		for (int i = 0; i < H->k->vars.len; i++) {
			const TcVar *v = H->k->vars.items[i];
			if ((v->kind == TC_VAR_TENSOR || v->kind == TC_VAR_BUFFER) &&
			    !storage_type(v->dtype)) {
				error(H, v->loc, "the hip backend does not support %s "
				      "%s yet ('%s')", tc_dtype_name(v->dtype),
				      v->kind == TC_VAR_TENSOR ? "tensors" : "buffers",
				      v->name);
				return false;
			}
		}
		return dtypes_supported(H, H->k->body);
	}
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!dtypes_supported(H, s->u.block.body.items[i]))
				return false;
		return true;
	case TC_ST_FOR: return dtypes_supported(H, s->u.loop.body);
	case TC_ST_IF:
		return dtypes_supported(H, s->u.cond.then) &&
		       (!s->u.cond.els || dtypes_supported(H, s->u.cond.els));
	case TC_ST_ATOMIC_ADD: {
		TcDtype t = s->u.copy.dst.var->dtype;
		if (t == TC_DT_F32 || t == TC_DT_F64 || t == TC_DT_I32 ||
		    narrow_float(t))
			return true;
		error(H, s->loc, "the hip backend cannot add to %s tensors "
		      "atomically ('%s')", tc_dtype_name(t), s->u.copy.dst.var->name);
		return false;
	}
	default:
		return true;
	}
}

static void
emit_header(Hip *H)
{
	TcBuf *b = H->pr.out;
	tc_buf_printf(b, "// Generated by tilec %s from %s, kernel %s, for %s %s.\n",
		      TILEC_VERSION, H->prog->path, H->k->name, H->t->name,
		      H->t->arch);
	if (H->prog->tunables.len) {
		tc_buf_puts(b, "// Tunables:");
		for (int i = 0; i < H->prog->tunables.len; i++) {
			const TcVar *v = H->prog->tunables.items[i];
			tc_buf_printf(b, " %s=%lld", v->name, v->value);
		}
		tc_buf_puts(b, ".\n");
	}
	long long waves = (H->threads + WAVE - 1) / WAVE;
	tc_buf_printf(b, "// %lld threads (%lld wave%s of %d); %lld bytes of shared "
		      "memory.\n", H->threads, waves, waves == 1 ? "" : "s", WAVE,
		      H->k->smem_bytes);
	if (H->opt->standalone) {
		/* The helpers inline, without their include guard. */
		const TcEmbedded *t = tc_embedded_find("hip/tilec_hip.hpp");
		const char *once = strstr(t->text, "#pragma once\n");
		tc_buf_puts(b, "\n");
		if (once) {
			tc_buf_printf(b, "%.*s", (int)(once - t->text), t->text);
			tc_buf_puts(b, once + strlen("#pragma once\n"));
		} else {
			tc_buf_puts(b, t->text);
		}
	} else {
		tc_buf_puts(b, "#include \"tilec/hip/tilec_hip.hpp\"\n");
	}
}

static void
emit_signature(Hip *H)
{
	TcBuf *b = H->pr.out;
	tc_buf_printf(b, "\nextern \"C\" __global__ void __launch_bounds__(%lld)\n%s(",
		      H->threads, H->k->name);
	for (int i = 0; i < H->k->params.len; i++) {
		const TcVar *v = H->k->params.items[i];
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

/* tile_rasterize(rows): launch order walks groups of `rows` block rows
 * column by column, so blocks running together share operands in L2. */
static void
emit_rasterize(Hip *H, long long group)
{
	TcBuf *b = H->pr.out;
	const char *linear = fresh(H, "linear"), *size = fresh(H, "group_size");
	const char *first = fresh(H, "first_row"), *rows = fresh(H, "group_rows");
	tc_buf_printf(b, "// tile_rasterize(%lld): blocks visit groups of %lld rows "
		      "column by column.\n", group, group);
	tc_buf_printf(b, "const int %s = blockIdx.y * gridDim.x + blockIdx.x;\n",
		      linear);
	tc_buf_printf(b, "const int %s = %lld * gridDim.x;\n", size, group);
	tc_buf_printf(b, "const int %s = %s / %s * %lld;\n", first, linear, size,
		      group);
	tc_buf_printf(b, "const int %s = min((int)gridDim.y - %s, %lld);\n", rows,
		      first, group);
	if (H->k->block[0])
		tc_buf_printf(b, "const int %s = %s %% %s / %s;\n",
			      H->k->block[0]->name, linear, size, rows);
	if (H->k->block[1])
		tc_buf_printf(b, "const int %s = %s + %s %% %s %% %s;\n",
			      H->k->block[1]->name, first, linear, size, rows);
	if (H->k->block[2])
		tc_buf_printf(b, "const int %s = blockIdx.z;\n", H->k->block[2]->name);
}

static void
emit_prologue(Hip *H)
{
	TcBuf *b = H->pr.out;
	if (H->prog->tunables.len) {
		tc_buf_puts(b, "enum {");
		for (int i = 0; i < H->prog->tunables.len; i++) {
			const TcVar *v = H->prog->tunables.items[i];
			tc_buf_printf(b, "%s %s = %lld", i ? "," : "", v->name,
				      v->value);
		}
		tc_buf_puts(b, " };\n");
	}
	if (H->k->smem_bytes)
		tc_buf_puts(b, "extern __shared__ __attribute__((aligned(128))) "
			    "unsigned char tilec_smem[];\n");
	if (H->waves_m && H->waves_n == 1)
		tc_buf_printf(b, "const int %s = threadIdx.x / %d, %s = 0;\n",
			      H->wave_m, WAVE, H->wave_n);
	else if (H->waves_m)
		tc_buf_printf(b, "const int %s = threadIdx.x / %d / %d, "
			      "%s = threadIdx.x / %d %% %d;\n", H->wave_m, WAVE,
			      H->waves_n, H->wave_n, WAVE, H->waves_n);
	/* One alias per distribution class of the register fragments. */
	for (int i = 0; i < H->k->vars.len; i++) {
		const TcVar *v = H->k->vars.items[i];
		if (!is_reg(v))
			continue;
		for (int d = 0; d < v->rank; d++) {
			const TcDist *t = &v->layout.dim[d];
			if (H->dist[t->id])
				continue;
			const char *name = fresh(H, tc_fmt(H->a, "%s_%s", v->name,
							   t->axis ? "cols" : "rows"));
			H->dist[t->id] = name;
			if (t->kind == TC_LAYOUT_MFMA)
				tc_buf_printf(b, "using %s = tilec::Mfma<%d, %d, %d, %d>;\n",
					      name, t->axis, t->tiles,
					      v->layout.warps_m, v->layout.warps_n);
			else
				tc_buf_printf(b, "using %s = tilec::Blocked<%d, %d, %d, %d, %d>;\n",
					      name, t->axis, t->count, t->tr, t->tc,
					      t->vec);
		}
	}
	long long group = 0;
	if (H->k->rasterize)
		tc_expr_const(H->k->rasterize, &group);
	if (group > 1 && H->k->grid[1]) {
		emit_rasterize(H, group);
		return;
	}
	static const char *const dims = "xyz";
	for (int d = 0; d < 3; d++)
		if (H->k->block[d])
			tc_buf_printf(b, "const int %s = blockIdx.%c;\n",
				      H->k->block[d]->name, dims[d]);
}

static bool
hip_emit(const TcProgram *p, const TcKernel *k, const TcTarget *t,
	 const TcOptions *opt, TcBuf *out, TcDiags *d)
{
	TcArena *a = tc_arena_new();
	Hip H = {
		.pr = { .out = out, .hooks = &hip_hooks },
		.a = a, .prog = p, .k = k, .t = t, .opt = opt, .d = d,
		.threads = 128, .block_level = true,
	};
	H.pr.ctx = &H;
	if (k->threads)
		tc_expr_const(k->threads, &H.threads);
	int nclass = 0;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind == TC_VAR_BUFFER && v->layout.kind == TC_LAYOUT_MFMA) {
			H.waves_m = v->layout.warps_m;
			H.waves_n = v->layout.warps_n;
		}
		for (int j = 0; is_reg(v) && j < v->rank; j++)
			if (v->layout.dim[j].id >= nclass)
				nclass = v->layout.dim[j].id + 1;
	}
	H.dist = tc_alloc(a, sizeof(char *) * (size_t)(nclass + 1));
	H.e = fresh(&H, "e");
	for (int i = 0; i < TC_MAX_RANK; i++)
		H.tix[i] = fresh(&H, tile_idx[i]);
	H.row = fresh(&H, "row");
	H.col = fresh(&H, "col");
	H.r0 = fresh(&H, "r0");
	H.r1 = fresh(&H, "r1");
	H.o = fresh(&H, "o");
	H.kk = fresh(&H, "kk");
	H.wave_m = fresh(&H, "wave_m");
	H.wave_n = fresh(&H, "wave_n");
	if (dtypes_supported(&H, NULL)) {
		if (out->len)
			tc_buf_puts(out, "\n");
		emit_header(&H);
		emit_signature(&H);
		emit_prologue(&H);
		emit_body(&H, k->body);
		close_brace(&H);
	}
	tc_arena_free(a);
	return !H.failed;
}

const TcBackend tc_backend_hip = {
	.name = "hip",
	.file_ext = ".hip",
	.emit = hip_emit,
};
