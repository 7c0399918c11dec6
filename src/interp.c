/*
 * interp.c - the reference interpreter: runs a specialized, checked kernel
 * exactly as docs/ir.md defines it, so every backend can be compared with
 * it on the same inputs.
 *
 * Input: a kernel after tc_specialize and tc_check (before any target
 * pass) and the entry point's arguments (args[i] points to parameter i's
 * value; for a tensor, to its data pointer).  Output: the tensors written
 * in place, in their stored dtypes.
 *
 * How values are held: every scalar (parameter, local, loop and block
 * index) and every buffer element is a double, addressed by the var's
 * index in kernel->vars, so nothing is looked up by name while running.
 * Arithmetic is done in double.  Values stored into f16, bf16, fp8 and
 * integer locals or buffers are rounded to what that dtype holds; f32
 * values are kept in double (the reference is at least as precise as any
 * backend).  Tensors stay in their stored format: each access converts
 * (tc_elem_load / tc_elem_store).  Buffer contents are NaN until written,
 * so reading them early shows up in the result.
 *
 * Errors (a direct element access out of bounds, a division by zero, a
 * non-positive serial loop step) are reported to the diagnostics with the
 * IR node's location and stop the run: `failed` is checked after every
 * statement and loop iteration.
 */
#include "tilec_int.h"
#include "tilec_runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Storage of one TENSOR or BUFFER var. */
typedef struct Array {
	void *tensor;                  /* TENSOR: its data, stored dtype */
	double *buf;                   /* BUFFER: its elements */
	long long ext[TC_MAX_RANK];    /* extent of each dim */
	long long stride[TC_MAX_RANK]; /* elements between neighbours */
	long long size;                /* number of elements */
} Array;

typedef struct Interp {
	const TcKernel *k;  /* the kernel being run */
	void **args;        /* its arguments */
	TcDiags *d;         /* where errors go */
	bool count_only;    /* only control flow, counting FLOPs */
	bool failed;        /* an error was reported: unwind */
	double *val;        /* per var index: scalar value */
	Array *arr;         /* per var index: tensor/buffer storage */
	TcInterpStats stats; /* what was counted */
} Interp;

/* --- Element formats ------------------------------------------------------ */

/* An integer value of dtype t from an integral double: wrap to t's width
 * the way a two's complement machine does (NaN gives 0). */
static double
wrap_int(TcDtype t, double v)
{
	if (isnan(v))
		return 0;
	if (v >= 9.2233720368547758e18)
		v = 9.2233720368547758e18 - 1024;
	if (v <= -9.2233720368547758e18)
		v = -9.2233720368547758e18;
	uint64_t u = (uint64_t)(int64_t)v;
	switch (t) {
	case TC_DT_I64: return (double)(int64_t)u;
	case TC_DT_I32: return (double)(int32_t)(uint32_t)u;
	case TC_DT_I8: return (double)(int8_t)(uint8_t)u;
	case TC_DT_U8: return (double)(uint8_t)u;
	case TC_DT_I4: return (double)((int)(u & 15) - ((u & 8) ? 16 : 0));
	default: return v;
	}
}

double
tc_elem_load(TcDtype t, const void *base, size_t i)
{
	switch (t) {
	case TC_DT_F64: return ((const double *)base)[i];
	case TC_DT_F32: return ((const float *)base)[i];
	case TC_DT_F16: return tilec_f16_to_double(((const uint16_t *)base)[i]);
	case TC_DT_BF16: return tilec_bf16_to_double(((const uint16_t *)base)[i]);
	case TC_DT_FP8E4M3:
		return tilec_fp8e4m3_to_double(((const uint8_t *)base)[i]);
	case TC_DT_FP8E5M2:
		return tilec_fp8e5m2_to_double(((const uint8_t *)base)[i]);
	case TC_DT_I64: return (double)((const int64_t *)base)[i];
	case TC_DT_I32: return ((const int32_t *)base)[i];
	case TC_DT_I8: return ((const int8_t *)base)[i];
	case TC_DT_U8: return ((const uint8_t *)base)[i];
	case TC_DT_I4: {
		uint8_t byte = ((const uint8_t *)base)[i / 2];
		int nib = (i & 1) ? byte >> 4 : byte & 15;
		return nib >= 8 ? nib - 16 : nib;
	}
	case TC_DT_BOOL: return ((const uint8_t *)base)[i] != 0;
	default: tc_unreachable();
	}
}

void
tc_elem_store(TcDtype t, void *base, size_t i, double v)
{
	if (tc_dtype_is_int(t) && t != TC_DT_BOOL)
		v = wrap_int(t, trunc(v));
	switch (t) {
	case TC_DT_F64: ((double *)base)[i] = v; break;
	case TC_DT_F32: ((float *)base)[i] = (float)v; break;
	case TC_DT_F16: ((uint16_t *)base)[i] = tilec_f16_from_double(v); break;
	case TC_DT_BF16: ((uint16_t *)base)[i] = tilec_bf16_from_double(v); break;
	case TC_DT_FP8E4M3:
		((uint8_t *)base)[i] = tilec_fp8e4m3_from_double(v);
		break;
	case TC_DT_FP8E5M2:
		((uint8_t *)base)[i] = tilec_fp8e5m2_from_double(v);
		break;
	case TC_DT_I64: ((int64_t *)base)[i] = (int64_t)v; break;
	case TC_DT_I32: ((int32_t *)base)[i] = (int32_t)v; break;
	case TC_DT_I8: ((int8_t *)base)[i] = (int8_t)v; break;
	case TC_DT_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
	case TC_DT_I4: {
		uint8_t *byte = (uint8_t *)base + i / 2;
		uint8_t nib = (uint8_t)((int)v & 15);
		*byte = (i & 1) ? (uint8_t)((*byte & 0x0f) | nib << 4)
				: (uint8_t)((*byte & 0xf0) | nib);
		break;
	}
	case TC_DT_BOOL: ((uint8_t *)base)[i] = v != 0; break;
	default: tc_unreachable();
	}
}

/* splitmix64: a small, well-mixed generator. */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
tc_elem_fill_random(TcDtype t, void *base, size_t n, uint64_t seed, int stream)
{
	uint64_t state = seed * 0x100000001b3ull + (uint64_t)stream;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = next_random(&state);
		double sign = (x >> 63) ? -1.0 : 1.0, v;
		if (tc_dtype_is_float(t))
			v = sign * (0.0625 + 0.9375 * (double)(x >> 11) * 0x1p-53);
		else if (t == TC_DT_BOOL)
			v = (double)(x >> 63);
		else if (t == TC_DT_U8)
			v = (double)(1 + x % 15);
		else
			v = sign * (double)(1 + x % 7);
		tc_elem_store(t, base, i, v);
	}
}

void
tc_elem_fill_range(TcDtype t, void *base, size_t n, uint64_t seed, int stream,
		   double lo, double hi)
{
	uint64_t state = seed * 0x100000001b3ull + (uint64_t)stream;
	/* Integers: lo + x mod the count of values, both ends included. */
	uint64_t span = tc_dtype_is_float(t) ? 0 : (uint64_t)(hi - lo) + 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = next_random(&state);
		double v;
		if (tc_dtype_is_float(t))
			v = lo + (hi - lo) * ((double)(x >> 11) * 0x1p-53);
		else
			v = lo + (double)(span ? x % span : x);
		tc_elem_store(t, base, i, v);
	}
}

size_t
tc_elem_bytes(TcDtype t, size_t n)
{
	if (t == TC_DT_I4)
		return (n + 1) / 2;
	if (t == TC_DT_BOOL)
		return n;
	return n * (size_t)(tc_dtype_bits(t) / 8);
}

/* v as a local or buffer element of dtype t holds it: f32 and f64 stay in
 * double, narrower floats are rounded, integers truncated and wrapped. */
static double
hold(TcDtype t, double v)
{
	switch (t) {
	case TC_DT_F64:
	case TC_DT_F32:
		return v;
	case TC_DT_F16: return tilec_f16_to_double(tilec_f16_from_double(v));
	case TC_DT_BF16: return tilec_bf16_to_double(tilec_bf16_from_double(v));
	case TC_DT_FP8E4M3:
		return tilec_fp8e4m3_to_double(tilec_fp8e4m3_from_double(v));
	case TC_DT_FP8E5M2:
		return tilec_fp8e5m2_to_double(tilec_fp8e5m2_from_double(v));
	case TC_DT_BOOL: return v != 0;
	default: return wrap_int(t, trunc(v));
	}
}

/* --- Expressions ------------------------------------------------------------ */

static void
fail(Interp *in, TcLoc loc, const char *fmt, ...) TC_PRINTF(3, 4);

static void
fail(Interp *in, TcLoc loc, const char *fmt, ...)
{
	if (in->failed)
		return;
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(in->d, TC_ERROR, loc, fmt, ap);
	va_end(ap);
	in->failed = true;
}

static int
var_slot(Interp *in, const TcVar *v)
{
	if (v->index < 0 || v->index >= in->k->vars.len ||
	    in->k->vars.items[v->index] != v)
		tc_bug(__FILE__, __LINE__, "a var outside its kernel's list");
	return v->index;
}

static double eval(Interp *in, const TcExpr *e);

/* The element offset a LOAD names, or -1 after reporting it out of
 * bounds. */
static long long
element_offset(Interp *in, const TcExpr *e)
{
	const TcVar *v = e->u.load.var;
	const Array *a = &in->arr[var_slot(in, v)];
	long long off = 0;
	for (int i = 0; i < v->rank; i++) {
		double x = eval(in, e->u.load.idx[i]);
		if (in->failed)
			return -1;
		if (!(x >= 0 && x < (double)a->ext[i])) {
			fail(in, e->loc,
			     "index %.0f out of bounds for dim %d of %s (extent "
			     "%lld)",
			     x, i, v->name, a->ext[i]);
			return -1;
		}
		off += (long long)x * a->stride[i];
	}
	return off;
}

static double
int_binary(Interp *in, const TcExpr *e, double l, double r)
{
	long long a = (long long)l, b = (long long)r;
	switch (e->u.bin.op) {
	case TC_OP_ADD: return wrap_int(e->dtype, l + r);
	case TC_OP_SUB: return wrap_int(e->dtype, l - r);
	case TC_OP_MUL:
		return wrap_int(e->dtype, (double)((unsigned long long)a *
						   (unsigned long long)b));
	case TC_OP_DIV:
	case TC_OP_REM:
		if (b == 0) {
			fail(in, e->loc, "integer division by zero");
			return 0;
		}
		if (e->u.bin.op == TC_OP_DIV)
			return wrap_int(e->dtype, (double)(a / b));
		return wrap_int(e->dtype, (double)(a % b));
	case TC_OP_SHL:
		return wrap_int(e->dtype,
				(double)(long long)((unsigned long long)a
						    << (b & 63)));
	case TC_OP_SHR: return wrap_int(e->dtype, (double)(a >> (b & 63)));
	case TC_OP_BAND: return wrap_int(e->dtype, (double)(a & b));
	case TC_OP_BXOR: return wrap_int(e->dtype, (double)(a ^ b));
	case TC_OP_BOR: return wrap_int(e->dtype, (double)(a | b));
	default: tc_unreachable();
	}
}

static double
binary(Interp *in, const TcExpr *e)
{
	TcBinop op = e->u.bin.op;
	double l = eval(in, e->u.bin.lhs);
	if (op == TC_OP_LAND && l == 0)
		return 0;
	if (op == TC_OP_LOR && l != 0)
		return 1;
	double r = eval(in, e->u.bin.rhs);
	switch (op) {
	case TC_OP_LAND:
	case TC_OP_LOR: return r != 0;
	case TC_OP_LT: return l < r;
	case TC_OP_LE: return l <= r;
	case TC_OP_GT: return l > r;
	case TC_OP_GE: return l >= r;
	case TC_OP_EQ: return l == r;
	case TC_OP_NE: return l != r;
	default: break;
	}
	if (!tc_dtype_is_float(e->dtype))
		return int_binary(in, e, l, r);
	switch (op) {
	case TC_OP_ADD: return l + r;
	case TC_OP_SUB: return l - r;
	case TC_OP_MUL: return l * r;
	case TC_OP_DIV: return l / r;
	case TC_OP_REM: return fmod(l, r);
	default:
		fail(in, e->loc, "operator %s on %s values",
		     tc_binop_name(op), tc_dtype_name(e->dtype));
		return 0;
	}
}

static double
call(Interp *in, const TcExpr *e)
{
	double x[2] = { 0, 0 };
	for (int i = 0; i < e->u.call.nargs && i < 2; i++)
		x[i] = eval(in, e->u.call.args[i]);
	double r;
	switch (e->u.call.fn) {
	case TC_FN_CEILDIV: {
		long long a = (long long)x[0], b = (long long)x[1];
		if (b == 0) {
			fail(in, e->loc, "ceildiv by zero");
			return 0;
		}
		return wrap_int(e->dtype, (double)tc_ceildiv(a, b));
	}
	case TC_FN_MIN: r = x[0] < x[1] ? x[0] : x[1]; break;
	case TC_FN_MAX: r = x[0] > x[1] ? x[0] : x[1]; break;
	case TC_FN_EXPF: r = exp(x[0]); break;
	case TC_FN_EXP2F: r = exp2(x[0]); break;
	case TC_FN_LOGF: r = log(x[0]); break;
	case TC_FN_LOG2F: r = log2(x[0]); break;
	case TC_FN_SQRTF: r = sqrt(x[0]); break;
	case TC_FN_RSQRTF: r = 1.0 / sqrt(x[0]); break;
	case TC_FN_FABSF: r = fabs(x[0]); break;
	case TC_FN_FMAXF: r = fmax(x[0], x[1]); break;
	case TC_FN_FMINF: r = fmin(x[0], x[1]); break;
	case TC_FN_TANHF: r = tanh(x[0]); break;
	case TC_FN_ERFF: r = erf(x[0]); break;
	case TC_FN_SINF: r = sin(x[0]); break;
	case TC_FN_COSF: r = cos(x[0]); break;
	case TC_FN_POWF: r = pow(x[0], x[1]); break;
	default: tc_unreachable();
	}
	return hold(e->dtype, r);
}

static double
eval(Interp *in, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT: return (double)e->u.ival;
	case TC_EX_FLOAT: return e->u.fval;
	case TC_EX_VAR:
		if (e->u.var->kind == TC_VAR_TUNABLE)
			return (double)e->u.var->value;
		return in->val[var_slot(in, e->u.var)];
	case TC_EX_BINARY: return binary(in, e);
	case TC_EX_UNARY: {
		double x = eval(in, e->u.un.arg);
		switch (e->u.un.op) {
		case TC_UOP_NEG:
			return tc_dtype_is_float(e->dtype) ? -x
							   : wrap_int(e->dtype, -x);
		case TC_UOP_NOT: return x == 0;
		case TC_UOP_BNOT:
			return wrap_int(e->dtype, (double)~(long long)x);
		default: tc_unreachable();
		}
	}
	case TC_EX_SELECT:
		return eval(in, e->u.sel.cond) != 0 ? eval(in, e->u.sel.then)
						    : eval(in, e->u.sel.els);
	case TC_EX_CALL: return call(in, e);
	case TC_EX_CAST: return hold(e->dtype, eval(in, e->u.cast.arg));
	case TC_EX_LOAD: {
		const TcVar *v = e->u.load.var;
		if (in->count_only)
			return 0;
		long long off = element_offset(in, e);
		if (off < 0)
			return 0;
		const Array *a = &in->arr[v->index];
		if (v->kind == TC_VAR_TENSOR)
			return tc_elem_load(v->dtype, a->tensor, (size_t)off);
		return a->buf[off];
	}
	default: tc_unreachable();
	}
}

/* --- Regions ----------------------------------------------------------------- */

/* One operand of a tile operation, resolved for this execution. */
typedef struct Operand {
	const TcVar *var;                 /* tensor or buffer */
	Array *a;                         /* its storage */
	long long origin[TC_MAX_RANK];    /* var->rank indices */
	int ndims;                        /* tile rank */
	int dims[TC_MAX_RANK];            /* tile dim i -> var dim dims[i] */
	TcLoc loc;                        /* for errors */
} Operand;

static bool
resolve(Interp *in, const TcRegion *r, Operand *op)
{
	op->var = r->var;
	op->a = &in->arr[var_slot(in, r->var)];
	op->loc = r->loc;
	if (r->whole) {
		op->ndims = r->var->rank;
		for (int i = 0; i < r->var->rank; i++) {
			op->origin[i] = 0;
			op->dims[i] = i;
		}
		return true;
	}
	op->ndims = r->ndims;
	for (int i = 0; i < r->ndims; i++)
		op->dims[i] = r->dims[i];
	for (int i = 0; i < r->var->rank; i++) {
		op->origin[i] = (long long)eval(in, r->origin[i]);
		if (in->failed)
			return false;
	}
	return true;
}

/* Along the tile's last dim, for the tile row at outer index t[0 .. n-1):
 * the offset of tile column 0 (*base), the step (*step), and the columns
 * [*lo, *hi) that fall inside the var.  Empty when the row is outside. */
static void
row_span(const Operand *op, const long long *t, long long cols,
	 long long *base, long long *step, long long *lo, long long *hi)
{
	long long pos[TC_MAX_RANK];
	const TcVar *v = op->var;
	for (int i = 0; i < v->rank; i++)
		pos[i] = op->origin[i];
	for (int i = 0; i + 1 < op->ndims; i++)
		pos[op->dims[i]] += t[i];
	int last = op->ndims > 0 ? op->dims[op->ndims - 1] : -1;
	*lo = 0;
	*hi = cols;
	*base = 0;
	*step = last >= 0 ? op->a->stride[last] : 0;
	for (int i = 0; i < v->rank; i++) {
		if (i == last) {
			if (-pos[i] > *lo)
				*lo = -pos[i];
			if (op->a->ext[i] - pos[i] < *hi)
				*hi = op->a->ext[i] - pos[i];
		} else if (pos[i] < 0 || pos[i] >= op->a->ext[i]) {
			*hi = *lo = 0;
		}
		*base += pos[i] * op->a->stride[i];
	}
	if (*hi < *lo)
		*hi = *lo;
}

/* The tile shape: the whole-buffer operand's extents. */
static void
tile_shape(const Operand *whole, long long *shape, int *n)
{
	*n = whole->ndims;
	for (int i = 0; i < whole->ndims; i++)
		shape[i] = whole->a->ext[i];
}

/* Advance the odometer t over shape[0 .. n); false when done. */
static bool
next_index(long long *t, const long long *shape, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		if (++t[i] < shape[i])
			return true;
		t[i] = 0;
	}
	return false;
}

static double
read_elem(const Operand *op, long long off)
{
	if (op->var->kind == TC_VAR_TENSOR)
		return tc_elem_load(op->var->dtype, op->a->tensor, (size_t)off);
	return op->a->buf[off];
}

static void
write_elem(const Operand *op, long long off, double v)
{
	if (op->var->kind == TC_VAR_TENSOR)
		tc_elem_store(op->var->dtype, op->a->tensor, (size_t)off, v);
	else
		op->a->buf[off] = hold(op->var->dtype, v);
}

/* A buffer region must lie inside its buffer; only tensors clip. */
static bool
buffer_row_ok(Interp *in, const Operand *op, long long lo, long long hi,
	      long long cols)
{
	if (op->var->kind == TC_VAR_TENSOR || (lo == 0 && hi == cols))
		return true;
	fail(in, op->loc, "tile region runs outside buffer %s",
	     op->var->name);
	return false;
}

/* COPY dst <- src (and ATOMIC_ADD dst += src when add). */
static void
exec_copy(Interp *in, const TcStmt *s, bool add)
{
	Operand dst, src;
	if (!resolve(in, &s->u.copy.dst, &dst) ||
	    !resolve(in, &s->u.copy.src, &src))
		return;
	long long shape[TC_MAX_RANK];
	int n;
	tile_shape(s->u.copy.src.whole ? &src : &dst, shape, &n);
	if (dst.ndims != n || src.ndims != n) {
		fail(in, s->loc, "tile copy between ranks %d and %d",
		     dst.ndims, src.ndims);
		return;
	}
	long long cols = n > 0 ? shape[n - 1] : 1;
	long long t[TC_MAX_RANK] = { 0 };
	for (int i = 0; i < n; i++)
		if (shape[i] <= 0)
			return;
	do {
		long long sb, ss, slo, shi, db, ds, dlo, dhi;
		row_span(&src, t, cols, &sb, &ss, &slo, &shi);
		row_span(&dst, t, cols, &db, &ds, &dlo, &dhi);
		if (!buffer_row_ok(in, &src, slo, shi, cols) ||
		    !buffer_row_ok(in, &dst, dlo, dhi, cols))
			return;
		for (long long c = dlo; c < dhi; c++) {
			double v = c >= slo && c < shi ? read_elem(&src, sb + c * ss)
						       : 0.0;
			if (add)
				v += read_elem(&dst, db + c * ds);
			write_elem(&dst, db + c * ds, v);
		}
	} while (n > 1 && next_index(t, shape, n - 1));
}

/* GEMM c += op(a) * op(b). */
static void
exec_gemm(Interp *in, const TcStmt *s)
{
	const TcVar *cv = s->u.gemm.c.var, *av = s->u.gemm.a.var,
		    *bv = s->u.gemm.b.var;
	const Array *ca = &in->arr[var_slot(in, cv)];
	const Array *aa = &in->arr[var_slot(in, av)];
	const Array *ba = &in->arr[var_slot(in, bv)];
	bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
	long long M = ca->ext[0], N = ca->ext[1];
	long long K = ta ? aa->ext[0] : aa->ext[1];
	if (cv->rank != 2 || av->rank != 2 || bv->rank != 2 ||
	    (ta ? aa->ext[1] : aa->ext[0]) != M ||
	    (tb ? ba->ext[1] : ba->ext[0]) != K ||
	    (tb ? ba->ext[0] : ba->ext[1]) != N) {
		fail(in, s->loc, "tile_gemm operand shapes do not agree");
		return;
	}
	in->stats.gemm_flops += 2.0 * (double)M * (double)N * (double)K;
	if (in->count_only)
		return;
	double *c = ca->buf;
	const double *a = aa->buf, *b = ba->buf;
	bool wide = cv->dtype == TC_DT_F32 || cv->dtype == TC_DT_F64;
	if (wide && !tb) {
		/* Row of c += a[m][k] * row k of b: contiguous inner loop. */
		for (long long m = 0; m < M; m++) {
			double *crow = c + m * N;
			for (long long kk = 0; kk < K; kk++) {
				double x = ta ? a[kk * M + m] : a[m * K + kk];
				const double *brow = b + kk * N;
				for (long long nn = 0; nn < N; nn++)
					crow[nn] += x * brow[nn];
			}
		}
		return;
	}
	for (long long m = 0; m < M; m++) {
		for (long long nn = 0; nn < N; nn++) {
			double acc = c[m * N + nn];
			for (long long kk = 0; kk < K; kk++) {
				double x = ta ? a[kk * M + m] : a[m * K + kk];
				double y = tb ? b[nn * K + kk] : b[kk * N + nn];
				acc = wide ? acc + x * y : hold(cv->dtype, acc + x * y);
			}
			c[m * N + nn] = acc;
		}
	}
}

/* FILL dst = value. */
static void
exec_fill(Interp *in, const TcStmt *s)
{
	double v = eval(in, s->u.fill.value);
	if (in->failed)
		return;
	const TcVar *var = s->u.fill.dst.var;
	Array *a = &in->arr[var_slot(in, var)];
	if (var->kind != TC_VAR_BUFFER || !s->u.fill.dst.whole) {
		fail(in, s->loc, "tile_fill needs a whole buffer");
		return;
	}
	v = hold(var->dtype, v);
	for (long long i = 0; i < a->size; i++)
		a->buf[i] = v;
}

/* REDUCE dst = op(src) along dim. */
static void
exec_reduce(Interp *in, const TcStmt *s)
{
	const TcVar *dv = s->u.reduce.dst.var, *sv = s->u.reduce.src.var;
	const Array *da = &in->arr[var_slot(in, dv)];
	const Array *sa = &in->arr[var_slot(in, sv)];
	int dim = s->u.reduce.dim;
	if (dv->kind != TC_VAR_BUFFER || sv->kind != TC_VAR_BUFFER ||
	    dim < 0 || dim >= sv->rank || da->size * sa->ext[dim] != sa->size) {
		fail(in, s->loc, "tile reduction operand shapes do not agree");
		return;
	}
	long long outer = 1, len = sa->ext[dim], inner = sa->stride[dim];
	for (int i = 0; i < dim; i++)
		outer *= sa->ext[i];
	TcReduceOp op = s->u.reduce.op;
	double init = op == TC_RED_MAX ? -INFINITY
		      : op == TC_RED_MIN ? INFINITY : 0.0;
	for (long long o = 0; o < outer; o++) {
		for (long long i = 0; i < inner; i++) {
			double *dst = &da->buf[o * inner + i];
			double acc = s->u.reduce.accumulate ? *dst : init;
			if (op == TC_RED_ABSMAX)
				acc = fabs(acc);
			const double *p = sa->buf + o * len * inner + i;
			for (long long j = 0; j < len; j++) {
				double x = p[j * inner];
				switch (op) {
				case TC_RED_SUM: acc += x; break;
				case TC_RED_MAX: acc = fmax(acc, x); break;
				case TC_RED_MIN: acc = fmin(acc, x); break;
				case TC_RED_ABSMAX: acc = fmax(acc, fabs(x)); break;
				default: tc_unreachable();
				}
			}
			*dst = hold(dv->dtype, acc);
		}
	}
}

/* --- Statements ---------------------------------------------------------------- */

static void exec(Interp *in, const TcStmt *s);

static void
exec_decl(Interp *in, const TcStmt *s)
{
	const TcVar *v = s->u.decl.var;
	int slot = var_slot(in, v);
	if (v->kind == TC_VAR_BUFFER) {
		Array *a = &in->arr[slot];
		if (in->count_only)
			return;
		for (long long i = 0; i < a->size; i++)
			a->buf[i] = NAN;
		return;
	}
	double x = NAN;
	if (s->u.decl.init)
		x = eval(in, s->u.decl.init);
	else if (!tc_dtype_is_float(v->dtype))
		x = 0;
	in->val[slot] = hold(v->dtype, x);
}

static void
exec_assign(Interp *in, const TcStmt *s)
{
	const TcExpr *dst = s->u.assign.dst;
	double x = eval(in, s->u.assign.value);
	if (in->failed)
		return;
	if (dst->kind == TC_EX_VAR) {
		in->val[var_slot(in, dst->u.var)] = hold(dst->u.var->dtype, x);
		return;
	}
	if (in->count_only)
		return;
	const TcVar *v = dst->u.load.var;
	long long off = element_offset(in, dst);
	if (off < 0)
		return;
	Array *a = &in->arr[v->index];
	if (v->kind == TC_VAR_TENSOR)
		tc_elem_store(v->dtype, a->tensor, (size_t)off, x);
	else
		a->buf[off] = hold(v->dtype, x);
}

static void
exec_for(Interp *in, const TcStmt *s)
{
	int slot = var_slot(in, s->u.loop.var);
	if (s->u.loop.kind == TC_LOOP_PARALLEL) {
		if (in->count_only)
			return;
		double end = eval(in, s->u.loop.end);
		for (double i = 0; i < end && !in->failed; i++) {
			in->val[slot] = i;
			exec(in, s->u.loop.body);
		}
		return;
	}
	/* Serial and pipelined: C's for, bound and step re-evaluated. */
	in->val[slot] = eval(in, s->u.loop.begin);
	while (!in->failed && in->val[slot] < eval(in, s->u.loop.end)) {
		if (in->failed)
			return;
		exec(in, s->u.loop.body);
		if (in->failed)
			return;
		double step = eval(in, s->u.loop.step);
		if (step <= 0) {
			fail(in, s->loc, "loop step is %.0f; it must be positive",
			     step);
			return;
		}
		in->val[slot] += step;
	}
}

static void
exec(Interp *in, const TcStmt *s)
{
	if (in->failed)
		return;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len && !in->failed; i++)
			exec(in, s->u.block.body.items[i]);
		return;
	case TC_ST_DECL: exec_decl(in, s); return;
	case TC_ST_ASSIGN: exec_assign(in, s); return;
	case TC_ST_FOR: exec_for(in, s); return;
	case TC_ST_IF:
		if (eval(in, s->u.cond.cond) != 0)
			exec(in, s->u.cond.then);
		else if (s->u.cond.els)
			exec(in, s->u.cond.els);
		return;
	case TC_ST_COPY:
		if (!in->count_only)
			exec_copy(in, s, false);
		return;
	case TC_ST_ATOMIC_ADD:
		if (!in->count_only)
			exec_copy(in, s, true);
		return;
	case TC_ST_GEMM: exec_gemm(in, s); return;
	case TC_ST_FILL:
		if (!in->count_only)
			exec_fill(in, s);
		return;
	case TC_ST_REDUCE:
		if (!in->count_only)
			exec_reduce(in, s);
		return;
	default:
		/* Kinds the target passes introduce never reach here. */
		fail(in, s->loc, "the reference interpreter does not run "
		     "'%s' statements", tc_stmtkind_name(s->kind));
		return;
	}
}

/* --- Setting up a run ----------------------------------------------------------- */

/* A scalar parameter's value, read in its C type. */
static double
scalar_arg(const TcVar *v, const void *p)
{
	switch (v->dtype) {
	case TC_DT_F64: return *(const double *)p;
	case TC_DT_F32: return *(const float *)p;
	case TC_DT_I64: return (double)*(const int64_t *)p;
	case TC_DT_I32: return *(const int32_t *)p;
	case TC_DT_I8: return *(const int8_t *)p;
	case TC_DT_U8: return *(const uint8_t *)p;
	case TC_DT_BOOL: return *(const uint8_t *)p != 0;
	default: return tc_elem_load(v->dtype, p, 0);
	}
}

static void
interp_free(Interp *in)
{
	for (int i = 0; in->arr && i < in->k->vars.len; i++)
		free(in->arr[i].buf);
	free(in->arr);
	free(in->val);
}

/* Load the scalar parameters; NULL args are allowed when no parameter is
 * read (tc_interp_eval on constants). */
static bool
interp_init(Interp *in, const TcKernel *k, void **args, TcDiags *d)
{
	memset(in, 0, sizeof *in);
	in->k = k;
	in->args = args;
	in->d = d;
	size_t n = (size_t)(k->vars.len > 0 ? k->vars.len : 1);
	in->val = calloc(n, sizeof *in->val);
	in->arr = calloc(n, sizeof *in->arr);
	if (!in->val || !in->arr) {
		tc_diag(d, TC_ERROR, k->loc, "out of memory");
		interp_free(in);
		return false;
	}
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		if (v->kind == TC_VAR_SCALAR && args && args[v->param])
			in->val[var_slot(in, v)] = scalar_arg(v, args[v->param]);
	}
	return true;
}

/* Tensor and buffer extents, strides and storage. */
static bool
interp_arrays(Interp *in)
{
	const TcKernel *k = in->k;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind != TC_VAR_TENSOR && v->kind != TC_VAR_BUFFER)
			continue;
		Array *a = &in->arr[i];
		for (int j = 0; j < v->rank; j++) {
			double e = eval(in, v->shape[j]);
			if (in->failed)
				return false;
			if (!(e >= 0 && e < 4e18)) {
				fail(in, v->loc, "dim %d of %s has extent %.0f",
				     j, v->name, e);
				return false;
			}
			a->ext[j] = (long long)e;
		}
		a->size = 1;
		for (int j = v->rank - 1; j >= 0; j--) {
			a->stride[j] = a->size;
			a->size *= a->ext[j];
		}
		if (v->kind == TC_VAR_TENSOR) {
			a->tensor = *(void **)in->args[v->param];
			continue;
		}
		if (in->count_only)
			continue;
		a->buf = malloc(sizeof *a->buf * (size_t)(a->size ? a->size : 1));
		if (!a->buf) {
			fail(in, v->loc, "out of memory for buffer %s", v->name);
			return false;
		}
	}
	return true;
}

bool
tc_interp_eval(const TcKernel *k, const TcExpr *e, void **args, double *out,
	       TcDiags *d)
{
	Interp in;
	if (!interp_init(&in, k, args, d))
		return false;
	*out = eval(&in, e);
	interp_free(&in);
	return !in.failed;
}

bool
tc_interp_run(const TcKernel *k, void **args, bool count_only,
	      TcInterpStats *stats, TcDiags *d)
{
	Interp in;
	if (!interp_init(&in, k, args, d))
		return false;
	in.count_only = count_only;
	long long grid[3] = { 1, 1, 1 };
	bool ok = interp_arrays(&in);
	for (int g = 0; ok && g < 3; g++) {
		if (!k->grid[g])
			continue;
		double e = eval(&in, k->grid[g]);
		if (in.failed || !(e >= 0 && e < 4e18)) {
			fail(&in, k->grid[g]->loc,
			     "the grid has extent %.0f along %c", e, "xyz"[g]);
			ok = false;
			break;
		}
		grid[g] = (long long)e;
	}
	for (long long bz = 0; ok && bz < grid[2]; bz++) {
		for (long long by = 0; by < grid[1] && !in.failed; by++) {
			for (long long bx = 0; bx < grid[0] && !in.failed; bx++) {
				long long idx[3] = { bx, by, bz };
				for (int g = 0; g < 3; g++)
					if (k->block[g])
						in.val[var_slot(&in, k->block[g])] =
							(double)idx[g];
				exec(&in, k->body);
				in.stats.blocks++;
			}
		}
	}
	ok = ok && !in.failed;
	if (stats)
		*stats = in.stats;
	interp_free(&in);
	return ok;
}
