/*
 * launch.c - a kernel's launch manifest: what a host needs to call it.
 *
 * One JSON object per kernel: the parameters in signature order (name,
 * kind, dtype, const-ness, tensor extents as expressions), the grid extents
 * as expressions over the scalar parameters and tunables, threads per
 * block, dynamic shared memory, and the bound tunables.  Expressions use the
 * IR printer's C-like syntax (ceildiv, min, max, integer arithmetic).
 *
 * Tools that launch generated sources without the translator (a GPU test
 * machine, a tuning farm) read this instead of parsing the tile program:
 * `tilec FILE -t cuda --emit=launch`.
 */
#include "tilec_int.h"

#include <string.h>

/* A JSON string (names and printed expressions need only these escapes). */
static void
json_str(TcBuf *b, const char *s)
{
	tc_buf_puts(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			tc_buf_printf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			tc_buf_printf(b, "\\u%04x", *s);
		else
			tc_buf_printf(b, "%c", *s);
	}
	tc_buf_puts(b, "\"");
}

static void
json_expr(TcBuf *b, const TcExpr *e)
{
	TcBuf t;
	tc_buf_init(&t);
	if (e)
		tc_print_expr(&t, e);
	else
		tc_buf_puts(&t, "1");
	json_str(b, t.data);
	tc_buf_free(&t);
}

void
tc_launch_json(const TcProgram *p, const TcKernel *k, const TcTarget *t,
	       TcBuf *b)
{
	long long threads = t->kind == TC_TARGET_OPENMP ? 1 : 128;
	if (k->threads)
		tc_expr_const(k->threads, &threads);
	tc_buf_puts(b, "{\"kernel\": ");
	json_str(b, k->name);
	tc_buf_puts(b, ", \"source\": ");
	json_str(b, p->path);
	tc_buf_puts(b, ", \"target\": ");
	json_str(b, t->name);
	tc_buf_puts(b, ", \"arch\": ");
	json_str(b, t->arch ? t->arch : "");
	tc_buf_printf(b, ", \"threads\": %lld, \"smem_bytes\": %lld",
		      threads, k->smem_bytes);
	tc_buf_puts(b, ",\n \"tunables\": {");
	for (int i = 0; i < p->tunables.len; i++) {
		const TcVar *v = p->tunables.items[i];
		tc_buf_puts(b, i ? ", " : "");
		json_str(b, v->name);
		tc_buf_printf(b, ": %lld", v->value);
	}
	tc_buf_puts(b, "},\n \"params\": [");
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		tc_buf_puts(b, i ? ",\n   {\"name\": " : "\n   {\"name\": ");
		json_str(b, v->name);
		tc_buf_printf(b, ", \"kind\": \"%s\", \"dtype\": \"%s\"",
			      v->kind == TC_VAR_TENSOR ? "tensor" : "scalar",
			      tc_dtype_name(v->dtype));
		if (v->kind == TC_VAR_TENSOR) {
			tc_buf_printf(b, ", \"const\": %s, \"shape\": [",
				      v->is_const ? "true" : "false");
			for (int j = 0; j < v->rank; j++) {
				tc_buf_puts(b, j ? ", " : "");
				json_expr(b, v->shape[j]);
			}
			tc_buf_puts(b, "]");
		}
		tc_buf_puts(b, "}");
	}
	tc_buf_puts(b, "],\n \"grid\": [");
	for (int d = 0; d < 3; d++) {
		tc_buf_puts(b, d ? ", " : "");
		json_expr(b, k->grid[d]);
	}
	tc_buf_puts(b, "]}\n");
}
