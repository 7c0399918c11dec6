/*
 * wrap.c - the line breaker: long lines of generated C and C++ broken
 * where a reader expects them.
 *
 * Input: text a printer wrote into a TcBuf (tab-indented C or C++, as
 * the emitters print it).  Output: the same text with every code line
 * longer than the width (tabs counting 8 columns) broken after a comma
 * or a call's opening parenthesis, or before `&&`, `||`, `?` or `:`, the
 * continuation lines indented one
 * tab more than the line.  Among the places that keep a line within the
 * width, the breaker takes the one least deeply nested in parentheses,
 * brackets, braces and template arguments (`<` right after a name; a
 * break after a call's `(` counts as inside it, one before an operator
 * one deeper than where it is), the rightmost of those.  Only where none
 * of those fits does it break after an assignment's ` = ` or before an
 * arithmetic, shift, comparison or bitwise operator (` + `, ` * `, ` < `
 * ...: an address or index expression with no comma to break at), by the
 * same rule, its
 * continuation a tab deeper still; where nothing fits, the first place
 * after the width.
 * A `//` comment line past the width (its printer wraps most) is broken
 * between words into `//` lines; preprocessor lines, block comments and
 * the text of string and character literals and of trailing comments are
 * never broken.  A line with no place to break stays as it is.
 */
#include "ir/tilec_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { TAB = 8 };

/* A place a line may break: the byte where the continuation starts. */
typedef struct Break {
	size_t at;   /* offset in the line of the continuation's first byte */
	size_t skip; /* bytes before `at` dropped with the break (a space) */
	int depth;   /* nesting depth there */
	bool weak;   /* before an arithmetic operator: only where no other
			place fits */
} Break;

static bool
ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Whether s (n bytes) starts with a binary operator other than the
 * logical ones and `?:`, followed by a space: `+ `, `<< `, `!= `. */
static bool
arith_op(const char *s, size_t n)
{
	static const char *const ops[] = { "+", "-", "*", "/", "%", "<<",
					   ">>", "<", ">", "<=", ">=", "==",
					   "!=", "&", "|", "^" };
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
		size_t len = strlen(ops[i]);
		if (len < n && memcmp(s, ops[i], len) == 0 && s[len] == ' ')
			return true;
	}
	return false;
}

/* The places line[0..n) may break, into *out (room for n). */
static int
breaks_of(const char *line, size_t n, Break *out)
{
	int nb = 0, depth = 0, angle = 0;
	char quote = 0;
	for (size_t i = 0; i < n; i++) {
		char c = line[i];
		if (quote) {
			if (c == '\\')
				i++;
			else if (c == quote)
				quote = 0;
			continue;
		}
		switch (c) {
		case '"':
		case '\'':
			quote = c;
			break;
		case '/':
			if (i + 1 < n && (line[i + 1] == '/' || line[i + 1] == '*'))
				return nb; /* nothing breaks in or after a comment */
			break;
		case '(':
			/* After an opening parenthesis with arguments:
			 * `f(\n\targs)`, as deep as the arguments. */
			depth++;
			if (i > 0 && (ident_char(line[i - 1]) || line[i - 1] == '>') &&
			    i + 1 < n && line[i + 1] != ')')
				out[nb++] = (Break){ i + 1, 0, depth, false };
			break;
		case '[':
		case '{':
			depth++;
			break;
		case ')':
		case ']':
		case '}':
			depth--;
			break;
		case '<':
			/* A template's arguments: `name<` (a comparison or a
			 * shift has spaces around it). */
			if (i > 0 && ident_char(line[i - 1]) && i + 1 < n &&
			    line[i + 1] != '<' && line[i + 1] != '=') {
				depth++;
				angle++;
			}
			break;
		case '>':
			if (angle > 0 && line[i - 1] != ' ' && line[i - 1] != '-') {
				depth--;
				angle--;
			}
			break;
		case ',':
			if (i + 1 < n && line[i + 1] == ' ')
				out[nb++] = (Break){ i + 2, 1, depth, false };
			break;
		case ' ':
			/* Before a binary operator of its own: ` && `, ` || `,
			 * ` ? `, ` : `. */
			if (i + 3 < n && line[i + 3] == ' ' &&
			    ((line[i + 1] == '&' && line[i + 2] == '&') ||
			     (line[i + 1] == '|' && line[i + 2] == '|')))
				out[nb++] = (Break){ i + 1, 1, depth + 1, false };
			else if (i + 2 < n && line[i + 2] == ' ' &&
				 (line[i + 1] == '?' || line[i + 1] == ':'))
				out[nb++] = (Break){ i + 1, 1, depth + 1, false };
			else if (i > 0 && line[i - 1] != ' ' && line[i - 1] != ',' &&
				 line[i - 1] != '(' && arith_op(line + i + 1, n - i - 1))
				out[nb++] = (Break){ i + 1, 1, depth + 1, true };
			/* After an assignment's ` = `: the value on its own. */
			else if (i + 3 < n && line[i + 1] == '=' && line[i + 2] == ' ')
				out[nb++] = (Break){ i + 3, 1, depth, true };
			break;
		default:
			break;
		}
	}
	return nb;
}

/* The column after printing line[0..n) from column col. */
static int
column(const char *line, size_t n, int col)
{
	for (size_t i = 0; i < n; i++)
		col = line[i] == '\t' ? (col / TAB + 1) * TAB : col + 1;
	return col;
}

/* Append a `//` comment line (tabs, then `// text`) to out, broken at
 * spaces into `//` lines that fit the width where a word allows. */
static void
wrap_comment(TcBuf *out, const char *line, size_t n, size_t tabs, int width)
{
	const char *text = line + tabs + 2;
	size_t len = n - tabs - 2;
	while (len > 0 && text[0] == ' ') {
		text++;
		len--;
	}
	int room = width - (int)tabs * TAB - 3; /* after the tabs and `// ` */
	for (;;) {
		size_t cut = len;
		if ((int)len > room) {
			/* The last space that fits; else the first after. */
			cut = 0;
			for (size_t i = 1; i < len; i++)
				if (text[i] == ' ' && ((int)i <= room || !cut))
					cut = i;
			if (!cut)
				cut = len;
		}
		for (size_t t = 0; t < tabs; t++)
			tc_buf_append(out, "\t", 1);
		tc_buf_append(out, "// ", 3);
		tc_buf_append(out, text, cut);
		tc_buf_append(out, "\n", 1);
		while (cut < len && text[cut] == ' ')
			cut++;
		if (cut >= len)
			return;
		text += cut;
		len -= cut;
	}
}

/* Append line[0..n) (without its newline) to out, broken to width. */
static void
wrap_line(TcBuf *out, const char *line, size_t n, int width)
{
	size_t tabs = 0;
	while (tabs < n && line[tabs] == '\t')
		tabs++;
	const char *body = line + tabs;
	size_t len = n - tabs;
	bool comment = len > 2 && body[0] == '/' && body[1] == '/';
	bool code = len > 0 && body[0] != '#' && !comment &&
		    !(len > 1 && body[0] == '/' && body[1] == '*');
	if (comment && column(line, n, 0) > width &&
	    memchr(body + 3, ' ', len - 3)) {
		wrap_comment(out, line, n, tabs, width);
		return;
	}
	if (!code || column(line, n, 0) <= width) {
		tc_buf_append(out, line, n);
		tc_buf_append(out, "\n", 1);
		return;
	}
	Break *br = malloc(sizeof *br * (len + 1));
	if (!br) {
		tc_buf_append(out, line, n);
		tc_buf_append(out, "\n", 1);
		return;
	}
	int nb = breaks_of(body, len, br);
	size_t start = 0; /* of the piece not yet written */
	int indent = (int)tabs;
	for (;;) {
		int col0 = indent * TAB;
		/* The best break of the rest: within the width, least deep,
		 * rightmost; else the first one past start. */
		int best = -1, weak = -1, first = -1;
		for (int i = 0; i < nb; i++) {
			if (br[i].at <= start || br[i].at >= len)
				continue;
			if (first < 0)
				first = i;
			int end = column(body + start, br[i].at - br[i].skip - start, col0);
			if (end > width)
				break;
			int *b = br[i].weak ? &weak : &best;
			if (*b < 0 || br[i].depth <= br[*b].depth)
				*b = i;
		}
		if (best < 0)
			best = weak;
		if (column(body + start, len - start, col0) <= width)
			best = first = -1;
		int pick = best >= 0 ? best : first;
		for (int t = 0; t < indent; t++)
			tc_buf_append(out, "\t", 1);
		if (pick < 0) {
			tc_buf_append(out, body + start, len - start);
			tc_buf_append(out, "\n", 1);
			break;
		}
		tc_buf_append(out, body + start, br[pick].at - br[pick].skip - start);
		tc_buf_append(out, "\n", 1);
		start = br[pick].at;
		/* An operand continued after an operator sits deeper than the
		 * items a comma separates. */
		indent = (int)tabs + 1 + br[pick].weak;
	}
	free(br);
}

void
tc_wrap_code(TcBuf *b, size_t from, int width)
{
	if (!b->data || from >= b->len)
		return;
	TcBuf out;
	tc_buf_init(&out);
	const char *p = b->data + from, *end = b->data + b->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (nl)
			wrap_line(&out, p, n, width);
		else
			tc_buf_append(&out, p, n); /* an unfinished last line */
		p += n + (nl ? 1 : 0);
	}
	b->len = from;
	b->data[b->len] = '\0';
	int indent = b->indent;
	bool at_bol = b->at_bol;
	b->indent = 0;
	b->at_bol = false;
	tc_buf_append(b, out.data ? out.data : "", out.len);
	b->indent = indent;
	b->at_bol = at_bol;
	tc_buf_free(&out);
}
