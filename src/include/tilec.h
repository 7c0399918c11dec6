/*
 * tilec.h - the tile language.
 *
 * A tile program is a C11 translation unit that includes this header and
 * nothing else.  Every construct of the language is declared here with a real
 * prototype, so compilers and editors (clangd) accept a tile program as
 * ordinary C; the tilec translator gives the constructs their meaning.
 * docs/language.md is the reference; this file is the vocabulary.
 *
 * The translator embeds this header: it never reads it from disk.
 */
#ifndef TILEC_H
#define TILEC_H

/* --- Element types ---------------------------------------------------------
 * The translator reads these names (not the C types underneath), so a tensor
 * declared `const f16 A[M][K]` has dtype f16 whatever C makes of it.  The C
 * types only let editors type-check arithmetic. */
typedef double f64;
typedef float f32;
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
typedef _Float16 f16;
#else
typedef float f16;
#endif
#if defined(__clang__) && __clang_major__ >= 17
typedef __bf16 bf16;
#else
typedef float bf16;
#endif
typedef unsigned char fp8e4m3; /* 8-bit float, 4 exponent bits, 3 mantissa */
typedef unsigned char fp8e5m2; /* 8-bit float, 5 exponent bits, 2 mantissa */
typedef long long i64;
typedef int i32;
typedef signed char i8;
typedef unsigned char u8;
typedef signed char i4;        /* signed 4-bit, two packed per byte in memory */
#ifndef __cplusplus
#ifndef bool
#define bool _Bool
#define true 1
#define false 0
#endif
#endif

/* --- Kernels, scopes, tunables ------------------------------------------- */

/* The translator reads these annotations; other compilers need not. */
#if defined(__clang__)
#define TILEC_ANNOTATE_(what) __attribute__((annotate(what)))
#else
#define TILEC_ANNOTATE_(what)
#endif

/* Marks a function as a kernel: one launch runs its body once per block. */
#define TILE_KERNEL TILEC_ANNOTATE_("tilec.kernel")

/* Memory scopes of buffers declared in a kernel body. */
#define tile_shared TILEC_ANNOTATE_("tilec.shared")     /* per block */
#define tile_fragment TILEC_ANNOTATE_("tilec.fragment") /* a tile spread over the block's threads */
#define tile_local TILEC_ANNOTATE_("tilec.local")       /* per thread */

/* TILE_PARAM(NAME, DEFAULT, CHOICE...): a tunable integer constant.  The
 * default is used unless the command line (-D NAME=V) or a tuning record
 * binds another value; the tuner tries the choices. */
#define TILEC_FIRST_(x, ...) x
#define TILE_PARAM(name, ...)                                              \
	enum { name = TILEC_FIRST_(__VA_ARGS__, 0) };                      \
	TILEC_ANNOTATE_("tilec.param") static const int \
		tilec_param_##name[] __attribute__((unused)) = { __VA_ARGS__ }

/* --- Launch ------------------------------------------------------------------
 * Statements at the top of a kernel body.  tile_grid_x(n) declares n blocks
 * along x and returns this block's index along x (likewise y and z). */
void tile_threads(int count);
int tile_grid_x(int extent);
int tile_grid_y(int extent);
int tile_grid_z(int extent);
/* Visit blocks in groups of `rows` along y so neighbouring blocks share
 * operands in L2 (GPU targets; no effect on the CPU). */
void tile_rasterize(int rows);

/* --- Loops -------------------------------------------------------------------
 * for (int i = a; i < b; i++) is a serial loop.  tile_parallel(i, n) runs
 * i = 0..n-1 in any order (the compiler maps it to threads and vector
 * lanes); n is a constant, or min(C, e) with C constant and e known only
 * at run time.  tile_pipelined(k, n, stages) is serial, and lets the compiler
 * overlap the copies of iteration k + 1 .. k + stages - 1 with iteration k. */
int tilec_parallel_(int extent);
int tilec_pipelined_(int extent, int stages);
#define tile_parallel(i, n) for (int i = tilec_parallel_(n); i < (n); i++)
#define tile_pipelined(k, n, stages) \
	for (int k = tilec_pipelined_((n), (stages)); k < (n); k++)

/* --- Tile operations ---------------------------------------------------------
 * Operands are buffers (a whole buffer by name) or regions: the address of a
 * region's first element, &T[i][j], whose extent is the other operand's.  A
 * region of a tensor of higher rank than the tile covers its last dims, or
 * the dims tile_dims names. */
enum {
	TILE_TRANS_A = 1,    /* tile_gemm: A is stored K x M */
	TILE_TRANS_B = 2,    /* tile_gemm: B is stored N x K */
	TILE_ACCUMULATE = 4, /* tile_reduce_*: combine with dst's contents */
};

/* dst = src; converts between element types; out-of-range tensor elements
 * read as zero and are not written. */
void tile_copy(void *dst, const void *src);
/* C += A * B, with C a fragment; flags: TILE_TRANS_A | TILE_TRANS_B. */
void tile_gemm(void *C, const void *A, const void *B, ...);
/* Every element of dst = value, converted as an assignment converts it
 * (an integer value stays an integer: no trip through double). */
void tile_fill(void *dst, ...);
void tile_clear(void *dst);
/* dst = reduce(src) along dim; flags: TILE_ACCUMULATE. */
void tile_reduce_sum(void *dst, const void *src, int dim, ...);
void tile_reduce_max(void *dst, const void *src, int dim, ...);
void tile_reduce_min(void *dst, const void *src, int dim, ...);
void tile_reduce_absmax(void *dst, const void *src, int dim, ...);
/* dst = max (min) of src along dim, index = where along dim it is (the
 * smallest such index on ties; NaN loses to every number).  dst and index
 * have src's dims without dim; index is i32 or i64. */
void tile_reduce_argmax(void *dst, void *index, const void *src, int dim);
void tile_reduce_argmin(void *dst, void *index, const void *src, int dim);
/* The k greatest elements of src along dim, in order (ties: the smaller
 * index first; NaN last), into dst and their indices into index: both of
 * src's shape but k (at most src's extent) along dim. */
void tile_reduce_topk(void *dst, void *index, const void *src, int dim);
/* The sum, max, min or max |x| of every element of a whole buffer, as a
 * value: the whole initializer of a scalar declaration or the whole
 * right side of an assignment at block level (float m = tile_max(x);).
 * The result has x's arithmetic type (f32 for f16, i32 for i8). */
double tile_sum(const void *tile);
double tile_max(const void *tile);
double tile_min(const void *tile);
double tile_absmax(const void *tile);
/* dst += src element-wise, atomically; dst is a tensor region. */
void tile_atomic_add(void *dst, const void *src);
/* The region at origin covering tensor dims d0, d1, ... in that order. */
void *tile_dims(const void *origin, ...);

/* Ragged regions: the tensor operand of a tile_copy (a load or a store).
 * An element outside one reads as zero and is not written, as one past
 * the tensor's edge.
 * tile_bounded: only the first n0 elements along tile dim 0 (n1 along
 * dim 1, ...) are inside; the extents may be known only at run time
 * (rows - start), and 0 or less leaves nothing inside.
 * tile_masked: only the elements where mask (a buffer of the tile's
 * shape, or of its dim 0: a row mask) is nonzero are inside.
 * tile_rows: tile row i is the region's row origin + index[i] (index an
 * i32 or i64 buffer of one dim): a gather when read, a scatter when
 * written; a row outside the tensor is outside. */
void *tile_bounded(const void *region, ...);
void *tile_masked(const void *region, const void *mask);
void *tile_rows(const void *region, const void *index);

/* IEEE infinity, as in <math.h>. */
#ifndef INFINITY
#define INFINITY (__builtin_inff())
#endif

/* --- Scalar functions --------------------------------------------------------
 * C's own names; declared here so a tile program needs no other header. */
int ceildiv(int a, int b);
int min(int a, int b);
int max(int a, int b);
int abs(int a);
float expf(float);
float exp2f(float);
float logf(float);
float log2f(float);
float sqrtf(float);
float rsqrtf(float);
float fabsf(float);
float fmaxf(float, float);
float fminf(float, float);
float tanhf(float);
float erff(float);
float sinf(float);
float cosf(float);
float powf(float, float);
float log1pf(float);
float expm1f(float);
float fmaf(float, float, float);
float roundf(float); /* ties away from zero */
float rintf(float);  /* ties to even */
float floorf(float);
float ceilf(float);
float truncf(float);
/* Saturating casts for quantization: x rounded to the nearest integer
 * (ties to even), clamped to the type's range; NaN gives 0. */
i8 sat_i8(float x);
u8 sat_u8(float x);
i32 sat_i32(float x);

#endif /* TILEC_H */
