/*
 * read.c - the IR reader: the text print.c prints, read back into IR.
 *
 * Input: the text of `tilec --emit=ir` or `--dump-after=PASS` (or one
 * written by hand in that form), and the path it came from.  Output: a
 * TcProgram whose printing (tc_print_program) is that text again, with
 * every schedule field the printer shows, so a pass can start from it
 * (`tilec --from-ir FILE --passes=...`, tests/ir/).  Lines of comment
 * between kernels are skipped.  A malformed text is a
 * located error at the token that broke it (file:line:col of the IR
 * text, the line and a caret), never a crash.
 *
 * What the text leaves out is derived as the passes would have left it:
 * expression dtypes from C's conversions (ir.c) and the literals'
 * suffixes; a LOCAL is `mutated` when something assigns it; a run's ops
 * (TcFuseOp) from the statements they stand for; a stage view's buffer
 * from the buffer it views.  Source positions are the `// L:C` comments
 * (in the file the kernel line names); expressions have none.
 *
 * The grammar is the printer's, line by line; each parse function below
 * names the line it reads.  Names are scoped as the verifier scopes them:
 * a name means the innermost declaration in scope, then the kernel's
 * parameters, block indices and handles, then the program's tunables.
 */
#include "ir/tilec_int.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- Tokens ------------------------------------------------------------------ */

typedef enum TokKind {
	TOK_EOF,
	TOK_NL,      /* end of a line */
	TOK_IDENT,   /* [A-Za-z_][A-Za-z0-9_]* */
	TOK_INT,     /* 12, 12LL */
	TOK_FLOAT,   /* 1.5, 1.5f, 1e-05f */
	TOK_PUNCT,   /* operators and brackets; `<-`, `..`, `+=` */
	TOK_COMMENT, /* `// text` to the end of the line (text without `// `) */
} TokKind;

typedef struct Tok {
	TokKind kind;
	const char *p;   /* its text in the input */
	int len;         /* bytes */
	int line, col;   /* 1-based */
	long long ival;  /* INT */
	double fval;     /* FLOAT */
	TcDtype dtype;   /* INT, FLOAT: from the suffix */
} Tok;

/* A name in scope. */
typedef struct Scope {
	TcVar **vars; /* declared in order, innermost last */
	int len, cap;
} Scope;

/* A run line read before its statements (TcFusion in the making). */
typedef struct RunText {
	TcFusion *F;
	int index;            /* N of `run N` */
	/* The ops as printed: kind, buffer name, `by rows`, `again`, and
	 * for an again map the position `at L:C`. */
	TcFuseKind kind[64];
	const char *buf[64];
	bool helper[64];
	TcFuseOp marks[64];   /* the marks in parentheses: vector, partial
				 rows and cols, ends main loop, zero past
				 main loop, streamed, next block */
	int at_line[64], at_col[64];
	int nops;
	const char *again[TC_FUSE_MAX_AGAIN]; /* recomputed buffers */
	const char *regs[64]; /* `registers` */
	const TcVar *reg_var[64]; /* and what they name */
	int nregs;
	const char *lanes[64]; /* `lanes` */
	const TcVar *lane_var[64];
	int nlanes;
	/* `run N main loop: map at L:C {`: where each body starts in the
	 * text (read once the run's statements are), or `: nothing`. */
	Tok main_at[16];
	bool main_empty[16];
	int main_line[16], main_col[16];
	int nmain;
	bool done;            /* its ops are made */
} RunText;

typedef struct Reader {
	TcArena *a;
	TcDiags *d;
	const char *path;  /* the IR text's path, for diagnostics */
	const char *src;   /* the text */
	const char *end;
	const char *cur;   /* where the next token starts */
	int line, col;
	Tok tok;           /* the current token */
	jmp_buf fail;      /* where an error ends the reading */
	int nest;          /* expressions being read, one inside another */
	TcProgram *prog;
	TcKernel *k;       /* the kernel being read */
	const char *kfile; /* its source file, for statement positions */
	Scope scope;
	TcVec runs;        /* RunText * of the kernel, by run index */
	bool bounds;       /* the kernel's `bounds marked` line */
	/* The kernel's `strip N blocks along x, each keeping B, ...` line:
	 * the names of the buffers, found once the body declares them, and
	 * where the line is. */
	Tok strip_at;
	TcVec strip_keeps; /* Tok * */
	/* Reading a main loop (TcFuseOp.main): its declarations name the
	 * nest's vars, scope.vars[main_lo .. main_hi), not new ones. */
	int main_lo, main_hi;
	/* A copy plan's tile names the loop var of the loop it is made for,
	 * which is declared after it: such names become LOOP vars here,
	 * taken by the first loop that declares the name. */
	bool in_plan;
	TcVar *pending[8];
	int npending;
} Reader;

TC_NORETURN static void error_at(Reader *R, const Tok *t, const char *fmt,
				...) TC_PRINTF(3, 4);

TC_NORETURN static void
stop(Reader *R)
{
	longjmp(R->fail, 1);
}

TC_NORETURN static void
error_at(Reader *R, const Tok *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(R->d, TC_ERROR, (TcLoc){ R->path, t->line, t->col }, fmt, ap);
	va_end(ap);
	stop(R);
}

/* The current token's text, for messages. */
static const char *
tok_text(Reader *R, const Tok *t)
{
	switch (t->kind) {
	case TOK_EOF: return "the end of the file";
	case TOK_NL: return "the end of the line";
	default: return tc_fmt(R->a, "'%.*s'", t->len > 40 ? 40 : t->len, t->p);
	}
}

static bool
ident_char(char c)
{
	return c == '_' || ((c | 32) >= 'a' && (c | 32) <= 'z') ||
	       (c >= '0' && c <= '9');
}

static void
lex(Reader *R)
{
	const char *p = R->cur;
	while (p < R->end && (*p == ' ' || *p == '\t' || *p == '\r')) {
		R->col++; /* byte columns, as diagnostics count them */
		p++;
	}
	Tok t = { .p = p, .line = R->line, .col = R->col };
	if (p >= R->end || *p == '\0') {
		t.kind = TOK_EOF;
	} else if (*p == '\n') {
		t.kind = TOK_NL;
		t.len = 1;
		R->tok = t;
		R->cur = p + 1;
		R->line++;
		R->col = 1;
		return;
	} else if (p[0] == '/' && p + 1 < R->end && p[1] == '/') {
		const char *q = p + 2;
		if (q < R->end && *q == ' ')
			q++;
		const char *e = memchr(q, '\n', (size_t)(R->end - q));
		if (!e)
			e = R->end;
		t.kind = TOK_COMMENT;
		t.p = q;
		t.len = (int)(e - q);
		R->col += (int)(e - p);
		R->cur = e;
		R->tok = t;
		return;
	} else if (ident_char(*p) && !(*p >= '0' && *p <= '9')) {
		const char *q = p;
		while (q < R->end && ident_char(*q))
			q++;
		t.kind = TOK_IDENT;
		t.len = (int)(q - p);
	} else if (*p >= '0' && *p <= '9') {
		const char *q = p;
		bool flt = false;
		while (q < R->end) {
			if (*q >= '0' && *q <= '9') {
				q++;
			} else if (*q == '.' && q + 1 < R->end && q[1] != '.') {
				flt = true;
				q++;
			} else if ((*q == 'e' || *q == 'E') && q + 1 < R->end &&
				   (q[1] == '+' || q[1] == '-' ||
				    (q[1] >= '0' && q[1] <= '9'))) {
				flt = true;
				q += 2;
			} else {
				break;
			}
		}
		char buf[64];
		int n = (int)(q - p);
		if (n >= (int)sizeof buf)
			n = (int)sizeof buf - 1;
		memcpy(buf, p, (size_t)n);
		buf[n] = '\0';
		errno = 0;
		if (flt) {
			t.kind = TOK_FLOAT;
			t.fval = strtod(buf, NULL);
			t.dtype = TC_DT_F64;
			if (q < R->end && *q == 'f') {
				t.dtype = TC_DT_F32;
				q++;
			}
		} else {
			t.kind = TOK_INT;
			t.ival = strtoll(buf, NULL, 10);
			t.dtype = TC_DT_I32;
			if (q + 1 < R->end && q[0] == 'L' && q[1] == 'L') {
				t.dtype = TC_DT_I64;
				q += 2;
			}
		}
		t.len = (int)(q - p);
		if (errno == ERANGE) {
			R->tok = t;
			error_at(R, &t, "number out of range");
		}
	} else {
		static const char *const two[] = { "<-", "..", "+=", "==", "!=",
						   "<=", ">=", "&&", "||", "<<",
						   ">>" };
		t.kind = TOK_PUNCT;
		t.len = 1;
		for (size_t i = 0; i < sizeof two / sizeof *two; i++)
			if (p + 1 < R->end && p[0] == two[i][0] && p[1] == two[i][1])
				t.len = 2;
		if (!strchr("()[]{},:;=+-*/%<>!~&|^?.'", *p)) {
			R->tok = t;
			error_at(R, &t, "unexpected character '%c'", *p);
		}
	}
	R->cur = p + t.len;
	R->col += t.len;
	R->tok = t;
}

static bool
is_punct(const Tok *t, const char *s)
{
	return t->kind == TOK_PUNCT && (size_t)t->len == strlen(s) &&
	       memcmp(t->p, s, (size_t)t->len) == 0;
}

static bool
is_word(const Tok *t, const char *s)
{
	return t->kind == TOK_IDENT && (size_t)t->len == strlen(s) &&
	       memcmp(t->p, s, (size_t)t->len) == 0;
}

/* Take the current token if it is punctuation s (or word s). */
static bool
accept(Reader *R, const char *s)
{
	if (is_punct(&R->tok, s) || is_word(&R->tok, s)) {
		lex(R);
		return true;
	}
	return false;
}

static void
expect(Reader *R, const char *s)
{
	if (!accept(R, s))
		error_at(R, &R->tok, "expected '%s', found %s", s,
			 tok_text(R, &R->tok));
}

/* What the next token is, without taking the current one. */
static Tok
peek(Reader *R)
{
	const char *cur = R->cur;
	int line = R->line, col = R->col;
	Tok t = R->tok;
	lex(R);
	Tok next = R->tok;
	R->cur = cur;
	R->line = line;
	R->col = col;
	R->tok = t;
	return next;
}

/* Whether the token after the current one is the word w. */
static bool
next_is(Reader *R, const char *w)
{
	Tok t = peek(R);
	return is_word(&t, w);
}

static const char *
ident(Reader *R)
{
	if (R->tok.kind != TOK_IDENT)
		error_at(R, &R->tok, "expected a name, found %s",
			 tok_text(R, &R->tok));
	const char *s = tc_strndup(R->a, R->tok.p, (size_t)R->tok.len);
	lex(R);
	return s;
}

static long long
integer(Reader *R)
{
	bool neg = accept(R, "-");
	if (R->tok.kind != TOK_INT)
		error_at(R, &R->tok, "expected a number, found %s",
			 tok_text(R, &R->tok));
	long long v = R->tok.ival;
	lex(R);
	return neg ? -v : v;
}

/* An int that fits a C int (counts, dims, offsets of the printer). */
static int
small_int(Reader *R)
{
	Tok at = R->tok;
	long long v = integer(R);
	if (v < -(1LL << 30) || v > (1LL << 30))
		error_at(R, &at, "number out of range");
	return (int)v;
}

/* `xN` (a count after the printer's x), as in `rows x4`. */
static int
x_count(Reader *R)
{
	Tok at = R->tok;
	if (at.kind != TOK_IDENT || at.len < 2 || at.p[0] != 'x')
		error_at(R, &at, "expected 'xN', found %s", tok_text(R, &at));
	int v = 0;
	for (int i = 1; i < at.len; i++) {
		if (at.p[i] < '0' || at.p[i] > '9' || v > 1 << 24)
			error_at(R, &at, "expected 'xN', found %s",
				 tok_text(R, &at));
		v = v * 10 + (at.p[i] - '0');
	}
	lex(R);
	return v;
}

/* `AxB` as the printer writes it: an int, then `xB`. */
static void
by(Reader *R, int *a, int *b)
{
	*a = small_int(R);
	*b = x_count(R);
}

static void
end_of_line(Reader *R)
{
	if (R->tok.kind != TOK_NL && R->tok.kind != TOK_EOF)
		error_at(R, &R->tok, "expected the end of the line, found %s",
			 tok_text(R, &R->tok));
	if (R->tok.kind == TOK_NL)
		lex(R);
}

/* A statement's `// L:C` and the end of its line. */
static TcLoc
loc_comment(Reader *R)
{
	TcLoc loc = { R->kfile, 0, 0 };
	if (R->tok.kind == TOK_COMMENT) {
		int l, c, n = 0;
		char buf[32];
		int len = R->tok.len < 31 ? R->tok.len : 31;
		memcpy(buf, R->tok.p, (size_t)len);
		buf[len] = '\0';
		if (sscanf(buf, "%d:%d%n", &l, &c, &n) != 2 || n != len ||
		    l <= 0 || c <= 0)
			error_at(R, &R->tok, "expected a position 'LINE:COL' "
				 "in this comment");
		loc.line = l;
		loc.col = c;
		lex(R);
	}
	end_of_line(R);
	return loc;
}

static void
skip_blank_lines(Reader *R)
{
	while (R->tok.kind == TOK_NL)
		lex(R);
}

/* --- Names ------------------------------------------------------------------- */

static void
declare(Reader *R, TcVar *v)
{
	Scope *s = &R->scope;
	if (s->len == s->cap) {
		int cap = s->cap ? 2 * s->cap : 64;
		TcVar **n = tc_alloc(R->a, (size_t)cap * sizeof *n);
		if (s->len)
			memcpy(n, s->vars, (size_t)s->len * sizeof *n);
		s->vars = n;
		s->cap = cap;
	}
	s->vars[s->len++] = v;
}

static TcVar *
lookup(Reader *R, const char *name)
{
	for (int i = R->scope.len - 1; i >= 0; i--)
		if (strcmp(R->scope.vars[i]->name, name) == 0)
			return R->scope.vars[i];
	for (int i = 0; R->prog && i < R->prog->tunables.len; i++) {
		TcVar *t = R->prog->tunables.items[i];
		if (strcmp(t->name, name) == 0)
			return t;
	}
	return NULL;
}

/* A loop var a copy plan names before its loop (Reader.pending). */
static TcVar *
pending_var(Reader *R, const char *name, bool make)
{
	for (int i = 0; i < R->npending; i++)
		if (strcmp(R->pending[i]->name, name) == 0)
			return R->pending[i];
	if (!make || R->npending == 8)
		return NULL;
	TcVar *v = tc_var_new(R->a, R->k, TC_VAR_LOOP, name, TC_DT_I32,
			      (TcLoc){ 0 });
	R->pending[R->npending++] = v;
	return v;
}

static TcVar *
name_ref(Reader *R)
{
	Tok at = R->tok;
	const char *name = ident(R);
	TcVar *v = lookup(R, name);
	if (!v && R->in_plan)
		v = pending_var(R, name, true);
	if (!v)
		error_at(R, &at, "'%s' is not declared here", name);
	return v;
}

static TcDtype
dtype_word(const Tok *t)
{
	if (t->kind != TOK_IDENT || t->len >= 16)
		return TC_DT_NONE;
	char buf[16];
	memcpy(buf, t->p, (size_t)t->len);
	buf[t->len] = '\0';
	return tc_dtype_from_name(buf);
}

static TcDtype
dtype(Reader *R)
{
	TcDtype t = dtype_word(&R->tok);
	if (t == TC_DT_NONE)
		error_at(R, &R->tok, "expected a dtype, found %s",
			 tok_text(R, &R->tok));
	lex(R);
	return t;
}

/* --- Expressions ------------------------------------------------------------- */

static TcExpr *expr_prec(Reader *R, int min_prec);

static TcExpr *
expr(Reader *R)
{
	return expr_prec(R, 0);
}

static TcBinop
binop_of(const Tok *t)
{
	if (t->kind != TOK_PUNCT)
		return TC_OP_COUNT;
	for (int op = 0; op < TC_OP_COUNT; op++) {
		const char *s = tc_binop_name(op);
		if ((size_t)t->len == strlen(s) && memcmp(t->p, s, strlen(s)) == 0)
			return op;
	}
	return TC_OP_COUNT;
}

/* NAME, NAME[i]..., FUNC(args), a literal, (dtype)x, -x, (e). */
static TcExpr *
primary(Reader *R)
{
	Tok at = R->tok;
	TcLoc none = { 0 };
	if (at.kind == TOK_INT) {
		lex(R);
		TcExpr *e = tc_expr_int(R->a, at.ival, none);
		e->dtype = at.dtype;
		return e;
	}
	if (at.kind == TOK_FLOAT) {
		lex(R);
		return tc_expr_float(R->a, at.fval, at.dtype, none);
	}
	if (is_punct(&at, "(")) {
		Tok next = peek(R);
		TcDtype cast = dtype_word(&next);
		lex(R);
		if (cast != TC_DT_NONE) {
			lex(R);
			expect(R, ")");
			TcExpr *arg = expr_prec(R, 14);
			TcExpr *e = tc_expr_new(R->a, TC_EX_CAST, cast, none);
			e->u.cast.arg = arg;
			return e;
		}
		TcExpr *e = expr(R);
		expect(R, ")");
		return e;
	}
	if (at.kind == TOK_PUNCT) {
		TcUnop op = is_punct(&at, "-") ? TC_UOP_NEG :
			    is_punct(&at, "!") ? TC_UOP_NOT :
			    is_punct(&at, "~") ? TC_UOP_BNOT : TC_UOP_COUNT;
		if (op == TC_UOP_COUNT)
			error_at(R, &at, "expected an expression, found %s",
				 tok_text(R, &at));
		lex(R);
		return tc_expr_unary(R->a, op, expr_prec(R, 14), none);
	}
	if (at.kind != TOK_IDENT)
		error_at(R, &at, "expected an expression, found %s",
			 tok_text(R, &at));
	/* inf, inff, nan, nanf */
	static const struct { const char *w; double v; TcDtype t; } lits[] = {
		{ "inf", INFINITY, TC_DT_F64 }, { "inff", INFINITY, TC_DT_F32 },
		{ "nan", NAN, TC_DT_F64 }, { "nanf", NAN, TC_DT_F32 },
	};
	const char *name = tc_strndup(R->a, at.p, (size_t)at.len);
	lex(R);
	if (strcmp(name, "device") == 0 && accept(R, ".")) {
		/* `device.sms`: the SMs of the device a launch runs on. */
		Tok attr = R->tok;
		if (strcmp(ident(R), "sms") != 0)
			error_at(R, &attr, "expected 'sms' after 'device.'");
		return tc_expr_new(R->a, TC_EX_SMS, TC_DT_I32, none);
	}
	if (is_punct(&R->tok, "(")) {
		TcFunc fn = tc_func_from_name(name);
		if (fn == TC_FN_COUNT)
			error_at(R, &at, "'%s' is not a function", name);
		lex(R);
		TcExpr *args[8];
		int n = 0;
		if (!is_punct(&R->tok, ")")) {
			do {
				if (n == 8)
					error_at(R, &R->tok, "too many arguments");
				args[n++] = expr(R);
			} while (accept(R, ","));
		}
		expect(R, ")");
		if (n != tc_func_arity(fn))
			error_at(R, &at, "%s takes %d arguments, not %d", name,
				 tc_func_arity(fn), n);
		TcExpr *e = tc_expr_new(R->a, TC_EX_CALL, tc_func_result_type(fn),
					none);
		e->u.call.fn = fn;
		e->u.call.nargs = n;
		e->u.call.args = tc_alloc(R->a, (size_t)n * sizeof *args);
		memcpy(e->u.call.args, args, (size_t)n * sizeof *args);
		return e;
	}
	TcVar *v = lookup(R, name);
	if (!v && R->in_plan && dtype_word(&R->tok) == TC_DT_NONE &&
	    strcmp(name, "inf") && strcmp(name, "nan") && strcmp(name, "inff") &&
	    strcmp(name, "nanf"))
		v = pending_var(R, name, true);
	if (!v) {
		for (size_t i = 0; i < sizeof lits / sizeof *lits; i++)
			if (strcmp(name, lits[i].w) == 0)
				return tc_expr_float(R->a, lits[i].v, lits[i].t, none);
		error_at(R, &at, "'%s' is not declared here", name);
	}
	if (v->kind == TC_VAR_TENSOR || v->kind == TC_VAR_BUFFER) {
		TcExpr *e = tc_expr_new(R->a, TC_EX_LOAD, v->dtype, none);
		e->u.load.var = v;
		for (int i = 0; i < v->rank; i++) {
			expect(R, "[");
			e->u.load.idx[i] = expr(R);
			expect(R, "]");
		}
		return e;
	}
	return tc_expr_var(R->a, v, none);
}

/* Binary operators by precedence climbing; `?:` at the printer's
 * PREC_SELECT (3), right associative. */
static TcExpr *
expr_prec(Reader *R, int min_prec)
{
	/* The tree's depth, bounded as the C front end bounds it: the
	 * reading's recursion plus the operators chained at this level. */
	if (++R->nest > TC_MAX_NESTING)
		error_at(R, &R->tok, "expression nested more than %d deep",
			 TC_MAX_NESTING);
	int chain = 0;
	TcExpr *l = primary(R);
	for (;; chain++) {
		if (R->nest + chain > TC_MAX_NESTING)
			error_at(R, &R->tok, "expression nested more than %d "
				 "deep", TC_MAX_NESTING);
		if (is_punct(&R->tok, "?") && min_prec <= 3) {
			lex(R);
			TcExpr *then = expr_prec(R, 4);
			expect(R, ":");
			TcExpr *els = expr_prec(R, 3);
			/* C's conversions, under which two branches of one
			 * floating type (f16 too) keep it. */
			TcDtype t = then->dtype == els->dtype &&
				    tc_dtype_is_float(then->dtype) ? then->dtype :
				    tc_binop_type(TC_OP_ADD, then->dtype, els->dtype);
			TcExpr *e = tc_expr_new(R->a, TC_EX_SELECT, t,
						(TcLoc){ 0 });
			e->u.sel.cond = l;
			e->u.sel.then = then;
			e->u.sel.els = els;
			l = e;
			continue;
		}
		TcBinop op = binop_of(&R->tok);
		if (op == TC_OP_COUNT || tc_binop_prec(op) < min_prec) {
			R->nest--;
			return l;
		}
		/* `a < -1` never prints as `a <-1`, but `<-` ends a region. */
		lex(R);
		TcExpr *r = expr_prec(R, tc_binop_prec(op) + 1);
		l = tc_expr_binary(R->a, op, l, r, (TcLoc){ 0 });
	}
}

/* --- Regions ----------------------------------------------------------------- */

/* NAME (a whole buffer), or NAME[o, ...] dims (d, ...) [rows R]
 * [bounded (e, ...)] [masked M] [lower test (d, ...)]. */
static void
region(Reader *R, TcRegion *r)
{
	Tok at = R->tok;
	memset(r, 0, sizeof *r);
	r->var = name_ref(R);
	TcVar *v = r->var;
	if (v->kind != TC_VAR_TENSOR && v->kind != TC_VAR_BUFFER)
		error_at(R, &at, "'%s' is not a tensor or buffer", v->name);
	r->bounded = R->bounds;
	r->nonneg = v->rank >= 32 ? ~0u : (1u << v->rank) - 1;
	if (!is_punct(&R->tok, "[")) {
		if (v->kind != TC_VAR_BUFFER)
			error_at(R, &at, "a tensor operand needs its origin");
		r->whole = true;
		r->ndims = v->rank;
		for (int i = 0; i < v->rank; i++) {
			r->origin[i] = tc_expr_int(R->a, 0, (TcLoc){ 0 });
			r->dims[i] = i;
		}
		return;
	}
	lex(R);
	for (int i = 0; i < v->rank; i++) {
		if (i)
			expect(R, ",");
		r->origin[i] = expr(R);
	}
	expect(R, "]");
	expect(R, "dims");
	expect(R, "(");
	do {
		if (r->ndims == TC_MAX_RANK)
			error_at(R, &R->tok, "too many dims");
		Tok dt = R->tok;
		int d = small_int(R);
		if (d < 0 || d >= v->rank)
			error_at(R, &dt, "dim %d of '%s', which has rank %d", d,
				 v->name, v->rank);
		r->dims[r->ndims++] = d;
	} while (accept(R, ","));
	expect(R, ")");
	if (accept(R, "rows"))
		r->rows = name_ref(R);
	if (accept(R, "bounded")) {
		expect(R, "(");
		int n = 0;
		do {
			if (n == TC_MAX_RANK)
				error_at(R, &R->tok, "too many bounds");
			r->bound[n++] = expr(R);
		} while (accept(R, ","));
		expect(R, ")");
	}
	if (accept(R, "masked"))
		r->mask = name_ref(R);
	if (is_word(&R->tok, "lower")) {
		Tok lt = R->tok;
		lex(R);
		expect(R, "test");
		expect(R, "(");
		if (!R->bounds)
			error_at(R, &lt, "a lower test in a kernel without "
				 "'bounds marked'");
		do {
			Tok dt = R->tok;
			int d = small_int(R);
			if (d < 0 || d >= v->rank)
				error_at(R, &dt, "dim %d of '%s', which has rank %d",
					 d, v->name, v->rank);
			r->nonneg &= ~(1u << d);
		} while (accept(R, ","));
		expect(R, ")");
	}
}

/* --- Statements -------------------------------------------------------------- */

static TcStmt *stmt(Reader *R, TcStmt *block);
static TcStmt *body(Reader *R);

static TcStmt *
new_stmt(Reader *R, TcStmtKind kind)
{
	return tc_stmt_new(R->a, kind, (TcLoc){ R->kfile, 0, 0 });
}

/* The buffer schedule after a declaration: (layout ..., stages N, pad N,
 * swizzled [panels], smem +N, as stored, not stored, computed by its
 * gemm). */
static void
schedule(Reader *R, TcVar *v)
{
	if (!accept(R, "("))
		return;
	do {
		Tok at = R->tok;
		if (accept(R, "layout")) {
			bool matrix = false;
			if (accept(R, "smem")) {
				v->layout.kind = TC_LAYOUT_SMEM;
				continue;
			}
			if (accept(R, "mma"))
				v->layout.kind = TC_LAYOUT_MMA;
			else if (accept(R, "mfma"))
				v->layout.kind = TC_LAYOUT_MFMA;
			else if (accept(R, "wgmma"))
				v->layout.kind = TC_LAYOUT_WGMMA;
			else if (accept(R, "blocked"))
				v->layout.kind = TC_LAYOUT_BLOCKED;
			else
				error_at(R, &R->tok, "unknown layout %s",
					 tok_text(R, &R->tok));
			matrix = tc_layout_is_matrix(v->layout.kind);
			for (int d = 0; d < v->rank && d < 2; d++) {
				TcDist *t = &v->layout.dim[d];
				expect(R, "[");
				expect(R, "class");
				t->id = small_int(R);
				t->kind = v->layout.kind;
				t->extent = (int)tc_var_extent(v, d);
				if (accept(R, "cols"))
					t->axis = 1;
				else
					expect(R, "rows");
				t->count = x_count(R);
				expect(R, ",");
				if (matrix) {
					by(R, &v->layout.warps_m,
					   &v->layout.warps_n);
					if (!accept(R, "warpgroups"))
						expect(R, "warps");
					expect(R, ",");
					t->tiles = small_int(R);
					if (!accept(R, "tile"))
						expect(R, "tiles");
				} else {
					by(R, &t->tr, &t->tc);
					expect(R, "threads");
					expect(R, ",");
					expect(R, "vec");
					t->vec = small_int(R);
				}
				expect(R, "]");
			}
		} else if (accept(R, "stages")) {
			v->stages = small_int(R);
		} else if (accept(R, "pad")) {
			v->pad = small_int(R);
		} else if (accept(R, "swizzled")) {
			v->swizzle = true;
			v->panels = accept(R, "panels");
			if (accept(R, "for")) {
				expect(R, "columns");
				expect(R, ",");
				v->swizzle_rows = small_int(R);
				expect(R, "rows");
				expect(R, "a");
				expect(R, "group");
			}
		} else if (accept(R, "smem")) {
			expect(R, "+");
			v->smem_offset = integer(R);
		} else if (accept(R, "as")) {
			expect(R, "stored");
			v->stored = true;
		} else if (accept(R, "not")) {
			expect(R, "stored");
			v->unstored = true;
		} else if (accept(R, "computed")) {
			expect(R, "by");
			expect(R, "its");
			expect(R, "gemm");
			v->computed = v->folded = true;
		} else {
			error_at(R, &at, "unknown schedule field %s",
				 tok_text(R, &at));
		}
	} while (accept(R, ","));
	expect(R, ")");
}

/* `SCOPE DTYPE NAME[e]... (schedule)` or `DTYPE NAME [= e]`. */
static TcStmt *
decl(Reader *R)
{
	TcScope scope = TC_SCOPE_NONE;
	for (int s = 1; s < TC_SCOPE_COUNT; s++)
		if (is_word(&R->tok, tc_scope_name(s)))
			scope = s;
	if (scope)
		lex(R);
	TcDtype t = dtype(R);
	Tok at = R->tok;
	const char *name = ident(R);
	TcStmt *s = new_stmt(R, TC_ST_DECL);
	if (R->main_hi > R->main_lo) {
		/* A main loop declares the nest's own local again. */
		TcVar *v = NULL;
		for (int i = R->main_lo; i < R->main_hi; i++)
			if (strcmp(R->scope.vars[i]->name, name) == 0)
				v = R->scope.vars[i];
		if (!v || scope || v->kind != TC_VAR_LOCAL || v->dtype != t)
			error_at(R, &at, "a main loop declares '%s', which its "
				 "nest does not", name);
		s->u.decl.var = v;
		if (accept(R, "="))
			s->u.decl.init = expr(R);
		declare(R, v);
		s->loc = loc_comment(R);
		return s;
	}
	TcVar *v = tc_var_new(R->a, R->k, scope ? TC_VAR_BUFFER : TC_VAR_LOCAL,
			      name, t, (TcLoc){ 0 });
	s->u.decl.var = v;
	if (scope) {
		v->scope = scope;
		v->stages = 1;
		v->smem_offset = -1;
		while (is_punct(&R->tok, "[")) {
			if (v->rank == TC_MAX_RANK)
				error_at(R, &R->tok, "too many dims");
			lex(R);
			v->shape[v->rank++] = expr(R);
			expect(R, "]");
		}
		if (v->rank == 0)
			error_at(R, &R->tok, "a buffer needs a shape");
		schedule(R, v);
	} else if (accept(R, "=")) {
		s->u.decl.init = expr(R);
	}
	declare(R, v);
	s->loc = loc_comment(R);
	v->loc = s->loc;
	return s;
}

static TcThreadMap
thread_map(Reader *R)
{
	if (accept(R, "spread")) {
		if (accept(R, "over")) {
			expect(R, "peers");
			return TC_THREADS_PEERS;
		}
		return TC_THREADS_SPREAD;
	}
	if (accept(R, "serial")) {
		expect(R, "in");
		expect(R, "thread");
		return TC_THREADS_SERIAL;
	}
	return TC_THREADS_NONE;
}

/* `for|parallel|pipelined V in B .. E [step S][, stages S[, async copies
 * N [in gemm]][, barriers +N]] [over F dim D][, rows in vectors of N
 * where ROW_IN|true[, columns while COL_IN]] [THREADS] {` */
static TcStmt *
loop(Reader *R, TcLoopKind kind)
{
	TcStmt *s = new_stmt(R, TC_ST_FOR);
	s->u.loop.kind = kind;
	lex(R);
	const char *name = ident(R);
	expect(R, "in");
	s->u.loop.begin = expr(R);
	expect(R, "..");
	s->u.loop.end = expr(R);
	s->u.loop.step = accept(R, "step") ? expr(R)
					   : tc_expr_int(R->a, 1, (TcLoc){ 0 });
	if (kind == TC_LOOP_PIPELINED) {
		expect(R, ",");
		expect(R, "stages");
		s->u.loop.stages = expr(R);
		while (accept(R, ",")) {
			if (accept(R, "async")) {
				expect(R, "copies");
				s->u.loop.async_copies = small_int(R);
				if (accept(R, "in")) {
					expect(R, "gemm");
					/* The body's gemm, found below. */
					s->u.loop.copies_in_gemm = s;
				}
			} else {
				expect(R, "barriers");
				expect(R, "+");
				s->u.loop.barriers = integer(R);
			}
		}
	}
	if (accept(R, "over")) {
		s->u.loop.anchor = name_ref(R);
		expect(R, "dim");
		s->u.loop.anchor_dim = small_int(R);
	}
	/* The loop's variable is in scope from here: the column test of a
	 * row-vector loop names it. */
	TcVar *v = pending_var(R, name, false);
	if (v) {
		/* The loop a copy plan named; no later plan names it. */
		for (int i = 0; i < R->npending; i++)
			if (R->pending[i] == v)
				R->pending[i] = R->pending[--R->npending];
	} else {
		v = tc_var_new(R->a, R->k, TC_VAR_LOOP, name, TC_DT_I32,
			       (TcLoc){ 0 });
	}
	s->u.loop.var = v;
	int mark = R->scope.len;
	declare(R, v);
	if (accept(R, ",")) {
		expect(R, "rows");
		expect(R, "in");
		expect(R, "vectors");
		expect(R, "of");
		s->u.loop.row_vec = small_int(R);
		expect(R, "where");
		if (!accept(R, "true"))
			s->u.loop.row_in = expr(R);
		if (accept(R, ",")) {
			expect(R, "columns");
			expect(R, "while");
			s->u.loop.col_in = expr(R);
		}
	}
	s->u.loop.threads = thread_map(R);
	bool in = accept(R, "in");
	if (in && s->u.loop.threads == TC_THREADS_SPREAD && accept(R, "runs")) {
		expect(R, "of");
		s->u.loop.run = small_int(R);
		in = accept(R, "in");
	}
	if (in) {
		expect(R, "half");
		expect(R, "pairs");
		s->u.loop.pairs = true;
	}
	s->u.loop.transpose = accept(R, "transposed");
	expect(R, "{");
	s->loc = loc_comment(R);
	v->loc = s->loc;
	s->u.loop.body = body(R);
	R->scope.len = mark;
	end_of_line(R);
	if (s->u.loop.copies_in_gemm) {
		/* The one gemm of the body with both operands in shared
		 * memory (the pipeline pass's choice). */
		s->u.loop.copies_in_gemm = NULL;
		TcVec *b = &s->u.loop.body->u.block.body;
		for (int i = 0; i < b->len; i++) {
			TcStmt *g = b->items[i];
			if (g->kind == TC_ST_GEMM)
				s->u.loop.copies_in_gemm = g;
		}
		if (!s->u.loop.copies_in_gemm)
			error_at(R, &R->tok, "'async copies in gemm' on a loop "
				 "without a gemm");
	}
	return s;
}

/* `{` then-body `} [else {` else-body `}]` of an if or a pipe_select
 * whose head has been read; s takes the location of the `{` line, and
 * *els stays NULL without an else. */
static void
branches(Reader *R, TcStmt *s, TcStmt **then, TcStmt **els)
{
	expect(R, "{");
	s->loc = loc_comment(R);
	int mark = R->scope.len;
	*then = body(R);
	R->scope.len = mark;
	if (accept(R, "else")) {
		expect(R, "{");
		end_of_line(R);
		*els = body(R);
		R->scope.len = mark;
	}
	end_of_line(R);
}

/* `if C[, box] {` ... `}` [` else {` ... `}`] */
static TcStmt *
if_stmt(Reader *R)
{
	TcStmt *s = new_stmt(R, TC_ST_IF);
	lex(R);
	s->u.cond.cond = expr(R);
	/* After the condition, where no name can go: a program's local may
	 * be called box. */
	if (accept(R, ",")) {
		expect(R, "box");
		s->u.cond.box = true;
	}
	branches(R, s, &s->u.cond.then, &s->u.cond.els);
	return s;
}

static TcCopyLower
copy_lower(Reader *R)
{
	static const TcCopyLower all[] = { TC_COPY_VECTOR, TC_COPY_STRIDED,
					   TC_COPY_REGISTER, TC_COPY_GENERIC,
					   TC_COPY_TMA_STORE, TC_COPY_TMA };
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		if (accept(R, tc_copy_lower_name(all[i])))
			return all[i];
	error_at(R, &R->tok, "expected a copy lowering, found %s",
		 tok_text(R, &R->tok));
}

static TcTensorMap *
tmap_ref(Reader *R)
{
	Tok at = R->tok;
	const char *name = ident(R);
	for (int i = 0; i < R->k->tmaps.len; i++) {
		TcTensorMap *m = R->k->tmaps.items[i];
		if (strcmp(m->name, name) == 0)
			return m;
	}
	error_at(R, &at, "'%s' is not a tensor map of the kernel", name);
}

/* `copy|async_copy DST [stage E] <- SRC[, LOWER[ aligned_launch]][ streamed][ PLAN iteration E]
 * [ via MAP on BARS]`, or for a TMA store `..., tma_store via MAP at
 * smem +N (B boxes)[, barriers of threads 0 .. T]` */
static void
copy_stmt(Reader *R, TcStmt *s)
{
	region(R, &s->u.copy.dst);
	if (accept(R, "stage"))
		s->u.copy.stage = expr(R);
	expect(R, "<-");
	region(R, &s->u.copy.src);
	if (accept(R, ","))
		s->u.copy.lower = copy_lower(R);
	if (accept(R, "aligned_launch"))
		s->u.copy.launch_aligned = true;
	if (accept(R, "streamed"))
		s->u.copy.stream = true;
	if (accept(R, "first")) {
		expect(R, "[");
		for (int i = 0; i < s->u.copy.src.var->rank; i++) {
			if (i)
				expect(R, ",");
			s->u.copy.first[i] = expr(R);
		}
		expect(R, "]");
		expect(R, "advance");
		s->u.copy.advance = expr(R);
	}
	if (R->tok.kind == TOK_IDENT && !is_word(&R->tok, "via")) {
		s->u.copy.plan = name_ref(R);
		expect(R, "iteration");
		s->u.copy.iter = expr(R);
	}
	if (s->u.copy.lower == TC_COPY_TMA_STORE) {
		expect(R, "via");
		s->u.copy.tmap = tmap_ref(R);
		expect(R, "at");
		expect(R, "smem");
		expect(R, "+");
		s->u.copy.staging = integer(R);
		expect(R, "(");
		s->u.copy.staged = small_int(R);
		if (!accept(R, "box"))
			expect(R, "boxes");
		expect(R, ")");
		if (accept(R, ",")) {
			expect(R, "barriers");
			expect(R, "of");
			expect(R, "threads");
			if (integer(R) != 0)
				error_at(R, &R->tok, "barriers of threads from 0");
			expect(R, "..");
			s->u.copy.sync = integer(R);
		}
		return;
	}
	if (accept(R, "via")) {
		s->u.copy.tmap = tmap_ref(R);
		expect(R, "on");
		s->u.copy.bars = name_ref(R);
	}
}

static TcVar *
handle(Reader *R)
{
	const char *name = ident(R);
	TcVar *v = tc_var_new(R->a, R->k, TC_VAR_HANDLE, name, TC_DT_I32,
			      (TcLoc){ 0 });
	declare(R, v);
	return v;
}

/* `copy_plan H = DST <- SRC first [e, ...] advance E[ via MAP]` */
static void
plan_stmt(Reader *R, TcStmt *s)
{
	s->u.plan.var = handle(R);
	expect(R, "=");
	TcStmt *c = new_stmt(R, TC_ST_COPY);
	c->u.copy.lower = TC_COPY_STRIDED;
	R->in_plan = true;
	region(R, &c->u.copy.dst);
	expect(R, "<-");
	region(R, &c->u.copy.src);
	expect(R, "first");
	expect(R, "[");
	for (int i = 0; i < c->u.copy.src.var->rank; i++) {
		if (i)
			expect(R, ",");
		c->u.copy.first[i] = expr(R);
	}
	expect(R, "]");
	expect(R, "advance");
	c->u.copy.advance = expr(R);
	R->in_plan = false;
	s->u.plan.copy = c;
	if (accept(R, "via"))
		s->u.plan.tmap = tmap_ref(R);
}

/* `gemm C += A[^T] * B[^T][ by wgmma nN[ promoted]][, N in flight]
 * [, on KIND HELPER MR x NR[, b packed kc KC]][, as loops][, issuing {]` */
static TcStmt *
gemm_stmt(Reader *R, TcStmt *s)
{
	region(R, &s->u.gemm.c);
	expect(R, "+=");
	TcDtype round = TC_DT_NONE;
	Tok round_at = R->tok;
	if (accept(R, "(")) {
		round = dtype(R);
		expect(R, ")");
	}
	region(R, &s->u.gemm.a);
	if (accept(R, "^")) {
		expect(R, "T");
		s->u.gemm.trans_a = true;
	}
	expect(R, "*");
	region(R, &s->u.gemm.b);
	if (round != TC_DT_NONE) {
		if (!s->u.gemm.b.var || s->u.gemm.b.var->dtype != round)
			error_at(R, &round_at, "a gemm's A rounds to B's type");
		s->u.gemm.round_a = true;
	}
	if (accept(R, "^")) {
		expect(R, "T");
		s->u.gemm.trans_b = true;
	}
	if (accept(R, "by")) {
		expect(R, "wgmma");
		Tok at = R->tok;
		const char *n = ident(R);
		char *end;
		long v = n[0] == 'n' ? strtol(n + 1, &end, 10) : 0;
		if (n[0] != 'n' || *end || v <= 0 || v > 256)
			error_at(R, &at, "expected 'nN' (the wgmma's n)");
		s->u.gemm.wgmma_n = (int)v;
		s->u.gemm.wgmma_promote = accept(R, "promoted");
	}
	while (accept(R, ",")) {
		TcCpuGemm *g = &s->u.gemm.cpu;
		if (accept(R, "as")) {
			expect(R, "loops");
			g->kind = TC_CPU_GEMM_LOOPS;
		} else if (accept(R, "on")) {
			Tok at = R->tok;
			const char *kind = ident(R);
			g->kind = TC_CPU_GEMM_NONE;
			for (int i = TC_CPU_GEMM_F32; i <= TC_CPU_GEMM_AVX2_I8; i++)
				if (strcmp(kind, tc_cpu_gemm_name(i)) == 0)
					g->kind = i;
			if (g->kind == TC_CPU_GEMM_NONE)
				error_at(R, &at, "unknown gemm kind '%s'", kind);
			g->helper = ident(R);
			g->mr = small_int(R);
			expect(R, "x");
			g->nr = small_int(R);
		} else if (accept(R, "b")) {
			expect(R, "packed");
			expect(R, "kc");
			s->u.gemm.cpu.pack_b = true;
			s->u.gemm.cpu.kc = small_int(R);
		} else if (R->tok.kind == TOK_IDENT && next_is(R, "from")) {
			/* `B from { loop }` (fuse_b.c): B's element loop. */
			Tok at = R->tok;
			const char *name = ident(R);
			expect(R, "from");
			expect(R, "{");
			if (!s->u.gemm.b.var || strcmp(name, s->u.gemm.b.var->name) != 0)
				error_at(R, &at, "'%s from' names another buffer than "
					 "the gemm's B", name);
			s->loc = loc_comment(R);
			TcStmt *blk = body(R);
			if (blk->u.block.body.len != 1)
				error_at(R, &at, "'%s from' holds one loop", name);
			s->u.gemm.b_from = blk->u.block.body.items[0];
			return s;
		} else if (accept(R, "issuing")) {
			expect(R, "{");
			s->loc = loc_comment(R);
			s->u.gemm.issue = body(R);
			return s;
		} else {
			s->u.gemm.wgmma_pending = small_int(R);
			expect(R, "in");
			expect(R, "flight");
		}
	}
	return NULL;
}

static TcReduceOp
reduce_op(Reader *R)
{
	for (int op = 0; op < TC_RED_COUNT; op++)
		if (accept(R, tc_reduce_name(op)))
			return op;
	error_at(R, &R->tok, "expected a reduction, found %s",
		 tok_text(R, &R->tok));
}

/* `reduce OP DST <- SRC, dim D[, accumulate]` and `reduce argmax|argmin|
 * topk DST, INDEX <- SRC, dim D`. */
static void
reduce_stmt(Reader *R, TcStmt *s)
{
	bool topk = is_word(&R->tok, "topk"), argmin = is_word(&R->tok, "argmin");
	if (topk || argmin || is_word(&R->tok, "argmax")) {
		lex(R);
		s->kind = TC_ST_ARG_REDUCE;
		s->u.arg_reduce.topk = topk;
		s->u.arg_reduce.min = argmin;
		region(R, &s->u.arg_reduce.dst);
		expect(R, ",");
		region(R, &s->u.arg_reduce.index);
		expect(R, "<-");
		region(R, &s->u.arg_reduce.src);
		expect(R, ",");
		expect(R, "dim");
		s->u.arg_reduce.dim = small_int(R);
		return;
	}
	s->u.reduce.op = reduce_op(R);
	region(R, &s->u.reduce.dst);
	expect(R, "<-");
	region(R, &s->u.reduce.src);
	expect(R, ",");
	expect(R, "dim");
	s->u.reduce.dim = small_int(R);
	if (accept(R, ",")) {
		expect(R, "accumulate");
		s->u.reduce.accumulate = true;
	}
}

/* `stage_bar_arrive|stage_bar_wait H full|empty E [parity E]` */
static void
bar_stmt(Reader *R, TcStmt *s)
{
	s->u.bar.bars = name_ref(R);
	if (accept(R, "full"))
		s->u.bar.full = true;
	else
		expect(R, "empty");
	s->u.bar.stage = expr(R);
	if (accept(R, "parity"))
		s->u.bar.parity = expr(R);
}

/* Whether the line starting at the current token is an assignment:
 * NAME = ..., NAME[...] = ... (a name that may be a statement word). */
static bool
starts_assign(Reader *R)
{
	if (R->tok.kind != TOK_IDENT)
		return false;
	Tok next = peek(R);
	return is_punct(&next, "=") || is_punct(&next, "[");
}

/* The statement lines that end with `// L:C` after their fields. */
static TcStmt *
simple_stmt(Reader *R, const char *word)
{
	static const struct { const char *w; TcStmtKind k; } words[] = {
		{ "copy", TC_ST_COPY }, { "async_copy", TC_ST_ASYNC_COPY },
		{ "commit_group", TC_ST_COMMIT_GROUP },
		{ "wait_group", TC_ST_WAIT_GROUP },
		{ "wgmma_wait", TC_ST_WGMMA_WAIT },
		{ "stage_view", TC_ST_STAGE_VIEW },
		{ "copy_plan", TC_ST_COPY_PLAN },
		{ "stage_bar_init", TC_ST_STAGE_BAR_INIT },
		{ "stage_bar_arrive", TC_ST_STAGE_BAR_ARRIVE },
		{ "stage_bar_wait", TC_ST_STAGE_BAR_WAIT },
		{ "atomic_add", TC_ST_ATOMIC_ADD }, { "gemm", TC_ST_GEMM },
		{ "fill", TC_ST_FILL }, { "reduce", TC_ST_REDUCE },
		{ "barrier", TC_ST_BARRIER }, { "prefetch", TC_ST_PREFETCH },
	};
	TcStmt *s = NULL;
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (strcmp(word, words[i].w) == 0)
			s = new_stmt(R, words[i].k);
	if (!s)
		return NULL;
	lex(R);
	switch (s->kind) {
	case TC_ST_COPY:
	case TC_ST_ASYNC_COPY:
		copy_stmt(R, s);
		break;
	case TC_ST_WAIT_GROUP:
		s->u.wait.pending = small_int(R);
		break;
	case TC_ST_WGMMA_WAIT:
		s->u.wait.pending = small_int(R);
		s->u.wait.acc = name_ref(R);
		break;
	case TC_ST_STAGE_VIEW: {
		const char *name = ident(R);
		expect(R, "=");
		TcVar *of = name_ref(R);
		if (of->kind != TC_VAR_BUFFER)
			error_at(R, &R->tok, "'%s' is not a buffer", of->name);
		expect(R, "stage");
		s->u.view.stage = expr(R);
		/* The view is the staged buffer, one stage of it. */
		TcVar *v = tc_var_new(R->a, R->k, TC_VAR_BUFFER, name, of->dtype,
				      (TcLoc){ 0 });
		int index = v->index;
		*v = *of;
		v->index = index;
		v->name = name;
		v->loc = (TcLoc){ 0 };
		v->stages = 1;
		v->view_of = of;
		s->u.view.var = v;
		s->u.view.of = of;
		declare(R, v);
		break;
	}
	case TC_ST_COPY_PLAN:
		plan_stmt(R, s);
		break;
	case TC_ST_STAGE_BAR_INIT:
		s->u.bars.var = handle(R);
		expect(R, ",");
		expect(R, "stages");
		s->u.bars.stages = small_int(R);
		expect(R, ",");
		expect(R, "full");
		expect(R, "arrivals");
		s->u.bars.full_arrivals = integer(R);
		expect(R, ",");
		expect(R, "empty");
		expect(R, "arrivals");
		s->u.bars.empty_arrivals = integer(R);
		expect(R, ",");
		expect(R, "smem");
		expect(R, "+");
		s->u.bars.offset = integer(R);
		/* Every full arrival a thread's after its cp.async copies,
		 * unless the line says otherwise. */
		s->u.bars.copiers = s->u.bars.full_arrivals;
		if (accept(R, ",")) {
			if (accept(R, "TMA")) {
				expect(R, "'");
				expect(R, "s");
				expect(R, "only");
				s->u.bars.copiers = 0;
			} else {
				s->u.bars.copiers = integer(R);
				expect(R, "copying");
				expect(R, "threads");
			}
		}
		break;
	case TC_ST_STAGE_BAR_ARRIVE:
	case TC_ST_STAGE_BAR_WAIT:
		bar_stmt(R, s);
		break;
	case TC_ST_ATOMIC_ADD:
		region(R, &s->u.copy.dst);
		expect(R, "+=");
		region(R, &s->u.copy.src);
		if (accept(R, ","))
			s->u.copy.lower = copy_lower(R);
		break;
	case TC_ST_GEMM:
		if (gemm_stmt(R, s))
			return s; /* its issue block ended the line */
		break;
	case TC_ST_FILL:
		region(R, &s->u.fill.dst);
		expect(R, ",");
		s->u.fill.value = expr(R);
		break;
	case TC_ST_REDUCE:
		reduce_stmt(R, s);
		break;
	case TC_ST_PREFETCH:
		region(R, &s->u.copy.src);
		expect(R, "for");
		region(R, &s->u.copy.dst);
		break;
	case TC_ST_BARRIER:
		if (accept(R, "of")) {
			expect(R, "threads");
			if (integer(R) != 0)
				error_at(R, &R->tok, "a barrier's threads start "
					 "at 0");
			expect(R, "..");
			s->u.barrier.threads = integer(R);
		}
		break;
	default:
		break;
	}
	s->loc = loc_comment(R);
	return s;
}

/* `pipe_select aligned(H, ...)[ aligned_launch] {` fast `} else {` fallback `}` */
static TcStmt *
select_stmt(Reader *R)
{
	TcStmt *s = new_stmt(R, TC_ST_PIPE_SELECT);
	lex(R);
	expect(R, "aligned");
	expect(R, "(");
	if (!is_punct(&R->tok, ")")) {
		do
			tc_vec_push(R->a, &s->u.select.plans, name_ref(R));
		while (accept(R, ","));
	}
	expect(R, ")");
	if (accept(R, "aligned_launch"))
		s->u.select.launch_aligned = true;
	branches(R, s, &s->u.select.fast, &s->u.select.fallback);
	if (!s->u.select.fallback) /* none printed: an empty one */
		s->u.select.fallback = new_stmt(R, TC_ST_BLOCK);
	return s;
}

/* `tiles from the block's index in steps of the grid {` body `}` */
static TcStmt *
tiles_stmt(Reader *R)
{
	TcStmt *s = new_stmt(R, TC_ST_TILES);
	lex(R);
	static const char *const words[] = { "from", "the", "block", "'", "s",
					     "index", "in", "steps", "of",
					     "the", "grid" };
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		expect(R, words[i]);
	expect(R, "{");
	s->loc = loc_comment(R);
	s->u.tiles.body = body(R);
	end_of_line(R);
	return s;
}

/* `roles producer threads T .. E (one thread, R registers) {` producer
 * `} consumer threads 0 .. T (R registers, B block[s] per SM) {`
 * consumer `}` */
static TcStmt *
roles_stmt(Reader *R)
{
	TcStmt *s = new_stmt(R, TC_ST_ROLES);
	lex(R);
	expect(R, "producer");
	expect(R, "threads");
	s->u.roles.threads = integer(R);
	expect(R, "..");
	Tok at = R->tok;
	long long end = integer(R);
	if (end <= s->u.roles.threads)
		error_at(R, &at, "no producer threads");
	s->u.roles.producer_threads = end - s->u.roles.threads;
	expect(R, "(");
	expect(R, "one");
	expect(R, "thread");
	expect(R, ",");
	s->u.roles.producer_regs = small_int(R);
	expect(R, "registers");
	expect(R, ")");
	expect(R, "{");
	s->loc = loc_comment(R);
	int mark = R->scope.len;
	s->u.roles.producer = body(R);
	R->scope.len = mark;
	expect(R, "consumer");
	expect(R, "threads");
	at = R->tok;
	if (integer(R) != 0)
		error_at(R, &at, "the consumer threads start at 0");
	expect(R, "..");
	at = R->tok;
	if (integer(R) != s->u.roles.threads)
		error_at(R, &at, "the consumer threads end where the "
			 "producer's start");
	expect(R, "(");
	s->u.roles.consumer_regs = small_int(R);
	expect(R, "registers");
	expect(R, ",");
	s->u.roles.blocks = small_int(R);
	if (!accept(R, "block"))
		expect(R, "blocks");
	expect(R, "per");
	expect(R, "SM");
	expect(R, ")");
	expect(R, "{");
	end_of_line(R);
	s->u.roles.consumer = body(R);
	R->scope.len = mark;
	end_of_line(R);
	/* The kernel's launch bounds promise what its roles do. */
	R->k->producer_blocks = s->u.roles.blocks;
	return s;
}

/* --- Runs (kernel->fusions) --------------------------------------------------- */

static RunText *
run_at(Reader *R, int n)
{
	while (R->runs.len <= n)
		tc_vec_push(R->a, &R->runs, NULL);
	return R->runs.items[n];
}

/* The marks of a run's op after its `(`, to the `)`: `vector`, `partial
 * rows`, `partial cols`, `ends main loop`, `zero past main loop`,
 * `streamed`, `next block`, separated by commas. */
static void
op_marks(Reader *R, TcFuseOp *m)
{
	do {
		if (accept(R, "vector")) {
			m->vector = true;
		} else if (accept(R, "partial")) {
			if (accept(R, "rows")) {
				m->partial_rows = true;
			} else {
				expect(R, "cols");
				m->partial_cols = true;
			}
		} else if (accept(R, "ends")) {
			expect(R, "main");
			expect(R, "loop");
			m->ends_main = true;
		} else if (accept(R, "zero")) {
			expect(R, "past");
			expect(R, "main");
			expect(R, "loop");
			m->zero_past = true;
		} else if (accept(R, "streamed")) {
			m->streamed = true;
		} else if (accept(R, "next")) {
			expect(R, "block");
			m->next_block = true;
		} else {
			error_at(R, &R->tok, "expected a mark of a run's op, "
				 "found %s", tok_text(R, &R->tok));
		}
	} while (accept(R, ","));
	expect(R, ")");
}

/* Set op's marks from those read. */
static void
mark_op(TcFuseOp *op, const TcFuseOp *m)
{
	op->vector = m->vector;
	op->partial_rows = m->partial_rows;
	op->partial_cols = m->partial_cols;
	op->ends_main = m->ends_main;
	op->zero_past = m->zero_past;
	op->streamed = m->streamed;
	op->next_block = m->next_block;
}

/* `run N of M statements over R x C: ops[; recomputes B of run F]...
 * [; registers V, ...][; lanes V, ...][; edges marked][; vector loop]
 * [; next block at [R, C] by N][; dead]` */
static void
run_line(Reader *R, TcStmt *block)
{
	Tok at = R->tok;
	lex(R);
	int n = small_int(R);
	if (n < 0 || n > 4096)
		error_at(R, &at, "run number out of range");
	if (is_word(&R->tok, "main")) {
		RunText *rt = run_at(R, n);
		if (!rt || rt->F->block != block || rt->nmain == 16)
			error_at(R, &at, "a main loop of run %d before its run", n);
		lex(R);
		expect(R, "loop");
		expect(R, ":");
		expect(R, "map");
		int m = rt->nmain++;
		if (accept(R, "at")) {
			rt->main_line[m] = small_int(R);
			expect(R, ":");
			rt->main_col[m] = small_int(R);
		}
		if (accept(R, ":")) {
			expect(R, "nothing");
			rt->main_empty[m] = true;
			end_of_line(R);
			return;
		}
		/* The body names the nest's vars, declared later: come back
		 * to it once the run's statements are read. */
		expect(R, "{");
		end_of_line(R);
		rt->main_at[m] = R->tok;
		rt->main_at[m].p = R->tok.p;
		int depth = 1;
		while (depth > 0) {
			if (R->tok.kind == TOK_EOF)
				error_at(R, &at, "main loop without its '}'");
			if (is_punct(&R->tok, "{"))
				depth++;
			else if (is_punct(&R->tok, "}"))
				depth--;
			lex(R);
		}
		end_of_line(R);
		return;
	}
	if (run_at(R, n))
		error_at(R, &at, "run %d twice", n);
	RunText *rt = tc_alloc(R->a, sizeof *rt);
	TcFusion *F = tc_alloc(R->a, sizeof *F);
	rt->F = F;
	rt->index = n;
	R->runs.items[n] = rt;
	F->block = block;
	F->first = block->u.block.body.len;
	expect(R, "of");
	F->nstmts = small_int(R);
	expect(R, "statements");
	expect(R, "over");
	F->rows = integer(R);
	expect(R, "x");
	F->cols = integer(R);
	expect(R, ":");
	do {
		if (rt->nops == 64)
			error_at(R, &R->tok, "too many ops");
		int o = rt->nops++;
		if (accept(R, "again")) {
			if (o != F->nagain)
				error_at(R, &R->tok, "'again' after the run's own ops");
			F->nagain++;
		}
		if (accept(R, "load"))
			rt->kind[o] = TC_FUSE_LOAD;
		else if (accept(R, "store"))
			rt->kind[o] = TC_FUSE_STORE;
		else if (accept(R, "map"))
			rt->kind[o] = TC_FUSE_MAP;
		else if (accept(R, "reduce"))
			rt->kind[o] = TC_FUSE_REDUCE;
		else
			error_at(R, &R->tok, "expected an op, found %s",
				 tok_text(R, &R->tok));
		if (rt->kind[o] != TC_FUSE_MAP)
			rt->buf[o] = ident(R);
		if (rt->kind[o] == TC_FUSE_REDUCE) {
			expect(R, "into");
			ident(R);
		}
		if (accept(R, "by")) {
			expect(R, "rows");
			rt->helper[o] = true;
		}
		if (accept(R, "("))
			op_marks(R, &rt->marks[o]);
		if (rt->kind[o] == TC_FUSE_MAP && accept(R, "at")) {
			rt->at_line[o] = small_int(R);
			expect(R, ":");
			rt->at_col[o] = small_int(R);
		}
	} while (accept(R, ","));
	while (accept(R, ";")) {
		if (accept(R, "recomputes")) {
			if (F->nrecomputed == TC_FUSE_MAX_AGAIN)
				error_at(R, &R->tok, "too many recomputed buffers");
			rt->again[F->nrecomputed] = ident(R);
			expect(R, "of");
			expect(R, "run");
			F->from[F->nrecomputed++] = small_int(R);
		} else if (accept(R, "edges")) {
			expect(R, "marked");
			F->edged = true;
		} else if (accept(R, "vector")) {
			expect(R, "loop");
			F->vec = true;
		} else if (accept(R, "next")) {
			expect(R, "block");
			expect(R, "at");
			expect(R, "[");
			F->next[0] = expr(R);
			expect(R, ",");
			F->next[1] = expr(R);
			expect(R, "]");
			expect(R, "by");
			Tok at_n = R->tok;
			F->next_elems = integer(R);
			if (F->next_elems <= 0)
				error_at(R, &at_n, "a prefetch of no elements");
		} else if (accept(R, "lanes")) {
			do {
				if (rt->nlanes == 64)
					error_at(R, &R->tok, "too many lanes");
				rt->lanes[rt->nlanes++] = ident(R);
			} while (accept(R, ","));
		} else if (accept(R, "registers")) {
			do {
				if (rt->nregs == 64)
					error_at(R, &R->tok, "too many registers");
				rt->regs[rt->nregs++] = ident(R);
			} while (accept(R, ","));
		} else {
			expect(R, "dead");
			F->dead = true;
		}
	}
	if (F->nstmts < 1 || F->nstmts != rt->nops - F->nagain)
		error_at(R, &at, "run %d: %d statements but %d ops", n, F->nstmts,
			 rt->nops - F->nagain);
	end_of_line(R);
}

/* A buffer named in a run line, in scope at the run's block. */
static const TcVar *
run_buffer(Reader *R, const char *name, const Tok *at)
{
	TcVar *v = lookup(R, name);
	if (!v || v->kind != TC_VAR_BUFFER)
		error_at(R, at, "'%s' is not a buffer in scope", name);
	return v;
}

/* The index space of a whole rank-1 or rank-2 buffer (cpu_fuse.c's). */
static void
op_space(TcFuseOp *op, const TcVar *v)
{
	long long d[2] = { 1, 1 };
	for (int i = 0; i < v->rank && i < 2; i++)
		if (!tc_expr_const(v->shape[i], &d[i]))
			d[i] = 0;
	op->rank = v->rank;
	op->rows = v->rank == 2 ? d[0] : 1;
	op->cols = d[v->rank - 1];
	op->ext[0] = v->rank == 2 ? v->shape[0] : NULL;
	op->ext[1] = v->shape[v->rank - 1];
}

/* A MAP's rows-buffers read: loads r[i] of rank-1 buffers of the rows'
 * extent at the row var, in the order the fuse pass meets them. */
static TcVisit
rowread_expr(void *ctx, const TcExpr *e)
{
	TcFuseOp *op = ctx;
	if (e->kind != TC_EX_LOAD)
		return TC_VISIT_INTO;
	const TcVar *v = e->u.load.var;
	long long n;
	if (v->kind == TC_VAR_BUFFER && v->rank == 1 && op->var[0] &&
	    e->u.load.idx[0]->kind == TC_EX_VAR &&
	    e->u.load.idx[0]->u.var == op->var[0] &&
	    tc_expr_const(v->shape[0], &n) && n == op->rows) {
		bool seen = false;
		for (int i = 0; i < op->nrowread; i++)
			seen |= op->rowread[i] == v;
		if (!seen && op->nrowread < 8)
			op->rowread[op->nrowread++] = v;
	}
	return TC_VISIT_OVER;
}

/* The op statement s stands for, as cpu_fuse.c's classify makes it. */
static void
describe_op(Reader *R, TcFuseOp *op, const TcStmt *s, TcFuseKind kind,
	    const Tok *at)
{
	*op = (TcFuseOp){ .s = s, .kind = kind };
	switch (kind) {
	case TC_FUSE_LOAD:
	case TC_FUSE_STORE: {
		bool load = kind == TC_FUSE_LOAD;
		if (s->kind != TC_ST_COPY ||
		    !(load ? s->u.copy.dst.whole : s->u.copy.src.whole))
			break;
		op->buf = load ? s->u.copy.dst.var : s->u.copy.src.var;
		op->reg = load ? &s->u.copy.src : &s->u.copy.dst;
		op_space(op, op->buf);
		return;
	}
	case TC_FUSE_REDUCE:
		if (s->kind != TC_ST_REDUCE)
			break;
		op->buf = s->u.reduce.src.var;
		op_space(op, op->buf);
		return;
	case TC_FUSE_MAP: {
		if (s->kind != TC_ST_FOR || s->u.loop.kind != TC_LOOP_PARALLEL)
			break;
		const TcStmt *loops[2] = { s, NULL };
		const TcVec *b = &s->u.loop.body->u.block.body;
		if (b->len == 1) {
			const TcStmt *only = b->items[0];
			if (only->kind == TC_ST_FOR &&
			    only->u.loop.kind == TC_LOOP_PARALLEL)
				loops[1] = only;
		}
		int rank = loops[1] ? 2 : 1;
		long long ext[2] = { 1, 1 };
		for (int d = 0; d < rank; d++)
			if (!tc_expr_const(loops[d]->u.loop.end, &ext[d]))
				ext[d] = 0;
		op->rank = rank;
		op->rows = rank == 2 ? ext[0] : 1;
		op->cols = ext[rank - 1];
		op->ext[0] = rank == 2 ? loops[0]->u.loop.end : NULL;
		op->ext[1] = loops[rank - 1]->u.loop.end;
		op->var[0] = rank == 2 ? loops[0]->u.loop.var : NULL;
		op->var[1] = loops[rank - 1]->u.loop.var;
		op->body = loops[rank - 1]->u.loop.body;
		TcVisitor vis = { .expr = rowread_expr, .ctx = op };
		tc_stmt_visit(op->body, &vis);
		return;
	}
	}
	error_at(R, at, "a run's %s op stands for a %s statement",
		 kind == TC_FUSE_MAP ? "map" : kind == TC_FUSE_REDUCE ? "reduce" :
		 kind == TC_FUSE_LOAD ? "load" : "store",
		 tc_stmtkind_name(s->kind));
}

/* The vars a statement tree declares, into the scope (a main loop's
 * names). */
static void
declare_inside(Reader *R, const TcStmt *s)
{
	if (!s)
		return;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			declare_inside(R, s->u.block.body.items[i]);
		break;
	case TC_ST_DECL:
		declare(R, s->u.decl.var);
		break;
	case TC_ST_FOR:
		declare(R, s->u.loop.var);
		declare_inside(R, s->u.loop.body);
		break;
	case TC_ST_IF:
		declare_inside(R, s->u.cond.then);
		declare_inside(R, s->u.cond.els);
		break;
	default:
		break;
	}
}

/* Once run rt's statements are read: its ops, registers and main loops. */
static void
finish_run(Reader *R, RunText *rt, const Tok *at)
{
	TcFusion *F = rt->F;
	const TcStmt *blk = F->block;
	if (F->first + F->nstmts > blk->u.block.body.len)
		error_at(R, at, "run %d: %d statements, but its block has %d "
			 "after it", rt->index, F->nstmts,
			 blk->u.block.body.len - F->first);
	F->n = rt->nops;
	F->ops = tc_alloc(R->a, (size_t)F->n * sizeof *F->ops);
	for (int r = 0; r < rt->nregs; r++)
		rt->reg_var[r] = run_buffer(R, rt->regs[r], at);
	/* Lanes name locals of the run's nests (or of the nests it redoes). */
	int lanes_mark = R->scope.len;
	for (int o = F->nagain; o < F->n; o++)
		declare_inside(R, blk->u.block.body.items[F->first + o - F->nagain]);
	for (int r = 0; r < F->nrecomputed; r++) {
		const TcFusion *G = run_at(R, F->from[r])->F;
		for (int j = 0; j < G->n; j++)
			if (G->ops[j].s)
				declare_inside(R, G->ops[j].s);
	}
	for (int l = 0; l < rt->nlanes; l++) {
		TcVar *v = lookup(R, rt->lanes[l]);
		if (!v || v->kind != TC_VAR_LOCAL)
			error_at(R, at, "run %d: lanes of '%s', not a local of its "
				 "nests", rt->index, rt->lanes[l]);
		rt->lane_var[l] = v;
	}
	R->scope.len = lanes_mark;
	for (int r = 0; r < F->nrecomputed; r++) {
		F->again[r] = run_buffer(R, rt->again[r], at);
		RunText *from = F->from[r] < rt->index ? run_at(R, F->from[r]) : NULL;
		if (!from || from->F->block != blk)
			error_at(R, at, "run %d recomputes '%s' from run %d, no "
				 "earlier run of its block", rt->index,
				 rt->again[r], F->from[r]);
	}
	/* Again ops: the op of a run it recomputes from that does the same
	 * work (the map at that position), each used once. */
	bool used[TC_FUSE_MAX_AGAIN][64] = { { false } };
	for (int o = 0; o < F->nagain; o++) {
		bool found = false;
		for (int r = 0; r < F->nrecomputed && !found; r++) {
			const TcFusion *G = run_at(R, F->from[r])->F;
			for (int j = 0; j < G->n && !found; j++) {
				const TcFuseOp *g = &G->ops[j];
				bool *u = &used[r][j];
				if (*u || g->kind != rt->kind[o] ||
				    (rt->buf[o] && strcmp(g->buf->name, rt->buf[o])) ||
				    (rt->at_line[o] &&
				     (g->s->loc.line != rt->at_line[o] ||
				      g->s->loc.col != rt->at_col[o])))
					continue;
				F->ops[o] = *g;
				F->ops[o].main = NULL;
				mark_op(&F->ops[o], &rt->marks[o]);
				*u = found = true;
			}
		}
		if (!found)
			error_at(R, at, "run %d: no op of the runs it recomputes "
				 "from does its op %d's work", rt->index, o);
	}
	for (int o = F->nagain; o < F->n; o++) {
		const TcStmt *s = blk->u.block.body.items[F->first + o - F->nagain];
		TcFuseOp *op = &F->ops[o];
		describe_op(R, op, s, rt->kind[o], at);
		if (rt->buf[o] && strcmp(op->buf->name, rt->buf[o]) != 0)
			error_at(R, at, "run %d: op %d is of '%s', its statement "
				 "of '%s'", rt->index, o, rt->buf[o], op->buf->name);
		op->helper = rt->helper[o];
		mark_op(op, &rt->marks[o]);
	}
	F->rank = 1;
	for (int o = 0; o < F->n; o++) {
		const TcFuseOp *op = &F->ops[o];
		if (op->rank >= F->rank) {
			F->rank = op->rank;
			F->ext[0] = op->ext[0];
			F->ext[1] = op->ext[1];
		}
	}
	/* Main loops, in the order of the run's maps that have one. */
	int m = 0;
	for (int o = 0; o < F->n && m < rt->nmain; o++) {
		TcFuseOp *op = &F->ops[o];
		if (op->kind != TC_FUSE_MAP || !op->s)
			continue;
		if (rt->main_line[m] && (op->s->loc.line != rt->main_line[m] ||
					 op->s->loc.col != rt->main_col[m]))
			continue;
		if (rt->main_empty[m]) {
			op->main = new_stmt(R, TC_ST_BLOCK);
		} else {
			/* Read the body where it was skipped, with the
			 * nest's names in scope. */
			const char *cur = R->cur;
			int line = R->line, col = R->col;
			Tok tok = R->tok;
			int mark = R->scope.len;
			declare_inside(R, op->s);
			R->main_lo = mark;
			R->main_hi = R->scope.len;
			R->tok = rt->main_at[m];
			R->cur = rt->main_at[m].p;
			R->line = rt->main_at[m].line;
			R->col = rt->main_at[m].col;
			lex(R);
			op->main = body(R);
			R->main_lo = R->main_hi = 0;
			R->scope.len = mark;
			R->cur = cur;
			R->line = line;
			R->col = col;
			R->tok = tok;
		}
		m++;
	}
	if (m != rt->nmain)
		error_at(R, at, "run %d: a main loop of no map of the run",
			 rt->index);
}

/* --- Blocks ------------------------------------------------------------------ */

/* Statements up to the closing `}` (taken, the line's rest left). */
static TcStmt *
body(Reader *R)
{
	TcStmt *blk = new_stmt(R, TC_ST_BLOCK);
	int mark = R->scope.len;
	const char *note = NULL;
	for (;;) {
		skip_blank_lines(R);
		if (accept(R, "}"))
			break;
		if (R->tok.kind == TOK_EOF)
			error_at(R, &R->tok, "a block without its '}'");
		if (R->tok.kind == TOK_COMMENT) {
			if (note)
				error_at(R, &R->tok, "two notes before a statement");
			note = tc_strndup(R->a, R->tok.p, (size_t)R->tok.len);
			lex(R);
			end_of_line(R);
			continue;
		}
		if (is_word(&R->tok, "run") && peek(R).kind == TOK_INT) {
			run_line(R, blk);
			continue;
		}
		/* `each block: S` (cpu_strip.c): S runs once a block of
		 * the strip. */
		bool each = false;
		if (is_word(&R->tok, "each")) {
			Tok nt = peek(R);
			if (is_word(&nt, "block")) {
				lex(R);
				lex(R);
				expect(R, ":");
				each = true;
			}
		}
		TcStmt *s = stmt(R, blk);
		s->note = note;
		s->each_block = each;
		note = NULL;
		tc_vec_push(R->a, &blk->u.block.body, s);
	}
	if (note)
		error_at(R, &R->tok, "a note before no statement");
	Tok at = R->tok;
	for (int i = 0; i < R->runs.len; i++) {
		RunText *rt = R->runs.items[i];
		if (rt && rt->F->block == blk && !rt->done) {
			rt->done = true;
			finish_run(R, rt, &at);
		}
	}
	R->scope.len = mark;
	return blk;
}

/* One statement; block is the BLOCK it goes into. */
static TcStmt *
stmt(Reader *R, TcStmt *block)
{
	(void)block;
	Tok at = R->tok;
	if (is_punct(&at, "{")) {
		lex(R);
		TcStmt *s = NULL;
		TcLoc loc = loc_comment(R);
		s = body(R);
		s->loc = loc;
		end_of_line(R);
		return s;
	}
	if (starts_assign(R)) {
		TcExpr *dst = expr(R);
		if (dst->kind != TC_EX_VAR && dst->kind != TC_EX_LOAD)
			error_at(R, &at, "an assignment to something not a "
				 "variable or element");
		expect(R, "=");
		if (is_word(&R->tok, "reduce_all") && peek(R).kind == TOK_IDENT) {
			lex(R);
			TcStmt *s = new_stmt(R, TC_ST_REDUCE_ALL);
			if (dst->kind != TC_EX_VAR)
				error_at(R, &at, "reduce_all into an element");
			s->u.reduce_all.dst = dst->u.var;
			s->u.reduce_all.op = reduce_op(R);
			region(R, &s->u.reduce_all.src);
			if (dst->u.var->kind == TC_VAR_LOCAL)
				dst->u.var->mutated = true;
			s->loc = loc_comment(R);
			return s;
		}
		TcStmt *s = new_stmt(R, TC_ST_ASSIGN);
		s->u.assign.dst = dst;
		s->u.assign.value = expr(R);
		if (dst->kind == TC_EX_VAR && dst->u.var->kind == TC_VAR_LOCAL)
			dst->u.var->mutated = true;
		s->loc = loc_comment(R);
		return s;
	}
	if (at.kind != TOK_IDENT)
		error_at(R, &at, "expected a statement, found %s", tok_text(R, &at));
	if (is_word(&at, "cite")) {
		/* `cite {`: a block a pass made in place of the statement it
		 * cites. */
		lex(R);
		expect(R, "{");
		TcLoc loc = loc_comment(R);
		TcStmt *s = body(R);
		s->loc = loc;
		s->u.block.cite = true;
		end_of_line(R);
		return s;
	}
	if (is_word(&at, "for"))
		return loop(R, TC_LOOP_SERIAL);
	if (is_word(&at, "parallel"))
		return loop(R, TC_LOOP_PARALLEL);
	if (is_word(&at, "pipelined"))
		return loop(R, TC_LOOP_PIPELINED);
	if (is_word(&at, "if"))
		return if_stmt(R);
	if (is_word(&at, "pipe_select"))
		return select_stmt(R);
	if (is_word(&at, "roles"))
		return roles_stmt(R);
	if (is_word(&at, "tiles"))
		return tiles_stmt(R);
	if (dtype_word(&at) != TC_DT_NONE)
		return decl(R);
	for (int s = 1; s < TC_SCOPE_COUNT; s++) {
		if (!is_word(&at, tc_scope_name(s)))
			continue;
		Tok next = peek(R);
		if (dtype_word(&next) != TC_DT_NONE)
			return decl(R);
	}
	const char *word = tc_strndup(R->a, at.p, (size_t)at.len);
	TcStmt *s = simple_stmt(R, word);
	if (!s)
		error_at(R, &at, "unknown statement '%s'", word);
	return s;
}

/* --- Kernels and programs ----------------------------------------------------- */

/* `NAME: [const] DTYPE[e]...` (a tensor) or `NAME: DTYPE` (a scalar), the
 * shapes read once every parameter is known. */
static void
params(Reader *R, TcKernel *k)
{
	Tok shape_at[64];
	bool has_shape[64] = { false };
	expect(R, "(");
	if (!accept(R, ")")) {
		do {
			if (k->params.len == 64)
				error_at(R, &R->tok, "too many parameters");
			const char *name = ident(R);
			expect(R, ":");
			bool is_const = accept(R, "const");
			TcDtype t = dtype(R);
			int i = k->params.len;
			TcVar *v = tc_var_new(R->a, k, TC_VAR_SCALAR, name, t,
					      (TcLoc){ 0 });
			v->param = i;
			v->is_const = is_const;
			tc_vec_push(R->a, &k->params, v);
			declare(R, v);
			if (is_punct(&R->tok, "[")) {
				v->kind = TC_VAR_TENSOR;
				has_shape[i] = true;
				shape_at[i] = R->tok;
				int depth = 0;
				while (is_punct(&R->tok, "[") || depth > 0) {
					if (R->tok.kind == TOK_EOF ||
					    R->tok.kind == TOK_NL)
						error_at(R, &R->tok, "a shape "
							 "without its ']'");
					depth += is_punct(&R->tok, "[");
					depth -= is_punct(&R->tok, "]");
					lex(R);
				}
				if (accept(R, "index64"))
					v->index64 = true;
			} else if (is_const) {
				error_at(R, &R->tok, "a const scalar");
			}
		} while (accept(R, ","));
		expect(R, ")");
	}
	/* The shapes, now that every parameter is in scope. */
	const char *cur = R->cur;
	int line = R->line, col = R->col;
	Tok tok = R->tok;
	for (int i = 0; i < k->params.len; i++) {
		if (!has_shape[i])
			continue;
		TcVar *v = k->params.items[i];
		R->tok = shape_at[i];
		R->cur = shape_at[i].p;
		R->line = shape_at[i].line;
		R->col = shape_at[i].col;
		lex(R);
		while (accept(R, "[")) {
			if (v->rank == TC_MAX_RANK)
				error_at(R, &R->tok, "too many dims");
			v->shape[v->rank++] = expr(R);
			expect(R, "]");
		}
	}
	R->cur = cur;
	R->line = line;
	R->col = col;
	R->tok = tok;
}

/* A `// FILE:LINE` comment: the kernel's or tunable's position. */
static TcLoc
file_line(Reader *R, const char *text, int len, const Tok *at)
{
	int colon = len - 1;
	while (colon > 0 && text[colon] != ':')
		colon--;
	if (colon <= 0 || colon == len - 1)
		error_at(R, at, "expected 'FILE:LINE' in this comment");
	int line = 0;
	for (int i = colon + 1; i < len; i++) {
		if (text[i] < '0' || text[i] > '9' || line > 1 << 24)
			error_at(R, at, "expected 'FILE:LINE' in this comment");
		line = line * 10 + (text[i] - '0');
	}
	return (TcLoc){ tc_strndup(R->a, text, (size_t)colon), line, 0 };
}

/* `x = E [as B][, y = ...]`: the extents of the grid (or of a
 * persistent kernel's tiles) along each dim, and the block vars; or
 * `x = E persistent (N blocks per SM)`, a persistent kernel's grid. */
static void
grid_dims(Reader *R, TcKernel *k, TcExpr **ext)
{
	do {
		Tok dt = R->tok;
		const char *dim = ident(R);
		int d = strcmp(dim, "x") == 0 ? 0 :
			strcmp(dim, "y") == 0 ? 1 :
			strcmp(dim, "z") == 0 ? 2 : -1;
		if (d < 0 || ext[d] || k->block[d])
			error_at(R, &dt, "expected a grid dim x, y "
				 "or z, once each");
		expect(R, "=");
		TcExpr *e = expr(R);
		if (ext == k->grid && d == 0 && accept(R, "persistent")) {
			/* `grid x = E persistent (N blocks per SM)`: the
			 * blocks launched; the `tiles` line that follows
			 * gives the extents they walk. */
			expect(R, "(");
			k->persistent = integer(R);
			if (!accept(R, "block"))
				expect(R, "blocks");
			expect(R, "per");
			expect(R, "SM");
			expect(R, ")");
			k->grid[0] = e;
			return;
		}
		if (accept(R, "as")) {
			TcVar *b = tc_var_new(R->a, k, TC_VAR_BLOCK,
					      ident(R), TC_DT_I32,
					      (TcLoc){ 0 });
			b->grid_dim = d;
			k->block[d] = b;
			declare(R, b);
			/* `= 1 as b`: no extent given. */
			if (e->kind == TC_EX_INT && e->u.ival == 1)
				e = NULL;
		}
		ext[d] = e;
	} while (accept(R, ","));
}

/* The header lines after `kernel ...`, before its `{`. */
static void
kernel_header(Reader *R, TcKernel *k)
{
	for (;;) {
		skip_blank_lines(R);
		Tok at = R->tok;
		if (accept(R, "threads")) {
			k->threads = expr(R);
		} else if (accept(R, "grid")) {
			grid_dims(R, k, k->grid);
		} else if (k->persistent && accept(R, "tiles")) {
			grid_dims(R, k, k->tiles);
		} else if (accept(R, "rasterize")) {
			k->rasterize = expr(R);
		} else if (accept(R, "smem")) {
			k->smem_bytes = integer(R);
			expect(R, "bytes");
			expect(R, ",");
			expect(R, "reduction");
			expect(R, "scratch");
			expect(R, "at");
			expect(R, "+");
			k->scratch_offset = integer(R);
		} else if (accept(R, "tensor_map")) {
			TcTensorMap *m = tc_alloc(R->a, sizeof *m);
			TcVar *h = handle(R);
			m->name = h->name;
			expect(R, "of");
			m->tensor = name_ref(R);
			if (m->tensor->kind != TC_VAR_TENSOR)
				error_at(R, &at, "a tensor map of '%s', not a "
					 "tensor", m->tensor->name);
			expect(R, "box");
			expect(R, "[");
			for (int d = 0; d < m->tensor->rank; d++) {
				if (d)
					expect(R, ",");
				m->box[d] = small_int(R);
			}
			expect(R, "]");
			expect(R, "swizzle");
			m->swizzle = small_int(R);
			tc_vec_push(R->a, &k->tmaps, m);
		} else if (accept(R, "frame")) {
			k->frame_bytes = integer(R);
			expect(R, "bytes");
			k->stack_bytes = k->frame_bytes;
			if (accept(R, ",")) {
				k->stack_bytes = integer(R);
				expect(R, "stored");
			}
		} else if (accept(R, "bounds")) {
			expect(R, "marked");
			R->bounds = true;
		} else if (accept(R, "strip")) {
			R->strip_at = at;
			k->strip = small_int(R);
			if (k->strip < 2)
				error_at(R, &at, "a strip of fewer than 2 blocks");
			expect(R, "blocks");
			expect(R, "along");
			expect(R, "x");
			expect(R, ",");
			expect(R, "each");
			expect(R, "keeping");
			if (!accept(R, "nothing")) {
				do {
					Tok *t = tc_alloc(R->a, sizeof *t);
					*t = R->tok;
					ident(R);
					tc_vec_push(R->a, &R->strip_keeps, t);
				} while (accept(R, ","));
			}
		} else if (accept(R, "aligned")) {
			/* `aligned launches of T, ...` (aligned.c) */
			expect(R, "launches");
			expect(R, "of");
			do {
				TcVar *t = name_ref(R);
				if (t->kind != TC_VAR_TENSOR)
					error_at(R, &at, "aligned launches of "
						 "'%s', not a tensor", t->name);
				tc_vec_push(R->a, &k->aligned, t);
			} while (accept(R, ","));
		} else if (accept(R, "bind")) {
			expect(R, "close");
			k->bind_close = true;
		} else if (accept(R, "streams")) {
			expect(R, "past");
			expect(R, "the");
			expect(R, "cache");
			k->streams = true;
		} else if (accept(R, "producer")) {
			expect(R, "warpgroup");
			expect(R, "of");
			k->producer_threads = integer(R);
			expect(R, "threads");
			expect(R, "after");
			expect(R, "them");
		} else {
			return;
		}
		end_of_line(R);
	}
}

/* A strip's fields the text gives by place: the buffers of the `strip`
 * line are the top-level buffers of those names, and the strip's loop
 * is the top-level loop whose body holds each-block statements (the
 * pass leaves none without them, the verifier checks it). */
static void
strip_fields(Reader *R, TcKernel *k)
{
	const TcVec *top = &k->body->u.block.body;
	for (int i = 0; i < R->strip_keeps.len; i++) {
		const Tok *t = R->strip_keeps.items[i];
		TcVar *b = NULL;
		for (int j = 0; j < top->len && !b; j++) {
			const TcStmt *s = top->items[j];
			if (s->kind == TC_ST_DECL &&
			    s->u.decl.var->kind == TC_VAR_BUFFER &&
			    strlen(s->u.decl.var->name) == (size_t)t->len &&
			    memcmp(s->u.decl.var->name, t->p, (size_t)t->len) == 0)
				b = s->u.decl.var;
		}
		if (!b || b->each_block)
			error_at(R, t, "expected a buffer of the kernel's top "
				 "level, once");
		b->each_block = true;
	}
	for (int j = 0; j < top->len; j++) {
		const TcStmt *s = top->items[j];
		if (s->kind != TC_ST_FOR)
			continue;
		const TcVec *in = &s->u.loop.body->u.block.body;
		bool each = false;
		for (int i = 0; i < in->len; i++)
			each |= ((const TcStmt *)in->items[i])->each_block;
		if (!each)
			continue;
		if (k->strip_loop)
			error_at(R, &R->strip_at, "a strip with two top-level "
				 "loops holding each-block statements");
		k->strip_loop = s;
	}
	if (!k->strip_loop)
		error_at(R, &R->strip_at, "a strip without a top-level loop "
			 "holding each-block statements");
}

/* `kernel NAME(params)  // FILE:LINE`, the header lines, `{` body `}` */
static TcKernel *
kernel(Reader *R)
{
	TcKernel *k = tc_alloc(R->a, sizeof *k);
	R->k = k;
	R->scope.len = 0;
	R->runs = (TcVec){ 0 };
	R->npending = 0;
	R->bounds = false;
	R->strip_keeps = (TcVec){ 0 };
	R->kfile = R->path;
	expect(R, "kernel");
	k->name = ident(R);
	params(R, k);
	if (R->tok.kind == TOK_COMMENT) {
		k->loc = file_line(R, R->tok.p, R->tok.len, &R->tok);
		R->kfile = k->loc.file;
		lex(R);
	}
	k->loc.file = R->kfile;
	end_of_line(R);
	for (int i = 0; i < k->params.len; i++)
		((TcVar *)k->params.items[i])->loc = k->loc;
	kernel_header(R, k);
	expect(R, "{");
	end_of_line(R);
	k->body = body(R);
	k->body->loc = k->loc;
	end_of_line(R);
	if (k->strip)
		strip_fields(R, k);
	for (int i = 0; i < R->runs.len; i++) {
		RunText *rt = R->runs.items[i];
		if (!rt)
			error_at(R, &R->tok, "kernel '%s': run %d is missing",
				 k->name, i);
		/* Registers by var index, once every var is made. */
		TcFusion *F = rt->F;
		F->elided = tc_alloc(R->a, (size_t)(k->vars.len + 1));
		for (int r = 0; r < rt->nregs; r++)
			F->elided[rt->reg_var[r]->index] = true;
		if (rt->nlanes) {
			F->lanes = tc_alloc(R->a, (size_t)(k->vars.len + 1));
			for (int l = 0; l < rt->nlanes; l++)
				F->lanes[rt->lane_var[l]->index] = true;
		}
		for (int o = 0; o < F->n; o++)
			if (F->ops[o].kind == TC_FUSE_LOAD)
				F->ops[o].elided = F->elided[F->ops[o].buf->index];
		tc_vec_push(R->a, &k->fusions, F);
	}
	return k;
}

/* Blank lines and, between kernels, whole-line comments (a test's
 * `// args:`, a word on what the IR is for): the printer writes none. */
static void
skip_comment_lines(Reader *R)
{
	for (;;) {
		skip_blank_lines(R);
		if (R->tok.kind != TOK_COMMENT)
			return;
		lex(R);
		end_of_line(R);
	}
}

/* `tunable NAME = V  // [bound, default D; | default D; ][choices C...; ]
 * FILE:LINE` */
static void
tunable(Reader *R, TcProgram *p)
{
	lex(R);
	const char *name = ident(R);
	expect(R, "=");
	TcVar *v = tc_var_new(R->a, NULL, TC_VAR_TUNABLE, name, TC_DT_I32,
			      (TcLoc){ 0 });
	v->index = p->tunables.len; /* as the parser numbers them */
	v->value = v->def_value = integer(R);
	if (R->tok.kind != TOK_COMMENT)
		error_at(R, &R->tok, "expected the tunable's comment");
	Tok at = R->tok;
	const char *t = at.p, *e = at.p + at.len;
	/* Fields up to the last `; `, then FILE:LINE. */
	const char *last = NULL;
	for (const char *q = t; q + 1 < e; q++)
		if (q[0] == ';' && q[1] == ' ')
			last = q;
	const char *f = t;
	while (last && f < last) {
		const char *semi = memchr(f, ';', (size_t)(last + 1 - f));
		char field[512];
		size_t n = (size_t)(semi - f) < sizeof field - 1 ?
			   (size_t)(semi - f) : sizeof field - 1;
		memcpy(field, f, n);
		field[n] = '\0';
		long long dv;
		int used = 0;
		if (sscanf(field, "bound, default %lld%n", &dv, &used) == 1 &&
		    (size_t)used == n) {
			v->bound = true;
			v->def_value = dv;
		} else if (sscanf(field, "default %lld%n", &dv, &used) == 1 &&
			   (size_t)used == n) {
			v->def_value = dv;
		} else if (strncmp(field, "choices", 7) == 0) {
			char *q = field + 7;
			long long c[64];
			int nc = 0;
			while (*q) {
				char *end;
				errno = 0;
				long long x = strtoll(q, &end, 10);
				if (end == q || errno || nc == 64)
					error_at(R, &at, "bad choices in this "
						 "comment");
				c[nc++] = x;
				q = end;
			}
			v->nchoices = nc;
			v->choices = tc_alloc(R->a, (size_t)nc * sizeof *c);
			memcpy(v->choices, c, (size_t)nc * sizeof *c);
		} else {
			error_at(R, &at, "unknown field '%s' in this comment",
				 field);
		}
		f = semi + 2;
	}
	v->loc = file_line(R, f, (int)(e - f), &at);
	lex(R);
	end_of_line(R);
	tc_vec_push(R->a, &p->tunables, v);
}

TcProgram *
tc_read_ir(TcArena *a, const char *path, const char *text, size_t len,
	   TcDiags *d)
{
	Reader R = { .a = a, .d = d, .path = path, .src = text,
		     .end = text + len, .cur = text, .line = 1, .col = 1 };
	TcProgram *p = tc_alloc(a, sizeof *p);
	p->path = path;
	p->text = NULL;
	R.prog = p;
	if (setjmp(R.fail))
		return NULL;
	lex(&R);
	skip_comment_lines(&R);
	while (is_word(&R.tok, "tunable")) {
		tunable(&R, p);
		skip_comment_lines(&R);
	}
	while (R.tok.kind != TOK_EOF) {
		tc_vec_push(a, &p->kernels, kernel(&R));
		skip_comment_lines(&R);
	}
	if (p->kernels.len == 0)
		error_at(&R, &R.tok, "no kernel in this IR");
	return p;
}
