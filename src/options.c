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
 */
#include "tilec_int.h"

#include <errno.h>
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
