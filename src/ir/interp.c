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
 * index) and every buffer element is a Cell, addressed by the var's index
 * in kernel->vars, so nothing is looked up by name while running.  Which
 * member of a Cell holds the value follows from the static dtype of the
 * var or expression: integers (bool, i4, i8, u8, i32, i64) are int64_t,
 * exact, with C's semantics (docs/language.md, "Integer arithmetic"):
 * conversions between integer types wrap to the narrower width, and what
 * C leaves undefined (signed overflow, division by zero, INT_MIN / -1,
 * shifts by a negative count or by the width or more, left shifts of
 * negative values, a float whose integer part the integer type cannot
 * hold) is a located error.  Floats are held in double, each as its
 * dtype holds it (hold_float): every value of dtype f32 (a result of
 * arithmetic, a call, a conversion, a local, a buffer element) is rounded
 * to float where C11 rounds it (FLT_EVAL_METHOD 0), and f16, bf16 and fp8
 * values to what those hold, once, from the exact value.  An operation on
 * two floats done in double and rounded to float is IEEE single's (double
 * has more than 2 * 24 + 2 bits), so f32 arithmetic is exactly C's; only
 * the tile operations' sums (tile_gemm, the reductions) combine in double
 * and round once per statement.  Tensors stay in their stored format:
 * each access converts (tc_elem_load / tc_elem_store and their _int
 * forms).  Buffer contents are NaN (floats) or 0x5a in every byte
 * (integers, wrapped to the dtype) until written, so reading them early
 * shows up in the result.
 *
 * Errors (a direct element access out of bounds, the integer operations
 * above, a non-positive serial loop step) are reported to the diagnostics
 * with the IR node's location and stop the run: `failed` is checked after
 * every statement and loop iteration.
 */
#include "ir/tilec_int.h"
#include "tilec_runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One value: an integer dtype's in i, a float dtype's in f. */
typedef union Cell {
	double f;
	int64_t i;
} Cell;

/* Storage of one TENSOR or BUFFER var. */
typedef struct Array {
	void *tensor;                  /* TENSOR: its data, stored dtype */
	Cell *buf;                     /* BUFFER: its elements */
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
	Cell *val;          /* per var index: scalar value */
	Array *arr;         /* per var index: tensor/buffer storage */
	TcInterpStats stats; /* what was counted */
	long long sms;      /* the device's SMs (SMS), 0 where none is known */
} Interp;

/* --- Element formats ------------------------------------------------------ */

static bool
is_int(TcDtype t)
{
	return t != TC_DT_NONE && tc_dtype_is_int(t);
}

/* x converted to integer dtype t as C converts between integer types:
 * bool is x != 0; a narrower type keeps the low bits, two's complement
 * (C leaves that to the implementation for signed types; every compiler
 * tilec targets wraps). */
static int64_t
int_wrap(TcDtype t, int64_t x)
{
	uint64_t u = (uint64_t)x;
	switch (t) {
	case TC_DT_I64: return x;
	case TC_DT_I32: return (int32_t)(uint32_t)u;
	case TC_DT_I8: return (int8_t)(uint8_t)u;
	case TC_DT_U8: return (uint8_t)u;
	case TC_DT_I4: return (int64_t)((u & 15) ^ 8) - 8;
	case TC_DT_BOOL: return x != 0;
	default: tc_unreachable();
	}
}

/* The values integer dtype t holds. */
static void
int_range(TcDtype t, int64_t *lo, int64_t *hi)
{
	switch (t) {
	case TC_DT_I64: *lo = INT64_MIN, *hi = INT64_MAX; return;
	case TC_DT_I32: *lo = INT32_MIN, *hi = INT32_MAX; return;
	case TC_DT_I8: *lo = INT8_MIN, *hi = INT8_MAX; return;
	case TC_DT_U8: *lo = 0, *hi = UINT8_MAX; return;
	case TC_DT_I4: *lo = -8, *hi = 7; return;
	case TC_DT_BOOL: *lo = 0, *hi = 1; return;
	default: tc_unreachable();
	}
}

/* An integer value of dtype t from an integral double: wrap to t's width
 * the way a two's complement machine does (NaN gives 0; beyond i64,
 * saturated first).  For host-side stores of doubles only. */
static double
wrap_int(TcDtype t, double v)
{
	if (isnan(v))
		return 0;
	if (v >= 9.2233720368547758e18)
		v = 9.2233720368547758e18 - 1024;
	if (v <= -9.2233720368547758e18)
		v = -9.2233720368547758e18;
	return (double)int_wrap(t, (int64_t)v);
}

int64_t
tc_elem_load_int(TcDtype t, const void *base, size_t i)
{
	switch (t) {
	case TC_DT_I64: return ((const int64_t *)base)[i];
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
tc_elem_store_int(TcDtype t, void *base, size_t i, int64_t v)
{
	v = int_wrap(t, v);
	switch (t) {
	case TC_DT_I64: ((int64_t *)base)[i] = v; break;
	case TC_DT_I32: ((int32_t *)base)[i] = (int32_t)v; break;
	case TC_DT_I8: ((int8_t *)base)[i] = (int8_t)v; break;
	case TC_DT_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
	case TC_DT_I4: {
		uint8_t *byte = (uint8_t *)base + i / 2;
		uint8_t nib = (uint8_t)(v & 15);
		*byte = (i & 1) ? (uint8_t)((*byte & 0x0f) | nib << 4)
				: (uint8_t)((*byte & 0xf0) | nib);
		break;
	}
	case TC_DT_BOOL: ((uint8_t *)base)[i] = v != 0; break;
	default: tc_unreachable();
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
	default: return (double)tc_elem_load_int(t, base, i);
	}
}

void
tc_elem_store(TcDtype t, void *base, size_t i, double v)
{
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
	case TC_DT_BOOL: ((uint8_t *)base)[i] = v != 0; break;
	default:
		tc_elem_store_int(t, base, i, (int64_t)wrap_int(TC_DT_I64, trunc(v)));
		break;
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

/* v as a value of float dtype t holds it: rounded to t (to nearest,
 * ties to even), f64 unchanged. */
static double
hold_float(TcDtype t, double v)
{
	switch (t) {
	case TC_DT_F32: return (float)v;
	case TC_DT_F16: return tilec_f16_to_double(tilec_f16_from_double(v));
	case TC_DT_BF16: return tilec_bf16_to_double(tilec_bf16_from_double(v));
	case TC_DT_FP8E4M3:
		return tilec_fp8e4m3_to_double(tilec_fp8e4m3_from_double(v));
	case TC_DT_FP8E5M2:
		return tilec_fp8e5m2_to_double(tilec_fp8e5m2_from_double(v));
	default: return v;
	}
}

/* x as a double rounded to odd: x where a double holds it, else the one
 * of the two doubles around it whose last bit is odd.  Rounding that
 * again to a format of at most 51 significant bits rounds x itself, once
 * (through a double rounded to nearest, x could round twice: first onto
 * a tie of the narrower format, then that tie to even). */
static double
int_to_odd_double(int64_t x)
{
	uint64_t u = x < 0 ? -(uint64_t)x : (uint64_t)x;
	int drop = 0;
	while (u >> drop >= 1ull << 53)
		drop++;
	uint64_t m = u >> drop;
	if (u & ((1ull << drop) - 1))
		m |= 1;
	double d = ldexp((double)m, drop);
	return x < 0 ? -d : d;
}

/* Integer x converted to float dtype t as C converts it: rounded once,
 * from the exact value. */
static double
int_to_float(TcDtype t, int64_t x)
{
	switch (t) {
	case TC_DT_F64: return (double)x;
	case TC_DT_F32: return (float)x;
	default: return hold_float(t, int_to_odd_double(x));
	}
}

/* --- Errors ------------------------------------------------------------------- */

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

/* --- Conversions ------------------------------------------------------------ */

/* Float x converted to integer dtype t: truncated toward zero, as C does;
 * a NaN or a value whose integer part t cannot hold is undefined in C and
 * an error here.  To bool: x != 0. */
static int64_t
float_to_int(Interp *in, TcLoc loc, TcDtype t, double x)
{
	if (t == TC_DT_BOOL)
		return x != 0;
	int64_t lo, hi;
	int_range(t, &lo, &hi);
	double tx = trunc(x);
	/* (double)hi + 1 is exact: a power of two. */
	if (!(tx >= (double)lo && tx < (double)hi + 1.0)) {
		fail(in, loc, "%g converted to %s does not fit (undefined in C)",
		     x, tc_dtype_name(t));
		return 0;
	}
	return (int64_t)tx;
}

/* A value of dtype from as dtype to holds it, converted as C converts. */
static Cell
convert(Interp *in, TcLoc loc, Cell v, TcDtype from, TcDtype to)
{
	Cell r;
	if (is_int(to))
		r.i = is_int(from) ? int_wrap(to, v.i)
				   : float_to_int(in, loc, to, v.f);
	else
		r.f = is_int(from) ? int_to_float(to, v.i) : hold_float(to, v.f);
	return r;
}

/* Zero as dtype t holds it. */
static Cell
zero(TcDtype t)
{
	Cell c;
	if (is_int(t))
		c.i = 0;
	else
		c.f = 0;
	return c;
}

static Cell
load_elem(TcDtype t, const void *base, size_t i)
{
	Cell c;
	if (is_int(t))
		c.i = tc_elem_load_int(t, base, i);
	else
		c.f = tc_elem_load(t, base, i);
	return c;
}

static void
store_elem(TcDtype t, void *base, size_t i, Cell c)
{
	if (is_int(t))
		tc_elem_store_int(t, base, i, c.i);
	else
		tc_elem_store(t, base, i, c.f);
}

/* --- Integer arithmetic ------------------------------------------------------- */

/* Signed overflow, undefined in C: r must fit dtype t (i32 or i64, what
 * integer arithmetic happens in after C's promotions). */
static int64_t
int_result(Interp *in, const TcExpr *e, bool overflow, int64_t r,
	   int64_t a, int64_t b)
{
	int64_t lo, hi;
	int_range(e->dtype, &lo, &hi);
	if (overflow || r < lo || r > hi) {
		fail(in, e->loc, "signed overflow: %lld %s %lld does not fit "
		     "in %s (undefined in C)", (long long)a,
		     tc_binop_name(e->u.bin.op), (long long)b,
		     tc_dtype_name(e->dtype));
		return 0;
	}
	return r;
}

static int64_t eval_int(Interp *in, const TcExpr *e);
static double eval_float(Interp *in, const TcExpr *e);

/* e's value as a Cell of its own dtype. */
static Cell
eval(Interp *in, const TcExpr *e)
{
	Cell c;
	if (is_int(e->dtype))
		c.i = eval_int(in, e);
	else
		c.f = eval_float(in, e);
	return c;
}

/* e's value converted to dtype t. */
static Cell
eval_as(Interp *in, const TcExpr *e, TcDtype t)
{
	Cell c = eval(in, e);
	if (in->failed)
		return zero(t);
	return convert(in, e->loc, c, e->dtype, t);
}

/* e's value as a double (an integer converted, as C converts it to a
 * floating operand). */
static double
eval_real(Interp *in, const TcExpr *e)
{
	return is_int(e->dtype) ? (double)eval_int(in, e) : eval_float(in, e);
}

/* e as a condition: nonzero. */
static bool
truth(Interp *in, const TcExpr *e)
{
	return is_int(e->dtype) ? eval_int(in, e) != 0 : eval_float(in, e) != 0;
}

/* A comparison, in the operands' common type (C's usual arithmetic
 * conversions: an int compared with a float is converted to float
 * first): exact between integers. */
static int64_t
compare(Interp *in, const TcExpr *e)
{
	const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
	int c;
	if (is_int(l->dtype) && is_int(r->dtype)) {
		int64_t a = eval_int(in, l), b = eval_int(in, r);
		c = a < b ? -1 : a > b;
	} else {
		TcDtype t = tc_binop_type(TC_OP_ADD, l->dtype, r->dtype);
		double a = eval_as(in, l, t).f, b = eval_as(in, r, t).f;
		if (a != a || b != b) /* NaN: unordered, only != holds */
			return e->u.bin.op == TC_OP_NE;
		c = a < b ? -1 : a > b;
	}
	switch (e->u.bin.op) {
	case TC_OP_LT: return c < 0;
	case TC_OP_LE: return c <= 0;
	case TC_OP_GT: return c > 0;
	case TC_OP_GE: return c >= 0;
	case TC_OP_EQ: return c == 0;
	case TC_OP_NE: return c != 0;
	default: tc_unreachable();
	}
}

/* A shift count must lie in [0, width of the promoted left operand). */
static bool
shift_count_ok(Interp *in, const TcExpr *e, int64_t b)
{
	int bits = tc_dtype_bits(e->dtype);
	if (b >= 0 && b < bits)
		return true;
	fail(in, e->loc, "shift count %lld is out of range for %s (undefined "
	     "in C)", (long long)b, tc_dtype_name(e->dtype));
	return false;
}

static int64_t
int_binary(Interp *in, const TcExpr *e)
{
	TcBinop op = e->u.bin.op;
	switch (op) {
	case TC_OP_LAND:
		return truth(in, e->u.bin.lhs) && truth(in, e->u.bin.rhs);
	case TC_OP_LOR:
		return truth(in, e->u.bin.lhs) || truth(in, e->u.bin.rhs);
	case TC_OP_LT: case TC_OP_LE: case TC_OP_GT: case TC_OP_GE:
	case TC_OP_EQ: case TC_OP_NE:
		return compare(in, e);
	default:
		break;
	}
	/* Both operands are integers (a float one makes the result float);
	 * each fits the result type, C's promoted type. */
	int64_t a = eval_int(in, e->u.bin.lhs);
	int64_t b = eval_int(in, e->u.bin.rhs);
	if (in->failed)
		return 0;
	int64_t r = 0, lo, hi;
	bool over;
	int_range(e->dtype, &lo, &hi);
	switch (op) {
	case TC_OP_ADD:
		over = __builtin_add_overflow(a, b, &r);
		return int_result(in, e, over, r, a, b);
	case TC_OP_SUB:
		over = __builtin_sub_overflow(a, b, &r);
		return int_result(in, e, over, r, a, b);
	case TC_OP_MUL:
		over = __builtin_mul_overflow(a, b, &r);
		return int_result(in, e, over, r, a, b);
	case TC_OP_DIV:
	case TC_OP_REM:
		if (b == 0) {
			fail(in, e->loc, "integer division by zero");
			return 0;
		}
		if (a == lo && b == -1)
			return int_result(in, e, true, 0, a, b);
		return op == TC_OP_DIV ? a / b : a % b;
	case TC_OP_SHL:
		if (!shift_count_ok(in, e, b))
			return 0;
		if (a < 0) {
			fail(in, e->loc, "left shift of the negative value %lld "
			     "(undefined in C)", (long long)a);
			return 0;
		}
		return int_result(in, e, a > (hi >> b),
				  (int64_t)((uint64_t)a << b), a, b);
	case TC_OP_SHR:
		if (!shift_count_ok(in, e, b))
			return 0;
		/* Of a negative value: arithmetic (implementation-defined
		 * in C; what every compiler tilec targets does). */
		return a >> b;
	case TC_OP_BAND: return a & b;
	case TC_OP_BXOR: return a ^ b;
	case TC_OP_BOR: return a | b;
	default: tc_unreachable();
	}
}

/* A float operation: both operands converted to the result's dtype (C's
 * common type), the result rounded to it.  In double and rounded once to
 * float, + - * / of two floats are IEEE single's exactly. */
static double
float_binary(Interp *in, const TcExpr *e)
{
	TcBinop op = e->u.bin.op;
	TcDtype t = e->dtype;
	double l = eval_as(in, e->u.bin.lhs, t).f;
	double r = eval_as(in, e->u.bin.rhs, t).f;
	switch (op) {
	case TC_OP_ADD: return hold_float(t, l + r);
	case TC_OP_SUB: return hold_float(t, l - r);
	case TC_OP_MUL: return hold_float(t, l * r);
	case TC_OP_DIV: return hold_float(t, l / r);
	case TC_OP_REM: return hold_float(t, fmod(l, r));
	default:
		fail(in, e->loc, "operator %s on %s values",
		     tc_binop_name(op), tc_dtype_name(e->dtype));
		return 0;
	}
}

/* The integer builtins (ceildiv, min, max, abs) and the saturating casts. */
static int64_t
int_call(Interp *in, const TcExpr *e)
{
	const TcExpr *const *args = (const TcExpr *const *)e->u.call.args;
	switch (e->u.call.fn) {
	case TC_FN_CEILDIV: {
		int64_t a = eval_as(in, args[0], e->dtype).i;
		int64_t b = eval_as(in, args[1], e->dtype).i;
		if (in->failed)
			return 0;
		if (b == 0) {
			fail(in, e->loc, "ceildiv by zero");
			return 0;
		}
		if (b == -1 && a == INT64_MIN) {
			fail(in, e->loc, "signed overflow in ceildiv(%lld, -1) "
			     "(undefined in C)", (long long)a);
			return 0;
		}
		/* a / b rounded up, as tilec_ceildiv computes it (no sum
		 * that could overflow). */
		return tc_ceildiv(a, b);
	}
	case TC_FN_MIN:
	case TC_FN_MAX: {
		int64_t a = eval_as(in, args[0], e->dtype).i;
		int64_t b = eval_as(in, args[1], e->dtype).i;
		if (e->u.call.fn == TC_FN_MIN)
			return a < b ? a : b;
		return a > b ? a : b;
	}
	case TC_FN_ABS: {
		int64_t a = eval_as(in, args[0], e->dtype).i, lo, hi;
		int_range(e->dtype, &lo, &hi);
		if (a == lo) {
			fail(in, e->loc, "signed overflow: abs(%lld) does not "
			     "fit in %s (undefined in C)", (long long)a,
			     tc_dtype_name(e->dtype));
			return 0;
		}
		return a < 0 ? -a : a;
	}
	case TC_FN_SAT_I8:
	case TC_FN_SAT_U8:
	case TC_FN_SAT_I32: {
		/* The f32 argument rounded to the nearest integer, ties to
		 * even, and clamped to the result's range; NaN gives 0. */
		double x = eval_as(in, args[0], TC_DT_F32).f;
		int64_t lo, hi;
		int_range(e->dtype, &lo, &hi);
		if (isnan(x))
			return 0;
		double r = nearbyint(x);
		return r <= (double)lo ? lo : r >= (double)hi ? hi : (int64_t)r;
	}
	default:
		/* A float function converted to an integer result. */
		return float_to_int(in, e->loc, e->dtype, eval_float(in, e));
	}
}

/* A float function: its arguments converted to its type (f32, as the
 * prototype says), the result rounded to it.  The transcendental ones are
 * computed in double, so the f32 result is the correctly rounded one or
 * next to it; the backends' are within a few ulp. */
static double
float_call(Interp *in, const TcExpr *e)
{
	double x[3] = { 0, 0, 0 };
	for (int i = 0; i < e->u.call.nargs && i < 3; i++)
		x[i] = eval_as(in, e->u.call.args[i], e->dtype).f;
	bool f64 = e->dtype == TC_DT_F64;
	double r;
	switch (e->u.call.fn) {
	case TC_FN_CEILDIV:
		/* Integer functions with a float type: never after check. */
		r = ceil(x[0] / x[1]);
		break;
	case TC_FN_MIN: r = x[0] < x[1] ? x[0] : x[1]; break;
	case TC_FN_MAX: r = x[0] > x[1] ? x[0] : x[1]; break;
	case TC_FN_ABS: r = fabs(x[0]); break;
	case TC_FN_SAT_I8: case TC_FN_SAT_U8: case TC_FN_SAT_I32:
		r = (double)int_call(in, e);
		break;
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
	case TC_FN_LOG1PF: r = log1p(x[0]); break;
	case TC_FN_EXPM1F: r = expm1(x[0]); break;
	case TC_FN_FMAF:
		/* One rounding, to the call's type: C's fmaf of the floats. */
		r = f64 ? fma(x[0], x[1], x[2])
			: fmaf((float)x[0], (float)x[1], (float)x[2]);
		break;
	/* Exact in C: the argument rounded as C rounds it (roundf: ties
	 * away from zero; rintf: ties to even, the default rounding
	 * mode). */
	case TC_FN_ROUNDF: r = round(x[0]); break;
	case TC_FN_RINTF: r = nearbyint(x[0]); break;
	case TC_FN_FLOORF: r = floor(x[0]); break;
	case TC_FN_CEILF: r = ceil(x[0]); break;
	case TC_FN_TRUNCF: r = trunc(x[0]); break;
	default: tc_unreachable();
	}
	return hold_float(e->dtype, r);
}

/* --- Expressions --------------------------------------------------------------- */

/* The element offset a LOAD names, or -1 after reporting it out of
 * bounds. */
static long long
element_offset(Interp *in, const TcExpr *e)
{
	const TcVar *v = e->u.load.var;
	const Array *a = &in->arr[var_slot(in, v)];
	long long off = 0;
	for (int i = 0; i < v->rank; i++) {
		int64_t x = eval_int(in, e->u.load.idx[i]);
		if (in->failed)
			return -1;
		if (!(x >= 0 && x < a->ext[i])) {
			fail(in, e->loc,
			     "index %lld out of bounds for dim %d of %s (extent "
			     "%lld)",
			     (long long)x, i, v->name, a->ext[i]);
			return -1;
		}
		off += (long long)x * a->stride[i];
	}
	return off;
}

/* A LOAD: the element, in the var's dtype (zero when only counting). */
static Cell
load(Interp *in, const TcExpr *e)
{
	const TcVar *v = e->u.load.var;
	if (in->count_only)
		return zero(v->dtype);
	long long off = element_offset(in, e);
	if (off < 0)
		return zero(v->dtype);
	const Array *a = &in->arr[v->index];
	if (v->kind == TC_VAR_TENSOR)
		return load_elem(v->dtype, a->tensor, (size_t)off);
	return a->buf[off];
}

/* A VAR: a tunable's value, or the scalar's slot. */
static Cell
var_value(Interp *in, const TcExpr *e)
{
	if (e->u.var->kind == TC_VAR_TUNABLE) {
		Cell c;
		c.i = e->u.var->value;
		return convert(in, e->loc, c, TC_DT_I64, e->dtype);
	}
	return in->val[var_slot(in, e->u.var)];
}

static int64_t
eval_int(Interp *in, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT: return int_wrap(e->dtype, e->u.ival);
	case TC_EX_FLOAT: return float_to_int(in, e->loc, e->dtype, e->u.fval);
	case TC_EX_VAR: return var_value(in, e).i;
	case TC_EX_BINARY: return int_binary(in, e);
	case TC_EX_UNARY: {
		const TcExpr *arg = e->u.un.arg;
		if (e->u.un.op == TC_UOP_NOT)
			return !truth(in, arg);
		int64_t x = eval_as(in, arg, e->dtype).i, lo, hi;
		int_range(e->dtype, &lo, &hi);
		if (e->u.un.op == TC_UOP_BNOT)
			return ~x;
		if (x == lo) {
			fail(in, e->loc, "signed overflow: -(%lld) does not fit "
			     "in %s (undefined in C)", (long long)x,
			     tc_dtype_name(e->dtype));
			return 0;
		}
		return -x;
	}
	case TC_EX_SELECT:
		return truth(in, e->u.sel.cond) ? eval_as(in, e->u.sel.then, e->dtype).i
						: eval_as(in, e->u.sel.els, e->dtype).i;
	case TC_EX_CALL: return int_call(in, e);
	case TC_EX_CAST: return eval_as(in, e->u.cast.arg, e->dtype).i;
	case TC_EX_LOAD: return load(in, e).i;
	case TC_EX_SMS:
		if (in->sms <= 0)
			fail(in, e->loc, "the device's SM count is not known "
			     "here");
		return in->sms;
	default: tc_unreachable();
	}
}

static double
eval_float(Interp *in, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT: return int_to_float(e->dtype, e->u.ival);
	case TC_EX_FLOAT: return hold_float(e->dtype, e->u.fval);
	case TC_EX_VAR: return var_value(in, e).f;
	case TC_EX_BINARY: return float_binary(in, e);
	case TC_EX_UNARY:
		/* Only - has a float result: exact. */
		return -eval_as(in, e->u.un.arg, e->dtype).f;
	case TC_EX_SELECT:
		return truth(in, e->u.sel.cond) ? eval_as(in, e->u.sel.then, e->dtype).f
						: eval_as(in, e->u.sel.els, e->dtype).f;
	case TC_EX_CALL: return float_call(in, e);
	case TC_EX_CAST: return eval_as(in, e->u.cast.arg, e->dtype).f;
	case TC_EX_LOAD: return load(in, e).f;
	case TC_EX_SMS: return int_to_float(e->dtype, eval_int(in, e));
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
		op->origin[i] = eval_int(in, r->origin[i]);
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


/* An operand's element at off, in its var's dtype. */
static Cell
read_elem(const Operand *op, long long off)
{
	if (op->var->kind == TC_VAR_TENSOR)
		return load_elem(op->var->dtype, op->a->tensor, (size_t)off);
	return op->a->buf[off];
}

/* Store v, already in the operand's dtype, at off. */
static void
write_elem(const Operand *op, long long off, Cell v)
{
	if (op->var->kind == TC_VAR_TENSOR)
		store_elem(op->var->dtype, op->a->tensor, (size_t)off, v);
	else
		op->a->buf[off] = v;
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

/* a + b in dtype t: integers exact (a signed overflow of i32 or i64 is an
 * error; narrower types wrap, as C's assignment back to them does),
 * floats rounded to t. */
static Cell
add(Interp *in, TcLoc loc, TcDtype t, Cell a, Cell b)
{
	Cell r;
	if (!is_int(t)) {
		r.f = hold_float(t, a.f + b.f);
		return r;
	}
	int64_t lo, hi;
	int_range(t, &lo, &hi);
	bool over = __builtin_add_overflow(a.i, b.i, &r.i);
	if (t != TC_DT_I32 && t != TC_DT_I64)
		return (Cell){ .i = int_wrap(t, r.i) };
	if (over || r.i < lo || r.i > hi) {
		fail(in, loc, "signed overflow: %lld + %lld does not fit in %s "
		     "(undefined in C)", (long long)a.i, (long long)b.i,
		     tc_dtype_name(t));
		return zero(t);
	}
	return r;
}

/* A ragged copy (docs/language.md, "Ragged regions"): between the whole
 * buffer `tile` and the ragged tensor region `reg`, element by element
 * from the definitions: an element is inside when it is within every
 * tile_bounded extent, its mask element is nonzero, and its tensor index
 * (its row through tile_rows' index) is inside the tensor.  A load reads
 * zero outside, a store skips it; two tile rows of a scatter that write
 * one tensor element are an error (the backends would race). */
typedef struct Hit {
	long long off; /* tensor element written */
	long long row; /* by this tile row */
	long long at;  /* its index along the gathered dim */
} Hit;

static int
hit_cmp(const void *a, const void *b)
{
	const Hit *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off ? 1 :
	       x->row < y->row ? -1 : x->row > y->row;
}

static void
exec_copy_ragged(Interp *in, const TcStmt *s, const TcRegion *reg,
		 bool load_into_tile)
{
	const TcRegion *whole = load_into_tile ? &s->u.copy.dst : &s->u.copy.src;
	Operand ten;
	if (!resolve(in, reg, &ten))
		return;
	const Array *tile = &in->arr[var_slot(in, whole->var)];
	int n = whole->var->rank;
	long long bound[TC_MAX_RANK];
	for (int d = 0; d < n; d++) {
		bound[d] = d < TC_MAX_RANK && reg->bound[d]
				   ? eval_int(in, reg->bound[d]) : tile->ext[d];
		if (in->failed)
			return;
	}
	const Array *mask = reg->mask ? &in->arr[var_slot(in, reg->mask)] : NULL;
	const Array *rows = reg->rows ? &in->arr[var_slot(in, reg->rows)] : NULL;
	TcDtype tt = ten.var->dtype, bt = whole->var->dtype;
	Hit *hits = NULL;
	size_t nhits = 0;
	if (rows && !load_into_tile) {
		hits = malloc(sizeof *hits * (size_t)(tile->size ? tile->size : 1));
		if (!hits) {
			fail(in, s->loc, "out of memory");
			return;
		}
	}
	long long t[TC_MAX_RANK] = { 0 };
	for (int d = 0; d < n; d++)
		if (tile->ext[d] <= 0)
			goto done;
	do {
		bool inside = true;
		long long boff = 0, moff = 0;
		for (int d = 0; d < n; d++) {
			inside &= t[d] < bound[d];
			boff += t[d] * tile->stride[d];
			if (mask && d < reg->mask->rank)
				moff += t[d] * mask->stride[d];
		}
		if (inside && mask)
			inside = mask->buf[moff].i != 0;
		long long pos[TC_MAX_RANK], off = 0;
		for (int i = 0; i < ten.var->rank; i++)
			pos[i] = ten.origin[i];
		for (int d = 0; d < n; d++)
			pos[ten.dims[d]] += d == 0 && rows ? rows->buf[t[0]].i : t[d];
		for (int i = 0; inside && i < ten.var->rank; i++) {
			inside = pos[i] >= 0 && pos[i] < ten.a->ext[i];
			off += pos[i] * ten.a->stride[i];
		}
		if (load_into_tile) {
			tile->buf[boff] = inside ? convert(in, s->loc,
							   read_elem(&ten, off),
							   tt, bt)
						 : zero(bt);
		} else if (inside) {
			write_elem(&ten, off, convert(in, s->loc, tile->buf[boff],
						      bt, tt));
			if (hits)
				hits[nhits++] = (Hit){ off, t[0], pos[ten.dims[0]] };
		}
	} while (!in->failed && n > 0 && next_index(t, tile->ext, n));
	if (hits && !in->failed) {
		qsort(hits, nhits, sizeof *hits, hit_cmp);
		for (size_t i = 1; i < nhits; i++)
			if (hits[i].off == hits[i - 1].off &&
			    hits[i].row != hits[i - 1].row) {
				fail(in, reg->rows_loc, "tile_rows: tile rows %lld "
				     "and %lld of the scatter both write index "
				     "%lld along dim %d of '%s' (index '%s' "
				     "repeats it)", hits[i - 1].row, hits[i].row,
				     hits[i].at, ten.dims[0], ten.var->name,
				     reg->rows->name);
				break;
			}
	}
done:
	free(hits);
}

/* COPY dst <- src (and ATOMIC_ADD dst += src when add): each element
 * converted to dst's dtype. */
static void
exec_copy(Interp *in, const TcStmt *s, bool is_add)
{
	if (tc_region_ragged(&s->u.copy.src)) {
		exec_copy_ragged(in, s, &s->u.copy.src, true);
		return;
	}
	if (tc_region_ragged(&s->u.copy.dst)) {
		exec_copy_ragged(in, s, &s->u.copy.dst, false);
		return;
	}
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
	TcDtype dt = dst.var->dtype, st = src.var->dtype;
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
		for (long long c = dlo; c < dhi && !in->failed; c++) {
			Cell v = c >= slo && c < shi
					 ? convert(in, s->loc,
						   read_elem(&src, sb + c * ss), st, dt)
					 : zero(dt);
			if (is_add)
				v = add(in, s->loc, dt, read_elem(&dst, db + c * ds),
					v);
			write_elem(&dst, db + c * ds, v);
		}
	} while (!in->failed && n > 1 && next_index(t, shape, n - 1));
}

/* An element of a buffer of dtype t as a double. */
static double
real(TcDtype t, Cell c)
{
	return is_int(t) ? (double)c.i : c.f;
}

/* GEMM c += op(a) * op(b): products accumulate in c's dtype, as
 * `acc += x * y` with acc of that type (integers exact, a signed
 * overflow an error; f32 and f64 in double, each element of c rounded to
 * its dtype once, at the end, as a reduction's is). */
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
	Cell *c = ca->buf;
	const Cell *a = aa->buf, *b = ba->buf;
	TcDtype ct = cv->dtype, at = av->dtype, bt = bv->dtype;
	/* reg_operands.c: A's f32 elements rounded to B's type as read. */
	bool round = s->u.gemm.round_a;
	if (round)
		at = bt;
	bool wide = ct == TC_DT_F32 || ct == TC_DT_F64;
	if (wide && !tb && !is_int(at) && !is_int(bt)) {
		/* Row of c += a[m][k] * row k of b: contiguous inner loop. */
		for (long long m = 0; m < M; m++) {
			Cell *crow = c + m * N;
			for (long long kk = 0; kk < K; kk++) {
				double x = ta ? a[kk * M + m].f : a[m * K + kk].f;
				if (round)
					x = hold_float(bt, x);
				const Cell *brow = b + kk * N;
				for (long long nn = 0; nn < N; nn++)
					crow[nn].f += x * brow[nn].f;
			}
			for (long long nn = 0; nn < N; nn++)
				crow[nn].f = hold_float(ct, crow[nn].f);
		}
		return;
	}
	bool exact = is_int(ct) && is_int(at) && is_int(bt);
	for (long long m = 0; m < M && !in->failed; m++) {
		for (long long nn = 0; nn < N && !in->failed; nn++) {
			Cell acc = c[m * N + nn];
			for (long long kk = 0; kk < K && !in->failed; kk++) {
				Cell x = ta ? a[kk * M + m] : a[m * K + kk];
				if (round)
					x.f = hold_float(bt, x.f);
				Cell y = tb ? b[nn * K + kk] : b[kk * N + nn];
				if (exact) {
					/* i8 x i8 products fit; the sum may
					 * not. */
					Cell p = { .i = x.i * y.i };
					acc = add(in, s->loc, ct, acc, p);
					continue;
				}
				double sum = real(ct, acc) +
					     real(at, x) * real(bt, y);
				acc = convert(in, s->loc, (Cell){ .f = sum },
					      TC_DT_F64, ct);
				if (wide)
					acc.f = sum;
			}
			if (wide)
				acc.f = hold_float(ct, acc.f);
			c[m * N + nn] = acc;
		}
	}
}

/* FILL dst = value. */
static void
exec_fill(Interp *in, const TcStmt *s)
{
	const TcVar *var = s->u.fill.dst.var;
	Cell v = eval_as(in, s->u.fill.value, var->dtype);
	if (in->failed)
		return;
	Array *a = &in->arr[var_slot(in, var)];
	if (var->kind != TC_VAR_BUFFER || !s->u.fill.dst.whole) {
		fail(in, s->loc, "tile_fill needs a whole buffer");
		return;
	}
	for (long long i = 0; i < a->size; i++)
		a->buf[i] = v;
}

/* The identity of an integer reduction into dtype t. */
static int64_t
int_identity(TcReduceOp op, TcDtype t)
{
	int64_t lo, hi;
	int_range(t, &lo, &hi);
	return op == TC_RED_MAX ? lo : op == TC_RED_MIN ? hi : 0;
}

/* |x| for an integer absmax into dtype t. */
static int64_t
int_abs(Interp *in, TcLoc loc, TcDtype t, int64_t x)
{
	if (x >= 0)
		return x;
	if (x == INT64_MIN || (t == TC_DT_I32 && x == INT32_MIN)) {
		fail(in, loc, "signed overflow: |%lld| does not fit in %s "
		     "(undefined in C)", (long long)x, tc_dtype_name(t));
		return 0;
	}
	return int_wrap(t, -x);
}

/* One integer reduction of n elements p[0], p[step], .. of dtype st into
 * acc (docs/language.md): each element converted to dst's dtype dt
 * first, then combined exactly in dt, so the result does not depend on
 * the order a backend combines in. */
static int64_t
reduce_int(Interp *in, TcLoc loc, TcReduceOp op, TcDtype dt, TcDtype st,
	   int64_t acc, const Cell *p, long long n, long long step)
{
	for (long long j = 0; j < n && !in->failed; j++) {
		int64_t x = convert(in, loc, p[j * step], st, dt).i;
		switch (op) {
		case TC_RED_SUM:
			acc = add(in, loc, dt, (Cell){ .i = acc },
				  (Cell){ .i = x }).i;
			break;
		case TC_RED_MAX: acc = x > acc ? x : acc; break;
		case TC_RED_MIN: acc = x < acc ? x : acc; break;
		case TC_RED_ABSMAX:
			x = int_abs(in, loc, dt, x);
			acc = x > acc ? x : acc;
			break;
		default: tc_unreachable();
		}
	}
	return acc;
}

/* One float reduction step: acc combined with x, in double. */
static double
reduce_real_step(TcReduceOp op, double acc, double x)
{
	switch (op) {
	case TC_RED_SUM: return acc + x;
	case TC_RED_MAX: return fmax(acc, x);
	case TC_RED_MIN: return fmin(acc, x);
	case TC_RED_ABSMAX: return fmax(acc, fabs(x));
	default: tc_unreachable();
	}
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
	TcDtype dt = dv->dtype, st = sv->dtype;
	bool accumulate = s->u.reduce.accumulate;
	double init = op == TC_RED_MAX ? -INFINITY
		      : op == TC_RED_MIN ? INFINITY : 0.0;
	for (long long o = 0; o < outer && !in->failed; o++) {
		for (long long i = 0; i < inner && !in->failed; i++) {
			Cell *dst = &da->buf[o * inner + i];
			const Cell *p = sa->buf + o * len * inner + i;
			if (is_int(dt)) {
				int64_t acc = accumulate ? dst->i
							 : int_identity(op, dt);
				if (op == TC_RED_ABSMAX)
					acc = int_abs(in, s->loc, dt, acc);
				dst->i = reduce_int(in, s->loc, op, dt, st, acc, p,
						    len, inner);
				continue;
			}
			/* Floats: each element converted to dst's dtype,
			 * combined in double, rounded to dst's dtype once. */
			double acc = accumulate ? dst->f : init;
			if (op == TC_RED_ABSMAX)
				acc = fabs(acc);
			for (long long j = 0; j < len; j++)
				acc = reduce_real_step(op, acc,
						       convert(in, s->loc, p[j * inner],
							       st, dt).f);
			dst->f = hold_float(dt, acc);
		}
	}
}

/* REDUCE_ALL dst = op(every element of src): in src's arithmetic type
 * (tc_reduce_all_type; integers exactly, in index order, so an i32 sum
 * that overflows is an error; floats in double), then converted to dst's
 * dtype as an assignment converts. */
static void
exec_reduce_all(Interp *in, const TcStmt *s)
{
	const TcVar *sv = s->u.reduce_all.src.var, *dv = s->u.reduce_all.dst;
	TcDtype st = sv->dtype, t = tc_reduce_all_type(st);
	TcReduceOp op = s->u.reduce_all.op;
	Cell r;
	if (in->count_only) {
		/* Buffers hold nothing in a counting run. */
		in->val[var_slot(in, dv)] = zero(dv->dtype);
		return;
	}
	const Array *sa = &in->arr[var_slot(in, sv)];
	if (sv->kind != TC_VAR_BUFFER) {
		fail(in, s->loc, "tile reduction of a tensor");
		return;
	}
	if (is_int(t)) {
		r.i = reduce_int(in, s->loc, op, t, st, int_identity(op, t),
				 sa->buf, sa->size, 1);
	} else {
		double acc = op == TC_RED_MAX ? -INFINITY
			     : op == TC_RED_MIN ? INFINITY : 0.0;
		for (long long j = 0; j < sa->size; j++)
			acc = reduce_real_step(op, acc, real(st, sa->buf[j]));
		r.f = hold_float(t, acc);
	}
	if (in->failed)
		return;
	in->val[var_slot(in, dv)] = convert(in, s->loc, r, t, dv->dtype);
}

/* Whether x beats the best so far, b, in an argmax (argmin when min):
 * strictly greater (less), so ties keep the smaller index; NaN loses to
 * every number and ties with NaN. */
static bool
arg_better(bool min, TcDtype t, Cell x, Cell b)
{
	if (is_int(t))
		return min ? x.i < b.i : x.i > b.i;
	if (isnan(x.f))
		return false;
	return isnan(b.f) || (min ? x.f < b.f : x.f > b.f);
}

/* Whether element a (at index ia) comes before element b (at ib) in a
 * top-k: it beats it, or neither beats the other and its index is less. */
static bool
topk_before(TcDtype t, Cell a, long long ia, Cell b, long long ib)
{
	if (arg_better(false, t, a, b))
		return true;
	return !arg_better(false, t, b, a) && ia < ib;
}

/* ARG_REDUCE as top-k: output r along dim is the element before every
 * other element not already output, found by a scan per r. */
static void
exec_topk(Interp *in, const TcStmt *s)
{
	const TcVar *dv = s->u.arg_reduce.dst.var, *iv = s->u.arg_reduce.index.var,
		    *sv = s->u.arg_reduce.src.var;
	const Array *da = &in->arr[var_slot(in, dv)];
	const Array *ia = &in->arr[var_slot(in, iv)];
	const Array *sa = &in->arr[var_slot(in, sv)];
	int dim = s->u.arg_reduce.dim;
	long long len = sa->ext[dim], k = da->ext[dim];
	long long inner = sa->stride[dim], outer = sa->size / (len * inner);
	if (k > len || ia->size != da->size || da->size != outer * k * inner) {
		fail(in, s->loc, "tile top-k operand shapes do not agree");
		return;
	}
	for (long long o = 0; o < outer; o++) {
		for (long long i = 0; i < inner && !in->failed; i++) {
			const Cell *p = sa->buf + o * len * inner + i;
			long long prev = -1;
			for (long long r = 0; r < k; r++) {
				long long at = -1;
				for (long long j = 0; j < len; j++) {
					if (prev >= 0 &&
					    !topk_before(sv->dtype, p[prev * inner],
							 prev, p[j * inner], j))
						continue;
					if (at < 0 ||
					    topk_before(sv->dtype, p[j * inner], j,
							p[at * inner], at))
						at = j;
				}
				long long out = (o * k + r) * inner + i;
				da->buf[out] = convert(in, s->loc, p[at * inner],
						       sv->dtype, dv->dtype);
				ia->buf[out] = (Cell){ .i = at };
				prev = at;
			}
		}
	}
}

/* ARG_REDUCE: for each output, a scan along dim from index 0: the best
 * element (arg_better) converted to dst's dtype, and its index. */
static void
exec_arg_reduce(Interp *in, const TcStmt *s)
{
	if (s->u.arg_reduce.topk) {
		exec_topk(in, s);
		return;
	}
	const TcVar *dv = s->u.arg_reduce.dst.var, *iv = s->u.arg_reduce.index.var,
		    *sv = s->u.arg_reduce.src.var;
	const Array *da = &in->arr[var_slot(in, dv)];
	const Array *ia = &in->arr[var_slot(in, iv)];
	const Array *sa = &in->arr[var_slot(in, sv)];
	int dim = s->u.arg_reduce.dim;
	if (dim < 0 || dim >= sv->rank || da->size * sa->ext[dim] != sa->size ||
	    ia->size != da->size) {
		fail(in, s->loc, "tile arg-reduction operand shapes do not agree");
		return;
	}
	long long outer = 1, len = sa->ext[dim], inner = sa->stride[dim];
	for (int i = 0; i < dim; i++)
		outer *= sa->ext[i];
	for (long long o = 0; o < outer && !in->failed; o++) {
		for (long long i = 0; i < inner && !in->failed; i++) {
			const Cell *p = sa->buf + o * len * inner + i;
			long long at = 0;
			for (long long j = 1; j < len; j++)
				if (arg_better(s->u.arg_reduce.min, sv->dtype,
					       p[j * inner], p[at * inner]))
					at = j;
			da->buf[o * inner + i] = convert(in, s->loc, p[at * inner],
							 sv->dtype, dv->dtype);
			ia->buf[o * inner + i] = (Cell){ .i = at };
		}
	}
}

/* --- Statements ---------------------------------------------------------------- */

static void exec(Interp *in, const TcStmt *s);

/* What a buffer holds before it is written: NaN, or for integers 0x5a in
 * every byte, wrapped to the dtype. */
static Cell
poison(TcDtype t)
{
	Cell c;
	if (is_int(t))
		c.i = int_wrap(t, 0x5a5a5a5a5a5a5a5all);
	else
		c.f = NAN;
	return c;
}

static void
exec_decl(Interp *in, const TcStmt *s)
{
	const TcVar *v = s->u.decl.var;
	int slot = var_slot(in, v);
	if (v->kind == TC_VAR_BUFFER) {
		Array *a = &in->arr[slot];
		if (in->count_only)
			return;
		Cell p = poison(v->dtype);
		for (long long i = 0; i < a->size; i++)
			a->buf[i] = p;
		return;
	}
	Cell x;
	if (s->u.decl.init)
		x = eval_as(in, s->u.decl.init, v->dtype);
	else if (is_int(v->dtype))
		x.i = 0;
	else
		x.f = NAN;
	in->val[slot] = x;
}

static void
exec_assign(Interp *in, const TcStmt *s)
{
	const TcExpr *dst = s->u.assign.dst;
	const TcVar *v = dst->kind == TC_EX_VAR ? dst->u.var : dst->u.load.var;
	Cell x = eval_as(in, s->u.assign.value, v->dtype);
	if (in->failed)
		return;
	if (dst->kind == TC_EX_VAR) {
		in->val[var_slot(in, v)] = x;
		return;
	}
	if (in->count_only)
		return;
	long long off = element_offset(in, dst);
	if (off < 0)
		return;
	Array *a = &in->arr[v->index];
	if (v->kind == TC_VAR_TENSOR)
		store_elem(v->dtype, a->tensor, (size_t)off, x);
	else
		a->buf[off] = x;
}

static void
exec_for(Interp *in, const TcStmt *s)
{
	const TcVar *var = s->u.loop.var;
	int slot = var_slot(in, var);
	if (s->u.loop.kind == TC_LOOP_PARALLEL) {
		if (in->count_only)
			return;
		int64_t end = eval_int(in, s->u.loop.end);
		for (int64_t i = 0; i < end && !in->failed; i++) {
			in->val[slot].i = i;
			exec(in, s->u.loop.body);
		}
		return;
	}
	/* Serial and pipelined: C's for, bound and step re-evaluated. */
	in->val[slot] = eval_as(in, s->u.loop.begin, var->dtype);
	while (!in->failed && in->val[slot].i < eval_int(in, s->u.loop.end)) {
		if (in->failed)
			return;
		exec(in, s->u.loop.body);
		if (in->failed)
			return;
		int64_t step = eval_int(in, s->u.loop.step);
		if (in->failed)
			return;
		if (step <= 0) {
			fail(in, s->loc, "loop step is %lld; it must be positive",
			     (long long)step);
			return;
		}
		in->val[slot] = add(in, s->u.loop.step->loc, var->dtype,
				    in->val[slot], (Cell){ .i = step });
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
		if (truth(in, s->u.cond.cond))
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
	case TC_ST_REDUCE_ALL: exec_reduce_all(in, s); return;
	case TC_ST_ARG_REDUCE:
		if (!in->count_only)
			exec_arg_reduce(in, s);
		return;
	case TC_ST_PREFETCH:
		return; /* a hint: reads and writes nothing */
	default:
		/* The statements the GPU passes introduce (barriers, the
		 * expanded pipeline's async copies, groups and stage views)
		 * describe a threaded run; the interpreter runs the
		 * block-serial program before them. */
		fail(in, s->loc, "the reference interpreter does not run "
		     "'%s' statements", tc_stmtkind_name(s->kind));
		return;
	}
}

/* --- Setting up a run ----------------------------------------------------------- */

/* A scalar parameter's value, read in its C type. */
static Cell
scalar_arg(const TcVar *v, const void *p)
{
	Cell c;
	switch (v->dtype) {
	case TC_DT_F64: c.f = *(const double *)p; break;
	case TC_DT_F32: c.f = *(const float *)p; break;
	case TC_DT_I64: c.i = *(const int64_t *)p; break;
	case TC_DT_I32: c.i = *(const int32_t *)p; break;
	case TC_DT_I8: c.i = *(const int8_t *)p; break;
	case TC_DT_U8: c.i = *(const uint8_t *)p; break;
	case TC_DT_BOOL: c.i = *(const uint8_t *)p != 0; break;
	default: c = load_elem(v->dtype, p, 0); break;
	}
	return c;
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
			double e = eval_real(in, v->shape[j]);
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
tc_interp_eval(const TcKernel *k, const TcExpr *e, void **args, long long sms,
	       double *out, TcDiags *d)
{
	Interp in;
	if (!interp_init(&in, k, args, d))
		return false;
	in.sms = sms;
	*out = eval_real(&in, e);
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
		double e = eval_real(&in, k->grid[g]);
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
						in.val[var_slot(&in, k->block[g])].i =
							idx[g];
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
