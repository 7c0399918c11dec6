/*
 * tune_space.c - the search space of `tilec tune`: the program parsed once,
 * its tunables and their choices, the configurations (their cartesian
 * product and the default), what prunes one, and each one's translation
 * (a copy of the parse), kept for the harness.
 */
#include "cmd/tune.h"

/* --- Shapes --------------------------------------------------------------- */

/* Add "M=1,N=2" to a shape; false on a malformed pair. */
bool
tune_shape_add(Shape *s, const char *list)
{
	char *joined = s->text ? tune_fmt_alloc("%s,%s", s->text, list)
			       : tune_xstrdup(list);
	free(s->text);
	s->text = joined;
	const char *p = list;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		if (!eq || eq == p || eq + 1 == p + n || s->n == 64) {
			tune_failf("--shape: expected NAME=VALUE,..., got '%.*s'",
			      (int)n, p);
			return false;
		}
		s->name[s->n] = strndup(p, (size_t)(eq - p));
		s->value[s->n] = strndup(eq + 1, (size_t)(p + n - eq - 1));
		s->n++;
		p += n + (comma ? 1 : 0);
	}
	return true;
}

void
tune_shape_free(Shape *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->name[i]);
		free(s->value[i]);
	}
	free(s->text);
	memset(s, 0, sizeof *s);
}

/* The shape as JSON numbers ({"M": 1000, "eps": 1e-05}); later pairs
 * win, as in `tilec run`. */
json_t *
tune_shape_json(const Shape *s)
{
	json_t *o = json_object();
	for (int i = 0; i < s->n; i++) {
		long long v;
		if (tc_opt_integer(s->value[i], &v))
			json_object_set_new(o, s->name[i], json_integer(v));
		else
			json_object_set_new(o, s->name[i],
					    json_real(strtod(s->value[i], NULL)));
	}
	return o;
}

/* The shape bucket: each of the kernel's integer scalars in the shape
 * rounded up to a power of two, 1 for a value below 1 (docs/tuning.md,
 * "Shape dispatch": the shapes a record is meant for).  Float scalars
 * stay out, whatever their value: the dispatch compares integers. */
json_t *
tune_bucket_json(const Tune *t, const Shape *s)
{
	const TcKernel *k = NULL;
	for (int i = 0; t->prog && i < t->prog->kernels.len; i++)
		if (strcmp(((TcKernel *)t->prog->kernels.items[i])->name,
			   t->kname) == 0)
			k = t->prog->kernels.items[i];
	json_t *o = json_object();
	for (int i = 0; k && i < s->n; i++) {
		const TcVar *p = NULL;
		for (int j = 0; j < k->params.len; j++) {
			const TcVar *v = k->params.items[j];
			if (v->kind == TC_VAR_SCALAR &&
			    tc_dtype_is_int(v->dtype) &&
			    strcmp(v->name, s->name[i]) == 0)
				p = v;
		}
		long long v, b = 1;
		if (!p || !tc_opt_integer(s->value[i], &v))
			continue;
		while (b < v && b < (1ll << 62))
			b <<= 1;
		json_object_set_new(o, s->name[i], json_integer(b));
	}
	return o;
}

/* --- The program and its tunables ------------------------------------------ */

/* Parse the program (no target passes), pick the kernel, collect the
 * tunables with their choices. */
bool
tune_load_program(Tune *t)
{
	if (!(t->text = tc_read_file(t->file, &t->len))) {
		tune_failf("cannot read %s: %s", t->file, strerror(errno));
		return false;
	}
	tune_sha256_hex(t->text, t->len, t->sha);
	TcOptions opt;
	if (!tc_options_init(&opt, t->target, t->arch)) {
		TcBuf why;
		tc_buf_init(&why);
		tc_target_explain(&why, t->target, t->arch);
		tune_failf("%s", why.data);
		tc_buf_free(&why);
		return false;
	}
	t->tinfo = opt.target;
	TcDiags d;
	tc_diags_init(&d, t->file, t->text, t->len);
	d.to_stderr = true;
	t->arena = tc_arena_new();
	t->prog = tc_parse(t->arena, t->file, t->text, &opt, &d);
	bool ok = t->prog && d.errors == 0;
	tc_diags_free(&d);
	if (!ok)
		return false;
	TcBuf names;
	tc_buf_init(&names);
	for (int i = 0; i < t->prog->kernels.len; i++) {
		const TcKernel *k = t->prog->kernels.items[i];
		tc_buf_printf(&names, "%s%s", i ? ", " : "", k->name);
		if (t->kernel ? strcmp(k->name, t->kernel) == 0
			      : t->prog->kernels.len == 1)
			t->kname = k->name;
	}
	if (!t->kname) {
		if (t->kernel)
			tune_failf("%s has no kernel named '%s' (kernels: %s)",
			      t->file, t->kernel, names.data ? names.data : "");
		else
			tune_failf("%s has %d kernels (%s); pick one with --kernel",
			      t->file, t->prog->kernels.len,
			      names.data ? names.data : "none");
	}
	tc_buf_free(&names);
	if (!t->kname)
		return false;

	if (t->prog->tunables.len > MAX_TUNABLES) {
		tune_failf("%s has %d tunables; tilec tune handles %d", t->file,
		      t->prog->tunables.len, MAX_TUNABLES);
		return false;
	}
	for (int i = 0; i < t->prog->tunables.len; i++) {
		const TcVar *v = t->prog->tunables.items[i];
		Tunable *u = &t->tun[t->ntun++];
		u->name = v->name;
		u->def = v->def_value;
		for (int j = 0; j < v->nchoices && j < MAX_CHOICES; j++)
			u->choices[u->nchoices++] = v->choices[j];
		if (u->nchoices == 0)
			u->choices[u->nchoices++] = u->def;
	}
	/* -D pins; --choices replaces a list. */
	for (int i = 0; i < t->ndefines; i++) {
		Tunable *u = NULL;
		for (int j = 0; j < t->ntun; j++)
			if (strcmp(t->tun[j].name, t->define_name[i]) == 0)
				u = &t->tun[j];
		if (!u) {
			tune_failf("-D %s: %s has no tunable of that name",
			      t->define_name[i], t->file);
			return false;
		}
		u->def = t->define_value[i];
		u->choices[0] = u->def;
		u->nchoices = 1;
		u->pinned = true;
	}
	for (int i = 0; i < t->nchoice_args; i++) {
		const char *arg = t->choice_arg[i];
		const char *eq = strchr(arg, '=');
		Tunable *u = NULL;
		for (int j = 0; eq && j < t->ntun; j++)
			if (strlen(t->tun[j].name) == (size_t)(eq - arg) &&
			    strncmp(t->tun[j].name, arg, (size_t)(eq - arg)) == 0)
				u = &t->tun[j];
		if (!u) {
			tune_failf("--choices %s: expected NAME=V,V,... naming a "
			      "tunable of %s", arg, t->file);
			return false;
		}
		if (u->pinned) {
			tune_failf("--choices %s: %s is pinned with -D", arg, u->name);
			return false;
		}
		u->nchoices = 0;
		char *list = tune_xstrdup(eq + 1);
		bool good = true;
		for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			long long v;
			if (!tc_opt_integer(tok, &v) || u->nchoices == MAX_CHOICES) {
				good = false;
				break;
			}
			u->choices[u->nchoices++] = v;
		}
		free(list);
		if (!good || u->nchoices == 0) {
			tune_failf("--choices %s: expected at most %d integers", arg,
			      MAX_CHOICES);
			return false;
		}
	}
	return true;
}

/* The cartesian product of the choices (the last tunable varying
 * fastest), and the default if the product lacks it. */
bool
tune_enumerate(Tune *t)
{
	long long total = 1;
	for (int i = 0; i < t->ntun; i++) {
		total *= t->tun[i].nchoices;
		if (total > t->max_configs)
			break;
	}
	if (total > t->max_configs) {
		tune_failf("the choices make more than %d configurations; narrow "
		      "them with --choices or -D, or raise --max-configs",
		      t->max_configs);
		return false;
	}
	t->cfg = calloc((size_t)total + 1, sizeof *t->cfg);
	if (!t->cfg) {
		tune_failf("out of memory");
		return false;
	}
	t->default_index = -1;
	for (long long n = 0; n < total; n++) {
		Config *c = &t->cfg[t->ncfg++];
		long long rest = n;
		bool def = true;
		for (int i = t->ntun - 1; i >= 0; i--) {
			const Tunable *u = &t->tun[i];
			c->values[i] = u->choices[rest % u->nchoices];
			rest /= u->nchoices;
			def &= c->values[i] == u->def;
		}
		if (def && t->default_index < 0) {
			c->is_default = true;
			t->default_index = (int)n;
		}
	}
	if (t->default_index < 0) {
		Config *c = &t->cfg[t->ncfg];
		for (int i = 0; i < t->ntun; i++)
			c->values[i] = t->tun[i].def;
		c->is_default = true;
		t->default_index = t->ncfg++;
	}
	for (int i = 0; i < t->ncfg; i++) {
		t->cfg[i].rel_err = -1;
		t->cfg[i].same_as = -1;
		snprintf(t->cfg[i].id, sizeof t->cfg[i].id, "c%03d", i);
	}
	return true;
}

/* Options translating configuration c. */
void
tune_config_options(const Tune *t, const Config *c, TcOptions *opt)
{
	tc_options_init(opt, t->target, t->arch);
	opt->cpu_strip = t->cpu_strip;
	opt->kernel = t->kname;
	opt->ndefines = t->ntun;
	for (int i = 0; i < t->ntun; i++) {
		opt->define_name[i] = t->tun[i].name;
		opt->define_value[i] = c->values[i];
		opt->define_loc[i] = (TcLoc){ "<tune>", 0, 0 };
	}
}

/* The harness spec for the configuration of values (one per tunable, in
 * declaration order): the program as parsed, the target, the kernel and
 * the values bound.  A reference-only spec (the farm's check data, made
 * here without a runtime) prints its diagnostics; the others (the search's
 * harnesses, a work unit's) compile with the JIT compiler and device of
 * the command line and keep their diagnostics in the harness, for the
 * record. */
TcHarnessSpec
tune_harness_spec(const Tune *t, const long long *values, bool reference_only)
{
	TcHarnessSpec spec = {
		.file = t->file,
		.text = t->text,
		.len = t->len,
		.target = t->target,
		.arch = t->arch,
		.kernel = t->kname,
		.parsed = t->prog,
		.ndefines = t->ntun,
		.cpu_strip = t->cpu_strip,
	};
	if (reference_only) {
		spec.no_runtime = true;
	} else {
		spec.march = t->march;
		spec.cc = t->cc;
		spec.device = t->device_index;
		spec.quiet = true;
	}
	for (int i = 0; i < t->ntun; i++) {
		spec.define_name[i] = t->tun[i].name;
		spec.define_value[i] = values[i];
	}
	return spec;
}

/* A configuration's "values" object ({"BLOCK_M": 64, ...}, as
 * tune_values_json writes it) as values per tunable, a tunable it leaves
 * out at its default.  NULL, or the first name in o that is no tunable
 * of the program. */
const char *
tune_values_from_json(const Tune *t, json_t *o, long long *values)
{
	for (int i = 0; i < t->ntun; i++) {
		json_t *v = json_object_get(o, t->tun[i].name);
		values[i] = v ? json_integer_value(v) : t->tun[i].def;
	}
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		int i = 0;
		while (i < t->ntun && strcmp(t->tun[i].name, key) != 0)
			i++;
		if (i == t->ntun)
			return key;
	}
	return NULL;
}

/* Free the translation translate_all kept for c. */
void
tune_gen_free(Config *c)
{
	if (c->gen_arena)
		tc_arena_free(c->gen_arena);
	c->gen_arena = NULL;
	c->gen_kernel = NULL;
	tc_buf_free(&c->gen_src);
}

/* --- Pruning ------------------------------------------------------------- */

/* 32-bit registers one thread needs for the kernel's register fragments
 * and local buffers, all live at once; names them in `what`. */
static long long
fragment_registers(const TcKernel *k, long long threads, TcBuf *what)
{
	long long regs = 0;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind != TC_VAR_BUFFER)
			continue;
		bool in_regs = v->scope == TC_SCOPE_LOCAL ||
			       (v->scope == TC_SCOPE_FRAGMENT &&
				v->layout.kind != TC_LAYOUT_NONE &&
				v->layout.kind != TC_LAYOUT_SMEM);
		if (!in_regs)
			continue;
		long long elems = 1, e;
		for (int j = 0; j < v->rank; j++)
			elems *= tc_expr_const(v->shape[j], &e) ? e : 1;
		if (v->scope == TC_SCOPE_FRAGMENT)
			elems = (elems + threads - 1) / threads;
		long long r = (elems * tc_dtype_bits(v->dtype) + 31) / 32;
		regs += r;
		tc_buf_printf(what, "%s%s %lld", what->len ? ", " : "", v->name,
			      r);
	}
	return regs;
}

/* Why the translated kernel cannot run on the target, or NULL. */
static char *
prune_reason(const Tune *t, const TcKernel *k)
{
	if (!t->tinfo.simt)
		return NULL;
	long long threads = tc_abi_threads(k, &t->tinfo);
	if (threads > t->tinfo.max_threads)
		return tune_fmt_alloc("threads: %lld per block; %s allows %d",
				 threads, t->tinfo.arch, t->tinfo.max_threads);
	if (t->device_smem && (size_t)k->smem_bytes > t->device_smem)
		return tune_fmt_alloc("shared memory: %lld bytes per block; %s "
				 "allows %zu", k->smem_bytes, t->device,
				 t->device_smem);
	if (t->register_limit > 0) {
		TcBuf what;
		tc_buf_init(&what);
		long long regs = fragment_registers(k, threads, &what);
		char *r = NULL;
		if (regs > t->register_limit)
			r = tune_fmt_alloc("registers: the fragments need %lld 32-bit "
				      "registers per thread (%s); a thread has "
				      "%d", regs, what.data, t->register_limit);
		tc_buf_free(&what);
		if (r)
			return r;
	}
	return NULL;
}

/* The code without comments, and without the definitions of tunables it
 * never names: two configurations with the same normal form compile to
 * the same thing. */
static char *
normal_form(const Tune *t, const char *src)
{
	TcBuf b;
	tc_buf_init(&b);
	for (const char *p = src; *p;) {
		if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else if (*p == '"' || *p == '\'') {
			const char *q = p + 1;
			while (*q && *q != *p)
				q += q[0] == '\\' && q[1] ? 2 : 1;
			q += *q ? 1 : 0;
			tc_buf_printf(&b, "%.*s", (int)(q - p), p);
			p = q;
		} else {
			const char *q = p;
			while (*q && !(q[0] == '/' && (q[1] == '/' || q[1] == '*')) &&
			       *q != '"' && *q != '\'')
				q++;
			tc_buf_printf(&b, "%.*s", (int)(q - p), p);
			p = q;
		}
	}
	char *code = tc_buf_take(&b);
	if (!code)
		return tune_xstrdup("");
	for (int i = 0; i < t->ntun; i++) {
		const char *name = t->tun[i].name;
		size_t n = strlen(name);
		int uses = 0, defs = 0;
		for (char *q = strstr(code, name); q; q = strstr(q + n, name)) {
			bool word = (q == code || !(q[-1] == '_' ||
						    (q[-1] >= '0' && q[-1] <= '9') ||
						    ((q[-1] | 32) >= 'a' &&
						     (q[-1] | 32) <= 'z'))) &&
				    !(q[n] == '_' || (q[n] >= '0' && q[n] <= '9') ||
				      ((q[n] | 32) >= 'a' && (q[n] | 32) <= 'z'));
			if (!word)
				continue;
			uses++;
			const char *r = q + n;
			while (*r == ' ')
				r++;
			if (*r == '=' && r[1] != '=')
				defs++;
		}
		if (uses != defs)
			continue;
		/* Only defined: blank out "NAME = VALUE". */
		for (char *q = strstr(code, name); q; q = strstr(q + 1, name)) {
			char *r = q + n;
			while (*r == ' ')
				r++;
			if (*r != '=')
				continue;
			r++;
			while (*r == ' ')
				r++;
			if (*r == '-')
				r++;
			while (*r >= '0' && *r <= '9')
				r++;
			memset(q, ' ', (size_t)(r - q));
		}
	}
	return code;
}

/* How many tunables c has at their default. */
static int
nearness(const Tune *t, const Config *c)
{
	int n = 0;
	for (int i = 0; i < t->ntun; i++)
		n += c->values[i] == t->tun[i].def;
	return n;
}

/* Translate every configuration: prune, find duplicates, keep the source
 * and launch manifest when asked.  Returns the number left to compile. */
int
tune_translate_all(Tune *t, bool keep_source)
{
	int left = 0, pruned = 0, same = 0;
	for (int i = 0; i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		TcOptions opt;
		tune_config_options(t, c, &opt);
		opt.standalone = keep_source;
		TcDiags d;
		tc_diags_init(&d, t->file, t->text, t->len);
		TcArena *a = tc_arena_new();
		TcBuf src;
		tc_buf_init(&src);
		double t0 = tilec_now();
		/* A copy of the one parse, scheduled for c. */
		TcProgram *p = tc_program_clone(a, t->prog);
		bool ok = tc_translate_parsed(a, p, &opt, &d, &src) &&
			  d.errors == 0;
		double translate_s = tilec_now() - t0;
		const TcKernel *k = NULL;
		for (int j = 0; ok && j < p->kernels.len; j++)
			if (strcmp(((TcKernel *)p->kernels.items[j])->name,
				   t->kname) == 0)
				k = p->kernels.items[j];
		if (!ok || !k) {
			/* The translator's first word on it. */
			const char *msg = d.text.data ? d.text.data : "";
			const char *e = strstr(msg, "error: ");
			e = e ? e + 7 : msg;
			c->reason = strndup(e, strcspn(e, "\n"));
			c->status = ST_PRUNED;
		} else if ((c->reason = prune_reason(t, k))) {
			c->status = ST_PRUNED;
		} else {
			c->norm = normal_form(t, src.data ? src.data : "");
			for (int j = 0; j < i && !t->no_prune_dupes; j++) {
				Config *o = &t->cfg[j];
				if (o->norm && o->status == ST_PENDING &&
				    strcmp(o->norm, c->norm) == 0) {
					c->status = ST_SAME_CODE;
					c->same_as = j;
					break;
				}
			}
		}
		/* Of configurations with the same code, the one measured is
		 * the one nearest the default (the default itself, which
		 * the comparison needs by name): the record then changes
		 * no value it need not. */
		if (c->status == ST_SAME_CODE &&
		    nearness(t, c) > nearness(t, &t->cfg[c->same_as])) {
			Config *o = &t->cfg[c->same_as];
			o->status = ST_SAME_CODE;
			o->same_as = i;
			c->status = ST_PENDING;
			c->same_as = -1;
			free(o->source);
			free(o->launch);
			o->source = o->launch = NULL;
			tune_gen_free(o);
		}
		if (keep_source && c->status == ST_PENDING) {
			c->source = tc_buf_take(&src);
			TcBuf l;
			tc_buf_init(&l);
			tc_launch_json(p, k, &opt.target, &l);
			c->launch = tc_buf_take(&l);
		} else if (c->status == ST_PENDING) {
			/* Kept for the harness, which then only compiles. */
			c->gen_arena = a;
			c->gen_kernel = k;
			c->gen_src = src;
			c->translate_s = translate_s;
			a = NULL;
			tc_buf_init(&src);
		}
		tc_buf_free(&src);
		if (a)
			tc_arena_free(a);
		tc_diags_free(&d);
	}
	for (int i = 0; i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		/* Point duplicates at the one that is measured. */
		while (c->status == ST_SAME_CODE &&
		       t->cfg[c->same_as].status == ST_SAME_CODE)
			c->same_as = t->cfg[c->same_as].same_as;
		left += c->status == ST_PENDING;
		pruned += c->status == ST_PRUNED;
		same += c->status == ST_SAME_CODE;
	}
	fprintf(stderr, "tilec tune: %s, kernel %s for %s/%s: %d "
		"configurations, %d pruned, %d with the same code as another, "
		"%d to compile\n", t->file, t->kname, t->tinfo.name,
		t->tinfo.arch, t->ncfg, pruned, same, left);
	for (int i = 0; i < t->ncfg; i++) {
		const Config *c = &t->cfg[i];
		if (c->status != ST_PRUNED)
			continue;
		TcBuf v;
		tc_buf_init(&v);
		tune_values_text(t, c->values, &v);
		fprintf(stderr, "  pruned %s: %s\n", v.data, c->reason);
		tc_buf_free(&v);
	}
	return left;
}

