/*
 * target.c - what the passes and emitters know about each target.
 *
 * Input: a target name ("openmp", "cuda", "hip") and an optional arch.
 * Output: a filled TcTarget.  For the OpenMP target the default arch is the
 * build machine's widest vector ISA (avx512, avx2, else generic); GPU
 * targets default to their oldest supported architecture.  The limits here
 * are what a block may use: shared memory (on the CPU, the block's working
 * set, which must stay cache resident and off the thread's stack), threads,
 * and the warp width.  tc_target_explain turns a name or arch that is none
 * of these into a usage error listing the valid ones.
 */
#include "tilec_int.h"

#include <string.h>

/* One architecture a target accepts, with its limits. */
typedef struct ArchInfo {
	const char *name;      /* TcTarget.arch */
	long long smem_limit;  /* bytes of per-block buffers */
	int warp_size;         /* lanes that execute together */
	int max_threads;       /* threads per block */
} ArchInfo;

/* CPU: buffers live in the OpenMP thread's frame; 1 MiB keeps them in L2
 * on current cores and well under the default 8 MiB thread stack. */
static const ArchInfo openmp_archs[] = {
	{ "avx512", 1 << 20, 1, 1024 },
	{ "avx2", 1 << 20, 1, 1024 },
	{ "generic", 1 << 20, 1, 1024 },
	{ NULL, 0, 0, 0 },
};

/* NVIDIA: the opt-in dynamic shared memory per block. */
static const ArchInfo cuda_archs[] = {
	{ "sm_80", 163 * 1024, 32, 1024 },
	{ "sm_90a", 227 * 1024, 32, 1024 },
	{ NULL, 0, 0, 0 },
};

/* AMD CDNA: 64 KiB of LDS, wave64. */
static const ArchInfo hip_archs[] = {
	{ "gfx90a", 64 * 1024, 64, 1024 },
	{ "gfx942", 64 * 1024, 64, 1024 },
	{ NULL, 0, 0, 0 },
};

static const struct {
	const char *name;          /* TcTarget.name */
	TcTargetKind kind;         /* backend family */
	const ArchInfo *archs;     /* accepted archs; the first is the default */
} targets[] = {
	{ "openmp", TC_TARGET_OPENMP, openmp_archs },
	{ "cuda", TC_TARGET_CUDA, cuda_archs },
	{ "hip", TC_TARGET_HIP, hip_archs },
};

/* The widest vector ISA the machine running tilec supports. */
static const char *
host_cpu_arch(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("fma"))
		return "avx512";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "avx2";
#endif
	return "generic";
}

bool
tc_target_init(TcTarget *t, const char *name, const char *arch)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
		if (strcmp(targets[i].name, name) != 0)
			continue;
		if (!arch && targets[i].kind == TC_TARGET_OPENMP)
			arch = host_cpu_arch();
		const ArchInfo *ai = targets[i].archs;
		if (arch) {
			while (ai->name && strcmp(ai->name, arch) != 0)
				ai++;
			if (!ai->name)
				return false;
		}
		t->kind = targets[i].kind;
		t->name = targets[i].name;
		t->arch = ai->name;
		t->smem_limit = ai->smem_limit;
		t->warp_size = ai->warp_size;
		t->max_threads = ai->max_threads;
		return true;
	}
	return false;
}

void
tc_target_explain(TcBuf *out, const char *name, const char *arch)
{
	enum { NTARGETS = sizeof targets / sizeof targets[0] };
	const char *names[NTARGETS + 8];
	int n = 0;
	for (size_t i = 0; i < NTARGETS; i++) {
		if (strcmp(targets[i].name, name) != 0)
			continue;
		for (const ArchInfo *ai = targets[i].archs; ai->name; ai++)
			names[n++] = ai->name;
		const char *near = tc_nearest(arch ? arch : "", arch ? strlen(arch) : 0, names, n);
		tc_buf_printf(out, "unknown architecture '%s' for target %s",
			      arch ? arch : "", name);
		if (near)
			tc_buf_printf(out, "; did you mean '%s'?", near);
		tc_buf_printf(out, " (%s architectures:", name);
		for (int j = 0; j < n; j++)
			tc_buf_printf(out, "%s %s", j ? "," : "", names[j]);
		tc_buf_puts(out, ")");
		return;
	}
	for (size_t i = 0; i < NTARGETS; i++)
		names[n++] = targets[i].name;
	const char *near = tc_nearest(name, strlen(name), names, n);
	tc_buf_printf(out, "unknown target '%s'", name);
	if (near)
		tc_buf_printf(out, "; did you mean '%s'?", near);
	tc_buf_puts(out, " (targets:");
	for (int j = 0; j < n; j++)
		tc_buf_printf(out, "%s %s", j ? "," : "", names[j]);
	tc_buf_puts(out, ")");
}
