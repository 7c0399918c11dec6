/*
 * quote.c - strings from outside the translator, made safe for the
 * generated text they land in.
 *
 * File names (the tile program's path, paths from #line in it), source
 * snippets and anything else read from a file or the command line reach
 * generated source in three places only, each with its function here:
 *
 *   comments        tc_quote_comment: text that cannot end or continue
 *                   a line comment or a block comment
 *   string literals tc_quote_string: the body of a "..." literal, as in
 *                   `#line N "FILE"`
 *   names           tc_is_identifier: a name printed as code must be a
 *                   plain ASCII C identifier (the parser checks each)
 *
 * Invariant: what tc_quote_comment appends has only printable ASCII, no
 * backslash that is not followed by 'x', no "??" that a compiler with
 * trigraphs could read as a backslash, and no star-slash; so neither a line
 * break nor a line splice nor the end of a block comment can come from
 * it, wherever a comment printer wraps it (at spaces).  What
 * tc_quote_string appends reads back, through C's escapes, as exactly the
 * bytes given.
 */
#include "ir/tilec_int.h"

#include <string.h>

static bool
printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

void
tc_quote_comment(TcBuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool hide = !printable(*p) || *p == '\\' ||
			    (*p == '*' && p[1] == '/') ||
			    (*p == '?' && p[1] == '?');
		if (hide)
			tc_buf_printf(b, "\\x%02x", *p);
		else
			tc_buf_append(b, p, 1);
	}
}

char *
tc_quote_comment_dup(TcArena *a, const char *s)
{
	TcBuf b;
	tc_buf_init(&b);
	tc_quote_comment(&b, s);
	char *r = tc_strdup(a, b.data ? b.data : "");
	tc_buf_free(&b);
	return r;
}

void
tc_quote_string(TcBuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			tc_buf_printf(b, "\\%c", *p);
		else if (*p == '?') /* never two in a row: no trigraph */
			tc_buf_puts(b, "\\?");
		else if (!printable(*p))
			tc_buf_printf(b, "\\%03o", *p); /* three digits: no run-on */
		else
			tc_buf_append(b, p, 1);
	}
}

bool
tc_is_identifier(const char *s)
{
	if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}
