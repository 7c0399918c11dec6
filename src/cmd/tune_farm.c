/*
 * tune_farm.c - `tilec tune --prepare DIR` and `--finish DIR`: the search
 * split with a machine that has the GPU but not the translator.  Prepare
 * translates and prunes, compiles with NVRTC where it can, and writes
 * each configuration's source, launch manifest and reference data at the
 * check shape; tools/tune_farm.py times them; finish turns its timings
 * into the record.
 */
#include "cmd/tune.h"

/* --- --prepare: configurations for a machine without the translator --------- */

/* Every scalar parameter's value at `shape` as JSON: integers must be
 * given, floats default as in `tilec run` (1e-5 for eps..., else 1). */
static json_t *
resolve_shape(const TcKernel *k, const Shape *shape, TcBuf *err)
{
	json_t *o = json_object();
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		if (v->kind != TC_VAR_SCALAR)
			continue;
		const char *s = NULL;
		for (int j = 0; j < shape->n; j++)
			if (strcmp(shape->name[j], v->name) == 0)
				s = shape->value[j];
		long long n;
		if (tc_dtype_is_float(v->dtype))
			json_object_set_new(o, v->name,
					    json_real(s ? strtod(s, NULL)
						      : strncmp(v->name, "eps", 3) == 0
								? 1e-5
								: 1.0));
		else if (s && tc_opt_integer(s, &n))
			json_object_set_new(o, v->name, json_integer(n));
		else
			tc_buf_printf(err, "%sno integer value for %s", err->len ? "; " : "",
				      v->name);
	}
	return o;
}

/* Store bytes as DIR/data/<hash>.bin once; its name relative to DIR. */
static char *
save_data(const char *dir, const void *data, size_t n)
{
	char hex[65];
	tune_sha256_hex(data, n, hex);
	char *rel = tune_fmt_alloc("data/%.16s.bin", hex);
	char *path = tune_fmt_alloc("%s/%s", dir, rel);
	struct stat st;
	if (stat(path, &st) != 0 || (size_t)st.st_size != n) {
		FILE *f = fopen(path, "wb");
		bool ok = f && fwrite(data, 1, n, f) == n;
		if (f)
			ok = fclose(f) == 0 && ok;
		if (!ok) {
			tune_failf("cannot write %s: %s", path, strerror(errno));
			free(rel);
			rel = NULL;
		}
	}
	free(path);
	return rel;
}

/* The reference at the check shape for configuration c, on a harness
 * without a runtime (harness.c: the bindings, inputs and poison of
 * `tilec run`): inputs and expected outputs written under dir; *check
 * describes them.  *roles and *tol are filled when not NULL.  The first
 * call also notes the value ranges at the tuning shape (t->tune_ranges),
 * which the farm draws its timing inputs from. */
static bool
check_data(Tune *t, const Config *c, const char *dir, json_t **check,
	   json_t **roles, double *tol)
{
	TcHarnessSpec spec = tune_harness_spec(t, c->values, true);
	TcHarness h;
	TcHarnessShape s;
	bool ok = tc_harness_load(&h, &spec);
	const char *where = "";
	if (ok && t->nranges && !t->tune_ranges) {
		where = " (at the tuning shape)";
		tune_harness_shape(t, &t->shape, &s);
		ok = tc_harness_bind(&h, &s);
		t->tune_ranges = ok ? json_object() : NULL;
		for (int i = 0; ok && i < h.nparams; i++) {
			const TcHarnessParam *p = &h.params[i];
			if (!p->ranged)
				continue;
			bool real = tc_dtype_is_float(p->var->dtype);
			json_t *lh = json_array();
			json_array_append_new(lh, real ? json_real(p->lo)
						       : json_integer((json_int_t)p->lo));
			json_array_append_new(lh, real ? json_real(p->hi)
						       : json_integer((json_int_t)p->hi));
			json_object_set_new(t->tune_ranges, p->var->name, lh);
		}
	}
	if (ok) {
		where = " (at the check shape)";
		tune_harness_shape(t, t->check_shape.n ? &t->check_shape
						       : &t->shape, &s);
		ok = tc_harness_bind(&h, &s) &&
		     tc_harness_reference(&h, t->seed_value);
	}
	if (!ok)
		tune_failf("%s%s", h.message ? h.message
					     : "the tile program has errors "
					       "(above)", where);
	json_t *values = json_object(), *inputs = json_object(),
	       *expected = json_object(), *role = json_object();
	for (int i = 0; ok && i < h.nparams; i++) {
		const TcHarnessParam *p = &h.params[i];
		const char *name = p->var->name;
		if (p->var->kind == TC_VAR_SCALAR) {
			json_object_set_new(values, name,
					    tc_dtype_is_float(p->var->dtype)
						    ? json_real(p->value)
						    : json_integer(p->ivalue));
			continue;
		}
		json_object_set_new(role, name,
				    json_string(p->role == TC_HARNESS_IN ? "in"
						: p->role == TC_HARNESS_OUT ? "out"
									    : "inout"));
		/* data holds the inputs as drawn; ref the reference's
		 * results (the same buffer for tensors only read). */
		char *f = (p->role & TC_HARNESS_IN)
				  ? save_data(dir, p->data, p->bytes)
				  : NULL;
		if (f)
			json_object_set_new(inputs, name, json_string(f));
		ok = f || !(p->role & TC_HARNESS_IN);
		free(f);
		f = ok && (p->role & TC_HARNESS_OUT)
			    ? save_data(dir, p->ref, p->bytes)
			    : NULL;
		if (f)
			json_object_set_new(expected, name, json_string(f));
		ok = ok && (f || !(p->role & TC_HARNESS_OUT));
		free(f);
	}
	if (ok) {
		*check = json_object();
		json_object_set_new(*check, "shape", json_incref(values));
		json_object_set_new(*check, "inputs", json_incref(inputs));
		json_object_set_new(*check, "expected", json_incref(expected));
		if (roles)
			*roles = json_incref(role);
		if (tol)
			*tol = h.tol;
	}
	json_decref(values);
	json_decref(inputs);
	json_decref(expected);
	json_decref(role);
	tc_harness_free(&h);
	return ok;
}

/* Compile-only NVRTC, one context per worker. */
static void *
compile_worker(void *arg)
{
	Tune *t = arg;
	tilec_init_error e;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_CUDA,
					       TILEC_DEVICE_NONE, &e);
	for (;;) {
		pthread_mutex_lock(&t->lock);
		while (t->next < t->ncfg && t->cfg[t->next].status != ST_PENDING)
			t->next++;
		int i = t->next < t->ncfg ? t->next++ : -1;
		pthread_mutex_unlock(&t->lock);
		if (i < 0 || !ctx)
			break;
		Config *c = &t->cfg[i];
		tilec_compile_options o;
		tilec_compile_options_init(&o);
		char name[64];
		snprintf(name, sizeof name, "%s.cu", c->id);
		o.name = name;
		o.arch = t->march ? t->march : t->tinfo.arch;
		double t0 = tilec_now();
		tilec_module *m = tilec_compile(ctx, c->source, strlen(c->source),
						&o);
		c->compile_ms = (tilec_now() - t0) * 1e3;
		if (!m) {
			c->status = ST_COMPILE_ERROR;
			c->reason = tune_xstrdup("NVRTC rejected the generated code");
			c->log = tune_xstrdup(tilec_error(ctx));
		} else {
			tilec_module_info info;
			if (tilec_module_get_info(m, &info) == TILEC_OK &&
			    info.path[0])
				c->cubin = tune_xstrdup(info.path);
		}
		tilec_module_free(m);
		pthread_mutex_lock(&t->lock);
		t->done++;
		char *what = m ? tune_fmt_alloc("compiles (%.0f ms)", c->compile_ms)
			       : tune_fmt_alloc("COMPILE ERROR, skipped; the log:");
		tune_progress(t, c, what);
		free(what);
		pthread_mutex_unlock(&t->lock);
	}
	tilec_context_free(ctx);
	return NULL;
}

/* NVRTC over every pending configuration, where NVRTC is available;
 * returns a sentence for the manifest. */
static char *
compile_check(Tune *t)
{
	tilec_init_error e;
	tilec_context *probe = tilec_context_new(TILEC_BACKEND_CUDA,
						 TILEC_DEVICE_NONE, &e);
	if (!probe) {
		fprintf(stderr, "tilec tune: note: not compiling here (%s); "
			"the farm will find compile errors\n", e.message);
		return tune_fmt_alloc("not compiled where prepared: %s", e.message);
	}
	tilec_context_free(probe);
	t->next = t->done = t->todo = 0;
	for (int i = 0; i < t->ncfg; i++)
		t->todo += t->cfg[i].status == ST_PENDING;
	fprintf(stderr, "tilec tune: compiling %d with NVRTC for %s, %d at a "
		"time\n", t->todo, t->march ? t->march : t->tinfo.arch, t->jobs);
	pthread_t th[64];
	int n = t->jobs < 64 ? t->jobs : 64, started = 0;
	for (int i = 0; i < n; i++)
		started += pthread_create(&th[started], NULL, compile_worker, t) == 0;
	if (started == 0)
		compile_worker(t);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	int bad = 0;
	for (int i = 0; i < t->ncfg; i++)
		bad += t->cfg[i].status == ST_COMPILE_ERROR;
	return tune_fmt_alloc("compiled with NVRTC (compile-only) where prepared: "
			 "%d compiled, %d rejected", t->todo - bad, bad);
}

static json_t *
parse_json_text(const char *text)
{
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;
	return j ? j : json_null();
}

/* Write DIR: the sources, manifest.json and the check data. */
int
tune_prepare(Tune *t)
{
	bool cuda = strcmp(t->target, "cuda") == 0;
	if (!cuda && strcmp(t->target, "openmp") != 0) {
		tune_failf("--prepare writes CUDA configurations (for "
			   "tools/tune_farm.py and units) or OpenMP ones (for "
			   "units); use -t cuda or -t openmp");
		return EXIT_STOPPED;
	}
	if (!t->shape.n) {
		tune_failf("--shape is required");
		return EXIT_STOPPED;
	}
	if (!tune_load_program(t) || !tune_enumerate(t))
		return EXIT_STOPPED;
	if (!t->arch && cuda)
		fprintf(stderr, "tilec tune: note: translating for %s (the "
			"default); pass --arch sm_90a for Hopper\n",
			t->tinfo.arch);
	snprintf(t->device, sizeof t->device, "%s", "(the farm's)");
	char *data_dir = tune_fmt_alloc("%s/data", t->prepare);
	if ((mkdir(t->prepare, 0755) != 0 && errno != EEXIST) ||
	    (mkdir(data_dir, 0755) != 0 && errno != EEXIST)) {
		tune_failf("cannot create %s: %s", data_dir, strerror(errno));
		free(data_dir);
		return EXIT_STOPPED;
	}
	free(data_dir);
	tune_translate_all(t, true);
	char *compiled = cuda ? compile_check(t)
			      : tune_xstrdup("not compiled where prepared: each "
					     "unit compiles its configurations");

	/* The check data, one reference per configuration. */
	json_t *roles = NULL;
	double tol = 0;
	int left = 0;
	for (int i = 0; i < t->ncfg; i++)
		left += t->cfg[i].status == ST_PENDING;
	fprintf(stderr, "tilec tune: the reference at %s for %d "
		"configurations\n",
		t->check_shape.n ? t->check_shape.text : t->shape.text, left);
	json_t *configs = json_array(), *excluded = json_array();
	bool ok = true;
	for (int i = 0; ok && i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		if (c->status != ST_PENDING) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_string(c->id));
			json_object_set_new(o, "values",
					    tune_values_json(t, c->values, true));
			json_object_set_new(o, "status",
					    json_string(tune_status_names[c->status]));
			if (c->reason)
				json_object_set_new(o, "reason",
						    json_string(c->reason));
			if (c->log)
				json_object_set_new(o, "log", json_string(c->log));
			if (c->same_as >= 0)
				json_object_set_new(o, "same_code_as",
						    json_string(t->cfg[c->same_as].id));
			if (c->is_default)
				json_object_set_new(o, "default", json_true());
			json_array_append_new(excluded, o);
			continue;
		}
		json_t *check = NULL;
		ok = check_data(t, c, t->prepare, &check, roles ? NULL : &roles,
				&tol);
		if (!ok)
			break;
		char *src_name = tune_fmt_alloc("%s.%s", c->id, cuda ? "cu" : "c");
		char *src_path = tune_fmt_alloc("%s/%s", t->prepare, src_name);
		ok = tune_write_atomic(src_path, c->source, strlen(c->source));
		json_t *o = json_object();
		/* The cubin compiled here, which the farm loads instead of
		 * compiling when its driver takes it. */
		size_t clen = 0;
		char *cubin = c->cubin ? tc_read_file(c->cubin, &clen) : NULL;
		if (cubin) {
			char *name = tune_fmt_alloc("%s.cubin", c->id);
			char *path = tune_fmt_alloc("%s/%s", t->prepare, name);
			if (tune_write_atomic(path, cubin, clen))
				json_object_set_new(o, "cubin", json_string(name));
			free(name);
			free(path);
			free(cubin);
		}
		json_object_set_new(o, "id", json_string(c->id));
		json_object_set_new(o, "values", tune_values_json(t, c->values, true));
		json_object_set_new(o, "source", json_string(src_name));
		json_object_set_new(o, "launch", parse_json_text(c->launch));
		json_object_set_new(o, "check", check);
		if (c->is_default)
			json_object_set_new(o, "default", json_true());
		json_array_append_new(configs, o);
		free(src_name);
		free(src_path);
	}
	const TcKernel *k = NULL;
	for (int i = 0; i < t->prog->kernels.len; i++)
		if (strcmp(((TcKernel *)t->prog->kernels.items[i])->name,
			   t->kname) == 0)
			k = t->prog->kernels.items[i];
	TcBuf err;
	tc_buf_init(&err);
	json_t *shape = resolve_shape(k, &t->shape, &err);
	json_t *cshape = resolve_shape(k, t->check_shape.n ? &t->check_shape
							 : &t->shape,
				       &err);
	if (err.len) {
		tune_failf("--shape: %s", err.data);
		ok = false;
	}
	json_t *m = json_object();
	if (ok) {
		json_object_set_new(m, "format", json_string(PREPARED_FORMAT));
		json_object_set_new(m, "tilec_version", json_string(TILEC_VERSION));
		json_object_set_new(m, "created", tune_now_json());
		json_object_set_new(m, "kernel", json_string(t->kname));
		json_object_set_new(m, "source", json_string(t->file));
		json_object_set_new(m, "source_sha256", json_string(t->sha));
		json_object_set_new(m, "target", json_string(t->tinfo.name));
		json_object_set_new(m, "arch", json_string(t->tinfo.arch));
		json_object_set_new(m, "march", json_string(t->march ? t->march
								    : t->tinfo.arch));
		tune_strip_json(t, m);
		json_object_set_new(m, "shape", json_incref(shape));
		json_object_set_new(m, "shape_bucket", tune_bucket_json(t, &t->shape));
		json_object_set_new(m, "check_shape", json_incref(cshape));
		json_t *tuned = json_array(), *pinned = json_object();
		for (int i = 0; i < t->ntun; i++) {
			if (tune_searched(&t->tun[i]))
				json_array_append_new(tuned, json_string(t->tun[i].name));
			if (t->tun[i].pinned)
				json_object_set_new(pinned, t->tun[i].name,
						    json_integer(t->tun[i].def));
		}
		json_object_set_new(m, "tunables", tuned);
		json_object_set_new(m, "pinned", pinned);
		json_object_set_new(m, "default",
				    tune_values_json(t, t->cfg[t->default_index].values,
						true));
		json_object_set_new(m, "roles", roles ? roles : json_object());
		roles = NULL;
		if (t->nranges) {
			/* The inputs' value ranges: as written, for the
			 * record, and their values at the tuning shape, for
			 * the farm's timing inputs. */
			json_t *ranges = json_array();
			for (int i = 0; i < t->nranges; i++)
				json_array_append_new(
					ranges, json_string(t->range_arg[i]));
			json_object_set_new(m, "ranges", ranges);
			json_object_set_new(m, "value_ranges",
					    t->tune_ranges ? json_incref(
								     t->tune_ranges)
							   : json_object());
		}
		json_object_set_new(m, "tol", json_real(t->tol ? strtod(t->tol, NULL)
							       : tol));
		json_object_set_new(m, "seed", json_integer(t->seed ? strtoll(t->seed, NULL, 10)
								    : 1));
		json_t *meas = json_object();
		json_object_set_new(meas, "warmup", json_integer(t->warmup));
		json_object_set_new(meas, "repeat", json_integer(t->repeat));
		json_object_set_new(meas, "confirm_rounds", json_integer(t->confirm));
		json_object_set_new(meas, "finalists", json_integer(FINALISTS));
		json_object_set_new(meas, "rotate_bytes", json_integer(256ll << 20));
		json_object_set_new(m, "measure", meas);
		json_object_set_new(m, "compile_check", json_string(compiled));
		json_object_set_new(m, "configs", json_incref(configs));
		json_object_set_new(m, "excluded", json_incref(excluded));
		ok = tune_units_write(t, configs, m);
	}
	if (ok) {
		char *path = tune_fmt_alloc("%s/manifest.json", t->prepare);
		ok = tune_write_json(path, m);
		free(path);
	}
	size_t nunits = json_array_size(json_object_get(m, "units"));
	json_decref(m);
	json_decref(shape);
	json_decref(cshape);
	json_decref(roles);
	tc_buf_free(&err);
	free(compiled);
	if (ok && t->json) {
		json_t *o = json_object();
		json_object_set_new(o, "prepared", json_string(t->prepare));
		json_object_set_new(o, "configs",
				    json_integer((json_int_t)json_array_size(
					    configs)));
		json_object_set_new(o, "excluded",
				    json_integer((json_int_t)json_array_size(
					    excluded)));
		tune_print_json(o);
	} else if (ok) {
		printf("prepared %zu configurations in %s (%zu excluded) as %zu "
		       "units; run them\n"
		       "  on Slurm:   sbatch %s/tune.sbatch\n"
		       "  or here:    tilec tune --unit %s --index N   (N in 0 .. "
		       "%zu)\n",
		       json_array_size(configs), t->prepare,
		       json_array_size(excluded), nunits, t->prepare, t->prepare,
		       nunits - 1);
		if (cuda)
			printf("  or without tilec on the GPU machine:\n"
			       "              python3 tools/tune_farm.py %s\n",
			       t->prepare);
		printf("then\n  tilec tune --finish %s%s -o RECORD\n", t->prepare,
		       cuda ? " [--timings FILE]" : "");
	}
	json_decref(configs);
	json_decref(excluded);
	return ok ? EXIT_OK : EXIT_STOPPED;
}

/* --- --finish: the farm's timings into a record --------------------------------- */

static Status
status_from_name(const char *s)
{
	for (int i = 0; i < ST_COUNT; i++)
		if (s && strcmp(s, tune_status_names[i]) == 0)
			return (Status)i;
	return ST_FAILED;
}

static json_t *
load_json(const char *path, char **text_out)
{
	char *text = tc_read_file(path, NULL);
	if (!text) {
		tune_failf("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		fprintf(stderr, "%s:%d:%d: error: malformed JSON: %s\n", path,
			e.line, e.column, e.text);
	if (text_out)
		*text_out = text;
	else
		free(text);
	return j;
}

int
tune_finish(Tune *t)
{
	char *mpath = tune_fmt_alloc("%s/manifest.json", t->finish);
	char *tpath = t->timings ? tune_xstrdup(t->timings)
				 : tune_fmt_alloc("%s/timings.json", t->finish);
	/* Units' results (tune_unit.c) where there are any and no farm
	 * timings file is named; else tools/tune_farm.py's timings. */
	char *rdir = tune_fmt_alloc("%s/results", t->finish);
	struct stat st;
	bool units = !t->timings && stat(rdir, &st) == 0 && S_ISDIR(st.st_mode);
	free(rdir);
	char *mtext = NULL;
	json_t *m = load_json(mpath, &mtext), *tm = NULL;
	int status = EXIT_STOPPED;
	char msha[65] = "";
	if (mtext)
		tune_sha256_hex(mtext, strlen(mtext), msha);
	if (!m)
		goto out;
	if (units) {
		if (tune_merge_units(t) != EXIT_OK)
			goto out;
		/* The units' results stand where the farm's timings would. */
		tm = json_object();
		json_object_set_new(tm, "configs", json_incref(t->unit_results));
		json_object_set_new(tm, "device", json_string(t->device));
		json_object_set_new(tm, "compilers", json_incref(t->compilers));
		json_decref(t->compilers);
		t->compilers = NULL;
	} else if (!(tm = load_json(tpath, NULL))) {
		goto out;
	}
	if (strcmp(tune_str(m, "format"), PREPARED_FORMAT) != 0 ||
	    (!units && strcmp(tune_str(tm, "format"), TIMINGS_FORMAT) != 0)) {
		tune_failf("%s or %s is not what --prepare and tools/tune_farm.py "
		      "write (\"format\": \"%s\", \"%s\")", mpath, tpath,
		      PREPARED_FORMAT, TIMINGS_FORMAT);
		goto out;
	}
	if (!units && strcmp(tune_str(tm, "manifest_sha256"), msha) != 0) {
		tune_failf("%s: key \"manifest_sha256\": the timings are for another "
		      "manifest than %s", tpath, mpath);
		goto out;
	}
	t->kname = tune_str(m, "kernel");
	t->file = tune_str(m, "source");
	snprintf(t->sha, sizeof t->sha, "%s", tune_str(m, "source_sha256"));
	if (!tc_target_init(&t->tinfo, tune_str(m, "target"), tune_str(m, "arch"))) {
		tune_failf("%s: unknown target %s/%s", mpath, tune_str(m, "target"),
		      tune_str(m, "arch"));
		goto out;
	}
	if (strcmp(tune_str(m, "march"), t->tinfo.arch) != 0)
		t->march = tune_str(m, "march");
	t->cpu_strip = tune_strip_from_json(m);
	snprintf(t->device, sizeof t->device, "%s", tune_str(tm, "device"));
	t->compilers = json_incref(json_object_get(tm, "compilers"));
	if (!t->compilers)
		t->compilers = json_object();
	if (!units)
		t->timer = "device events";
	json_t *meas = json_object_get(tm, "measure");
	if (!meas)
		meas = json_object_get(m, "measure");
	t->warmup = (int)tune_num(meas, "warmup");
	t->repeat = (int)tune_num(meas, "repeat");
	t->confirm = (int)tune_num(meas, "confirm_rounds");

	/* The tunables, by name (the manifest keeps them sorted). */
	const char *name;
	json_t *v;
	json_object_foreach(json_object_get(m, "default"), name, v) {
		if (t->ntun == MAX_TUNABLES)
			break;
		Tunable *u = &t->tun[t->ntun++];
		u->name = name;
		u->def = json_integer_value(v);
		u->nchoices = 1;
		u->pinned = json_object_get(json_object_get(m, "pinned"), name) != NULL;
		size_t i;
		json_t *tn;
		json_array_foreach(json_object_get(m, "tunables"), i, tn)
			if (strcmp(json_string_value(tn), name) == 0)
				u->nchoices = 2;
	}

	json_t *configs = json_object_get(m, "configs");
	json_t *excluded = json_object_get(m, "excluded");
	size_t total = json_array_size(configs) + json_array_size(excluded);
	t->cfg = calloc(total + 1, sizeof *t->cfg);
	if (!t->cfg)
		goto out;
	t->default_index = -1;
	json_t *farm = json_object_get(tm, "configs");
	for (size_t pass = 0; pass < 2; pass++) {
		json_t *list = pass == 0 ? configs : excluded;
		size_t i;
		json_t *o;
		json_array_foreach(list, i, o) {
			Config *c = &t->cfg[t->ncfg];
			c->rel_err = -1;
			c->same_as = -1;
			snprintf(c->id, sizeof c->id, "%s", tune_str(o, "id"));
			tune_values_from_json(t, json_object_get(o, "values"),
					      c->values);
			if (json_is_true(json_object_get(o, "default"))) {
				c->is_default = true;
				t->default_index = t->ncfg;
			}
			json_t *f = pass == 0 ? json_object_get(farm, c->id) : o;
			if (!f) {
				c->status = ST_FAILED;
				c->reason = tune_xstrdup("no result from the farm");
				t->ncfg++;
				continue;
			}
			c->status = status_from_name(tune_str(f, "status"));
			if (tune_str(f, "reason")[0])
				c->reason = tune_xstrdup(tune_str(f, "reason"));
			if (c->status == ST_PENDING) {
				/* The farm stopped before deciding. */
				c->status = ST_FAILED;
				free(c->reason);
				c->reason = tune_xstrdup("not finished on the farm");
			}
			if (tune_str(f, "log")[0])
				c->log = tune_xstrdup(tune_str(f, "log"));
			if (json_object_get(f, "max_rel_err"))
				c->rel_err = tune_num(f, "max_rel_err");
			json_t *times = json_object_get(f, "timings_ms");
			size_t j;
			json_t *x;
			json_array_foreach(times, j, x)
				if (c->ntimes < MAX_TIMES)
					c->times[c->ntimes++] = json_number_value(x);
			if (c->status == ST_OK && c->ntimes == 0) {
				c->status = ST_FAILED;
				c->reason = tune_xstrdup("the farm sent no timing");
			}
			c->median_ms = tune_num(f, "median_ms");
			c->min_ms = tune_num(f, "min_ms");
			c->mean_ms = tune_num(f, "mean_ms");
			c->runs = (int)tune_num(f, "runs");
			c->noisy_timings = (int)tune_num(f, "noisy_timings");
			c->input_sets = (int)tune_num(f, "input_sets");
			c->gbps = tune_num(f, "gbps");
			c->gflops = json_object_get(f, "gflops")
					    ? tune_num(f, "gflops")
					    : tune_num(f, "tflops") * 1e3;
			c->final_ms = tune_median(c->times, c->ntimes);
			t->ncfg++;
		}
	}
	/* same_code_as names an id. */
	for (size_t i = 0; i < json_array_size(excluded); i++) {
		const char *to = tune_str(json_array_get(excluded, i), "same_code_as");
		Config *c = &t->cfg[json_array_size(configs) + i];
		for (int j = 0; to[0] && j < t->ncfg; j++)
			if (strcmp(t->cfg[j].id, to) == 0)
				c->same_as = j;
	}
	if (t->default_index < 0) {
		tune_failf("%s names no default configuration", mpath);
		goto out;
	}
	/* Timings that were noisy where they were taken make the record
	 * say so, as a search here does. */
	const Config *noisiest = NULL;
	for (int i = 0; i < t->ncfg; i++) {
		const Config *c = &t->cfg[i];
		if (c->status == ST_OK && tune_is_noisy(c) &&
		    (!noisiest ||
		     tune_timing_spread(c) > tune_timing_spread(noisiest)))
			noisiest = c;
	}
	if (noisiest) {
		TcBuf b;
		tc_buf_init(&b);
		tune_values_text(t, noisiest->values, &b);
		t->noisy = true;
		double lo = INFINITY, hi = 0;
		for (int i = 0; i < noisiest->ntimes; i++) {
			lo = fmin(lo, noisiest->times[i]);
			hi = fmax(hi, noisiest->times[i]);
		}
		fprintf(stderr, "tilec tune: warning: the timings are noisy: %s "
			"timed from %.4g to %.4g ms over %d timings (%d with a "
			"median launch over %.1fx the fastest); the machine that "
			"took them was likely busy\n", b.data, lo, hi,
			noisiest->ntimes, noisiest->noisy_timings, NOISE_RATIO);
		tc_buf_free(&b);
	}
	/* The choice: fastest among those timed again, else among all. */
	const Config *best = tune_best_so_far(t);
	/* The ranges the inputs were drawn with, into the record (strings
	 * of m, which outlives it). */
	json_t *ranges = json_object_get(m, "ranges");
	for (size_t i = 0; i < json_array_size(ranges) &&
			   t->nranges < TC_MAX_DEFINES; i++)
		if (json_string_value(json_array_get(ranges, i)))
			t->range_arg[t->nranges++] =
				json_string_value(json_array_get(ranges, i));
	if (!best) {
		tune_failf("no configuration passed on the farm; no record written");
		status = EXIT_NONE;
		goto out;
	}
	json_t *rec = tune_record_json(t, best,
				  json_incref(json_object_get(m, "shape")),
				  json_incref(json_object_get(m, "shape_bucket")),
				  json_incref(json_object_get(m, "check_shape")));
	if (json_object_get(tm, "anchor"))
		json_object_set_new(rec, "anchor",
				    json_incref(json_object_get(tm, "anchor")));
	json_t *f = json_object();
	json_object_set_new(f, "prepared", json_string(t->finish));
	json_object_set_new(f, "compile_check",
			    json_incref(json_object_get(m, "compile_check")));
	if (units)
		json_object_set_new(f, "units", json_incref(t->unit_summary));
	else
		json_object_set_new(f, "timings_created",
				    json_incref(json_object_get(tm, "created")));
	if (json_is_true(json_object_get(tm, "dry_run"))) {
		json_object_set_new(f, "dry_run", json_true());
		fprintf(stderr, "tilec tune: warning: %s comes from a dry run: "
			"its times are made up\n", tpath);
	}
	json_object_set_new(rec, "farm", f);
	json_t *sum = t->unit_summary;
	if (units && json_object_size(json_object_get(sum, "missing")) +
			     json_object_size(json_object_get(sum, "failed"))) {
		/* A merge from a subset: `--config` warns, as for an
		 * interrupted search. */
		int timed = 0, to_time = (int)json_array_size(configs);
		for (int i = 0; i < t->ncfg; i++)
			timed += t->cfg[i].status == ST_OK;
		json_t *p = json_object();
		json_object_set_new(p, "stage", json_string("units"));
		json_object_set_new(p, "timed", json_integer(timed));
		json_object_set_new(p, "to_time", json_integer(to_time));
		json_object_set_new(p, "rerun", json_incref(json_object_get(sum,
									  "rerun")));
		json_object_set_new(rec, "partial", p);
	}
	char buf[512];
	const char *path = tune_record_path(t, buf, sizeof buf);
	bool ok = tune_write_json(path, rec);
	json_decref(rec);
	if (ok) {
		tune_print_choice(t, best, path);
		status = EXIT_OK;
	}
out:
	json_decref(m);
	json_decref(tm);
	free(mtext);
	free(mpath);
	free(tpath);
	return status;
}

