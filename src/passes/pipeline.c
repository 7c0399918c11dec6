/*
 * pipeline.c - the passes, in order, as one table.
 *
 * Input: a parsed program (tc_parse's output) and the options naming the
 * target.  Output: the program, rewritten in place by every pass that runs
 * on opt->target, ready for the target's emitter.
 *
 * tc_passes[] is the whole pipeline: reading it top to bottom is reading
 * what the translator does after parsing.  A backend's passes go in this
 * table with the mask of the targets they serve.  With opt->dump_after the
 * program is printed after the named pass; the stages --dump-after accepts
 * are "parse" (printed by tc_compile) and every pass's name.  With
 * opt->verify the IR is verified after "check" and every later pass:
 * before check has accepted the program, IR that breaks the rules is the
 * user's error (check reports it), not the translator's.  With
 * opt->passes only the passes it names run: a program read from IR text
 * (read.c) goes through just the passes a test asks for.
 */
#include "passes/passes.h"

#include <string.h>

#define ALL_TARGETS ((1u << TC_TARGET_COUNT) - 1)
#define GPU_TARGETS ((1u << TC_TARGET_CUDA) | (1u << TC_TARGET_HIP))
#define CPU_TARGETS (1u << TC_TARGET_OPENMP)
#define CUDA_TARGETS (1u << TC_TARGET_CUDA)

const TcPass tc_passes[] = {
	{ "specialize", tc_specialize, ALL_TARGETS,
	  "bind tunables (defaults and -D) and fold constant shapes" },
	{ "check", tc_check, ALL_TARGETS,
	  "types, shapes, scopes, regions and loop rules; located errors" },
	{ "operands", tc_operands, ALL_TARGETS,
	  "tile ops' operands that read buffer elements: locals set before the op" },
	{ "ragged", tc_ragged, ALL_TARGETS,
	  "ragged copies and run-time loop extents as guarded element loops" },
	{ "layout", tc_layout, GPU_TARGETS,
	  "fragment layouts: MMA registers or shared memory; loops that follow them" },
	{ "reg_operands", tc_reg_operands, GPU_TARGETS,
	  "gemm A operands in registers read from the f32 fragment a copy rounded" },
	{ "fuse_b", tc_fuse_b, CUDA_TARGETS,
	  "gemm B operands an element loop writes, computed as the gemm loads them" },
	{ "pipeline", tc_software_pipeline, GPU_TARGETS,
	  "multi-stage async copies for tile_pipelined loops" },
	{ "index_width", tc_index_width, ALL_TARGETS,
	  "64-bit element offsets for tensors that can pass 2^31 elements" },
	{ "smem", tc_smem, GPU_TARGETS,
	  "shared-memory offsets, padding and stages; the per-block limit" },
	{ "barrier", tc_barrier, GPU_TARGETS,
	  "block barriers between statements that share memory" },
	{ "frame", tc_cpu_frame, CPU_TARGETS,
	  "bytes of a block's buffers on its thread's stack; the CPU limit" },
	{ "cpu_gemm", tc_cpu_gemm, CPU_TARGETS,
	  "gemm helpers: micro-kernel, AMX or VNNI, panel depth from the caches" },
	{ "expand_pipeline", tc_expand_pipeline, GPU_TARGETS,
	  "copy lowerings; pipelined loops expanded; TMA's producer warpgroup" },
	{ "tma_store", tc_tma_store, GPU_TARGETS,
	  "epilogue tiles of wgmma fragments stored by TMA through shared memory" },
	{ "aligned", tc_launch_aligned, GPU_TARGETS,
	  "alignment tests an aligned launch makes constant; the tensors it needs" },
	{ "runs", tc_spread_runs, GPU_TARGETS,
	  "element loops into shared rows: per-thread runs stored as one vector" },
	{ "pairs", tc_half_pairs, CUDA_TARGETS,
	  "runs of i4 into f16 dequantized two at a time in half, where exact" },
	{ "box_tests", tc_box_tests, CUDA_TARGETS,
	  "element loops whose index tests one test at the tile's corner decides" },
	{ "prefetch", tc_cpu_prefetch, CPU_TARGETS,
	  "prefetches of the next iteration's rows in pipelined loops" },
	{ "bounds", tc_bounds, ALL_TARGETS,
	  "region origins proven non-negative (no lower-bound test)" },
	{ "fuse", tc_cpu_fuse, CPU_TARGETS,
	  "row-wise runs of statements as one loop; buffers kept in registers" },
	{ "edge", tc_cpu_edge, CPU_TARGETS,
	  "fused runs' main loops: the tests their columns decide, folded" },
	{ "vector", tc_cpu_vector, CPU_TARGETS,
	  "fused runs on explicit vectors (AVX-512 lanes), rows streamed out" },
	{ "transpose", tc_cpu_transpose, CPU_TARGETS,
	  "element nests that transpose a buffer: 8 x 8 blocks through registers" },
	{ "stream", tc_cpu_stream, CPU_TARGETS,
	  "copies into outputs the kernel only writes: rows past the cache" },
	{ "ahead", tc_cpu_ahead, CPU_TARGETS,
	  "the next block's rows prefetched while a fused run computes" },
	{ "strip", tc_cpu_strip, CPU_TARGETS,
	  "strips of a grid row's blocks run by one thread, sharing copies" },
	{ "bind", tc_cpu_bind, CPU_TARGETS,
	  "the grid's threads one per core, close, unless the user places them" },
};

const int tc_npasses = (int)(sizeof tc_passes / sizeof tc_passes[0]);

/* The frontend's stages, before the passes. */
static const char *const frontend_stages[] = { "parse" };

static bool
runs_on(const TcPass *pass, const TcTarget *t)
{
	return (pass->targets & (1u << t->kind)) != 0;
}

bool
tc_dump_name_check(const TcOptions *opt, TcDiags *d)
{
	const char *name = opt->dump_after;
	if (!name)
		return true;
	for (size_t i = 0; i < sizeof frontend_stages / sizeof *frontend_stages;
	     i++)
		if (strcmp(name, frontend_stages[i]) == 0)
			return true;
	for (int i = 0; i < tc_npasses; i++) {
		if (strcmp(name, tc_passes[i].name) != 0)
			continue;
		if (runs_on(&tc_passes[i], &opt->target))
			return true;
		tc_diag(d, TC_ERROR, (TcLoc){ 0 },
			"--dump-after=%s: that pass does not run for target %s",
			name, opt->target.name ? opt->target.name : "?");
		return false;
	}
	TcBuf names;
	tc_buf_init(&names);
	for (size_t i = 0; i < sizeof frontend_stages / sizeof *frontend_stages;
	     i++)
		tc_buf_printf(&names, "%s%s", i ? ", " : "", frontend_stages[i]);
	for (int i = 0; i < tc_npasses; i++)
		if (runs_on(&tc_passes[i], &opt->target))
			tc_buf_printf(&names, ", %s", tc_passes[i].name);
	tc_diag(d, TC_ERROR, (TcLoc){ 0 },
		"--dump-after=%s: no such stage (valid: %s)", name, names.data);
	tc_buf_free(&names);
	return false;
}

/* Whether the comma-separated list names name. */
static bool
listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p += len;
		if (*p)
			p++;
	}
	return false;
}

bool
tc_pass_list_check(const TcOptions *opt, TcDiags *d)
{
	if (!opt->passes)
		return true;
	for (const char *p = opt->passes; *p;) {
		size_t len = strcspn(p, ",");
		bool ok = false;
		for (int i = 0; i < tc_npasses && !ok; i++)
			ok = strlen(tc_passes[i].name) == len &&
			     strncmp(tc_passes[i].name, p, len) == 0 &&
			     runs_on(&tc_passes[i], &opt->target);
		if (!ok) {
			TcBuf names;
			tc_buf_init(&names);
			for (int i = 0; i < tc_npasses; i++)
				if (runs_on(&tc_passes[i], &opt->target))
					tc_buf_printf(&names, "%s%s",
						      names.len ? ", " : "",
						      tc_passes[i].name);
			tc_diag(d, TC_ERROR, (TcLoc){ 0 }, "--passes: '%.*s' is "
				"not a pass for target %s (passes: %s)", (int)len,
				p, opt->target.name ? opt->target.name : "?",
				names.data);
			tc_buf_free(&names);
			return false;
		}
		p += len;
		if (*p)
			p++;
	}
	return true;
}

/* Print p into dump if opt->dump_after names `stage`. */
static void
dump_stage(const char *stage, const TcProgram *p, const TcOptions *opt,
	   TcBuf *dump)
{
	if (dump && opt->dump_after && strcmp(opt->dump_after, stage) == 0)
		tc_print_program(dump, p);
}

bool
tc_run_pipeline(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d,
		TcBuf *dump)
{
	if (!tc_dump_name_check(opt, d) || !tc_pass_list_check(opt, d))
		return false;
	/* check has accepted the program (one read from IR text is taken
	 * as checked: the verifier accepted it). */
	bool checked = opt->passes != NULL;
	for (int i = 0; i < tc_npasses; i++) {
		const TcPass *pass = &tc_passes[i];
		if (!runs_on(pass, &opt->target) ||
		    (opt->passes && !listed(opt->passes, pass->name)))
			continue;
		int errors = d->errors;
		if (!pass->run(a, p, opt, d) || d->errors > errors)
			return false;
		dump_stage(pass->name, p, opt, dump);
		if (opt->observe)
			opt->observe(opt->observe_ctx, pass->name, p);
		checked = checked || pass->run == tc_check;
		if (opt->verify && checked && tc_verify(p, pass->name, d) > 0)
			return false;
	}
	return true;
}
