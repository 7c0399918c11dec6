/*
 * parse.c - libclang cursors -> tile IR.
 *
 * Input: a tile program's path and text.  libclang parses it as C11 with the
 * embedded tilec.h as its only header (no system headers), so every C error
 * is caught by clang first and relayed with its location.  We then walk the
 * cursors of each TILE_KERNEL function and build the IR: names resolve to
 * TcVars through a scope stack keyed by clang's declaration cursors, every
 * node keeps the location it came from, and anything that is valid C but not
 * a tile program (pointers, while loops, calls to other functions, ...) is
 * reported here with a located error.
 *
 * The parser checks form, not meaning: shapes, dtypes and scopes of tile
 * operations are check.c's business.  It never longjmps: each function
 * returns NULL (or false) after reporting, and callers unwind.
 */
#include "ir/tilec_int.h"

#include <clang-c/Index.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the embedded tilec.h appears to live, for clang. */
#define TC_VIRTUAL_INCLUDE "/tilec-virtual/include"

/* A name in scope: the clang declaration and the var it became. */
typedef struct Binding {
	CXCursor decl; /* VarDecl, ParmDecl or EnumConstantDecl */
	TcVar *var;    /* what references to it mean */
} Binding;

typedef struct Parser {
	TcArena *a;           /* owns the IR */
	TcDiags *d;           /* where errors go */
	const TcOptions *opt; /* compilation options */
	const char *path;     /* the program's path, as given */
	CXTranslationUnit tu; /* the parsed program */
	CXFile main_file;     /* the program's file in tu */
	TcProgram *prog;      /* being built */
	TcKernel *k;          /* the kernel being parsed, or NULL */
	Binding *binds;       /* scope stack, innermost last */
	int nbinds;           /* bindings in use */
	int capbinds;         /* bindings allocated */
	int depth;            /* statement nesting: 0 = kernel body top */
	int nest;             /* expressions and statements being parsed,
			       * one inside the other (TC_MAX_NESTING) */
} Parser;

/* --- Locations and errors ----------------------------------------------------- */

static TcLoc
loc_from(Parser *P, CXSourceLocation sl)
{
	CXFile file;
	unsigned line, col;
	/* Prefer where the text is spelled when that is the program itself
	 * (a macro argument); otherwise where the macro was used. */
	clang_getSpellingLocation(sl, &file, &line, &col, NULL);
	if (!file || !clang_File_isEqual(file, P->main_file))
		clang_getExpansionLocation(sl, &file, &line, &col, NULL);
	TcLoc loc = { P->path, (int)line, (int)col };
	if (file && !clang_File_isEqual(file, P->main_file)) {
		CXString name = clang_getFileName(file);
		loc.file = tc_strdup(P->a, clang_getCString(name));
		clang_disposeString(name);
	}
	return loc;
}

static TcLoc
loc_of(Parser *P, CXCursor c)
{
	return loc_from(P, clang_getCursorLocation(c));
}

/* The start of a cursor's extent: the left edge of an expression. */
static TcLoc
start_of(Parser *P, CXCursor c)
{
	return loc_from(P, clang_getRangeStart(clang_getCursorExtent(c)));
}

TC_PRINTF(3, 4)
static void
error(Parser *P, TcLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(P->d, TC_ERROR, loc, fmt, ap);
	va_end(ap);
}

/* --- Cursor helpers -------------------------------------------------------------- */

typedef struct Kids {
	CXCursor *c; /* children in visit order */
	int n;       /* how many */
	int cap;     /* allocated */
	TcArena *a;  /* where c lives */
} Kids;

static enum CXChildVisitResult
collect(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	Kids *k = data;
	if (k->n == k->cap) {
		int cap = k->cap ? k->cap * 2 : 8;
		CXCursor *nc = tc_alloc(k->a, sizeof *nc * (size_t)cap);
		if (k->n)
			memcpy(nc, k->c, sizeof *nc * (size_t)k->n);
		k->c = nc;
		k->cap = cap;
	}
	k->c[k->n++] = c;
	return CXChildVisit_Continue;
}

static Kids
kids(Parser *P, CXCursor c)
{
	Kids k = { NULL, 0, 0, P->a };
	clang_visitChildren(c, collect, &k);
	return k;
}

static char *
spelling(Parser *P, CXCursor c)
{
	CXString s = clang_getCursorSpelling(c);
	char *r = tc_strdup(P->a, clang_getCString(s));
	clang_disposeString(s);
	return r;
}

/* The name a declaration gives: the kernel, a parameter, a variable, a
 * loop variable, a tunable.  Each is printed as code in the generated
 * source, so it must be a plain ASCII identifier (no '$', no extended
 * characters); NULL after an error otherwise. */
static char *
declared_name(Parser *P, char *name, TcLoc loc)
{
	if (*name && !tc_is_identifier(name)) {
		TcBuf q;
		tc_buf_init(&q);
		tc_quote_comment(&q, name);
		error(P, loc, "'%s' is not a plain ASCII identifier "
		      "([A-Za-z_][A-Za-z0-9_]*); generated code uses it as a "
		      "name", q.data);
		tc_buf_free(&q);
		return NULL;
	}
	/* The generated code's own helpers and variables are tilec_*. */
	if (strncmp(name, "tilec_", 6) == 0) {
		error(P, loc, "'%s' begins with 'tilec_', which names the "
		      "generated code's own helpers; rename it", name);
		return NULL;
	}
	return name;
}

/* External names of the C library headers the generated code includes
 * (math.h with glibc's additions, stdlib.h, string.h, stdio.h): a kernel
 * is an external function, so one named like them conflicts with their
 * declarations.  Math names stand for their f and l forms too. */
static const char *const math_names[] = {
	"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt",
	"ceil", "copysign", "cos", "cosh", "drem", "erf", "erfc", "exp",
	"exp10", "exp2", "expm1", "fabs", "fdim", "finite", "floor", "fma",
	"fmax", "fmin", "fmod", "fpclassify", "frexp", "gamma", "hypot",
	"ilogb", "isfinite", "isinf", "isnan", "isnormal", "j0", "j1", "jn",
	"ldexp", "lgamma", "llrint", "llround", "log", "log10", "log1p",
	"log2", "logb", "lrint", "lround", "modf", "nan", "nearbyint",
	"nextafter", "nexttoward", "pow", "pow10", "remainder", "remquo",
	"rint", "round", "scalb", "scalbln", "scalbn", "signbit",
	"significand", "sin", "sincos", "sinh", "sqrt", "tan", "tanh",
	"tgamma", "trunc", "y0", "y1", "yn", NULL
};
static const char *const libc_names[] = {
	"abort", "abs", "aligned_alloc", "atexit", "atof", "atoi",
	"atol", "atoll", "bsearch", "calloc", "div", "exit", "free", "getenv",
	"labs", "ldiv", "llabs", "lldiv", "malloc", "qsort", "rand", "realloc",
	"srand", "strtod", "strtof", "strtol", "strtold", "strtoll",
	"strtoul", "strtoull", "system", "memchr", "memcmp", "memcpy",
	"memmove", "memset", "strcat", "strchr", "strcmp", "strcpy",
	"strcspn", "strdup", "strerror", "strlen", "strncat", "strncmp",
	"strncpy", "strpbrk", "strrchr", "strspn", "strstr", "strtok",
	"fclose", "fflush", "fopen", "fprintf", "fputs", "fread", "fwrite",
	"printf", "putchar", "puts", "remove", "rename", "snprintf",
	"sprintf", NULL
};

static bool
listed(const char *const *list, const char *name, size_t len)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == len && strncmp(list[i], name, len) == 0)
			return true;
	return false;
}

static bool
library_name(const char *name)
{
	size_t n = strlen(name);
	if (listed(libc_names, name, n) || listed(math_names, name, n))
		return true;
	return n > 1 && (name[n - 1] == 'f' || name[n - 1] == 'l') &&
	       listed(math_names, name, n - 1);
}

bool
tc_reserved_name(const char *name)
{
	return library_name(name) || strncmp(name, "tilec_", 6) == 0;
}

static enum CXChildVisitResult
first_child(CXCursor c, CXCursor parent, CXClientData data)
{
	(void)parent;
	CXCursor *out = data;
	if (clang_Cursor_isNull(*out)) {
		*out = c;
		return CXChildVisit_Continue;
	}
	*out = clang_getNullCursor(); /* more than one child: not a wrapper */
	return CXChildVisit_Break;
}

/* Whether an UnexposedExpr is an implicit conversion (or a folded
 * constant): its one child, if so, else a null cursor.  libclang exposes
 * neither ImplicitCastExpr nor ConstantExpr, and both span exactly the
 * text of the expression they wrap.  Every other expression libclang
 * does not expose (GNU x ?: y, __builtin_choose_expr, __builtin_offsetof,
 * ...) has other children or spans more text, and reading it as one of
 * its children would compute something else. */
static CXCursor
implicit_operand(CXCursor c)
{
	CXCursor only = clang_getNullCursor();
	if (clang_getCursorKind(c) != CXCursor_UnexposedExpr)
		return only;
	clang_visitChildren(c, first_child, &only);
	if (!clang_Cursor_isNull(only) &&
	    !clang_equalRanges(clang_getCursorExtent(c),
			       clang_getCursorExtent(only)))
		return clang_getNullCursor();
	return only;
}

/* Strip implicit conversions and parentheses.  Only for operand forms (a
 * buffer name, &T[i][j]); value conversions are kept by expr(). */
static CXCursor
strip(CXCursor c)
{
	for (;;) {
		CXCursor only = clang_getNullCursor();
		if (clang_getCursorKind(c) == CXCursor_ParenExpr)
			clang_visitChildren(c, first_child, &only);
		else
			only = implicit_operand(c);
		if (clang_Cursor_isNull(only))
			return c;
		c = only;
	}
}

static bool
has_annotation(Parser *P, CXCursor c, const char *what)
{
	Kids k = kids(P, c);
	for (int i = 0; i < k.n; i++)
		if (clang_getCursorKind(k.c[i]) == CXCursor_AnnotateAttr &&
		    strcmp(spelling(P, k.c[i]), what) == 0)
			return true;
	return false;
}

static bool
int_value(CXCursor c, long long *out)
{
	CXEvalResult r = clang_Cursor_Evaluate(c);
	if (!r)
		return false;
	bool ok = clang_EvalResult_getKind(r) == CXEval_Int;
	if (ok)
		*out = clang_EvalResult_getAsLongLong(r);
	clang_EvalResult_dispose(r);
	return ok;
}

/* --- Types ------------------------------------------------------------------------ */

/* The tile dtype of a scalar C type: typedef names from tilec.h first
 * (f16 means f16 whatever C makes of it), then C's own types. */
static TcDtype
dtype_of(CXType t)
{
	for (int guard = 0; guard < 32; guard++) {
		if (t.kind == CXType_Elaborated) {
			t = clang_Type_getNamedType(t);
			continue;
		}
		if (t.kind != CXType_Typedef)
			break;
		CXString n = clang_getTypedefName(t);
		TcDtype dt = tc_dtype_from_name(clang_getCString(n));
		clang_disposeString(n);
		if (dt != TC_DT_NONE)
			return dt;
		t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
	}
	switch (clang_getCanonicalType(t).kind) {
	case CXType_Bool: return TC_DT_BOOL;
	case CXType_Char_S:
	case CXType_SChar: return TC_DT_I8;
	case CXType_Char_U:
	case CXType_UChar: return TC_DT_U8;
	case CXType_Int: return TC_DT_I32;
	case CXType_Long:
	case CXType_LongLong: return TC_DT_I64;
	case CXType_Float: return TC_DT_F32;
	case CXType_Double: return TC_DT_F64;
	case CXType_Float16:
	case CXType_Half: return TC_DT_F16;
#if CINDEX_VERSION_MINOR >= 64
	case CXType_BFloat16: return TC_DT_BF16;
#endif
	default: return TC_DT_NONE;
	}
}

static bool
is_array(CXType t)
{
	t = clang_getCanonicalType(t);
	return t.kind == CXType_ConstantArray || t.kind == CXType_VariableArray ||
	       t.kind == CXType_IncompleteArray ||
	       t.kind == CXType_DependentSizedArray;
}

/* Rank and element type of an array type. */
static int
array_rank(CXType t, CXType *elem)
{
	int rank = 0;
	while (is_array(t)) {
		rank++;
		t = clang_getArrayElementType(t);
	}
	*elem = t;
	return rank;
}

static char *
type_name(Parser *P, CXType t)
{
	CXString s = clang_getTypeSpelling(t);
	char *r = tc_strdup(P->a, clang_getCString(s));
	clang_disposeString(s);
	return r;
}

/* --- Scopes ------------------------------------------------------------------------ */

static void
bind(Parser *P, CXCursor decl, TcVar *var)
{
	if (P->nbinds == P->capbinds) {
		int cap = P->capbinds ? P->capbinds * 2 : 32;
		Binding *nb = tc_alloc(P->a, sizeof *nb * (size_t)cap);
		if (P->nbinds)
			memcpy(nb, P->binds, sizeof *nb * (size_t)P->nbinds);
		P->binds = nb;
		P->capbinds = cap;
	}
	P->binds[P->nbinds++] = (Binding){ decl, var };
}

static TcVar *
lookup(Parser *P, CXCursor decl)
{
	for (int i = P->nbinds - 1; i >= 0; i--)
		if (clang_equalCursors(P->binds[i].decl, decl))
			return P->binds[i].var;
	return NULL;
}

/* --- Operators -------------------------------------------------------------------- */

#if CINDEX_VERSION_MINOR < 64
/* Older libclang has no operator-kind API: read the operator from the
 * source text between the operands, at their spelling locations (inside
 * tilec.h for the loops its macros expand to). */
static const char *
text_of_file(Parser *P, CXFile f, size_t *len)
{
	if (f && clang_File_isEqual(f, P->main_file)) {
		*len = strlen(P->prog->text);
		return P->prog->text;
	}
	const TcEmbedded *h = tc_embedded_find("tilec.h");
	*len = h->len;
	return h->text;
}

/* The punctuation between spelling offsets [from, to) of one file. */
static const char *
op_between(Parser *P, CXSourceLocation from, CXSourceLocation to)
{
	CXFile f1, f2;
	unsigned o1, o2;
	size_t len;
	clang_getSpellingLocation(from, &f1, NULL, NULL, &o1);
	clang_getSpellingLocation(to, &f2, NULL, NULL, &o2);
	if (!f1 || !f2 || !clang_File_isEqual(f1, f2) || o2 < o1)
		return "";
	const char *text = text_of_file(P, f1, &len);
	if (o2 > len)
		return "";
	char op[4];
	int n = 0;
	for (unsigned i = o1; i < o2 && n < 3; i++)
		if (strchr("+-*/%<>=!&|^~", text[i]))
			op[n++] = text[i];
		else if (n > 0)
			break;
	return tc_strndup(P->a, op, (size_t)n);
}

/* The end of a cursor's spelling: the location just past its last token. */
static CXSourceLocation
spelling_end(Parser *P, CXCursor c)
{
	CXSourceRange r = clang_getCursorExtent(c);
	CXSourceLocation end = clang_getRangeEnd(r);
	CXFile f;
	unsigned off;
	clang_getSpellingLocation(end, &f, NULL, NULL, &off);
	/* Expansion ranges end at the start of their last token; step over
	 * an identifier or number to its end. */
	size_t len;
	const char *text = text_of_file(P, f, &len);
	while (off < len && (text[off] == '_' || (text[off] >= '0' &&
	       text[off] <= '9') || ((text[off] | 32) >= 'a' &&
	       (text[off] | 32) <= 'z')))
		off++;
	return clang_getLocationForOffset(P->tu, f, off);
}
#endif

/* The spelling of a binary or compound-assignment operator ("+", "*="). */
static const char *
binop_spelling(Parser *P, CXCursor c)
{
#if CINDEX_VERSION_MINOR >= 64
	CXString s = clang_getBinaryOperatorKindSpelling(
		clang_getCursorBinaryOperatorKind(c));
	const char *r = tc_strdup(P->a, clang_getCString(s));
	clang_disposeString(s);
	return r;
#else
	Kids k = kids(P, c);
	if (k.n != 2)
		return "";
	return op_between(P, spelling_end(P, k.c[0]),
			  clang_getRangeStart(clang_getCursorExtent(k.c[1])));
#endif
}

/* Unary operator spelling; postfix ++/-- are "post++" and "post--". */
static const char *
unop_spelling(Parser *P, CXCursor c)
{
#if CINDEX_VERSION_MINOR >= 64
	enum CXUnaryOperatorKind k = clang_getCursorUnaryOperatorKind(c);
	if (k == CXUnaryOperator_PostInc)
		return "post++";
	if (k == CXUnaryOperator_PostDec)
		return "post--";
	CXString s = clang_getUnaryOperatorKindSpelling(k);
	const char *r = tc_strdup(P->a, clang_getCString(s));
	clang_disposeString(s);
	return r;
#else
	Kids k = kids(P, c);
	if (k.n != 1)
		return "";
	CXSourceLocation start = clang_getRangeStart(clang_getCursorExtent(c));
	CXSourceLocation arg = clang_getRangeStart(clang_getCursorExtent(k.c[0]));
	const char *pre = op_between(P, start, arg);
	if (*pre)
		return pre;
	CXFile f;
	unsigned off;
	clang_getSpellingLocation(spelling_end(P, k.c[0]), &f, NULL, NULL, &off);
	return tc_fmt(P->a, "post%s", op_between(P,
		spelling_end(P, k.c[0]),
		clang_getLocationForOffset(P->tu, f, off + 2)));
#endif
}

static bool
binop_from(const char *sp, TcBinop *op)
{
	for (int i = 0; i < TC_OP_COUNT; i++)
		if (strcmp(tc_binop_name((TcBinop)i), sp) == 0) {
			*op = (TcBinop)i;
			return true;
		}
	return false;
}

/* --- Expressions -------------------------------------------------------------------- */

static TcExpr *expr(Parser *P, CXCursor c);

/* Convert e to dtype t if it differs (arithmetic types only). */
static TcExpr *
convert(Parser *P, TcExpr *e, TcDtype t, TcLoc loc)
{
	if (!e || t == TC_DT_NONE || e->dtype == t || e->dtype == TC_DT_NONE)
		return e;
	TcExpr *c = tc_expr_new(P->a, TC_EX_CAST, t, loc);
	c->u.cast.arg = e;
	return c;
}

static const char *
callee_name(Parser *P, CXCursor call)
{
	CXCursor ref = clang_getCursorReferenced(call);
	if (clang_Cursor_isNull(ref))
		return "";
	return spelling(P, ref);
}

/* An element access: T[i][j]..., with one index per dim of T. */
static TcExpr *
subscript(Parser *P, CXCursor c)
{
	TcExpr *idx[TC_MAX_RANK];
	CXCursor chain[TC_MAX_RANK + 1];
	int n = 0;
	CXCursor cur = c;
	while (clang_getCursorKind(cur) == CXCursor_ArraySubscriptExpr) {
		Kids k = kids(P, cur);
		if (k.n != 2 || n == TC_MAX_RANK) {
			error(P, start_of(P, c), "unsupported subscript");
			return NULL;
		}
		chain[n++] = k.c[1];
		cur = strip(k.c[0]);
	}
	if (clang_getCursorKind(cur) != CXCursor_DeclRefExpr) {
		error(P, start_of(P, c),
		      "only tensors and buffers can be subscripted");
		return NULL;
	}
	TcVar *v = lookup(P, clang_getCursorReferenced(cur));
	if (!v) {
		error(P, loc_of(P, cur), "'%s' is not a tensor or buffer",
		      spelling(P, cur));
		return NULL;
	}
	if (v->kind != TC_VAR_TENSOR && v->kind != TC_VAR_BUFFER) {
		error(P, loc_of(P, cur), "'%s' is a %s, not a tensor or buffer",
		      v->name, tc_varkind_name(v->kind));
		return NULL;
	}
	if (n != v->rank) {
		error(P, start_of(P, c),
		      "'%s' has %d dims but %d %s given; an element access "
		      "needs one index per dim", v->name, v->rank, n,
		      n == 1 ? "index is" : "indices are");
		return NULL;
	}
	/* chain[] holds indices innermost first. */
	for (int i = 0; i < n; i++) {
		idx[i] = expr(P, chain[n - 1 - i]);
		if (!idx[i])
			return NULL;
		if (!tc_dtype_is_int(idx[i]->dtype)) {
			error(P, start_of(P, chain[n - 1 - i]),
			      "index of '%s' must be an integer, not %s",
			      v->name, tc_dtype_name(idx[i]->dtype));
			return NULL;
		}
	}
	TcExpr *e = tc_expr_new(P->a, TC_EX_LOAD, v->dtype, start_of(P, c));
	e->u.load.var = v;
	for (int i = 0; i < n; i++)
		e->u.load.idx[i] = idx[i];
	return e;
}

/* A call to something that is not a builtin. */
static void
not_builtin(Parser *P, TcLoc loc, const char *name)
{
	for (int i = 0; i < P->prog->kernels.len; i++)
		if (strcmp(((TcKernel *)P->prog->kernels.items[i])->name,
			   name) == 0) {
			error(P, loc, "kernel '%s' calls kernel '%s': kernels "
			      "cannot call kernels", P->k->name, name);
			return;
		}
	if (P->k && strcmp(P->k->name, name) == 0)
		error(P, loc, "kernel '%s' calls itself: recursion is not "
		      "supported", name);
	else
		error(P, loc, "call to '%s', which is not a tilec builtin; a "
		      "kernel may call only builtins", name);
}

/* The reduction tile_sum, tile_max, tile_min or tile_absmax names, or -1. */
static int
reduce_all_op(const char *name)
{
	if (strncmp(name, "tile_", 5) != 0)
		return -1;
	for (int op = 0; op < TC_RED_COUNT; op++)
		if (strcmp(name + 5, tc_reduce_name((TcReduceOp)op)) == 0)
			return op;
	return -1;
}

/* The dtype of a call's argument as written, before clang converted it to
 * the prototype's parameter type (TC_DT_NONE if not a tile dtype). */
static TcDtype
written_type(CXCursor arg)
{
	for (int guard = 0; guard < 64; guard++) {
		CXCursor only = implicit_operand(arg);
		if (clang_Cursor_isNull(only))
			break;
		arg = only;
	}
	return dtype_of(clang_getCursorType(arg));
}

/* abs, min, max and ceildiv take ints.  C would convert a float or an
 * i64 argument to int first (truncated or narrowed), which is never what
 * max(x, 0.0f) or ceildiv(n, 128) of a long long n means. */
static bool
int_arg_ok(Parser *P, const char *name, CXCursor arg, TcLoc loc)
{
	static const char *const float_form[][2] = {
		{ "abs", "fabsf is the float absolute value" },
		{ "min", "fminf is the float minimum" },
		{ "max", "fmaxf is the float maximum" },
	};
	TcDtype t = written_type(arg);
	if (tc_dtype_is_float(t)) {
		const char *hint = NULL;
		for (size_t i = 0; i < sizeof float_form / sizeof float_form[0]; i++)
			if (strcmp(name, float_form[i][0]) == 0)
				hint = float_form[i][1];
		error(P, loc, "'%s' takes integers, not %s%s%s", name,
		      tc_dtype_name(t), hint ? ": " : "", hint ? hint : "");
		return false;
	}
	if (t == TC_DT_I64) {
		error(P, loc, "'%s' takes i32s, and this argument is i64, "
		      "which would be narrowed first; convert it explicitly "
		      "((i32)x) if that is meant", name);
		return false;
	}
	return true;
}

static TcExpr *
call_expr(Parser *P, CXCursor c)
{
	const char *name = callee_name(P, c);
	TcLoc loc = loc_of(P, c);
	int nargs = clang_Cursor_getNumArguments(c);
	if (strcmp(name, "__builtin_inff") == 0)
		return tc_expr_float(P->a, INFINITY, TC_DT_F32, loc);
	TcFunc fn = tc_func_from_name(name);
	if (fn == TC_FN_COUNT) {
		if (reduce_all_op(name) >= 0)
			error(P, loc, "%s reduces a whole tile, so it is the whole "
			      "value of a scalar declaration or assignment at "
			      "block level (float s = %s(x);), not part of an "
			      "expression", name, name);
		else if (strncmp(name, "tile_", 5) == 0 ||
			 strncmp(name, "tilec_", 6) == 0)
			error(P, loc, "'%s' is a statement, not a value", name);
		else
			not_builtin(P, loc, name);
		return NULL;
	}
	if (nargs != tc_func_arity(fn)) {
		error(P, loc, "'%s' takes %d arguments, not %d", name,
		      tc_func_arity(fn), nargs);
		return NULL;
	}
	TcExpr *e = tc_expr_new(P->a, TC_EX_CALL, TC_DT_NONE, loc);
	e->u.call.fn = fn;
	e->u.call.nargs = nargs;
	e->u.call.args = tc_alloc(P->a, sizeof(TcExpr *) * (size_t)(nargs + 1));
	for (int i = 0; i < nargs; i++) {
		CXCursor ac = clang_Cursor_getArgument(c, (unsigned)i);
		if ((fn == TC_FN_ABS || fn == TC_FN_MIN || fn == TC_FN_MAX ||
		     fn == TC_FN_CEILDIV) &&
		    !int_arg_ok(P, name, ac, loc_of(P, ac)))
			return NULL;
		TcExpr *arg = expr(P, ac);
		if (!arg)
			return NULL;
		/* clang converted arguments to the prototype's type. */
		e->u.call.args[i] = convert(P, arg, tc_func_arg_type(fn),
					    arg->loc);
	}
	e->dtype = tc_func_result_type(fn);
	return e;
}

/* Report an expression libclang does not expose and that is not an
 * implicit conversion, named from its text where that is recognisable. */
static void
unexposed(Parser *P, CXCursor c)
{
	CXToken *tok = NULL;
	unsigned ntok = 0;
	clang_tokenize(P->tu, clang_getCursorExtent(c), &tok, &ntok);
	const char *what = NULL;
	for (unsigned i = 0; i < ntok && !what; i++) {
		CXString s = clang_getTokenSpelling(P->tu, tok[i]);
		const char *t = clang_getCString(s);
		if (i == 0 && strncmp(t, "__", 2) == 0)
			what = tc_strdup(P->a, t);
		else if (strcmp(t, "?") == 0 && i + 1 < ntok) {
			/* GNU x ?: y: the only C with '?' right before ':'. */
			CXString n = clang_getTokenSpelling(P->tu, tok[i + 1]);
			if (strcmp(clang_getCString(n), ":") == 0)
				what = "?:";
			clang_disposeString(n);
		}
		clang_disposeString(s);
	}
	if (tok)
		clang_disposeTokens(P->tu, tok, ntok);
	TcLoc loc = start_of(P, c);
	if (what && strcmp(what, "?:") == 0)
		error(P, loc, "GNU 'x ?: y' is not supported in a tile "
		      "program; write 'x ? x : y'");
	else if (what)
		error(P, loc, "'%s' is not supported in a tile program", what);
	else
		error(P, loc, "this kind of expression is not supported in a "
		      "tile program");
}

static TcExpr *
expr_inner(Parser *P, CXCursor c)
{
	TcLoc loc = loc_of(P, c);
	Kids k;
	switch (clang_getCursorKind(c)) {
	case CXCursor_IntegerLiteral:
	case CXCursor_CharacterLiteral: {
		long long v;
		if (!int_value(c, &v)) {
			error(P, loc, "cannot evaluate this literal");
			return NULL;
		}
		enum CXTypeKind kind = clang_getCursorType(c).kind;
		if (kind == CXType_UInt || kind == CXType_ULong ||
		    kind == CXType_ULongLong) {
			/* C makes u-suffixed constants, and hex ones past
			 * INT_MAX, unsigned; with no unsigned 32- or 64-bit
			 * type their arithmetic would silently be signed. */
			error(P, loc, "this constant is %s in C, and tile "
			      "programs have no unsigned 32- or 64-bit type; "
			      "write its value as a signed constant (an LL "
			      "suffix for values past INT_MAX)",
			      kind == CXType_UInt ? "an unsigned int"
						  : "an unsigned long");
			return NULL;
		}
		TcExpr *e = tc_expr_int(P->a, v, loc);
		TcDtype t = dtype_of(clang_getCursorType(c));
		if (t == TC_DT_I64)
			e->dtype = t;
		return e;
	}
	case CXCursor_FloatingLiteral: {
		CXEvalResult r = clang_Cursor_Evaluate(c);
		double v = r ? clang_EvalResult_getAsDouble(r) : 0;
		if (r)
			clang_EvalResult_dispose(r);
		TcDtype t = dtype_of(clang_getCursorType(c));
		return tc_expr_float(P->a, v, t == TC_DT_F64 ? t : TC_DT_F32,
				     loc);
	}
	case CXCursor_ParenExpr:
		k = kids(P, c);
		return k.n == 1 ? expr(P, k.c[0]) : NULL;
	case CXCursor_UnexposedExpr:
	case CXCursor_CStyleCastExpr: {
		/* An implicit or explicit conversion (or a wrapper that converts
		 * nothing): convert to the cursor's type when it is a scalar.
		 * A cast's children are the written type's references, then
		 * the operand. */
		CXCursor operand = implicit_operand(c);
		if (clang_getCursorKind(c) == CXCursor_CStyleCastExpr) {
			k = kids(P, c);
			if (k.n >= 1)
				operand = k.c[k.n - 1];
		}
		if (clang_Cursor_isNull(operand)) {
			unexposed(P, c);
			return NULL;
		}
		TcExpr *e = expr(P, operand);
		if (!e)
			return NULL;
		TcDtype t = dtype_of(clang_getCursorType(c));
		if (clang_getCursorKind(c) == CXCursor_CStyleCastExpr &&
		    t == TC_DT_NONE) {
			error(P, loc, "cast to '%s', which is not a tile dtype",
			      type_name(P, clang_getCursorType(c)));
			return NULL;
		}
		/* fp8 elements are bytes to C (tilec.h), which promotes them
		 * to int; in the tile language they promote to f32. */
		if (clang_getCursorKind(c) == CXCursor_UnexposedExpr &&
		    (e->dtype == TC_DT_FP8E4M3 || e->dtype == TC_DT_FP8E5M2) &&
		    tc_dtype_is_int(t))
			t = TC_DT_F32;
		return convert(P, e, t, loc);
	}
	case CXCursor_DeclRefExpr: {
		CXCursor decl = clang_getCursorReferenced(c);
		TcVar *v = lookup(P, decl);
		if (v) {
			if (v->kind == TC_VAR_TENSOR || v->kind == TC_VAR_BUFFER) {
				error(P, loc, "'%s' is a %s; use an element "
				      "(%s[i]...) in an expression", v->name,
				      v->kind == TC_VAR_TENSOR ? "tensor" :
				      "buffer", v->name);
				return NULL;
			}
			return tc_expr_var(P->a, v, loc);
		}
		long long iv;
		if (clang_getCursorKind(decl) == CXCursor_EnumConstantDecl &&
		    int_value(decl, &iv))
			return tc_expr_int(P->a, iv, loc);
		error(P, loc, "'%s' is not a name a kernel can use here "
		      "(globals and functions are not values)",
		      spelling(P, c));
		return NULL;
	}
	case CXCursor_ArraySubscriptExpr:
		return subscript(P, c);
	case CXCursor_BinaryOperator: {
		const char *sp = binop_spelling(P, c);
		TcBinop op;
		if (!binop_from(sp, &op)) {
			error(P, loc, "operator '%s' cannot be used in an "
			      "expression here", sp);
			return NULL;
		}
		k = kids(P, c);
		if (k.n != 2)
			return NULL;
		TcExpr *l = expr(P, k.c[0]), *r = l ? expr(P, k.c[1]) : NULL;
		if (!l || !r)
			return NULL;
		return tc_expr_binary(P->a, op, l, r, loc);
	}
	case CXCursor_UnaryOperator: {
		const char *sp = unop_spelling(P, c);
		k = kids(P, c);
		if (k.n != 1)
			return NULL;
		if (strcmp(sp, "+") == 0)
			return expr(P, k.c[0]);
		TcUnop op;
		if (strcmp(sp, "-") == 0)
			op = TC_UOP_NEG;
		else if (strcmp(sp, "!") == 0)
			op = TC_UOP_NOT;
		else if (strcmp(sp, "~") == 0)
			op = TC_UOP_BNOT;
		else if (strcmp(sp, "&") == 0 || strcmp(sp, "*") == 0) {
			error(P, loc, "pointers are not values in a tile "
			      "program; '&T[i][j]' names a region only as a "
			      "tile operation's operand");
			return NULL;
		} else {
			error(P, loc, "'%s' inside an expression is not "
			      "supported; write the update as its own "
			      "statement", strcmp(sp, "post++") == 0 ? "++" :
			      strcmp(sp, "post--") == 0 ? "--" : sp);
			return NULL;
		}
		TcExpr *arg = expr(P, k.c[0]);
		return arg ? tc_expr_unary(P->a, op, arg, loc) : NULL;
	}
	case CXCursor_ConditionalOperator: {
		k = kids(P, c);
		if (k.n != 3)
			return NULL;
		TcExpr *e = tc_expr_new(P->a, TC_EX_SELECT,
					dtype_of(clang_getCursorType(c)), loc);
		e->u.sel.cond = expr(P, k.c[0]);
		e->u.sel.then = e->u.sel.cond ? expr(P, k.c[1]) : NULL;
		e->u.sel.els = e->u.sel.then ? expr(P, k.c[2]) : NULL;
		if (!e->u.sel.els)
			return NULL;
		/* The arms' common type, as C's unless an arm is an fp8
		 * value: C promotes those bytes to int (and types the ?:
		 * int), the tile language to f32, as the arms now are. */
		TcDtype arms = tc_binop_type(TC_OP_ADD, e->u.sel.then->dtype,
					     e->u.sel.els->dtype);
		if (e->dtype == TC_DT_NONE ||
		    (tc_dtype_is_int(e->dtype) && tc_dtype_is_float(arms)))
			e->dtype = arms;
		e->u.sel.then = convert(P, e->u.sel.then, e->dtype, loc);
		e->u.sel.els = convert(P, e->u.sel.els, e->dtype, loc);
		return e;
	}
	case CXCursor_CallExpr:
		return call_expr(P, c);
	case CXCursor_CompoundAssignOperator:
		error(P, loc, "assignment inside an expression is not "
		      "supported; make it its own statement");
		return NULL;
	case CXCursor_StringLiteral:
		error(P, loc, "strings are not values in a tile program");
		return NULL;
	case CXCursor_UnaryExpr:
		error(P, loc, "sizeof and alignof are not supported in a tile "
		      "program");
		return NULL;
	default: {
		CXString ks = clang_getCursorKindSpelling(clang_getCursorKind(c));
		error(P, loc, "this kind of expression (%s) is not supported "
		      "in a tile program", clang_getCString(ks));
		clang_disposeString(ks);
		return NULL;
	}
	}
}

/* Whether one more expression or statement may nest inside those being
 * parsed: every pass walks the tree recursively, so its depth is bounded
 * here, with an error, not by the stack. */
static bool
nest_in(Parser *P, CXCursor c, const char *what)
{
	if (P->nest < TC_MAX_NESTING) {
		P->nest++;
		return true;
	}
	error(P, loc_of(P, c), "%s nested more than %d deep; split it (a "
	      "local for part of an expression, fewer else-if arms)", what,
	      TC_MAX_NESTING);
	return false;
}

static TcExpr *
expr(Parser *P, CXCursor c)
{
	if (!nest_in(P, c, "expression"))
		return NULL;
	TcExpr *e = expr_inner(P, c);
	P->nest--;
	if (e && e->dtype == TC_DT_NONE) {
		error(P, loc_of(P, c), "expression of type '%s' is not a tile "
		      "dtype", type_name(P, clang_getCursorType(c)));
		return NULL;
	}
	return e;
}

/* --- Tile operands ------------------------------------------------------------------ */

static bool ragged_region(Parser *P, CXCursor c, const char *fn,
			  TcRegion *r);

/* operand := buffer-name | '&' element | tile_dims('&' element, dim, ...)
 *          | ragged (below)
 * A region's rank (ndims) is 0 until the operation knows the tile's rank;
 * then resolve_region() picks the dims it covers. */
static bool
region(Parser *P, CXCursor arg, TcRegion *r)
{
	CXCursor c = strip(arg);
	memset(r, 0, sizeof *r);
	r->loc = start_of(P, arg);
	switch (clang_getCursorKind(c)) {
	case CXCursor_DeclRefExpr: {
		TcVar *v = lookup(P, clang_getCursorReferenced(c));
		if (v && v->kind == TC_VAR_BUFFER) {
			r->var = v;
			r->whole = true;
			r->ndims = v->rank;
			for (int i = 0; i < v->rank; i++) {
				r->dims[i] = i;
				r->origin[i] = tc_expr_int(P->a, 0, r->loc);
			}
			return true;
		}
		if (v && v->kind == TC_VAR_TENSOR) {
			error(P, r->loc, "tensor '%s' needs a region: pass the "
			      "address of its first element, &%s[i]...",
			      v->name, v->name);
			return false;
		}
		break;
	}
	case CXCursor_UnaryOperator: {
		Kids k = kids(P, c);
		if (strcmp(unop_spelling(P, c), "&") != 0 || k.n != 1)
			break;
		CXCursor sub = strip(k.c[0]);
		if (clang_getCursorKind(sub) != CXCursor_ArraySubscriptExpr) {
			error(P, r->loc, "a region is the address of one element: "
			      "&T[i][j], with an index for every dim");
			return false;
		}
		TcExpr *e = subscript(P, sub);
		if (!e)
			return false;
		r->var = e->u.load.var;
		for (int i = 0; i < r->var->rank; i++)
			r->origin[i] = e->u.load.idx[i];
		return true;
	}
	case CXCursor_CallExpr: {
		const char *fn = callee_name(P, c);
		if (strcmp(fn, "tile_bounded") == 0 ||
		    strcmp(fn, "tile_masked") == 0 ||
		    strcmp(fn, "tile_rows") == 0)
			return ragged_region(P, c, fn, r);
		if (strcmp(fn, "tile_dims") != 0)
			break;
		int n = clang_Cursor_getNumArguments(c);
		if (n < 2) {
			error(P, r->loc, "tile_dims needs a region and the dims "
			      "it covers: tile_dims(&T[b][i][h][0], 1, 3)");
			return false;
		}
		CXCursor inner = strip(clang_Cursor_getArgument(c, 0));
		if (clang_getCursorKind(inner) == CXCursor_CallExpr) {
			error(P, r->loc, "tile_dims cannot be nested");
			return false;
		}
		if (!region(P, clang_Cursor_getArgument(c, 0), r))
			return false;
		if (r->whole) {
			error(P, r->loc, "tile_dims takes a region (&T[i]...), "
			      "not a whole buffer");
			return false;
		}
		if (n - 1 > r->var->rank) {
			error(P, r->loc, "tile_dims names %d dims but '%s' has "
			      "only %d", n - 1, r->var->name, r->var->rank);
			return false;
		}
		r->ndims = n - 1;
		for (int i = 1; i < n; i++) {
			CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
			long long d;
			if (!int_value(a, &d)) {
				error(P, start_of(P, a), "tile_dims needs "
				      "constant dim numbers");
				return false;
			}
			if (d < 0 || d >= r->var->rank) {
				error(P, start_of(P, a), "dim %lld is out of "
				      "range for '%s' (rank %d)", d,
				      r->var->name, r->var->rank);
				return false;
			}
			for (int j = 0; j < i - 1; j++)
				if (r->dims[j] == (int)d) {
					error(P, start_of(P, a), "dim %lld is "
					      "named twice", d);
					return false;
				}
			r->dims[i - 1] = (int)d;
		}
		return true;
	}
	default:
		break;
	}
	error(P, r->loc, "a tile operand is a buffer, or a region written "
	      "&T[i][j] (optionally inside tile_dims)");
	return false;
}

/* ragged := tile_bounded(operand, n0, ...) | tile_masked(operand, mask)
 *         | tile_rows(operand, index)
 * Each wraps a region of a tensor (itself a region, tile_dims or another
 * of these, each at most once); check.c checks the rest. */
static bool
ragged_region(Parser *P, CXCursor c, const char *fn, TcRegion *r)
{
	TcLoc loc = start_of(P, c);
	int n = clang_Cursor_getNumArguments(c);
	bool bounded = strcmp(fn, "tile_bounded") == 0;
	if (bounded ? n < 2 || n - 1 > TC_MAX_RANK : n != 2) {
		error(P, loc, bounded ? "tile_bounded takes a region and the "
		      "extent of each leading tile dim: tile_bounded(&T[r][0], "
		      "rows)" : "%s takes a region and a buffer: %s(&T[r][0], "
		      "%s)", fn, fn, strcmp(fn, "tile_rows") == 0 ? "index" :
		      "mask");
		return false;
	}
	if (!region(P, clang_Cursor_getArgument(c, 0), r))
		return false;
	if (r->whole) {
		error(P, loc, "%s takes a region of a tensor (&T[i]...), not a "
		      "whole buffer", fn);
		return false;
	}
	r->loc = loc;
	if (bounded) {
		if (r->bound[0]) {
			error(P, loc, "tile_bounded is applied twice");
			return false;
		}
		for (int i = 1; i < n; i++) {
			r->bound[i - 1] = expr(P, clang_Cursor_getArgument(c, (unsigned)i));
			if (!r->bound[i - 1])
				return false;
		}
		r->bound_loc = start_of(P, clang_Cursor_getArgument(c, 1));
		return true;
	}
	CXCursor arg = clang_Cursor_getArgument(c, 1);
	CXCursor b = strip(arg);
	TcVar *v = clang_getCursorKind(b) == CXCursor_DeclRefExpr
			   ? lookup(P, clang_getCursorReferenced(b)) : NULL;
	if (!v || v->kind != TC_VAR_BUFFER) {
		error(P, start_of(P, arg), "%s needs a whole buffer as its %s",
		      fn, fn[5] == 'r' ? "index" : "mask");
		return false;
	}
	TcVar **slot = fn[5] == 'r' ? &r->rows : &r->mask;
	if (*slot) {
		error(P, loc, "%s is applied twice", fn);
		return false;
	}
	*slot = v;
	if (fn[5] == 'r')
		r->rows_loc = start_of(P, arg);
	else
		r->mask_loc = start_of(P, arg);
	return true;
}

/* Give a region the tile's rank n: by default it covers var's last n dims. */
static bool
resolve_region(Parser *P, TcRegion *r, int n)
{
	if (r->whole)
		return true;
	if (r->ndims) {
		if (r->ndims != n) {
			error(P, r->loc, "tile_dims names %d dims but the tile "
			      "has %d", r->ndims, n);
			return false;
		}
		return true;
	}
	if (n > r->var->rank) {
		error(P, r->loc, "the tile has %d dims but '%s' has only %d",
		      n, r->var->name, r->var->rank);
		return false;
	}
	r->ndims = n;
	for (int i = 0; i < n; i++)
		r->dims[i] = r->var->rank - n + i;
	return true;
}

/* A constant integer argument (flags, dims). */
static bool
const_arg(Parser *P, CXCursor call, int i, const char *what, long long *out)
{
	CXCursor a = clang_Cursor_getArgument(call, (unsigned)i);
	if (!int_value(a, out)) {
		error(P, start_of(P, a), "%s must be a constant", what);
		return false;
	}
	return true;
}

/* --- Statements ---------------------------------------------------------------------- */

static bool stmt(Parser *P, CXCursor c, TcVec *out);

static TcStmt *
new_block(Parser *P, TcLoc loc)
{
	return tc_stmt_new(P->a, TC_ST_BLOCK, loc);
}

/* Parse c (a compound statement or a single statement) as a new scope. */
static TcStmt *
scoped_block(Parser *P, CXCursor c)
{
	TcStmt *b = new_block(P, loc_of(P, c));
	int mark = P->nbinds;
	bool ok = true;
	P->depth++;
	if (clang_getCursorKind(c) == CXCursor_CompoundStmt) {
		Kids k = kids(P, c);
		for (int i = 0; i < k.n && ok; i++)
			ok = stmt(P, k.c[i], &b->u.block.body);
	} else {
		ok = stmt(P, c, &b->u.block.body);
	}
	P->depth--;
	P->nbinds = mark;
	return ok ? b : NULL;
}

static bool
launch_stmt(Parser *P, CXCursor call, const char *name, TcVar *bound)
{
	TcLoc loc = loc_of(P, call);
	TcKernel *k = P->k;
	int nargs = clang_Cursor_getNumArguments(call);
	if (P->depth != 0) {
		error(P, loc, "%s must be a statement at the top of the kernel "
		      "body, not inside a loop or branch", name);
		return false;
	}
	if (nargs != 1) {
		error(P, loc, "%s takes 1 argument, not %d", name, nargs);
		return false;
	}
	TcExpr *arg = expr(P, clang_Cursor_getArgument(call, 0));
	if (!arg)
		return false;
	if (strcmp(name, "tile_threads") == 0) {
		if (k->threads) {
			error(P, loc, "tile_threads is given twice");
			return false;
		}
		k->threads = arg;
	} else if (strcmp(name, "tile_rasterize") == 0) {
		k->rasterize = arg;
	} else {
		int d = name[10] - 'x'; /* tile_grid_x, _y, _z */
		if (k->grid[d]) {
			error(P, loc, "%s is given twice", name);
			return false;
		}
		k->grid[d] = arg;
		k->block[d] = bound;
		if (bound)
			bound->grid_dim = d;
	}
	return true;
}

static bool
is_launch(const char *name)
{
	return strcmp(name, "tile_threads") == 0 ||
	       strcmp(name, "tile_rasterize") == 0 ||
	       strcmp(name, "tile_grid_x") == 0 ||
	       strcmp(name, "tile_grid_y") == 0 ||
	       strcmp(name, "tile_grid_z") == 0;
}

static bool
tile_op(Parser *P, CXCursor c, const char *name, TcVec *out)
{
	TcLoc loc = loc_of(P, c);
	int n = clang_Cursor_getNumArguments(c);
	TcStmt *s;

#define ARGS(lo, hi)                                                        \
	do {                                                                \
		if (n < (lo) || n > (hi)) {                                 \
			if ((lo) == (hi))                                   \
				error(P, loc, "%s takes %d argument%s, not %d", \
				      name, (lo), (lo) == 1 ? "" : "s", n);  \
			else                                                \
				error(P, loc, "%s takes %d or %d arguments, " \
				      "not %d", name, (lo), (hi), n);        \
			return false;                                       \
		}                                                           \
	} while (0)
#define ARG(i) clang_Cursor_getArgument(c, (i))

	if (strcmp(name, "tile_copy") == 0 ||
	    strcmp(name, "tile_atomic_add") == 0) {
		ARGS(2, 2);
		s = tc_stmt_new(P->a, name[5] == 'c' ? TC_ST_COPY :
				TC_ST_ATOMIC_ADD, loc);
		TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
		if (!region(P, ARG(0), dst) || !region(P, ARG(1), src))
			return false;
		int rank;
		if (src->whole)
			rank = src->ndims;
		else if (dst->whole)
			rank = dst->ndims;
		else {
			error(P, loc, "%s needs a whole buffer as one operand: "
			      "its shape is the tile's extent", name);
			return false;
		}
		if (!resolve_region(P, dst, rank) || !resolve_region(P, src, rank))
			return false;
	} else if (strcmp(name, "tile_gemm") == 0) {
		ARGS(3, 4);
		s = tc_stmt_new(P->a, TC_ST_GEMM, loc);
		if (!region(P, ARG(0), &s->u.gemm.c) ||
		    !region(P, ARG(1), &s->u.gemm.a) ||
		    !region(P, ARG(2), &s->u.gemm.b))
			return false;
		long long flags = 0;
		if (n == 4 && !const_arg(P, c, 3, "tile_gemm's flags", &flags))
			return false;
		if (flags & ~(long long)3) {
			error(P, start_of(P, ARG(3)), "tile_gemm's flags are "
			      "TILE_TRANS_A and TILE_TRANS_B");
			return false;
		}
		s->u.gemm.trans_a = flags & 1;
		s->u.gemm.trans_b = flags & 2;
	} else if (strcmp(name, "tile_fill") == 0 ||
		   strcmp(name, "tile_clear") == 0) {
		bool clear = name[5] == 'c';
		ARGS(clear ? 1 : 2, clear ? 1 : 2);
		s = tc_stmt_new(P->a, TC_ST_FILL, loc);
		if (!region(P, ARG(0), &s->u.fill.dst))
			return false;
		if (clear && !s->u.fill.dst.whole) {
			/* check.c says so for tile_fill, which this becomes. */
			error(P, s->u.fill.dst.loc, "tile_clear's destination must "
			      "be a whole buffer, not a region of '%s'",
			      s->u.fill.dst.var->name);
			return false;
		}
		if (clear) {
			s->u.fill.value = tc_expr_float(P->a, 0.0, TC_DT_F64, loc);
		} else {
			s->u.fill.value = expr(P, ARG(1));
			if (!s->u.fill.value)
				return false;
			/* tile_fill is variadic (tilec.h): C promotes a float
			 * value to double, exactly, and leaves an integer one
			 * an integer; the fill converts the value itself. */
			const TcExpr *v = s->u.fill.value;
			if (v->kind == TC_EX_CAST && v->dtype == TC_DT_F64 &&
			    tc_dtype_is_float(v->u.cast.arg->dtype))
				s->u.fill.value = v->u.cast.arg;
		}
	} else if (strcmp(name, "tile_reduce_argmax") == 0 ||
		   strcmp(name, "tile_reduce_argmin") == 0 ||
		   strcmp(name, "tile_reduce_topk") == 0) {
		ARGS(4, 4);
		s = tc_stmt_new(P->a, TC_ST_ARG_REDUCE, loc);
		s->u.arg_reduce.topk = strcmp(name, "tile_reduce_topk") == 0;
		s->u.arg_reduce.min = strcmp(name, "tile_reduce_argmin") == 0;
		long long dim;
		if (!region(P, ARG(0), &s->u.arg_reduce.dst) ||
		    !region(P, ARG(1), &s->u.arg_reduce.index) ||
		    !region(P, ARG(2), &s->u.arg_reduce.src) ||
		    !const_arg(P, c, 3, "the reduced dim", &dim))
			return false;
		s->u.arg_reduce.dim = (int)dim;
	} else if (strncmp(name, "tile_reduce_", 12) == 0) {
		ARGS(3, 4);
		s = tc_stmt_new(P->a, TC_ST_REDUCE, loc);
		int op;
		for (op = 0; op < TC_RED_COUNT; op++)
			if (strcmp(name + 12, tc_reduce_name((TcReduceOp)op)) == 0)
				break;
		tc_assert(op < TC_RED_COUNT);
		s->u.reduce.op = (TcReduceOp)op;
		long long dim, flags = 0;
		if (!region(P, ARG(0), &s->u.reduce.dst) ||
		    !region(P, ARG(1), &s->u.reduce.src) ||
		    !const_arg(P, c, 2, "the reduced dim", &dim))
			return false;
		if (n == 4 && !const_arg(P, c, 3, "the reduction's flags", &flags))
			return false;
		if (flags & ~(long long)4) {
			error(P, start_of(P, ARG(3)), "the only reduction flag "
			      "is TILE_ACCUMULATE");
			return false;
		}
		s->u.reduce.dim = (int)dim;
		s->u.reduce.accumulate = flags & 4;
	} else if (strcmp(name, "tile_dims") == 0 ||
		   strcmp(name, "tile_bounded") == 0 ||
		   strcmp(name, "tile_masked") == 0 ||
		   strcmp(name, "tile_rows") == 0) {
		error(P, loc, "%s names a region; it is only an operand "
		      "of a tile operation", name);
		return false;
	} else if (strcmp(name, "tilec_parallel_") == 0 ||
		   strcmp(name, "tilec_pipelined_") == 0) {
		error(P, loc, "'%s' is internal; write tile_parallel(i, n) or "
		      "tile_pipelined(i, n, stages)", name);
		return false;
	} else {
		if (tc_func_from_name(name) != TC_FN_COUNT ||
		    reduce_all_op(name) >= 0)
			error(P, loc, "the result of '%s' is unused", name);
		else
			not_builtin(P, loc, name);
		return false;
	}
#undef ARGS
#undef ARG
	tc_vec_push(P->a, out, s);
	return true;
}

/* The reduction whose call is the whole of `value` (parentheses and
 * conversions aside), or -1. */
static int
value_reduce_all(Parser *P, CXCursor value)
{
	CXCursor c = strip(value);
	if (clang_getCursorKind(c) != CXCursor_CallExpr)
		return -1;
	return reduce_all_op(callee_name(P, c));
}

/* dst = tile_sum(x) (or tile_max, tile_min, tile_absmax), the value the
 * whole of a scalar declaration's initializer or of an assignment. */
static bool
reduce_all_stmt(Parser *P, CXCursor value, TcVar *dst, TcLoc loc, TcVec *out)
{
	CXCursor call = strip(value);
	const char *name = callee_name(P, call);
	TcStmt *s = tc_stmt_new(P->a, TC_ST_REDUCE_ALL, loc_of(P, call));
	s->u.reduce_all.op = (TcReduceOp)reduce_all_op(name);
	s->u.reduce_all.dst = dst;
	if (clang_Cursor_getNumArguments(call) != 1) {
		error(P, loc, "%s takes one buffer", name);
		return false;
	}
	CXCursor arg = clang_Cursor_getArgument(call, 0);
	if (!region(P, arg, &s->u.reduce_all.src))
		return false;
	if (!s->u.reduce_all.src.whole) {
		error(P, s->u.reduce_all.src.loc, "%s reduces a whole buffer, "
		      "not a region: copy the region into a buffer first", name);
		return false;
	}
	dst->mutated = true;
	tc_vec_push(P->a, out, s);
	return true;
}

static bool
decl_stmt(Parser *P, CXCursor c, TcVec *out)
{
	Kids vars = kids(P, c);
	for (int i = 0; i < vars.n; i++) {
		CXCursor vd = vars.c[i];
		TcLoc loc = loc_of(P, vd);
		if (clang_getCursorKind(vd) != CXCursor_VarDecl) {
			error(P, loc, "only variables may be declared in a "
			      "kernel body");
			return false;
		}
		char *name = declared_name(P, spelling(P, vd), loc);
		if (!name)
			return false;
		enum CX_StorageClass sc = clang_Cursor_getStorageClass(vd);
		if (sc != CX_SC_None && sc != CX_SC_Auto) {
			error(P, loc, "'%s': storage classes (static, extern, "
			      "register) are not supported in a kernel", name);
			return false;
		}
		TcScope scope = TC_SCOPE_NONE;
		if (has_annotation(P, vd, "tilec.shared"))
			scope = TC_SCOPE_SHARED;
		else if (has_annotation(P, vd, "tilec.fragment"))
			scope = TC_SCOPE_FRAGMENT;
		else if (has_annotation(P, vd, "tilec.local"))
			scope = TC_SCOPE_LOCAL;

		/* Children other than the type name and attributes: array
		 * extents, then the initializer. */
		Kids all = kids(P, vd);
		CXCursor rest[TC_MAX_RANK + 2];
		int nrest = 0;
		for (int j = 0; j < all.n; j++) {
			enum CXCursorKind kk = clang_getCursorKind(all.c[j]);
			if (kk == CXCursor_TypeRef || clang_isAttribute(kk))
				continue;
			if (nrest == TC_MAX_RANK + 1) {
				error(P, loc, "'%s' has too many dims (at most "
				      "%d)", name, TC_MAX_RANK);
				return false;
			}
			rest[nrest++] = all.c[j];
		}
		CXType type = clang_getCursorType(vd);
		if (is_array(type)) {
			CXType elem;
			int rank = array_rank(type, &elem);
			if (scope == TC_SCOPE_NONE) {
				error(P, loc, "array '%s' needs a memory scope: "
				      "tile_shared, tile_fragment or tile_local",
				      name);
				return false;
			}
			TcDtype dt = dtype_of(elem);
			if (dt == TC_DT_NONE) {
				error(P, loc, "buffer '%s' has element type '%s', "
				      "which is not a tile dtype", name,
				      type_name(P, elem));
				return false;
			}
			if (rank > TC_MAX_RANK || nrest != rank) {
				error(P, loc, nrest > rank ?
				      "buffer '%s' cannot have an initializer" :
				      "buffer '%s' needs an extent for every dim",
				      name);
				return false;
			}
			TcVar *v = tc_var_new(P->a, P->k, TC_VAR_BUFFER, name, dt,
					      loc);
			v->scope = scope;
			v->rank = rank;
			/* libclang visits extents innermost first. */
			for (int j = 0; j < rank; j++) {
				v->shape[j] = expr(P, rest[rank - 1 - j]);
				if (!v->shape[j])
					return false;
			}
			bind(P, vd, v);
			TcStmt *s = tc_stmt_new(P->a, TC_ST_DECL, loc);
			s->u.decl.var = v;
			tc_vec_push(P->a, out, s);
			continue;
		}
		if (scope != TC_SCOPE_NONE) {
			error(P, loc, "'%s' has a memory scope but is not an "
			      "array", name);
			return false;
		}
		TcDtype dt = dtype_of(type);
		if (dt == TC_DT_NONE) {
			error(P, loc, "'%s' has type '%s', which is not a tile "
			      "dtype%s", name, type_name(P, type),
			      clang_getCanonicalType(type).kind == CXType_Pointer ?
			      " (pointers are not supported)" : "");
			return false;
		}
		/* int bx = tile_grid_x(n): a block index. */
		if (nrest == 1) {
			CXCursor init = strip(rest[0]);
			if (clang_getCursorKind(init) == CXCursor_CallExpr) {
				const char *cn = callee_name(P, init);
				if (strncmp(cn, "tile_grid_", 10) == 0) {
					TcVar *v = tc_var_new(P->a, P->k,
						TC_VAR_BLOCK, name, TC_DT_I32, loc);
					bind(P, vd, v);
					if (!launch_stmt(P, init, cn, v))
						return false;
					continue;
				}
			}
		}
		TcVar *v = tc_var_new(P->a, P->k, TC_VAR_LOCAL, name, dt, loc);
		TcStmt *s = tc_stmt_new(P->a, TC_ST_DECL, loc);
		s->u.decl.var = v;
		/* float m = tile_max(x): declared, then set. */
		if (nrest == 1 && value_reduce_all(P, rest[0]) >= 0) {
			tc_vec_push(P->a, out, s);
			if (!reduce_all_stmt(P, rest[0], v, loc, out))
				return false;
			bind(P, vd, v);
			continue;
		}
		if (nrest == 1) {
			s->u.decl.init = expr(P, rest[0]);
			if (!s->u.decl.init)
				return false;
			s->u.decl.init = convert(P, s->u.decl.init, dt, loc);
		}
		bind(P, vd, v); /* after the initializer: C scoping */
		tc_vec_push(P->a, out, s);
	}
	return true;
}

/* The loop variable referenced by c, if c names it. */
static bool
names_var(Parser *P, CXCursor c, CXCursor vd)
{
	c = strip(c);
	return clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
	       clang_equalCursors(clang_getCursorReferenced(c), vd);
}

/* for (int i = begin; i < end; i++ | i += step) body, and the
 * tile_parallel / tile_pipelined forms, which expand to it. */
static bool
for_stmt(Parser *P, CXCursor c, TcVec *out)
{
	TcLoc loc = loc_of(P, c);
	Kids k = kids(P, c);
	static const char canon[] = "loops must have the form "
		"'for (int i = begin; i < end; i++)' (or i += step)";
	if (k.n != 4 || clang_getCursorKind(k.c[0]) != CXCursor_DeclStmt) {
		error(P, loc, "%s", canon);
		return false;
	}
	Kids d = kids(P, k.c[0]);
	if (d.n != 1 || clang_getCursorKind(d.c[0]) != CXCursor_VarDecl ||
	    !tc_dtype_is_int(dtype_of(clang_getCursorType(d.c[0])))) {
		error(P, loc, "%s", canon);
		return false;
	}
	CXCursor vd = d.c[0];
	Kids init = kids(P, vd);
	if (init.n < 1) {
		error(P, loc, "%s", canon);
		return false;
	}
	CXCursor iv = init.c[init.n - 1];
	TcStmt *s = tc_stmt_new(P->a, TC_ST_FOR, loc);
	s->u.loop.kind = TC_LOOP_SERIAL;

	/* The loop's header is evaluated outside the loop's scope. */
	CXCursor call = strip(iv);
	const char *cn = clang_getCursorKind(call) == CXCursor_CallExpr ?
			 callee_name(P, call) : "";
	if (strcmp(cn, "tilec_parallel_") == 0 ||
	    strcmp(cn, "tilec_pipelined_") == 0) {
		bool par = strcmp(cn, "tilec_parallel_") == 0;
		s->u.loop.kind = par ? TC_LOOP_PARALLEL : TC_LOOP_PIPELINED;
		s->u.loop.begin = tc_expr_int(P->a, 0, loc);
		s->u.loop.end = expr(P, clang_Cursor_getArgument(call, 0));
		if (!s->u.loop.end)
			return false;
		if (!par) {
			s->u.loop.stages = expr(P, clang_Cursor_getArgument(call, 1));
			if (!s->u.loop.stages)
				return false;
		}
	} else {
		s->u.loop.begin = expr(P, iv);
		if (!s->u.loop.begin)
			return false;
		CXCursor cond = k.c[1];
		Kids ck = kids(P, cond);
		if (clang_getCursorKind(cond) != CXCursor_BinaryOperator ||
		    strcmp(binop_spelling(P, cond), "<") != 0 || ck.n != 2 ||
		    !names_var(P, ck.c[0], vd)) {
			error(P, start_of(P, cond), "loop condition must be "
			      "'%s < end'", spelling(P, vd));
			return false;
		}
		s->u.loop.end = expr(P, ck.c[1]);
		if (!s->u.loop.end)
			return false;
	}

	CXCursor inc = k.c[2];
	Kids ik = kids(P, inc);
	enum CXCursorKind ikind = clang_getCursorKind(inc);
	if (s->u.loop.kind != TC_LOOP_SERIAL) {
		/* tilec.h's macros wrote the condition and the increment. */
		s->u.loop.step = tc_expr_int(P->a, 1, loc);
	} else if (ikind == CXCursor_UnaryOperator && ik.n == 1 &&
	    names_var(P, ik.c[0], vd) &&
	    (strcmp(unop_spelling(P, inc), "post++") == 0 ||
	     strcmp(unop_spelling(P, inc), "++") == 0)) {
		s->u.loop.step = tc_expr_int(P->a, 1, loc);
	} else if (ikind == CXCursor_CompoundAssignOperator && ik.n == 2 &&
		   names_var(P, ik.c[0], vd) &&
		   strcmp(binop_spelling(P, inc), "+=") == 0 &&
		   s->u.loop.kind == TC_LOOP_SERIAL) {
		s->u.loop.step = expr(P, ik.c[1]);
		if (!s->u.loop.step)
			return false;
	} else {
		error(P, start_of(P, inc), "loop increment must be '%s++' or "
		      "'%s += step'", spelling(P, vd), spelling(P, vd));
		return false;
	}

	char *name = declared_name(P, spelling(P, vd), loc_of(P, vd));
	if (!name)
		return false;
	int mark = P->nbinds;
	TcVar *v = tc_var_new(P->a, P->k, TC_VAR_LOOP, name, TC_DT_I32,
			      loc_of(P, vd));
	s->u.loop.var = v;
	bind(P, vd, v);
	s->u.loop.body = scoped_block(P, k.c[3]);
	P->nbinds = mark;
	if (!s->u.loop.body)
		return false;
	tc_vec_push(P->a, out, s);
	return true;
}

/* dst = value, dst op= value, dst++ and friends. */
static bool
assign_stmt(Parser *P, CXCursor c, CXCursor lhs, const char *op,
	    TcExpr *value, TcVec *out)
{
	TcLoc loc = loc_of(P, c);
	CXCursor l = strip(lhs);
	TcExpr *dst;
	if (clang_getCursorKind(l) == CXCursor_DeclRefExpr) {
		TcVar *v = lookup(P, clang_getCursorReferenced(l));
		if (!v) {
			error(P, start_of(P, lhs), "cannot assign to '%s'",
			      spelling(P, l));
			return false;
		}
		if (v->kind != TC_VAR_LOCAL) {
			error(P, start_of(P, lhs), "cannot assign to '%s': it "
			      "is a %s", v->name,
			      v->kind == TC_VAR_LOOP ? "loop variable" :
			      v->kind == TC_VAR_SCALAR ? "kernel parameter" :
			      v->kind == TC_VAR_BLOCK ? "block index" :
			      v->kind == TC_VAR_TUNABLE ? "tunable" :
			      v->kind == TC_VAR_TENSOR ? "tensor (assign "
			      "elements, or use tile_copy)" : "buffer (assign "
			      "elements, or use tile_copy / tile_fill)");
			return false;
		}
		v->mutated = true;
		dst = tc_expr_var(P->a, v, start_of(P, lhs));
	} else if (clang_getCursorKind(l) == CXCursor_ArraySubscriptExpr) {
		dst = subscript(P, l);
		if (!dst)
			return false;
	} else {
		error(P, start_of(P, lhs), "the left side of an assignment must "
		      "be a local variable or an element T[i]...");
		return false;
	}
	if (op) {
		TcBinop bop;
		if (!binop_from(op, &bop))
			tc_unreachable();
		value = tc_expr_binary(P->a, bop, tc_expr_clone(P->a, dst), value,
				       loc);
	}
	TcStmt *s = tc_stmt_new(P->a, TC_ST_ASSIGN, loc);
	s->u.assign.dst = dst;
	s->u.assign.value = convert(P, value, dst->dtype, loc);
	tc_vec_push(P->a, out, s);
	return true;
}

/* local = tile_sum(x): the destination must be a scalar local. */
static bool
reduce_all_assign(Parser *P, CXCursor c, CXCursor lhs, CXCursor value,
		  TcVec *out)
{
	CXCursor l = strip(lhs);
	const char *name = callee_name(P, strip(value));
	TcVar *v = clang_getCursorKind(l) == CXCursor_DeclRefExpr ?
		   lookup(P, clang_getCursorReferenced(l)) : NULL;
	if (!v || v->kind != TC_VAR_LOCAL) {
		error(P, start_of(P, lhs), "the result of %s goes into a "
		      "scalar local variable (float s = %s(x);)", name, name);
		return false;
	}
	return reduce_all_stmt(P, value, v, loc_of(P, c), out);
}

/* statement := compound | decl | for | if | tile-op | launch | assignment */
static bool stmt_inner(Parser *P, CXCursor c, TcVec *out);

static bool
stmt(Parser *P, CXCursor c, TcVec *out)
{
	if (!nest_in(P, c, "statement"))
		return false;
	bool ok = stmt_inner(P, c, out);
	P->nest--;
	return ok;
}

static bool
stmt_inner(Parser *P, CXCursor c, TcVec *out)
{
	TcLoc loc = loc_of(P, c);
	Kids k;
	switch (clang_getCursorKind(c)) {
	case CXCursor_CompoundStmt: {
		TcStmt *b = scoped_block(P, c);
		if (!b)
			return false;
		tc_vec_push(P->a, out, b);
		return true;
	}
	case CXCursor_NullStmt:
		return true;
	case CXCursor_DeclStmt:
		return decl_stmt(P, c, out);
	case CXCursor_ForStmt:
		return for_stmt(P, c, out);
	case CXCursor_IfStmt: {
		k = kids(P, c);
		if (k.n < 2 || k.n > 3) {
			error(P, loc, "unsupported if statement");
			return false;
		}
		TcStmt *s = tc_stmt_new(P->a, TC_ST_IF, loc);
		s->u.cond.cond = expr(P, k.c[0]);
		if (!s->u.cond.cond)
			return false;
		s->u.cond.then = scoped_block(P, k.c[1]);
		if (!s->u.cond.then)
			return false;
		if (k.n == 3) {
			s->u.cond.els = scoped_block(P, k.c[2]);
			if (!s->u.cond.els)
				return false;
		}
		tc_vec_push(P->a, out, s);
		return true;
	}
	case CXCursor_CallExpr: {
		const char *name = callee_name(P, c);
		if (is_launch(name))
			return launch_stmt(P, c, name, NULL);
		return tile_op(P, c, name, out);
	}
	case CXCursor_BinaryOperator: {
		const char *sp = binop_spelling(P, c);
		k = kids(P, c);
		if (strcmp(sp, "=") != 0 || k.n != 2)
			break;
		if (value_reduce_all(P, k.c[1]) >= 0)
			return reduce_all_assign(P, c, k.c[0], k.c[1], out);
		TcExpr *v = expr(P, k.c[1]);
		return v && assign_stmt(P, c, k.c[0], NULL, v, out);
	}
	case CXCursor_CompoundAssignOperator: {
		const char *sp = binop_spelling(P, c);
		k = kids(P, c);
		if (k.n != 2)
			break;
		char op[4] = { 0 };
		size_t n = strlen(sp);
		if (n < 2 || n > 3)
			break;
		memcpy(op, sp, n - 1);
		TcExpr *v = expr(P, k.c[1]);
		return v && assign_stmt(P, c, k.c[0], op, v, out);
	}
	case CXCursor_UnaryOperator: {
		const char *sp = unop_spelling(P, c);
		k = kids(P, c);
		bool inc = strstr(sp, "++") != NULL;
		if ((!inc && strstr(sp, "--") == NULL) || k.n != 1)
			break;
		return assign_stmt(P, c, k.c[0], inc ? "+" : "-",
				   tc_expr_int(P->a, 1, loc), out);
	}
	case CXCursor_WhileStmt:
	case CXCursor_DoStmt:
		error(P, loc, "while and do loops are not supported: write a "
		      "canonical for loop or tile_parallel / tile_pipelined");
		return false;
	case CXCursor_GotoStmt:
	case CXCursor_IndirectGotoStmt:
	case CXCursor_LabelStmt:
		error(P, loc, "goto and labels are not supported in a tile "
		      "program");
		return false;
	case CXCursor_BreakStmt:
	case CXCursor_ContinueStmt:
		error(P, loc, "break and continue are not supported: loops in "
		      "a tile program run their whole range");
		return false;
	case CXCursor_ReturnStmt:
		error(P, loc, "return is not supported in a kernel body");
		return false;
	case CXCursor_SwitchStmt:
		error(P, loc, "switch is not supported: use if / else");
		return false;
	default:
		break;
	}
	error(P, loc, "this statement is not part of the tile language "
	      "(a statement is a declaration, assignment, loop, if, or tile "
	      "operation)");
	return false;
}

/* --- Kernels and programs -------------------------------------------------------------- */

static bool
param(Parser *P, CXCursor pd, int index)
{
	TcKernel *k = P->k;
	TcLoc loc = loc_of(P, pd);
	char *name = declared_name(P, spelling(P, pd), loc);
	if (!name)
		return false;
	CXType type = clang_getCursorType(pd);
	if (!*name) {
		error(P, loc, "kernel parameters need names");
		return false;
	}
	if (is_array(type)) {
		CXType elem;
		int rank = array_rank(type, &elem);
		TcDtype dt = dtype_of(elem);
		if (dt == TC_DT_NONE) {
			error(P, loc, "tensor '%s' has element type '%s', which "
			      "is not a tile dtype", name, type_name(P, elem));
			return false;
		}
		if (rank > TC_MAX_RANK) {
			error(P, loc, "tensor '%s' has %d dims; at most %d are "
			      "supported", name, rank, TC_MAX_RANK);
			return false;
		}
		Kids all = kids(P, pd);
		CXCursor ext[TC_MAX_RANK];
		int n = 0;
		for (int j = 0; j < all.n; j++) {
			enum CXCursorKind kk = clang_getCursorKind(all.c[j]);
			if (kk == CXCursor_TypeRef || clang_isAttribute(kk))
				continue;
			if (n < TC_MAX_RANK)
				ext[n] = all.c[j];
			n++;
		}
		if (n != rank) {
			error(P, loc, "tensor '%s' needs an extent for every dim, "
			      "e.g. const f32 %s[M][N]", name, name);
			return false;
		}
		TcVar *v = tc_var_new(P->a, k, TC_VAR_TENSOR, name, dt, loc);
		v->rank = rank;
		v->param = index;
		v->is_const = clang_isConstQualifiedType(elem);
		for (int j = 0; j < rank; j++) {
			v->shape[j] = expr(P, ext[rank - 1 - j]);
			if (!v->shape[j])
				return false;
			if (!tc_dtype_is_int(v->shape[j]->dtype)) {
				error(P, start_of(P, ext[rank - 1 - j]),
				      "extent of '%s' must be an integer", name);
				return false;
			}
		}
		bind(P, pd, v);
		tc_vec_push(P->a, &k->params, v);
		return true;
	}
	if (clang_getCanonicalType(type).kind == CXType_Pointer) {
		error(P, loc, "pointer parameter '%s': declare tensors as "
		      "arrays with their extents, e.g. const f32 %s[N]", name,
		      name);
		return false;
	}
	TcDtype dt = dtype_of(type);
	if (dt == TC_DT_NONE || dt == TC_DT_BOOL || tc_dtype_bits(dt) < 32) {
		error(P, loc, "scalar parameter '%s' has type '%s'; scalars are "
		      "int, long long, float or double", name,
		      type_name(P, type));
		return false;
	}
	TcVar *v = tc_var_new(P->a, k, TC_VAR_SCALAR, name, dt, loc);
	v->param = index;
	bind(P, pd, v);
	tc_vec_push(P->a, &k->params, v);
	return true;
}

static bool
kernel(Parser *P, CXCursor fn)
{
	TcKernel *k = tc_alloc(P->a, sizeof *k);
	k->loc = loc_of(P, fn);
	if (!(k->name = declared_name(P, spelling(P, fn), k->loc)))
		return false;
	if (library_name(k->name)) {
		error(P, k->loc, "'%s' cannot name a kernel: a kernel is an "
		      "external function of the generated code, and the C "
		      "library it includes declares one of that name; rename "
		      "it", k->name);
		return false;
	}
	P->k = k;
	int mark = P->nbinds;
	bool ok = true;

	if (clang_getCanonicalType(clang_getResultType(
		    clang_getCursorType(fn))).kind != CXType_Void) {
		error(P, k->loc, "kernel '%s' must return void", k->name);
		ok = false;
	}
	if (ok && clang_Cursor_isVariadic(fn)) {
		error(P, k->loc, "kernel '%s' cannot be variadic", k->name);
		ok = false;
	}
	int nparams = clang_Cursor_getNumArguments(fn);
	for (int i = 0; ok && i < nparams; i++)
		ok = param(P, clang_Cursor_getArgument(fn, (unsigned)i), i);

	CXCursor body = clang_getNullCursor();
	Kids kk = kids(P, fn);
	for (int i = 0; i < kk.n; i++)
		if (clang_getCursorKind(kk.c[i]) == CXCursor_CompoundStmt)
			body = kk.c[i];
	if (ok && clang_Cursor_isNull(body)) {
		error(P, k->loc, "kernel '%s' has no body", k->name);
		ok = false;
	}
	if (ok) {
		/* The body's top level is depth 0, where launch statements
		 * live; scoped_block() would make it 1. */
		k->body = new_block(P, loc_of(P, body));
		Kids st = kids(P, body);
		P->depth = 0;
		for (int i = 0; i < st.n && ok; i++)
			ok = stmt(P, st.c[i], &k->body->u.block.body);
	}
	P->nbinds = mark;
	P->k = NULL;
	if (ok)
		tc_vec_push(P->a, &P->prog->kernels, k);
	return ok;
}

/* TILE_PARAM(NAME, DEFAULT, CHOICE...) expands to an enum constant NAME and
 * an annotated array tilec_param_NAME holding DEFAULT, CHOICE...; pair them. */
static bool
tunable(Parser *P, CXCursor arr, Kids *top)
{
	char *aname = spelling(P, arr);
	TcLoc loc = loc_of(P, arr);
	char *name = declared_name(P, aname + strlen("tilec_param_"), loc);
	if (!name)
		return false;
	CXCursor enumc = clang_getNullCursor();
	for (int i = 0; i < top->n && clang_Cursor_isNull(enumc); i++) {
		if (clang_getCursorKind(top->c[i]) != CXCursor_EnumDecl)
			continue;
		Kids ec = kids(P, top->c[i]);
		for (int j = 0; j < ec.n; j++)
			if (strcmp(spelling(P, ec.c[j]), name) == 0)
				enumc = ec.c[j];
	}
	if (clang_Cursor_isNull(enumc)) {
		error(P, loc, "malformed TILE_PARAM '%s'", name);
		return false;
	}
	Kids init = { NULL, 0, 0, P->a };
	Kids ak = kids(P, arr);
	for (int i = 0; i < ak.n; i++)
		if (clang_getCursorKind(ak.c[i]) == CXCursor_InitListExpr)
			init = kids(P, ak.c[i]);
	if (init.n < 1) {
		error(P, loc, "TILE_PARAM '%s' needs a default value", name);
		return false;
	}
	long long *vals = tc_alloc(P->a, sizeof *vals * (size_t)init.n);
	for (int i = 0; i < init.n; i++)
		if (!int_value(init.c[i], &vals[i])) {
			error(P, start_of(P, init.c[i]), "TILE_PARAM '%s': "
			      "values must be integer constants", name);
			return false;
		} else if (vals[i] < INT_MIN || vals[i] > INT_MAX) {
			error(P, start_of(P, init.c[i]), "TILE_PARAM '%s': "
			      "%lld is not an int (tunables are enum "
			      "constants)", name, vals[i]);
			return false;
		}
	for (int i = 0; i < P->prog->tunables.len; i++) {
		TcVar *o = P->prog->tunables.items[i];
		if (strcmp(o->name, name) == 0) {
			error(P, loc, "TILE_PARAM '%s' is declared twice", name);
			return false;
		}
	}
	TcVar *v = tc_var_new(P->a, NULL, TC_VAR_TUNABLE, name, TC_DT_I32, loc);
	v->def_value = vals[0];
	v->value = vals[0];
	v->choices = init.n > 1 ? vals + 1 : vals;
	v->nchoices = init.n > 1 ? init.n - 1 : 1;
	v->index = P->prog->tunables.len;
	tc_vec_push(P->a, &P->prog->tunables, v);
	bind(P, enumc, v);
	return true;
}

static bool
in_main_file(Parser *P, CXCursor c)
{
	CXFile f;
	clang_getExpansionLocation(clang_getCursorLocation(c), &f, NULL, NULL,
				   NULL);
	return f && clang_File_isEqual(f, P->main_file);
}

static bool
program(Parser *P)
{
	Kids top = kids(P, clang_getTranslationUnitCursor(P->tu));
	bool ok = true;
	for (int i = 0; i < top.n && ok; i++) {
		CXCursor c = top.c[i];
		if (!in_main_file(P, c) ||
		    clang_getCursorKind(c) != CXCursor_VarDecl)
			continue;
		if (has_annotation(P, c, "tilec.param"))
			ok = tunable(P, c, &top);
		else {
			error(P, loc_of(P, c), "global variable '%s': a tile "
			      "program's data comes in through kernel "
			      "parameters", spelling(P, c));
			ok = false;
		}
	}
	for (int i = 0; i < top.n && ok; i++) {
		CXCursor c = top.c[i];
		if (!in_main_file(P, c) ||
		    clang_getCursorKind(c) != CXCursor_FunctionDecl)
			continue;
		bool is_kernel = has_annotation(P, c, "tilec.kernel");
		if (is_kernel && !clang_isCursorDefinition(c))
			continue; /* a declaration; the definition follows */
		if (!is_kernel) {
			if (clang_isCursorDefinition(c)) {
				error(P, loc_of(P, c), "function '%s' is not a "
				      "kernel: a tile program defines only "
				      "TILE_KERNEL functions", spelling(P, c));
				ok = false;
			}
			continue;
		}
		ok = kernel(P, c);
	}
	if (ok && P->prog->kernels.len == 0) {
		error(P, (TcLoc){ P->path, 1, 1 }, "no TILE_KERNEL function in "
		      "this program");
		ok = false;
	}
	return ok;
}

/* Whether clang's diagnostic `msg` is about a constant converted to an
 * fp8 type.  fp8 elements are bytes to C (tilec.h), so to clang `fp8e4m3
 * s = 300;` truncates (an error, -Werror=constant-conversion: "changes
 * value from 300 to 44") and `= 0.75f` gives 0 (a warning); the tile
 * language rounds both to the 8-bit float (288, 0.75), so neither is
 * true of the program. */
static bool
fp8_constant(const char *msg)
{
	return strncmp(msg, "implicit conversion from ", 25) == 0 &&
	       (strstr(msg, " to 'fp8e4m3' ") || strstr(msg, " to 'fp8e5m2' "));
}

/* Relay clang's own diagnostics (syntax and C type errors). */
static void
relay(Parser *P)
{
	unsigned n = clang_getNumDiagnostics(P->tu);
	for (unsigned i = 0; i < n; i++) {
		CXDiagnostic dg = clang_getDiagnostic(P->tu, i);
		enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(dg);
		if (sev >= CXDiagnostic_Warning) {
			CXString msg = clang_getDiagnosticSpelling(dg);
			TcLoc loc = loc_from(P, clang_getDiagnosticLocation(dg));
			if (!fp8_constant(clang_getCString(msg)))
				tc_diag(P->d, sev >= CXDiagnostic_Error ?
					TC_ERROR : TC_WARNING, loc, "%s",
					clang_getCString(msg));
			clang_disposeString(msg);
		}
		clang_disposeDiagnostic(dg);
	}
}

TcProgram *
tc_parse(TcArena *a, const char *path, const char *text,
	 const TcOptions *opt, TcDiags *d)
{
	const TcEmbedded *hdr = tc_embedded_find("tilec.h");
	tc_assert(hdr && text);
	struct CXUnsavedFile files[2] = {
		{ path, text, (unsigned long)strlen(text) },
		{ TC_VIRTUAL_INCLUDE "/tilec.h", hdr->text, hdr->len },
	};
	const char *args[] = {
		"-xc", "-std=c11", "-nostdinc", "-ffreestanding",
		"-I" TC_VIRTUAL_INCLUDE, "-D__TILEC__=1",
		"-Werror=implicit-function-declaration", "-Werror=implicit-int",
		"-Werror=int-conversion", "-Werror=incompatible-pointer-types",
		/* A constant C truncates or wraps (tile_threads(1LL << 32),
		 * a TILE_PARAM value past an int) is wrong, not a warning. */
		"-Werror=constant-conversion", "-Werror=integer-overflow",
		"-Wno-unused-value",
	};
	CXIndex index = clang_createIndex(0, 0);
	CXTranslationUnit tu = NULL;
	enum CXErrorCode rc = clang_parseTranslationUnit2(index, path, args,
		(int)(sizeof args / sizeof *args), files, 2,
		CXTranslationUnit_None, &tu);
	if (rc != CXError_Success || !tu) {
		tc_diag(d, TC_ERROR, (TcLoc){ path, 0, 0 }, "libclang could not "
			"parse this file (error %d)", (int)rc);
		clang_disposeIndex(index);
		return NULL;
	}
	Parser P = { .a = a, .d = d, .opt = opt, .path = path, .tu = tu };
	P.main_file = clang_getFile(tu, path);
	P.prog = tc_alloc(a, sizeof *P.prog);
	P.prog->path = path;
	P.prog->text = text;
	int before = d->errors;
	relay(&P);
	if (d->errors == before)
		program(&P);
	clang_disposeTranslationUnit(tu);
	clang_disposeIndex(index);
	return d->errors == before ? P.prog : NULL;
}
