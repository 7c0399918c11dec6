/*
 * tilec.c - the translator as a library: source text in, IR or target source
 * out.  The CLI (main.c) and the runtime (`tilec run`) both call these, so a
 * program goes from tile source to a launched kernel without leaving the
 * process.
 *
 * Order: parse (parse.c) -> the pass pipeline for the target (pipeline.c:
 * specialize, check, then the target's scheduling passes) -> the target's
 * emitter (emitters/).
 */
#include "ir/tilec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
tc_options_init(TcOptions *opt, const char *target, const char *arch)
{
	memset(opt, 0, sizeof *opt);
	return tc_target_init(&opt->target, target, arch);
}

/* Keep only the kernel opt->kernel names. */
static bool
select_kernel(TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	if (!opt->kernel)
		return true;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		if (strcmp(k->name, opt->kernel) == 0) {
			p->kernels.items[0] = k;
			p->kernels.len = 1;
			return true;
		}
	}
	TcBuf names;
	tc_buf_init(&names);
	for (int i = 0; i < p->kernels.len; i++)
		tc_buf_printf(&names, "%s%s", i ? ", " : "",
			      ((TcKernel *)p->kernels.items[i])->name);
	tc_diag(d, TC_ERROR, (TcLoc){ p->path, 0, 0 }, "no kernel named '%s' "
		"(kernels: %s)", opt->kernel, names.data);
	tc_buf_free(&names);
	return false;
}

/* Run the pipeline on a parsed program. */
static bool
schedule(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	return select_kernel(p, opt, d) && tc_run_pipeline(a, p, opt, d, opt->dump);
}

/* Parse and run the pipeline; the notes on placements come after it
 * (tc_compile) or after emitting (tc_translate), so an error of either
 * is the first diagnostic. */
static bool
compile_program(TcArena *a, const char *path, const char *text,
		const TcOptions *opt, TcDiags *d, TcProgram **out)
{
	*out = NULL;
	TcProgram *p = tc_parse(a, path, text, opt, d);
	if (!p)
		return false;
	if (opt->dump && opt->dump_after && strcmp(opt->dump_after, "parse") == 0)
		tc_print_program(opt->dump, p);
	if (opt->observe)
		opt->observe(opt->observe_ctx, "parse", p);
	if (!schedule(a, p, opt, d))
		return false;
	*out = p;
	return true;
}

/* Emit every selected kernel of the scheduled program p. */
static bool
emit_program(const TcProgram *p, const TcOptions *opt, TcDiags *d, TcBuf *src)
{
	const TcBackend *be = tc_backend_find(opt->target.kind);
	for (int i = 0; i < p->kernels.len; i++)
		if (!be->emit(p, p->kernels.items[i], &opt->target, opt, src, d))
			return false;
	tc_explain(p, opt, d);
	return true;
}

static bool
backend_built(const TcOptions *opt, TcDiags *d)
{
	if (tc_backend_find(opt->target.kind))
		return true;
	tc_diag(d, TC_ERROR, (TcLoc){ 0 }, "the %s backend is not built "
		"yet", opt->target.name);
	return false;
}

bool
tc_compile(TcArena *a, const char *path, const char *text,
	   const TcOptions *opt, TcDiags *d, TcProgram **out)
{
	if (!compile_program(a, path, text, opt, d, out))
		return false;
	tc_explain(*out, opt, d);
	return true;
}

bool
tc_translate(TcArena *a, const char *path, const char *text,
	     const TcOptions *opt, TcDiags *d, TcProgram **prog, TcBuf *src)
{
	return backend_built(opt, d) &&
	       compile_program(a, path, text, opt, d, prog) &&
	       emit_program(*prog, opt, d, src);
}

bool
tc_compile_parsed(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	if (!schedule(a, p, opt, d))
		return false;
	tc_explain(p, opt, d);
	return true;
}

bool
tc_translate_parsed(TcArena *a, TcProgram *p, const TcOptions *opt,
		    TcDiags *d, TcBuf *src)
{
	return backend_built(opt, d) && schedule(a, p, opt, d) &&
	       emit_program(p, opt, d, src);
}

bool
tc_emit_scheduled(const TcProgram *p, const TcOptions *opt, TcDiags *d,
		  TcBuf *src)
{
	if (!backend_built(opt, d))
		return false;
	const TcBackend *be = tc_backend_find(opt->target.kind);
	for (int i = 0; i < p->kernels.len; i++)
		if (!be->emit(p, p->kernels.items[i], &opt->target, opt, src, d))
			return false;
	return true;
}
