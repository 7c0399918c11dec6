/*
 * cfamily.c - expressions, literals, loops and source comments in C syntax,
 * for every backend.
 *
 * Input: IR expressions and statements' pieces; a backend's TcCHooks.
 * Output: text appended to the printer's TcBuf (which owns indentation).
 * Invariants: see cfamily.h.  Nothing here knows a target; anything that
 * differs between CUDA, HIP and the CPU goes through a hook.
 */
#include "cfamily.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- Literals ------------------------------------------------------------------ */

/* Shortest %.Ng spelling of v that reads back as the same value in its
 * type: the float for f32 and narrower, the double for f64. */
static void
shortest(char *s, size_t n, double v, bool is_double)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, n, "%.*g", prec, v);
		double back = strtod(s, NULL);
		if (is_double ? back == v : (float)back == (float)v)
			return;
	}
}

void
tc_c_float(TcBuf *b, double v, TcDtype t)
{
	bool is_double = t == TC_DT_F64;
	if (isnan(v)) {
		tc_buf_puts(b, "NAN");
		return;
	}
	if (isinf(v)) {
		tc_buf_puts(b, v < 0 ? "-INFINITY" : "INFINITY");
		return;
	}
	char s[64];
	shortest(s, sizeof s, v, is_double);
	tc_buf_puts(b, s);
	if (!strpbrk(s, ".e"))
		tc_buf_puts(b, ".0");
	if (!is_double)
		tc_buf_puts(b, "f");
}

bool
tc_c_const_float(const TcExpr *e, double *v)
{
	switch (e->kind) {
	case TC_EX_FLOAT:
		*v = e->u.fval;
		return true;
	case TC_EX_INT:
		*v = (double)e->u.ival;
		return true;
	case TC_EX_CAST:
		return tc_c_const_float(e->u.cast.arg, v);
	case TC_EX_UNARY:
		if (e->u.un.op != TC_UOP_NEG || !tc_c_const_float(e->u.un.arg, v))
			return false;
		*v = -*v;
		return true;
	default:
		return false;
	}
}

/* --- Expressions ---------------------------------------------------------------- */

int
tc_c_prec(const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_BINARY: return tc_binop_prec(e->u.bin.op);
	case TC_EX_SELECT: return TC_PREC_SELECT;
	case TC_EX_UNARY:
	case TC_EX_CAST: return TC_PREC_UNARY;
	case TC_EX_INT: return e->u.ival < 0 ? TC_PREC_UNARY : TC_PREC_POSTFIX;
	case TC_EX_FLOAT:
		return signbit(e->u.fval) && !isnan(e->u.fval) ? TC_PREC_UNARY
							       : TC_PREC_POSTFIX;
	default: return TC_PREC_POSTFIX;
	}
}

static bool
is_compare(TcBinop op)
{
	return op >= TC_OP_LT && op <= TC_OP_NE;
}

static bool
is_bitwise(TcBinop op)
{
	return op == TC_OP_BAND || op == TC_OP_BOR || op == TC_OP_BXOR;
}

/* Parentheses C does not need but gcc's -Wparentheses (in -Wall) asks
 * for, around `child` as an operand of binary operator `op`. */
static bool
wparentheses(TcBinop op, const TcExpr *child)
{
	if (child->kind == TC_EX_UNARY && child->u.un.op == TC_UOP_NOT)
		return is_compare(op);
	if (child->kind != TC_EX_BINARY)
		return false;
	TcBinop c = child->u.bin.op;
	if (op == TC_OP_LOR)
		return c == TC_OP_LAND;
	if (op == TC_OP_SHL || op == TC_OP_SHR)
		return c == TC_OP_ADD || c == TC_OP_SUB;
	if (is_bitwise(op))
		return c != op;
	if (is_compare(op))
		return is_compare(c);
	return false;
}

/* Whether e's text starts with a minus sign. */
static bool
starts_with_minus(const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT: return e->u.ival < 0;
	case TC_EX_FLOAT: return signbit(e->u.fval) && !isnan(e->u.fval);
	case TC_EX_UNARY: return e->u.un.op == TC_UOP_NEG;
	default: return false;
	}
}

static void
print_int(TcBuf *b, long long v, TcDtype t)
{
	if (t == TC_DT_I64)
		tc_buf_printf(b, "%lldLL", v);
	else
		tc_buf_printf(b, "%lld", v);
}

/* Casts that change nothing C would see: bool to int, and a comparison
 * or logical result (already 0 or 1) to bool or int. */
static bool
cast_is_noop(const TcExpr *e)
{
	const TcExpr *arg = e->u.cast.arg;
	if (e->dtype == arg->dtype)
		return true;
	if (e->dtype == TC_DT_I32 && arg->dtype == TC_DT_BOOL)
		return true;
	if (e->dtype != TC_DT_BOOL && e->dtype != TC_DT_I32)
		return false;
	if (arg->kind == TC_EX_UNARY && arg->u.un.op == TC_UOP_NOT)
		return true;
	return arg->kind == TC_EX_BINARY &&
	       (is_compare(arg->u.bin.op) || arg->u.bin.op == TC_OP_LAND ||
		arg->u.bin.op == TC_OP_LOR);
}

/* Whether e, printed, is a bool in C++: a comparison, &&, || or ! (an
 * int in C and in the IR), or a bool value, under the casts that print
 * as nothing. */
static bool
cxx_bool(const TcExpr *e)
{
	while (e->kind == TC_EX_CAST && cast_is_noop(e))
		e = e->u.cast.arg;
	if (e->dtype == TC_DT_BOOL)
		return true;
	if (e->kind == TC_EX_UNARY)
		return e->u.un.op == TC_UOP_NOT;
	return e->kind == TC_EX_BINARY &&
	       (is_compare(e->u.bin.op) || e->u.bin.op == TC_OP_LAND ||
		e->u.bin.op == TC_OP_LOR);
}

static void
print_expr(TcCPrinter *pr, const TcExpr *e)
{
	TcBuf *b = pr->out;
	if (pr->hooks->expr && pr->hooks->expr(pr, e))
		return;
	switch (e->kind) {
	case TC_EX_INT:
		print_int(b, e->u.ival, e->dtype);
		break;
	case TC_EX_FLOAT:
		tc_c_float(b, e->u.fval, e->dtype);
		break;
	case TC_EX_VAR:
		tc_buf_puts(b, e->u.var->name);
		break;
	case TC_EX_BINARY: {
		TcBinop op = e->u.bin.op;
		int prec = tc_binop_prec(op);
		const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
		tc_c_expr_prec(pr, l, wparentheses(op, l) ? TC_PREC_POSTFIX : prec);
		tc_buf_printf(b, " %s ", tc_binop_name(op));
		tc_c_expr_prec(pr, r, wparentheses(op, r) ? TC_PREC_POSTFIX
							  : prec + 1);
		break;
	}
	case TC_EX_UNARY: {
		const char *fn = e->u.un.op == TC_UOP_NEG && pr->hooks->neg_func
				 ? pr->hooks->neg_func(pr, e) : NULL;
		if (fn) {
			tc_buf_printf(b, "%s(", fn);
			tc_c_expr(pr, e->u.un.arg);
			tc_buf_puts(b, ")");
			break;
		}
		tc_buf_puts(b, tc_unop_name(e->u.un.op));
		if (e->u.un.op == TC_UOP_NEG && starts_with_minus(e->u.un.arg))
			tc_c_expr_prec(pr, e->u.un.arg, TC_PREC_POSTFIX);
		else
			tc_c_expr_prec(pr, e->u.un.arg, TC_PREC_UNARY);
		break;
	}
	case TC_EX_SELECT:
		tc_c_expr_prec(pr, e->u.sel.cond, TC_PREC_SELECT + 1);
		tc_buf_puts(b, " ? ");
		tc_c_expr_prec(pr, e->u.sel.then, TC_PREC_COMMA + 1);
		tc_buf_puts(b, " : ");
		tc_c_expr_prec(pr, e->u.sel.els, TC_PREC_SELECT);
		break;
	case TC_EX_CALL:
		tc_buf_printf(b, "%s(", pr->hooks->func_name(pr, e));
		for (int i = 0; i < e->u.call.nargs; i++) {
			const TcExpr *arg = e->u.call.args[i];
			if (i)
				tc_buf_puts(b, ", ");
			if (pr->hooks->call_arg && pr->hooks->call_arg(pr, e, i))
				continue;
			if (pr->hooks->bool_truth && arg->dtype != TC_DT_BOOL &&
			    cxx_bool(arg)) {
				/* The int the IR says, not C++'s bool, which
				 * overloads of min and max take apart (hipcc's
				 * min(int, bool) is a double). */
				tc_buf_printf(b, "(%s)", pr->hooks->value_type(arg->dtype));
				tc_c_expr_prec(pr, arg, TC_PREC_UNARY);
			} else {
				tc_c_expr_prec(pr, arg, TC_PREC_COMMA + 1);
			}
		}
		tc_buf_puts(b, ")");
		break;
	case TC_EX_CAST:
		if (pr->hooks->convert(pr, e->u.cast.arg, e->dtype))
			break;
		tc_buf_printf(b, "(%s)", pr->hooks->value_type(e->dtype));
		tc_c_expr_prec(pr, e->u.cast.arg, TC_PREC_UNARY);
		break;
	case TC_EX_LOAD:
		pr->hooks->load(pr, e);
		break;
	case TC_EX_SMS:
		/* Only in a persistent kernel's grid, which host code
		 * computes (a launcher's `sms`, docs/launch.md). */
		tc_buf_puts(pr->out, "sms");
		break;
	default:
		tc_unreachable();
	}
}

void
tc_c_expr_prec(TcCPrinter *pr, const TcExpr *e, int min_prec)
{
	if (e->kind == TC_EX_CAST && cast_is_noop(e)) {
		tc_c_expr_prec(pr, e->u.cast.arg, min_prec);
		return;
	}
	if (tc_c_prec(e) < min_prec) {
		tc_buf_puts(pr->out, "(");
		print_expr(pr, e);
		tc_buf_puts(pr->out, ")");
	} else {
		print_expr(pr, e);
	}
}

void
tc_c_binary_split(TcCPrinter *pr, const TcExpr *e, TcBuf *lhs, TcBuf *rhs)
{
	tc_assert(e->kind == TC_EX_BINARY);
	TcBinop op = e->u.bin.op;
	int prec = tc_binop_prec(op);
	const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
	TcBuf *out = pr->out;
	pr->out = lhs;
	tc_c_expr_prec(pr, l, wparentheses(op, l) ? TC_PREC_POSTFIX : prec);
	tc_buf_printf(lhs, " %s", tc_binop_name(op));
	pr->out = rhs;
	tc_c_expr_prec(pr, r, wparentheses(op, r) ? TC_PREC_POSTFIX : prec + 1);
	pr->out = out;
}

void
tc_c_expr(TcCPrinter *pr, const TcExpr *e)
{
	tc_c_expr_prec(pr, e, 0);
}

/* --- Statements ---------------------------------------------------------------- */

void
tc_c_for(TcCPrinter *pr, const char *type, const char *var,
	 const TcExpr *begin, const TcExpr *end, const TcExpr *step)
{
	TcBuf *b = pr->out;
	tc_buf_printf(b, "for (%s %s = ", type, var);
	tc_c_expr_prec(pr, begin, TC_PREC_COMMA + 1);
	tc_buf_printf(b, "; %s < ", var);
	tc_c_expr_prec(pr, end, tc_binop_prec(TC_OP_LT) + 1);
	if (!step || (step->kind == TC_EX_INT && step->u.ival == 1)) {
		tc_buf_printf(b, "; %s++)", var);
	} else {
		tc_buf_printf(b, "; %s += ", var);
		tc_c_expr_prec(pr, step, TC_PREC_COMMA + 1);
		tc_buf_puts(b, ")");
	}
}

void
tc_c_for_text(TcCPrinter *pr, const char *var, const char *begin,
	      const char *end)
{
	tc_buf_printf(pr->out, "for (int %s = %s; %s < %s; %s++)", var, begin,
		      var, end, var);
}

void
tc_c_open(TcCPrinter *pr)
{
	tc_buf_puts(pr->out, " {\n");
	pr->out->indent++;
}

void
tc_c_close(TcCPrinter *pr)
{
	pr->out->indent--;
	tc_buf_puts(pr->out, "}\n");
}

/* --- Source references ------------------------------------------------------------ */

const char *
tc_c_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

char *
tc_c_source_snippet(TcArena *a, const char *text, TcLoc loc)
{
	if (!text || loc.line <= 0 || loc.col <= 0)
		return NULL;
	const char *p = text;
	for (int l = 1; l < loc.line; l++) {
		p = strchr(p, '\n');
		if (!p)
			return NULL;
		p++;
	}
	for (int c = 1; c < loc.col; c++)
		if (*p == '\n' || !*p++)
			return NULL;
	TcBuf b;
	tc_buf_init(&b);
	int depth = 0;
	bool opened = false, space = false;
	for (; *p && b.len < 240; p++) {
		char c = *p;
		if (!opened && depth == 0 && (c == ';' || c == '{' || c == '\n'))
			break;
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			space = b.len > 0;
			continue;
		}
		if (space && !(c == ')' || c == ']' || c == ','))
			tc_buf_puts(&b, " ");
		space = false;
		tc_buf_printf(&b, "%c", c);
		if (c == '(' || c == '[') {
			depth++;
			opened |= c == '(';
		} else if ((c == ')' || c == ']') && --depth == 0 && opened) {
			break;
		}
	}
	char *s = tc_strdup(a, b.data ? b.data : "");
	tc_buf_free(&b);
	return s;
}

static const char *
skip_spaces(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* The end of the word starting at p. */
static const char *
next_word(const char *p)
{
	while (*p && *p != ' ')
		p++;
	return p;
}

/* Whether the word [w, we) is an operator of C: `+`, `==`, `&&`. */
static bool
is_operator(const char *w, const char *we)
{
	if (we == w || we - w > 2)
		return false;
	for (const char *c = w; c < we; c++)
		if (!strchr("+-*/%<>=!&|^?:", *c))
			return false;
	return true;
}

void
tc_c_comment(TcCPrinter *pr, const char *text)
{
	TcBuf *b = pr->out;
	/* After the tabs and "// ". */
	int width = (pr->width ? pr->width : 80) - b->indent * 8 - 3;
	/* Paths and source text from outside can end up here. */
	TcBuf safe;
	tc_buf_init(&safe);
	tc_quote_comment(&safe, text);
	const char *p = safe.data ? safe.data : "";
	while (*p) {
		while (*p == ' ')
			p++;
		/* The longest run of whole words that fits (at least one); an
		 * operator keeps its operands on its line (`k + 1`). */
		const char *end = p, *fit = NULL;
		while (*end) {
			const char *w = end;
			while (*w == ' ')
				w++;
			const char *we = next_word(w), *last = w;
			while (*we == ' ' && (is_operator(last, we) ||
					      is_operator(skip_spaces(we),
							  next_word(skip_spaces(we))))) {
				last = skip_spaces(we);
				we = next_word(last);
			}
			if (fit && we - p > width)
				break;
			fit = we;
			end = we;
		}
		if (!fit)
			break;
		tc_buf_printf(b, "// %.*s\n", (int)(fit - p), p);
		p = fit;
	}
	tc_buf_free(&safe);
}

void
tc_c_loc_comment(TcCPrinter *pr, TcLoc loc, const char *text)
{
	if (!loc.file || loc.line <= 0) {
		if (text)
			tc_c_comment(pr, text);
		return;
	}
	TcBuf line;
	tc_buf_init(&line);
	tc_buf_printf(&line, "%s:%d", tc_c_basename(loc.file), loc.line);
	if (text && *text)
		tc_buf_printf(&line, " %s", text);
	tc_c_comment(pr, line.data);
	tc_buf_free(&line);
}
