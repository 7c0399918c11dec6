/*
 * tune_record.c - the tuning record `tilec tune` writes (docs/tuning.md):
 * configurations in the documented order, the partial record kept while
 * the search runs, and the summary printed at the end.  record.c reads
 * records back.
 */
#include "cmd/tune.h"

/* --- The record ------------------------------------------------------------- */

/* Order in the record: measured ones fastest first (the finalists,
 * re-timed together, before the rest), then the rest by status, each in
 * enumeration order. */
static int
status_rank(Status s)
{
	static const int rank[ST_COUNT] = {
		[ST_OK] = 0,      [ST_SAME_CODE] = 1,     [ST_WRONG] = 2,
		[ST_FAILED] = 3,  [ST_COMPILE_ERROR] = 4, [ST_PRUNED] = 5,
		[ST_PENDING] = 6,
	};
	return rank[s];
}

static int
cmp_record_order(const void *a, const void *b)
{
	const Config *x = *(Config *const *)a, *y = *(Config *const *)b;
	int rx = status_rank(x->status), ry = status_rank(y->status);
	if (rx != ry)
		return rx - ry;
	/* The finalists first: their times come from the same later rounds,
	 * and a machine that slowed down between the rounds makes the
	 * others' single first-round times look faster. */
	if (x->status == ST_OK && (x->ntimes > 1) != (y->ntimes > 1))
		return y->ntimes > 1 ? 1 : -1;
	if (x->status == ST_OK && x->final_ms != y->final_ms)
		return tune_cmp_double(&x->final_ms, &y->final_ms);
	return (x > y) - (x < y);
}

static json_t *
config_json(const Tune *t, const Config *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "values", tune_values_json(t, c->values, false));
	json_object_set_new(o, "status", json_string(tune_status_names[c->status]));
	if (c->is_default)
		json_object_set_new(o, "default", json_true());
	if (c->reason)
		json_object_set_new(o, "reason", json_string(c->reason));
	if (c->log) {
		size_t n = strlen(c->log);
		char *keep = n > LOG_KEEP ? tune_fmt_alloc("%.*s\n[... %zu more bytes]",
						      LOG_KEEP, c->log,
						      n - LOG_KEEP)
					  : tune_xstrdup(c->log);
		json_object_set_new(o, "log", json_string(keep));
		free(keep);
	}
	if (c->status == ST_SAME_CODE && c->same_as >= 0)
		json_object_set_new(o, "same_code_as",
				    tune_values_json(t, t->cfg[c->same_as].values,
						false));
	if (c->rel_err >= 0)
		json_object_set_new(o, "max_rel_err", json_real(c->rel_err));
	if (c->ntimes > 0) {
		json_object_set_new(o, "median_ms", json_real(c->median_ms));
		json_object_set_new(o, "min_ms", json_real(c->min_ms));
		json_object_set_new(o, "mean_ms", json_real(c->mean_ms));
		json_object_set_new(o, "runs", json_integer(c->runs));
		json_object_set_new(o, "final_ms", json_real(c->final_ms));
		json_object_set_new(o, "timings", json_integer(c->ntimes));
		if (c->ntimes > 1)
			json_object_set_new(o, "spread",
					    json_real(tune_timing_spread(c)));
		if (tune_is_noisy(c))
			json_object_set_new(o, "noisy", json_true());
		if (c->gflops > 0)
			json_object_set_new(o, "gflops", json_real(c->gflops));
		if (c->gbps > 0)
			json_object_set_new(o, "gbps", json_real(c->gbps));
	}
	return o;
}

/* The whole record.  shape, bucket and check are consumed.  best is
 * NULL in a partial record that has timed nothing yet: it has no
 * "chosen". */
json_t *
tune_record_json(Tune *t, const Config *best, json_t *shape, json_t *bucket,
	    json_t *check)
{
	json_t *r = json_object();
	json_object_set_new(r, "format", json_string(RECORD_FORMAT));
	json_object_set_new(r, "spdx_license", json_string("MIT"));
	json_object_set_new(r, "tilec_version", json_string(TILEC_VERSION));
	json_object_set_new(r, "tilec_revision",
			    json_string(TILEC_GIT_REVISION));
	json_object_set_new(r, "created", tune_now_json());
	json_object_set_new(r, "kernel", json_string(t->kname));
	json_object_set_new(r, "source", json_string(t->file));
	json_object_set_new(r, "source_sha256", json_string(t->sha));
	json_object_set_new(r, "target", json_string(t->tinfo.name));
	json_object_set_new(r, "arch", json_string(t->tinfo.arch));
	if (t->march)
		json_object_set_new(r, "march", json_string(t->march));
	tune_strip_json(t, r);
	json_object_set_new(r, "device", json_string(t->device));
	json_object_set_new(r, "compilers", json_incref(t->compilers));
	json_object_set_new(r, "shape", shape);
	json_object_set_new(r, "shape_bucket", bucket);
	json_object_set_new(r, "check_shape", check);
	if (t->nranges) {
		/* The inputs' value ranges the search ran with. */
		json_t *ranges = json_array();
		for (int i = 0; i < t->nranges; i++)
			json_array_append_new(ranges,
					      json_string(t->range_arg[i]));
		json_object_set_new(r, "ranges", ranges);
	}
	json_t *pinned = json_object();
	for (int i = 0; i < t->ntun; i++)
		if (t->tun[i].pinned)
			json_object_set_new(pinned, t->tun[i].name,
					    json_integer(t->tun[i].def));
	json_object_set_new(r, "pinned", pinned);
	const Config *def = &t->cfg[t->default_index];
	json_object_set_new(r, "default", tune_values_json(t, def->values, true));
	if (best)
		json_object_set_new(r, "chosen",
				    tune_values_json(t, best->values, true));

	json_t *m = json_object();
	json_object_set_new(m, "statistic", json_string("median"));
	json_object_set_new(m, "timer", json_string(t->timer));
	json_object_set_new(m, "warmup", json_integer(t->warmup));
	json_object_set_new(m, "repeat", json_integer(t->repeat));
	json_object_set_new(m, "confirm_rounds", json_integer(t->confirm));
	json_object_set_new(m, "finalists", json_integer(FINALISTS));
	json_object_set_new(m, "noisy", json_boolean(t->noisy));
	json_object_set_new(m, "noise_ratio", json_real(NOISE_RATIO));
	json_object_set_new(m, "extra_rounds", json_integer(t->extra_rounds));
	if (best && best->input_sets)
		json_object_set_new(m, "input_sets",
				    json_integer(best->input_sets));
	json_object_set_new(r, "measure", m);

	json_t *res = json_object();
	int count[ST_COUNT] = { 0 };
	for (int i = 0; i < t->ncfg; i++)
		count[t->cfg[i].status]++;
	json_t *counts = json_object();
	for (int s = 0; s < ST_COUNT; s++)
		if (count[s])
			json_object_set_new(counts, tune_status_names[s],
					    json_integer(count[s]));
	json_object_set_new(res, "configs", json_integer(t->ncfg));
	json_object_set_new(res, "by_status", counts);
	if (best)
		json_object_set_new(res, "chosen_ms", json_real(best->final_ms));
	if (best && def->status == ST_OK) {
		json_object_set_new(res, "default_ms", json_real(def->final_ms));
		json_object_set_new(res, "speedup",
				    json_real(def->final_ms / best->final_ms));
	}
	/* What the search cost: its wall time, and on a GPU the time the
	 * device spent timing (the units' sum, from a merge). */
	if (t->wall_s > 0)
		json_object_set_new(res, "wall_s", json_real(t->wall_s));
	if (t->wall_s > 0 && t->tinfo.kind != TC_TARGET_OPENMP)
		json_object_set_new(res, "gpu_s", json_real(t->timing_s));
	json_object_set_new(r, "result", res);

	Config **order = calloc((size_t)t->ncfg, sizeof *order);
	json_t *all = json_array();
	for (int i = 0; order && i < t->ncfg; i++)
		order[i] = &t->cfg[i];
	if (order) {
		qsort(order, (size_t)t->ncfg, sizeof *order, cmp_record_order);
		for (int i = 0; i < t->ncfg; i++)
			json_array_append_new(all, config_json(t, order[i]));
	}
	free(order);
	json_object_set_new(r, "configs", all);
	return r;
}

/* The choice so far: the fastest of the configurations timed more than
 * once (the finalists), else of those timed; NULL if none is. */
const Config *
tune_best_so_far(const Tune *t)
{
	const Config *best = NULL;
	for (int pass = 0; pass < 2 && !best; pass++)
		for (int i = 0; i < t->ncfg; i++) {
			const Config *c = &t->cfg[i];
			if (c->status != ST_OK || (pass == 0 && c->ntimes < 2))
				continue;
			if (!best || c->final_ms < best->final_ms)
				best = c;
		}
	return best;
}

/* Write what the search has measured so far to t->partial (atomically,
 * so an interrupted search leaves the last one whole): the record as it
 * would be now, with "partial" saying how far it got.  A failure is
 * warned about once and does not stop the search. */
void
tune_save_partial(Tune *t, const char *stage)
{
	if (!t->partial || t->partial_failed)
		return;
	int checked = 0, timed = 0, to_time = 0;
	for (int i = 0; i < t->ncfg; i++) {
		Status st = t->cfg[i].status;
		checked += st == ST_OK || st == ST_PENDING || st == ST_WRONG ||
			   st == ST_FAILED || st == ST_COMPILE_ERROR;
		timed += st == ST_OK;
		to_time += st == ST_OK || st == ST_PENDING;
	}
	json_t *rec = tune_record_json(t, tune_best_so_far(t), tune_shape_json(&t->shape),
				  tune_bucket_json(t, &t->shape),
				  tune_shape_json(t->check_shape.n ? &t->check_shape
							      : &t->shape));
	json_t *p = json_object();
	json_object_set_new(p, "stage", json_string(stage));
	json_object_set_new(p, "checked", json_integer(checked));
	json_object_set_new(p, "timed", json_integer(timed));
	json_object_set_new(p, "to_time", json_integer(to_time));
	json_object_set_new(rec, "partial", p);
	char *s = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS |
					  JSON_REAL_PRECISION(6));
	json_decref(rec);
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_printf(&b, "%s\n", s ? s : "");
	free(s);
	if (!tc_write_file(t->partial, b.data, b.len)) {
		fprintf(stderr, "tilec tune: warning: cannot write the partial "
			"record %s: %s; the search goes on\n",
			t->partial, strerror(errno ? errno : EIO));
		t->partial_failed = true;
	}
	tc_buf_free(&b);
}

/* Print o as the one JSON object on stdout (--json), and free it. */
void
tune_print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (s) {
		printf("%s\n", s);
		free(s);
	}
	json_decref(o);
}

/* A time for --json: null when there is none. */
json_t *
tune_ms_json(bool ok, double ms)
{
	return ok && isfinite(ms) ? json_real(ms) : json_null();
}

/* The summary after a search (or --finish), as --json prints it. */
static void
print_choice_json(const Tune *t, const Config *best, const char *path)
{
	const Config *def = &t->cfg[t->default_index];
	bool def_ok = def->status == ST_OK;
	json_t *o = json_object(), *counts = json_object();
	json_object_set_new(o, "kernel", json_string(t->kname));
	json_object_set_new(o, "file", json_string(t->file));
	json_object_set_new(o, "target", json_string(t->tinfo.name));
	json_object_set_new(o, "arch", json_string(t->tinfo.arch));
	json_object_set_new(o, "device", json_string(t->device));
	json_object_set_new(o, "chosen", tune_values_json(t, best->values, true));
	json_object_set_new(o, "chosen_ms", tune_ms_json(true, best->final_ms));
	json_object_set_new(o, "chosen_is_default", json_boolean(best == def));
	json_object_set_new(o, "default", tune_values_json(t, def->values, true));
	json_object_set_new(o, "default_status",
			    json_string(tune_status_names[def->status]));
	json_object_set_new(o, "default_ms", tune_ms_json(def_ok, def->final_ms));
	json_object_set_new(o, "speedup",
			    tune_ms_json(def_ok, def->final_ms / best->final_ms));
	for (int i = 0; i < t->ncfg; i++) {
		const char *s = tune_status_names[t->cfg[i].status];
		json_t *n = json_object_get(counts, s);
		json_object_set_new(counts, s,
				    json_integer(n ? json_integer_value(n) + 1
						   : 1));
	}
	json_object_set_new(o, "configs", counts);
	/* What the search cost, as the record's result says it. */
	if (t->wall_s > 0)
		json_object_set_new(o, "wall_s", json_real(t->wall_s));
	if (t->wall_s > 0 && t->tinfo.kind != TC_TARGET_OPENMP)
		json_object_set_new(o, "gpu_s", json_real(t->timing_s));
	json_object_set_new(o, "record", path ? json_string(path) : json_null());
	tune_print_json(o);
}

/* The summary after a search. */
void
tune_print_choice(const Tune *t, const Config *best, const char *path)
{
	if (t->json) {
		print_choice_json(t, best, path);
		return;
	}
	const Config *def = &t->cfg[t->default_index];
	TcBuf v;
	tc_buf_init(&v);
	tune_values_text(t, best->values, &v);
	printf("chosen: %s, %.4g ms", v.data, best->final_ms);
	if (best == def)
		printf(" (the default)");
	else if (def->status == ST_OK)
		printf("; the default %.4g ms (%.2fx)", def->final_ms,
		       def->final_ms / best->final_ms);
	else
		printf("; the default was %s", tune_status_names[def->status]);
	printf("\n");
	if (path)
		printf("record: %s\n", path);
	tc_buf_free(&v);
}

const char *
tune_record_path(Tune *t, char *buf, size_t n)
{
	if (t->out)
		return t->out;
	snprintf(buf, n, "%s.%s.tune.json", t->kname, t->tinfo.name);
	return buf;
}

