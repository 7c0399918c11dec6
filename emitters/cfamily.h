/*
 * cfamily.h - the C-family printer shared by every backend.
 *
 * CUDA C++, HIP C++ and OpenMP C spell expressions, literals, loops and
 * comments the same way; they differ in type names, math function names,
 * how a tensor or buffer element is read and how a value is narrowed.
 * Those differences are the hooks below; everything else is printed here,
 * so a fix to parenthesization or float literals lands in all backends.
 *
 * Invariants: expressions print with the fewest parentheses that keep the
 * tree's shape under C's precedence, plus those gcc's -Wparentheses asks
 * for (&& inside ||, arithmetic inside shifts, mixed bitwise operators,
 * chained comparisons).  Float literals round-trip exactly.
 */
#ifndef TILEC_CFAMILY_H
#define TILEC_CFAMILY_H

#include "ir/tilec_int.h"

typedef struct TcCPrinter TcCPrinter;

/* What a backend decides about printing C. */
typedef struct TcCHooks {
	/* The C type that holds a value of dtype t in expressions and
	 * locals (on the CPU, f16 values are float). */
	const char *(*value_type)(TcDtype t);
	/* The name of the function a CALL calls (its fn, the dtype of its
	 * result and, on the CPU, whether it runs on vectors decide). */
	const char *(*func_name)(TcCPrinter *pr, const TcExpr *call);
	/* Print a LOAD: a tensor or buffer element as a value of its dtype's
	 * value_type. */
	void (*load)(TcCPrinter *pr, const TcExpr *e);
	/* Print the conversion of value (printed with tc_c_expr_prec) to dtype
	 * t, or return false to get a plain C cast `(type)value`. */
	bool (*convert)(TcCPrinter *pr, const TcExpr *value, TcDtype t);
	/* The function that negates the value of a NEG expression, called
	 * as FN(x), or NULL for C's -x (NULL hook: always -x). */
	const char *(*neg_func)(TcCPrinter *pr, const TcExpr *neg);
	/* Print argument i of a CALL itself and return true, or return
	 * false to have it printed as any expression (NULL hook: always
	 * false); the CPU broadcasts a uniform argument of a call on
	 * vectors. */
	bool (*call_arg)(TcCPrinter *pr, const TcExpr *call, int i);
	/* Print e itself and return true, or return false for the ordinary
	 * printing (NULL hook: always false); the CPU prints selects and
	 * masks on vectors. */
	bool (*expr)(TcCPrinter *pr, const TcExpr *e);
	/* The output is C++, where comparisons, &&, || and ! give bool:
	 * as a function's argument such a value, or a bool converted to
	 * an int, is printed converted to its dtype's value_type (the int
	 * of the IR and of C). */
	bool bool_truth;
} TcCHooks;

/* A printer: where text goes, the backend's hooks and state. */
struct TcCPrinter {
	TcBuf *out;              /* the output */
	const TcCHooks *hooks;   /* the backend's choices */
	void *ctx;               /* the backend's state, for its hooks */
	int width;               /* the column comments wrap at; 0 for 80 */
};

/* Precedences beyond the binary operators' (TC_BINOPS use 4 .. 13). */
enum {
	TC_PREC_COMMA = 1,   /* any expression: function arguments, indices */
	TC_PREC_SELECT = 3,  /* c ? a : b */
	TC_PREC_UNARY = 14,  /* -x, !x, ~x, (type)x */
	TC_PREC_POSTFIX = 15 /* calls, element accesses, names, literals */
};

/* The precedence e has as printed. */
int tc_c_prec(const TcExpr *e);
/* Print e as a complete expression (no outer parentheses). */
void tc_c_expr(TcCPrinter *pr, const TcExpr *e);
/* Print e, parenthesized if it binds looser than min_prec. */
void tc_c_expr_prec(TcCPrinter *pr, const TcExpr *e, int min_prec);
/* For a binary e: its left operand and operator ("a * b *") into lhs and
 * its right operand into rhs, parenthesized as tc_c_expr would; for
 * breaking a long line at the operator. */
void tc_c_binary_split(TcCPrinter *pr, const TcExpr *e, TcBuf *lhs,
		       TcBuf *rhs);
/* A float literal of dtype t (f32 and narrower get an 'f' suffix);
 * infinities and NaN as INFINITY and NAN from <math.h>. */
void tc_c_float(TcBuf *b, double v, TcDtype t);
/* If e is a constant float (a literal, maybe negated or cast), its value. */
bool tc_c_const_float(const TcExpr *e, double *v);

/* --- Statements ------------------------------------------------------------ */

/* `for (TYPE VAR = BEGIN; VAR < END; VAR++)` (or `VAR += STEP`); no
 * trailing brace or newline.  step may be NULL for 1. */
void tc_c_for(TcCPrinter *pr, const char *type, const char *var,
	      const TcExpr *begin, const TcExpr *end, const TcExpr *step);
/* `for (int VAR = 0; VAR < END; VAR++)` with END already text. */
void tc_c_for_text(TcCPrinter *pr, const char *var, const char *begin,
		   const char *end);
/* Open and close a braced block, indenting what is between. */
void tc_c_open(TcCPrinter *pr);
void tc_c_close(TcCPrinter *pr);

/* --- Source references ------------------------------------------------------- */

/* The final path component of a file name. */
const char *tc_c_basename(const char *path);
/* The source text of the construct starting at loc in text: up to the
 * parenthesis closing the first one opened (a call), or to the end of the
 * line, whitespace runs collapsed.  NULL if loc is not in text. */
char *tc_c_source_snippet(TcArena *a, const char *text, TcLoc loc);
/* `// TEXT`, wrapped at the printer's width (80 columns unless it says
 * otherwise; tabs count 8) as clang-format would; TEXT goes
 * through tc_quote_comment, so it may come from outside. */
void tc_c_comment(TcCPrinter *pr, const char *text);
/* `// FILE:LINE TEXT` (TEXT may be NULL), wrapped likewise. */
void tc_c_loc_comment(TcCPrinter *pr, TcLoc loc, const char *text);

/* --- Backends' entry points (one per emitter, listed in backends.c) --------- */

extern const TcBackend tc_backend_openmp;

#endif /* TILEC_CFAMILY_H */
