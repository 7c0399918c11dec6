/*
 * tilec_int.h - the translator's shared vocabulary.
 *
 * One header for everything the translator's files share: the arena, the
 * tile IR (types, expressions, statements, kernels), diagnostics, the pass
 * pipeline and the backend table.  Each section names the file that owns it.
 * Every table that lists IR kinds is generated from one X-macro list below,
 * so adding a kind is one line.
 *
 * The public face of the translator is tilec.h (src/include, the language)
 * and runtime/tilec_runtime.h (the library API); this header is private.
 */
#ifndef TILEC_INT_H
#define TILEC_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TILEC_VERSION "0.1.0"

#if defined(__GNUC__)
#define TC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define TC_NORETURN __attribute__((noreturn))
#else
#define TC_PRINTF(fmt, args)
#define TC_NORETURN
#endif

/* An internal bug: report where and abort.  Never used for bad input. */
#define tc_assert(cond) \
	((cond) ? (void)0 : tc_bug(__FILE__, __LINE__, "assertion failed: " #cond))
#define tc_unreachable() tc_bug(__FILE__, __LINE__, "unreachable")
TC_NORETURN void tc_bug(const char *file, int line, const char *msg);

/* ==== arena.c: one arena per compilation ================================= */

typedef struct TcArena TcArena;

TcArena *tc_arena_new(void);
void tc_arena_free(TcArena *a);
void *tc_alloc(TcArena *a, size_t size); /* zeroed, 16-byte aligned */
char *tc_strdup(TcArena *a, const char *s);
char *tc_strndup(TcArena *a, const char *s, size_t n);
char *tc_fmt(TcArena *a, const char *fmt, ...) TC_PRINTF(2, 3);
/* bytes as text: "96 KiB", "1.5 MiB", "100 bytes". */
const char *tc_size_text(TcArena *a, long long bytes);

/* A growable array of pointers, allocated from an arena. */
typedef struct TcVec {
	void **items; /* items[0 .. len) */
	int len;      /* number of items */
	int cap;      /* allocated slots */
} TcVec;

void tc_vec_push(TcArena *a, TcVec *v, void *item);

/* ==== buf.c: growable text buffer, the one printer ======================== */

/* All generated text goes through a TcBuf: printf-checked appends and an
 * indentation level applied at the start of each line. */
typedef struct TcBuf {
	char *data;    /* NUL-terminated text, malloc'd */
	size_t len;    /* bytes used, excluding the NUL */
	size_t cap;    /* bytes allocated */
	int indent;    /* current indentation level (one tab each) */
	bool at_bol;   /* next append starts a line: indent first */
} TcBuf;

void tc_buf_init(TcBuf *b);
void tc_buf_free(TcBuf *b);
void tc_buf_printf(TcBuf *b, const char *fmt, ...) TC_PRINTF(2, 3);
void tc_buf_vprintf(TcBuf *b, const char *fmt, va_list ap);
void tc_buf_puts(TcBuf *b, const char *s);
/* n bytes as they are (binary safe; indentation still applies). */
void tc_buf_append(TcBuf *b, const void *data, size_t n);
char *tc_buf_take(TcBuf *b); /* hand the malloc'd text to the caller */
/* wrap.c: break the code lines of b from offset `from` on that pass
 * `width` columns (tabs 8) after commas or before && || ? :, the
 * continuations one tab deeper; comment and preprocessor lines stay. */
void tc_wrap_code(TcBuf *b, size_t from, int width);
/* A whole file, binary safe and NUL-terminated (*len, if len is not NULL,
 * excludes the NUL); NULL with errno set when it cannot be read. */
char *tc_read_file(const char *path, size_t *len);
/* Write a whole file or nothing: len bytes into a new temporary file in
 * path's directory (mode 0666 less the umask, or the old file's), synced
 * and renamed over path, then the directory synced.  Readers see the old
 * file or the whole new one; a failure (errno set, false returned) leaves
 * the old file as it was and no temporary behind, and so does SIGINT,
 * SIGTERM, SIGHUP or SIGQUIT, which wait until the rename is done.  A
 * symbolic link's target is replaced, the link kept; a path that is a
 * device or a pipe (/dev/null, /dev/stdout) is written as it is. */
bool tc_write_file(const char *path, const void *data, size_t len);
/* Whether tc_write_file(path, ...) could create its file: a temporary
 * is created next to path and removed.  False with errno set (ENOENT for
 * a missing directory, EACCES, EISDIR, EROFS ...). */
bool tc_check_writable(const char *path);

/* ==== quote.c: outside strings in generated text ========================= */

/* Append s for use inside a C or C++ comment of either kind: bytes that
 * could end the comment, break or splice its line (newlines, backslashes,
 * trigraph-like "??", "*" + "/"), and every byte outside printable ASCII,
 * as \xNN.  Every comment printer passes its text through this. */
void tc_quote_comment(TcBuf *b, const char *s);
/* The same, as a string in a. */
char *tc_quote_comment_dup(TcArena *a, const char *s);
/* Append s as the body of a C string literal (no quotes around it) that
 * means exactly s: `#line N "FILE"`. */
void tc_quote_string(TcBuf *b, const char *s);
/* Whether s is a plain C identifier: [A-Za-z_][A-Za-z0-9_]*.  Every name
 * the generated code prints as code passes this (parse.c checks). */
bool tc_is_identifier(const char *s);

/* ==== Source locations and diagnostics (diag.c) ========================== */

typedef struct TcLoc {
	const char *file; /* path as given on the command line */
	int line;         /* 1-based; 0 when unknown */
	int col;          /* 1-based byte column */
} TcLoc;

typedef enum TcSeverity { TC_NOTE, TC_WARNING, TC_ERROR } TcSeverity;

/* Where diagnostics go.  The CLI prints them to stderr; the runtime collects
 * them into its error string. */
typedef struct TcDiags {
	TcBuf text;      /* every rendered diagnostic, in order */
	int errors;      /* errors reported so far */
	int warnings;    /* warnings reported so far */
	bool to_stderr;  /* also print each diagnostic as it is reported */
	bool color;      /* reserved: colored output */
	/* Called for each diagnostic as it is reported, with the message
	 * alone and the whole rendering (NULL: none). */
	void (*hook)(void *user, TcSeverity sev, TcLoc loc,
		     const char *message, const char *text);
	void *hook_user; /* hook's first argument */
	/* Source text of files already read, for the caret line. */
	const char *src_path; /* the tile program's path */
	const char *src_text; /* its text (NUL-terminated), or NULL */
	size_t src_len;       /* bytes in src_text */
} TcDiags;

void tc_diags_init(TcDiags *d, const char *path, const char *text,
		   size_t len);
void tc_diags_free(TcDiags *d);
/* Report file:line:col: severity: message, then the line and a caret. */
/* The one of the ncands candidates a typo most likely made from the first
 * n bytes of word (edit distance, swaps of neighbours included; at most a
 * third of the word apart), or NULL when none is that near: the "did you
 * mean" of a diagnostic. */
const char *tc_nearest(const char *word, size_t n, const char *const *cands,
		       int ncands);
void tc_diag(TcDiags *d, TcSeverity sev, TcLoc loc, const char *fmt, ...)
	TC_PRINTF(4, 5);
void tc_vdiag(TcDiags *d, TcSeverity sev, TcLoc loc, const char *fmt,
	      va_list ap);

/* ==== ir.c: the tile IR =================================================== */

/* Element types: NAME, spelling in tile programs, bits of the value,
 * bits one element takes in memory (tensors and buffers alike: i4 packs
 * two to a byte, bool takes a whole byte), kind (F = float, I = signed
 * int, U = unsigned int, B = bool).  Sizes of memory (shared-memory plans,
 * vector widths, tensor bytes) come from the storage column, never from
 * the value bits. */
#define TC_DTYPES(X)                         \
	X(F64, "f64", 64, 64, 'F')           \
	X(F32, "f32", 32, 32, 'F')           \
	X(F16, "f16", 16, 16, 'F')           \
	X(BF16, "bf16", 16, 16, 'F')         \
	X(FP8E4M3, "fp8e4m3", 8, 8, 'F')     \
	X(FP8E5M2, "fp8e5m2", 8, 8, 'F')     \
	X(I64, "i64", 64, 64, 'I')           \
	X(I32, "i32", 32, 32, 'I')           \
	X(I8, "i8", 8, 8, 'I')               \
	X(U8, "u8", 8, 8, 'U')               \
	X(I4, "i4", 4, 4, 'I')               \
	X(BOOL, "bool", 1, 8, 'B')

typedef enum TcDtype {
	TC_DT_NONE, /* not a value: statements, unknown */
#define X(name, spelling, bits, storage, kind) TC_DT_##name,
	TC_DTYPES(X)
#undef X
	TC_DT_COUNT
} TcDtype;

const char *tc_dtype_name(TcDtype t); /* "f16" */
int tc_dtype_bits(TcDtype t); /* bits of the value: 1 for bool */
/* Bits an element takes in memory: 8 for bool, 4 for i4 (two a byte). */
int tc_dtype_storage_bits(TcDtype t);
bool tc_dtype_is_float(TcDtype t);
bool tc_dtype_is_int(TcDtype t); /* signed or unsigned integers and bool */
bool tc_dtype_is_unsigned(TcDtype t); /* unsigned integers and bool */
TcDtype tc_dtype_from_name(const char *name); /* TC_DT_NONE if unknown */

/* Binary operators: NAME, C spelling, C precedence (higher binds tighter). */
#define TC_BINOPS(X)           \
	X(MUL, "*", 13)        \
	X(DIV, "/", 13)        \
	X(REM, "%", 13)        \
	X(ADD, "+", 12)        \
	X(SUB, "-", 12)        \
	X(SHL, "<<", 11)       \
	X(SHR, ">>", 11)       \
	X(LT, "<", 10)         \
	X(LE, "<=", 10)        \
	X(GT, ">", 10)         \
	X(GE, ">=", 10)        \
	X(EQ, "==", 9)         \
	X(NE, "!=", 9)         \
	X(BAND, "&", 8)        \
	X(BXOR, "^", 7)        \
	X(BOR, "|", 6)         \
	X(LAND, "&&", 5)       \
	X(LOR, "||", 4)

typedef enum TcBinop {
#define X(name, spelling, prec) TC_OP_##name,
	TC_BINOPS(X)
#undef X
	TC_OP_COUNT
} TcBinop;

/* Unary operators: NAME, C spelling. */
#define TC_UNOPS(X)       \
	X(NEG, "-")       \
	X(NOT, "!")       \
	X(BNOT, "~")

typedef enum TcUnop {
#define X(name, spelling) TC_UOP_##name,
	TC_UNOPS(X)
#undef X
	TC_UOP_COUNT
} TcUnop;

/* Scalar builtin functions a tile program may call: NAME, spelling, arity,
 * the type every argument is converted to (as the prototype in tilec.h
 * says) and the result type.  docs/language.md gives each one's meaning. */
#define TC_FUNCS(X)                                   \
	X(CEILDIV, "ceildiv", 2, I32, I32)            \
	X(MIN, "min", 2, I32, I32)                    \
	X(MAX, "max", 2, I32, I32)                    \
	X(ABS, "abs", 1, I32, I32)                    \
	X(EXPF, "expf", 1, F32, F32)                  \
	X(EXP2F, "exp2f", 1, F32, F32)                \
	X(LOGF, "logf", 1, F32, F32)                  \
	X(LOG2F, "log2f", 1, F32, F32)                \
	X(SQRTF, "sqrtf", 1, F32, F32)                \
	X(RSQRTF, "rsqrtf", 1, F32, F32)              \
	X(FABSF, "fabsf", 1, F32, F32)                \
	X(FMAXF, "fmaxf", 2, F32, F32)                \
	X(FMINF, "fminf", 2, F32, F32)                \
	X(TANHF, "tanhf", 1, F32, F32)                \
	X(ERFF, "erff", 1, F32, F32)                  \
	X(SINF, "sinf", 1, F32, F32)                  \
	X(COSF, "cosf", 1, F32, F32)                  \
	X(POWF, "powf", 2, F32, F32)                  \
	X(LOG1PF, "log1pf", 1, F32, F32)              \
	X(EXPM1F, "expm1f", 1, F32, F32)              \
	X(FMAF, "fmaf", 3, F32, F32)                  \
	X(ROUNDF, "roundf", 1, F32, F32)              \
	X(RINTF, "rintf", 1, F32, F32)                \
	X(FLOORF, "floorf", 1, F32, F32)              \
	X(CEILF, "ceilf", 1, F32, F32)                \
	X(TRUNCF, "truncf", 1, F32, F32)              \
	X(SAT_I8, "sat_i8", 1, F32, I8)               \
	X(SAT_U8, "sat_u8", 1, F32, U8)               \
	X(SAT_I32, "sat_i32", 1, F32, I32)

typedef enum TcFunc {
#define X(name, spelling, arity, arg, result) TC_FN_##name,
	TC_FUNCS(X)
#undef X
	TC_FN_COUNT
} TcFunc;

const char *tc_binop_name(TcBinop op);
int tc_binop_prec(TcBinop op);
const char *tc_unop_name(TcUnop op);
const char *tc_func_name(TcFunc fn);
int tc_func_arity(TcFunc fn);
TcDtype tc_func_arg_type(TcFunc fn);    /* what each argument converts to */
TcDtype tc_func_result_type(TcFunc fn); /* the call's dtype */
TcFunc tc_func_from_name(const char *name); /* TC_FN_COUNT if unknown */

/* --- Variables ------------------------------------------------------------
 * Every name a kernel uses is a TcVar.  Vars are owned by their kernel
 * (kernel->vars) and referenced by pointer from expressions and statements. */

#define TC_MAX_RANK 8

/* Var kinds: NAME, printed name. */
#define TC_VARKINDS(X)                   \
	X(TENSOR, "tensor")              \
	X(SCALAR, "scalar")              \
	X(TUNABLE, "tunable")            \
	X(BUFFER, "buffer")              \
	X(LOCAL, "local")                \
	X(LOOP, "loop")                  \
	X(BLOCK, "block")                \
	X(HANDLE, "handle")

typedef enum TcVarKind {
#define X(name, printed) TC_VAR_##name,
	TC_VARKINDS(X)
#undef X
	TC_VAR_COUNT
} TcVarKind;

/* Memory scopes of buffers: NAME, spelling. */
#define TC_SCOPES(X)               \
	X(SHARED, "shared")        \
	X(FRAGMENT, "fragment")    \
	X(LOCAL, "local")

typedef enum TcScope {
	TC_SCOPE_NONE,
#define X(name, spelling) TC_SCOPE_##name,
	TC_SCOPES(X)
#undef X
	TC_SCOPE_COUNT
} TcScope;

const char *tc_varkind_name(TcVarKind k);
const char *tc_scope_name(TcScope s);

typedef struct TcExpr TcExpr;
typedef struct TcStmt TcStmt;

/* How a fragment is spread over a GPU block's threads (layout.c decides;
 * the CPU keeps every buffer whole and ignores this). */
typedef enum TcLayoutKind {
	TC_LAYOUT_NONE,    /* not a fragment, or a CPU target */
	TC_LAYOUT_SMEM,    /* kept in shared memory: any thread reaches any element */
	TC_LAYOUT_MMA,     /* registers, in the m16n8 accumulator layout of mma.sync */
	TC_LAYOUT_BLOCKED, /* registers, rows over thread groups, columns in vectors */
	TC_LAYOUT_MFMA,    /* registers, in the transposed 16x16 accumulator
			      layout of v_mfma_f32_16x16x16 (HIP, wave64) */
	TC_LAYOUT_WGMMA,   /* registers, in the m64nN accumulator layout of
			      wgmma.mma_async (warpgroups of 4 warps, sm_90a) */
} TcLayoutKind;

/* Whether fragments of layout kind k are spread like a matrix
 * instruction's accumulator (MMA, MFMA or WGMMA). */
static inline bool
tc_layout_is_matrix(TcLayoutKind k)
{
	return k == TC_LAYOUT_MMA || k == TC_LAYOUT_MFMA || k == TC_LAYOUT_WGMMA;
}

/* How one dim of a register fragment is spread.  Fragments (and parallel
 * loops) whose dims share a distribution class visit the same indices in
 * the same threads; the emitter names each class once. */
typedef struct TcDist {
	int id;            /* the class, numbered per kernel; -1 if none */
	TcLayoutKind kind; /* MMA, MFMA or BLOCKED */
	int axis;          /* 0: spread like rows, 1: like columns */
	int extent;        /* elements along the dim */
	int count;         /* elements of it each thread holds */
	int tiles;         /* MMA: 16-row (axis 0) or 8-column tiles per warp;
			      MFMA: 16-row or 16-column tiles per wave;
			      WGMMA: 64-row or 8-column tiles per warpgroup */
	int tr, tc;        /* BLOCKED: thread grid, rows x columns (tr * tc = threads) */
	int vec;           /* BLOCKED axis 1: consecutive columns a thread holds */
} TcDist;

typedef struct TcLayout {
	TcLayoutKind kind; /* SMEM, or MMA / BLOCKED for register fragments */
	TcDist dim[2];     /* register fragments: per dim (rank 1 or 2) */
	int warps_m;       /* MMA, MFMA: warps along rows (kernel-wide);
			      WGMMA: warpgroups along rows */
	int warps_n;       /* MMA, MFMA: warps along columns; WGMMA:
			      warpgroups along columns */
} TcLayout;

typedef struct TcVar {
	TcVarKind kind;  /* what sort of name this is */
	const char *name; /* the tile program's name, never synthesized
			     but for vars a pass makes (the ragged pass's
			     loops, expand_pipeline.c's), named apart from
			     every other var */
	TcDtype dtype;   /* element type (scalar type for scalars) */
	TcLoc loc;       /* where it is declared */
	int index;       /* position in kernel->vars */
	/* TENSOR: kernel parameter index; SCALAR: parameter index. */
	int param;
	/* TENSOR, BUFFER: rank and extent of each dim, outermost first.
	 * Tensor dims are expressions over scalar parameters and tunables;
	 * buffer dims are expressions over tunables (constant once
	 * specialized). */
	int rank;
	TcExpr *shape[TC_MAX_RANK];
	bool is_const;   /* TENSOR: declared const (read-only) */
	/* TENSOR: element offsets are computed in 64 bits, since they can
	 * pass INT_MAX (index_width.c decides); else in int. */
	bool index64;
	TcScope scope;   /* BUFFER: its memory scope */
	/* TUNABLE: the default, the choices and the bound value. */
	long long def_value;
	long long *choices;
	int nchoices;
	long long value; /* bound by specialize (default unless -D) */
	bool bound;      /* value came from -D or a tuning record */
	/* HANDLE (expand_pipeline.c): a helper object of the generated
	 * code, declared by the COPY_PLAN or STAGE_BAR_INIT that names it;
	 * no value of a dtype (dtype is I32, unused). */
	/* BLOCK: which grid dimension (0 = x, 1 = y, 2 = z). */
	int grid_dim;
	/* LOCAL: whether it is ever assigned after its declaration. */
	bool mutated;
	/* BUFFER on GPU targets, set by the scheduling passes: */
	TcLayout layout;  /* fragments: how threads hold it (layout.c) */
	int stages;       /* copies kept for a pipelined loop; 1 = none */
	int pad;          /* elements of padding per row in shared memory */
	bool swizzle;     /* shared rows unpadded, 16-byte chunks XOR-permuted
			     per row (smem.c); only copy_g2s and ldmatrix
			     or wgmma touch such a buffer */
	bool panels;      /* swizzle with rows wider than 128 bytes stored as
			     column panels of 128-byte rows, one after the
			     other (smem.c): the layout wgmma reads */
	int swizzle_rows; /* swizzle for a tile read by columns (smem.c):
			     the XOR changes every swizzle_rows rows, not
			     with each row as ldmatrix wants; copies into it
			     and element reads touch it (gpu.c's tile_index);
			     0 otherwise */
	long long smem_offset; /* byte offset in the block's shared memory,
				  -1 if the buffer lives in registers */
	/* A register fragment that holds its elements as memory stores
	 * them (f16 as f16), not as values (f16 as float): the prefetch
	 * copy of a pipelined loop (expand_pipeline.c), so its loads are
	 * not converted, and waited for, until the iteration reads it. */
	bool stored;
	/* A fragment or local buffer that layout.c put in shared memory
	 * rather than registers: why, as a clause ("it is the B operand
	 * of a tile_gemm"), and the statement or use that decided it
	 * (line 0 when no single one did).  NULL otherwise. */
	const char *smem_why;
	TcLoc smem_why_loc;
	/* BUFFER on the openmp target (passes/cpu_fuse.c): every run that
	 * touches it keeps it in registers, so it is never stored (nor
	 * declared). */
	bool unstored;
	/* The openmp target (passes/cpu_strip.c): a buffer of the kernel's
	 * top level that each block of a strip keeps its own of (the block
	 * function declares kernel->strip of them). */
	bool each_block;
	/* A stage view's buffer (expand_pipeline.c: `As_stage` names one
	 * stage of `As`), what notes call it; NULL for the rest. */
	const struct TcVar *view_of;
	/* reg_operands.c: a narrow fragment no statement names any more
	 * (the gemm that read it reads the fragment it was rounded from),
	 * not declared. */
	bool folded;
	/* fuse_b.c: with folded, a gemm's B operand that the gemm computes
	 * as it loads it (gemm.b_from), held nowhere. */
	bool computed;
} TcVar;

/* --- Expressions ---------------------------------------------------------- */

/* Expression kinds: NAME, printed name; the comment says which fields of
 * TcExpr's union are valid. */
#define TC_EXPRKINDS(X)                                  \
	X(INT, "int")       /* ival */                    \
	X(FLOAT, "float")   /* fval */                    \
	X(VAR, "var")       /* var: scalar, tunable, loop, block, local */ \
	X(BINARY, "binary") /* bin.op, bin.lhs, bin.rhs */ \
	X(UNARY, "unary")   /* un.op, un.arg */            \
	X(SELECT, "select") /* sel.cond, sel.then, sel.els */ \
	X(CALL, "call")     /* call.fn, call.args, call.nargs */ \
	X(CAST, "cast")     /* cast.arg; dtype is the target */ \
	X(LOAD, "load")     /* load.var (tensor/buffer), load.idx[rank] */ \
	X(SMS, "sms")       /* none: the SMs of the device a launch runs on \
			       (a persistent kernel's grid only) */

typedef enum TcExprKind {
#define X(name, printed) TC_EX_##name,
	TC_EXPRKINDS(X)
#undef X
	TC_EX_COUNT
} TcExprKind;

const char *tc_exprkind_name(TcExprKind k);

struct TcExpr {
	TcExprKind kind; /* selects the union arm */
	TcDtype dtype;   /* type of the value */
	TcLoc loc;       /* source location */
	union {
		long long ival; /* INT */
		double fval;    /* FLOAT */
		TcVar *var;     /* VAR */
		struct {
			TcBinop op;
			TcExpr *lhs, *rhs;
		} bin; /* BINARY */
		struct {
			TcUnop op;
			TcExpr *arg;
		} un; /* UNARY */
		struct {
			TcExpr *cond, *then, *els;
		} sel; /* SELECT */
		struct {
			TcFunc fn;
			TcExpr **args;
			int nargs;
		} call; /* CALL */
		struct {
			TcExpr *arg;
		} cast; /* CAST */
		struct {
			TcVar *var;
			TcExpr *idx[TC_MAX_RANK]; /* one per dim of var */
		} load; /* LOAD */
	} u;
};

/* --- Regions: tile operands ----------------------------------------------- */

/* A tile operand: a whole buffer, or the box of a tensor (or buffer) at
 * `origin` whose extent is the other operand's shape.  dims[] lists which
 * dims of var the tile's dims cover, in tile order; the other dims of var
 * are fixed at their origin index. */
typedef struct TcRegion {
	TcVar *var;                  /* tensor or buffer */
	bool whole;                  /* the whole buffer, named plainly */
	TcExpr *origin[TC_MAX_RANK]; /* var->rank indices (INT 0 if whole) */
	int ndims;                   /* rank of the tile this region spans */
	int dims[TC_MAX_RANK];       /* tile dim i covers var dim dims[i] */
	TcLoc loc;                   /* the operand's source location */
	/* Ragged regions (tile_copy operands on tensors
	 * only; the ragged pass lowers them, so later passes never see
	 * them).  An element outside them reads as zero and is not written,
	 * as one outside the tensor. */
	TcExpr *bound[TC_MAX_RANK]; /* tile_bounded: tile dim i holds only
				       its first bound[i] elements; NULL =
				       unbounded */
	TcVar *mask;  /* tile_masked: a buffer of the tile's shape, or of its
			 dim 0 (a row mask); elements where it is 0 are
			 outside.  NULL = none */
	TcVar *rows;  /* tile_rows: a rank-1 i32 or i64 buffer of the tile's
			 dim 0 extent; tile row i is var's index
			 origin[dims[0]] + rows[i] along dims[0].  NULL = the
			 region is a box */
	TcLoc bound_loc, mask_loc, rows_loc; /* where each was written */
	bool bounded;                /* the bounds pass has set nonneg */
	unsigned nonneg;             /* bit d: origin[d] >= 0 is proven, so
					no element needs the lower test */
} TcRegion;

/* Whether r is a ragged region (tile_bounded, tile_masked, tile_rows). */
static inline bool
tc_region_ragged(const TcRegion *r)
{
	return r->bound[0] || r->mask || r->rows;
}

/* --- Statements ----------------------------------------------------------- */

/* Loop kinds. */
typedef enum TcLoopKind {
	TC_LOOP_SERIAL,    /* for (int i = begin; i < end; i += step) */
	TC_LOOP_PARALLEL,  /* tile_parallel(i, extent) */
	TC_LOOP_PIPELINED, /* tile_pipelined(i, extent, stages) */
} TcLoopKind;

/* How the threads of a block run a PARALLEL loop that follows no register
 * fragment, on GPU targets (layout.c; TC_THREADS_NONE before the pass, on
 * the CPU and for anchored loops). */
typedef enum TcThreadMap {
	TC_THREADS_NONE,
	/* Iterations spread over the block's threads; a SPREAD loop that
	 * is the only statement of a SPREAD loop is spread with it (the
	 * nest as one flat loop). */
	TC_THREADS_SPREAD,
	/* Every iteration run by the one thread that runs the enclosing
	 * spread iteration. */
	TC_THREADS_SERIAL,
	/* Inside an anchored loop: iterations spread over the threads that
	 * run the enclosing anchored iteration alike (those that differ
	 * only in bits of threadIdx.x its classes do not depend on). */
	TC_THREADS_PEERS,
} TcThreadMap;

/* Reductions. */
#define TC_REDUCES(X)              \
	X(SUM, "sum")              \
	X(MAX, "max")              \
	X(MIN, "min")              \
	X(ABSMAX, "absmax")

typedef enum TcReduceOp {
#define X(name, spelling) TC_RED_##name,
	TC_REDUCES(X)
#undef X
	TC_RED_COUNT
} TcReduceOp;

const char *tc_reduce_name(TcReduceOp op);
/* The type a reduction of every element of a tile of dtype t combines in
 * and gives (tile_sum and its kin): C's arithmetic type for t, f32 for
 * the narrow floats, i32 for bool, i4, i8 and u8, else t itself. */
TcDtype tc_reduce_all_type(TcDtype t);

/* Statement kinds: NAME, printed name; the comment says which fields of
 * TcStmt's union are valid. */
#define TC_STMTKINDS(X)                                                  \
	X(BLOCK, "block")   /* block.body: statements in order */        \
	X(DECL, "decl")     /* decl.var (LOCAL or BUFFER), decl.init (may be NULL) */ \
	X(ASSIGN, "assign") /* assign.dst (VAR local or LOAD), assign.value; \
				  compound assignments are expanded */   \
	X(FOR, "for")       /* loop.* */                                 \
	X(IF, "if")         /* cond.* */                                 \
	X(COPY, "copy")     /* copy.dst, copy.src */                     \
	X(GEMM, "gemm")     /* gemm.* */                                 \
	X(FILL, "fill")     /* fill.dst (whole buffer), fill.value */    \
	X(REDUCE, "reduce") /* reduce.* */                               \
	X(ATOMIC_ADD, "atomic_add") /* copy.dst (tensor), copy.src */ \
	X(REDUCE_ALL, "reduce_all") /* reduce_all.*: every element of a \
				       buffer into one scalar local */ \
	X(ARG_REDUCE, "arg_reduce") /* arg_reduce.*: argmax / argmin / \
				       top-k along a dim, values and indices */ \
	X(BARRIER, "barrier") /* barrier.threads: every thread of the \
				 block waits here (GPU targets, \
				 barrier.c), or the program's threads \
				 only in a ROLES' consumer block */ \
	X(PREFETCH, "prefetch") /* copy.dst (a whole buffer: the tile's \
				   shape), copy.src (a tensor region): \
				   the rows a COPY src -> dst would read \
				   are asked into cache; nothing is read \
				   or written (openmp, cpu_prefetch.c) */ \
	/* The statements below are made by expand_pipeline.c only: \
	 * a pipelined loop carried out (GPU targets with cp.async). */ \
	X(ASYNC_COPY, "async_copy") /* copy.dst (a whole staged shared \
				       buffer), copy.src (a tensor region), \
				       copy.stage, copy.lower: issued now, \
				       landed after a later WAIT_GROUP */ \
	X(COMMIT_GROUP, "commit_group") /* no fields: the async copies \
					   issued since the last commit \
					   form one group */ \
	X(WAIT_GROUP, "wait_group") /* wait.pending: this thread waits \
				       until at most that many of its \
				       committed groups are in flight */ \
	X(WGMMA_WAIT, "wgmma_wait") /* wait.pending, wait.acc: the \
				       warpgroup waits until at most that \
				       many of its wgmma groups (which \
				       write acc) are in flight */ \
	X(STAGE_VIEW, "stage_view") /* view.*: a name for one stage of a \
				       staged shared buffer */ \
	X(COPY_PLAN, "copy_plan") /* plan.*: declares a strided copy's \
				     per-thread set-up, for ASYNC_COPYs \
				     lowered STRIDED */ \
	X(PIPE_SELECT, "pipe_select") /* select.*: `fast` when every plan's \
					 tiles are whole 16-byte vectors \
					 (tested at run time), else \
					 `fallback` */ \
	X(STAGE_BAR_INIT, "stage_bar_init") /* bars.*: declares a loop's \
					       stage barriers, one thread \
					       initializes them */ \
	X(STAGE_BAR_ARRIVE, "stage_bar_arrive") /* bar.*: this thread's \
						   (full) or warp's \
						   (empty) arrival */ \
	X(STAGE_BAR_WAIT, "stage_bar_wait") /* bar.*: wait for the phase \
					       of a stage barrier of a \
					       parity */ \
	X(ROLES, "roles") /* roles.*: warp specialization (sm_90a): a \
			     producer warpgroup past the program's \
			     threads, one thread of which runs \
			     `producer`; the program's threads run \
			     `consumer` */ \
	X(TILES, "tiles") /* tiles.body: a persistent block's walk over \
			     the output tiles (expand_pipeline.c): \
			     the body runs once per tile, from \
			     blockIdx.x on in steps of the grid, \
			     with the block vars bound to the tile \
			     (the kernel's `tiles` extents, \
			     `rasterize` order) */

typedef enum TcStmtKind {
#define X(name, printed) TC_ST_##name,
	TC_STMTKINDS(X)
#undef X
	TC_ST_COUNT
} TcStmtKind;

const char *tc_stmtkind_name(TcStmtKind k);

/* How a COPY or ASYNC_COPY is carried out on GPU targets
 * (expand_pipeline.c decides; ANY before that pass and on the CPU). */
typedef enum TcCopyLower {
	TC_COPY_ANY,      /* not decided */
	TC_COPY_VECTOR,   /* tensor -> shared in 16-byte vectors, guarded
			     per vector at the tensor's edges (copy_g2s) */
	TC_COPY_STRIDED,  /* an async copy of the mbarrier loop: per-thread
			     addresses set up once from copy.first and
			     moved by copy.advance each iteration (G2S) */
	TC_COPY_REGISTER, /* one operand a register fragment */
	TC_COPY_GENERIC,  /* element by element over the block's threads */
	TC_COPY_TMA,      /* an async copy of the mbarrier loop by the tensor
			     memory accelerator: thread 0 moves the tile in
			     bulk tensor copies through copy.tmap, which
			     complete on the stage's full barrier */
	TC_COPY_TMA_STORE, /* a register fragment (a wgmma accumulator's
			      layout) into a tensor tile, through shared
			      memory (copy.staging) and bulk tensor stores
			      by thread 0 through copy.tmap (tma_store.c);
			      as REGISTER where the map was not built */
} TcCopyLower;

const char *tc_copy_lower_name(TcCopyLower l);

/* --- CPU schedule: gemm (passes/cpu_gemm.c, docs/backend-openmp.md) -- */

/* What a tile_gemm becomes on the openmp target. */
typedef enum TcCpuGemmKind {
	TC_CPU_GEMM_NONE,     /* not scheduled (GPU targets) */
	TC_CPU_GEMM_LOOPS,    /* an i, k, j loop nest in the accumulator's
			       * type (f64, a narrow accumulator, ints
			       * on the generic target) */
	TC_CPU_GEMM_F32,      /* f32 += float-held operands: the packed
			       * register-blocked micro-kernel */
	TC_CPU_GEMM_VNNI_I8,  /* i32 += i8 * i8 on vpdpbusd */
	TC_CPU_GEMM_AMX_BF16, /* f32 += bf16 * bf16 on AMX tdpbf16ps */
	TC_CPU_GEMM_AMX_I8,   /* i32 += i8 * i8 on AMX tdpbssd */
	TC_CPU_GEMM_AVX2_I8,  /* i32 += i8 * i8 on AVX2 vpmaddwd */
} TcCpuGemmKind;

/* The kind's word in the IR ("f32", "vnni_i8", "amx_bf16", "amx_i8",
 * "avx2_i8"; "loops" and "none" for the others). */
const char *tc_cpu_gemm_name(TcCpuGemmKind k);

/* The cpu_gemm pass's decision for one tile_gemm: the helper the
 * printer calls and the blocking it passes. */
typedef struct TcCpuGemm {
	TcCpuGemmKind kind;
	const char *helper; /* templates/cpu/gemm.h function; NULL: LOOPS */
	int mr, nr;         /* register block (F32, VNNI) or tile shape
			     * (AMX: 16 x 16) of c */
	int kc;             /* k per packed panel of b (its L1 share) */
	bool pack_b;        /* b is packed into kc x nr panels */
	/* AMX_BF16 from float-held operands: why they are not held as
	 * stored (a clause naming the buffer and what touches it) and
	 * where; explain.c words it as a note.  NULL otherwise. */
	const char *why;
	TcLoc why_loc;
} TcCpuGemm;

struct TcStmt {
	TcStmtKind kind; /* selects the union arm */
	TcLoc loc;       /* the source statement this came from (zero for
			    bookkeeping a pass made up) */
	/* A statement a pass made: one line for the reader of the
	 * generated code, printed as a comment above it; else NULL. */
	const char *note;
	/* The openmp target (passes/cpu_strip.c): a statement of the
	 * kernel's top level or of its strip loop's body that runs once for
	 * every block of the strip (the others run once for all of them). */
	bool each_block;
	union {
		struct {
			TcVec body; /* TcStmt * */
			/* Made by a pass in place of the source statement
			 * at loc (an expanded loop): the generated code
			 * cites that statement above the block. */
			bool cite;
		} block;
		struct {
			TcVar *var;
			TcExpr *init;
		} decl;
		struct {
			TcExpr *dst; /* VAR of a LOCAL, or LOAD */
			TcExpr *value;
		} assign;
		struct {
			TcLoopKind kind;
			TcVar *var;      /* the induction variable (LOOP) */
			TcExpr *begin;   /* 0 for parallel and pipelined */
			TcExpr *end;     /* exclusive bound (the extent) */
			TcExpr *step;    /* INT 1 unless written otherwise */
			TcExpr *stages;  /* PIPELINED: stage count */
			TcStmt *body;    /* a BLOCK */
			/* PARALLEL on GPU targets (layout.c): the MMA
			 * fragment whose layout this loop follows, and
			 * which of its dims the var runs over; NULL when
			 * iterations are spread over the threads. */
			TcVar *anchor;
			int anchor_dim;
			/* PARALLEL on GPU targets, not anchored (layout.c):
			 * how the block's threads run it. */
			TcThreadMap threads;
			/* PIPELINED on GPU targets (pipeline pass): how
			 * many leading COPY statements of the body are
			 * issued asynchronously, `stages` ahead. */
			int async_copies;
			/* PIPELINED (pipeline pass): the body's one
			 * matrix-instruction gemm with both operands in
			 * shared memory, when every async copy fills one
			 * of its operands and is a strided tile copy
			 * (copy.first, copy.advance): the emitter then
			 * issues the next stage's copies from inside it.
			 * NULL otherwise. */
			TcStmt *copies_in_gemm;
			/* With copies_in_gemm (smem pass): the byte offset
			 * in the shared array of the fast loop's 2 x stages
			 * mbarriers (8 bytes each: full[stages], then
			 * empty[stages]); 0 before the pass or without. */
			long long barriers;
			/* PIPELINED on GPU targets (pipeline pass): why the
			 * body's first copy from a tensor that is not issued
			 * early is not, as a clause ("its origin reads 'n0',
			 * which the loop changes"), and where that copy is;
			 * NULL when every such copy is, or there is none.
			 * explain.c words it as a note. */
			const char *pipe_why;
			TcLoc pipe_why_loc;
			/* PARALLEL on GPU targets (ragged.c): the column
			 * loop of a gathered or bounded load into a shared
			 * tile, whose body is the one element assignment
			 * `tile[..][col] = in ? T[..][.. + col] : 0`, the
			 * row contiguous in both.  row_vec elements (16
			 * bytes) move as one vector where row_in (what
			 * `in` asks of the row; NULL: true) holds, col_in
			 * (what it asks of the column, increasing in it;
			 * NULL: true) holds for the run's last column and
			 * both addresses are 16-byte aligned (a per-row
			 * check at run time); element by element
			 * otherwise.  0: no such loop. */
			int row_vec;
			TcExpr *row_in, *col_in;
			/* The innermost loop of a spread nest on GPU
			 * targets (runs.c): each thread runs `run`
			 * consecutive iterations together, their values
			 * stored into the body's one shared-tile row as
			 * one vector; 0: one iteration at a time.
			 * run_why: for a loop that assigns a shared
			 * tile's elements and takes no run, why (a
			 * clause; explain.c words it under --explain). */
			int run;
			const char *run_why;
			/* The innermost loop of a run or of a gemm's
			 * computed B (gemm.b_from) on CUDA (half_pairs.c):
			 * its values, 4- or 8-bit integers of a run plus an integer
			 * times an f16 factor, computed two at a time in
			 * half precision, exactly as in f32
			 * (tc_half_pairs_form); pair_why: for such a loop
			 * whose value falls short of that form, why (a
			 * clause, for --explain). */
			bool pairs;
			const char *pair_why;
			/* PARALLEL on openmp targets with explicit lanes
			 * (cpu_transpose.c): the outer loop of a nest that
			 * moves one buffer's S[i][j] to another's D[j][i],
			 * printed as 8 x 8 blocks through registers. */
			bool transpose;
		} loop;
		struct {
			TcExpr *cond;
			TcStmt *then; /* a BLOCK */
			TcStmt *els;  /* a BLOCK or NULL */
			/* box_tests.c: cond is the corner tests of an
			 * element loop, then its decided copy, els the
			 * loop as written (printed `if C, box {`). */
			bool box;
		} cond;
		struct {
			TcRegion dst, src;
			/* The async copies of a loop with copies_in_gemm
			 * (pipeline pass): the source origin at the
			 * loop's first iteration, and the elements the
			 * source tile moves per iteration (loop
			 * invariant); NULL otherwise. */
			TcExpr *first[TC_MAX_RANK];
			TcExpr *advance;
			/* COPY, ASYNC_COPY on GPU targets: how it is
			 * carried out (expand_pipeline.c). */
			TcCopyLower lower;
			/* ASYNC_COPY: the stage of dst it fills, an int
			 * expression in 0 .. dst->stages - 1. */
			TcExpr *stage;
			/* ASYNC_COPY lowered STRIDED: the COPY_PLAN's
			 * handle, and the iteration whose tile it copies
			 * (the source origin is that iteration's too). */
			TcVar *plan;
			TcExpr *iter;
			/* Lowered TMA: the kernel's tensor map it moves
			 * boxes through, and the STAGE_BAR_INIT handle
			 * whose full barrier of copy.stage it completes
			 * on (ASYNC_COPY only; the COPY_PLAN's copy has
			 * no stage). */
			struct TcTensorMap *tmap;
			TcVar *bars;
			/* Lowered TMA_STORE (tma_store.c): the byte offset
			 * in shared memory (1024-aligned) the tile goes
			 * through, how many of its boxes (column panels of
			 * the map's box) that region holds at once, and
			 * the threads whose barriers order it (0: the
			 * block's; in a ROLES' consumer block, the
			 * program's). */
			long long staging;
			int staged;
			long long sync;
			/* Lowered VECTOR or TMA_STORE on GPU targets
			 * (aligned.c): the helper's test of whether the
			 * tile is whole 16-byte vectors holds on every
			 * aligned launch (kernel->aligned), where the
			 * printer makes it constant (TILEC_ALIGNED). */
			bool launch_aligned;
			/* COPY of a buffer into a tensor on openmp targets
			 * (cpu_stream.c): the tensor is an output the
			 * kernel only writes through such copies, and the
			 * rows may go past the cache where it is large. */
			bool stream;
		} copy; /* COPY, ATOMIC_ADD, ASYNC_COPY, PREFETCH */
		struct {
			int pending; /* groups left in flight, >= 0 */
			TcVar *acc;  /* WGMMA_WAIT: the accumulator */
		} wait; /* WAIT_GROUP, WGMMA_WAIT */
		struct {
			/* A BUFFER made for the view: of's shape, dtype,
			 * layout and swizzle, one stage; the statements
			 * after this one in its block name it where they
			 * named `of`. */
			TcVar *var;
			TcVar *of;     /* the staged shared buffer */
			TcExpr *stage; /* which stage, 0 .. of->stages - 1 */
		} view; /* STAGE_VIEW */
		struct {
			TcVar *var;   /* its HANDLE */
			/* A COPY lowered STRIDED (copy.first, copy.advance:
			 * the tile at iteration 0 and its step). */
			TcStmt *copy;
			/* The mbarrier loop's copies of it are TMA's,
			 * through this map: the plan is a tilec::TmaCopy,
			 * whose test is the map's and, as a G2S's, the
			 * first tile's and the advance's alignment. */
			struct TcTensorMap *tmap;
		} plan; /* COPY_PLAN */
		struct {
			TcVec plans;      /* TcVar *: the HANDLEs tested */
			TcStmt *fast;     /* a BLOCK: the mbarrier loop */
			TcStmt *fallback; /* a BLOCK: the cp.async loop */
			/* Every plan's test holds on an aligned launch
			 * (aligned.c): the fast loop is taken there
			 * without testing (TILEC_ALIGNED). */
			bool launch_aligned;
		} select; /* PIPE_SELECT */
		struct {
			TcVar *var;        /* its HANDLE */
			int stages;        /* full[stages], then empty[stages] */
			long long offset;  /* byte offset in shared memory
					      (loop.barriers), 8 bytes each */
			long long full_arrivals;  /* per phase of full[s]:
						     the block's threads,
						     and one per TMA copy
						     of a stage */
			long long empty_arrivals; /* per phase of empty[s]:
						     its warps */
			long long copiers;        /* of full_arrivals: the
						     threads arriving after
						     their cp.async copies
						     (the block's threads;
						     0 when a producer
						     warpgroup's TMA copies
						     are all there is) */
		} bars; /* STAGE_BAR_INIT */
		struct {
			TcVar *bars;    /* the STAGE_BAR_INIT's HANDLE */
			/* full[stage]: an arrival made when this thread's
			 * async copies so far have landed; else empty[stage]:
			 * this warp is done reading the stage. */
			bool full;
			TcExpr *stage;  /* 0 .. stages - 1 */
			TcExpr *parity; /* STAGE_BAR_WAIT: the phase's parity */
		} bar; /* STAGE_BAR_ARRIVE, STAGE_BAR_WAIT */
		struct {
			/* 0: every thread of the block; else the first
			 * `threads` (the program's, in a ROLES' consumer
			 * block: a named barrier the producer warpgroup
			 * does not take part in). */
			long long threads;
		} barrier; /* BARRIER */
		struct {
			TcStmt *producer; /* a BLOCK: one thread's, the
					     first of the producer
					     warpgroup */
			TcStmt *consumer; /* a BLOCK: the program's threads' */
			long long threads;          /* the program's threads */
			long long producer_threads; /* the producer warpgroup */
			/* Registers per thread each role keeps
			 * (setmaxnreg): few for the producer, the rest of
			 * the register file for the consumers. */
			int producer_regs, consumer_regs;
			/* Blocks per SM the kernel's launch bounds
			 * promise (the registers are shared by them). */
			int blocks;
		} roles; /* ROLES */
		struct {
			TcStmt *body; /* a BLOCK: one output tile's work */
		} tiles; /* TILES */
		struct {
			TcRegion c, a, b; /* C += op(A) * op(B) */
			bool trans_a;     /* A is stored K x M */
			bool trans_b;     /* B is stored N x K */
			/* layout.c, on a target with wgmma: the n of each
			 * wgmma instruction (a warpgroup's columns go in
			 * chunks of it); 0 when the gemm is not wgmma's. */
			int wgmma_n;
			/* layout.c: the wgmma form sums below f32
			 * precision, so the gemm's sum is promoted
			 * (TcMatrixForm.promote). */
			bool wgmma_promote;
			/* reg_operands.c: A is an f32 register fragment
			 * whose elements the gemm rounds to B's type (f16
			 * or bf16) as it packs them: it reads the fragment
			 * a copy rounded into a narrow one before. */
			bool round_a;
			/* expand_pipeline.c: wgmma groups of this gemm
			 * left in flight when it returns (0 or 1): the
			 * mbarrier loop's gemm, when nothing else in the
			 * loop touches its accumulator, keeps one, and a
			 * WGMMA_WAIT after the loop waits for it. */
			int wgmma_pending;
			/* expand_pipeline.c: a BLOCK run by every thread
			 * inside the gemm, after its first matrix
			 * instruction (the mbarrier loop's next copies);
			 * NULL if none. */
			TcStmt *issue;
			/* fuse_b.c (CUDA, mma.sync): B is no buffer (its
			 * var folded); each warp computes the elements it
			 * multiplies as it loads them, by the element loop
			 * that wrote them, kept here: a spread nest of two
			 * loops over B's rows and columns whose one
			 * statement assigns B's element.  NULL for a
			 * buffer operand. */
			TcStmt *b_from;
			/* fuse_b.c: why the element loop that writes B
			 * right before this gemm stays a loop into shared
			 * memory (a note); NULL for none. */
			const char *b_why;
			/* The openmp target (passes/cpu_gemm.c): how the
			 * gemm runs; kind TC_CPU_GEMM_NONE elsewhere. */
			TcCpuGemm cpu;
		} gemm;
		struct {
			TcRegion dst;
			TcExpr *value;
		} fill;
		struct {
			TcReduceOp op;
			TcRegion dst, src;
			int dim;         /* the dim of src reduced away */
			bool accumulate; /* combine with dst's old contents */
		} reduce;
		struct {
			TcReduceOp op;
			TcVar *dst;     /* the LOCAL scalar it sets */
			TcRegion src;   /* a whole buffer, any rank */
		} reduce_all;
		struct {
			bool min;        /* argmin; else argmax (or top-k) */
			/* top-k: dst and index keep src's rank, k (their
			 * extent along dim) greatest elements in order;
			 * else dim is reduced away. */
			bool topk;
			TcRegion dst;    /* the extreme values (whole buffer) */
			TcRegion index;  /* their indices along dim (whole
					    buffer of i32 or i64, dst's shape) */
			TcRegion src;    /* a whole buffer */
			int dim;         /* the dim of src reduced (away) */
		} arg_reduce;
	} u;
};

/* --- CPU schedule: row-wise runs (passes/cpu_fuse.c, docs/ir.md) -------- */

/* How one block-level statement of a run touches its tile. */
typedef enum TcFuseKind {
	TC_FUSE_LOAD,   /* tile_copy(buffer, tensor region) */
	TC_FUSE_STORE,  /* tile_copy(tensor region, buffer) */
	TC_FUSE_MAP,    /* element-wise tile_parallel nest */
	TC_FUSE_REDUCE, /* tile_reduce_* along the last dim */
} TcFuseKind;

/* One statement's work in a run. */
typedef struct TcFuseOp {
	const TcStmt *s;      /* the statement */
	TcFuseKind kind;      /* what it is */
	int rank;             /* 2: over rows and columns; 1: columns only */
	long long rows, cols; /* its index space (rows is 1 at rank 1) */
	const TcExpr *ext[2]; /* rows and columns as written (ext[0] NULL at
				 rank 1) */
	const TcVar *buf;     /* LOAD, STORE: the buffer; REDUCE: the source */
	const TcRegion *reg;  /* LOAD, STORE: the tensor region */
	const TcStmt *body;   /* MAP: the innermost loop's body (a BLOCK) */
	const TcVar *var[2];  /* MAP: its loop vars, rows then columns
				 (var[0] NULL at rank 1) */
	const TcVar *rowread[8]; /* MAP: per-row buffers it reads, r[i] */
	int nrowread;         /* how many */
	bool helper;          /* LOAD, STORE: rows copy by tilec_load_* /
				 tilec_store_* */
	bool elided;          /* LOAD: its buffer is kept in registers (the
				 elements load in the loop) */
	const TcStmt *main;   /* MAP (passes/cpu_edge.c): the body as the
				 run's main element loop runs it, the tests
				 its columns decide folded (a BLOCK); NULL
				 when that is the body itself */
	bool vector;          /* MAP (passes/cpu_vector.c): that body has an
				 explicit vector form over the run's columns */
	/* The run's loops (passes/cpu_edge.c, docs/ir.md): */
	bool partial_rows;    /* LOAD, STORE of rank 2: the rows inside the
				 tensor may be fewer than the tile's (or a
				 tensor dim the tile does not cover may lie
				 outside it: then none are) */
	bool partial_cols;    /* LOAD, STORE: the same of its columns (at
				 rank 1, of the dims it does not cover too) */
	bool ends_main;       /* LOAD the loop reads: the columns inside
				 its tensor in a row bound the main loop
				 (one op for each distinct such extent) */
	bool zero_past;       /* LOAD the loop reads: past the main loop's
				 end none of its columns are inside (the
				 edge loop reads 0 without a test) */
	bool streamed;        /* STORE (passes/cpu_vector.c): written from
				 the vector loop, whole vectors at a time */
	bool next_block;      /* LOAD (passes/cpu_ahead.c): its rows for
				 the next block are prefetched in the run's
				 main loop (TcFusion.next) */
} TcFuseOp;

#define TC_FUSE_MAX_AGAIN 8

/* A run of statements block[first .. first + nstmts) done as one loop
 * nest, one pass per row. */
typedef struct TcFusion {
	const TcStmt *block;  /* the BLOCK holding them */
	int first, nstmts;    /* which of its statements */
	int n;                /* ops: nagain recomputed, then one per
				 statement */
	int nagain;           /* ops[0 .. nagain) redo an earlier run's work */
	TcFuseOp *ops;        /* what each does */
	const TcVar *again[TC_FUSE_MAX_AGAIN]; /* the buffers it recomputes */
	int from[TC_FUSE_MAX_AGAIN]; /* the run (index in kernel->fusions)
					whose writes of each it redoes */
	int nrecomputed;      /* how many */
	int rank;             /* 2: rows and columns; 1: columns only */
	long long rows, cols; /* the index space */
	const TcExpr *ext[2]; /* rows (NULL at rank 1) and columns as written */
	bool *elided;         /* by var index: buffers kept in registers */
	bool dead;            /* it only writes buffers it keeps in registers
				 (which later runs recompute): nothing to do */
	bool *lanes;          /* by var index (passes/cpu_vector.c): the
				 locals of its nests that hold a value varying
				 over the lanes in their vector form; NULL
				 before the pass or where it has none */
	bool edged;           /* (passes/cpu_edge.c) its copies' partial dims
				 and where its main loop ends are marked */
	bool vec;             /* (passes/cpu_vector.c) its main loop runs on
				 explicit vectors, TILEC_VL columns a step */
	const TcExpr *next[2]; /* (passes/cpu_ahead.c) the origin, rows then
				 columns, of its next_block op's copy in the
				 next block; NULL where it prefetches none */
	long long next_elems; /* elements asked for by each prefetch */
} TcFusion;

/* --- Kernels and programs -------------------------------------------------- */

/* A tensor map (expand_pipeline.c): the descriptor through which the TMA
 * copies of one tensor move boxes of one shape, built on the host and
 * passed as a kernel parameter after the program's (abi.c,
 * docs/launch.md "tensor_maps"). */
typedef struct TcTensorMap {
	const char *name;        /* the parameter: TENSOR_map, TENSOR_map1, ... */
	TcVar *tensor;           /* a TENSOR parameter, dense, row-major */
	int box[TC_MAX_RANK];    /* elements of a box along each tensor dim (1
				    where the tile does not cover it) */
	int swizzle;             /* bytes of a box row in shared memory, whose
				    16-byte chunks are XOR-permuted (tile_offset):
				    128, 64 or 32 */
} TcTensorMap;

typedef struct TcKernel {
	const char *name;   /* the C function's name */
	TcLoc loc;          /* where the kernel is defined */
	TcVec params;       /* TcVar *: TENSOR and SCALAR, in signature order */
	TcVec vars;         /* TcVar *: every var, params first */
	TcExpr *threads;    /* tile_threads(n), or NULL (backend default) */
	TcExpr *grid[3];    /* extents along x, y, z; NULL = 1 */
	TcVar *block[3];    /* the BLOCK vars bound by tile_grid_*, or NULL */
	TcExpr *rasterize;  /* tile_rasterize(rows), or NULL */
	TcStmt *body;       /* a BLOCK */
	/* GPU targets with a warpgroup matrix instruction (layout.c): why
	 * the kernel's gemms use the warp one instead (the first gemm that
	 * does not fit wgmma, as a clause), or NULL. */
	const char *wgmma_why;
	TcLoc wgmma_why_loc;
	/* GPU targets (smem.c): dynamic shared memory per block, and where
	 * the scratch for cross-warp reductions starts in it. */
	long long smem_bytes;
	long long scratch_offset;
	/* The openmp target (passes/cpu_frame.c): bytes of every buffer the
	 * kernel declares, as a block's frame holds them; stack_bytes, of
	 * those it stores (frame_bytes less the buffers cpu_fuse.c keeps in
	 * registers, var->unstored). */
	long long frame_bytes;
	long long stack_bytes;
	/* The openmp target (passes/cpu_fuse.c): TcFusion *, the row-wise
	 * runs, in program order within each block. */
	TcVec fusions;
	/* The openmp target (passes/cpu_strip.c): how many consecutive
	 * blocks of a grid row (along x) one call of the block function
	 * runs, sharing the statements that do not depend on x, and the
	 * top-level serial or pipelined loop that holds them (strip_loop)
	 * whose body runs the shared statements once and the others once a
	 * block; 0 when each call runs one block. */
	int strip;
	const TcStmt *strip_loop;
	/* The openmp target (passes/cpu_bind.c): the grid's threads run one
	 * per core, close (tilec_bind_threads), unless the user places them
	 * through OpenMP's environment. */
	bool bind_close;
	/* The openmp target (passes/cpu_stream.c): some copy streams rows
	 * past the cache (copy.stream), so each thread fences once after
	 * its blocks, before the threads join. */
	bool streams;
	/* GPU targets with TMA (expand_pipeline.c): TcTensorMap *, the
	 * tensor maps its TMA copies read, in parameter order. */
	TcVec tmaps;
	/* GPU targets with TMA and wgmma (expand_pipeline.c, warp
	 * specialization): threads launched past the program's, the
	 * producer warpgroup of the kernel's ROLES statement; 0 when
	 * there is none. */
	long long producer_threads;
	int producer_blocks; /* and blocks per SM its launch bounds
				promise (its ROLES' roles.blocks) */
	/* A persistent kernel (expand_pipeline.c, --persistent): the
	 * output tiles along x, y, z (what grid[] was: NULL = 1), which
	 * TILES statements walk, binding block[] and following
	 * `rasterize`; grid[0] is then the blocks launched, the smaller
	 * of the tiles and the device's SMs (SMS) x `persistent`, the
	 * blocks an SM holds.  0 and NULL otherwise. */
	long long persistent;
	TcExpr *tiles[3];
	/* GPU targets (aligned.c): TcVar *, the tensor parameters, in
	 * order, whose base addresses and innermost extents an aligned
	 * launch has as multiples of 16 bytes; the statements marked
	 * launch_aligned rely on them.  Empty: no test depends on it. */
	TcVec aligned;
} TcKernel;

typedef struct TcProgram {
	const char *path;   /* the tile program's path */
	const char *text;   /* its source text */
	TcVec tunables;     /* TcVar * (TUNABLE), in declaration order */
	TcVec kernels;      /* TcKernel * */
} TcProgram;

/* Constructors (ir.c).  All allocate from the arena; loc may be zero. */
TcExpr *tc_expr_int(TcArena *a, long long v, TcLoc loc);
TcExpr *tc_expr_float(TcArena *a, double v, TcDtype t, TcLoc loc);
TcExpr *tc_expr_var(TcArena *a, TcVar *v, TcLoc loc);
TcExpr *tc_expr_binary(TcArena *a, TcBinop op, TcExpr *l, TcExpr *r,
		       TcLoc loc);
TcExpr *tc_expr_unary(TcArena *a, TcUnop op, TcExpr *arg, TcLoc loc);
TcExpr *tc_expr_new(TcArena *a, TcExprKind k, TcDtype t, TcLoc loc);
TcStmt *tc_stmt_new(TcArena *a, TcStmtKind k, TcLoc loc);
TcVar *tc_var_new(TcArena *a, TcKernel *k, TcVarKind kind, const char *name,
		  TcDtype t, TcLoc loc);
/* base, or base_2, base_3, ...: the first that names no var of k and no
 * tunable of p (a name a pass may give a var it makes), in a. */
const char *tc_fresh_name(TcArena *a, const TcProgram *p, const TcKernel *k,
			  const char *base);

/* Result type of a binary operation under C's usual conversions, restricted
 * to tile dtypes (comparisons give i32, like C). */
TcDtype tc_binop_type(TcBinop op, TcDtype l, TcDtype r);

/* What evaluating an expression over tunables and integer literals gave. */
typedef enum TcEval {
	TC_EVAL_CONST,    /* a constant, in *out */
	TC_EVAL_DYNAMIC,  /* it depends on something else (or divides by 0) */
	TC_EVAL_OVERFLOW  /* a step overflows its C type (int for i32) */
} TcEval;
/* Evaluate e with overflow-checked arithmetic, each step in e's C type. */
TcEval tc_expr_eval(const TcExpr *e, long long *out);
/* tc_expr_eval(e, out) == TC_EVAL_CONST. */
bool tc_expr_const(const TcExpr *e, long long *out);
/* ceil(a / b) for b > 0 without overflow (a / b + (a % b > 0)). */
long long tc_ceildiv(long long a, long long b);
/* The extent of dim i of v when it is a constant (every buffer's, once
 * specialize has bound the tunables), else -1. */
long long tc_var_extent(const TcVar *v, int i);
/* Whether index e lies in [0, extent) for every block of kernel k:
 * constants, or a block index over a grid of exactly that extent. */
bool tc_index_in_extent(const TcKernel *k, const TcExpr *e,
			const TcExpr *extent);
/* The dtype a reduction of src into dst combines in (docs/language.md):
 * an integer destination's own; for a float one, f64 when either side
 * is f64, else f32. */
TcDtype tc_reduce_type(const TcVar *dst, const TcVar *src);
/* The explicit vector loops of the CPU (passes/cpu_vector.c): the
 * element types whose rows they read and write (f32; f16 and bf16,
 * converted in registers, buffers of them held as float); whether copy
 * op (a LOAD or STORE of a run) moves rows they can, between such a
 * tensor and an f32 buffer or a buffer of the tensor's own type; whether
 * REDUCE op is a sum they can keep, of such a buffer into f32. */
bool tc_vector_row_type(TcDtype t);
bool tc_vector_row_copy(const TcFuseOp *op);
bool tc_vector_sum(const TcFuseOp *op);
/* Whether a buffer lives in the block's shared memory on a GPU target
 * (tile_shared, or a fragment the layout pass placed there). */
bool tc_in_smem(const TcVar *v);
/* A gemm whose B is computed as it is loaded (gemm.b_from): the one
 * assignment of its element loop. */
const TcStmt *tc_gemm_b_assign(const TcStmt *gemm);
/* The name the program gave v: a stage view's buffer's (TcVar.view_of),
 * for notes. */
const char *tc_var_shown(const TcVar *v);
/* Whether a loop in runs of `run` (loop.run) reads v's elements along
 * the run as one vector: v in shared memory in rows of consecutive
 * elements (not swizzled) whose pitch the run divides, so each run's
 * first element is aligned to the run's bytes (runs.c, the GPU printer). */
bool tc_run_reads_whole(const TcVar *v, int run);
/* The loads of `value` (the one assignment `dst = value` of a loop over
 * j in runs of `run`) that read along the run as one vector: last index
 * j, the others not naming j, of a buffer tc_run_reads_whole allows, and
 * evaluated whenever value is (not in an arm of ?: or behind && and ||)
 * or dst's own element.  Up to max of them, distinct, into out; returns
 * how many. */
int tc_run_whole_loads(const TcExpr *dst, const TcExpr *value,
		       const TcVar *j, int run, const TcExpr **out, int max);
/* A tile_parallel extent known only at run time, min(C, e) (or min(e, C))
 * with C a constant: e, with C in *bound; also for a constant e of 0 or
 * less beside a positive C (a loop that runs nothing); NULL for any other
 * form. */
const TcExpr *tc_parallel_bound(const TcExpr *end, long long *bound);
/* Whether loop outer is the outer loop of a nest
 *     tile_parallel(j, C) tile_parallel(i, R) D[j + a][i + b] = S[i + c][j + d];
 * D and S distinct rank-2 buffers of one dtype held in 32-bit elements on
 * the CPU (f32; f16, bf16, fp8 held as float; i32), R and C constants of
 * whole 8s, a .. d naming neither var (passes/cpu_transpose.c).  With an
 * arena, *t gets the first elements moved and the extents. */
typedef struct TcTranspose {
	TcExpr *dst, *src;    /* D[a][b] and S[c][d]: the elements at i = j = 0 */
	long long rows, cols; /* of S: the inner loop's extent, the outer's */
} TcTranspose;
bool tc_transpose_form(TcArena *a, const TcStmt *outer, TcTranspose *t);
/* The value of the one assignment `as` of a loop over j in runs of
 * `run` elements, rounded to an f16 (bf16) element, as half pairs take it
 * (ir/half_form.c; passes/half_pairs.c marks the loops): (T)(I * F),
 * (T)(F * I) or (T)I, where I is an integer-valued f32 expression, linear
 * with coefficient 1 in the run's element `src` (i4, i8 or u8; i4 only
 * into bf16, read along the run as one vector of whole 32-bit words), the
 * rest of it (`add`, an f32 expression of integers that do not name j, at
 * most 1000 in magnitude, 890 with i8, 120 into bf16) and F (`mul`, a
 * value of T, NULL: none) the same for every element of the run.  Sets
 * *hp (expressions in arena a) and returns true, or sets *why (a clause,
 * in a) and returns false. */
typedef struct TcHalfPairs {
	const TcExpr *src; /* the integer load along the run */
	TcExpr *add;       /* f32, an integer; FLOAT 0 where none */
	const TcExpr *mul; /* of the destination's type, or a constant it
			      holds exactly; NULL: the value is I itself */
} TcHalfPairs;
bool tc_half_pairs_form(TcArena *a, const TcStmt *as, const TcVar *j,
			int run, TcHalfPairs *hp, const char **why);
/* Whether t is an integer a run's element may be (i4, i8, u8). */
bool tc_half_pairs_source(TcDtype t);
/* Structural equality of two expressions. */
bool tc_expr_equal(const TcExpr *a, const TcExpr *b);
/* Deep copy of an expression tree (vars are shared, not copied). */
TcExpr *tc_expr_clone(TcArena *a, const TcExpr *e);
/* ir/clone.c: a deep copy of a parsed program (before any pass) in a,
 * sharing only its strings with p; p's arena must outlive the copy. */
TcProgram *tc_program_clone(TcArena *a, const TcProgram *p);

/* Which tensor parameters kernel k reads and writes, on any path: role[i]
 * (for parameter i, zeroed by the caller) gains TC_ROLE_READ and/or
 * TC_ROLE_WRITE.  An atomic add both reads and writes its destination. */
enum { TC_ROLE_READ = 1, TC_ROLE_WRITE = 2 };
void tc_tensor_roles(const TcKernel *k, int *role);

/* A walk over an expression or statement tree, each node before what it
 * holds, in source order: an expression's operands (a load's indices, a
 * call's arguments); a statement's sub-statements and expressions (an
 * assignment's dst, then its value; a loop's begin, end, step, then its
 * body; a tile op's regions, destination first, each region's origins).
 * Each callback may be NULL.  expr and stmt say how the walk goes on;
 * var hears the vars a statement names outside its expressions: a
 * declaration's, a loop's, each region's (before its origins).  A walk
 * that was stopped returns with stop set. */
typedef enum TcVisit {
	TC_VISIT_INTO, /* go on into what the node holds */
	TC_VISIT_OVER, /* go on after the node, skipping what it holds */
	TC_VISIT_STOP, /* end the walk: nothing else is visited */
} TcVisit;
typedef struct TcVisitor {
	TcVisit (*expr)(void *ctx, const TcExpr *e); /* each expression node */
	TcVisit (*stmt)(void *ctx, const TcStmt *s); /* each statement */
	void (*var)(void *ctx, const TcVar *v);      /* vars named by statements */
	void *ctx;                                   /* passed to the callbacks */
	bool stop;                                   /* set when one said STOP */
} TcVisitor;
void tc_expr_visit(const TcExpr *e, TcVisitor *v);
void tc_stmt_visit(const TcStmt *s, TcVisitor *v);

/* Every element read and write of a tensor or buffer in e, or in s and the
 * statements inside it (all but `skip`, which may be NULL): fn(ctx, var,
 * how) with how TC_ROLE_READ, TC_ROLE_WRITE or both (a gemm's accumulator,
 * an accumulating reduction's destination, an atomic add's).  A region's
 * origin expressions count as reads. */
typedef void (*TcAccessFn)(void *ctx, const TcVar *v, int how);
void tc_expr_access(const TcExpr *e, TcAccessFn fn, void *ctx);
void tc_stmt_access(const TcStmt *s, const TcStmt *skip, TcAccessFn fn,
		    void *ctx);
/* How s (less `skip`) reads and writes v: TC_ROLE_* bits, 0 if not at all. */
int tc_stmt_touches(const TcStmt *s, const TcStmt *skip, const TcVar *v);
/* The same for an expression (NULL touches nothing). */
int tc_expr_touches(const TcExpr *e, const TcVar *v);
/* How s's own expressions read and write v, not the statements inside
 * it: none for a BLOCK, a DECL's initializer, a FOR's bounds, step and
 * stages, an IF's condition, any other statement whole
 * (tc_stmt_touches).  For walks that visit every statement once
 * (tc_walk_stmts). */
int tc_stmt_own_touches(const TcStmt *s, const TcVar *v);
/* Whether e (NULL: no) names v as a value (a VAR node), indices included:
 * loop, block and scalar vars, which tc_expr_touches does not report. */
bool tc_expr_mentions(const TcExpr *e, const TcVar *v);
/* Whether any expression of statement s (and its nested ones) names v. */
bool tc_stmt_mentions(const TcStmt *s, const TcVar *v);
/* Whether e (NULL: no) reads the device's SM count (SMS). */
bool tc_expr_has_sms(const TcExpr *e);

/* ==== print.c: the IR printer (stable text, used by golden tests) ========== */

void tc_print_expr(TcBuf *b, const TcExpr *e);
void tc_print_program(TcBuf *b, const TcProgram *p);
void tc_print_kernel(TcBuf *b, const TcKernel *k);

/* ==== read.c: the IR reader (print.c's text back into IR) ================ */

/* Read `len` bytes of IR text as tc_print_program prints it (path names
 * it in diagnostics).  Reports the first problem to d as a located error
 * and returns NULL; else a program that prints as the text does. */
TcProgram *tc_read_ir(TcArena *a, const char *path, const char *text,
		      size_t len, TcDiags *d);

/* ==== verify.c: IR invariants, run after every pass in tests ============== */

/* Returns the number of violations, each reported as an internal error
 * naming the pass that broke it. */
int tc_verify(const TcProgram *p, const char *after_pass, TcDiags *d);
/* Whether p holds only what target t has (a barrier or an expanded
 * pipeline needs a GPU target, a prefetch the openmp one; matrix layouts,
 * wgmma and tensor maps the arch's) and, with `scheduled`, what an
 * emitter needs of the target's passes (layouts, lowered copies, regions
 * the bounds pass marked, gemms cpu_gemm scheduled); an error at the
 * first that is not.  For IR read from text (read.c), whose target the
 * text does not say. */
typedef struct TcTarget TcTarget;
bool tc_verify_target(const TcProgram *p, const TcTarget *t, bool scheduled,
		      TcDiags *d);

/* ==== parse.c: libclang -> IR ============================================= */

typedef struct TcOptions TcOptions;

/* Parse the tile program at `path` (text may be NULL to read the file).
 * Reports problems to d; returns NULL if any error was reported. */
TcProgram *tc_parse(TcArena *a, const char *path, const char *text,
		    const TcOptions *opt, TcDiags *d);

/* Whether an external function of the generated code cannot be called
 * name: the C library headers it includes declare one (math.h, stdlib.h,
 * string.h, stdio.h, with the f and l forms), or it begins with tilec_,
 * the generated code's own helpers.  Kernel names, and export's prefixed
 * ones. */
bool tc_reserved_name(const char *name);

/* ==== check.c: semantic checks ============================================ */

/* Types, shapes, scopes, regions, loop rules, after specialize has bound
 * the tunables; the pass "check".  Returns false on error. */
bool tc_check(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* ==== Targets and backends (target.c, emitters/) ========================== */

typedef enum TcTargetKind {
	TC_TARGET_OPENMP,
	TC_TARGET_CUDA,
	TC_TARGET_HIP,
	TC_TARGET_COUNT
} TcTargetKind;

/* One form of a matrix instruction: the operand dtypes it multiplies into
 * which accumulator, and its k step.  The forms of one instruction share
 * its m x n tile and the accumulator's lane layout (mma.sync m16n8k16 f16
 * and m16n8k32 s8, say: each lane holds the same four elements of C). */
typedef struct TcMatrixForm {
	const char *name;        /* "mma.sync.aligned.m16n8k32.s32.s8.s8.s32" */
	unsigned operands;       /* dtypes of A and B: bit 1u << TcDtype */
	TcDtype accum;           /* the accumulator's dtype */
	int k;                   /* k of one instruction */
	bool a_in_regs;          /* A may be a register fragment in the
				  * accumulator layout (mma_rs, mfma_rs) */
	bool mn_major;           /* wgmma: A may be M-major (TILE_TRANS_A)
				  * and B N-major (B[K][N]); otherwise both
				  * must be K-major (8-bit forms) */
	bool promote;            /* it sums below the accumulator's
				  * precision (wgmma's fp8 forms keep about
				  * 14 bits of each f32 sum): each gemm sums
				  * into a zeroed second accumulator, added
				  * into C in full precision after it */
} TcMatrixForm;

/* A warp matrix instruction a tile_gemm lowers to: layout.c spreads the
 * accumulator (and an A operand in registers) like one, the GPU helpers
 * issue it. */
typedef struct TcMatrixInsn {
	const char *name;        /* the instruction: "mma.sync.m16n8k16" */
	TcLayoutKind layout;     /* of accumulators: TC_LAYOUT_MMA, _MFMA
				  * or _WGMMA */
	int m, n;                /* its tile: C is m x n (wgmma: n is the
				  * granule of N, at most max_n per
				  * instruction) */
	int max_n;               /* wgmma: the widest instruction's n */
	int group_warps;         /* warps that issue it together: 1, or 4
				  * (a wgmma warpgroup) */
	int row_count;           /* rows of one m x n tile a lane holds */
	int col_count;           /* columns of one tile a lane holds */
	TcMatrixForm forms[3];   /* what it multiplies, nforms of them */
	int nforms;
} TcMatrixInsn;

/* One target and arch: everything the passes and emitters assume about
 * it.  The entries are the table in target.c (tc_targets); `tilec
 * --list-targets` prints them.  Passes test what a target can do (the
 * fields below), never which target it is: kind only picks the backend. */
typedef struct TcTarget {
	TcTargetKind kind;       /* backend family: picks the emitter only */
	const char *name;        /* "openmp", "cuda", "hip" */
	const char *arch;        /* "avx512", "avx2", "generic"; "sm_90a"; "gfx90a" */
	/* Threads.  On a SIMT target a block's threads are hardware threads
	 * in warps (waves) of warp_size lanes; otherwise one OS thread runs
	 * a block and its threads become loop iterations and vector lanes. */
	bool simt;
	int warp_size;           /* lanes that execute together; 1 on the CPU */
	int default_threads;     /* per block without tile_threads (SIMT) */
	int max_threads;         /* the most tile_threads may ask for */
	/* Shared memory per block, bytes: what a kernel gets without asking
	 * and the most it may opt in to (the limit smem.c enforces; on the
	 * CPU, the block's buffers in the OpenMP thread's frame). */
	long long smem_default;
	long long smem_limit;
	const TcMatrixInsn *mma; /* gemm's matrix instruction; NULL: none */
	bool ldmatrix;           /* ldmatrix reads 8x8 tiles of shared memory,
				  * so 16-bit tiles may be XOR swizzled */
	bool cp_async;           /* asynchronous global -> shared copies:
				  * tile_pipelined loops get stages */
	bool mbarrier;           /* shared-memory barriers with phases: copies
				  * issued inside a gemm complete on them */
	bool tma;                /* tensor-memory-accelerator copies:
				  * expand_pipeline.c lowers mbarrier loops'
				  * copies to them (TcTma says which) */
	/* The warpgroup matrix instruction (sm_90a's wgmma), which layout.c
	 * prefers to mma when every gemm of a kernel fits it; NULL: none. */
	const TcMatrixInsn *wgmma;
	/* CPU vectors: the float lanes of the ISA's widest vector register
	 * (0 on a GPU), and the lanes of the explicit vectors (tilec_vf,
	 * templates/cpu/tilec_cpu.h) the OpenMP backend prints, 0 where it
	 * prints none.  Generated code defines TILEC_VL to the latter and
	 * the header stops with #error on a count it is not written for. */
	int vector_lanes;
	int explicit_lanes;
	/* What a CPU must have to run the arch's code: feature names as
	 * __builtin_cpu_supports knows them (NULL-terminated; none for
	 * generic), and the same in words for messages. */
	const char *cpu_features[10];
	const char *cpu_spelled;
	/* CPU gemm (passes/cpu_gemm.c).  The f32 micro-kernel's register
	 * block, rows x columns of c (templates/cpu/gemm.h has one per
	 * arch); the L1d and L2 bytes per core the cache blocking assumes
	 * (the arch's defaults; with --arch native what the host reports);
	 * which integer and matrix extensions int8 and bf16 gemms use. */
	int gemm_mr, gemm_nr;
	long long l1d_bytes, l2_bytes;
	bool vnni; /* AVX512-VNNI vpdpbusd: int8 gemm into i32 */
	bool amx;  /* AMX-TILE, -BF16, -INT8: tdpbf16ps, tdpbssd (the
		    * runtime asks Linux for the tile state first) */
	/* GPUs: the devices the arch's code is picked for when a context
	 * names no arch (tc_target_device_arch): those whose arch, as the
	 * runtime reports it, begins with device_arch ("sm_90a", "gfx94"),
	 * and, failing every entry's device_arch, CUDA devices of compute
	 * capability min_cc (major * 10 + minor) or later; NULL and 0 for
	 * none. */
	const char *device_arch;
	int min_cc;
} TcTarget;

/* Every target and arch, the targets' default arch first in each. */
extern const TcTarget tc_targets[];
extern const int tc_ntargets;

/* A backend prints scheduled IR as source text. */
typedef struct TcBackend {
	const char *name;        /* matches TcTarget.name */
	const char *file_ext;    /* ".c", ".cu", ".hip" */
	/* Print one kernel (and its launch entry) into out; false on error,
	 * reported to d. */
	bool (*emit)(const TcProgram *p, const TcKernel *k, const TcTarget *t,
		     const TcOptions *opt, TcBuf *out, TcDiags *d);
} TcBackend;

/* The backends compiled in, or NULL for one that is not built. */
const TcBackend *tc_backend_find(TcTargetKind kind);
bool tc_target_init(TcTarget *t, const char *name, const char *arch);
/* The CPU features t's code uses, space-separated as
 * __builtin_cpu_supports spells them (AMX as amx-tile amx-bf16
 * amx-int8); nothing for generic.  Generated files carry the list as
 * tilec_cpu_needs, which the runtime checks before it runs a kernel. */
void tc_target_cpu_needs(TcBuf *out, const TcTarget *t);
/* Why tc_target_init(name, arch) failed, as a sentence appended to out:
 * the unknown target or architecture, the nearest valid one ("did you
 * mean"), and every valid value. */
void tc_target_explain(TcBuf *out, const char *name, const char *arch);
/* The arch of target `name` to generate code for on a device whose arch
 * the runtime reports as `device` (compute capability cc as major * 10 +
 * minor, 0 where there is none): the entry whose device_arch it begins
 * with, else the one of the highest min_cc it meets; NULL if none. */
const char *tc_target_device_arch(const char *name, const char *device, int cc);
/* The devices target `name` generates code for, in words ("sm_80 and
 * later, sm_90a"), appended to out. */
void tc_target_devices(TcBuf *out, const char *name);
/* t, in words, as `tilec --list-targets` prints it. */
void tc_target_describe(TcBuf *out, const TcTarget *t);
/* The form of matrix instruction mi that multiplies A and B of dtype
 * `operands` into an accumulator of dtype `accum`, or NULL (target.c). */
const TcMatrixForm *tc_matrix_form(const TcMatrixInsn *mi, TcDtype operands,
				   TcDtype accum);
/* The n of the wgmma instructions that cover `cols` columns of a
 * warpgroup: the widest power of two from min_n (at least 16) up to the
 * instruction's widest that divides cols; 0 if none does. */
int tc_wgmma_chunk(const TcMatrixInsn *wg, long long cols, int min_n);

/* ==== Options (tilec.c) =================================================== */

#define TC_MAX_DEFINES 64
/* The most stages a pipelined loop may keep (specialize checks). */
#define TC_MAX_STAGES 32
/* The deepest nesting of expressions (and of statements) a program may
 * have, in C or IR text: passes, the interpreter and the printers walk
 * the tree recursively, and this keeps them far inside an 8 MiB stack,
 * sanitizers included. */
#define TC_MAX_NESTING 1000

/* Which gemms may be wgmma's (layout.c). */
typedef enum TcWgmma {
	TC_WGMMA_ON,    /* default: every gemm that fits; fp8 ones, whose
			 * wgmma sums keep about 14 bits within an
			 * instruction, with their sums promoted per gemm
			 * (about 1.3e-4 of the largest |C| off, as
			 * cuBLASLt's fp8 GEMM: TC_PROMOTED_SUM_TOL) */
	TC_WGMMA_OFF,   /* --no-wgmma: none; mma.sync throughout */
	TC_WGMMA_EXACT, /* --no-fp8-wgmma: only those whose form sums in
			 * the accumulator's precision (f16, bf16, i8) */
} TcWgmma;

/* Which pipelined copies may go by TMA (expand_pipeline.c). */
typedef enum TcTma {
	TC_TMA_AUTO, /* default: those of mbarrier loops that keep 3 or more
		      * stages for a wgmma gemm (docs/perf-gpu.md: +20-35%
		      * there; with 2 stages, or on mma.sync, it does not
		      * pay) */
	TC_TMA_OFF,  /* --no-tma: none */
	TC_TMA_ALL,  /* --tma: every one of an mbarrier loop that fits, with
		      * a note on each that does not */
} TcTma;

/* Whether mbarrier loops whose copies all go by TMA get a producer
 * warpgroup (expand_pipeline.c, warp specialization). */
typedef enum TcWarpSpec {
	TC_WS_DEFAULT, /* the target's default (tc_ws_default) */
	TC_WS_ON,      /* --warp-specialize */
	TC_WS_OFF,     /* --no-warp-specialize */
	TC_WS_PERSISTENT, /* --persistent: warp specialization, and the
			     kernel's blocks persistent (one wave that
			     walks the output tiles) */
} TcWarpSpec;

struct TcOptions {
	const char *kernel;          /* --kernel NAME, or NULL for all */
	int ndefines;                /* -D NAME=VALUE bindings */
	const char *define_name[TC_MAX_DEFINES];
	long long define_value[TC_MAX_DEFINES];
	TcLoc define_loc[TC_MAX_DEFINES]; /* "<command line>" locations */
	TcTarget target;             /* the target being compiled for */
	const char *dump_after;      /* --dump-after=PASS, or NULL */
	TcBuf *dump;                 /* where that dump is printed */
	bool verify;                 /* verify the IR after every pass */
	bool line_directives;        /* #line back to the tile program */
	bool standalone;             /* inline templates into the output */
	TcWgmma wgmma;               /* which gemms may use the target's
				      * warpgroup instruction (sm_90a) */
	bool explain;                /* --explain: a note on every buffer's
					placement (explain.c) */
	TcTma tma;                   /* which pipelined copies go by TMA
					where the target has it */
	/* --passes=a,b: run only these passes (in the table's order), on a
	 * program read from IR text (--from-ir), which counts as checked;
	 * NULL: every pass for the target. */
	const char *passes;
	/* Called with the program after parsing and after each pass that
	 * runs (stage: "parse" or the pass's name), before it is verified:
	 * tests that read each dump back (tests/unit/test_read.c).  NULL:
	 * none. */
	void (*observe)(void *ctx, const char *stage, const TcProgram *p);
	void *observe_ctx;
	TcWarpSpec ws;               /* warp specialization of mbarrier
					loops whose copies are TMA's */
	bool no_tma_store;           /* --no-tma-store: epilogue tiles
					stored from registers (tma_store.c) */
	int copy_plans;              /* --copy-plans 1, --no-copy-plans -1,
					0: the pass's default (software_
					pipeline.c): the ordinary pipelined
					loop's copies set up once (G2S) */
	bool no_half_pairs;          /* --no-half-pairs: small integers
					into f16 and bf16 one at a time in
					f32, never two at a time in 16-bit
					arithmetic (half_pairs.c; CUDA) */
	int cpu_strip;               /* --cpu-strip=N: blocks of a grid row
					one thread runs together (cpu_strip.c);
					0: the pass's default, -1: none
					(--cpu-strip=0) */
};

/* ==== pipeline.c: the passes, in order ==================================== */

typedef bool (*TcPassFn)(TcArena *a, TcProgram *p, const TcOptions *opt,
			 TcDiags *d);

typedef struct TcPass {
	const char *name;  /* for --dump-after and verifier messages */
	TcPassFn run;      /* the pass */
	unsigned targets;  /* bit (1 << TcTargetKind) for each target it runs on */
	const char *what;  /* one line for --help and docs */
} TcPass;

extern const TcPass tc_passes[];
extern const int tc_npasses;

/* Run every pass for opt->target in order, verifying and dumping as asked.
 * It first checks opt->dump_after (tc_dump_name_check).  With opt->verify
 * the IR is verified after "check" and every later pass (before check, a
 * broken program is the user's error, not the translator's). */
bool tc_run_pipeline(TcArena *a, TcProgram *p, const TcOptions *opt,
		     TcDiags *d, TcBuf *dump);
/* True if opt->dump_after is NULL or names a stage that runs for
 * opt->target ("parse", dumped by tc_compile, or a pass); otherwise an
 * error listing the valid names. */
bool tc_dump_name_check(const TcOptions *opt, TcDiags *d);
/* True if every name in opt->passes is a pass that runs for opt->target;
 * otherwise an error listing them. */
bool tc_pass_list_check(const TcOptions *opt, TcDiags *d);

/* specialize.c: bind tunables (defaults, -D), fold constant shapes. */
bool tc_specialize(TcArena *a, TcProgram *p, const TcOptions *opt,
		   TcDiags *d);
/* GPU scheduling passes, in pipeline order; each is a no-op on the CPU.
 * layout.c: fragment layouts and the parallel loops that follow them. */
bool tc_layout(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);
/* software_pipeline.c: multi-buffer and issue asynchronously the copies
 * that feed tile_pipelined loops. */
bool tc_software_pipeline(TcArena *a, TcProgram *p, const TcOptions *opt,
			  TcDiags *d);
/* smem.c: shared-memory offsets, padding, stages; the per-block limit. */
bool tc_copy_g2s_fits(const TcStmt *s);
/* Whether every statement of s that touches shared buffer v is a copy
 * into it that copy_g2s serves or a gemm reading it as A or B (with
 * any_gemm false: a gemm whose accumulator is an MMA or WGMMA fragment,
 * which reads it through ldmatrix or wgmma): who may see v swizzled. */
bool tc_swizzle_accessors(const TcStmt *s, const TcVar *v, bool any_gemm);
bool tc_smem(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);
/* barrier.c: barriers between statements that share memory across
 * threads. */
bool tc_barrier(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);
/* passes/expand_pipeline.c: each copy's lowering (copy.lower); every
 * pipelined loop with async copies carried out as prologue, steady
 * state and drain with ASYNC_COPY, COMMIT_GROUP and WAIT_GROUP. */
/* Whether expand_pipeline warp-specializes the loops that fit (opt->ws
 * and the target). */
bool tc_ws_enabled(const TcOptions *opt);
bool tc_expand_pipeline(TcArena *a, TcProgram *p, const TcOptions *opt,
			TcDiags *d);
/* index_width.c (every target): each tensor's offset width (index64) and
 * strided copies' steps in it. */
/* passes/ragged.c: ragged copies (tile_bounded, tile_masked, tile_rows)
 * and run-time tile_parallel extents as guarded element-wise loops; the
 * pass "ragged", on every target, right after check. */
bool tc_ragged(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

bool tc_index_width(TcArena *a, TcProgram *p, const TcOptions *opt,
		    TcDiags *d);

/* ==== explain.c: notes on the buffers' placement ========================== */

/* After the pipeline: a note at every fragment or local buffer that a GPU
 * target keeps in shared memory rather than registers, saying why; with
 * opt->explain, a note at every buffer and kernel. */
void tc_explain(const TcProgram *p, const TcOptions *opt, TcDiags *d);

/* ==== tilec.c: the translator as a library ================================ */

/* Parse, check and run the pipeline for opt->target.  On success *out is the
 * specialized, scheduled program (allocated from a).  Returns false if any
 * error was reported to d. */
bool tc_compile(TcArena *a, const char *path, const char *text,
		const TcOptions *opt, TcDiags *d, TcProgram **out);
/* tc_compile, then emit every selected kernel with the target's backend
 * into src.  Returns false on error (reported to d). */
bool tc_translate(TcArena *a, const char *path, const char *text,
		  const TcOptions *opt, TcDiags *d, TcProgram **prog,
		  TcBuf *src);
/* tc_compile and tc_translate for a program already parsed (tc_parse, or
 * a tc_program_clone of a parse), not yet specialized; p is specialized
 * and scheduled in place. */
bool tc_compile_parsed(TcArena *a, TcProgram *p, const TcOptions *opt,
		       TcDiags *d);
bool tc_translate_parsed(TcArena *a, TcProgram *p, const TcOptions *opt,
			 TcDiags *d, TcBuf *src);
/* Emit every kernel of a program already scheduled (one read from IR
 * text and run through its passes) into src, with no pass run. */
bool tc_emit_scheduled(const TcProgram *p, const TcOptions *opt, TcDiags *d,
		       TcBuf *src);
/* Default options for a target ("openmp", "cuda", "hip"); false if the
 * name is unknown. */
bool tc_options_init(TcOptions *opt, const char *target, const char *arch);

/* ==== api.c: the public translator API (tilec_translator.h) ============== */

/* What jit.c shares with api.c.  tc_api_translate is the translation
 * behind tilec_translate_file and _string and tilec_jit: the program at
 * path (or text, len bytes), kernel `kernel` (NULL: tr's), for `target`
 * and `arch` (target NULL: tr's own). */
struct tilec_translator;
int tc_api_translate(struct tilec_translator *tr, const char *path,
		     const char *text, size_t len, const char *target,
		     const char *arch, const char *kernel);
/* tr's arch when its target is `target`, else NULL. */
const char *tc_api_target_arch(const struct tilec_translator *tr,
			       const char *target);
/* Replace tr's diagnostics by one error (the runtime's, for tilec_jit). */
void tc_api_fail(struct tilec_translator *tr, const char *message);

/* ==== interp.c: the reference interpreter ================================= */

/* What a reference run counted. */
typedef struct TcInterpStats {
	double gemm_flops; /* 2*m*n*k summed over every tile_gemm executed */
	long long blocks;  /* blocks run */
} TcInterpStats;

/* Run kernel k of a specialized, checked program (tc_specialize and
 * tc_check, before any target pass) on args laid out as for the entry
 * point: args[i] points to parameter i's value, for a tensor to its data
 * pointer.  Implements docs/ir.md: every block in order, integers exact
 * with C's semantics (what C leaves undefined is an error), floats in
 * double, tensor stores rounded to the stored dtype.  With count_only,
 * only control flow outside tile_parallel loops runs and no tensor is read
 * or written (to count FLOPs cheaply).  stats may be NULL.  Returns false
 * after reporting an error (an out-of-bounds element access, a division by
 * zero, a bad extent) to d. */
bool tc_interp_run(const TcKernel *k, void **args, bool count_only,
		   TcInterpStats *stats, TcDiags *d);
/* Evaluate an expression over the scalar parameters (read from args) and
 * tunables, such as a tensor extent or a grid extent; a persistent
 * kernel's grid reads the device's SMs, `sms` (0 where no device is
 * known: an error if read). */
bool tc_interp_eval(const TcKernel *k, const TcExpr *e, void **args,
		    long long sms, double *out, TcDiags *d);

/* Host-side element access in a tensor's storage format (f16/bf16/fp8 as
 * bit patterns, i4 two per byte low nibble first, bool one byte). */
double tc_elem_load(TcDtype t, const void *base, size_t i);
/* Store v as element i: floats rounded to nearest even, integers truncated
 * toward zero and wrapped to the type's width, bool as v != 0. */
void tc_elem_store(TcDtype t, void *base, size_t i, double v);
/* The same for an integer dtype (bool, i4, i8, u8, i32, i64), exactly;
 * the store wraps v to the type's width (bool: v != 0). */
int64_t tc_elem_load_int(TcDtype t, const void *base, size_t i);
void tc_elem_store_int(TcDtype t, void *base, size_t i, int64_t v);
/* Bytes that n elements of t occupy. */
size_t tc_elem_bytes(TcDtype t, size_t n);
/* Fill n elements of t with the inputs `tilec run` and `tilec tune` check
 * on: never zero; floats of magnitude in [1/16, 1] with a random sign,
 * integers in 1 .. 7 with a random sign (1 .. 15 for u8), bools 0 or 1.
 * One stream per (seed, stream), e.g. the tensor's parameter index. */
void tc_elem_fill_random(TcDtype t, void *base, size_t n, uint64_t seed,
			 int stream);
/* Fill n elements of t with values in [lo, hi], both ends included:
 * uniform integers for integer types and bool (lo and hi whole numbers
 * the type holds, hi - lo < 2^53), uniform reals for floats; for
 * `tilec run --range` (tensors of ids, positions, page tables, counts).
 * Streams as tc_elem_fill_random's. */
void tc_elem_fill_range(TcDtype t, void *base, size_t n, uint64_t seed,
			int stream, double lo, double hi);

/* ==== options.c: the commands' option parser ============================== */

/* One option of a command. */
typedef struct TcOptSpec {
	const char *name; /* long name without "--" ("target"), or NULL */
	char short_name;  /* 't' for -t, or 0 */
	bool has_value;   /* takes a value */
	int id;           /* the command's id, > 0; 0 ends the table */
} TcOptSpec;

/* What tc_opt_next returns besides a command's ids. */
enum {
	TC_OPT_END = 0,      /* no arguments left */
	TC_OPT_OPERAND = -1, /* value is an operand (a file) */
	TC_OPT_UNKNOWN = -2, /* arg is no option of the table */
	TC_OPT_MISSING = -3, /* arg is the last argument and needs a value */
};

/* The state of a walk over argv. */
typedef struct TcOptParser {
	int argc;
	char **argv;
	int i;              /* the next argument */
	bool operands_only; /* after "--" */
	const char *arg;    /* the option as written, for messages */
	const char *value;  /* its value, the operand, or NULL */
} TcOptParser;

/* Start at argv[1]. */
void tc_opt_init(TcOptParser *p, int argc, char **argv);
/* The next option's id (value set if it takes one), or a TC_OPT_ code.
 * specs ends with an entry whose id is 0. */
int tc_opt_next(TcOptParser *p, const TcOptSpec *specs);
/* -D NAME=INTEGER, the integer in decimal: *name is malloc'd.  False if
 * malformed (no name or no value, not an integer, out of range). */
bool tc_opt_define(const char *arg, char **name, long long *value);
/* For an unknown option arg ("--tagret", "--tagret=cuda"): "; did you
 * mean '--target'?" in buf (n bytes) when one of specs' long options is
 * near it, else "".  Returns buf. */
const char *tc_opt_suggest(const char *arg, const TcOptSpec *specs, char *buf,
			   size_t n);
/* A JSON string of s for the commands' --json output; bytes that do not
 * make UTF-8 (a hostile file name) become '?', so the document stays
 * valid.  Never NULL (json_null() when out of memory). */
struct json_t *tc_json_text(const char *s);
/* s as a whole decimal integer in range, or a whole number (strtod's
 * forms); false, *out unchanged, otherwise. */
bool tc_opt_integer(const char *s, long long *out);
bool tc_opt_number(const char *s, double *out);
/* --cpu-strip=N, N blocks from 0 to 16, as TcOptions.cpu_strip takes it
 * (0 becomes -1: no strip); false, *out unchanged, otherwise.  The
 * message every command gives for a false one: */
bool tc_opt_cpu_strip(const char *s, int *out);
#define TC_OPT_CPU_STRIP_WANTS "--cpu-strip wants a number of blocks, 0 to 16"
/* One item of a --range list, "T=LO:HI" (n bytes at item): the tensor's
 * name and the bounds as written, each malloc'd.  False if malformed. */
bool tc_opt_range(const char *item, size_t n, char **name, char **lo,
		  char **hi);
/* The values --range name=lo_text:hi_text gives a tensor of dtype t:
 * each bound a number or one of the n scalar parameters names[i] (whose
 * values are values[i]), with + - * and parentheses.  False, with a
 * message naming the range appended to err, if a bound is malformed, the
 * range empty, or for an integer or bool type the bounds are not whole
 * or not within it (i64 within +-2^52). */
bool tc_opt_range_values(const char *name, const char *lo_text,
			 const char *hi_text, TcDtype t, int n,
			 const char *const *names, const double *values,
			 double *lo, double *hi, TcBuf *err);

/* ==== run.c: `tilec run` =================================================== */

/* The `tilec run` subcommand; argv[0] is "run", the rest its arguments.
 * Returns the process exit status. */
int tc_run_main(int argc, char **argv);

/* ==== tune.c: `tilec tune` and tuning records ============================= */

/* The `tilec tune` subcommand; argv[0] is "tune".  Returns the exit
 * status (docs/tuning.md). */
int tc_tune_main(int argc, char **argv);
/* record.c: what tune.c writes and `--config RECORD` reads.  The format
 * tag of a tuning record. */
#define TC_RECORD_FORMAT "tilec-tune-record/1"
/* A parsed record with its text, for located messages. */
typedef struct TcRecord {
	const char *path;    /* the file */
	char *text;          /* its contents */
	struct json_t *root; /* the document (jansson's json_t) */
} TcRecord;
/* Read and parse; malformed JSON is an error at its line and column.
 * Free *r with tc_record_free whether or not it succeeded. */
bool tc_record_load(TcRecord *r, const char *path, TcDiags *d);
void tc_record_free(TcRecord *r);
/* Where the member at `path` (n keys, outermost first) is in the JSON
 * text: each key is looked for after the previous one; line 0 when it is
 * not there.  For located messages about JSON documents. */
TcLoc tc_json_key_loc(const char *file, const char *text,
		      const char *const *path, int n);
/* Bind the tunable values of the tuning record at `path` in opt (whose
 * target is set), after the -D bindings already there, which win.  `text`
 * is the tile program the values are for (its SHA-256 is compared with the
 * record's) and `device` the device the code is for, NULL when unknown.
 * Errors (malformed JSON, a missing or mistyped key, with the record's
 * file and line; a record for another target) and warnings (another
 * source, device or arch) go to d.  Strings are allocated from a.
 * Returns false on error. */
bool tc_config_apply(const char *path, const char *text, size_t len,
		     const char *device, TcArena *a, TcOptions *opt,
		     TcDiags *d);
/* Shape dispatch over several records of one kernel (docs/tuning.md,
 * "Shape dispatch"), one rule for `tilec export`, `tilec run` and the
 * library: the records are tried smallest bucket first (the product of
 * its values; records of one size in the order given), and a launch
 * takes the first whose bucket holds each scalar it names (none above
 * the bucket's value), the last one when none does.  A record's bucket,
 * as read from its "shape_bucket": */
#define TC_BUCKET_MAX 32
typedef struct TcBucket {
	const TcRecord *rec;            /* the record (its JSON holds name[]) */
	int index;                      /* its place among those given */
	int n;                          /* scalars named */
	const char *name[TC_BUCKET_MAX];
	long long value[TC_BUCKET_MAX]; /* each >= 1 */
	double size;                    /* the product of the values */
} TcBucket;
/* Read r's "shape_bucket" into *b: an object of integers >= 1; errors at
 * the key in d. */
bool tc_bucket_read(const TcRecord *r, int index, TcBucket *b, TcDiags *d);
/* Sort b[0..n) into the order a dispatch tries them; two records of one
 * bucket are an error (which a launch takes would be arbitrary). */
bool tc_buckets_order(TcBucket *b, int n, TcDiags *d);
/* Whether bucket b holds the launch's scalars (names[i] = values[i]);
 * a scalar the bucket names that the launch lacks goes to *missing
 * (and the answer is false). */
bool tc_bucket_holds(const TcBucket *b, const char *const *names,
		     const long long *values, int nvalues,
		     const char **missing);
/* The rule's answer for records paths[0..n): the index in paths of the
 * record a launch with those scalars takes, or -1 after an error in d
 * (a record unreadable or without a bucket, two of one bucket, a
 * scalar a bucket names that the launch lacks).  why, when not NULL,
 * gets a line saying which bucket held the shape. */
int tc_records_select(const char *const *paths, int n,
		      const char *const *names, const long long *values,
		      int nvalues, TcDiags *d, TcBuf *why);
/* The device name records use: the runtime's (`runtime_name`), except on
 * the CPU, where it is the processor's model. */
void tc_tune_device_name(const char *target, const char *runtime_name,
			 char *out, size_t n);

/* ==== export.c: `tilec export` ============================================ */

/* The `tilec export` subcommand; argv[0] is "export".  Returns the exit
 * status (docs/export.md). */
int tc_export_main(int argc, char **argv);

/* ==== abi.c: how a host calls a kernel ==================================== */

/* A tensor dim whose declared extent is a scalar parameter alone. */
typedef struct TcAbiExtent {
	int param; /* the tensor's parameter index */
	int dim;   /* the dim, outermost 0 */
} TcAbiExtent;

/* How one parameter is passed. */
typedef struct TcAbiParam {
	const TcVar *var;   /* the parameter (TENSOR or SCALAR) */
	bool tensor;        /* a pointer to row-major, contiguous elements */
	TcDtype dtype;      /* the declared dtype (element dtype for tensors) */
	TcDtype pass;       /* SCALAR: the type of the value passed (f32 for
			       narrow floats; i32 for i8/u8/i4 on GPUs) */
	const char *c_type; /* the argument's host C type: "int", "float",
			       "const uint16_t *" (f16 elements as bits) */
	int bytes;          /* sizeof c_type */
	/* SCALAR: the tensor dims whose extent is exactly this scalar, so
	 * a caller may infer it from a tensor's shape. */
	const TcAbiExtent *extent_of;
	int nextent_of;
} TcAbiParam;

/* A kernel's calling convention on one target. */
typedef struct TcAbi {
	const TcKernel *kernel;
	int nparams;
	TcAbiParam *params;   /* nparams, in signature order */
	long long threads;    /* threads per block a launch gives (the
				 program's and a producer warpgroup's);
				 1 on the CPU */
	long long smem_bytes; /* dynamic shared memory per block (GPUs) */
	int ntmaps;           /* tensor maps, passed after the params, */
	TcTensorMap *const *tmaps; /* in this order (kernel->tmaps) */
} TcAbi;

/* The ABI of kernel k on target t, allocated from a. */
const TcAbi *tc_abi_of(TcArena *a, const TcKernel *k, const TcTarget *t);
/* The type a scalar of dtype t is passed as on a target of kind target. */
TcDtype tc_abi_pass_dtype(TcDtype t, TcTargetKind target);
/* The host C spelling of a pass type ("int", "int8_t", "long long"). */
const char *tc_abi_scalar_c_type(TcDtype pass);
/* The host C type of a tensor element of dtype t ("uint16_t" for f16). */
const char *tc_abi_element_c_type(TcDtype t);
/* Threads per block of k's launches on t (tile_threads, else the
 * target's default_threads; 1 where the target is not SIMT). */
long long tc_abi_threads(const TcKernel *k, const TcTarget *t);
/* Threads per block a launch of k gives: tc_abi_threads and the
 * producer warpgroup warp specialization adds (k->producer_threads). */
long long tc_abi_launch_threads(const TcKernel *k, const TcTarget *t);
/* Whether scalar v is the whole declared extent of some tensor dim. */
bool tc_abi_is_extent(const TcKernel *k, const TcVar *v);

/* ==== ir/tolerance.c: how far float outputs may be from a reference ====== */

/* What a kernel's outputs are compared with. */
typedef enum TcTolClass {
	/* The reference interpreter: each element's operations in the
	 * program's order and types. */
	TC_TOL_INTERP,
	/* An independent implementation (cuBLAS, torch): other summation
	 * orders and fused multiply-adds. */
	TC_TOL_LIBRARY,
	TC_TOL_CLASS_COUNT
} TcTolClass;

/* The relative tolerance (max |got - want| / max |want|) for outputs of
 * dtype t; 0 for integers and bools (compared exactly). */
double tc_tolerance(TcDtype t, TcTolClass c);
/* A kernel's tolerance against the interpreter: that of the narrowest
 * float type among its tensors and buffers (0 with integers only). */
double tc_kernel_tolerance(const TcKernel *k);
/* How far an fp8 gemm's sums on wgmma, promoted per gemm (layout.c), may
 * be from exact ones: the instruction keeps about 14 bits of its sum; the
 * H200 measured 0.7-1.3e-4 of the largest |C| at K from 700 to 8192, and
 * cuBLASLt's default fp8 GEMM 1.4e-4 in the same run. */
#define TC_PROMOTED_SUM_TOL 2.5e-4
/* TC_PROMOTED_SUM_TOL where some gemm of k sums promoted, else 0. */
double tc_kernel_sum_tolerance(const TcKernel *k);
/* The table as a JSON object for kernel k's launch manifest:
 * {"kernel": K, "interp": {"f64": ..., ...}, "library": {...}}, and
 * "promoted_sums": TC_PROMOTED_SUM_TOL where some gemm sums promoted. */
void tc_tolerance_json(const TcKernel *k, TcBuf *b);

/* ==== launch.c: launch manifests ========================================= */

/* The format tag of a launch document. */
#define TC_LAUNCH_FORMAT "tilec-launch/1"
/* Print kernel k's launch manifest as one JSON object (docs/launch.md). */
void tc_launch_json(const TcProgram *p, const TcKernel *k, const TcTarget *t,
		    TcBuf *b);
/* Print the launch document of kernel `only` of p (NULL: every kernel):
 * {"format": ..., "kernels": [...]}; `extra`, if not NULL, is inserted
 * as members after the format (JSON text ending in ", "). */
void tc_launch_document(const TcProgram *p, const TcKernel *only,
			const TcTarget *t, const char *extra, TcBuf *b);

/* ==== embed: files compiled into the binary (generated by meson) ========== */

typedef struct TcEmbedded {
	const char *path; /* "tilec.h", "cpu/gemm.h", ... */
	const char *text; /* file contents */
	size_t len;       /* bytes */
} TcEmbedded;

extern const TcEmbedded tc_embedded[]; /* terminated by a NULL path */
const TcEmbedded *tc_embedded_find(const char *path);

#endif /* TILEC_INT_H */
