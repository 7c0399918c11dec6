/*
 * abi.c - the kernel ABI: how a host calls a translated kernel.
 *
 * One place says, for each parameter of a kernel on a target, what is
 * passed and how: a tensor is a pointer to its row-major, contiguous
 * elements (in the host's view of its dtype: f16 as uint16_t bit
 * patterns); a scalar is a value of its pass type, which is wider than
 * its dtype where the target's signature widens it (f16, bf16 and fp8
 * scalars as float everywhere; i8, u8 and i4 as int on GPUs, where
 * NVRTC and hiprtc launches take 4-byte slots).  It also says which
 * scalars are the extents of which tensor dims (so a caller can infer
 * them from the tensors, and the GPU emitter knows them non-negative),
 * and the block size and dynamic shared memory a launch uses.
 *
 * Readers: the emitters (kernel signatures, the CPU entry point),
 * export.c (launch functions and headers), run.c (argument slots), and
 * launch.c, which prints all of it into the launch manifest, from which
 * the runtime's checked launch and the Python tools read it.
 *
 * Inputs: a checked kernel (parameters in signature order, shapes over
 * scalars and tunables) and its target.  Nothing here changes the IR.
 */
#include "ir/tilec_int.h"

#include <string.h>

TcDtype
tc_abi_pass_dtype(TcDtype t, TcTargetKind target)
{
	bool gpu = target != TC_TARGET_OPENMP;
	switch (t) {
	case TC_DT_F64: return TC_DT_F64;
	case TC_DT_F32:
	case TC_DT_F16:
	case TC_DT_BF16:
	case TC_DT_FP8E4M3:
	case TC_DT_FP8E5M2: return TC_DT_F32;
	case TC_DT_I64: return TC_DT_I64;
	case TC_DT_I32: return TC_DT_I32;
	case TC_DT_I8:
	case TC_DT_I4: return gpu ? TC_DT_I32 : TC_DT_I8;
	case TC_DT_U8: return gpu ? TC_DT_I32 : TC_DT_U8;
	case TC_DT_BOOL: return TC_DT_BOOL;
	default: tc_unreachable();
	}
}

const char *
tc_abi_scalar_c_type(TcDtype pass)
{
	switch (pass) {
	case TC_DT_F64: return "double";
	case TC_DT_F32: return "float";
	case TC_DT_I64: return "long long";
	case TC_DT_I32: return "int";
	case TC_DT_I8: return "int8_t";
	case TC_DT_U8: return "uint8_t";
	case TC_DT_BOOL: return "bool";
	default: tc_unreachable();
	}
}

const char *
tc_abi_element_c_type(TcDtype t)
{
	switch (t) {
	case TC_DT_F64: return "double";
	case TC_DT_F32: return "float";
	case TC_DT_F16:
	case TC_DT_BF16: return "uint16_t";
	case TC_DT_I64: return "int64_t";
	case TC_DT_I32: return "int32_t";
	case TC_DT_I8: return "int8_t";
	case TC_DT_BOOL: return "bool";
	default: return "uint8_t"; /* fp8, u8, i4 (two per byte) */
	}
}

/* Bytes of a value of pass type t. */
static int
pass_bytes(TcDtype t)
{
	return t == TC_DT_BOOL ? 1 : tc_dtype_bits(t) / 8;
}

long long
tc_abi_threads(const TcKernel *k, const TcTarget *t)
{
	long long threads = t->default_threads;
	if (!t->simt)
		return 1;
	if (k->threads)
		tc_expr_const(k->threads, &threads);
	return threads;
}

long long
tc_abi_launch_threads(const TcKernel *k, const TcTarget *t)
{
	return tc_abi_threads(k, t) + (t->simt ? k->producer_threads : 0);
}

const TcAbi *
tc_abi_of(TcArena *a, const TcKernel *k, const TcTarget *t)
{
	TcAbi *abi = tc_alloc(a, sizeof *abi);
	abi->kernel = k;
	abi->nparams = k->params.len;
	abi->params = tc_alloc(a, sizeof *abi->params *
					  (size_t)(k->params.len + 1));
	abi->threads = tc_abi_launch_threads(k, t);
	abi->smem_bytes = k->smem_bytes;
	abi->ntmaps = k->tmaps.len;
	abi->tmaps = (TcTensorMap *const *)k->tmaps.items;
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		TcAbiParam *p = &abi->params[i];
		p->var = v;
		p->tensor = v->kind == TC_VAR_TENSOR;
		p->dtype = v->dtype;
		if (p->tensor) {
			p->pass = v->dtype;
			p->c_type = tc_fmt(a, "%s%s *", v->is_const ? "const " : "",
					   tc_abi_element_c_type(v->dtype));
			p->bytes = (int)sizeof(void *);
			continue;
		}
		p->pass = tc_abi_pass_dtype(v->dtype, t->kind);
		p->c_type = tc_abi_scalar_c_type(p->pass);
		p->bytes = pass_bytes(p->pass);
	}
	/* Which tensor dims each scalar is the whole declared extent of. */
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		for (int d = 0; v->kind == TC_VAR_TENSOR && d < v->rank; d++) {
			const TcExpr *e = v->shape[d];
			if (e->kind != TC_EX_VAR || e->u.var->kind != TC_VAR_SCALAR)
				continue;
			TcAbiParam *s = &abi->params[e->u.var->param];
			TcAbiExtent *x = tc_alloc(a, sizeof *x *
							 (size_t)(s->nextent_of + 1));
			if (s->nextent_of)
				memcpy(x, s->extent_of,
				       sizeof *x * (size_t)s->nextent_of);
			x[s->nextent_of].param = i;
			x[s->nextent_of].dim = d;
			s->extent_of = x;
			s->nextent_of++;
		}
	}
	return abi;
}

bool
tc_abi_is_extent(const TcKernel *k, const TcVar *v)
{
	if (v->kind != TC_VAR_SCALAR)
		return false;
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *t = k->params.items[i];
		for (int d = 0; t->kind == TC_VAR_TENSOR && d < t->rank; d++)
			if (t->shape[d]->kind == TC_EX_VAR &&
			    t->shape[d]->u.var == v)
				return true;
	}
	return false;
}
