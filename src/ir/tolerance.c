/*
 * tolerance.c - how far a kernel's float outputs may be from a reference:
 * the one table `tilec run`, `tilec tune` and, through launch manifests
 * (docs/launch.md, "tolerance"), the GPU tools check with.
 *
 * A tolerance is relative: max |got - want| over max |want| across an
 * output.  Integer and bool outputs have none; they compare exactly.
 *
 * Against the interpreter (which evaluates each element's operations in
 * the program's order and types): for f16 and bf16 the rounding of a
 * reduction's partial sums over the rows the tests use (a 1024-long f16
 * softmax row, a K=1024 gemm: errors near 4e-4, checked at 1e-2); for the
 * fp8 formats their own spacing near 1 (e4m3 has 3 mantissa bits, e5m2
 * 2); for f32 and f64 room for fused multiply-adds and vectorised
 * reductions (tests/run.sh's f32 gemm and norms land near 1e-7).
 * Against a library (tools/gpu/run.py checks with cuBLAS, SDPA and
 * torch's norms): another summation order and tensor-core accumulation,
 * so bf16 twice its interpreter tolerance and f32 and f64 ten times.
 * A kernel whose fp8 gemms sum on wgmma, promoted per gemm, says so:
 * its outputs may be TC_PROMOTED_SUM_TOL off whatever their dtype.
 */
#include "ir/tilec_int.h"

static const struct {
	TcDtype dtype;
	double tol[TC_TOL_CLASS_COUNT];
} tolerances[] = {
	{ TC_DT_F64, { 1e-10, 1e-9 } },
	{ TC_DT_F32, { 1e-5, 1e-4 } },
	{ TC_DT_F16, { 1e-2, 1e-2 } },
	{ TC_DT_BF16, { 1e-2, 2e-2 } },
	{ TC_DT_FP8E4M3, { 0.125, 0.125 } },
	{ TC_DT_FP8E5M2, { 0.25, 0.25 } },
};

static const char *const class_names[TC_TOL_CLASS_COUNT] = {
	[TC_TOL_INTERP] = "interp",
	[TC_TOL_LIBRARY] = "library",
};

double
tc_tolerance(TcDtype t, TcTolClass c)
{
	for (size_t i = 0; i < sizeof tolerances / sizeof tolerances[0]; i++)
		if (tolerances[i].dtype == t)
			return tolerances[i].tol[c];
	return 0;
}

double
tc_kernel_tolerance(const TcKernel *k)
{
	double tol = 0;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind != TC_VAR_TENSOR && v->kind != TC_VAR_BUFFER)
			continue;
		double t = tc_tolerance(v->dtype, TC_TOL_INTERP);
		if (t > tol)
			tol = t;
	}
	return tol;
}

static TcVisit
find_promoted(void *ctx, const TcStmt *s)
{
	if (s->kind != TC_ST_GEMM || !s->u.gemm.wgmma_promote)
		return TC_VISIT_INTO;
	*(bool *)ctx = true;
	return TC_VISIT_STOP;
}

double
tc_kernel_sum_tolerance(const TcKernel *k)
{
	bool promoted = false;
	TcVisitor v = { .stmt = find_promoted, .ctx = &promoted };
	tc_stmt_visit(k->body, &v);
	return promoted ? TC_PROMOTED_SUM_TOL : 0;
}

void
tc_tolerance_json(const TcKernel *k, TcBuf *b)
{
	tc_buf_printf(b, "{\"kernel\": %g", tc_kernel_tolerance(k));
	for (int c = 0; c < TC_TOL_CLASS_COUNT; c++) {
		tc_buf_printf(b, ",\n                \"%s\": {", class_names[c]);
		for (size_t i = 0; i < sizeof tolerances / sizeof tolerances[0];
		     i++)
			tc_buf_printf(b, "%s\"%s\": %g", i ? ", " : "",
				      tc_dtype_name(tolerances[i].dtype),
				      tolerances[i].tol[c]);
		tc_buf_puts(b, "}");
	}
	if (tc_kernel_sum_tolerance(k) > 0)
		tc_buf_printf(b, ",\n                \"promoted_sums\": %g",
			      tc_kernel_sum_tolerance(k));
	tc_buf_puts(b, "}");
}
