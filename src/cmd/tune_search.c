/*
 * tune_search.c - `tilec tune` on a machine that runs the target: every
 * configuration compiled and checked on a harness (harness.c) in worker
 * threads, the survivors timed on the same harness, the finalists again
 * in rounds, noise detected; the record written, or a record replayed.
 */
#include "cmd/tune.h"

/* --- Searching on this machine: the harness per configuration --------------- */

double
tune_num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return v ? json_number_value(v) : 0;
}

const char *
tune_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

void
tune_strip_json(const Tune *t, json_t *o)
{
	if (t->cpu_strip)
		json_object_set_new(o, "cpu_strip",
				    json_integer(t->cpu_strip < 0 ? 0
								  : t->cpu_strip));
}

int
tune_strip_from_json(json_t *o)
{
	json_t *v = json_object_get(o, "cpu_strip");
	if (!json_is_integer(v))
		return 0;
	long long n = json_integer_value(v);
	return n == 0 ? -1 : n > 0 && n <= 16 ? (int)n : 0;
}

void
tune_harness_free(Config *c)
{
	if (c->harness) {
		tc_harness_free(c->harness);
		free(c->harness);
		c->harness = NULL;
	}
}

/* The values of `shape` (and the --range lists) for the harness. */
void
tune_harness_shape(const Tune *t, const Shape *shape, TcHarnessShape *s)
{
	memset(s, 0, sizeof *s);
	s->nshapes = shape->n;
	for (int i = 0; i < shape->n; i++) {
		s->shape_name[i] = shape->name[i];
		s->shape_value[i] = shape->value[i];
	}
	s->nranges = t->nrange_items;
	for (int i = 0; i < t->nrange_items; i++) {
		s->range_name[i] = t->range_name[i];
		s->range_lo[i] = t->range_lo[i];
		s->range_hi[i] = t->range_hi[i];
	}
	s->tol = t->tol_value;
}

/* A harness for configuration c: the program, the translation
 * translate_all made, compiled. */
static bool
harness_open(Tune *t, Config *c, TcHarness *h)
{
	TcHarnessSpec spec = tune_harness_spec(t, c->values, false);
	if (!tc_harness_load(h, &spec))
		return false;
	if (c->gen_kernel) {
		tc_harness_adopt(h, c->gen_arena, c->gen_kernel, &c->gen_src,
				 c->translate_s);
		c->gen_arena = NULL;
		c->gen_kernel = NULL;
	}
	return tc_harness_compile(h);
}

/* What a harness that stopped says about c: its status, reason and log. */
static void
harness_outcome(Config *c, const TcHarness *h)
{
	const char *msg = h->message ? h->message : "";
	switch (h->fail) {
	case TC_HARNESS_OK:
		c->status = ST_PENDING;
		break;
	case TC_HARNESS_MISMATCH:
	case TC_HARNESS_REFERENCE:
		c->status = ST_WRONG;
		c->reason = tune_xstrdup(msg[0] ? msg : "the check failed");
		break;
	case TC_HARNESS_COMPILE:
		c->status = ST_COMPILE_ERROR;
		c->reason = tune_xstrdup("the compiler rejected the generated code");
		c->log = tune_xstrdup(msg);
		break;
	default:
		c->status = ST_FAILED;
		c->reason = msg[0] ? tune_xstrdup(msg)
				   : tune_fmt_alloc("stopped at the %s step",
					       tc_harness_fail_name(h->fail));
		if (h->log)
			c->log = tune_xstrdup(h->log);
		break;
	}
}

/* Check configuration c at the check shape (worker threads); a
 * configuration that passes keeps its harness for the timings. */
static void
check_one(Tune *t, Config *c)
{
	TcHarness *h = calloc(1, sizeof *h);
	if (!h) {
		c->status = ST_FAILED;
		c->reason = tune_xstrdup("out of memory");
		return;
	}
	TcHarnessShape s;
	tune_harness_shape(t, t->check_shape.n ? &t->check_shape : &t->shape, &s);
	bool ok = harness_open(t, c, h) && tc_harness_bind(h, &s) &&
		  tc_harness_check(h, t->seed_value, true);
	tune_gen_free(c);
	if (h->info.note[0])
		fprintf(stderr, "tilec tune: %s\n", h->info.note);
	c->cache_hit = h->info.from_cache;
	c->compile_ms = h->info.total_seconds * 1e3;
	c->rel_err = 0;
	for (int i = 0; i < h->nout; i++)
		if (h->out[i].rel_err > c->rel_err)
			c->rel_err = h->out[i].rel_err;
	harness_outcome(c, h);
	tc_harness_unbind(h);
	c->harness = h;
	if (!ok)
		tune_harness_free(c);
}

/* One progress line (and a failure's details), under the lock. */
void
tune_progress(Tune *t, const Config *c, const char *what)
{
	TcBuf v;
	tc_buf_init(&v);
	tune_values_text(t, c->values, &v);
	fprintf(stderr, "[%3d/%d] %s%s: %s\n", t->done, t->todo, v.data,
		c->is_default ? " (default)" : "", what);
	if (c->log && c->status == ST_COMPILE_ERROR)
		fprintf(stderr, "%s\n", c->log);
	tc_buf_free(&v);
}

static void
report_check(Tune *t, const Config *c)
{
	char *what;
	switch (c->status) {
	case ST_WRONG:
		what = tune_fmt_alloc("WRONG, dropped: %s", c->reason);
		break;
	case ST_COMPILE_ERROR:
		what = tune_fmt_alloc("COMPILE ERROR, skipped; the log:");
		break;
	case ST_FAILED:
		what = tune_fmt_alloc("FAILED, skipped: %s", c->reason);
		break;
	default:
		what = tune_fmt_alloc("correct (max rel err %.2g), %s %.0f ms",
				 c->rel_err, c->cache_hit ? "cached" : "compiled",
				 c->compile_ms);
		break;
	}
	tune_progress(t, c, what);
	free(what);
}

static void *
check_worker(void *arg)
{
	Tune *t = arg;
	for (;;) {
		pthread_mutex_lock(&t->lock);
		while (t->next < t->ncfg && t->cfg[t->next].status != ST_PENDING)
			t->next++;
		int i = t->next < t->ncfg ? t->next++ : -1;
		pthread_mutex_unlock(&t->lock);
		if (i < 0)
			return NULL;
		Config *c = &t->cfg[i];
		check_one(t, c);
		pthread_mutex_lock(&t->lock);
		t->done++;
		report_check(t, c);
		pthread_mutex_unlock(&t->lock);
	}
}

/* Compile and check every pending configuration, --jobs at a time. */
static void
check_all(Tune *t)
{
	t->next = t->done = 0;
	t->todo = 0;
	for (int i = 0; i < t->ncfg; i++)
		t->todo += t->cfg[i].status == ST_PENDING;
	fprintf(stderr, "tilec tune: compiling and checking %d at %s, %d at "
		"a time\n", t->todo,
		t->check_shape.n ? t->check_shape.text : t->shape.text, t->jobs);
	pthread_t th[64];
	int n = t->jobs < 64 ? t->jobs : 64, started = 0;
	for (int i = 0; i < n; i++)
		started += pthread_create(&th[started], NULL, check_worker, t) == 0;
	if (started == 0)
		check_worker(t);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

/* Time configuration c at the tuning shape; false (*why set, malloc'd)
 * if that failed. */
static bool
time_one(Tune *t, Config *c, char **why)
{
	TcHarness *h = c->harness;
	TcHarnessShape s;
	tune_harness_shape(t, &t->shape, &s);
	TcHarnessTiming b;
	double t0 = tilec_now();
	bool ok = h && tc_harness_bind(h, &s) &&
		  tc_harness_check(h, t->seed_value, false) &&
		  tc_harness_bench(h, t->warmup, t->repeat, 0, &b);
	t->timing_s += tilec_now() - t0;
	if (h)
		tc_harness_unbind(h);
	if (!ok) {
		*why = tune_xstrdup(h && h->message ? h->message : "timing failed");
		return false;
	}
	double ms = b.median_ms;
	t->ntimings++;
	if (t->test_noise > 0 && t->ntimings % t->test_noise == 0)
		ms *= 50; /* as if the machine were busy for this timing */
	if (ms > NOISE_RATIO * b.min_ms)
		c->noisy_timings++;
	if (c->ntimes == 0) {
		c->median_ms = ms;
		c->min_ms = b.min_ms;
		c->mean_ms = b.mean_ms;
		c->runs = b.runs;
		c->input_sets = b.input_sets;
		c->gflops = b.gflops;
		c->gbps = b.gbps;
	}
	if (c->ntimes < MAX_TIMES)
		c->times[c->ntimes++] = ms;
	c->final_ms = tune_median(c->times, c->ntimes);
	return true;
}

static char *
time_text(const Config *c)
{
	if (c->gflops > 0)
		return tune_fmt_alloc("%.4g ms (min %.4g), %.1f GFLOP/s", c->median_ms,
				 c->min_ms, c->gflops);
	return tune_fmt_alloc("%.4g ms (min %.4g), %.1f GB/s", c->median_ms,
			 c->min_ms, c->gbps);
}

/* How far apart c's timings are: the slowest over the fastest (1 with a
 * single timing). */
double
tune_timing_spread(const Config *c)
{
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < c->ntimes; i++) {
		lo = c->times[i] < lo ? c->times[i] : lo;
		hi = c->times[i] > hi ? c->times[i] : hi;
	}
	return c->ntimes > 1 && lo > 0 ? hi / lo : 1;
}

/* c's timings disagree, or one of them spread over its launches. */
bool
tune_is_noisy(const Config *c)
{
	return c->noisy_timings > 0 || tune_timing_spread(c) > NOISE_RATIO;
}

/* One round over the finalists, starting at a different one each
 * round. */
static void
time_round(Tune *t, Config **fin, int nfin, int round)
{
	for (int j = 0; j < nfin; j++) {
		Config *c = fin[(j + round) % nfin];
		char *why = NULL;
		if (!time_one(t, c, &why)) {
			/* Keep its earlier timings. */
			fprintf(stderr, "tilec tune: timing again failed: %s\n",
				why);
			free(why);
		}
		tune_save_partial(t, "confirming");
	}
}

/* Say that the timings were noisy, naming the worst configuration. */
static void
warn_noise(Tune *t, Config **ok, int nok)
{
	const Config *worst = NULL;
	int within = 0, total = 0;
	for (int i = 0; i < nok; i++) {
		within += ok[i]->noisy_timings;
		total += ok[i]->ntimes;
		if (!worst || tune_timing_spread(ok[i]) > tune_timing_spread(worst))
			worst = ok[i];
	}
	TcBuf v;
	tc_buf_init(&v);
	fprintf(stderr, "tilec tune: warning: the timings are noisy");
	if (worst && tune_timing_spread(worst) > NOISE_RATIO) {
		tune_values_text(t, worst->values, &v);
		double lo = INFINITY, hi = 0;
		for (int i = 0; i < worst->ntimes; i++) {
			lo = worst->times[i] < lo ? worst->times[i] : lo;
			hi = worst->times[i] > hi ? worst->times[i] : hi;
		}
		fprintf(stderr, ": %s timed from %.4g to %.4g ms (%.1fx) over "
			"%d timings", v.data, lo, hi, hi / lo, worst->ntimes);
	}
	if (within)
		fprintf(stderr, "%s%d of %d timings had their median launch over "
			"%.1fx their fastest", worst && tune_timing_spread(worst) >
			NOISE_RATIO ? "; " : ": ", within, total, NOISE_RATIO);
	fprintf(stderr, ".  The machine is likely busy; the choice rests on "
		"medians of %d rounds but may be noise: tune on a quiet "
		"machine, or with more --repeat and --confirm\n",
		1 + t->confirm + t->extra_rounds);
	tc_buf_free(&v);
}

static int
cmp_by_time(const void *a, const void *b)
{
	const Config *x = *(Config *const *)a, *y = *(Config *const *)b;
	return tune_cmp_double(&x->final_ms, &y->final_ms);
}

/* Time every checked configuration, then the finalists again in
 * alternating rounds.  Returns the chosen one, or NULL. */
static Config *
time_all(Tune *t)
{
	t->done = 0;
	t->todo = 0;
	for (int i = 0; i < t->ncfg; i++)
		t->todo += t->cfg[i].status == ST_PENDING;
	fprintf(stderr, "tilec tune: timing %d at %s (%s, median of %d after "
		"%d warm-up launches, rotating input sets)\n", t->todo,
		t->shape.text, t->timer, t->repeat, t->warmup);
	Config **ok = calloc((size_t)t->ncfg + 1, sizeof *ok);
	int nok = 0;
	for (int i = 0; ok && i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		if (c->status != ST_PENDING)
			continue;
		t->done++;
		char *why = NULL;
		if (time_one(t, c, &why)) {
			c->status = ST_OK;
			ok[nok++] = c;
			/* Saved before it is reported: what the progress line
			 * shows is on disk. */
			tune_save_partial(t, "timing");
			char *tt = time_text(c);
			tune_progress(t, c, tt);
			free(tt);
		} else {
			c->status = ST_FAILED;
			c->reason = why;
			tune_save_partial(t, "timing");
			char *line = tune_fmt_alloc("FAILED, skipped: %s", why);
			tune_progress(t, c, line);
			free(line);
		}
	}
	if (!ok || nok == 0) {
		free(ok);
		return NULL;
	}
	/* The finalists: the fastest few and the default. */
	qsort(ok, (size_t)nok, sizeof *ok, cmp_by_time);
	Config *fin[FINALISTS + 1];
	int nfin = 0;
	for (int i = 0; i < nok && nfin < FINALISTS; i++)
		fin[nfin++] = ok[i];
	Config *def = &t->cfg[t->default_index];
	bool have_def = false;
	for (int i = 0; i < nfin; i++)
		have_def |= fin[i] == def;
	if (def->status == ST_OK && !have_def)
		fin[nfin++] = def;
	if (t->confirm > 0 && nfin > 1)
		fprintf(stderr, "tilec tune: %d more rounds over the %d "
			"finalists\n", t->confirm, nfin);
	int round = 0;
	for (; round < t->confirm && nfin > 1; round++)
		time_round(t, fin, nfin, round);
	/* Noisy finalists (the machine was busy for some of their
	 * timings): as many rounds again, at least NOISE_MIN_ROUNDS, within
	 * MAX_TIMES timings each; the medians then rest on more of them.
	 * --confirm 0 asked for no more timings. */
	bool noisy = false;
	for (int i = 0; i < nfin; i++)
		noisy |= tune_is_noisy(fin[i]);
	if (noisy && t->confirm > 0 && nfin > 1) {
		int extra = t->confirm > NOISE_MIN_ROUNDS ? t->confirm
							  : NOISE_MIN_ROUNDS;
		if (1 + t->confirm + extra > MAX_TIMES)
			extra = MAX_TIMES - 1 - t->confirm;
		if (extra > 0)
			fprintf(stderr, "tilec tune: the finalists' timings are "
				"noisy; %d more rounds\n", extra);
		for (int i = 0; i < extra; i++)
			time_round(t, fin, nfin, round++);
		t->extra_rounds = extra > 0 ? extra : 0;
	}
	for (int i = 0; i < nok && !noisy; i++)
		noisy |= tune_is_noisy(ok[i]);
	if (noisy) {
		t->noisy = true;
		warn_noise(t, ok, nok);
	}
	Config *best = NULL;
	for (int i = 0; i < nfin; i++)
		if (!best || fin[i]->final_ms < best->final_ms)
			best = fin[i];
	if (nfin > 1) {
		for (int i = 0; i < nfin; i++) {
			TcBuf v;
			tc_buf_init(&v);
			tune_values_text(t, fin[i]->values, &v);
			fprintf(stderr, "  %-40s %.4g ms median of %d timings%s%s\n",
				v.data, fin[i]->final_ms, fin[i]->ntimes,
				fin[i]->is_default ? ", the default" : "",
				fin[i] == best ? ", chosen" : "");
			tc_buf_free(&v);
		}
	}
	free(ok);
	return best;
}

/* --- This machine: device, compilers ------------------------------------------ */

/* Open the target's device once: its name, limits, and the translator
 * arch `tilec run` will use on it. */
bool
tune_open_device(Tune *t, char *arch_buf, size_t n)
{
	int backend = tilec_backend_from_name(t->target);
	if (backend < 0) {
		TcBuf why;
		tc_buf_init(&why);
		tc_target_explain(&why, t->target, NULL);
		tune_failf("%s", why.data);
		tc_buf_free(&why);
		return false;
	}
	long long dev = 0;
	if (t->device_arg && (!tc_opt_integer(t->device_arg, &dev) || dev < 0)) {
		tune_failf("--device %s: expected a device number", t->device_arg);
		return false;
	}
	tilec_init_error e;
	tilec_context *ctx = tilec_context_new((tilec_backend)backend,
					       backend == TILEC_BACKEND_OPENMP
						       ? 0
						       : (int)dev,
					       &e);
	if (!ctx) {
		tune_failf("%s", e.message);
		if (backend != TILEC_BACKEND_OPENMP)
			fprintf(stderr, "  (where the target cannot run, "
				"`tilec tune --prepare DIR` writes the "
				"configurations for tools/tune_farm.py)\n");
		return false;
	}
	tilec_device_info info;
	tilec_device_get_info(ctx, &info);
	tc_tune_device_name(t->target, info.name, t->device, sizeof t->device);
	t->device_smem = info.max_shared_bytes;
	t->compilers = json_object();
	if (backend == TILEC_BACKEND_OPENMP) {
		const char *cc = t->cc ? t->cc : getenv("TILEC_CC");
		char *v = tune_compiler_version(ctx, cc && cc[0] ? cc : "cc");
		json_object_set_new(t->compilers, "cc",
				    json_string(v ? v : "unknown"));
		free(v);
		t->timer = "wall clock";
	} else {
		json_object_set_new(t->compilers, "runtime",
				    json_string("tilec runtime "
						TILEC_RUNTIME_VERSION));
		t->timer = "device events";
		/* As `tilec run` picks it. */
		TcTarget tt;
		if (!t->arch) {
			if (tc_target_init(&tt, t->target, info.arch))
				snprintf(arch_buf, n, "%s", info.arch);
			else
				snprintf(arch_buf, n, "%s",
					 backend == TILEC_BACKEND_CUDA ? "sm_80"
								       : "gfx90a");
			t->arch = arch_buf;
		}
	}
	tilec_context_free(ctx);
	return true;
}

/* Search on this machine and write the record. */
int
tune_here(Tune *t)
{
	char arch[32];
	t->started = tilec_now();
	if (!tune_open_device(t, arch, sizeof arch) || !tune_load_program(t) ||
	    !tune_enumerate(t))
		return EXIT_STOPPED;
	if (!t->shape.n) {
		tune_failf("--shape is required: the values of %s's integer "
		      "parameters", t->kname);
		return EXIT_STOPPED;
	}
	/* Where the record goes, checked before a search that may take
	 * hours; the partial record goes next to it (not for a device or a
	 * pipe, which have no "next to"). */
	char buf[512];
	const char *path = tune_record_path(t, buf, sizeof buf);
	if (!tc_check_writable(path)) {
		tune_failf("cannot write the record %s: %s; nothing searched", path,
		      strerror(errno ? errno : EIO));
		return EXIT_STOPPED;
	}
	struct stat st;
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
		t->partial = tune_fmt_alloc("%s.partial", path);
	if (tune_translate_all(t, false) > 0)
		check_all(t);
	tune_save_partial(t, "checked");
	Config *best = time_all(t);
	if (!best) {
		tune_failf("no configuration of %s passed its check; no record "
		      "written", t->kname);
		if (t->partial)
			unlink(t->partial);
		return EXIT_NONE;
	}
	t->wall_s = tilec_now() - t->started;
	json_t *rec = tune_record_json(t, best, tune_shape_json(&t->shape),
				  tune_bucket_json(t, &t->shape),
				  tune_shape_json(t->check_shape.n ? &t->check_shape
							      : &t->shape));
	bool ok = tune_write_json(path, rec);
	json_decref(rec);
	if (!ok) {
		if (t->partial && !t->partial_failed)
			fprintf(stderr, "tilec tune: what was measured is in "
				"%s\n", t->partial);
		return EXIT_STOPPED;
	}
	/* The record has everything the partial one had. */
	if (t->partial)
		unlink(t->partial);
	tune_print_choice(t, best, path);
	return EXIT_OK;
}

/* --check RECORD without --shape: the record's shape and check shape
 * (its integers; a float parameter takes run's default). */
static bool
check_shapes(Tune *t)
{
	TcRecord r;
	TcDiags d;
	tc_diags_init(&d, NULL, NULL, 0);
	d.to_stderr = true;
	bool ok = tc_record_load(&r, t->config, &d);
	static const char *const keys[2] = { "shape", "check_shape" };
	for (int k = 0; ok && k < 2; k++) {
		json_t *o = json_object_get(r.root, keys[k]);
		Shape *s = k ? &t->check_shape : &t->shape;
		const char *name;
		json_t *v;
		if (!json_is_object(o) && k == 0) {
			tc_diag(&d, TC_ERROR,
				tc_json_key_loc(t->config, r.text, &keys[k], 1),
				"key \"%s\": expected an object of the scalar "
				"values tuned for (or give --shape)", keys[k]);
			ok = false;
		}
		json_object_foreach(o, name, v) {
			if (!json_is_integer(v))
				continue;
			char buf[160];
			snprintf(buf, sizeof buf, "%s=%lld", name,
				 (long long)json_integer_value(v));
			if (!tc_is_identifier(name) || !tune_shape_add(s, buf)) {
				const char *kp[2] = { keys[k], name };
				tc_diag(&d, TC_ERROR,
					tc_json_key_loc(t->config, r.text, kp, 2),
					"key \"%s.%s\": not a parameter name",
					keys[k], name);
				ok = false;
				break;
			}
		}
	}
	tc_record_free(&r);
	tc_diags_free(&d);
	if (ok)
		fprintf(stderr, "tilec tune: checking at the record's shape %s "
			"(check shape %s)\n", t->shape.text,
			t->check_shape.n ? t->check_shape.text : t->shape.text);
	return ok;
}

/* --check: whether the record's choice still wins by the margin, said
 * and returned as the exit status. */
static int
check_verdict(const Tune *t, const Config *chosen, const Config *def,
	      bool same)
{
	double need = 1 + t->margin / 100;
	if (chosen->status != ST_OK) {
		printf("STALE: the record's choice %s here (%s)\n",
		       tune_status_names[chosen->status],
		       chosen->reason ? chosen->reason : "");
		return EXIT_NONE;
	}
	if (same) {
		printf("OK: the record's choice is the default; it cannot lose "
		       "to it\n");
		return EXIT_OK;
	}
	if (def->status != ST_OK) {
		printf("OK: the default %s here; the record's choice passes\n",
		       tune_status_names[def->status]);
		return EXIT_OK;
	}
	double ratio = def->final_ms / chosen->final_ms;
	bool wins = ratio >= need;
	printf("%s: the default takes %.3fx the record's choice's time "
	       "(%.4g ms against %.4g ms); the record %s when it takes at "
	       "least %.3fx (--margin %g%%)\n", wins ? "OK" : "STALE", ratio,
	       def->final_ms, chosen->final_ms, wins ? "wins" : "wins only",
	       need, t->margin);
	return wins ? EXIT_OK : EXIT_NONE;
}

/* --config RECORD: the record's choice and the default, checked and timed
 * again here, next to what the record says. */
int
tune_replay(Tune *t)
{
	char arch[32];
	if (!tune_open_device(t, arch, sizeof arch) || !tune_load_program(t))
		return EXIT_STOPPED;
	if (!t->shape.n && t->check && !check_shapes(t))
		return EXIT_STOPPED;
	if (!t->shape.n) {
		tune_failf("--shape is required");
		return EXIT_STOPPED;
	}
	TcOptions opt;
	tc_options_init(&opt, t->target, t->arch);
	TcDiags d;
	tc_diags_init(&d, t->file, t->text, t->len);
	d.to_stderr = true;
	for (int i = 0; i < t->ndefines; i++) {
		opt.define_name[opt.ndefines] = t->define_name[i];
		opt.define_value[opt.ndefines++] = t->define_value[i];
	}
	opt.kernel = t->kname;
	TcArena *a = tc_arena_new();
	bool ok = tc_config_apply(t->config, t->text, t->len, t->device, a,
				  &opt, &d);
	tc_diags_free(&d);
	t->cfg = calloc(2, sizeof *t->cfg);
	if (!ok || !t->cfg) {
		tc_arena_free(a);
		return EXIT_STOPPED;
	}
	Config *chosen = &t->cfg[0], *def = &t->cfg[1];
	bool same = true;
	for (int i = 0; i < t->ntun; i++) {
		chosen->values[i] = def->values[i] = t->tun[i].def;
		for (int j = 0; j < opt.ndefines; j++)
			if (strcmp(opt.define_name[j], t->tun[i].name) == 0)
				chosen->values[i] = opt.define_value[j];
		same &= chosen->values[i] == def->values[i];
		/* Show every value that differs. */
		if (chosen->values[i] != def->values[i])
			t->tun[i].nchoices = t->tun[i].nchoices > 1
						     ? t->tun[i].nchoices
						     : 2;
	}
	tc_arena_free(a);
	t->ncfg = same ? 1 : 2;
	def = same ? chosen : def;
	def->is_default = true;
	t->default_index = same ? 0 : 1;
	for (int i = 0; i < t->ncfg; i++) {
		t->cfg[i].rel_err = -1;
		t->cfg[i].same_as = -1;
	}
	if (tune_translate_all(t, false) > 0)
		check_all(t);
	Config *best = time_all(t);
	if (!best) {
		tune_failf("neither the record's choice nor the default passed");
		return EXIT_NONE;
	}
	TcRecord r;
	TcDiags quiet;
	tc_diags_init(&quiet, NULL, NULL, 0);
	if (t->json) {
		bool def_ok = !same && def->status == ST_OK;
		bool chosen_ok = chosen->status == ST_OK;
		json_t *o = json_object();
		json_object_set_new(o, "replay", json_string(t->config));
		json_object_set_new(o, "kernel", json_string(t->kname));
		json_object_set_new(o, "device", json_string(t->device));
		json_object_set_new(o, "chosen", tune_values_json(t, chosen->values,
							     true));
		json_object_set_new(o, "chosen_status",
				    json_string(tune_status_names[chosen->status]));
		json_object_set_new(o, "chosen_ms",
				    tune_ms_json(chosen_ok, chosen->final_ms));
		json_object_set_new(o, "default_ms", tune_ms_json(def_ok,
							     def->final_ms));
		json_object_set_new(o, "speedup",
				    tune_ms_json(chosen_ok && def_ok,
					    def->final_ms / chosen->final_ms));
		if (tc_record_load(&r, t->config, &quiet))
			json_object_set(o, "recorded",
					json_object_get(r.root, "result"));
		tc_record_free(&r);
		tc_diags_free(&quiet);
		int verdict = chosen_ok ? EXIT_OK : EXIT_NONE;
		if (t->check) {
			bool def_good = same ? chosen_ok : def->status == ST_OK;
			double ratio = def_good && chosen_ok
					       ? def->final_ms / chosen->final_ms
					       : 0;
			bool wins = chosen_ok &&
				    (same || !def_good ||
				     ratio >= 1 + t->margin / 100);
			json_object_set_new(o, "margin_pct", json_real(t->margin));
			json_object_set_new(o, "wins", json_boolean(wins));
			verdict = wins ? EXIT_OK : EXIT_NONE;
		}
		tune_print_json(o);
		return verdict;
	}
	if (tc_record_load(&r, t->config, &quiet)) {
		json_t *res = json_object_get(r.root, "result");
		if (json_object_get(res, "chosen_ms"))
			printf("the record: chosen %.4g ms, default %.4g ms, on "
			       "%s\n", tune_num(res, "chosen_ms"),
			       tune_num(res, "default_ms"),
			       tune_str(r.root, "device"));
	}
	tc_record_free(&r);
	tc_diags_free(&quiet);
	printf("replayed here (%s): the record's choice %.4g ms", t->device,
	       chosen->status == ST_OK ? chosen->final_ms : NAN);
	if (!same && def->status == ST_OK)
		printf(", the default %.4g ms (%.2fx)", def->final_ms,
		       def->final_ms / chosen->final_ms);
	printf("\n");
	if (t->check)
		return check_verdict(t, chosen, def, same);
	return chosen->status == ST_OK ? EXIT_OK : EXIT_NONE;
}

