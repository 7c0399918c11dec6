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
	/* Anchored loops in scope: the loop vars bound to MMA rows/cols. */
	const TcVar *row_var;   /* the row loop's var, or NULL */
	const TcVar *col_var;   /* the column loop's var, or NULL */
	bool row_level;         /* printing statements of a row loop itself */
	int spread;             /* depth of spread parallel loops */
	bool block_level;       /* not inside any parallel loop */
	/* The pipelined loop being printed: its stage index, for references
	 * to staged buffers. */
	const char *stage;      /* e.g. "k_stage", or NULL */
	bool failed;            /* an error was reported */
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

/* An MMA element F[i][j] inside the loops anchored on its rows and columns. */
static void
mma_element(Cuda *C, const TcVar *v, TcExpr *const *idx)
{
	const TcVar *ri = idx[0]->kind == TC_EX_VAR ? idx[0]->u.var : NULL;
	const TcVar *ci = idx[1]->kind == TC_EX_VAR ? idx[1]->u.var : NULL;
	if (ri != C->row_var || ci != C->col_var || !ri || !ci) {
		error(C, idx[0]->loc, "internal error: element of MMA fragment "
		      "'%s' outside the loops that own it", v->name);
		return;
	}
	tc_buf_printf(C->pr.out, "%s[%s_mi][%s_ni][%s_h * 2 + %s_c]", v->name,
		      ri->name, ci->name, ri->name, ci->name);
}

/* The element as an lvalue in its storage type. */
static void
element_ref(Cuda *C, const TcVar *v, TcExpr *const *idx)
{
	if (v->kind == TC_VAR_TENSOR) {
		tc_buf_printf(C->pr.out, "%s[", v->name);
		tensor_offset(C, v, idx);
		tc_buf_puts(C->pr.out, "]");
	} else if (v->layout.kind == TC_LAYOUT_MMA) {
		mma_element(C, v, idx);
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
	bool wrap = narrow_float(v->dtype) &&
		    !(v->kind == TC_VAR_BUFFER && v->layout.kind == TC_LAYOUT_MMA);
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
	bool mma = v->kind == TC_VAR_BUFFER && v->layout.kind == TC_LAYOUT_MMA;
	if (narrow_float(v->dtype) && !mma) {
		tc_buf_printf(b, "tilec::from_float<%s>(", storage_type(v->dtype));
		expr(C, value);
		tc_buf_puts(b, ")");
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
	tc_buf_printf(b, "for (int e = threadIdx.x; e < %lld; e += %lld) {\n",
		      total, C->threads);
	b->indent++;
	long long inner = total;
	tc_buf_puts(b, "const int ");
	for (int i = 0; i < shape->rank; i++) {
		inner /= ext(shape, i);
		if (i)
			tc_buf_puts(b, ", ");
		if (i == 0 && shape->rank == 1)
			tc_buf_printf(b, "%s = e", tile_idx[i]);
		else if (i == 0)
			tc_buf_printf(b, "%s = e / %lld", tile_idx[i], inner);
		else if (i == shape->rank - 1)
			tc_buf_printf(b, "%s = e %% %lld", tile_idx[i], ext(shape, i));
		else
			tc_buf_printf(b, "%s = e / %lld %% %lld", tile_idx[i], inner,
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
		ti->vars[i].name = tile_idx[i];
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

static const char *
warp_m0(Cuda *C, const TcVar *f)
{
	return tc_fmt(C->a, "warp_m * %d", f->layout.tiles_m * 16);
}

static const char *
warp_n0(Cuda *C, const TcVar *f)
{
	return tc_fmt(C->a, "warp_n * %d", f->layout.tiles_n * 8);
}

/* Loops over the elements this thread holds of MMA fragment f, binding
 * row and column indices r and c (as text). */
static void
mma_loops_open(Cuda *C, const TcVar *f)
{
	TcBuf *b = C->pr.out;
	tc_buf_printf(b, "#pragma unroll\nfor (int mi = 0; mi < %d; mi++)\n",
		      f->layout.tiles_m);
	tc_buf_printf(b, "#pragma unroll\nfor (int ni = 0; ni < %d; ni++)\n",
		      f->layout.tiles_n);
	tc_buf_puts(b, "#pragma unroll\nfor (int r = 0; r < 4; r++) {\n");
	b->indent++;
	tc_buf_printf(b, "const int row = tilec::mma_row(%s, mi, r), "
		      "col = tilec::mma_col(%s, ni, r);\n", warp_m0(C, f),
		      warp_n0(C, f));
}

static void
close_brace(Cuda *C)
{
	C->pr.out->indent--;
	tc_buf_puts(C->pr.out, "}\n");
}

/* Value of region element (row, col) of a 2-dim tile as float, for copies
 * into MMA fragments; zero outside a tensor. */
static void
copy_mma(Cuda *C, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	TcBuf *b = C->pr.out;
	TileIdx ti;
	tile_idx_init(C, &ti);
	ti.vars[0].name = "row";
	ti.vars[1].name = "col";
	TcExpr *di[TC_MAX_RANK], *si[TC_MAX_RANK];
	const TcVar *f = dst->var->layout.kind == TC_LAYOUT_MMA ? dst->var
								 : src->var;
	mma_loops_open(C, f);
	region_index(C, dst, &ti, di);
	region_index(C, src, &ti, si);
	bool both = dst->var->layout.kind == TC_LAYOUT_MMA &&
		    src->var->kind == TC_VAR_BUFFER &&
		    src->var->layout.kind == TC_LAYOUT_MMA;
	const char *fv = tc_fmt(C->a, "%s[mi][ni][r]", f->name);
	if (both) {
		tc_buf_printf(b, "%s[mi][ni][r] = %s[mi][ni][r];\n",
			      dst->var->name, src->var->name);
	} else if (dst->var->layout.kind == TC_LAYOUT_MMA) {
		/* Into the fragment: zero outside a tensor. */
		tc_buf_printf(b, "%s = ", fv);
		TcBuf *save = C->pr.out;
		bool bounded = src->var->kind == TC_VAR_TENSOR;
		if (bounded) {
			tc_buf_puts(b, "(");
			print_bounds(C, src, si);
			tc_buf_puts(b, ") ? ");
		}
		tc_buf_puts(b, "tilec::to_float(");
		element_ref(C, src->var, si);
		tc_buf_puts(b, bounded ? ") : 0.0f;\n" : ");\n");
		(void)save;
	} else {
		/* Out of the fragment. */
		if (dst->var->kind == TC_VAR_TENSOR) {
			tc_buf_puts(b, "if (");
			print_bounds(C, dst, di);
			tc_buf_puts(b, ")\n");
			b->indent++;
		}
		element_ref(C, dst->var, di);
		tc_buf_printf(b, " = tilec::from_float<%s>(%s);\n",
			      storage_type(dst->var->dtype), fv);
		if (dst->var->kind == TC_VAR_TENSOR)
			b->indent--;
	}
	close_brace(C);
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

static void
emit_copy(Cuda *C, const TcStmt *s, bool async)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	bool mma = (dst->var->kind == TC_VAR_BUFFER &&
		    dst->var->layout.kind == TC_LAYOUT_MMA) ||
		   (src->var->kind == TC_VAR_BUFFER &&
		    src->var->layout.kind == TC_LAYOUT_MMA);
	if (mma && s->kind == TC_ST_ATOMIC_ADD) {
		const TcVar *f = src->var;
		TileIdx ti;
		tile_idx_init(C, &ti);
		ti.vars[0].name = "row";
		ti.vars[1].name = "col";
		TcExpr *di[TC_MAX_RANK];
		region_index(C, dst, &ti, di);
		mma_loops_open(C, f);
		tc_buf_puts(C->pr.out, "if (");
		print_bounds(C, dst, di);
		tc_buf_puts(C->pr.out, ")\n\tatomicAdd(&");
		element_ref(C, dst->var, di);
		if (narrow_float(dst->var->dtype))
			tc_buf_printf(C->pr.out, ", tilec::from_float<%s>(%s[mi][ni][r]));\n",
				      storage_type(dst->var->dtype), f->name);
		else
			tc_buf_printf(C->pr.out, ", %s[mi][ni][r]);\n", f->name);
		close_brace(C);
	} else if (mma) {
		copy_mma(C, s);
	} else if (s->kind == TC_ST_COPY && copy_g2s_fits(s)) {
		copy_g2s(C, s, async);
	} else {
		copy_generic(C, s);
	}
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
		tc_buf_printf(b, "tilec::mma_ss<%d, %d, %lld, %s, %s>(%s, ",
			      c->layout.tiles_m, c->layout.tiles_n, K,
			      ta ? "true" : "false", tb ? "true" : "false", c->name);
		smem_base(C, a);
		tc_buf_printf(b, ", %lld, ", row_stride(a));
		smem_base(C, bv);
		tc_buf_printf(b, ", %lld, %s, %s);\n", row_stride(bv),
			      warp_m0(C, c), warp_n0(C, c));
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
	if (v->layout.kind == TC_LAYOUT_MMA) {
		tc_buf_printf(b, "tilec::fill(%s, ", v->name);
		if (lit) {
			expr(C, lit);
		} else {
			tc_buf_puts(b, "(float)(");
			expr(C, s->u.fill.value);
			tc_buf_puts(b, ")");
		}
		tc_buf_puts(b, ");\n");
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
	const char *acc = s->u.reduce.accumulate ? "true" : "false";
	if (src->layout.kind == TC_LAYOUT_MMA) {
		tc_buf_printf(b, "tilec::mma_reduce<%s, %d, %s, %d, %d, %d, %d, %lld>(%s, ",
			      reduce_op(s->u.reduce.op), dim, acc,
			      src->layout.tiles_m, src->layout.tiles_n,
			      src->layout.warps_m, src->layout.warps_n, C->threads,
			      src->name);
		smem_base(C, dst);
		tc_buf_printf(b, ", reinterpret_cast<float *>(tilec_smem + %lld), %s, %s);\n",
			      C->k->scratch_offset, warp_m0(C, src), warp_n0(C, src));
		return;
	}
	if (src->rank == 2) {
		tc_buf_printf(b, "tilec::smem_reduce<%s, %d, %s, %lld, %lld, %lld>(",
			      reduce_op(s->u.reduce.op), dim, acc, ext(src, 0),
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
	if (s->u.reduce.accumulate)
		expr(C, old);
	else
		tc_buf_printf(b, "tilec::reduce_init<%s>()",
			      reduce_op(s->u.reduce.op));
	tc_buf_puts(b, ";\n");
	tc_buf_printf(b, "for (int kk = 0; kk < %lld; kk++)\n\t", ext(src, dim));
	tc_buf_printf(b, "v = tilec::reduce_combine<%s>(v, tilec::reduce_value<%s>(",
		      reduce_op(s->u.reduce.op), reduce_op(s->u.reduce.op));
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
	if (C->row_level && !C->col_var)
		return C->warps_n > 1 ? "threadIdx.x % 4 == 0 && warp_n == 0"
				      : "threadIdx.x % 4 == 0";
	return NULL;
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
	bool shared = !(v->kind == TC_VAR_BUFFER && v->layout.kind == TC_LAYOUT_MMA);
	const char *guard = shared ? single_writer(C) : NULL;
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
	const char *e = tc_fmt(C->a, "%s_e", loops[0]->u.loop.var->name);
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

/* A tile_parallel loop following an MMA fragment's rows or columns. */
static void
emit_anchored(Cuda *C, const TcStmt *s)
{
	TcBuf *b = C->pr.out;
	const TcVar *f = s->u.loop.anchor, *v = s->u.loop.var;
	bool rows = s->u.loop.anchor_dim == 0;
	if (rows) {
		tc_buf_printf(b, "#pragma unroll\nfor (int %s_mi = 0; %s_mi < %d; %s_mi++)\n",
			      v->name, v->name, f->layout.tiles_m, v->name);
		tc_buf_printf(b, "#pragma unroll\nfor (int %s_h = 0; %s_h < 2; %s_h++) {\n",
			      v->name, v->name, v->name);
		b->indent++;
		tc_buf_printf(b, "const int %s = tilec::mma_row(%s, %s_mi, %s_h * 2);\n",
			      v->name, warp_m0(C, f), v->name, v->name);
		const TcVar *saved_row = C->row_var;
		bool saved_block = C->block_level, saved_level = C->row_level;
		C->row_var = v;
		C->block_level = false;
		C->row_level = true;
		emit_body(C, s->u.loop.body);
		C->row_var = saved_row;
		C->block_level = saved_block;
		C->row_level = saved_level;
		close_brace(C);
		return;
	}
	tc_buf_printf(b, "#pragma unroll\nfor (int %s_ni = 0; %s_ni < %d; %s_ni++)\n",
		      v->name, v->name, f->layout.tiles_n, v->name);
	tc_buf_printf(b, "#pragma unroll\nfor (int %s_c = 0; %s_c < 2; %s_c++) {\n",
		      v->name, v->name, v->name);
	b->indent++;
	tc_buf_printf(b, "const int %s = tilec::mma_col(%s, %s_ni, %s_c);\n",
		      v->name, warp_n0(C, f), v->name, v->name);
	const TcVar *saved_col = C->col_var;
	bool saved_level = C->row_level;
	C->col_var = v;
	C->row_level = false;
	emit_body(C, s->u.loop.body);
	C->col_var = saved_col;
	C->row_level = saved_level;
	close_brace(C);
}

/* The async copies of a pipelined loop, for iteration `it` into its stage. */
static void
issue_copies(Cuda *C, const TcStmt *loop, const char *it, const char *stage)
{
	TcVar *var = loop->u.loop.var;
	const char *saved_name = var->name, *saved_stage = C->stage;
	var->name = it;
	C->stage = stage;
	const TcVec *body = &loop->u.loop.body->u.block.body;
	for (int i = 0; i < loop->u.loop.async_copies; i++) {
		stmt_comment(C, body->items[i], NULL);
		emit_copy(C, body->items[i], true);
	}
	var->name = saved_name;
	C->stage = saved_stage;
}

static void
emit_pipelined(Cuda *C, const TcStmt *s)
{
	TcBuf *b = C->pr.out;
	const char *k = s->u.loop.var->name;
	long long stages = 1;
	tc_expr_const(s->u.loop.stages, &stages);
	const char *end = tc_fmt(C->a, "%s_end", k);
	const char *pre = tc_fmt(C->a, "%s_pre", k);
	const char *next = tc_fmt(C->a, "%s_next", k);
	const char *stage = tc_fmt(C->a, "%s_stage", k);
	tc_buf_printf(b, "const int %s = ", end);
	expr(C, s->u.loop.end);
	tc_buf_puts(b, ";\n");
	tc_buf_printf(b, "// Prologue: the copies of the first %lld iterations.\n",
		      stages - 1);
	tc_buf_printf(b, "for (int %s = 0; %s < %lld; %s++) {\n", pre, pre,
		      stages - 1, pre);
	b->indent++;
	tc_buf_printf(b, "if (%s < %s) {\n", pre, end);
	b->indent++;
	issue_copies(C, s, pre, pre);
	close_brace(C);
	tc_buf_puts(b, "tilec::cp_async_commit();\n");
	close_brace(C);
	tc_buf_printf(b, "for (int %s = 0; %s < %s; %s++) {\n", k, k, end, k);
	b->indent++;
	tc_buf_printf(b, "const int %s = %s %% %lld;\n", stage, k, stages);
	tc_buf_printf(b, "// Wait for this iteration's copies; every thread is "
		      "done with stage (%s - 1) %% %lld.\n", k, stages);
	tc_buf_printf(b, "tilec::cp_async_wait<%lld>();\n__syncthreads();\n",
		      stages - 2);
	tc_buf_printf(b, "const int %s = %s + %lld;\n", next, k, stages - 1);
	tc_buf_printf(b, "if (%s < %s) {\n", next, end);
	b->indent++;
	issue_copies(C, s, next, tc_fmt(C->a, "(%s %% %lld)", next, stages));
	close_brace(C);
	tc_buf_puts(b, "tilec::cp_async_commit();\n");
	const char *saved = C->stage;
	C->stage = stage;
	const TcVec *body = &s->u.loop.body->u.block.body;
	for (int i = s->u.loop.async_copies; i < body->len; i++)
		emit_stmt(C, body->items[i]);
	C->stage = saved;
	close_brace(C);
	tc_buf_puts(b, "tilec::cp_async_wait<0>();\n");
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
			if (v->layout.kind == TC_LAYOUT_MMA) {
				stmt_comment(C, s, tc_fmt(C->a, ": registers, "
					"%dx%d warps of %dx%d m16n8 tiles",
					v->layout.warps_m, v->layout.warps_n,
					v->layout.tiles_m, v->layout.tiles_n));
				tc_buf_printf(b, "float %s[%d][%d][4];\n", v->name,
					      v->layout.tiles_m, v->layout.tiles_n);
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
		tc_buf_puts(b, "const int warp_m = threadIdx.x / 32, warp_n = 0;\n");
	else if (C->warps_m)
		tc_buf_printf(b, "const int warp_m = threadIdx.x / 32 / %d, "
			      "warp_n = threadIdx.x / 32 %% %d;\n", C->warps_n,
			      C->warps_n);
	static const char *const dims = "xyz";
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
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind == TC_VAR_BUFFER && v->layout.kind == TC_LAYOUT_MMA) {
			C.warps_m = v->layout.warps_m;
			C.warps_n = v->layout.warps_n;
		}
	}
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
