/*
 * smem.c - shared-memory planning for GPU targets.
 *
 * Input: laid-out, pipelined IR.  Output: every buffer that lives in shared
 * memory (tile_shared buffers, and fragments laid out SMEM) has an offset
 * in the block's one dynamic shared-memory array, row padding chosen to
 * keep warps off a single bank, and its stages; the kernel has its total
 * and the offset of the scratch used by cross-warp reductions; a pipelined
 * loop whose copies are issued inside its gemm has the offset of its
 * mbarriers, after the scratch.  A total over the target's per-block limit
 * is a located error.
 *
 * Padding: a 2-dim buffer whose rows are a multiple of 32 bytes gets 16
 * bytes more per row.  Rows then start in different banks, so the eight
 * 16-byte rows an ldmatrix reads (and the row-strided stores of MMA
 * fragments) hit distinct banks, and 16-byte vector copies stay aligned.
 * A kernel that fits only without padding is planned without it.
 *
 * Swizzle (targets with ldmatrix, TcTarget.ldmatrix): a 2-dim buffer of
 * 16-bit elements that tile copies from
 * tensors write whole (the vectorized copy helper) and matrix-instruction
 * gemms read (ldmatrix), and nothing else touches, keeps unpadded rows of
 * 32, 64 or a multiple of 128 bytes; instead its 16-byte chunks are
 * permuted per row: chunk c of row r lives at chunk c ^ ((r / g) % w), with
 * w = min(row bytes, 128) / 16 chunks and g = 128 / min(row bytes, 128)
 * rows per 128 bytes.  Any eight consecutive rows' chunk c then lie in
 * eight different groups of four banks (an ldmatrix reads without
 * conflict), and a warp's 16-byte copies write one contiguous run (a
 * cp.async writes without conflict, which padding does not give).
 *
 * Swizzle for column reads (the same targets): a 2-dim tile of 1-, 2- or
 * 4-byte elements that only tile copies from tensors write (whole, the
 * vectorized copy helper) and that is read element by element in a
 * parallel nest anchored to a register fragment whose runs of `vec`
 * columns run down the tile's rows (a transpose: yt[j][i] = xs[i][j]) is
 * swizzled with g = vec (TcVar.swizzle_rows) instead of padded: a warp's
 * lanes read rows vec apart, which with padded rows a multiple of 16
 * bytes all start in one bank (8-way conflicts for 2-byte elements);
 * XORed every vec rows, those rows' chunks lie in different bank groups.
 */
#include "ir/tilec_int.h"

/* Bytes of one stage of v, padding included. */
static long long
stage_bytes(const TcVar *v)
{
	long long elems = 1;
	for (int i = 0; i < v->rank - 1; i++)
		elems *= tc_var_extent(v, i);
	elems *= tc_var_extent(v, v->rank - 1) + v->pad;
	return (elems * tc_dtype_storage_bits(v->dtype) + 7) / 8;
}

/* Scratch for reductions from register fragments whose threads combine
 * across warps: one value of the result's value type (8 bytes for f64 and
 * i64, else 4) per (thread, result the thread holds); for reductions of a
 * whole tile to a scalar, one per warp. */
static long long
scratch_bytes(const TcKernel *k, const TcStmt *s, int threads, int warp)
{
	long long need = 0, sub;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if ((sub = scratch_bytes(k, s->u.block.body.items[i],
						 threads, warp)) > need)
				need = sub;
		return need;
	case TC_ST_FOR:
		return scratch_bytes(k, s->u.loop.body, threads, warp);
	case TC_ST_IF:
		need = scratch_bytes(k, s->u.cond.then, threads, warp);
		if (s->u.cond.els &&
		    (sub = scratch_bytes(k, s->u.cond.els, threads, warp)) > need)
			need = sub;
		return need;
	case TC_ST_REDUCE: {
		const TcVar *src = s->u.reduce.src.var;
		if (!tc_layout_is_matrix(src->layout.kind) &&
		    src->layout.kind != TC_LAYOUT_BLOCKED)
			return 0;
		/* MFMA (HIP): along a dim one wave covers whole, the lanes
		 * combine by shuffles alone; LDS is too scarce (64 KiB) to
		 * reserve unused scratch. */
		int warps = s->u.reduce.dim == 1 ? src->layout.warps_n
						 : src->layout.warps_m;
		if (src->layout.kind == TC_LAYOUT_MFMA && warps == 1)
			return 0;
		TcDtype t = s->u.reduce.dst.var->dtype;
		int bytes = t == TC_DT_F64 || t == TC_DT_I64 ? 8 : 4;
		return (long long)threads * src->layout.dim[1 - s->u.reduce.dim].count * bytes;
	}
	case TC_ST_REDUCE_ALL: {
		/* tilec::reduce_block: a value per warp (none for one
		 * warp), or per thread when the warps are not whole. */
		TcDtype t = tc_reduce_all_type(s->u.reduce_all.src.var->dtype);
		int bytes = t == TC_DT_F64 || t == TC_DT_I64 ? 8 : 4;
		if (threads % warp != 0)
			return (long long)threads * bytes;
		return threads == warp ? 0 : (long long)(threads / warp) * bytes;
	}
	default:
		return 0;
	}
}

/* A 2-dim (or 1-dim) tensor -> shared copy of one dtype whose tile columns
 * run along the tensor's last dim: what the GPU backends' vectorized copy
 * helpers take (copy_g2s; copy_g2s_i4 for i4, which moves packed bytes
 * and unpacks nothing).  bool, one byte per 1-bit value, goes element by
 * element. */
bool
tc_copy_g2s_fits(const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	TcDtype t = dst->var->dtype;
	if (!dst->whole || !tc_in_smem(dst->var) ||
	    src->var->kind != TC_VAR_TENSOR || src->var->dtype != t ||
	    dst->var->rank > 2 || (tc_dtype_bits(t) < 8 && t != TC_DT_I4))
		return false;
	return src->dims[src->ndims - 1] == src->var->rank - 1 &&
	       (src->ndims < 2 || src->dims[0] < src->dims[1]);
}

bool
tc_swizzle_accessors(const TcStmt *s, const TcVar *v, bool any_gemm)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!tc_swizzle_accessors(s->u.block.body.items[i], v,
						  any_gemm))
				return false;
		return true;
	case TC_ST_FOR:
		return !tc_expr_touches(s->u.loop.begin, v) &&
		       !tc_expr_touches(s->u.loop.end, v) &&
		       !tc_expr_touches(s->u.loop.step, v) &&
		       tc_swizzle_accessors(s->u.loop.body, v, any_gemm);
	case TC_ST_IF:
		return !tc_expr_touches(s->u.cond.cond, v) &&
		       tc_swizzle_accessors(s->u.cond.then, v, any_gemm) &&
		       (!s->u.cond.els ||
			tc_swizzle_accessors(s->u.cond.els, v, any_gemm));
	case TC_ST_DECL:
		return s->u.decl.var == v || !tc_stmt_touches(s, NULL, v);
	case TC_ST_COPY:
		if (s->u.copy.src.var == v)
			return false;
		return s->u.copy.dst.var != v || tc_copy_g2s_fits(s);
	case TC_ST_GEMM: {
		const TcVar *c = s->u.gemm.c.var;
		/* B computed as it is loaded (fuse_b.c): its loop reads
		 * elements. */
		if (c == v || (s->u.gemm.b_from &&
			       tc_stmt_touches(s->u.gemm.b_from, NULL, v)))
			return false;
		if (s->u.gemm.a.var != v && s->u.gemm.b.var != v)
			return true;
		/* mma_ss reads A and B with ldmatrix, mma_rs reads B so;
		 * wgmma_ss reads both through descriptors. */
		return any_gemm || c->layout.kind == TC_LAYOUT_MMA ||
		       c->layout.kind == TC_LAYOUT_WGMMA;
	}
	default:
		return !tc_stmt_touches(s, NULL, v);
	}
}

/* Whether k's gemms use wgmma (layout.c decides for the whole kernel). */
static bool
uses_wgmma(const TcKernel *k)
{
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind == TC_VAR_BUFFER && v->layout.kind == TC_LAYOUT_WGMMA)
			return true;
	}
	return false;
}

/* 16-bit tiles that ldmatrix or wgmma reads may be swizzled; 8-bit ones
 * only where wgmma reads them (ldmatrix moves 16-bit elements). */
static bool
swizzled(const TcKernel *k, const TcVar *v, const TcOptions *opt)
{
	int bits = tc_dtype_bits(v->dtype);
	if (!opt->target.ldmatrix || v->rank != 2 ||
	    (bits != 16 && !(bits == 8 && uses_wgmma(k))))
		return false;
	long long row = tc_var_extent(v, 1) * bits / 8;
	if (row != 32 && row != 64 && row % 128 != 0)
		return false;
	return tc_swizzle_accessors(k->body, v, false);
}

/* --- Swizzle for column reads --------------------------------------------- */

/* A tile read by columns: copied in whole from tensors, then read element
 * by element in a parallel nest anchored to a register fragment whose
 * columns run down the tile's rows (yt[j][i] = xs[i][j]).  The fragment's
 * threads hold runs of `vec` consecutive columns, so a warp's lanes read
 * rows vec apart; with rows a multiple of 32 bytes, padded or not, those
 * rows start in the same bank (8-way conflicts for 2-byte elements, and
 * no padding that keeps 16-byte rows fixes it).  Swizzled with an XOR
 * that changes every vec rows (smem.c's header; TcVar.swizzle_rows), the
 * lanes' rows land in different 16-byte chunks, so different banks. */
typedef struct ColumnReads {
	const TcVar *v;          /* the tile */
	const TcStmt *loops[16]; /* enclosing parallel loops, outermost first */
	int nloops;
	int group;               /* the rows a lane's neighbour is apart: the
				    reading fragment's vec; 0 none found yet */
	bool ok;                 /* every access so far allows the swizzle */
} ColumnReads;

/* The distribution of the anchored parallel loop whose var is e, or NULL. */
static const TcDist *
anchored_dist(const ColumnReads *c, const TcExpr *e)
{
	if (e->kind != TC_EX_VAR)
		return NULL;
	for (int i = c->nloops - 1; i >= 0; i--) {
		const TcStmt *l = c->loops[i];
		if (l->u.loop.var == e->u.var)
			return l->u.loop.anchor ?
			       &l->u.loop.anchor->layout.dim[l->u.loop.anchor_dim] : NULL;
	}
	return NULL;
}

static TcVisit
column_load(void *ctx, const TcExpr *e)
{
	ColumnReads *c = ctx;
	if (e->kind != TC_EX_LOAD || e->u.load.var != c->v)
		return TC_VISIT_INTO;
	const TcDist *d = anchored_dist(c, e->u.load.idx[0]);
	if (d && d->kind == TC_LAYOUT_BLOCKED && d->axis == 1 && d->vec > 1 &&
	    (c->group == 0 || c->group == d->vec))
		c->group = d->vec;
	return TC_VISIT_INTO;
}

static void
column_expr(ColumnReads *c, const TcExpr *e)
{
	TcVisitor vis = { .expr = column_load, .ctx = c };
	if (e)
		tc_expr_visit(e, &vis);
}

static void
column_stmt(ColumnReads *c, const TcStmt *s)
{
	if (!c->ok || !tc_stmt_touches(s, NULL, c->v))
		return;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			column_stmt(c, s->u.block.body.items[i]);
		return;
	case TC_ST_FOR:
		column_expr(c, s->u.loop.end);
		if (c->nloops == (int)(sizeof c->loops / sizeof c->loops[0])) {
			c->ok = false;
			return;
		}
		c->loops[c->nloops++] = s;
		column_stmt(c, s->u.loop.body);
		c->nloops--;
		return;
	case TC_ST_IF:
		column_expr(c, s->u.cond.cond);
		column_stmt(c, s->u.cond.then);
		if (s->u.cond.els)
			column_stmt(c, s->u.cond.els);
		return;
	case TC_ST_DECL:
		if (s->u.decl.var != c->v)
			column_expr(c, s->u.decl.init);
		return;
	case TC_ST_ASSIGN:
		/* Reads only: the tile is written by its copies alone. */
		if (tc_expr_touches(s->u.assign.dst, c->v) & TC_ROLE_WRITE)
			c->ok = false;
		column_expr(c, s->u.assign.dst);
		column_expr(c, s->u.assign.value);
		return;
	case TC_ST_COPY:
		c->ok = s->u.copy.dst.var == c->v && s->u.copy.src.var != c->v &&
			tc_copy_g2s_fits(s);
		return;
	default:
		c->ok = false;
		return;
	}
}

/* The rows of one XOR value for shared tile v read by columns (see
 * ColumnReads), or 0 when v is not such a tile: a 2-dim tile of 1-, 2- or
 * 4-byte elements whose rows are 32, 64 or a multiple of 128 bytes, on a
 * target that swizzles (TcTarget.ldmatrix: the CUDA helpers). */
static int
column_swizzle(const TcKernel *k, const TcVar *v, const TcOptions *opt)
{
	int bits = tc_dtype_storage_bits(v->dtype);
	if (!opt->target.ldmatrix || v->rank != 2 || bits < 8 || bits > 32 ||
	    v->scope != TC_SCOPE_SHARED)
		return 0;
	long long row = tc_var_extent(v, 1) * bits / 8;
	if (row != 32 && row != 64 && row % 128 != 0)
		return 0;
	ColumnReads c = { .v = v, .ok = true };
	column_stmt(&c, k->body);
	return c.ok ? c.group : 0;
}

static long long
align_up(long long n, long long a)
{
	return (n + a - 1) / a * a;
}

/* After `total` bytes, the mbarriers of every pipelined loop in s whose
 * copies are issued inside its gemm (loop.barriers: full and empty, one
 * each per stage, 8 bytes); returns the new total. */
static long long
place_barriers(TcStmt *s, long long total)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			total = place_barriers(s->u.block.body.items[i], total);
		return total;
	case TC_ST_IF:
		total = place_barriers(s->u.cond.then, total);
		return s->u.cond.els ? place_barriers(s->u.cond.els, total) : total;
	case TC_ST_FOR: {
		total = place_barriers(s->u.loop.body, total);
		long long stages = 0;
		if (!s->u.loop.copies_in_gemm ||
		    !tc_expr_const(s->u.loop.stages, &stages))
			return total;
		s->u.loop.barriers = align_up(total, 8);
		return s->u.loop.barriers + 2 * 8 * stages;
	}
	default:
		return total;
	}
}

/* Place k's shared buffers one after the other, rows padded when `padded`;
 * returns the block's total, scratch included.  In a kernel whose gemms
 * use wgmma, swizzled tiles are what wgmma reads: their rows wider than
 * 128 bytes go in 128-byte column panels, and each starts 1024-byte
 * aligned, since the hardware swizzles by address bits (an 8-row atom of
 * 128-byte rows is 1024 bytes). */
static long long
place(TcKernel *k, long long threads, bool padded, const TcOptions *opt)
{
	long long total = 0;
	bool wgmma = uses_wgmma(k);
	for (int j = 0; j < k->vars.len; j++) {
		TcVar *v = k->vars.items[j];
		if (v->kind != TC_VAR_BUFFER)
			continue;
		v->smem_offset = -1;
		if (!tc_in_smem(v))
			continue;
		int bits = tc_dtype_storage_bits(v->dtype);
		long long row = tc_var_extent(v, v->rank - 1) * bits / 8;
		v->swizzle = swizzled(k, v, opt);
		v->swizzle_rows = v->swizzle ? 0 : column_swizzle(k, v, opt);
		v->swizzle |= v->swizzle_rows > 0;
		v->panels = wgmma && v->swizzle && !v->swizzle_rows && row > 128;
		v->pad = padded && !v->swizzle && v->rank >= 2 &&
			 bits >= 8 && row % 32 == 0 ? 128 / bits : 0;
		total = align_up(total, wgmma && v->swizzle ? 1024 : 128);
		v->smem_offset = total;
		total += stage_bytes(v) * (v->stages > 1 ? v->stages : 1);
	}
	total = align_up(total, 128);
	k->scratch_offset = total;
	total += scratch_bytes(k, k->body, (int)threads,
			       opt->target.warp_size);
	total = place_barriers(k->body, total);
	k->smem_bytes = total;
	return total;
}

bool
tc_smem(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)a;
	if (!opt->target.simt)
		return true;
	bool ok = true;
	long long limit = opt->target.smem_limit;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		long long threads = tc_abi_threads(k, &opt->target);
		/* Padding only speeds things up: without it rather than not
		 * at all (HIP's 64 KiB of LDS). */
		long long total = place(k, threads, true, opt);
		if (limit > 0 && total > limit)
			total = place(k, threads, false, opt);
		if (limit > 0 && total > limit) {
			TcBuf what, why;
			tc_buf_init(&what);
			tc_buf_init(&why);
			for (int j = 0; j < k->vars.len; j++) {
				TcVar *v = k->vars.items[j];
				if (v->kind != TC_VAR_BUFFER || v->smem_offset < 0)
					continue;
				tc_buf_printf(&what, "%s%s %lld",
					      what.len ? ", " : "", v->name,
					      stage_bytes(v) * v->stages);
				/* A fragment that could have been in
				 * registers: say what put it here. */
				if (v->scope != TC_SCOPE_SHARED && v->smem_why)
					tc_buf_printf(&why, "; tile_%s '%s' is "
						      "there, not in registers, "
						      "because %s",
						      tc_scope_name(v->scope),
						      v->name, v->smem_why);
			}
			/* What the buffers leave: scratch for reductions
			 * and the barriers, and alignment. */
			long long rest = total - k->scratch_offset;
			if (rest > 0)
				tc_buf_printf(&what, "%s%lld for reductions and "
					      "barriers", what.len ? ", " : "",
					      rest);
			tc_diag(d, TC_ERROR, k->loc, "kernel '%s' needs %lld bytes "
				"of shared memory (%s); %s %s allows %lld per "
				"block%s", k->name, total, what.data,
				opt->target.name, opt->target.arch, limit,
				why.data ? why.data : "");
			tc_buf_free(&what);
			tc_buf_free(&why);
			ok = false;
		}
	}
	return ok;
}
