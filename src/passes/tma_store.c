/*
 * tma_store.c - the epilogue's tile stores by TMA (sm_90a).
 *
 * Input: expanded GPU IR (expand_pipeline has lowered every copy, carried
 * the pipelines out, split warp-specialized loops into roles and made
 * persistent kernels walk their tiles; smem has planned shared memory).
 * Output: a COPY of a register fragment laid out as a wgmma accumulator
 * into a tile of a tensor, where the tensor memory accelerator can store
 * that tile, is lowered TMA_STORE: copy.tmap a tensor map of the tensor
 * (box: the tile's rows by one column panel of at most 128 bytes, rows
 * swizzled as the panel's width), copy.staging the shared memory the
 * tile goes through and copy.staged the panels that holds at once,
 * copy.sync the threads whose barriers order it.  tilec::TmaStore
 * (templates/cuda/tilec_sm90.cuh) then has every thread write its
 * elements into the swizzled panels, fence them for the async proxy,
 * and thread 0 store each panel with cp.async.bulk.tensor (the hardware
 * clips the box at the tensor's edges), waiting for the panels' reads
 * before the region is written again; where the host did not build the
 * map, or the tile's first column is no whole 16-byte vector, it stores
 * from registers as a REGISTER copy does.
 *
 * The tile fits when its element is 1, 2 or 4 bytes, its rows lie along
 * the tensor's innermost dim (rank 2 to 5, 32-bit extents) and are 32,
 * 64 or a multiple of 128 bytes, at most 256 rows in 8-row atoms, and
 * the kernel neither reads the tensor nor writes it elsewhere (the bulk
 * stores are asynchronous to the threads' own accesses).  The staging
 * region: the bytes from 0, which the pipeline's stages held, when the
 * store runs once after the loop (not inside a loop or a persistent
 * block's tile walk, whose next tile refills the stages) and no buffer
 * there is used after it; else a region of its own after the kernel's
 * shared memory, of every panel or, where that does not fit, two at a
 * time, where it stays within the target's limit and leaves the blocks
 * an SM holds as they were.  A store of such a fragment that does not
 * take it gets a located note saying why.  --no-tma-store (or --no-tma)
 * keeps every store from registers.
 */
#include "passes/passes.h"

#include <string.h>

enum { MAX_DEPTH = 64 };

typedef struct Store {
	TcArena *a;
	TcKernel *k;
	const TcTarget *t;
	TcDiags *d;
	/* The blocks open around the statement being looked at, and its
	 * index in each (outermost first). */
	TcStmt *block[MAX_DEPTH];
	int index[MAX_DEPTH];
	int depth;
	bool in_loop;   /* inside a loop: what comes before runs again after */
	long long sync; /* the barriers' threads: 0, or a consumer block's */
	/* The region of the kernel's own that stores use when the stages'
	 * bytes are not free (offset, bytes; 0 bytes: none yet). */
	long long own, own_bytes;
	/* Why own_region last found no room (a clause), for the note. */
	const char *own_why;
} Store;

static long long
align_up(long long n, long long a)
{
	return (n + a - 1) / a * a;
}

/* Bytes shared buffer v spans, every stage and its padding included. */
static long long
footprint(const TcVar *v)
{
	long long elems = 1, n;
	for (int i = 0; i < v->rank; i++) {
		if (!tc_expr_const(v->shape[i], &n))
			return -1;
		elems *= n + (i == v->rank - 1 ? v->pad : 0);
	}
	long long bytes = (elems * tc_dtype_storage_bits(v->dtype) + 7) / 8;
	return bytes * (v->stages > 1 ? v->stages : 1);
}

/* Whether a statement after the one being looked at (in its block and
 * every block around it) touches shared buffer v. */
static bool
used_after(const Store *S, const TcVar *v)
{
	for (int f = S->depth - 1; f >= 0; f--) {
		const TcVec *items = &S->block[f]->u.block.body;
		for (int j = S->index[f] + 1; j < items->len; j++)
			if (tc_stmt_touches(items->items[j], NULL, v))
				return true;
	}
	return false;
}

/* Whether bytes [0, bytes) of shared memory are free once the statement
 * being looked at runs: it runs once, after the loops that used them,
 * and every buffer there is dead; the reductions' scratch and the stage
 * barriers lie past them. */
static bool
stages_free(const Store *S, long long bytes)
{
	if (S->in_loop || bytes > S->k->scratch_offset)
		return false;
	for (int i = 0; i < S->k->vars.len; i++) {
		const TcVar *v = S->k->vars.items[i];
		if (v->kind != TC_VAR_BUFFER || !tc_in_smem(v) || v->smem_offset < 0 ||
		    v->smem_offset >= bytes)
			continue;
		if (footprint(v) < 0 || used_after(S, v))
			return false;
	}
	return true;
}

/* Blocks of `bytes` of shared memory an SM holds, as threads allow. */
static long long
blocks_per_sm(const Store *S, long long bytes)
{
	long long by_smem = (S->t->smem_limit + 1024) / (bytes + 1024);
	long long threads = tc_abi_launch_threads(S->k, S->t);
	long long by_threads = threads > 0 ? 2048 / threads : 1;
	return by_smem < by_threads ? by_smem : by_threads;
}

/* A region of the kernel's own of `bytes`, shared by its stores (one at
 * a time: each waits for the last one's reads), growing the kernel's
 * shared memory where it stays within the limit and the blocks an SM
 * holds do not drop (below its launch bounds' promise, with a producer
 * warpgroup); its offset, or -1. */
static long long
own_region(Store *S, long long bytes)
{
	TcKernel *k = S->k;
	if (S->own_bytes >= bytes)
		return S->own;
	long long at = S->own_bytes ? S->own : align_up(k->smem_bytes, 1024);
	long long total = at + bytes;
	long long before = k->producer_blocks ? k->producer_blocks :
			   blocks_per_sm(S, k->smem_bytes);
	if (total > S->t->smem_limit) {
		S->own_why = tc_fmt(S->a, "would pass %s's %lld", S->t->arch,
				    S->t->smem_limit);
		return -1;
	}
	long long after = blocks_per_sm(S, total);
	if (after < before) {
		S->own_why = tc_fmt(S->a, "would lower the blocks an SM holds "
				    "from %lld to %lld", before, after);
		return -1;
	}
	S->own = at;
	S->own_bytes = bytes;
	if (total > k->smem_bytes)
		k->smem_bytes = total;
	return at;
}

/* The kernel's tensor map of tensor t with this box and swizzle, made if
 * it has none. */
static TcTensorMap *
store_map(Store *S, TcVar *t, const int *box, int swizzle)
{
	TcKernel *k = S->k;
	for (int i = 0; i < k->tmaps.len; i++) {
		TcTensorMap *m = k->tmaps.items[i];
		if (m->tensor == t && m->swizzle == swizzle &&
		    memcmp(m->box, box, sizeof m->box) == 0)
			return m;
	}
	const char *name = tc_fmt(S->a, "%s_map", t->name);
	for (bool taken = true; taken;) {
		taken = false;
		for (int i = 0; i < k->vars.len && !taken; i++)
			taken = strcmp(((const TcVar *)k->vars.items[i])->name,
				       name) == 0;
		for (int i = 0; i < k->tmaps.len && !taken; i++)
			taken = strcmp(((const TcTensorMap *)k->tmaps.items[i])->name,
				       name) == 0;
		if (taken)
			name = tc_fmt(S->a, "%s_", name);
	}
	TcTensorMap *m = tc_alloc(S->a, sizeof *m);
	m->name = tc_var_new(S->a, k, TC_VAR_HANDLE, name, TC_DT_I32,
			     (TcLoc){ 0 })->name;
	m->tensor = t;
	memcpy(m->box, box, sizeof m->box);
	m->swizzle = swizzle;
	tc_vec_push(S->a, &k->tmaps, m);
	return m;
}

/* Why the tile of COPY s (fragment f, `rows` x `cols`, into tensor t)
 * cannot go by TMA, as a clause, or NULL; *span gets the bytes of a
 * panel's rows. */
static const char *
tile_why(const Store *S, const TcStmt *s, long long rows, long long cols,
	 long long *span)
{
	const TcRegion *r = &s->u.copy.dst;
	const TcVar *t = r->var;
	int bits = tc_dtype_storage_bits(t->dtype);
	if (t->dtype == TC_DT_BOOL || (bits != 8 && bits != 16 && bits != 32))
		return tc_fmt(S->a, "its %s elements are not 1, 2 or 4 bytes",
			      tc_dtype_name(t->dtype));
	if (t->rank < 2 || t->rank > 5)
		return tc_fmt(S->a, "'%s' has rank %d, not 2 to 5", t->name,
			      t->rank);
	for (int d = 0; d < t->rank; d++)
		if (t->shape[d]->dtype != TC_DT_I32)
			return tc_fmt(S->a, "'%s''s extents are not 32-bit (a "
				      "box's coordinates are)", t->name);
	if (r->ndims != 2 || r->dims[1] != t->rank - 1 ||
	    r->dims[0] >= t->rank - 1)
		return tc_fmt(S->a, "the tile's rows are not along '%s''s "
			      "innermost dim", t->name);
	if (tc_region_ragged(r))
		return "the region is ragged";
	long long row = cols * bits / 8;
	if (!(row == 32 || row == 64 || row % 128 == 0))
		return tc_fmt(S->a, "its rows are %lld bytes, not 32, 64 or a "
			      "multiple of 128", row);
	*span = row < 128 ? row : 128;
	if (rows % 8 || rows > 256)
		return tc_fmt(S->a, "its %lld rows are not whole 8-row atoms of "
			      "at most 256", rows);
	if (tc_stmt_touches(S->k->body, s, t))
		return tc_fmt(S->a, "the kernel also reads or writes '%s' "
			      "elsewhere", t->name);
	return NULL;
}

/* COPY s: lowered TMA_STORE where it fits; a note where it is a wgmma
 * fragment's store that does not. */
static void
consider(Store *S, TcStmt *s)
{
	TcVar *f = s->u.copy.src.var, *t = s->u.copy.dst.var;
	if (s->u.copy.lower != TC_COPY_REGISTER || f->kind != TC_VAR_BUFFER ||
	    f->layout.kind != TC_LAYOUT_WGMMA || t->kind != TC_VAR_TENSOR)
		return;
	long long rows = 0, cols = 0, span = 0;
	const char *why = NULL;
	if (f->rank != 2 || !tc_expr_const(f->shape[0], &rows) ||
	    !tc_expr_const(f->shape[1], &cols))
		why = "the fragment is not a 2-D tile";
	if (!why)
		why = tile_why(S, s, rows, cols, &span);
	long long e = tc_dtype_storage_bits(t->dtype) / 8;
	long long panels = span ? cols * e / span : 0;
	long long box = rows * span, at = -1, staged = panels;
	if (!why) {
		/* The stages' bytes, else a region of every panel, else of
		 * two. */
		if (stages_free(S, panels * box))
			at = 0;
		else if ((at = own_region(S, panels * box)) < 0 && panels > 2 &&
			 (at = own_region(S, 2 * box)) >= 0)
			staged = 2;
		if (at < 0)
			why = tc_fmt(S->a, "its %lld bytes%s have no room in shared "
				     "memory: the pipeline's %s, and a region of "
				     "its own beside the kernel's %lld bytes %s",
				     panels * box, panels > 2 ?
				     tc_fmt(S->a, " (or two of its %lld-byte "
					    "panels)", box) : "",
				     S->in_loop ? "stages are refilled while it "
				     "runs (a later iteration's or tile's copies)" :
				     "buffers are in use after it",
				     S->k->smem_bytes, S->own_why);
	}
	if (why) {
		tc_diag(S->d, TC_NOTE, s->loc, "this tile_copy into '%s' stores "
			"from registers, not by TMA: %s", t->name, why);
		return;
	}
	int mbox[TC_MAX_RANK];
	for (int d = 0; d < TC_MAX_RANK; d++)
		mbox[d] = 1;
	mbox[s->u.copy.dst.dims[0]] = (int)rows;
	mbox[t->rank - 1] = (int)(span / e);
	s->u.copy.lower = TC_COPY_TMA_STORE;
	s->u.copy.tmap = store_map(S, t, mbox, (int)span);
	s->u.copy.staging = at;
	s->u.copy.staged = (int)staged;
	s->u.copy.sync = S->sync;
	s->note = tc_fmt(S->a, "The tile goes through shared memory (%s%s) and "
			 "thread 0 stores it by TMA, which clips it at the "
			 "tensor's edges; where the map was not built or the "
			 "tile's first column is not a 16-byte vector, from "
			 "registers.", at == 0 ? "the pipeline's stages, done "
			 "with by now" : "a region of its own", staged < panels ?
			 tc_fmt(S->a, ", %lld of its %lld %lld-byte column "
				"panels at a time", staged, panels, box) : "");
}

static void walk(Store *S, TcStmt *s);

static void
walk_block(Store *S, TcStmt *b)
{
	if (!b || S->depth == MAX_DEPTH)
		return;
	int f = S->depth++;
	S->block[f] = b;
	for (int i = 0; i < b->u.block.body.len; i++) {
		S->index[f] = i;
		walk(S, b->u.block.body.items[i]);
	}
	S->depth--;
}

/* Every statement all of the barriers' threads run alike: blocks,
 * branches and serial loops (whose conditions are the block's), a
 * persistent block's tile walk and a ROLES' consumer block; not a
 * producer's, nor a pipelined loop's expansion. */
static void
walk(Store *S, TcStmt *s)
{
	bool in_loop = S->in_loop;
	long long sync = S->sync;
	switch (s->kind) {
	case TC_ST_BLOCK:
		walk_block(S, s);
		break;
	case TC_ST_IF:
		walk_block(S, s->u.cond.then);
		walk_block(S, s->u.cond.els);
		break;
	case TC_ST_FOR:
		if (s->u.loop.kind != TC_LOOP_SERIAL)
			break;
		S->in_loop = true;
		walk_block(S, s->u.loop.body);
		break;
	case TC_ST_TILES:
		S->in_loop = true;
		walk_block(S, s->u.tiles.body);
		break;
	case TC_ST_ROLES:
		S->sync = s->u.roles.threads;
		walk_block(S, s->u.roles.consumer);
		break;
	case TC_ST_COPY:
		consider(S, s);
		break;
	default:
		break;
	}
	S->in_loop = in_loop;
	S->sync = sync;
}

bool
tc_tma_store(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	if (!opt->target.tma || opt->tma == TC_TMA_OFF || opt->no_tma_store)
		return true;
	for (int i = 0; i < p->kernels.len; i++) {
		Store S = { .a = a, .k = p->kernels.items[i], .t = &opt->target,
			    .d = d };
		walk(&S, S.k->body);
	}
	return true;
}
