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
 *     has AMX, vpdpbusd where it has AVX512-VNNI, else loops;
 *   - anything else (f64, a narrow accumulator that rounds at every step):
 *     an i, k, j loop nest.
 *
 * AMX helpers pack both operands whole (kc is the call's k) and run
 * 2 x 2 tiles of 16 x 16 over all of it.
 *
 * Cache blocking: b is packed into kc x nr panels that take half of the
 * target's L1d (the other half holds the strip of a the micro-kernel
 * broadcasts from and c's lines), kc split evenly over k so no panel is a
 * sliver.  a is read in place: a block's buffer is contiguous and stays
 * in L2.  The L1d size is the arch's default, or the host's with --arch
 * native (target.c).
 */
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

bool
tc_cpu_gemm(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)a;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		walk(&opt->target, k->body);
	}
	return true;
}
