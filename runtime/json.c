/*
 * json.c - a small JSON reader for launch documents.
 *
 * The runtime reads one kind of JSON, the launch documents the translator
 * writes (docs/launch.md), and must not depend on a JSON library: it
 * builds on GPU machines that have nothing but a C compiler.  This reader
 * takes RFC 8259 JSON into a tree of TilecJson nodes.  Input is untrusted:
 * nesting is bounded, integers that do not fit in 64 bits are errors
 * rather than rounded, and every failure says where (byte offset) and why.
 */
#include "runtime_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper nesting is refused (a launch document needs about 40 for the
 * most involved size expression a program can hold). */
enum { JSON_MAX_DEPTH = 200 };

typedef struct Reader {
	const char *text;  /* the document */
	size_t len;        /* its bytes */
	size_t pos;        /* the next byte to read */
	char *error;       /* where to write a failure */
	size_t nerror;     /* bytes in error */
	bool failed;       /* the first failure is kept */
} Reader;

static void
json_fail(Reader *r, const char *what)
{
	if (r->failed)
		return;
	r->failed = true;
	snprintf(r->error, r->nerror, "%s at byte %zu", what, r->pos);
}

static void
skip_space(Reader *r)
{
	while (r->pos < r->len &&
	       (r->text[r->pos] == ' ' || r->text[r->pos] == '\t' ||
		r->text[r->pos] == '\n' || r->text[r->pos] == '\r'))
		r->pos++;
}

static TilecJson *
node(Reader *r, TilecJsonKind kind)
{
	TilecJson *j = calloc(1, sizeof *j);
	if (!j)
		json_fail(r, "out of memory");
	else
		j->kind = kind;
	return j;
}

/* Append v to the items (and, for objects, key k) of j. */
static bool
push(Reader *r, TilecJson *j, char *k, TilecJson *v)
{
	if (j->n == j->cap) {
		int cap = j->cap ? 2 * j->cap : 8;
		TilecJson **items = realloc(j->items, sizeof *items * (size_t)cap);
		if (items)
			j->items = items;
		char **keys = j->kind == TILEC_JSON_OBJECT
				      ? realloc(j->keys, sizeof *keys * (size_t)cap)
				      : NULL;
		if (keys)
			j->keys = keys;
		if (!items || (j->kind == TILEC_JSON_OBJECT && !keys)) {
			json_fail(r, "out of memory");
			return false;
		}
		j->cap = cap;
	}
	if (j->kind == TILEC_JSON_OBJECT)
		j->keys[j->n] = k;
	j->items[j->n++] = v;
	return true;
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool
read_hex4(Reader *r, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int d = r->pos < r->len ? hex_digit(r->text[r->pos]) : -1;
		if (d < 0) {
			json_fail(r, "bad \\u escape");
			return false;
		}
		v = v * 16 + (unsigned)d;
		r->pos++;
	}
	*out = v;
	return true;
}

/* A string (the opening quote at pos), malloc'd, UTF-8. */
static char *
read_string(Reader *r)
{
	TilecStr s = { 0 };
	r->pos++;
	for (;;) {
		if (r->pos >= r->len) {
			json_fail(r, "unterminated string");
			break;
		}
		unsigned char c = (unsigned char)r->text[r->pos++];
		if (c == '"') {
			if (s.oom) {
				json_fail(r, "out of memory");
				break;
			}
			if (!s.data)
				return strdup("");
			return s.data;
		}
		if (c < 0x20) {
			json_fail(r, "control character in a string");
			break;
		}
		if (c != '\\') {
			tilec_rt_str_append(&s, (const char *)&c, 1);
			continue;
		}
		if (r->pos >= r->len) {
			json_fail(r, "unterminated string");
			break;
		}
		char e = r->text[r->pos++];
		const char *plain = strchr("\"\\/bfnrt", e);
		if (plain && e) {
			static const char out[] = "\"\\/\b\f\n\r\t";
			tilec_rt_str_append(&s, &out[plain - "\"\\/bfnrt"], 1);
			continue;
		}
		if (e != 'u') {
			json_fail(r, "bad escape in a string");
			break;
		}
		unsigned u;
		if (!read_hex4(r, &u))
			break;
		if (u >= 0xd800 && u < 0xdc00) {
			unsigned lo;
			if (r->pos + 2 > r->len || r->text[r->pos] != '\\' ||
			    r->text[r->pos + 1] != 'u') {
				json_fail(r, "unpaired surrogate");
				break;
			}
			r->pos += 2;
			if (!read_hex4(r, &lo) || lo < 0xdc00 || lo >= 0xe000) {
				json_fail(r, "unpaired surrogate");
				break;
			}
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		} else if (u >= 0xdc00 && u < 0xe000) {
			json_fail(r, "unpaired surrogate");
			break;
		}
		if (u == 0) {
			json_fail(r, "NUL in a string");
			break;
		}
		char b[4];
		size_t n;
		if (u < 0x80) {
			b[0] = (char)u;
			n = 1;
		} else if (u < 0x800) {
			b[0] = (char)(0xc0 | u >> 6);
			b[1] = (char)(0x80 | (u & 0x3f));
			n = 2;
		} else if (u < 0x10000) {
			b[0] = (char)(0xe0 | u >> 12);
			b[1] = (char)(0x80 | (u >> 6 & 0x3f));
			b[2] = (char)(0x80 | (u & 0x3f));
			n = 3;
		} else {
			b[0] = (char)(0xf0 | u >> 18);
			b[1] = (char)(0x80 | (u >> 12 & 0x3f));
			b[2] = (char)(0x80 | (u >> 6 & 0x3f));
			b[3] = (char)(0x80 | (u & 0x3f));
			n = 4;
		}
		tilec_rt_str_append(&s, b, n);
	}
	tilec_rt_str_free(&s);
	return NULL;
}

/* A number: an integer when it has no fraction or exponent (and must then
 * fit in 64 bits), else a double. */
static TilecJson *
read_number(Reader *r)
{
	size_t start = r->pos;
	bool integral = true;
	if (r->pos < r->len && r->text[r->pos] == '-')
		r->pos++;
	if (r->pos >= r->len || r->text[r->pos] < '0' || r->text[r->pos] > '9') {
		json_fail(r, "bad number");
		return NULL;
	}
	if (r->text[r->pos] == '0' && r->pos + 1 < r->len &&
	    r->text[r->pos + 1] >= '0' && r->text[r->pos + 1] <= '9') {
		json_fail(r, "number with a leading zero");
		return NULL;
	}
	while (r->pos < r->len && r->text[r->pos] >= '0' && r->text[r->pos] <= '9')
		r->pos++;
	if (r->pos < r->len && r->text[r->pos] == '.') {
		integral = false;
		r->pos++;
		size_t digits = r->pos;
		while (r->pos < r->len && r->text[r->pos] >= '0' &&
		       r->text[r->pos] <= '9')
			r->pos++;
		if (r->pos == digits) {
			json_fail(r, "bad number");
			return NULL;
		}
	}
	if (r->pos < r->len && (r->text[r->pos] == 'e' || r->text[r->pos] == 'E')) {
		integral = false;
		r->pos++;
		if (r->pos < r->len && (r->text[r->pos] == '+' || r->text[r->pos] == '-'))
			r->pos++;
		size_t digits = r->pos;
		while (r->pos < r->len && r->text[r->pos] >= '0' &&
		       r->text[r->pos] <= '9')
			r->pos++;
		if (r->pos == digits) {
			json_fail(r, "bad number");
			return NULL;
		}
	}
	char buf[400];
	size_t n = r->pos - start;
	if (n >= sizeof buf) {
		json_fail(r, "number too long");
		return NULL;
	}
	memcpy(buf, r->text + start, n);
	buf[n] = '\0';
	TilecJson *j = node(r, TILEC_JSON_NUMBER);
	if (!j)
		return NULL;
	errno = 0;
	j->integral = integral;
	if (integral) {
		j->ivalue = strtoll(buf, NULL, 10);
		if (errno == ERANGE) {
			json_fail(r, "integer outside 64 bits");
			free(j);
			return NULL;
		}
		j->fvalue = (double)j->ivalue;
	} else {
		j->fvalue = strtod(buf, NULL);
		if (!isfinite(j->fvalue)) {
			json_fail(r, "number out of range");
			free(j);
			return NULL;
		}
	}
	return j;
}

static bool
literal(Reader *r, const char *word)
{
	size_t n = strlen(word);
	if (r->len - r->pos >= n && memcmp(r->text + r->pos, word, n) == 0) {
		r->pos += n;
		return true;
	}
	return false;
}

static TilecJson *read_value(Reader *r, int depth);

static TilecJson *
read_container(Reader *r, int depth, bool object)
{
	TilecJson *j = node(r, object ? TILEC_JSON_OBJECT : TILEC_JSON_ARRAY);
	if (!j)
		return NULL;
	char close = object ? '}' : ']';
	r->pos++;
	skip_space(r);
	if (r->pos < r->len && r->text[r->pos] == close) {
		r->pos++;
		return j;
	}
	for (;;) {
		char *key = NULL;
		skip_space(r);
		if (object) {
			if (r->pos >= r->len || r->text[r->pos] != '"') {
				json_fail(r, "expected a member name");
				break;
			}
			if (!(key = read_string(r)))
				break;
			skip_space(r);
			if (r->pos >= r->len || r->text[r->pos] != ':') {
				free(key);
				json_fail(r, "expected ':'");
				break;
			}
			r->pos++;
		}
		TilecJson *v = read_value(r, depth + 1);
		if (!v || !push(r, j, key, v)) {
			free(key);
			tilec_rt_json_free(v);
			break;
		}
		skip_space(r);
		if (r->pos < r->len && r->text[r->pos] == ',') {
			r->pos++;
			continue;
		}
		if (r->pos < r->len && r->text[r->pos] == close) {
			r->pos++;
			return j;
		}
		json_fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
		break;
	}
	tilec_rt_json_free(j);
	return NULL;
}

static TilecJson *
read_value(Reader *r, int depth)
{
	if (depth > JSON_MAX_DEPTH) {
		json_fail(r, "nested too deeply");
		return NULL;
	}
	skip_space(r);
	if (r->pos >= r->len) {
		json_fail(r, "unexpected end of the document");
		return NULL;
	}
	char c = r->text[r->pos];
	if (c == '{' || c == '[')
		return read_container(r, depth, c == '{');
	if (c == '"') {
		char *s = read_string(r);
		if (!s)
			return NULL;
		TilecJson *j = node(r, TILEC_JSON_STRING);
		if (!j) {
			free(s);
			return NULL;
		}
		j->string = s;
		return j;
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return read_number(r);
	bool is_true = literal(r, "true");
	if (is_true || literal(r, "false")) {
		TilecJson *j = node(r, TILEC_JSON_BOOL);
		if (j)
			j->boolean = is_true;
		return j;
	}
	if (literal(r, "null"))
		return node(r, TILEC_JSON_NULL);
	json_fail(r, "unexpected character");
	return NULL;
}

TilecJson *
tilec_rt_json_parse(const char *text, size_t len, char *error, size_t nerror)
{
	Reader r = { .text = text, .len = len, .error = error,
		     .nerror = nerror };
	if (nerror)
		error[0] = '\0';
	TilecJson *j = read_value(&r, 0);
	if (j) {
		skip_space(&r);
		if (r.pos != r.len) {
			json_fail(&r, "text after the document");
			tilec_rt_json_free(j);
			return NULL;
		}
	}
	return j;
}

void
tilec_rt_json_free(TilecJson *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->n; i++) {
		tilec_rt_json_free(j->items[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->items);
	free(j->keys);
	free(j->string);
	free(j);
}

const TilecJson *
tilec_rt_json_get(const TilecJson *j, const char *key)
{
	if (!j || j->kind != TILEC_JSON_OBJECT)
		return NULL;
	for (int i = 0; i < j->n; i++)
		if (strcmp(j->keys[i], key) == 0)
			return j->items[i];
	return NULL;
}
