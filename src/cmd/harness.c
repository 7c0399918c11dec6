/*
 * harness.c - one kernel run and checked against the reference
 * interpreter, and timed: the steps `tilec run` and `tilec tune` share
 * (harness.h lists them).
 *
 * The program is parsed once (or the caller's parse is taken) and copied
 * (tc_program_clone) for each use: the reference is a copy specialized
 * and checked (the IR before any target pass); the kernel's signature
 * gives the tensors and their extents (evaluated from the bound scalar
 * values).  Another copy is scheduled and emitted for the target
 * (tc_translate_parsed) and compiled through the runtime, with the
 * embedded helper headers visible as "tilec/...".
 * Inputs (const tensors and tensors the kernel reads) are filled with
 * seeded random values away from zero; outputs are poisoned (a NaN with a
 * recognizable payload, 0xAB bytes for integers).  The kernel and the
 * interpreter run on identical inputs, each with its own copy of every
 * tensor it writes.
 *
 * On a GPU target the runtime context is opened on a device first, the
 * translator's arch defaults to the device's, every tensor gets a device
 * copy, and the launch configuration comes from the translated kernel:
 * the grid extents evaluated on the scalar values, the threads per block,
 * the shared memory the smem pass planned -- the numbers
 * `tilec FILE -t cuda --emit=launch` prints.
 */
#include "cmd/harness.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input buffers rotated through while timing: enough to exceed the last
 * level cache, within a memory budget. */
#define BENCH_ROTATE_BYTES (256ll << 20)
#define BENCH_MAX_SETS 16
#define BENCH_MEMORY_BUDGET (4ll << 30)

static const char *const fail_names[TC_HARNESS_FAIL_COUNT] = {
	[TC_HARNESS_OK] = "ok",
	[TC_HARNESS_SETUP] = "setup",
	[TC_HARNESS_DEVICE] = "device",
	[TC_HARNESS_TRANSLATE] = "translate",
	[TC_HARNESS_COMPILE] = "compile",
	[TC_HARNESS_REFERENCE] = "reference",
	[TC_HARNESS_LAUNCH] = "launch",
	[TC_HARNESS_MISMATCH] = "mismatch",
	[TC_HARNESS_BENCH] = "bench",
};

const char *
tc_harness_fail_name(TcHarnessFail f)
{
	return f >= 0 && f < TC_HARNESS_FAIL_COUNT ? fail_names[f] : "?";
}

/* --- Failures ----------------------------------------------------------------- */

static bool failf(TcHarness *h, TcHarnessFail kind, const char *fmt, ...)
	TC_PRINTF(3, 4);

/* Record why a step stopped (the first reason stands); returns false. */
static bool
failf(TcHarness *h, TcHarnessFail kind, const char *fmt, ...)
{
	if (h->fail != TC_HARNESS_OK)
		return false;
	TcBuf msg;
	va_list ap;
	tc_buf_init(&msg);
	va_start(ap, fmt);
	tc_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	h->fail = kind;
	free(h->message);
	h->message = tc_buf_take(&msg);
	return false;
}

/* What the translator and the reference said, as the log. */
static void
keep_diagnostics(TcHarness *h)
{
	if (h->log)
		return;
	TcBuf d;
	tc_buf_init(&d);
	tc_buf_puts(&d, h->ref_diags.text.data ? h->ref_diags.text.data : "");
	tc_buf_puts(&d, h->gen_diags.text.data ? h->gen_diags.text.data : "");
	h->log = d.len ? tc_buf_take(&d) : NULL;
	tc_buf_free(&d);
}

/* --- Loading: the runtime, the reference program, the kernel ----------------------- */

static bool
open_context(TcHarness *h)
{
	const TcHarnessSpec *s = &h->spec;
	int backend = tilec_backend_from_name(s->target);
	h->gpu = backend != TILEC_BACKEND_OPENMP;
	tilec_init_error ierr;
	h->ctx = tilec_context_new((tilec_backend)backend, h->gpu ? s->device : 0,
				   &ierr);
	if (!h->ctx)
		return failf(h, TC_HARNESS_DEVICE, "%s", ierr.message);
	if (s->cc && tilec_set_compiler(h->ctx, s->cc) != TILEC_OK)
		return failf(h, TC_HARNESS_DEVICE, "%s", tilec_error(h->ctx));
	tilec_device_get_info(h->ctx, &h->device);
	return true;
}

/* The translator's arch for a GPU without one given: the device's own if
 * the translator knows it, else the newest it knows that the device runs
 * (sm_80 code runs on every later NVIDIA GPU). */
static const char *
gpu_translator_arch(TcHarness *h)
{
	TcTarget t;
	if (tc_target_init(&t, h->spec.target, h->device.arch))
		return h->device.arch;
	if (strcmp(h->spec.target, "hip") == 0) {
		failf(h, TC_HARNESS_SETUP, "%s (%s) is not an architecture tilec "
		      "generates HIP for (gfx90a, gfx942); name one with --arch",
		      h->device.name, h->device.arch);
		return NULL;
	}
	if (h->device.cc_major >= 8 && tc_target_init(&t, "cuda", "sm_80"))
		return "sm_80";
	failf(h, TC_HARNESS_SETUP, "%s (%s) is older than every architecture "
	      "tilec generates CUDA for (sm_80 and later)",
	      h->device.name, h->device.arch);
	return NULL;
}

static bool
target_error(TcHarness *h, const char *arch)
{
	TcBuf why;
	tc_buf_init(&why);
	tc_target_explain(&why, h->spec.target, arch);
	failf(h, TC_HARNESS_SETUP, "%s", why.data);
	tc_buf_free(&why);
	return false;
}

/* The reference program: parse, specialize, check; pick the kernel. */
static bool
load_reference(TcHarness *h)
{
	const TcHarnessSpec *s = &h->spec;
	if (!h->parsed)
		h->parsed = tc_parse(h->ref_arena, s->file, s->text, &h->opt,
				     &h->ref_diags);
	TcProgram *p = h->parsed ? tc_program_clone(h->ref_arena, h->parsed)
				 : NULL;
	if (!p || !tc_specialize(h->ref_arena, p, &h->opt, &h->ref_diags) ||
	    !tc_check(h->ref_arena, p, &h->opt, &h->ref_diags) ||
	    h->ref_diags.errors > 0) {
		keep_diagnostics(h);
		/* The diagnostics say it; no sentence of ours. */
		h->fail = TC_HARNESS_SETUP;
		return false;
	}
	h->ref_prog = p;
	TcBuf names;
	tc_buf_init(&names);
	for (int i = 0; i < p->kernels.len; i++) {
		const TcKernel *k = p->kernels.items[i];
		tc_buf_printf(&names, "%s%s", i ? ", " : "", k->name);
		if (s->kernel ? strcmp(k->name, s->kernel) == 0
			      : p->kernels.len == 1)
			h->kernel = k;
	}
	if (!h->kernel) {
		if (p->kernels.len == 0)
			failf(h, TC_HARNESS_SETUP, "%s defines no TILE_KERNEL",
			      s->file);
		else if (s->kernel)
			failf(h, TC_HARNESS_SETUP, "%s has no kernel named '%s' "
			      "(kernels: %s)", s->file, s->kernel, names.data);
		else
			failf(h, TC_HARNESS_SETUP, "%s has %d kernels (%s); pick "
			      "one with --kernel NAME",
			      s->file, p->kernels.len, names.data);
	}
	tc_buf_free(&names);
	return h->kernel != NULL;
}

bool
tc_harness_load(TcHarness *h, const TcHarnessSpec *spec)
{
	memset(h, 0, sizeof *h);
	h->spec = *spec;
	TcHarnessSpec *s = &h->spec;
	tc_buf_init(&h->src);
	if (tilec_backend_from_name(s->target) < 0 ||
	    (s->arch && !tc_options_init(&h->opt, s->target, s->arch)))
		return target_error(h, s->arch);
	if (s->no_runtime)
		h->gpu = tilec_backend_from_name(s->target) != TILEC_BACKEND_OPENMP;
	else if (!open_context(h))
		return false;
	if (!s->text) {
		if (!(h->text = tc_read_file(s->file, &s->len)))
			return failf(h, TC_HARNESS_SETUP, "cannot read %s: %s",
				     s->file, strerror(errno));
		s->text = h->text;
	}
	tc_diags_init(&h->ref_diags, s->file, s->text, s->len);
	tc_diags_init(&h->gen_diags, s->file, s->text, s->len);
	h->ref_diags.to_stderr = !s->quiet;
	const char *arch = s->arch;
	if (h->gpu && !arch && !s->no_runtime && !(arch = gpu_translator_arch(h)))
		return false;
	if (!tc_options_init(&h->opt, s->target, arch))
		return target_error(h, arch);
	h->opt.cpu_strip = s->cpu_strip;
	h->opt.ndefines = s->ndefines;
	for (int i = 0; i < s->ndefines; i++) {
		h->opt.define_name[i] = s->define_name[i];
		h->opt.define_value[i] = s->define_value[i];
		h->opt.define_loc[i] = (TcLoc){ s->define_origin
							? s->define_origin
							: "<command line>",
						0, 0 };
	}
	h->ref_arena = tc_arena_new();
	h->gen_arena = tc_arena_new();
	h->parsed = s->parsed;
	if (s->config) {
		/* The record's values after the bindings, which win. */
		char device[256];
		tc_tune_device_name(s->target, h->device.name, device,
				    sizeof device);
		/* The kernel, where named, for the record's "kernel". */
		h->opt.kernel = s->kernel;
		if (!tc_config_apply(s->config, s->text, s->len, device,
				     h->ref_arena, &h->opt, &h->ref_diags)) {
			keep_diagnostics(h);
			return failf(h, TC_HARNESS_SETUP, "cannot use the tuning "
				     "record %s", s->config);
		}
	}
	if (!load_reference(h))
		return false;
	const TcKernel *k = h->kernel;
	h->nparams = k->params.len;
	h->params = calloc((size_t)h->nparams + 1, sizeof *h->params);
	int *role = calloc((size_t)h->nparams + 1, sizeof *role);
	h->kargs = calloc((size_t)h->nparams + 1, sizeof *h->kargs);
	h->rargs = calloc((size_t)h->nparams + 1, sizeof *h->rargs);
	if (!h->params || !role || !h->kargs || !h->rargs) {
		free(role);
		return failf(h, TC_HARNESS_SETUP, "out of memory");
	}
	tc_tensor_roles(k, role);
	for (int i = 0; i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		p->var = k->params.items[i];
		p->role = (role[i] & TC_ROLE_READ ? TC_HARNESS_IN : 0) |
			  (role[i] & TC_ROLE_WRITE ? TC_HARNESS_OUT : 0);
		p->unused = p->var->kind == TC_VAR_TENSOR && role[i] == 0;
		if (p->var->kind == TC_VAR_TENSOR &&
		    (p->var->is_const || p->role == 0))
			p->role = TC_HARNESS_IN;
	}
	free(role);
	return true;
}

/* --- Binding: scalar values, tensor storage, ranges -------------------------------- */

static const char *
find_shape(const TcHarnessShape *s, const char *name)
{
	const char *v = NULL;
	for (int i = 0; i < s->nshapes; i++)
		if (strcmp(s->shape_name[i], name) == 0)
			v = s->shape_value[i];
	return v;
}

/* Whether a --shape value that tc_opt_integer or tc_opt_number
 * refused is a number all the same, one outside 64 bits or a double's
 * range: an error of fit, not of form. */
static bool
out_of_range(const char *s, bool integer)
{
	char *end;
	errno = 0;
	if (integer)
		(void)strtoll(s, &end, 10);
	else
		(void)strtod(s, &end);
	return errno == ERANGE && end != s && !*end;
}

/* Scalar values from the shape (or the float defaults).  A float
 * parameter takes inf and nan as given; a finite value that rounds to
 * infinity in its type does not fit. */
static bool
bind_scalars(TcHarness *h, const TcHarnessShape *s)
{
	const TcKernel *k = h->kernel;
	TcBuf names;
	tc_buf_init(&names);
	for (int i = 0; i < h->nparams; i++) {
		const TcVar *v = h->params[i].var;
		if (v->kind == TC_VAR_SCALAR)
			tc_buf_printf(&names, "%s%s", names.len ? ", " : "",
				      v->name);
	}
	bool ok = true;
	for (int i = 0; ok && i < s->nshapes; i++) {
		bool known = false;
		for (int j = 0; j < h->nparams; j++)
			known |= h->params[j].var->kind == TC_VAR_SCALAR &&
				 strcmp(h->params[j].var->name,
					s->shape_name[i]) == 0;
		if (!known)
			ok = failf(h, TC_HARNESS_SETUP, "--shape %s: kernel %s "
				   "has no scalar parameter of that name (it "
				   "has: %s)", s->shape_name[i], k->name,
				   names.len ? names.data : "none");
	}
	for (int i = 0; ok && i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		const TcVar *v = p->var;
		if (v->kind != TC_VAR_SCALAR)
			continue;
		const char *str = find_shape(s, v->name);
		if (tc_dtype_is_float(v->dtype)) {
			double x = strncmp(v->name, "eps", 3) == 0 ? 1e-5 : 1.0;
			if (str && !tc_opt_number(str, &x)) {
				if (out_of_range(str, false))
					ok = failf(h, TC_HARNESS_SETUP, "--shape "
						   "%s=%s does not fit in %s",
						   v->name, str,
						   tc_dtype_name(v->dtype));
				else
					ok = failf(h, TC_HARNESS_SETUP, "--shape "
						   "%s=%s: not a number",
						   v->name, str);
				continue;
			}
			if (v->dtype != TC_DT_F64 && isfinite(x) &&
			    isinf((float)x)) {
				ok = failf(h, TC_HARNESS_SETUP, "--shape %s=%s "
					   "does not fit in %s", v->name, str,
					   tc_dtype_name(v->dtype));
				continue;
			}
			p->value = x;
			if (v->dtype == TC_DT_F64)
				p->scalar.f64 = x;
			else
				p->scalar.f32 = (float)x;
			continue;
		}
		long long x;
		if (!str) {
			ok = failf(h, TC_HARNESS_SETUP, "no value for %s: give "
				   "every integer parameter of %s with --shape "
				   "(%s)", v->name, k->name, names.data);
			continue;
		}
		if (!tc_opt_integer(str, &x)) {
			if (out_of_range(str, true))
				ok = failf(h, TC_HARNESS_SETUP, "--shape %s=%s "
					   "does not fit in %s", v->name, str,
					   tc_dtype_name(v->dtype));
			else
				ok = failf(h, TC_HARNESS_SETUP, "--shape %s=%s: "
					   "not an integer", v->name, str);
			continue;
		}
		p->value = (double)x;
		p->ivalue = x;
		bool fits = true;
		switch (v->dtype) {
		case TC_DT_I64: p->scalar.i64 = x; break;
		case TC_DT_I32:
			fits = x >= INT32_MIN && x <= INT32_MAX;
			p->scalar.i32 = (int32_t)x;
			break;
		case TC_DT_I8:
			fits = x >= INT8_MIN && x <= INT8_MAX;
			p->scalar.i8 = (int8_t)x;
			break;
		case TC_DT_U8:
		case TC_DT_BOOL:
			fits = x >= 0 && x <= (v->dtype == TC_DT_BOOL ? 1 : 255);
			p->scalar.u8 = (uint8_t)x;
			break;
		default:
			ok = failf(h, TC_HARNESS_SETUP, "parameter %s has type "
				   "%s, which `tilec run` cannot pass",
				   v->name, tc_dtype_name(v->dtype));
			continue;
		}
		if (!fits)
			ok = failf(h, TC_HARNESS_SETUP, "--shape %s=%lld does not "
				   "fit in %s", v->name, x,
				   tc_dtype_name(v->dtype));
	}
	tc_buf_free(&names);
	return ok;
}

/* Which scalar parameters an extent mentions, for error messages. */
static void
extent_sources(const TcHarness *h, const TcExpr *e, TcBuf *out)
{
	switch (e->kind) {
	case TC_EX_VAR:
		if (e->u.var->kind == TC_VAR_SCALAR) {
			const TcHarnessParam *p = &h->params[e->u.var->param];
			if (tc_dtype_is_float(e->u.var->dtype))
				tc_buf_printf(out, "%s%s=%g", out->len ? ", " : "",
					      e->u.var->name, p->value);
			else
				tc_buf_printf(out, "%s%s=%lld",
					      out->len ? ", " : "",
					      e->u.var->name, p->ivalue);
		}
		break;
	case TC_EX_BINARY:
		extent_sources(h, e->u.bin.lhs, out);
		extent_sources(h, e->u.bin.rhs, out);
		break;
	case TC_EX_UNARY: extent_sources(h, e->u.un.arg, out); break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			extent_sources(h, e->u.call.args[i], out);
		break;
	case TC_EX_CAST: extent_sources(h, e->u.cast.arg, out); break;
	default:
		break;
	}
}

static void *
alloc_tensor(size_t bytes)
{
	size_t n = (bytes + 63) / 64 * 64;
	return aligned_alloc(64, n ? n : 64);
}

/* Storage a CPU kernel runs on: the runtime's, whose pages are first
 * touched by threads on the cores the kernel's threads use (its memory
 * nodes); the reference's copies and a GPU's host copies are plain. */
static void *
alloc_kernel_tensor(TcHarness *h, size_t bytes)
{
	void *p = NULL;
	if (h->gpu || !h->ctx)
		return alloc_tensor(bytes);
	return tilec_alloc(h->ctx, bytes ? bytes : 1, &p) == TILEC_OK ? p
								      : NULL;
}

static void
free_kernel_tensor(TcHarness *h, void *p)
{
	if (h->gpu || !h->ctx)
		free(p);
	else
		tilec_free(h->ctx, p);
}

/* Free every tensor's storage (host and device). */
static void
free_tensors(TcHarness *h)
{
	for (int i = 0; h->params && i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		if (p->ref != p->data)
			free(p->ref);
		free_kernel_tensor(h, p->data);
		if (p->dev)
			tilec_free(h->ctx, p->dev);
		p->ref = p->data = p->dev = NULL;
	}
	free(h->out);
	h->out = NULL;
	h->nout = 0;
	h->placed = false;
}

/* Tensor extents and storage; the argument vectors. */
static bool
setup_params(TcHarness *h)
{
	const TcKernel *k = h->kernel;
	for (int i = 0; i < h->nparams; i++)
		if (h->params[i].var->kind == TC_VAR_SCALAR)
			h->kargs[i] = h->rargs[i] = &h->params[i].scalar;
	double total = 0;
	for (int i = 0; i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		const TcVar *v = p->var;
		if (v->kind != TC_VAR_TENSOR)
			continue;
		double count = 1;
		for (int j = 0; j < v->rank; j++) {
			double e;
			if (!tc_interp_eval(k, v->shape[j], h->kargs, 0, &e,
					    &h->ref_diags)) {
				keep_diagnostics(h);
				h->fail = TC_HARNESS_SETUP;
				return false;
			}
			if (e < 0) {
				TcBuf why;
				tc_buf_init(&why);
				extent_sources(h, v->shape[j], &why);
				failf(h, TC_HARNESS_SETUP, "tensor %s would have "
				      "extent %.0f along dim %d (from %s); "
				      "extents must be >= 0",
				      v->name, e, j,
				      why.len ? why.data : "its declaration");
				tc_buf_free(&why);
				return false;
			}
			p->ext[j] = (long long)e;
			count *= e;
		}
		double bytes = count * tc_dtype_storage_bits(v->dtype) / 8.0;
		total += bytes;
		if (total > 16e9)
			return failf(h, TC_HARNESS_SETUP, "the tensors would take "
				     "%.1f GB; that is more than `tilec run` "
				     "allocates", total / 1e9);
		p->count = (size_t)count;
		p->bytes = tc_elem_bytes(v->dtype, p->count);
		p->data = alloc_kernel_tensor(h, p->bytes);
		p->ref = (p->role & TC_HARNESS_OUT) ? alloc_tensor(p->bytes)
						     : p->data;
		if (!p->data || !p->ref)
			return failf(h, TC_HARNESS_SETUP, "out of memory for "
				     "tensor %s (%zu bytes)", v->name, p->bytes);
		p->slot = p->data;
		p->ref_slot = p->ref;
		h->kargs[i] = &p->slot;
		h->rargs[i] = &p->ref_slot;
	}
	return true;
}

/* Give the tensors named by the shape's ranges their value ranges. */
static bool
resolve_ranges(TcHarness *h, const TcHarnessShape *s)
{
	const char **names = calloc((size_t)h->nparams + 1, sizeof *names);
	double *values = calloc((size_t)h->nparams + 1, sizeof *values);
	int nscalars = 0;
	for (int j = 0; names && values && j < h->nparams; j++)
		if (h->params[j].var->kind == TC_VAR_SCALAR) {
			names[nscalars] = h->params[j].var->name;
			values[nscalars++] = h->params[j].value;
		}
	bool ok = names && values;
	if (!ok)
		failf(h, TC_HARNESS_SETUP, "out of memory");
	for (int i = 0; i < h->nparams; i++)
		h->params[i].ranged = false;
	for (int i = 0; ok && i < s->nranges; i++) {
		const char *name = s->range_name[i];
		TcHarnessParam *p = NULL;
		TcBuf msg;
		tc_buf_init(&msg);
		for (int j = 0; j < h->nparams; j++) {
			const TcVar *v = h->params[j].var;
			if (v->kind != TC_VAR_TENSOR)
				continue;
			if (h->params[j].role & TC_HARNESS_IN)
				tc_buf_printf(&msg, "%s%s", msg.len ? ", " : "",
					      v->name);
			if (strcmp(v->name, name) == 0)
				p = &h->params[j];
		}
		if (!p)
			ok = failf(h, TC_HARNESS_SETUP, "--range %s: kernel %s "
				   "has no tensor parameter of that name (its "
				   "inputs: %s)", name, h->kernel->name,
				   msg.len ? msg.data : "none");
		else if (!(p->role & TC_HARNESS_IN))
			ok = failf(h, TC_HARNESS_SETUP, "--range %s: the kernel "
				   "only writes %s, so it has no input values "
				   "to choose", name, name);
		tc_buf_free(&msg);
		if (ok && !tc_opt_range_values(name, s->range_lo[i],
					       s->range_hi[i], p->var->dtype,
					       nscalars, names, values, &p->lo,
					       &p->hi, &msg))
			ok = failf(h, TC_HARNESS_SETUP, "%s", msg.data);
		tc_buf_free(&msg);
		if (ok)
			p->ranged = true;
	}
	free(names);
	free(values);
	return ok;
}

void
tc_harness_unbind(TcHarness *h)
{
	free_tensors(h);
}

bool
tc_harness_bind(TcHarness *h, const TcHarnessShape *shape)
{
	h->fail = TC_HARNESS_OK;
	free_tensors(h);
	if (!bind_scalars(h, shape) || !setup_params(h) ||
	    !resolve_ranges(h, shape))
		return false;
	h->tol = shape->tol >= 0 ? shape->tol : tc_kernel_tolerance(h->kernel);
	return true;
}

/* --- Compiling ------------------------------------------------------------------ */

/* The program scheduled for the target: with a given source on a GPU,
 * only for the launch numbers (the passes, no emitter). */
static bool
translate(TcHarness *h)
{
	const TcHarnessSpec *s = &h->spec;
	if (h->gen_kernel)
		return true; /* adopted (tc_harness_adopt) */
	if (s->source) {
		size_t len;
		char *text = tc_read_file(s->source, &len);
		if (!text)
			return failf(h, TC_HARNESS_SETUP, "cannot read %s: %s",
				     s->source, strerror(errno));
		tc_buf_printf(&h->src, "%.*s", (int)len, text);
		free(text);
		if (!h->gpu)
			return true;
	}
	double t0 = tilec_now();
	/* The program as parsed, scheduled for the target. */
	TcProgram *prog = tc_program_clone(h->gen_arena, h->parsed);
	h->opt.kernel = h->kernel->name;
	bool ok = s->source ? tc_compile_parsed(h->gen_arena, prog, &h->opt,
						&h->gen_diags)
			    : tc_translate_parsed(h->gen_arena, prog, &h->opt,
						  &h->gen_diags, &h->src);
	if (!s->source)
		h->translate_s = tilec_now() - t0;
	if (!ok || h->gen_diags.errors > 0) {
		if (!s->quiet)
			fputs(h->gen_diags.text.data ? h->gen_diags.text.data
						     : "",
			      stderr);
		keep_diagnostics(h);
		return failf(h, TC_HARNESS_TRANSLATE, "translating %s for %s "
			     "failed", s->file, h->opt.target.name);
	}
	for (int i = 0; prog && i < prog->kernels.len; i++) {
		const TcKernel *k = prog->kernels.items[i];
		if (strcmp(k->name, h->kernel->name) == 0)
			h->gen_kernel = k;
	}
	if (!h->gen_kernel)
		return failf(h, TC_HARNESS_TRANSLATE, "translating %s for %s "
			     "produced no kernel %s", s->file,
			     h->opt.target.name, h->kernel->name);
	return true;
}

static bool
jit(TcHarness *h)
{
	const TcHarnessSpec *s = &h->spec;
	/* The helper headers, as generated code includes them. */
	int n = 0;
	while (tc_embedded[n].path)
		n++;
	tilec_header *headers = calloc((size_t)n + 1, sizeof *headers);
	char **names = calloc((size_t)n + 1, sizeof *names);
	if (!headers || !names) {
		free(headers);
		free(names);
		return failf(h, TC_HARNESS_SETUP, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(tc_embedded[i].path) + 7;
		names[i] = malloc(len);
		if (names[i])
			snprintf(names[i], len, "tilec/%s", tc_embedded[i].path);
		headers[i].name = names[i];
		headers[i].text = tc_embedded[i].text;
		headers[i].len = tc_embedded[i].len;
	}
	const char *file = s->source ? s->source : s->file;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	char srcname[256];
	if (s->source)
		snprintf(srcname, sizeof srcname, "%s", base);
	else
		snprintf(srcname, sizeof srcname, "%.*s.%s%s",
			 (int)(strrchr(base, '.') ? strrchr(base, '.') - base
						  : (long)strlen(base)),
			 base, h->opt.target.name,
			 h->opt.target.kind == TC_TARGET_CUDA  ? ".cu"
			 : h->opt.target.kind == TC_TARGET_HIP ? ".hip"
							       : ".c");
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = srcname;
	o.arch = s->march;
	o.headers = headers;
	o.nheaders = n;
	o.no_cache = s->no_cache;
	/* An object without the kernel is neither cached nor taken from
	 * the cache. */
	const char *kernels[] = { h->kernel->name };
	o.kernels = kernels;
	o.nkernels = 1;
	h->mod = tilec_compile(h->ctx, h->src.data ? h->src.data : "",
			       h->src.len, &o);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(headers);
	if (!h->mod) {
		h->log = strdup(tilec_error(h->ctx));
		return failf(h, TC_HARNESS_COMPILE, "cannot compile the "
			     "generated code: %s", tilec_error(h->ctx));
	}
	tilec_module_get_info(h->mod, &h->info);
	h->entry = tilec_module_kernel(h->mod, h->kernel->name);
	if (!h->entry)
		return failf(h, TC_HARNESS_COMPILE, "%s", tilec_error(h->ctx));
	return true;
}

void
tc_harness_adopt(TcHarness *h, TcArena *arena, const TcKernel *k, TcBuf *src,
		 double translate_s)
{
	if (h->gen_arena)
		tc_arena_free(h->gen_arena);
	h->gen_arena = arena;
	h->gen_kernel = k;
	tc_buf_free(&h->src);
	h->src = *src;
	tc_buf_init(src);
	h->translate_s = translate_s;
}

bool
tc_harness_compile(TcHarness *h)
{
	h->fail = TC_HARNESS_OK;
	return translate(h) && jit(h);
}

/* The GPU launch: grid extents evaluated on the scalar arguments, threads
 * per block and planned shared memory of the translated kernel. */
static bool
launch_config(TcHarness *h)
{
	const TcKernel *k = h->gen_kernel;
	tilec_launch_config *cfg = &h->cfg;
	memset(cfg, 0, sizeof *cfg);
	h->empty_grid = false;
	for (int d = 0; d < 3; d++) {
		double e = 1;
		if (k->grid[d] && !tc_interp_eval(k, k->grid[d], h->rargs,
						  h->device.multiprocessors, &e,
						  &h->ref_diags)) {
			keep_diagnostics(h);
			h->fail = TC_HARNESS_SETUP;
			return false;
		}
		if (!(e >= 0 && e <= 2147483647.0))
			return failf(h, TC_HARNESS_SETUP, "the grid would have "
				     "extent %.0f along %c", e, "xyz"[d]);
		cfg->grid[d] = (unsigned)e;
		h->empty_grid |= cfg->grid[d] == 0;
	}
	cfg->block[0] = (unsigned)tc_abi_launch_threads(k, &h->opt.target);
	cfg->block[1] = cfg->block[2] = 1;
	cfg->shared_bytes = (size_t)k->smem_bytes;
	return true;
}

/* Device copies of every tensor; GPU-width scalars. */
static bool
setup_device(TcHarness *h)
{
	for (int i = 0; i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		const TcVar *v = p->var;
		if (v->kind == TC_VAR_SCALAR) {
			/* Where the GPU's ABI widens a scalar to int (i8,
			 * u8), it gets a slot of its own. */
			if (tc_abi_pass_dtype(v->dtype, h->opt.target.kind) ==
				    TC_DT_I32 && v->dtype != TC_DT_I32) {
				p->wide = (int32_t)p->ivalue;
				h->kargs[i] = &p->wide;
			}
			continue;
		}
		if (tilec_alloc(h->ctx, p->bytes, &p->dev) != TILEC_OK)
			return failf(h, TC_HARNESS_DEVICE, "tensor %s: %s",
				     v->name, tilec_error(h->ctx));
		p->slot = p->dev;
	}
	return true;
}

bool
tc_harness_place(TcHarness *h)
{
	h->fail = TC_HARNESS_OK;
	if (h->gpu && !h->placed && (!launch_config(h) || !setup_device(h)))
		return false;
	h->placed = true;
	return true;
}

/* --- Inputs, poison, comparison ---------------------------------------------------- */

/* The poison pattern of one element, and its width in bytes (0 for i4,
 * which is poisoned with 0xAB bytes). */
static int
poison_bits(TcDtype t, uint64_t *bits)
{
	switch (t) {
	case TC_DT_F64: *bits = 0x7ff8abababababab; return 8;
	case TC_DT_F32: *bits = 0x7fc0abab; return 4;
	case TC_DT_F16: *bits = 0x7eab; return 2;
	case TC_DT_BF16: *bits = 0x7feb; return 2;
	case TC_DT_FP8E4M3: *bits = 0x7f; return 1;
	case TC_DT_FP8E5M2: *bits = 0x7e; return 1;
	case TC_DT_I64: *bits = 0xabababababababab; return 8;
	case TC_DT_I32: *bits = 0xabababab; return 4;
	default: *bits = 0xab; return t == TC_DT_I4 ? 0 : 1;
	}
}

static void
poison(void *data, TcDtype t, size_t count, size_t bytes)
{
	uint64_t bits;
	int w = poison_bits(t, &bits);
	if (w <= 1) {
		memset(data, (int)(bits & 0xff), bytes);
		return;
	}
	for (size_t i = 0; i < count; i++)
		memcpy((char *)data + i * (size_t)w, &bits, (size_t)w);
}

/* Element i still holds the poison. */
static bool
is_poison(const void *data, TcDtype t, size_t i)
{
	uint64_t bits, got = 0;
	int w = poison_bits(t, &bits);
	if (w == 0)
		return (((const uint8_t *)data)[i / 2] >> ((i & 1) * 4) & 15) ==
		       ((i & 1) ? 0xa : 0xb);
	memcpy(&got, (const char *)data + i * (size_t)w, (size_t)w);
	return got == bits;
}

/* Element i of an integer or bool tensor, exactly (i64 too). */
static int64_t
load_int(TcDtype t, const void *data, size_t i)
{
	if (t == TC_DT_I64)
		return ((const int64_t *)data)[i];
	return (int64_t)tc_elem_load(t, data, i);
}

/* Compare output p with the reference's copy.  Outputs only written were
 * poisoned on both sides: an element the reference left holding the
 * poison must hold it in the kernel's output too (untouched), and one the
 * reference wrote must not (unwritten).  Integers and bools compare
 * exactly; floats within the relative tolerance tol. */
static void
compare(const TcHarnessParam *p, double tol, TcCompare *c)
{
	memset(c, 0, sizeof *c);
	c->param = p;
	TcDtype t = p->var->dtype;
	c->exact = !tc_dtype_is_float(t);
	for (size_t i = 0; i < p->count; i++) {
		if (p->role == TC_HARNESS_OUT) {
			bool got_poison = is_poison(p->data, t, i);
			bool want_poison = is_poison(p->ref, t, i);
			if (got_poison && want_poison) {
				c->untouched++;
				continue;
			}
			if (got_poison || want_poison) {
				/* For integers the poison is a legitimate value
				 * too; the bits differ, so this is a mismatch
				 * either way, named by what it likely is. */
				size_t *n = got_poison ? &c->unwritten : &c->stray;
				size_t *first = got_poison ? &c->first_unwritten
							   : &c->first_stray;
				if ((*n)++ == 0)
					*first = i;
				continue;
			}
		}
		if (c->exact) {
			int64_t want = load_int(t, p->ref, i);
			int64_t got = load_int(t, p->data, i);
			double aw = fabs((double)want);
			if (aw > c->max_abs_ref)
				c->max_abs_ref = aw;
			if (got == want)
				continue;
			double err = fabs((double)got - (double)want);
			if (err > c->max_abs_err)
				c->max_abs_err = err;
			if (c->mismatches++ == 0) {
				c->worst = i;
				c->worst_got_int = got;
				c->worst_want_int = want;
			}
			continue;
		}
		double want = tc_elem_load(t, p->ref, i);
		double got = tc_elem_load(t, p->data, i);
		if (!isfinite(want) || !isfinite(got)) {
			if (!(isnan(want) && isnan(got)) && want != got)
				c->nan_mismatch++;
			continue;
		}
		double err = fabs(got - want);
		if (fabs(want) > c->max_abs_ref)
			c->max_abs_ref = fabs(want);
		if (err > c->max_abs_err || (c->max_abs_err == 0 && i == 0)) {
			c->max_abs_err = err;
			c->worst = i;
			c->worst_got = got;
			c->worst_want = want;
		}
	}
	c->rel_err = c->max_abs_ref > 0 ? c->max_abs_err / c->max_abs_ref
					 : c->max_abs_err;
	c->ok = (c->exact ? c->mismatches == 0 : c->rel_err <= tol) &&
		c->unwritten == 0 && c->stray == 0 && c->nan_mismatch == 0;
}

/* Run the kernel once on the tensors' host contents.  On a GPU: copy
 * every tensor to the device, launch, wait, copy the outputs back; the
 * first-run time is the launch and the wait. */
static bool
run_kernel(TcHarness *h)
{
	tilec_context *ctx = h->ctx;
	for (int i = 0; h->gpu && i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		if (p->dev && tilec_memcpy_h2d(ctx, p->dev, p->data, p->bytes) !=
				      TILEC_OK)
			return failf(h, TC_HARNESS_DEVICE, "copying %s to the "
				     "device failed: %s", p->var->name,
				     tilec_error(ctx));
	}
	double t0 = tilec_now();
	tilec_status st = TILEC_OK;
	if (!h->empty_grid)
		st = tilec_launch(h->entry, h->kargs, h->gpu ? &h->cfg : NULL);
	if (st == TILEC_OK && h->gpu)
		st = tilec_synchronize(ctx);
	h->first_run_s = tilec_now() - t0;
	if (st != TILEC_OK)
		return failf(h, TC_HARNESS_LAUNCH, "launch failed: %s",
			     tilec_error(ctx));
	for (int i = 0; h->gpu && i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		if (p->dev && (p->role & TC_HARNESS_OUT) &&
		    tilec_memcpy_d2h(ctx, p->data, p->dev, p->bytes) != TILEC_OK)
			return failf(h, TC_HARNESS_DEVICE, "copying %s from the "
				     "device failed: %s", p->var->name,
				     tilec_error(ctx));
	}
	return true;
}

/* The reference stopped: name the likely cause.  Integer inputs at their
 * default values (+-1 .. 7) are the likely cause of an access out of
 * bounds. */
static bool
reference_failed(TcHarness *h)
{
	TcBuf ints;
	tc_buf_init(&ints);
	int n = 0;
	for (int i = 0; i < h->nparams; i++) {
		const TcHarnessParam *p = &h->params[i];
		if (p->var->kind == TC_VAR_TENSOR && (p->role & TC_HARNESS_IN) &&
		    !p->unused && !p->ranged && tc_dtype_is_int(p->var->dtype) &&
		    p->var->dtype != TC_DT_BOOL)
			tc_buf_printf(&ints, "%s%s", n++ ? ", " : "",
				      p->var->name);
	}
	keep_diagnostics(h);
	if (n)
		failf(h, TC_HARNESS_REFERENCE, "the reference interpreter "
		      "stopped on an error in the tile program (above); the "
		      "integer %s %s %s random values in +-1 .. 7: if %s "
		      "values are indices, give them with --range NAME=LO:HI",
		      n > 1 ? "inputs" : "input", ints.data,
		      n > 1 ? "hold" : "holds", n > 1 ? "their" : "its");
	else
		failf(h, TC_HARNESS_REFERENCE, "the reference interpreter "
		      "stopped on an error in the tile program (above)");
	tc_buf_free(&ints);
	return false;
}

/* Fresh random inputs in every tensor the kernel reads, poison in every
 * one it only writes, on both sides. */
static void
fill_inputs(TcHarness *h, unsigned long long seed)
{
	for (int i = 0; i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		if (p->var->kind != TC_VAR_TENSOR)
			continue;
		if (p->role & TC_HARNESS_IN) {
			if (p->ranged)
				tc_elem_fill_range(p->var->dtype, p->data,
						   p->count, seed, p->var->param,
						   p->lo, p->hi);
			else
				tc_elem_fill_random(p->var->dtype, p->data,
						    p->count, seed,
						    p->var->param);
		}
		if (p->role == TC_HARNESS_OUT) {
			poison(p->data, p->var->dtype, p->count, p->bytes);
			poison(p->ref, p->var->dtype, p->count, p->bytes);
		} else if (p->ref != p->data) {
			memcpy(p->ref, p->data, p->bytes);
		}
	}
}

bool
tc_harness_reference(TcHarness *h, unsigned long long seed)
{
	h->fail = TC_HARNESS_OK;
	fill_inputs(h, seed);
	double t0 = tilec_now();
	memset(&h->stats, 0, sizeof h->stats);
	bool ok = tc_interp_run(h->kernel, h->rargs, false, &h->stats,
				&h->ref_diags);
	h->reference_s = tilec_now() - t0;
	return ok || reference_failed(h);
}

static bool compare_outputs(TcHarness *h);

bool
tc_harness_check(TcHarness *h, unsigned long long seed, bool check)
{
	h->fail = TC_HARNESS_OK;
	if (!tc_harness_place(h))
		return false;
	fill_inputs(h, seed);
	/* The reference first: an out-of-bounds access it reports would
	 * likely crash the compiled kernel. */
	double t0 = tilec_now();
	TcDiags quiet;
	tc_diags_init(&quiet, h->spec.file, h->spec.text, h->spec.len);
	memset(&h->stats, 0, sizeof h->stats);
	bool ok = tc_interp_run(h->kernel, h->rargs, !check, &h->stats,
				check ? &h->ref_diags : &quiet);
	tc_diags_free(&quiet);
	h->reference_s = tilec_now() - t0;
	if (check && !ok)
		return reference_failed(h);
	if (!run_kernel(h))
		return false;
	free(h->out);
	h->out = NULL;
	h->nout = 0;
	if (!check)
		return true;
	return compare_outputs(h);
}

/* Compare every output with the reference's copy (h->out[]); a
 * mismatch is a failure naming the outputs. */
static bool
compare_outputs(TcHarness *h)
{
	free(h->out);
	h->out = NULL;
	h->nout = 0;
	h->out = calloc((size_t)h->nparams + 1, sizeof *h->out);
	if (!h->out)
		return failf(h, TC_HARNESS_SETUP, "out of memory");
	bool all = true;
	for (int i = 0; i < h->nparams; i++) {
		const TcHarnessParam *p = &h->params[i];
		if (p->var->kind != TC_VAR_TENSOR || !(p->role & TC_HARNESS_OUT))
			continue;
		TcCompare *c = &h->out[h->nout++];
		compare(p, h->tol, c);
		all &= c->ok;
	}
	if (!all) {
		/* The sentence names the outputs; h->out has the numbers. */
		TcBuf why;
		tc_buf_init(&why);
		for (int i = 0; i < h->nout; i++) {
			const TcCompare *c = &h->out[i];
			if (c->ok)
				continue;
			const char *name = c->param->var->name;
			if (c->exact)
				tc_buf_printf(&why, "%s%s: %zu elements differ "
					      "(compared exactly)",
					      why.len ? "; " : "", name,
					      c->mismatches);
			else
				tc_buf_printf(&why, "%s%s: max rel err %.3g "
					      "(tol %g)", why.len ? "; " : "",
					      name, c->rel_err, h->tol);
			if (c->stray)
				tc_buf_printf(&why, ", %zu written where the "
					      "reference writes nothing",
					      c->stray);
			if (c->unwritten)
				tc_buf_printf(&why, ", %zu unwritten",
					      c->unwritten);
			if (c->nan_mismatch)
				tc_buf_printf(&why, ", %zu NaN/inf mismatches",
					      c->nan_mismatch);
		}
		failf(h, TC_HARNESS_MISMATCH, "%s", why.data);
		tc_buf_free(&why);
		return false;
	}
	return true;
}

/* The check against reference data made elsewhere (a prepared tuning
 * unit's): the caller has put the inputs in each tensor's data and the
 * expected outputs in each output's ref, poison included where the
 * reference wrote nothing.  The kernel's write-only outputs are poisoned,
 * the kernel runs once, and every output is compared as in
 * tc_harness_check. */
bool
tc_harness_check_stored(TcHarness *h)
{
	h->fail = TC_HARNESS_OK;
	if (!tc_harness_place(h))
		return false;
	for (int i = 0; i < h->nparams; i++) {
		TcHarnessParam *p = &h->params[i];
		if (p->var->kind == TC_VAR_TENSOR && p->role == TC_HARNESS_OUT)
			poison(p->data, p->var->dtype, p->count, p->bytes);
	}
	if (!run_kernel(h))
		return false;
	return compare_outputs(h);
}

/* --- Timing ------------------------------------------------------------------------ */

bool
tc_harness_bench(TcHarness *h, int warmup, int repeat, double flops,
		 TcHarnessTiming *t)
{
	h->fail = TC_HARNESS_OK;
	memset(t, 0, sizeof *t);
	size_t set_bytes = 0;
	for (int i = 0; i < h->nparams; i++)
		set_bytes += h->params[i].bytes;
	int nsets = 1;
	if (set_bytes > 0) {
		long long want = BENCH_ROTATE_BYTES / (long long)set_bytes + 1;
		long long cap = BENCH_MEMORY_BUDGET / (long long)set_bytes;
		nsets = (int)(want < cap ? want : cap);
		if (nsets > BENCH_MAX_SETS)
			nsets = BENCH_MAX_SETS;
		if (nsets < 1)
			nsets = 1;
	}
	void ***sets = calloc((size_t)nsets, sizeof *sets);
	void **slots = calloc((size_t)nsets * (size_t)h->nparams + 1,
			      sizeof *slots);
	bool ok = sets && slots;
	if (ok)
		sets[0] = h->kargs;
	for (int s = 1; ok && s < nsets; s++) {
		sets[s] = calloc((size_t)h->nparams + 1, sizeof **sets);
		if (!sets[s]) {
			ok = false;
			break;
		}
		for (int i = 0; i < h->nparams; i++) {
			TcHarnessParam *p = &h->params[i];
			if (p->var->kind != TC_VAR_TENSOR) {
				sets[s][i] = h->kargs[i];
				continue;
			}
			void *copy = NULL;
			if (h->gpu) {
				ok = tilec_alloc(h->ctx, p->bytes, &copy) ==
					     TILEC_OK &&
				     tilec_memcpy_h2d(h->ctx, copy, p->data,
						      p->bytes) == TILEC_OK;
			} else if ((copy = alloc_kernel_tensor(h, p->bytes))) {
				memcpy(copy, p->data, p->bytes);
			}
			slots[s * h->nparams + i] = copy;
			if (!copy || !ok) {
				ok = false;
				break;
			}
			sets[s][i] = &slots[s * h->nparams + i];
		}
	}
	tilec_bench_result res;
	if (!ok) {
		if (h->gpu)
			failf(h, TC_HARNESS_DEVICE, "cannot make %d input sets on "
			      "the device: %s", nsets, tilec_error(h->ctx));
		else
			failf(h, TC_HARNESS_SETUP, "out of memory for %d input "
			      "sets", nsets);
	} else if (h->empty_grid) {
		failf(h, TC_HARNESS_BENCH, "nothing to time: the grid is empty");
	} else if (tilec_bench(h->entry, (void **const *)sets, nsets,
			       h->gpu ? &h->cfg : NULL, warmup, repeat,
			       &res) != TILEC_OK) {
		failf(h, TC_HARNESS_BENCH, "timing failed: %s",
		      tilec_error(h->ctx));
	} else {
		t->median_ms = res.median_s * 1e3;
		t->min_ms = res.min_s * 1e3;
		t->mean_ms = res.mean_s * 1e3;
		t->runs = res.runs;
		t->input_sets = nsets;
		t->bytes = (double)set_bytes;
		t->gbps = (double)set_bytes / res.median_s / 1e9;
		t->flops = flops > 0 ? flops : h->stats.gemm_flops;
		t->gflops = t->flops > 0 ? t->flops / res.median_s / 1e9 : 0;
	}
	for (int s = 1; sets && s < nsets; s++) {
		for (int i = 0; slots && i < h->nparams; i++) {
			if (h->gpu)
				tilec_free(h->ctx, slots[s * h->nparams + i]);
			else
				free_kernel_tensor(h, slots[s * h->nparams + i]);
		}
		free(sets[s]);
	}
	free(sets);
	free(slots);
	return h->fail == TC_HARNESS_OK;
}

void
tc_harness_free(TcHarness *h)
{
	free_tensors(h);
	free(h->params);
	free(h->kargs);
	free(h->rargs);
	tilec_module_free(h->mod);
	tilec_context_free(h->ctx);
	tc_buf_free(&h->src);
	tc_diags_free(&h->ref_diags);
	tc_diags_free(&h->gen_diags);
	if (h->ref_arena)
		tc_arena_free(h->ref_arena);
	if (h->gen_arena)
		tc_arena_free(h->gen_arena);
	free(h->message);
	free(h->log);
	free(h->text);
	memset(h, 0, sizeof *h);
}
