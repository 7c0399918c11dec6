/*
 * cpu_gemm.c - how each tile_gemm runs on the CPU: which helper of
 * templates/cpu/gemm.h, its register block and its cache blocking.
 *
 * Input: a checked program for the openmp target (gemm operands are 2-dim
 * whole buffers with constant extents).  Output: stmt->u.gemm.cpu on every
 * GEMM statement (printed by --emit=ir after the gemm, read by
 * emitters/openmp.c, which prints the call it names):
 *
 *   - f32 accumulator, operands held as float (f32, f16, bf16, fp8; the
 *     copies widened them): the register-blocked micro-kernel of the
 *     target's vector width (mr x nr from the target table: 14 x 32 on
 *     AVX-512, 6 x 16 on AVX2, 4 x 16 portable), except bf16 operands on
 *     an AMX target, which go to AMX tiles (tdpbf16ps, exact: the buffers
 *     hold bf16 values);
 *   - i32 accumulator, i8 operands: AMX tiles (tdpbssd) where the target
 *     has AMX, vpdpbusd where it has AVX512-VNNI, vpmaddwd on operands
 *     widened to i16 pairs where it has AVX2 (any x86 target of 8 lanes
 *     or more), else loops;
 *   - anything else (f64, a narrow accumulator that rounds at every step):
 *     an i, k, j loop nest.
 *
 * AMX helpers pack both operands whole (kc is the call's k) and run
 * 2 x 2 tiles of 16 x 16 over all of it; an a stored m x k in whole tiles
 * in a buffer that holds what the tiles hold (i8; bf16 below) is read in
 * place.
 *
 * Buffers as stored: a bf16 buffer is held as float (the copies widen
 * it) unless every statement that touches it is a tile_copy of a bf16
 * tensor tile into all of it or an AMX gemm that reads it, and every such
 * gemm's other operand is held so too: then it holds the bits
 * (var->stored, "as stored" in the IR), its copies are row copies of
 * the bits, and its gemms call the helper for such operands, which packs
 * less and converts nothing.
 *
 * Cache blocking: b is packed into kc x nr panels that take half of the
 * target's L1d (the other half holds the strip of a the micro-kernel
 * broadcasts from and c's lines), kc split evenly over k so no panel is a
 * sliver.  a is read in place: a block's buffer is contiguous and stays
 * in L2.  The L1d size is the arch's default, or the host's with --arch
 * native (target.c).
 */
#include "analysis/walk.h"
#include "passes/passes.h"

/* The f32 micro-kernel family of the target's vector width. */
static const char *
f32_helper(const TcTarget *t)
{
	if (t->vector_lanes >= 16)
		return "tilec_gemm_f32_avx512";
	if (t->vector_lanes >= 8)
		return "tilec_gemm_f32_avx2";
	return "tilec_gemm_f32_generic";
}

/* k per packed panel: nr columns of 4 bytes in half the L1d, in multiples
 * of 8, and k split into equal slices of at most that. */
static int
panel_depth(const TcTarget *t, int nr, long long k)
{
	long long most = t->l1d_bytes / 2 / (nr * 4LL) / 8 * 8;
	if (most < 8)
		most = 8;
	if (k <= most)
		return (int)(k > 0 ? k : 1);
	long long slices = (k + most - 1) / most;
	long long kc = (k + slices - 1) / slices;
	return (int)((kc + 7) / 8 * 8);
}

static bool
float_held(TcDtype d)
{
	return d == TC_DT_F32 || d == TC_DT_F16 || d == TC_DT_BF16 ||
	       d == TC_DT_FP8E4M3 || d == TC_DT_FP8E5M2;
}

/* tile_gemm(c, a, b): its TcCpuGemm. */
static TcCpuGemm
schedule_gemm(const TcTarget *t, const TcStmt *s)
{
	const TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var,
		    *b = s->u.gemm.b.var;
	long long k = tc_var_extent(a, s->u.gemm.trans_a ? 0 : 1);
	TcCpuGemm g = { .kind = TC_CPU_GEMM_LOOPS };
	if (c->dtype == TC_DT_F32 && a->dtype == TC_DT_BF16 &&
	    b->dtype == TC_DT_BF16 && t->amx) {
		g = (TcCpuGemm){ .kind = TC_CPU_GEMM_AMX_BF16,
				 .helper = "tilec_gemm_bf16_amx", .mr = 16,
				 .nr = 16, .kc = (int)k, .pack_b = true };
	} else if (c->dtype == TC_DT_F32 && float_held(a->dtype) &&
		   float_held(b->dtype)) {
		g = (TcCpuGemm){ .kind = TC_CPU_GEMM_F32,
				 .helper = f32_helper(t), .mr = t->gemm_mr,
				 .nr = t->gemm_nr, .pack_b = true };
		g.kc = panel_depth(t, g.nr, k);
	} else if (c->dtype == TC_DT_I32 && a->dtype == TC_DT_I8 &&
		   b->dtype == TC_DT_I8 && t->amx) {
		g = (TcCpuGemm){ .kind = TC_CPU_GEMM_AMX_I8,
				 .helper = "tilec_gemm_i8_amx", .mr = 16,
				 .nr = 16, .kc = (int)k, .pack_b = true };
	} else if (c->dtype == TC_DT_I32 && a->dtype == TC_DT_I8 &&
		   b->dtype == TC_DT_I8 && t->vnni) {
		/* 8 x 32: 16 accumulators of 16 lanes, 4 bytes of k per
		 * vpdpbusd. */
		g = (TcCpuGemm){ .kind = TC_CPU_GEMM_VNNI_I8,
				 .helper = "tilec_gemm_i8_vnni", .mr = 8,
				 .nr = 32, .pack_b = true };
		g.kc = panel_depth(t, g.nr, (k + 3) / 4 * 4);
	} else if (c->dtype == TC_DT_I32 && a->dtype == TC_DT_I8 &&
		   b->dtype == TC_DT_I8 && t->vector_lanes >= 8) {
		/* 6 x 16: 12 accumulators of 8 lanes, a pair of k per
		 * vpmaddwd; b's panel holds 2 bytes an element, half what
		 * panel_depth counts, so its depth leaves room. */
		g = (TcCpuGemm){ .kind = TC_CPU_GEMM_AVX2_I8,
				 .helper = "tilec_gemm_i8_avx2", .mr = 6,
				 .nr = 16, .pack_b = true };
		g.kc = panel_depth(t, g.nr, (k + 1) / 2 * 2);
	}
	return g;
}

static void
walk(const TcTarget *t, TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			walk(t, s->u.block.body.items[i]);
		break;
	case TC_ST_FOR:
		walk(t, s->u.loop.body);
		break;
	case TC_ST_IF:
		walk(t, s->u.cond.then);
		if (s->u.cond.els)
			walk(t, s->u.cond.els);
		break;
	case TC_ST_GEMM:
		s->u.gemm.cpu = schedule_gemm(t, s);
		break;
	default:
		break;
	}
}

/* --- Buffers as stored ---------------------------------------------------- */

typedef struct Held {
	TcArena *a;
	const TcKernel *k;
	bool *ok;      /* by var index: may hold its bits */
	TcLoc *where;  /* by var index: the first use that forbids it */
	TcVec gemms;   /* TcStmt *: the AMX bf16 gemms */
} Held;

static bool
amx_bf16(const TcStmt *s)
{
	return s->kind == TC_ST_GEMM &&
	       s->u.gemm.cpu.kind == TC_CPU_GEMM_AMX_BF16;
}

/* A use of v that holding its bits allows: a plain copy of a bf16 tensor
 * tile (rows along the tensor's last dim) into all of it, or an operand
 * of an AMX bf16 gemm. */
static bool
bits_use(const TcStmt *s, const TcVar *v)
{
	if (s->kind == TC_ST_COPY && s->u.copy.dst.var == v) {
		const TcRegion *src = &s->u.copy.src, *dst = &s->u.copy.dst;
		return dst->whole && src->var->kind == TC_VAR_TENSOR &&
		       src->var->dtype == TC_DT_BF16 && !tc_region_ragged(src) &&
		       src->ndims == v->rank &&
		       src->dims[src->ndims - 1] == src->var->rank - 1 &&
		       s->u.copy.src.var != v;
	}
	if (amx_bf16(s) && s->u.gemm.c.var != v &&
	    (s->u.gemm.a.var == v || s->u.gemm.b.var == v))
		return s->u.gemm.a.whole && s->u.gemm.b.whole;
	return false;
}

/* Clears ok[] for each buffer a statement touches other than as bits_use
 * allows; records the AMX gemms. */
static void
held_uses(void *ctx, TcStmt *s, int par_depth)
{
	Held *H = ctx;
	(void)par_depth;
	if (amx_bf16(s))
		tc_vec_push(H->a, &H->gemms, s);
	for (int i = 0; i < H->k->vars.len; i++) {
		const TcVar *v = H->k->vars.items[i];
		if (H->ok[i] && tc_stmt_own_touches(s, v) && !bits_use(s, v)) {
			H->ok[i] = false;
			H->where[i] = s->loc;
		}
	}
}

/* Which bf16 buffers of k hold their bits, and the helper of each AMX
 * gemm both of whose operands do. */
static void
hold_as_stored(TcArena *a, TcKernel *k)
{
	Held H = { .a = a, .k = k };
	H.ok = tc_alloc(a, sizeof(bool) * (size_t)(k->vars.len + 1));
	H.where = tc_alloc(a, sizeof(TcLoc) * (size_t)(k->vars.len + 1));
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		H.ok[i] = v->kind == TC_VAR_BUFFER && v->dtype == TC_DT_BF16 &&
			  v->rank == 2;
	}
	tc_walk_stmts(k->body, 0, held_uses, &H);
	/* A gemm reads both operands one way: a buffer whose partner in
	 * some gemm stays float stays float too, until nothing changes. */
	for (bool changed = true; changed;) {
		changed = false;
		for (int g = 0; g < H.gemms.len; g++) {
			const TcStmt *s = H.gemms.items[g];
			int ia = s->u.gemm.a.var->index, ib = s->u.gemm.b.var->index;
			if (H.ok[ia] != H.ok[ib]) {
				H.ok[ia] = H.ok[ib] = false;
				changed = true;
			}
		}
	}
	for (int i = 0; i < k->vars.len; i++)
		if (H.ok[i])
			((TcVar *)k->vars.items[i])->stored = true;
	for (int g = 0; g < H.gemms.len; g++) {
		TcStmt *s = H.gemms.items[g];
		const TcVar *va = s->u.gemm.a.var, *vb = s->u.gemm.b.var;
		if (va->stored) {
			s->u.gemm.cpu.helper = "tilec_gemm_bf16_amx_stored";
			continue;
		}
		/* Why not: the operand whose own uses forbid it, else the
		 * pair (each stays float for the other's sake). */
		TcCpuGemm *c = &s->u.gemm.cpu;
		const TcVar *v = H.where[va->index].line ? va :
				 H.where[vb->index].line ? vb : NULL;
		if (v) {
			c->why_loc = H.where[v->index];
			c->why = tc_fmt(a, "'%s' is used at line %d other than "
					"as a copy of a bf16 tensor tile or an "
					"AMX gemm's operand", tc_var_shown(v),
					c->why_loc.line);
		} else {
			c->why = tc_fmt(a, "'%s' or '%s' is read by another "
					"gemm with a float-held operand",
					tc_var_shown(va), tc_var_shown(vb));
			c->why_loc = s->loc;
		}
	}
}

bool
tc_cpu_gemm(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		walk(&opt->target, k->body);
		hold_as_stored(a, k);
	}
	return true;
}
