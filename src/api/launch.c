/*
 * launch.c - launch manifests: what a host needs to call a kernel.
 *
 * A launch document (`tilec FILE -t cuda --emit=launch`, an export's
 * K.launch.json, tilec_translator_manifest) is one JSON object:
 * {"format": "tilec-launch/1", "kernels": [KERNEL, ...]}.  Each KERNEL
 * object holds the kernel's ABI (abi.c) as data: the parameters in
 * signature order (name, kind, dtype, the C type passed, for tensors
 * const-ness, rank and shape, for scalars the tensor dims they are the
 * extent of), the grid extents, threads per block, dynamic shared memory,
 * the bound tunables and the tolerances outputs are checked with
 * (tolerance.c).  Every size is an expression tree over the
 * scalar parameters and the tunables, evaluated with C's integer
 * semantics; docs/launch.md has the grammar.
 *
 * Tools that launch generated sources without the translator (a GPU test
 * machine, a tuning farm, the runtime's checked launch, the Python
 * package) read this instead of parsing the tile program.
 */
#include "ir/tilec_int.h"

#include <string.h>

/* A JSON string (names and paths need only these escapes). */
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

static void json_expr(TcBuf *b, const TcExpr *e);

/* {"op": OP, "args": [...]} */
static void
json_op(TcBuf *b, const char *op, const TcExpr *const *args, int n)
{
	tc_buf_puts(b, "{\"op\": ");
	json_str(b, op);
	tc_buf_puts(b, ", \"args\": [");
	for (int i = 0; i < n; i++) {
		tc_buf_puts(b, i ? ", " : "");
		json_expr(b, args[i]);
	}
	tc_buf_puts(b, "]}");
}

/* An expression as a tree (docs/launch.md, "Expressions").  check.c
 * allows only scalar parameters and tunables in sizes. */
static void
json_expr(TcBuf *b, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT:
		tc_buf_printf(b, "{\"int\": %lld}", e->u.ival);
		return;
	case TC_EX_FLOAT:
		tc_buf_printf(b, "{\"float\": %.17g}", e->u.fval);
		return;
	case TC_EX_SMS:
		tc_buf_puts(b, "{\"device\": \"sms\"}");
		return;
	case TC_EX_VAR:
		tc_assert(e->u.var->kind == TC_VAR_SCALAR ||
			  e->u.var->kind == TC_VAR_TUNABLE);
		tc_buf_puts(b, e->u.var->kind == TC_VAR_SCALAR ? "{\"param\": "
							       : "{\"tunable\": ");
		json_str(b, e->u.var->name);
		tc_buf_puts(b, "}");
		return;
	case TC_EX_BINARY: {
		const TcExpr *args[2] = { e->u.bin.lhs, e->u.bin.rhs };
		json_op(b, tc_binop_name(e->u.bin.op), args, 2);
		return;
	}
	case TC_EX_UNARY:
		json_op(b, e->u.un.op == TC_UOP_NEG ? "neg"
						    : tc_unop_name(e->u.un.op),
			(const TcExpr *const *)&e->u.un.arg, 1);
		return;
	case TC_EX_SELECT: {
		const TcExpr *args[3] = { e->u.sel.cond, e->u.sel.then,
					  e->u.sel.els };
		json_op(b, "?:", args, 3);
		return;
	}
	case TC_EX_CALL:
		json_op(b, tc_func_name(e->u.call.fn),
			(const TcExpr *const *)e->u.call.args, e->u.call.nargs);
		return;
	case TC_EX_CAST:
		tc_buf_puts(b, "{\"op\": \"cast\", \"dtype\": ");
		json_str(b, tc_dtype_name(e->dtype));
		tc_buf_puts(b, ", \"args\": [");
		json_expr(b, e->u.cast.arg);
		tc_buf_puts(b, "]}");
		return;
	default:
		tc_unreachable();
	}
}

void
tc_launch_json(const TcProgram *p, const TcKernel *k, const TcTarget *t,
	       TcBuf *b)
{
	TcArena *a = tc_arena_new();
	const TcAbi *abi = tc_abi_of(a, k, t);
	tc_buf_puts(b, "{\"kernel\": ");
	json_str(b, k->name);
	tc_buf_puts(b, ", \"source\": ");
	json_str(b, p->path);
	tc_buf_puts(b, ", \"target\": ");
	json_str(b, t->name);
	tc_buf_puts(b, ", \"arch\": ");
	json_str(b, t->arch ? t->arch : "");
	tc_buf_printf(b, ", \"threads\": %lld, \"smem_bytes\": %lld",
		      abi->threads, abi->smem_bytes);
	tc_buf_puts(b, ",\n  \"tunables\": {");
	for (int i = 0; i < p->tunables.len; i++) {
		const TcVar *v = p->tunables.items[i];
		tc_buf_puts(b, i ? ", " : "");
		json_str(b, v->name);
		tc_buf_printf(b, ": %lld", v->value);
	}
	tc_buf_puts(b, "},\n  \"params\": [");
	for (int i = 0; i < abi->nparams; i++) {
		const TcAbiParam *ap = &abi->params[i];
		const TcVar *v = ap->var;
		tc_buf_puts(b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		json_str(b, v->name);
		tc_buf_printf(b, ", \"kind\": \"%s\", \"dtype\": \"%s\", "
			      "\"ctype\": ", ap->tensor ? "tensor" : "scalar",
			      tc_dtype_name(v->dtype));
		json_str(b, ap->c_type);
		if (ap->tensor) {
			tc_buf_printf(b, ", \"const\": %s, \"rank\": %d, "
				      "\"shape\": [",
				      v->is_const ? "true" : "false", v->rank);
			for (int j = 0; j < v->rank; j++) {
				tc_buf_puts(b, j ? ", " : "");
				json_expr(b, v->shape[j]);
			}
			tc_buf_puts(b, "]");
		} else {
			tc_buf_puts(b, ", \"extent_of\": [");
			for (int j = 0; j < ap->nextent_of; j++) {
				const TcAbiExtent *x = &ap->extent_of[j];
				const TcVar *tv = abi->params[x->param].var;
				tc_buf_puts(b, j ? ", " : "");
				tc_buf_puts(b, "{\"tensor\": ");
				json_str(b, tv->name);
				tc_buf_printf(b, ", \"dim\": %d}", x->dim);
			}
			tc_buf_puts(b, "]");
		}
		tc_buf_puts(b, "}");
	}
	tc_buf_puts(b, "]");
	if (abi->ntmaps) {
		tc_buf_puts(b, ",\n  \"tensor_maps\": [");
		for (int i = 0; i < abi->ntmaps; i++) {
			const TcTensorMap *m = abi->tmaps[i];
			tc_buf_puts(b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
			json_str(b, m->name);
			tc_buf_puts(b, ", \"tensor\": ");
			json_str(b, m->tensor->name);
			tc_buf_puts(b, ", \"box\": [");
			for (int d = 0; d < m->tensor->rank; d++)
				tc_buf_printf(b, "%s%d", d ? ", " : "", m->box[d]);
			tc_buf_printf(b, "], \"swizzle\": %d}", m->swizzle);
		}
		tc_buf_puts(b, "]");
	}
	if (k->aligned.len) {
		tc_buf_puts(b, ",\n  \"aligned\": [");
		for (int i = 0; i < k->aligned.len; i++) {
			tc_buf_puts(b, i ? ", " : "");
			json_str(b, ((const TcVar *)k->aligned.items[i])->name);
		}
		tc_buf_puts(b, "]");
	}
	tc_buf_puts(b, ",\n  \"grid\": [");
	for (int d = 0; d < 3; d++) {
		tc_buf_puts(b, d ? ",\n           " : "");
		if (k->grid[d])
			json_expr(b, k->grid[d]);
		else
			tc_buf_puts(b, "{\"int\": 1}");
	}
	tc_buf_puts(b, "],\n  \"tolerance\": ");
	tc_tolerance_json(k, b);
	tc_buf_puts(b, "}");
	tc_arena_free(a);
}

void
tc_launch_document(const TcProgram *p, const TcKernel *only,
		   const TcTarget *t, const char *extra, TcBuf *b)
{
	tc_buf_printf(b, "{\"format\": \"%s\", %s\"kernels\": [",
		      TC_LAUNCH_FORMAT, extra ? extra : "");
	for (int i = 0, n = 0; i < p->kernels.len; i++) {
		if (only && p->kernels.items[i] != only)
			continue;
		tc_buf_puts(b, n++ ? ",\n " : "\n ");
		tc_launch_json(p, p->kernels.items[i], t, b);
	}
	tc_buf_puts(b, "]}\n");
}
