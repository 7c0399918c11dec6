/*
 * options.c - the option parser every tilec command line shares.
 *
 * Input: argv and a command's table of options (TcOptSpec).  Output: one
 * option or operand at a time (tc_opt_next), each option as the id the
 * command gave it, with its value; the command switches on the id and
 * prints its own messages.  The forms, the same for every command:
 *
 *   --name V, --name=V   a long option with a value
 *   -xV, -x=V, -x V      a short option with a value (-DNAME=V, -oFILE)
 *   --flag, -f           an option without one ("--flag=V" is unknown)
 *   --                   everything after it is an operand
 *   -, FILE              an operand
 *
 * A value is taken from the next argument whatever it looks like.
 * tc_opt_suggest finds the option a mistyped one most likely meant (edit
 * distance, tc_nearest), for the "did you mean" of a usage error;
 * tc_json_text puts a path into the commands' --json output.
 * tc_opt_range and tc_opt_range_values parse and evaluate the value of
 * `--range T=LO:HI`, which `tilec run` and `tilec tune` share;
 * tc_opt_cpu_strip the value of `--cpu-strip=N`, which every command that
 * translates takes.
 */
#include "ir/tilec_int.h"

#include <errno.h>
#include <jansson.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
tc_opt_init(TcOptParser *p, int argc, char **argv)
{
	memset(p, 0, sizeof *p);
	p->argc = argc;
	p->argv = argv;
	p->i = 1;
}

int
tc_opt_next(TcOptParser *p, const TcOptSpec *specs)
{
	const char *arg;
	for (;;) {
		if (p->i >= p->argc)
			return TC_OPT_END;
		arg = p->argv[p->i++];
		if (p->operands_only || arg[0] != '-' || arg[1] == '\0') {
			p->arg = p->value = arg;
			return TC_OPT_OPERAND;
		}
		if (strcmp(arg, "--") != 0)
			break;
		p->operands_only = true;
	}
	p->arg = arg;
	p->value = NULL;

	/* Find the option and where its attached value starts, if any. */
	const TcOptSpec *s;
	const char *rest;
	if (arg[1] == '-') {
		const char *name = arg + 2;
		size_t n = strcspn(name, "=");
		for (s = specs; s->id; s++)
			if (s->name && strlen(s->name) == n &&
			    strncmp(s->name, name, n) == 0)
				break;
		rest = name[n] ? name + n + 1 : NULL;
	} else {
		for (s = specs; s->id; s++)
			if (s->short_name == arg[1])
				break;
		rest = arg[2] == '=' ? arg + 3 : arg[2] ? arg + 2 : NULL;
	}
	if (!s->id || (rest && !s->has_value))
		return TC_OPT_UNKNOWN;
	if (s->has_value) {
		if (!rest && p->i >= p->argc)
			return TC_OPT_MISSING;
		p->value = rest ? rest : p->argv[p->i++];
	}
	return s->id;
}

const char *
tc_opt_suggest(const char *arg, const TcOptSpec *specs, char *buf, size_t n)
{
	buf[0] = '\0';
	/* Only long options: a one-letter option has too many neighbours. */
	if (strncmp(arg, "--", 2) != 0)
		return buf;
	const char *names[128];
	int count = 0;
	for (const TcOptSpec *s = specs; s->id && count < 128; s++)
		if (s->name)
			names[count++] = s->name;
	const char *word = arg + 2;
	const char *best = tc_nearest(word, strcspn(word, "="), names, count);
	if (best)
		snprintf(buf, n, "; did you mean '--%s'?", best);
	return buf;
}

struct json_t *
tc_json_text(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *t = strdup(s);
	if (!t)
		return json_null();
	for (char *c = t; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(t);
	free(t);
	return j ? j : json_null();
}

bool
tc_opt_integer(const char *s, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

bool
tc_opt_cpu_strip(const char *s, int *out)
{
	long long n;
	if (!tc_opt_integer(s, &n) || n < 0 || n > 16)
		return false;
	*out = n == 0 ? -1 : (int)n;
	return true;
}

bool
tc_opt_number(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

bool
tc_opt_define(const char *arg, char **name, long long *value)
{
	const char *eq = strchr(arg, '=');
	long long v;
	if (!eq || eq == arg || !tc_opt_integer(eq + 1, &v))
		return false;
	if (!(*name = strndup(arg, (size_t)(eq - arg))))
		return false;
	*value = v;
	return true;
}

/* --- --range T=LO:HI (tilec run, tilec tune) ------------------------------ */

bool
tc_opt_range(const char *item, size_t n, char **name, char **lo, char **hi)
{
	const char *eq = memchr(item, '=', n);
	const char *colon = eq ? memchr(eq, ':', (size_t)(item + n - eq)) : NULL;
	if (!eq || eq == item || !colon || colon == eq + 1 ||
	    colon + 1 == item + n)
		return false;
	*name = strndup(item, (size_t)(eq - item));
	*lo = strndup(eq + 1, (size_t)(colon - eq - 1));
	*hi = strndup(colon + 1, (size_t)(item + n - colon - 1));
	return true;
}

/* A bound of --range: numbers and scalar parameter names with + - * and
 * parentheses, over the scalar values.  One parser per bound. */
typedef struct Bound {
	int n;                     /* the scalar parameters */
	const char *const *names;
	const double *values;
	const char *p;             /* the next character */
	bool ok;                   /* no error found yet */
	const char *why;           /* what went wrong, for the message */
	const char *at;            /* where */
	int nest;                  /* factors being read, one inside another */
} Bound;

static double bound_sum(Bound *b);

static void
bound_space(Bound *b)
{
	while (*b->p == ' ')
		b->p++;
}

static void
bound_fail(Bound *b, const char *why)
{
	if (b->ok) {
		b->ok = false;
		b->why = why;
		b->at = b->p;
	}
}

static bool
is_name_char(char c, bool first)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (!first && c >= '0' && c <= '9');
}

/* factor: ['-'] (number | NAME | '(' sum ')'), nested at most
 * TC_MAX_NESTING deep (the reading recurses). */
static double
bound_factor(Bound *b)
{
	bound_space(b);
	if (b->nest >= TC_MAX_NESTING) {
		bound_fail(b, "nested too deeply");
		return 0;
	}
	if (*b->p == '-') {
		b->p++;
		b->nest++;
		double v = -bound_factor(b);
		b->nest--;
		return v;
	}
	if (*b->p == '(') {
		b->p++;
		b->nest++;
		double v = bound_sum(b);
		b->nest--;
		bound_space(b);
		if (*b->p != ')')
			bound_fail(b, "expected ')'");
		else
			b->p++;
		return v;
	}
	if (is_name_char(*b->p, true)) {
		const char *start = b->p;
		while (is_name_char(*b->p, false))
			b->p++;
		size_t n = (size_t)(b->p - start);
		for (int i = 0; i < b->n; i++)
			if (strlen(b->names[i]) == n &&
			    strncmp(b->names[i], start, n) == 0)
				return b->values[i];
		b->p = start;
		bound_fail(b, "not a scalar parameter");
		return 0;
	}
	char *end;
	double v = strtod(b->p, &end);
	if (end == b->p || !isfinite(v)) {
		bound_fail(b, "expected a number or a scalar parameter");
		return 0;
	}
	b->p = end;
	return v;
}

/* term: factor ('*' factor)* */
static double
bound_term(Bound *b)
{
	double v = bound_factor(b);
	for (;;) {
		bound_space(b);
		if (*b->p != '*')
			return v;
		b->p++;
		v *= bound_factor(b);
	}
}

/* sum: term (('+' | '-') term)* */
static double
bound_sum(Bound *b)
{
	double v = bound_term(b);
	for (;;) {
		bound_space(b);
		if (*b->p != '+' && *b->p != '-')
			return v;
		char op = *b->p++;
		double w = bound_term(b);
		v = op == '+' ? v + w : v - w;
	}
}

/* Evaluate one bound; false with the message in err. */
static bool
eval_bound(const char *range, const char *s, int n, const char *const *names,
	   const double *values, double *out, TcBuf *err)
{
	Bound b = { n, names, values, s, true, NULL, NULL, 0 };
	*out = bound_sum(&b);
	bound_space(&b);
	if (b.ok && *b.p)
		bound_fail(&b, "unexpected text");
	if (!b.ok)
		tc_buf_printf(err, "--range %s: bound '%s': %s at '%s'", range, s,
			      b.why, b.at);
	return b.ok;
}

/* The values an integer type holds (bool 0 .. 1); false for floats. */
static bool
int_limits(TcDtype t, double *lo, double *hi)
{
	switch (t) {
	case TC_DT_BOOL: *lo = 0; *hi = 1; return true;
	case TC_DT_I4: *lo = -8; *hi = 7; return true;
	case TC_DT_I8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
	case TC_DT_U8: *lo = 0; *hi = UINT8_MAX; return true;
	case TC_DT_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
	case TC_DT_I64:
		/* Every value and difference exact in the double the
		 * generator goes through. */
		*lo = -0x1p52;
		*hi = 0x1p52;
		return true;
	default: return false;
	}
}

/* The largest finite value of a float type, or 0 for the others: a
 * bound past it would make every input an infinity. */
static double
float_limit(TcDtype t)
{
	switch (t) {
	case TC_DT_F16: return 65504.0;
	case TC_DT_BF16: return 0x1.fep127;
	case TC_DT_FP8E4M3: return 448.0;
	case TC_DT_FP8E5M2: return 57344.0;
	case TC_DT_F32: return FLT_MAX;
	case TC_DT_F64: return DBL_MAX;
	default: return 0;
	}
}

bool
tc_opt_range_values(const char *name, const char *lo_text, const char *hi_text,
		    TcDtype t, int n, const char *const *names,
		    const double *values, double *lo, double *hi, TcBuf *err)
{
	if (!eval_bound(name, lo_text, n, names, values, lo, err) ||
	    !eval_bound(name, hi_text, n, names, values, hi, err))
		return false;
	double tlo, thi;
	if (!(*lo <= *hi)) {
		tc_buf_printf(err, "--range %s=%s:%s: the range is empty (%.17g > "
			      "%.17g)",
			      name, lo_text, hi_text, *lo, *hi);
		return false;
	}
	double fmax = float_limit(t);
	if (fmax > 0 && (*lo < -fmax || *hi > fmax)) {
		tc_buf_printf(err, "--range %s=%s:%s: not within %s's finite "
			      "values (-%.9g .. %.9g)",
			      name, lo_text, hi_text, tc_dtype_name(t), fmax, fmax);
		return false;
	}
	if (!int_limits(t, &tlo, &thi))
		return true;
	if (*lo != floor(*lo) || *hi != floor(*hi)) {
		tc_buf_printf(err, "--range %s=%s:%s: %s holds integers, and the "
			      "bounds are %.17g and %.17g",
			      name, lo_text, hi_text, tc_dtype_name(t), *lo, *hi);
		return false;
	}
	if (*lo < tlo || *hi > thi) {
		tc_buf_printf(err, "--range %s=%lld:%lld: not within %s (%lld .. "
			      "%lld)",
			      name, (long long)*lo, (long long)*hi,
			      tc_dtype_name(t), (long long)tlo, (long long)thi);
		return false;
	}
	return true;
}
