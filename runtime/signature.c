/*
 * signature.c - kernel signatures from launch documents, and the checked
 * launch.
 *
 * A launch document (docs/launch.md, written by the translator's abi.c
 * and launch.c) describes each kernel's parameters, their C types, shapes
 * and extents, its grid as expression trees, threads and shared memory.
 * tilec_rt_signatures_parse turns one into TilecSignature values, names
 * resolved (a {"param"} into a parameter index, a {"tunable"} into its
 * value), so a launch evaluates without looking anything up.
 * tilec_rt_launch_checked binds tilec_arg values to the parameters,
 * checks them (every message names the parameter), infers the extent
 * scalars left out, computes the grid and calls the backend's launch.
 *
 * The document is untrusted input: every member is checked for its type,
 * names must exist, and evaluation follows the grammar's rules, C's
 * integer semantics with every undefined case an error.
 */
#include "runtime_int.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SIG_MAX_RANK = 8 };

/* --- Dtypes ------------------------------------------------------------------ */

static const struct {
	const char *name;  /* the tile language's */
	int align;         /* bytes a pointer to elements is aligned to */
} dtypes[TILEC_DTYPE_COUNT] = {
	[TILEC_F64] = { "f64", 8 },         [TILEC_F32] = { "f32", 4 },
	[TILEC_F16] = { "f16", 2 },         [TILEC_BF16] = { "bf16", 2 },
	[TILEC_FP8E4M3] = { "fp8e4m3", 1 }, [TILEC_FP8E5M2] = { "fp8e5m2", 1 },
	[TILEC_I64] = { "i64", 8 },         [TILEC_I32] = { "i32", 4 },
	[TILEC_I8] = { "i8", 1 },           [TILEC_U8] = { "u8", 1 },
	[TILEC_I4] = { "i4", 1 },           [TILEC_BOOL] = { "bool", 1 },
};

const char *
tilec_dtype_name(tilec_dtype dtype)
{
	if ((int)dtype < 0 || dtype >= TILEC_DTYPE_COUNT)
		return NULL;
	return dtypes[dtype].name;
}

int
tilec_rt_dtype_bytes(tilec_dtype dtype)
{
	if ((int)dtype < 0 || dtype >= TILEC_DTYPE_COUNT || dtype == TILEC_I4)
		return 0;
	return dtypes[dtype].align;
}

int
tilec_dtype_from_name(const char *name)
{
	for (int i = 0; name && i < TILEC_DTYPE_COUNT; i++)
		if (strcmp(dtypes[i].name, name) == 0)
			return i;
	return -1;
}

/* --- Arguments ---------------------------------------------------------------- */

tilec_arg
tilec_arg_tensor(const char *name, void *data, tilec_dtype dtype, int rank,
		 const int64_t *shape, const int64_t *strides)
{
	tilec_arg a = { .size = sizeof a, .name = name,
			.kind = TILEC_ARG_TENSOR, .data = data, .dtype = dtype,
			.rank = rank, .shape = shape, .strides = strides };
	return a;
}

tilec_arg
tilec_arg_int(const char *name, long long value)
{
	tilec_arg a = { .size = sizeof a, .name = name, .kind = TILEC_ARG_INT,
			.ivalue = value };
	return a;
}

tilec_arg
tilec_arg_float(const char *name, double value)
{
	tilec_arg a = { .size = sizeof a, .name = name,
			.kind = TILEC_ARG_FLOAT, .fvalue = value };
	return a;
}

/* --- Expressions ------------------------------------------------------------------ */

/* The operators of docs/launch.md: name, operand count. */
#define SIG_OPS(X)                                                        \
	X(ADD, "+", 2) X(SUB, "-", 2) X(MUL, "*", 2) X(DIV, "/", 2)       \
	X(REM, "%", 2) X(SHL, "<<", 2) X(SHR, ">>", 2) X(LT, "<", 2)      \
	X(LE, "<=", 2) X(GT, ">", 2) X(GE, ">=", 2) X(EQ, "==", 2)        \
	X(NE, "!=", 2) X(BAND, "&", 2) X(BXOR, "^", 2) X(BOR, "|", 2)     \
	X(LAND, "&&", 2) X(LOR, "||", 2) X(NEG, "neg", 1) X(NOT, "!", 1)  \
	X(BNOT, "~", 1) X(SELECT, "?:", 3) X(CEILDIV, "ceildiv", 2)       \
	X(MIN, "min", 2) X(MAX, "max", 2) X(CAST, "cast", 1)

typedef enum SigOp {
	OP_INT,   /* value */
	OP_PARAM, /* param: an integer scalar's index */
	OP_SMS,   /* the device's SMs ({"device": "sms"}): the value slot
		     after the parameters' (param, their count) */
#define X(name, spelling, arity) OP_##name,
	SIG_OPS(X)
#undef X
	OP_COUNT
} SigOp;

static const struct {
	const char *spelling;
	int arity;
} ops[OP_COUNT] = {
#define X(name, spelling, arity) [OP_##name] = { spelling, arity },
	SIG_OPS(X)
#undef X
};

typedef struct SigExpr {
	SigOp op;
	long long value;        /* INT */
	int param;              /* PARAM */
	int cast_bits;          /* CAST: width (1 for bool) */
	bool cast_signed;       /* CAST: two's complement */
	struct SigExpr *args[3]; /* ops[op].arity operands */
	struct SigExpr *next;   /* every node of a signature, for freeing */
} SigExpr;

/* How a scalar's value is stored in its argument slot. */
typedef enum SigCType {
	CT_DOUBLE, CT_FLOAT, CT_LLONG, CT_INT, CT_INT8, CT_UINT8, CT_BOOL,
	CT_COUNT
} SigCType;

static const struct {
	const char *spelling;
	bool integer;
	long long lo, hi; /* integers: the range */
} ctypes[CT_COUNT] = {
	[CT_DOUBLE] = { "double", false, 0, 0 },
	[CT_FLOAT] = { "float", false, 0, 0 },
	[CT_LLONG] = { "long long", true, LLONG_MIN, LLONG_MAX },
	[CT_INT] = { "int", true, INT_MIN, INT_MAX },
	[CT_INT8] = { "int8_t", true, INT8_MIN, INT8_MAX },
	[CT_UINT8] = { "uint8_t", true, 0, UINT8_MAX },
	[CT_BOOL] = { "bool", true, 0, 1 },
};

typedef struct SigExtent {
	int param; /* the tensor */
	int dim;
} SigExtent;

typedef struct SigParam {
	char *name;
	bool tensor;
	tilec_dtype dtype;      /* element type, or the scalar's dtype */
	SigCType ctype;         /* SCALAR: how it is passed */
	bool is_const;          /* TENSOR: read only */
	int rank;               /* TENSOR */
	SigExpr *shape[SIG_MAX_RANK]; /* TENSOR: declared extents */
	SigExtent *extent_of;   /* SCALAR: dims it is the whole extent of */
	int nextent_of;
} SigParam;

/* A tensor map the kernel takes after its parameters (docs/launch.md,
 * "tensor_maps"): built at each launch from the tensor's pointer and
 * extents. */
/* Tensor pointers an aligned test keeps on the stack (more: malloc). */
#define SIG_ALIGNED_ROOM 32

typedef struct SigTmap {
	int param;                      /* the tensor */
	unsigned box[SIG_MAX_RANK];     /* per tensor dim, outermost first */
	int swizzle;                    /* 32, 64 or 128 bytes */
} SigTmap;

struct TilecSignature {
	char *kernel;         /* the kernel's name */
	int nparams;
	SigParam *params;     /* in signature order */
	int ntmaps;
	SigTmap *tmaps;       /* passed after the params, in order */
	/* "aligned": the tensors whose bases and rows an aligned launch has
	 * on 16 bytes (docs/launch.md); their parameter indices. */
	int naligned;
	int *aligned;
	SigExpr *grid[3];     /* x, y, z */
	bool sms;             /* an expression reads the device's SMs */
	long long threads;    /* per block */
	long long smem_bytes; /* dynamic shared memory */
	SigExpr *nodes;       /* every expression node, for freeing */
};

const char *
tilec_rt_signature_kernel(const TilecSignature *s)
{
	return s->kernel;
}

void
tilec_rt_signature_free(TilecSignature *s)
{
	if (!s)
		return;
	for (SigExpr *e = s->nodes, *next; e; e = next) {
		next = e->next;
		free(e);
	}
	for (int i = 0; i < s->nparams; i++) {
		free(s->params[i].name);
		free(s->params[i].extent_of);
	}
	free(s->tmaps);
	free(s->params);
	free(s->aligned);
	free(s->kernel);
	free(s);
}

/* Print e as C for a message, parameters by name. */
static void
print_expr(TilecStr *b, const TilecSignature *s, const SigExpr *e)
{
	switch (e->op) {
	case OP_INT: tilec_rt_str_printf(b, "%lld", e->value); return;
	case OP_PARAM:
		tilec_rt_str_printf(b, "%s", s->params[e->param].name);
		return;
	case OP_SMS: tilec_rt_str_printf(b, "sms"); return;
	case OP_NEG: case OP_NOT: case OP_BNOT:
		tilec_rt_str_printf(b, "%s", e->op == OP_NEG ? "-" : ops[e->op].spelling);
		print_expr(b, s, e->args[0]);
		return;
	case OP_CEILDIV: case OP_MIN: case OP_MAX:
		tilec_rt_str_printf(b, "%s(", ops[e->op].spelling);
		print_expr(b, s, e->args[0]);
		tilec_rt_str_printf(b, ", ");
		print_expr(b, s, e->args[1]);
		tilec_rt_str_printf(b, ")");
		return;
	case OP_SELECT:
		tilec_rt_str_printf(b, "(");
		print_expr(b, s, e->args[0]);
		tilec_rt_str_printf(b, " ? ");
		print_expr(b, s, e->args[1]);
		tilec_rt_str_printf(b, " : ");
		print_expr(b, s, e->args[2]);
		tilec_rt_str_printf(b, ")");
		return;
	case OP_CAST:
		if (e->cast_bits == 1)
			tilec_rt_str_printf(b, "(bool)(");
		else
			tilec_rt_str_printf(b, "(%c%d)(", e->cast_signed ? 'i' : 'u',
					    e->cast_bits);
		print_expr(b, s, e->args[0]);
		tilec_rt_str_printf(b, ")");
		return;
	default:
		tilec_rt_str_printf(b, "(");
		print_expr(b, s, e->args[0]);
		tilec_rt_str_printf(b, " %s ", ops[e->op].spelling);
		print_expr(b, s, e->args[1]);
		tilec_rt_str_printf(b, ")");
		return;
	}
}

/* The value of e with the integer scalars vals[] (and after them the
 * device's SMs, 0 where none is known); false with *why set where C's
 * result is undefined (docs/launch.md) or the SMs are not known. */
static bool
eval(const SigExpr *e, const long long *vals, long long *out, const char **why)
{
	long long a = 0, b = 0;
	switch (e->op) {
	case OP_INT: *out = e->value; return true;
	case OP_PARAM: *out = vals[e->param]; return true;
	case OP_SMS:
		if (vals[e->param] < 1) {
			*why = "the device's SM count is not known: no GPU";
			return false;
		}
		*out = vals[e->param];
		return true;
	case OP_LAND:
	case OP_LOR:
		if (!eval(e->args[0], vals, &a, why))
			return false;
		if ((e->op == OP_LAND) == (a == 0)) {
			*out = e->op == OP_LOR;
			return true;
		}
		if (!eval(e->args[1], vals, &b, why))
			return false;
		*out = b != 0;
		return true;
	case OP_SELECT:
		if (!eval(e->args[0], vals, &a, why))
			return false;
		return eval(e->args[a ? 1 : 2], vals, out, why);
	default:
		break;
	}
	if (!eval(e->args[0], vals, &a, why))
		return false;
	if (ops[e->op].arity == 2 && !eval(e->args[1], vals, &b, why))
		return false;
	switch (e->op) {
	case OP_ADD:
		if ((b > 0 && a > LLONG_MAX - b) || (b < 0 && a < LLONG_MIN - b))
			goto overflow;
		*out = a + b;
		return true;
	case OP_SUB:
		if ((b < 0 && a > LLONG_MAX + b) || (b > 0 && a < LLONG_MIN + b))
			goto overflow;
		*out = a - b;
		return true;
	case OP_MUL:
		if (a != 0 && b != 0 &&
		    (a > 0 ? (b > 0 ? a > LLONG_MAX / b : b < LLONG_MIN / a)
			   : (b > 0 ? a < LLONG_MIN / b : b < LLONG_MAX / a)))
			goto overflow;
		*out = a * b;
		return true;
	case OP_DIV:
	case OP_REM:
	case OP_CEILDIV:
		if (b == 0) {
			*why = "division by zero";
			return false;
		}
		if (b == -1 && a == LLONG_MIN)
			goto overflow;
		*out = e->op == OP_DIV ? a / b
		       : e->op == OP_REM ? a % b
					 : a / b + (a % b > 0);
		return true;
	case OP_SHL:
	case OP_SHR:
		if (b < 0 || b > 63 || (e->op == OP_SHL && a < 0)) {
			*why = "a shift out of range";
			return false;
		}
		if (e->op == OP_SHL && a > (LLONG_MAX >> b))
			goto overflow;
		*out = e->op == OP_SHL ? a << b : a >> b;
		return true;
	case OP_LT: *out = a < b; return true;
	case OP_LE: *out = a <= b; return true;
	case OP_GT: *out = a > b; return true;
	case OP_GE: *out = a >= b; return true;
	case OP_EQ: *out = a == b; return true;
	case OP_NE: *out = a != b; return true;
	case OP_BAND: *out = a & b; return true;
	case OP_BXOR: *out = a ^ b; return true;
	case OP_BOR: *out = a | b; return true;
	case OP_NEG:
		if (a == LLONG_MIN)
			goto overflow;
		*out = -a;
		return true;
	case OP_NOT: *out = !a; return true;
	case OP_BNOT: *out = ~a; return true;
	case OP_MIN: *out = a < b ? a : b; return true;
	case OP_MAX: *out = a > b ? a : b; return true;
	case OP_CAST: {
		if (e->cast_bits == 1) {
			*out = a != 0;
			return true;
		}
		if (e->cast_bits == 64) {
			*out = a;
			return true;
		}
		unsigned long long m = (1ULL << e->cast_bits) - 1;
		unsigned long long u = (unsigned long long)a & m;
		if (e->cast_signed && (u >> (e->cast_bits - 1)))
			*out = -(long long)(m - u) - 1;
		else
			*out = (long long)u;
		return true;
	}
	default:
		*why = "an unknown operator";
		return false;
	}
overflow:
	*why = "a result outside 64 bits";
	return false;
}

/* --- Reading a launch document ---------------------------------------------------- */

typedef struct Parse {
	tilec_context *ctx;
	TilecSignature *sig;   /* being filled */
	const TilecJson *tunables; /* the kernel's "tunables" object */
	bool failed;
} Parse;

static void
bad(Parse *P, const char *fmt, const char *arg)
{
	if (P->failed)
		return;
	P->failed = true;
	TilecStr s = { 0 };
	tilec_rt_str_printf(&s, fmt, arg ? arg : "");
	tilec_rt_fail(P->ctx, TILEC_ERR_INVALID, "launch document, kernel %s: %s",
		      P->sig && P->sig->kernel ? P->sig->kernel : "?",
		      tilec_rt_str_cstr(&s));
	tilec_rt_str_free(&s);
}

static const char *
member_string(const TilecJson *j, const char *key)
{
	const TilecJson *v = tilec_rt_json_get(j, key);
	return v && v->kind == TILEC_JSON_STRING ? v->string : NULL;
}

static bool
member_int(const TilecJson *j, const char *key, long long *out)
{
	const TilecJson *v = tilec_rt_json_get(j, key);
	if (!v || v->kind != TILEC_JSON_NUMBER || !v->integral)
		return false;
	*out = v->ivalue;
	return true;
}

static SigExpr *
new_expr(Parse *P, SigOp op)
{
	SigExpr *e = calloc(1, sizeof *e);
	if (!e) {
		bad(P, "out of memory%s", NULL);
		return NULL;
	}
	e->op = op;
	e->next = P->sig->nodes;
	P->sig->nodes = e;
	return e;
}

static int
param_index(const TilecSignature *s, const char *name)
{
	for (int i = 0; name && i < s->nparams; i++)
		if (strcmp(s->params[i].name, name) == 0)
			return i;
	return -1;
}

static SigExpr *
read_expr(Parse *P, const TilecJson *j)
{
	if (P->failed)
		return NULL;
	if (!j || j->kind != TILEC_JSON_OBJECT) {
		bad(P, "an expression that is not an object%s", NULL);
		return NULL;
	}
	long long v;
	const char *name;
	if (member_int(j, "int", &v)) {
		SigExpr *e = new_expr(P, OP_INT);
		if (e)
			e->value = v;
		return e;
	}
	if ((name = member_string(j, "param"))) {
		int i = param_index(P->sig, name);
		if (i < 0 || P->sig->params[i].tensor ||
		    !ctypes[P->sig->params[i].ctype].integer) {
			bad(P, "'%s' in an expression is no integer scalar "
			    "parameter", name);
			return NULL;
		}
		SigExpr *e = new_expr(P, OP_PARAM);
		if (e)
			e->param = i;
		return e;
	}
	if ((name = member_string(j, "device"))) {
		if (strcmp(name, "sms") != 0) {
			bad(P, "an expression reads device attribute '%s', not "
			    "\"sms\"", name);
			return NULL;
		}
		SigExpr *e = new_expr(P, OP_SMS);
		if (e)
			e->param = P->sig->nparams;
		P->sig->sms = true;
		return e;
	}
	if ((name = member_string(j, "tunable"))) {
		if (!member_int(P->tunables, name, &v)) {
			bad(P, "tunable '%s' has no value", name);
			return NULL;
		}
		SigExpr *e = new_expr(P, OP_INT);
		if (e)
			e->value = v;
		return e;
	}
	const char *op = member_string(j, "op");
	const TilecJson *args = tilec_rt_json_get(j, "args");
	int k = OP_INT;
	for (int i = OP_SMS + 1; op && i < OP_COUNT; i++)
		if (strcmp(ops[i].spelling, op) == 0)
			k = i;
	if (k == OP_INT) {
		bad(P, "an expression with no known operator (%s): sizes are "
		    "integer expressions", op ? op : "none");
		return NULL;
	}
	if (!args || args->kind != TILEC_JSON_ARRAY || args->n != ops[k].arity) {
		bad(P, "operator %s without its operands", op);
		return NULL;
	}
	SigExpr *e = new_expr(P, (SigOp)k);
	if (!e)
		return NULL;
	if (k == OP_CAST) {
		static const struct {
			const char *dtype;
			int bits;
			bool is_signed;
		} casts[] = { { "i64", 64, true }, { "i32", 32, true },
			      { "i8", 8, true },   { "u8", 8, false },
			      { "i4", 4, true },   { "bool", 1, false } };
		const char *dt = member_string(j, "dtype");
		e->cast_bits = 0;
		for (size_t i = 0; dt && i < sizeof casts / sizeof casts[0]; i++)
			if (strcmp(casts[i].dtype, dt) == 0) {
				e->cast_bits = casts[i].bits;
				e->cast_signed = casts[i].is_signed;
			}
		if (!e->cast_bits) {
			bad(P, "a cast to %s in a size", dt ? dt : "nothing");
			return NULL;
		}
	}
	for (int i = 0; i < ops[k].arity; i++)
		if (!(e->args[i] = read_expr(P, args->items[i])))
			return NULL;
	return e;
}

static void
read_param(Parse *P, const TilecJson *j, SigParam *p)
{
	const char *name = member_string(j, "name");
	const char *kind = member_string(j, "kind");
	const char *dtype = member_string(j, "dtype");
	const char *ctype = member_string(j, "ctype");
	if (!name || !kind || !dtype || !ctype ||
	    (strcmp(kind, "tensor") != 0 && strcmp(kind, "scalar") != 0)) {
		bad(P, "a parameter without name, kind, dtype and ctype%s", NULL);
		return;
	}
	if (!(p->name = strdup(name))) {
		bad(P, "out of memory%s", NULL);
		return;
	}
	int dt = tilec_dtype_from_name(dtype);
	if (dt < 0) {
		bad(P, "unknown dtype '%s'", dtype);
		return;
	}
	p->dtype = (tilec_dtype)dt;
	p->tensor = strcmp(kind, "tensor") == 0;
	if (p->tensor) {
		const TilecJson *c = tilec_rt_json_get(j, "const");
		p->is_const = c && c->kind == TILEC_JSON_BOOL && c->boolean;
		return; /* the shape once every parameter is known */
	}
	p->ctype = CT_COUNT;
	for (int i = 0; i < CT_COUNT; i++)
		if (strcmp(ctypes[i].spelling, ctype) == 0)
			p->ctype = (SigCType)i;
	if (p->ctype == CT_COUNT)
		bad(P, "scalar passed as '%s', which the runtime does not know",
		    ctype);
}

/* The shapes and extent lists: they name other parameters. */
static void
read_shapes(Parse *P, const TilecJson *j, SigParam *p)
{
	if (p->tensor) {
		const TilecJson *shape = tilec_rt_json_get(j, "shape");
		long long rank;
		if (!shape || shape->kind != TILEC_JSON_ARRAY ||
		    !member_int(j, "rank", &rank) || rank != shape->n ||
		    rank > SIG_MAX_RANK) {
			bad(P, "tensor '%s' without a rank and shape of that "
			    "many extents (at most 8)", p->name);
			return;
		}
		p->rank = (int)rank;
		for (int d = 0; d < p->rank; d++)
			p->shape[d] = read_expr(P, shape->items[d]);
		return;
	}
	const TilecJson *of = tilec_rt_json_get(j, "extent_of");
	if (!of)
		return;
	if (of->kind != TILEC_JSON_ARRAY) {
		bad(P, "extent_of of '%s' is not an array", p->name);
		return;
	}
	p->extent_of = calloc((size_t)of->n + 1, sizeof *p->extent_of);
	if (!p->extent_of) {
		bad(P, "out of memory%s", NULL);
		return;
	}
	for (int i = 0; i < of->n; i++) {
		long long dim;
		int t = param_index(P->sig, member_string(of->items[i], "tensor"));
		if (t < 0 || !P->sig->params[t].tensor ||
		    !member_int(of->items[i], "dim", &dim) || dim < 0 ||
		    dim >= SIG_MAX_RANK || !ctypes[p->ctype].integer) {
			bad(P, "extent_of of '%s' names no tensor dim", p->name);
			return;
		}
		p->extent_of[i].param = t;
		p->extent_of[i].dim = (int)dim;
		p->nextent_of++;
	}
}

/* "tensor_maps": each names a tensor parameter of rank 2 to 5, a box of
 * 1 to 256 elements per dim whose innermost row is `swizzle` bytes. */
static void
read_tmaps(Parse *P, const TilecJson *j)
{
	TilecSignature *s = P->sig;
	const TilecJson *maps = tilec_rt_json_get(j, "tensor_maps");
	if (!maps)
		return;
	if (maps->kind != TILEC_JSON_ARRAY ||
	    !(s->tmaps = calloc((size_t)maps->n + 1, sizeof *s->tmaps))) {
		bad(P, "tensor_maps is not an array%s", NULL);
		return;
	}
	for (int i = 0; i < maps->n && !P->failed; i++) {
		const TilecJson *m = maps->items[i];
		const TilecJson *box = tilec_rt_json_get(m, "box");
		SigTmap *t = &s->tmaps[i];
		long long sw;
		t->param = param_index(s, member_string(m, "tensor"));
		const SigParam *p = t->param >= 0 ? &s->params[t->param] : NULL;
		if (!p || !p->tensor || p->rank < 2 || p->rank > 5 || !box ||
		    box->kind != TILEC_JSON_ARRAY || box->n != p->rank ||
		    !member_int(m, "swizzle", &sw) ||
		    (sw != 32 && sw != 64 && sw != 128)) {
			bad(P, "a tensor map that names no tensor of rank 2 to 5 "
			    "with a box of its rank and a swizzle of 32, 64 or "
			    "128%s", NULL);
			return;
		}
		t->swizzle = (int)sw;
		for (int d = 0; d < p->rank; d++) {
			const TilecJson *b = box->items[d];
			if (b->kind != TILEC_JSON_NUMBER || !b->integral ||
			    b->ivalue < 1 || b->ivalue > 256) {
				bad(P, "a tensor map's box of '%s' is not 1 to 256 "
				    "elements along every dim", p->name);
				return;
			}
			t->box[d] = (unsigned)b->ivalue;
		}
		if (p->dtype == TILEC_I4 ||
		    t->box[p->rank - 1] * (unsigned)dtypes[p->dtype].align !=
		    (unsigned)sw) {
			bad(P, "a tensor map's box rows of '%s' are not its "
			    "swizzle's bytes", p->name);
			return;
		}
		s->ntmaps = i + 1;
	}
}

/* "aligned": names of tensor parameters, each once. */
static void
read_aligned(Parse *P, const TilecJson *j)
{
	TilecSignature *s = P->sig;
	const TilecJson *list = tilec_rt_json_get(j, "aligned");
	if (!list)
		return;
	if (list->kind != TILEC_JSON_ARRAY ||
	    !(s->aligned = calloc((size_t)list->n + 1, sizeof *s->aligned))) {
		bad(P, "aligned is not an array%s", NULL);
		return;
	}
	for (int i = 0; i < list->n; i++) {
		const TilecJson *e = list->items[i];
		int p = e->kind == TILEC_JSON_STRING ? param_index(s, e->string) : -1;
		for (int q = 0; p >= 0 && q < i; q++)
			if (s->aligned[q] == p)
				p = -1;
		if (p < 0 || !s->params[p].tensor) {
			bad(P, "aligned names something that is not a tensor "
			    "parameter, or one twice%s", NULL);
			return;
		}
		s->aligned[i] = p;
		s->naligned = i + 1;
	}
}

static TilecSignature *
read_kernel(tilec_context *ctx, const TilecJson *j, const char *backend)
{
	Parse P = { .ctx = ctx };
	TilecSignature *s = calloc(1, sizeof *s);
	if (!s) {
		tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	P.sig = s;
	const char *name = member_string(j, "kernel");
	const char *target = member_string(j, "target");
	const TilecJson *params = tilec_rt_json_get(j, "params");
	const TilecJson *grid = tilec_rt_json_get(j, "grid");
	P.tunables = tilec_rt_json_get(j, "tunables");
	if (!name || !(s->kernel = strdup(name))) {
		bad(&P, "a kernel without a name%s", NULL);
	} else if (!target || strcmp(target, backend) != 0) {
		bad(&P, "translated for %s, not for this context's backend",
		    target ? target : "no target");
	} else if (!params || params->kind != TILEC_JSON_ARRAY || !grid ||
		   grid->kind != TILEC_JSON_ARRAY || grid->n != 3 ||
		   !member_int(j, "threads", &s->threads) || s->threads < 1 ||
		   !member_int(j, "smem_bytes", &s->smem_bytes) ||
		   s->smem_bytes < 0 || !P.tunables ||
		   P.tunables->kind != TILEC_JSON_OBJECT) {
		bad(&P, "a kernel without params, a grid of 3, threads, "
		    "smem_bytes and tunables%s", NULL);
	} else if (!(s->params = calloc((size_t)params->n + 1,
					sizeof *s->params))) {
		bad(&P, "out of memory%s", NULL);
	} else {
		for (int i = 0; i < params->n && !P.failed; i++) {
			read_param(&P, params->items[i], &s->params[i]);
			s->nparams = i + 1;
		}
		for (int i = 0; i < s->nparams && !P.failed; i++) {
			if (param_index(s, s->params[i].name) != i)
				bad(&P, "parameter '%s' twice", s->params[i].name);
			read_shapes(&P, params->items[i], &s->params[i]);
		}
		for (int d = 0; d < 3 && !P.failed; d++)
			s->grid[d] = read_expr(&P, grid->items[d]);
		if (!P.failed)
			read_tmaps(&P, j);
		if (!P.failed)
			read_aligned(&P, j);
	}
	if (P.failed) {
		tilec_rt_signature_free(s);
		return NULL;
	}
	return s;
}

tilec_status
tilec_rt_signatures_parse(tilec_context *ctx, const char *backend,
			  const char *text, TilecSignature ***sigs, int *nsigs)
{
	char why[160];
	*sigs = NULL;
	*nsigs = 0;
	TilecJson *doc = tilec_rt_json_parse(text, strlen(text), why, sizeof why);
	if (!doc)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID, "the launch document "
				     "is not JSON: %s", why);
	const char *format = member_string(doc, "format");
	const TilecJson *ks = tilec_rt_json_get(doc, "kernels");
	if (!format || strcmp(format, "tilec-launch/1") != 0 || !ks ||
	    ks->kind != TILEC_JSON_ARRAY) {
		tilec_rt_json_free(doc);
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID, "not a launch "
				     "document (format \"tilec-launch/1\" with "
				     "a kernels array, docs/launch.md)");
	}
	TilecSignature **out = calloc((size_t)ks->n + 1, sizeof *out);
	if (!out) {
		tilec_rt_json_free(doc);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < ks->n; i++) {
		if (!(out[i] = read_kernel(ctx, ks->items[i], backend))) {
			for (int j = 0; j < i; j++)
				tilec_rt_signature_free(out[j]);
			free(out);
			tilec_rt_json_free(doc);
			return TILEC_ERR_INVALID;
		}
	}
	*sigs = out;
	*nsigs = ks->n;
	tilec_rt_json_free(doc);
	return TILEC_OK;
}

/* --- The checked launch ----------------------------------------------------------- */

/* A parameter as a message names it: "tensor 'A' (const f16[M][K])". */
static void
describe(TilecStr *b, const TilecSignature *s, int i)
{
	const SigParam *p = &s->params[i];
	if (!p->tensor) {
		tilec_rt_str_printf(b, "'%s' (%s)", p->name,
				    ctypes[p->ctype].spelling);
		return;
	}
	tilec_rt_str_printf(b, "'%s' (%s%s", p->name, p->is_const ? "const " : "",
			    dtypes[p->dtype].name);
	for (int d = 0; d < p->rank; d++) {
		tilec_rt_str_printf(b, "[");
		print_expr(b, s, p->shape[d]);
		tilec_rt_str_printf(b, "]");
	}
	tilec_rt_str_printf(b, ")");
}

static tilec_status
launch_fail(tilec_context *ctx, const TilecSignature *s, TilecStr *msg)
{
	tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_INVALID, "%s: %s",
					s->kernel, msg->oom ? "out of memory"
							    : tilec_rt_str_cstr(msg));
	tilec_rt_str_free(msg);
	return st;
}

static const char *
arg_kind_name(tilec_arg_kind k)
{
	return k == TILEC_ARG_TENSOR ? "a tensor"
	       : k == TILEC_ARG_INT  ? "an integer"
				     : "a float";
}

/* tilec_arg's size in its first version: every field up to `device`.
 * read_only came after it. */
#define ARG_SIZE_FIRST (offsetof(tilec_arg, device) + sizeof(int))

/* Bind args to parameters: given[i] is parameter i's argument or NULL;
 * copies[] (zeroed) gets each argument as this runtime's struct. */
static bool
bind_args(const TilecSignature *s, const tilec_arg *args, int nargs,
	  tilec_arg *copies, const tilec_arg **given, TilecStr *msg)
{
	if (nargs < 0 || (nargs > 0 && !args)) {
		tilec_rt_str_printf(msg, "no argument array for %d arguments",
				    nargs);
		return false;
	}
	/* The caller's struct may be older (fields past its size read as
	 * zero: copies[] starts zeroed) or newer (fields past ours must be
	 * zero) than ours, but holds at least the first version's fields,
	 * which end with `device`. */
	size_t step = nargs ? args[0].size : 0;
	if (nargs && step < ARG_SIZE_FIRST) {
		tilec_rt_str_printf(msg, "the arguments were not made by "
				    "tilec_arg_tensor, tilec_arg_int or "
				    "tilec_arg_float (size %zu)", step);
		return false;
	}
	size_t known = step < sizeof *copies ? step : sizeof *copies;
	int npos = 0;
	for (int a = 0; a < nargs; a++) {
		const unsigned char *raw = (const unsigned char *)args + step * (size_t)a;
		memcpy(&copies[a], raw, known);
		for (size_t b = known; b < step; b++)
			if (raw[b]) {
				tilec_rt_str_printf(msg, "argument %d has fields "
						    "this runtime does not know",
						    a + 1);
				return false;
			}
		const tilec_arg *x = &copies[a];
		if (x->size != step || x->kind < TILEC_ARG_TENSOR ||
		    x->kind > TILEC_ARG_FLOAT) {
			tilec_rt_str_printf(msg, "argument %d was not made by "
					    "tilec_arg_tensor, tilec_arg_int "
					    "or tilec_arg_float", a + 1);
			return false;
		}
		if (!x->name) {
			npos++;
			continue;
		}
		int i = param_index(s, x->name);
		if (i < 0) {
			tilec_rt_str_printf(msg, "no parameter '%s' (the "
					    "parameters are", x->name);
			for (int j = 0; j < s->nparams; j++)
				tilec_rt_str_printf(msg, "%s %s", j ? "," : "",
						    s->params[j].name);
			tilec_rt_str_printf(msg, ")");
			return false;
		}
		if (given[i]) {
			tilec_rt_str_printf(msg, "parameter '%s' given twice",
					    x->name);
			return false;
		}
		given[i] = x;
	}
	/* Positional ones: every free parameter, or every free one that
	 * cannot be inferred.  With none, whatever is missing is named
	 * below. */
	int nfree = 0, nneeded = 0;
	for (int i = 0; i < s->nparams; i++)
		if (!given[i]) {
			nfree++;
			nneeded += s->params[i].tensor || !s->params[i].nextent_of;
		}
	if (npos && npos != nfree && npos != nneeded) {
		tilec_rt_str_printf(msg, "%d argument%s by position; the "
				    "parameters left take %d (", npos,
				    npos == 1 ? "" : "s", nfree);
		for (int i = 0, n = 0; i < s->nparams; i++)
			if (!given[i])
				tilec_rt_str_printf(msg, "%s%s", n++ ? ", " : "",
						    s->params[i].name);
		tilec_rt_str_printf(msg, "), or %d without the extents taken "
				    "from the tensors (", nneeded);
		for (int i = 0, n = 0; i < s->nparams; i++)
			if (!given[i] &&
			    (s->params[i].tensor || !s->params[i].nextent_of))
				tilec_rt_str_printf(msg, "%s%s", n++ ? ", " : "",
						    s->params[i].name);
		tilec_rt_str_printf(msg, ")");
		return false;
	}
	bool all = npos == nfree;
	int next = 0;
	if (!npos)
		return true;
	for (int a = 0; a < nargs; a++) {
		if (copies[a].name)
			continue;
		while (given[next] ||
		       (!all && !s->params[next].tensor &&
			s->params[next].nextent_of))
			next++;
		given[next++] = &copies[a];
	}
	return true;
}

/* Check one tensor argument's own properties. */
static bool
check_tensor(const TilecSignature *s, int i, const tilec_arg *x,
	     tilec_backend backend, int device, TilecStr *msg, int *problem)
{
	const SigParam *p = &s->params[i];
	*problem = TILEC_PROBLEM_TYPE;
	if (x->kind != TILEC_ARG_TENSOR) {
		tilec_rt_str_printf(msg, "tensor ");
		describe(msg, s, i);
		tilec_rt_str_printf(msg, " was given %s", arg_kind_name(x->kind));
		return false;
	}
	if (x->dtype != p->dtype) {
		const char *dn = tilec_dtype_name(x->dtype);
		tilec_rt_str_printf(msg, "tensor ");
		describe(msg, s, i);
		tilec_rt_str_printf(msg, " was given %s elements", dn ? dn
							: "no tilec dtype's");
		return false;
	}
	*problem = TILEC_PROBLEM_VALUE;
	if (x->read_only && !p->is_const) {
		tilec_rt_str_printf(msg, "tensor '%s': the kernel writes this "
				    "tensor (it is not const), and the array "
				    "given is read-only", p->name);
		return false;
	}
	bool gpu = backend != TILEC_BACKEND_OPENMP;
	if ((x->memory == TILEC_MEMORY_HOST && gpu) ||
	    (x->memory == TILEC_MEMORY_DEVICE && (!gpu || x->device != device))) {
		tilec_rt_str_printf(msg, "tensor '%s' is in ", p->name);
		if (x->memory == TILEC_MEMORY_HOST)
			tilec_rt_str_printf(msg, "host memory");
		else
			tilec_rt_str_printf(msg, "the memory of GPU %d", x->device);
		if (gpu)
			tilec_rt_str_printf(msg, "; the kernel runs on GPU %d",
					    device);
		else
			tilec_rt_str_printf(msg, "; the kernel runs on the CPU");
		return false;
	}
	if (x->rank != p->rank) {
		tilec_rt_str_printf(msg, "tensor ");
		describe(msg, s, i);
		tilec_rt_str_printf(msg, " has rank %d; the argument has rank %d",
				    p->rank, x->rank);
		return false;
	}
	if (p->rank && !x->shape) {
		tilec_rt_str_printf(msg, "tensor '%s' was given no shape", p->name);
		return false;
	}
	bool empty = false;
	for (int d = 0; d < p->rank; d++) {
		if (x->shape[d] < 0) {
			tilec_rt_str_printf(msg, "tensor '%s' was given extent "
					    "%lld along dim %d", p->name,
					    (long long)x->shape[d], d);
			return false;
		}
		empty |= x->shape[d] == 0;
	}
	/* Row-major and contiguous: each stride the product of the extents
	 * inside it (where the extent is 1 any stride will do). */
	if (x->strides) {
		long long want = 1;
		for (int d = p->rank - 1; d >= 0 && !empty; d--) {
			if (x->shape[d] != 1 && x->strides[d] != want) {
				tilec_rt_str_printf(msg, "tensor '%s' is not "
						    "row-major contiguous: its "
						    "stride along dim %d is "
						    "%lld elements, where the "
						    "kernel assumes %lld (make "
						    "a contiguous copy)",
						    p->name, d,
						    (long long)x->strides[d], want);
				return false;
			}
			if (want > LLONG_MAX / (x->shape[d] ? x->shape[d] : 1))
				break;
			want *= x->shape[d];
		}
	}
	if (!x->data && !empty) {
		tilec_rt_str_printf(msg, "tensor '%s' was given a NULL pointer",
				    p->name);
		return false;
	}
	if ((uintptr_t)x->data % (uintptr_t)dtypes[p->dtype].align) {
		tilec_rt_str_printf(msg, "tensor '%s': its data is not aligned "
				    "to its %d-byte elements", p->name,
				    dtypes[p->dtype].align);
		return false;
	}
	return true;
}

/* The integer scalars' values, given or inferred, checked against every
 * dim they are the extent of. */
static bool
bind_scalars(const TilecSignature *s, const tilec_arg **given,
	     long long *vals, double *fvals, TilecStr *msg, int *problem)
{
	for (int i = 0; i < s->nparams; i++) {
		const SigParam *p = &s->params[i];
		const tilec_arg *x = given[i];
		if (p->tensor)
			continue;
		*problem = TILEC_PROBLEM_TYPE;
		bool integer = ctypes[p->ctype].integer;
		if (x && x->kind == TILEC_ARG_TENSOR) {
			tilec_rt_str_printf(msg, "scalar ");
			describe(msg, s, i);
			tilec_rt_str_printf(msg, " was given a tensor");
			return false;
		}
		if (x && integer && x->kind != TILEC_ARG_INT) {
			tilec_rt_str_printf(msg, "scalar ");
			describe(msg, s, i);
			tilec_rt_str_printf(msg, " was given a float (%g)", x->fvalue);
			return false;
		}
		if (x && !integer) {
			fvals[i] = x->kind == TILEC_ARG_INT ? (double)x->ivalue
							    : x->fvalue;
			continue;
		}
		if (!x && !p->nextent_of) {
			tilec_rt_str_printf(msg, "missing argument ");
			describe(msg, s, i);
			return false;
		}
		/* The dim it was taken from, for messages. */
		int from = -1;
		*problem = TILEC_PROBLEM_VALUE;
		if (x) {
			vals[i] = x->ivalue;
		} else {
			from = 0;
			const SigExtent *e = &p->extent_of[0];
			vals[i] = given[e->param]->shape[e->dim];
		}
		if (vals[i] < ctypes[p->ctype].lo ||
		    vals[i] > ctypes[p->ctype].hi) {
			tilec_rt_str_printf(msg, "scalar '%s' is %lld, which %s %s "
					    "does not hold", p->name, vals[i],
					    p->ctype == CT_INT ? "an" : "a",
					    ctypes[p->ctype].spelling);
			return false;
		}
		for (int j = 0; j < p->nextent_of; j++) {
			const SigExtent *e = &p->extent_of[j];
			const SigParam *t = &s->params[e->param];
			long long got = given[e->param]->shape[e->dim];
			if (got == vals[i])
				continue;
			if (from < 0)
				tilec_rt_str_printf(msg, "tensor '%s' has extent "
						    "%lld along dim %d, where "
						    "the kernel declares %s, "
						    "which is %lld", t->name, got,
						    e->dim, p->name, vals[i]);
			else
				tilec_rt_str_printf(msg, "extent '%s' is %lld "
						    "from tensor '%s' (dim %d) "
						    "but %lld from tensor '%s' "
						    "(dim %d): the shapes "
						    "disagree", p->name, vals[i],
						    s->params[p->extent_of[0].param].name,
						    p->extent_of[0].dim, got,
						    t->name, e->dim);
			return false;
		}
	}
	return true;
}

/* Every tensor's shape against its declared extents. */
static bool
check_shapes(const TilecSignature *s, const tilec_arg **given,
	     const long long *vals, TilecStr *msg)
{
	for (int i = 0; i < s->nparams; i++) {
		const SigParam *p = &s->params[i];
		for (int d = 0; p->tensor && d < p->rank; d++) {
			long long want;
			const char *why = NULL;
			if (!eval(p->shape[d], vals, &want, &why)) {
				tilec_rt_str_printf(msg, "tensor '%s': its "
						    "declared extent along dim "
						    "%d, ", p->name, d);
				print_expr(msg, s, p->shape[d]);
				tilec_rt_str_printf(msg, ", is undefined here "
						    "(%s)", why);
				return false;
			}
			if (want == given[i]->shape[d])
				continue;
			tilec_rt_str_printf(msg, "tensor ");
			describe(msg, s, i);
			tilec_rt_str_printf(msg, " was given shape [");
			for (int j = 0; j < p->rank; j++)
				tilec_rt_str_printf(msg, "%s%lld", j ? ", " : "",
						    (long long)given[i]->shape[j]);
			tilec_rt_str_printf(msg, "]; along dim %d the kernel "
					    "declares ", d);
			print_expr(msg, s, p->shape[d]);
			tilec_rt_str_printf(msg, " = %lld", want);
			return false;
		}
	}
	return true;
}

/* One argument slot: what args[i] points to. */
typedef union Slot {
	void *ptr;
	double f64;
	float f32;
	long long i64;
	int i32;
	int8_t i8;
	uint8_t u8;
	bool b;
} Slot;

bool
tilec_rt_tmap_spec(const TilecSignature *s, int i, void *ptr,
		   const long long *vals, TilecTmapSpec *spec)
{
	const SigTmap *t = &s->tmaps[i];
	const SigParam *p = &s->params[t->param];
	long long elem = dtypes[p->dtype].align, stride = elem;
	memset(spec, 0, sizeof *spec);
	spec->dtype = p->dtype;
	spec->rank = p->rank;
	spec->base = ptr;
	spec->swizzle = t->swizzle;
	if ((uintptr_t)ptr % 16)
		return false;
	for (int d = p->rank - 1, j = 0; d >= 0; d--, j++) {
		long long x;
		const char *why;
		if (!eval(p->shape[d], vals, &x, &why) || x < 1 || x > UINT32_MAX ||
		    (j > 0 && stride % 16) || x > LLONG_MAX / stride)
			return false;
		spec->dims[j] = (unsigned long long)x;
		spec->box[j] = t->box[d];
		if (j > 0)
			spec->strides[j - 1] = (unsigned long long)stride;
		stride *= x;
	}
	return spec->dims[0] * (unsigned long long)elem % 16 == 0;
}

/* Tensor map i of s for a tensor at ptr whose extents the scalar values
 * vals give, into out (TILEC_TMAP_BYTES): the backend's 128-byte
 * descriptor, then the 32-bit flag saying it was built
 * (tilec_rt_tmap_spec says when it can be); otherwise the kernel's loop
 * without TMA runs (templates/cuda/tilec_sm90.cuh, TmaCopy). */
static void
build_tmap(tilec_context *ctx, const TilecSignature *s, int i, void *ptr,
	   const long long *vals, unsigned char *out)
{
	const TilecBackendOps *be = tilec_rt_ops(ctx);
	TilecTmapSpec spec;
	unsigned usable = 0;
	memset(out, 0, TILEC_TMAP_BYTES);
	if (be->tensor_map && tilec_rt_tmap_spec(s, i, ptr, vals, &spec) &&
	    be->tensor_map(ctx, &spec, out) == TILEC_OK)
		usable = 1;
	memcpy(out + 128, &usable, sizeof usable);
}

/* Whether a launch is aligned (docs/runtime.md, "Aligned launches"):
 * every tensor s lists under "aligned" (at ptrs[param]) starts on 16
 * bytes and has whole 16-byte rows, its innermost extent in bytes a
 * multiple of 16, and each of its `ntmaps` tensor maps at maps was
 * built.  False for a kernel that lists none: it has one build. */
static bool
launch_aligned(const TilecSignature *s, void *const *ptrs,
	       const long long *vals, const unsigned char *maps)
{
	if (!s->naligned)
		return false;
	for (int i = 0; i < s->naligned; i++) {
		const SigParam *p = &s->params[s->aligned[i]];
		long long x;
		const char *why;
		if ((uintptr_t)ptrs[s->aligned[i]] % 16)
			return false;
		if (p->rank < 2)
			continue;
		if (!eval(p->shape[p->rank - 1], vals, &x, &why) || x < 0)
			return false;
		/* i4 packs two elements a byte: 32 of them in 16 bytes. */
		long long per16 = p->dtype == TILEC_I4 ? 32 : 16 / dtypes[p->dtype].align;
		if (per16 < 1 || x % per16)
			return false;
	}
	for (int i = 0; i < s->ntmaps; i++) {
		unsigned usable;
		memcpy(&usable, maps + (size_t)i * TILEC_TMAP_BYTES + 128, sizeof usable);
		if (!usable)
			return false;
	}
	return true;
}

int
tilec_rt_signature_aligned(const TilecSignature *s)
{
	return s ? s->naligned : 0;
}

/* Where a launch's working arrays go: the caller's buffer when they fit
 * (a kernel of a few parameters: no allocation per launch), one
 * malloc'd block otherwise.  Each array starts on a max_align_t. */
static size_t
round_up(size_t bytes)
{
	size_t a = _Alignof(max_align_t);
	return (bytes + a - 1) / a * a;
}

tilec_status
tilec_rt_prepare_launch(tilec_context *ctx, const TilecSignature *s,
			tilec_backend backend, int device, int sms,
			const tilec_arg *args, int nargs, void *stream,
			TilecLaunchBuf *buf, void ***argv_out,
			tilec_launch_config *cfg, bool *empty, bool *aligned,
			int *problem)
{
	TilecStr msg = { 0 };
	int n = s->nparams;
	size_t np = (size_t)n + 1, na = (size_t)(nargs > 0 ? nargs : 0) + 1;
	size_t nargv = np + (size_t)s->ntmaps;
	size_t at_copies = round_up(np * sizeof(const tilec_arg *));
	size_t at_vals = at_copies + round_up(na * sizeof(tilec_arg));
	size_t at_fvals = at_vals + round_up(np * sizeof(long long));
	size_t at_argv = at_fvals + round_up(np * sizeof(double));
	/* The pointers, then the slots they point to, then the tensor
	 * maps (64-byte aligned within the block). */
	size_t at_maps = round_up(at_argv + nargv * sizeof(void *) + np * sizeof(Slot));
	size_t total = at_maps + (s->ntmaps ? (size_t)s->ntmaps * TILEC_TMAP_BYTES + 64 : 0);
	unsigned char *block = buf->room.bytes;
	buf->heap = NULL;
	if (total > sizeof buf->room.bytes)
		block = buf->heap = malloc(total);
	tilec_status st = TILEC_ERR_INVALID;
	*argv_out = NULL;
	*empty = false;
	*aligned = false;
	*problem = TILEC_PROBLEM_NONE;
	if (!block)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	memset(block, 0, total);
	const tilec_arg **given = (const tilec_arg **)(void *)block;
	tilec_arg *copies = (tilec_arg *)(void *)(block + at_copies);
	long long *vals = (long long *)(void *)(block + at_vals);
	double *fvals = (double *)(void *)(block + at_fvals);
	void **argv = (void **)(void *)(block + at_argv);
	Slot *slots = (Slot *)(void *)(argv + nargv);
	unsigned char *maps = block + at_maps;
	maps += (64 - (uintptr_t)maps % 64) % 64;
	*problem = TILEC_PROBLEM_TYPE;
	if (!bind_args(s, args, nargs, copies, given, &msg))
		goto invalid;
	for (int i = 0; i < n; i++) {
		if (!s->params[i].tensor)
			continue;
		*problem = TILEC_PROBLEM_TYPE;
		if (!given[i]) {
			tilec_rt_str_printf(&msg, "missing argument: tensor ");
			describe(&msg, s, i);
			goto invalid;
		}
		if (!check_tensor(s, i, given[i], backend, device, &msg, problem))
			goto invalid;
	}
	if (!bind_scalars(s, given, vals, fvals, &msg, problem))
		goto invalid;
	vals[n] = sms;
	*problem = TILEC_PROBLEM_VALUE;
	if (!check_shapes(s, given, vals, &msg))
		goto invalid;
	memset(cfg, 0, sizeof *cfg);
	cfg->block[0] = (unsigned)s->threads;
	cfg->block[1] = cfg->block[2] = 1;
	cfg->shared_bytes = (size_t)s->smem_bytes;
	cfg->stream = stream;
	for (int d = 0; d < 3; d++) {
		long long g;
		const char *why = NULL;
		if (!eval(s->grid[d], vals, &g, &why)) {
			tilec_rt_str_printf(&msg, "the grid along %c, ", "xyz"[d]);
			print_expr(&msg, s, s->grid[d]);
			tilec_rt_str_printf(&msg, ", is undefined for these "
					    "arguments (%s)", why);
			goto invalid;
		}
		if (g > INT_MAX) {
			tilec_rt_str_printf(&msg, "the grid along %c, ", "xyz"[d]);
			print_expr(&msg, s, s->grid[d]);
			tilec_rt_str_printf(&msg, ", is %lld blocks: more than "
					    "a launch takes", g);
			goto invalid;
		}
		*empty |= g <= 0;
		cfg->grid[d] = g > 0 ? (unsigned)g : 0;
	}
	for (int i = 0; i < n; i++) {
		const SigParam *p = &s->params[i];
		argv[i] = &slots[i];
		if (p->tensor) {
			slots[i].ptr = given[i]->data;
			continue;
		}
		switch (p->ctype) {
		case CT_DOUBLE: slots[i].f64 = fvals[i]; break;
		case CT_FLOAT: slots[i].f32 = (float)fvals[i]; break;
		case CT_LLONG: slots[i].i64 = vals[i]; break;
		case CT_INT: slots[i].i32 = (int)vals[i]; break;
		case CT_INT8: slots[i].i8 = (int8_t)vals[i]; break;
		case CT_UINT8: slots[i].u8 = (uint8_t)vals[i]; break;
		case CT_BOOL: slots[i].b = vals[i] != 0; break;
		default: break;
		}
	}
	for (int i = 0; i < s->ntmaps; i++) {
		unsigned char *m = maps + (size_t)i * TILEC_TMAP_BYTES;
		build_tmap(ctx, s, i, given[s->tmaps[i].param]->data, vals, m);
		argv[n + i] = m;
	}
	if (s->naligned) {
		/* The tensors' pointers, in the slots (a scalar's is unread). */
		void *ptrs[SIG_ALIGNED_ROOM] = { 0 };
		void **p = n <= SIG_ALIGNED_ROOM ? ptrs : malloc(sizeof *p * (size_t)n);
		if (!p) {
			tilec_rt_str_printf(&msg, "out of memory");
			goto invalid;
		}
		for (int i = 0; i < n; i++)
			p[i] = s->params[i].tensor ? given[i]->data : NULL;
		*aligned = launch_aligned(s, p, vals, maps);
		if (p != ptrs)
			free(p);
	}
	*argv_out = argv;
	*problem = TILEC_PROBLEM_NONE;
	tilec_rt_str_free(&msg);
	return TILEC_OK;
invalid:
	st = launch_fail(ctx, s, &msg);
	tilec_rt_str_free(&msg);
	free(buf->heap);
	buf->heap = NULL;
	return st;
}

int
tilec_rt_signature_tmaps(const TilecSignature *s)
{
	return s ? s->ntmaps : 0;
}

bool
tilec_rt_signature_sms(const TilecSignature *s)
{
	return s && s->sms;
}

tilec_status
tilec_rt_raw_tmaps(tilec_context *ctx, const TilecSignature *s, void **args,
		   TilecLaunchBuf *buf, void ***argv_out, bool *aligned)
{
	int n = s->nparams;
	size_t at_vals = round_up((size_t)(n + s->ntmaps + 1) * sizeof(void *));
	size_t at_maps = round_up(at_vals + (size_t)(n + 1) * sizeof(long long));
	size_t total = at_maps + (size_t)s->ntmaps * TILEC_TMAP_BYTES + 64;
	unsigned char *block = buf->room.bytes;
	buf->heap = NULL;
	if (total > sizeof buf->room.bytes)
		block = buf->heap = malloc(total);
	if (!block)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	void **argv = (void **)(void *)block;
	long long *vals = (long long *)(void *)(block + at_vals);
	unsigned char *maps = block + at_maps;
	maps += (64 - (uintptr_t)maps % 64) % 64;
	/* The integer scalars, which the extents are expressions of. */
	for (int i = 0; i < n; i++) {
		const SigParam *p = &s->params[i];
		argv[i] = args[i];
		vals[i] = 0;
		if (p->tensor || !args[i])
			continue;
		switch (p->ctype) {
		case CT_LLONG: vals[i] = *(const long long *)args[i]; break;
		case CT_INT: vals[i] = *(const int *)args[i]; break;
		case CT_INT8: vals[i] = *(const int8_t *)args[i]; break;
		case CT_UINT8: vals[i] = *(const uint8_t *)args[i]; break;
		case CT_BOOL: vals[i] = *(const bool *)args[i]; break;
		default: break;
		}
	}
	for (int i = 0; i < s->ntmaps; i++) {
		const SigTmap *t = &s->tmaps[i];
		unsigned char *m = maps + (size_t)i * TILEC_TMAP_BYTES;
		void *const *ptr = args[t->param];
		build_tmap(ctx, s, i, ptr ? *ptr : NULL, vals, m);
		argv[n + i] = m;
	}
	argv[n + s->ntmaps] = NULL;
	*argv_out = argv;
	*aligned = false;
	if (s->naligned) {
		/* argv's first n slots, reused for the tensors' pointers
		 * while the test reads them, then restored. */
		for (int i = 0; i < n; i++)
			argv[i] = s->params[i].tensor && args[i] ? *(void **)args[i] : NULL;
		bool missing = false;
		for (int i = 0; i < s->naligned; i++)
			missing |= !args[s->aligned[i]];
		*aligned = !missing && launch_aligned(s, argv, vals, maps);
		for (int i = 0; i < n; i++)
			argv[i] = args[i];
	}
	return TILEC_OK;
}
