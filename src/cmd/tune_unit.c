/*
 * tune_unit.c - a prepared search as work units for a batch scheduler
 * (docs/tuning.md, "Work units"): --prepare groups the configurations
 * into units and writes a Slurm array script beside the manifest; `tilec
 * tune --unit DIR` runs one unit (the array task's), each configuration
 * in a child process with a timeout, checked against the unit's reference
 * data and timed, and writes the unit's result atomically; --finish
 * merges the results there are into a record and names what is missing.
 *
 * Everything a unit reads (the manifest, reference data, an earlier
 * result) comes from a shared directory other jobs write to: it is
 * checked field by field, and a result that does not pass is a failed
 * unit, never a timing.
 */
#include "cmd/tune.h"

#include <limits.h>
#include <poll.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/wait.h>

/* The most units one manifest has (Slurm's default MaxArraySize is
 * 1001: task ids 0 .. 1000). */
#define MAX_UNITS 1000

/* --- Located problems in the JSON documents units share --------------------- */

/* A JSON document read from the prepared directory, and where its
 * problems go. */
typedef struct Doc {
	const char *path;
	char *text;
	json_t *root;
	TcDiags d;           /* rendered problems (d.text), and stderr */
} Doc;

static void
doc_free(Doc *j)
{
	json_decref(j->root);
	free(j->text);
	tc_diags_free(&j->d);
	memset(j, 0, sizeof *j);
}

/* A problem at the member named by the keys (outermost first; located
 * at the innermost one found), as an error or a warning. */
static bool doc_bad(Doc *j, TcSeverity sev, const char *const *keys, int n,
		    const char *fmt, ...) TC_PRINTF(5, 6);

static bool
doc_bad(Doc *j, TcSeverity sev, const char *const *keys, int n,
	const char *fmt, ...)
{
	TcLoc loc = { j->path, 0, 0 };
	for (int k = n; k > 0 && loc.line == 0; k--)
		loc = tc_json_key_loc(j->path, j->text ? j->text : "", keys, k);
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(&j->d, sev, loc, fmt, ap);
	va_end(ap);
	return false;
}

/* Read and parse path; to_stderr: its problems are printed (else only
 * kept in j->d.text). */
static bool
doc_load(Doc *j, const char *path, bool to_stderr, TcSeverity sev)
{
	memset(j, 0, sizeof *j);
	j->path = path;
	size_t len = 0;
	j->text = tc_read_file(path, &len);
	tc_diags_init(&j->d, path, j->text, j->text ? len : 0);
	j->d.to_stderr = to_stderr;
	if (!j->text) {
		tc_diag(&j->d, sev, (TcLoc){ path, 0, 0 }, "cannot read it: %s",
			strerror(errno));
		return false;
	}
	if (strlen(j->text) != len)
		return doc_bad(j, sev, NULL, 0, "a NUL byte in the JSON text");
	json_error_t e;
	j->root = json_loads(j->text, JSON_REJECT_DUPLICATES, &e);
	if (!j->root) {
		tc_diag(&j->d, sev, (TcLoc){ path, e.line, e.column },
			"malformed JSON: %s", e.text);
		return false;
	}
	if (!json_is_object(j->root))
		return doc_bad(j, sev, NULL, 0, "expected a JSON object");
	return true;
}

/* The first line of what was reported, for a reason in a record. */
static char *
doc_reason(const Doc *j)
{
	const char *s = j->d.text.data ? j->d.text.data : "unreadable";
	return tune_fmt_alloc("%.*s", (int)strcspn(s, "\n"), s);
}

static bool
is_name(const char *s, char lead)
{
	if (!s || s[0] != lead || !s[1] || strlen(s) > 12)
		return false;
	for (const char *p = s + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* A file name relative to the prepared directory: under `sub/`, one
 * component of [A-Za-z0-9._-], not starting with a dot. */
static bool
is_rel_file(const char *s, const char *sub)
{
	size_t n = strlen(sub);
	if (!s || strncmp(s, sub, n) != 0 || s[n] != '/' || !s[n + 1] ||
	    s[n + 1] == '.')
		return false;
	for (const char *p = s + n + 1; *p; p++)
		if (!(*p == '.' || *p == '_' || *p == '-' ||
		      (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

static bool
is_finite_number(json_t *v, double lo)
{
	return json_is_number(v) && isfinite(json_number_value(v)) &&
	       json_number_value(v) >= lo;
}

/* --- The manifest's units ------------------------------------------------------ */

/* The manifest as units read it: checked once, every field the unit
 * runner and the merge use. */
typedef struct Units {
	Doc m;
	char sha[65];           /* of the manifest's text */
	json_t *configs;        /* m's "configs" */
	json_t *units;          /* m's "units" */
	double config_timeout;  /* seconds per configuration */
} Units;

/* The configuration of `configs` named id, or NULL. */
static json_t *
config_by_id(json_t *configs, const char *id)
{
	size_t i;
	json_t *c;
	json_array_foreach(configs, i, c)
		if (strcmp(tune_str(c, "id"), id) == 0)
			return c;
	return NULL;
}

/* Check one configuration of the manifest. */
static bool
check_config(Units *u, json_t *c)
{
	static const char *const ck[] = { "configs", "check" };
	const char *id = json_string_value(json_object_get(c, "id"));
	if (!json_is_object(c) || !is_name(id, 'c'))
		return doc_bad(&u->m, TC_ERROR, ck, 1, "key \"configs\": each "
			       "needs an \"id\" c<digits>");
	const char *key;
	json_t *v;
	json_t *values = json_object_get(c, "values");
	if (!json_is_object(values))
		return doc_bad(&u->m, TC_ERROR, ck, 1, "configuration %s: "
			       "\"values\" must be an object of integers", id);
	json_object_foreach(values, key, v)
		if (!json_is_integer(v) || !tc_is_identifier(key))
			return doc_bad(&u->m, TC_ERROR, ck, 1, "configuration "
				       "%s: \"values.%s\" must be an integer "
				       "tunable", id, key);
	json_t *check = json_object_get(c, "check");
	for (int k = 0; k < 2; k++) {
		const char *what = k ? "expected" : "inputs";
		json_t *files = json_object_get(check, what);
		if (!json_is_object(files))
			return doc_bad(&u->m, TC_ERROR, ck, 2, "configuration "
				       "%s: \"check.%s\" must be an object",
				       id, what);
		json_object_foreach(files, key, v)
			if (!is_rel_file(json_string_value(v), "data"))
				return doc_bad(&u->m, TC_ERROR, ck, 2,
					       "configuration %s: \"check.%s.%s\" "
					       "must name a file data/NAME",
					       id, what, key);
	}
	json_t *shape = json_object_get(check, "shape");
	if (!json_is_object(shape))
		return doc_bad(&u->m, TC_ERROR, ck, 2, "configuration %s: "
			       "\"check.shape\" must be an object", id);
	return true;
}

/* Read DIR/manifest.json and check the fields units use. */
static bool
units_load(Units *u, const char *dir, bool to_stderr)
{
	memset(u, 0, sizeof *u);
	char *path = tune_fmt_alloc("%s/manifest.json", dir);
	Doc *m = &u->m;
	/* m->path is path, freed by units_free. */
	bool ok = doc_load(m, path, to_stderr, TC_ERROR);
	if (!ok)
		return false;
	tune_sha256_hex(m->text, strlen(m->text), u->sha);
	static const char *const fk[] = { "format" }, *const uk[] = { "units" },
				 *const ck[] = { "configs" },
				 *const tk[] = { "unit", "config_timeout_s" };
	if (strcmp(tune_str(m->root, "format"), PREPARED_FORMAT) != 0)
		return doc_bad(m, TC_ERROR, fk, 1, "key \"format\": expected "
			       "\"%s\" (what tilec tune --prepare writes)",
			       PREPARED_FORMAT);
	static const char *const str_keys[] = { "kernel", "source",
		"source_sha256", "target", "arch", "march", "program" };
	for (size_t i = 0; i < sizeof str_keys / sizeof *str_keys; i++)
		if (!json_is_string(json_object_get(m->root, str_keys[i])))
			return doc_bad(m, TC_ERROR, &str_keys[i], 1, "key \"%s\": "
				       "expected a string%s", str_keys[i],
				       i == 6 ? " (a manifest written before "
						"units: prepare it again)"
					      : "");
	if (!is_rel_file(tune_str(m->root, "program"), "src"))
		return doc_bad(m, TC_ERROR, (const char *const[]){ "program" },
			       1, "key \"program\": expected src/NAME");
	static const char *const obj_keys[] = { "shape", "check_shape",
		"default", "measure" };
	for (size_t i = 0; i < sizeof obj_keys / sizeof *obj_keys; i++)
		if (!json_is_object(json_object_get(m->root, obj_keys[i])))
			return doc_bad(m, TC_ERROR, &obj_keys[i], 1, "key \"%s\": "
				       "expected an object", obj_keys[i]);
	static const char *const meas[] = { "warmup", "repeat",
		"confirm_rounds" };
	json_t *mo = json_object_get(m->root, "measure");
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_object_get(mo, meas[i]);
		const char *kp[] = { "measure", meas[i] };
		if (!json_is_integer(v) || json_integer_value(v) < (i == 1) ||
		    json_integer_value(v) > (i == 2 ? MAX_TIMES - 1 : 1000000))
			return doc_bad(m, TC_ERROR, kp, 2, "key \"measure.%s\": "
				       "expected an integer in range", meas[i]);
	}
	if (!is_finite_number(json_object_get(m->root, "tol"), 0))
		return doc_bad(m, TC_ERROR, (const char *const[]){ "tol" }, 1,
			       "key \"tol\": expected a number >= 0");
	json_t *ranges = json_object_get(m->root, "ranges");
	for (size_t i = 0; ranges && i < json_array_size(ranges) + 1; i++)
		if (!json_is_array(ranges) ||
		    (i < json_array_size(ranges) &&
		     !json_is_string(json_array_get(ranges, i))))
			return doc_bad(m, TC_ERROR,
				       (const char *const[]){ "ranges" }, 1,
				       "key \"ranges\": expected strings");
	json_t *timeout = json_object_get(json_object_get(m->root, "unit"),
					  "config_timeout_s");
	if (!is_finite_number(timeout, 1) || json_number_value(timeout) > 86400)
		return doc_bad(m, TC_ERROR, tk, 2, "key \"unit.config_timeout_s\":"
			       " expected seconds in 1 .. 86400");
	u->config_timeout = json_number_value(timeout);
	u->configs = json_object_get(m->root, "configs");
	if (!json_is_array(u->configs))
		return doc_bad(m, TC_ERROR, ck, 1, "key \"configs\": expected "
			       "an array");
	size_t i;
	json_t *c;
	json_array_foreach(u->configs, i, c)
		if (!check_config(u, c))
			return false;
	u->units = json_object_get(m->root, "units");
	if (!json_is_array(u->units) || json_array_size(u->units) == 0 ||
	    json_array_size(u->units) > MAX_UNITS)
		return doc_bad(m, TC_ERROR, uk, 1, "key \"units\": expected 1 "
			       "to %d units", MAX_UNITS);
	json_t *seen = json_object();
	json_array_foreach(u->units, i, c) {
		const char *id = json_string_value(json_object_get(c, "id"));
		char want[32];
		snprintf(want, sizeof want, "results/%s.json", id ? id : "");
		json_t *list = json_object_get(c, "configs");
		ok = is_name(id, 'u') && json_is_array(list) &&
		     json_array_size(list) > 0 &&
		     strcmp(tune_str(c, "result"), want) == 0;
		if (!ok) {
			doc_bad(m, TC_ERROR, uk, 1, "key \"units\": unit %zu needs "
				"an \"id\" u<digits>, \"configs\" and \"result\" "
				"results/ID.json", i);
			break;
		}
		size_t j;
		json_t *cid;
		json_array_foreach(list, j, cid) {
			const char *s = json_string_value(cid);
			if (!s || !config_by_id(u->configs, s) ||
			    json_object_get(seen, s)) {
				ok = doc_bad(m, TC_ERROR, uk, 1, "key \"units\": "
					     "unit %s: \"%s\" is no configuration "
					     "of the manifest, or in two units",
					     id, s ? s : "(not a string)");
				break;
			}
			json_object_set_new(seen, s, json_true());
		}
		if (!ok)
			break;
	}
	json_decref(seen);
	return ok;
}

static void
units_free(Units *u)
{
	char *path = (char *)u->m.path;
	doc_free(&u->m);
	free(path);
}

/* --- A unit's result ------------------------------------------------------------ */

#define UNIT_RESULT_FORMAT "tilec-tune-unit-result/1"

/* Check the result document of unit (its manifest entry) against the
 * manifest: every field the merge takes, every configuration of the unit
 * and no other.  Problems go to r->d as warnings. */
static bool
result_check(Units *u, json_t *unit, Doc *r)
{
	static const char *const fk[] = { "format" }, *const mk[] = {
		"manifest_sha256" }, *const uk[] = { "unit" }, *const dk[] = {
		"device" }, *const ck[] = { "configs" };
	json_t *o = r->root;
	if (strcmp(tune_str(o, "format"), UNIT_RESULT_FORMAT) != 0)
		return doc_bad(r, TC_WARNING, fk, 1, "key \"format\": expected "
			       "\"%s\"", UNIT_RESULT_FORMAT);
	if (strcmp(tune_str(o, "manifest_sha256"), u->sha) != 0)
		return doc_bad(r, TC_WARNING, mk, 1, "key \"manifest_sha256\": "
			       "the result is for another manifest");
	if (strcmp(tune_str(o, "unit"), tune_str(unit, "id")) != 0)
		return doc_bad(r, TC_WARNING, uk, 1, "key \"unit\": expected "
			       "\"%s\"", tune_str(unit, "id"));
	if (!json_is_string(json_object_get(o, "device")) ||
	    !json_is_object(json_object_get(o, "compilers")))
		return doc_bad(r, TC_WARNING, dk, 1, "key \"device\" (a string) "
			       "or \"compilers\" (an object) is missing");
	json_t *configs = json_object_get(o, "configs");
	json_t *list = json_object_get(unit, "configs");
	if (!json_is_object(configs) ||
	    json_object_size(configs) != json_array_size(list))
		return doc_bad(r, TC_WARNING, ck, 1, "key \"configs\": expected "
			       "the unit's %zu configurations",
			       json_array_size(list));
	size_t i;
	json_t *cid;
	json_array_foreach(list, i, cid) {
		const char *id = json_string_value(cid);
		json_t *c = json_object_get(configs, id);
		const char *kp[] = { "configs", id, "status" };
		if (!json_is_object(c))
			return doc_bad(r, TC_WARNING, kp, 1, "key \"configs.%s\" "
				       "is missing", id);
		const char *st = tune_str(c, "status");
		bool ok = strcmp(st, "ok") == 0;
		if (!ok && strcmp(st, "wrong") && strcmp(st, "failed") &&
		    strcmp(st, "compile_error"))
			return doc_bad(r, TC_WARNING, kp, 3, "key \"configs.%s."
				       "status\": expected ok, wrong, failed or "
				       "compile_error", id);
		static const char *const opt_str[] = { "reason", "log" };
		for (int k = 0; k < 2; k++) {
			json_t *v = json_object_get(c, opt_str[k]);
			kp[2] = opt_str[k];
			if (v && !json_is_string(v))
				return doc_bad(r, TC_WARNING, kp, 3, "key "
					       "\"configs.%s.%s\": expected a "
					       "string", id, opt_str[k]);
		}
		if (!ok && !json_is_string(json_object_get(c, "reason")))
			return doc_bad(r, TC_WARNING, kp, 2, "key \"configs.%s\": "
				       "a configuration that is not ok needs a "
				       "\"reason\"", id);
		json_t *mre = json_object_get(c, "max_rel_err");
		kp[2] = "max_rel_err";
		if (mre && !is_finite_number(mre, 0))
			return doc_bad(r, TC_WARNING, kp, 3, "key \"configs.%s."
				       "max_rel_err\": expected a number >= 0",
				       id);
		if (!ok)
			continue;
		json_t *times = json_object_get(c, "timings_ms");
		kp[2] = "timings_ms";
		size_t nt = json_array_size(times);
		bool good = json_is_array(times) && nt >= 1 && nt <= MAX_TIMES;
		for (size_t k = 0; good && k < nt; k++)
			good = is_finite_number(json_array_get(times, k), 0) &&
			       json_number_value(json_array_get(times, k)) > 0;
		if (!good)
			return doc_bad(r, TC_WARNING, kp, 3, "key \"configs.%s."
				       "timings_ms\": expected 1 to %d times > 0",
				       id, MAX_TIMES);
		static const char *const nums[] = { "median_ms", "min_ms",
			"mean_ms", "gbps", "gflops" };
		for (int k = 0; k < 5; k++) {
			kp[2] = nums[k];
			if (!is_finite_number(json_object_get(c, nums[k]), 0))
				return doc_bad(r, TC_WARNING, kp, 3, "key "
					       "\"configs.%s.%s\": expected a "
					       "number >= 0", id, nums[k]);
		}
		static const char *const ints[] = { "runs", "input_sets",
			"noisy_timings" };
		for (int k = 0; k < 3; k++) {
			json_t *v = json_object_get(c, ints[k]);
			kp[2] = ints[k];
			if (!json_is_integer(v) || json_integer_value(v) < (k < 2) ||
			    json_integer_value(v) > 100000000)
				return doc_bad(r, TC_WARNING, kp, 3, "key "
					       "\"configs.%s.%s\": expected an "
					       "integer >= %d", id, ints[k], k < 2);
		}
	}
	return true;
}

/* --- Planning the units (--prepare) ------------------------------------------------ */

/* A path a Slurm script can hold unquoted (its #SBATCH lines are not
 * shell). */
static bool
plain_path(const char *s)
{
	for (const char *p = s; *p; p++)
		if (!(*p == '/' || *p == '.' || *p == '_' || *p == '-' ||
		      *p == '+' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return false;
	return s[0] == '/';
}

/* The units of the configurations to run (an array of the manifest's
 * "configs"), t->unit_size to a unit (0: as few as make at most
 * MAX_UNITS units), and the Slurm array script DIR/tune.sbatch.  The
 * tile program goes to DIR/src/ so units translate exactly what was
 * prepared. */
bool
tune_units_write(Tune *t, json_t *configs, json_t *manifest)
{
	size_t n = json_array_size(configs);
	if (n == 0) {
		tune_failf("no configuration left to run; no units written");
		return false;
	}
	size_t per = t->unit_size > 0 ? (size_t)t->unit_size
				      : (n + MAX_UNITS - 1) / MAX_UNITS;
	size_t nunits = (n + per - 1) / per;
	if (nunits > MAX_UNITS) {
		tune_failf("--unit-size %d makes %zu units; at most %d (a "
			   "Slurm array's default limit)", t->unit_size, nunits,
			   MAX_UNITS);
		return false;
	}
	json_t *units = json_array();
	for (size_t u = 0; u < nunits; u++) {
		json_t *o = json_object(), *list = json_array();
		char id[16];
		snprintf(id, sizeof id, "u%03zu", u);
		for (size_t i = u * per; i < n && i < (u + 1) * per; i++)
			json_array_append(list, json_object_get(
							json_array_get(configs, i),
							"id"));
		json_object_set_new(o, "id", json_string(id));
		json_object_set_new(o, "configs", list);
		char result[32];
		snprintf(result, sizeof result, "results/%s.json", id);
		json_object_set_new(o, "result", json_string(result));
		json_array_append_new(units, o);
	}
	json_object_set_new(manifest, "units", units);
	json_t *spec = json_object();
	json_object_set_new(spec, "config_timeout_s",
			    json_real(t->config_timeout));
	json_object_set_new(spec, "configs_per_unit", json_integer((json_int_t)per));
	json_object_set_new(manifest, "unit", spec);

	/* The program, copied. */
	const char *base = strrchr(t->file, '/');
	base = base ? base + 1 : t->file;
	/* Under its own name, each byte outside [A-Za-z0-9._-] (and a
	 * leading dot) made '_': the name goes into a shell script. */
	char *rel = tune_fmt_alloc("src/%s", base[0] ? base : "program.c");
	for (char *p = rel + 4; *p; p++)
		if (!(*p == '.' || *p == '_' || *p == '-' ||
		      (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')) || (p == rel + 4 && *p == '.'))
			*p = '_';
	bool ok = is_rel_file(rel, "src");
	char *sdir = tune_fmt_alloc("%s/src", t->prepare);
	char *spath = tune_fmt_alloc("%s/%s", t->prepare, rel);
	if (ok && mkdir(sdir, 0755) != 0 && errno != EEXIST) {
		tune_failf("cannot create %s: %s", sdir, strerror(errno));
		ok = false;
	}
	ok = ok && tune_write_atomic(spath, t->text, t->len);
	json_object_set_new(manifest, "program", json_string(rel));
	char prog_name[256];
	snprintf(prog_name, sizeof prog_name, "%s", rel + 4);
	free(rel);
	free(sdir);
	free(spath);

	/* The Slurm script: one unit per array task. */
	char dir[PATH_MAX], self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	self[sl > 0 ? sl : 0] = 0;
	if (ok && !realpath(t->prepare, dir)) {
		tune_failf("%s: %s", t->prepare, strerror(errno));
		ok = false;
	}
	bool script = ok && plain_path(dir) && plain_path(self);
	if (ok && !script)
		fprintf(stderr, "tilec tune: note: no Slurm script: it would "
			"name %s and %s, which want [A-Za-z0-9/._+-] only; the "
			"units run with tilec tune --unit %s --index N\n", dir,
			self, t->prepare);
	bool gpu = strcmp(t->target, "openmp") != 0;
	/* A task's limit: every configuration's timeout, and a minute to
	 * start and write the result. */
	long minutes = (long)ceil((double)per * t->config_timeout / 60.0) + 1;
	TcBuf s;
	tc_buf_init(&s);
	/* Only names checked above go into the script: the program's as
	 * copied (src/NAME, [A-Za-z0-9._-]), the kernel's (an identifier),
	 * and the two plain paths. */
	tc_buf_printf(&s, "#!/bin/bash\n"
		      "# The units of a tilec tune search (%s, kernel %s, %s):\n"
		      "# one unit per array task.  Submit with\n"
		      "#   sbatch %s/tune.sbatch\n"
		      "# A unit that finished is not run again, so submitting "
		      "again (all of it,\n"
		      "# or --array=LIST as `tilec tune --finish DIR` prints) "
		      "reruns only what\n"
		      "# is missing.\n", prog_name, t->kname, t->tinfo.name, dir);
	tc_buf_printf(&s, "#SBATCH --job-name=tilec-tune-%s\n", t->kname);
	tc_buf_printf(&s, "#SBATCH --array=0-%zu\n", nunits - 1);
	tc_buf_printf(&s, "#SBATCH --ntasks=1\n");
	if (gpu)
		tc_buf_printf(&s, "#SBATCH --gpus-per-task=1\n");
	if (t->cpus_per_unit > 0)
		tc_buf_printf(&s, "#SBATCH --cpus-per-task=%d\n",
			      t->cpus_per_unit);
	else if (!gpu)
		/* CPU timings want the node to themselves. */
		tc_buf_printf(&s, "#SBATCH --exclusive\n");
	tc_buf_printf(&s, "#SBATCH --time=%ld\n", minutes);
	tc_buf_printf(&s, "#SBATCH --requeue\n");
	tc_buf_printf(&s, "#SBATCH --open-mode=append\n");
	tc_buf_printf(&s, "#SBATCH --output=%s/logs/%%a.log\n", dir);
	tc_buf_printf(&s, "set -eu\n");
	if (!gpu)
		tc_buf_printf(&s, "if [ -n \"${SLURM_CPUS_PER_TASK:-}\" ]; "
			      "then export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK; "
			      "fi\n");
	tc_buf_printf(&s, "exec \"${TILEC:-%s}\" tune --unit %s\n", self, dir);
	char *path = tune_fmt_alloc("%s/tune.sbatch", t->prepare);
	char *logs = tune_fmt_alloc("%s/logs", t->prepare);
	if (script && mkdir(logs, 0755) != 0 && errno != EEXIST) {
		tune_failf("cannot create %s: %s", logs, strerror(errno));
		ok = false;
	}
	ok = ok && (!script || (tune_write_atomic(path, s.data, s.len) &&
				chmod(path, 0755) == 0));
	tc_buf_free(&s);
	free(path);
	free(logs);
	return ok;
}

/* --- One unit (--unit DIR) ------------------------------------------------------------ */

/* $TILEC_TUNE_TEST_FAULT: "c003:wrong,c004:crash,...", faults the tests
 * inject into a configuration of a unit: wrong (the reference data is
 * changed after it is read, so the comparison fails), crash (the
 * configuration's process gets SIGSEGV), hang (it sleeps until the
 * timeout kills it), stall (the unit itself stops before the
 * configuration, as a hung node would, until something kills it),
 * stall-once (a stall the first time the unit runs, none when it runs
 * again: a task killed once and retried by its engine). */
static const char *
test_fault(const char *id)
{
	const char *f = getenv("TILEC_TUNE_TEST_FAULT");
	size_t n = strlen(id);
	for (const char *p = f; p && *p;) {
		size_t len = strcspn(p, ",");
		if (len > n && strncmp(p, id, n) == 0 && p[n] == ':') {
			static char kind[16];
			snprintf(kind, sizeof kind, "%.*s", (int)(len - n - 1),
				 p + n + 1);
			return kind;
		}
		p += len + (p[len] == ',');
	}
	return "";
}

/* A Shape from a manifest's object of scalar values. */
static bool
shape_from_json(Shape *s, json_t *o)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		char buf[128];
		if (json_is_integer(v))
			snprintf(buf, sizeof buf, "%s=%lld", k,
				 (long long)json_integer_value(v));
		else if (is_finite_number(v, -INFINITY))
			snprintf(buf, sizeof buf, "%s=%.17g", k,
				 json_number_value(v));
		else
			return false;
		if (!tc_is_identifier(k) || !tune_shape_add(s, buf))
			return false;
	}
	return true;
}

/* Read one reference file into dst: exactly n bytes, whose SHA-256
 * begins with the hash its name gives. */
static char *
load_data(const char *dir, const char *rel, void *dst, size_t n)
{
	char *path = tune_fmt_alloc("%s/%s", dir, rel);
	size_t len = 0;
	char *data = tc_read_file(path, &len);
	char *why = NULL;
	char hex[65];
	if (!data)
		why = tune_fmt_alloc("cannot read the reference data %s: %s",
				     path, strerror(errno));
	else if (len != n)
		why = tune_fmt_alloc("the reference data %s has %zu bytes, not "
				     "the %zu its tensor takes", path, len, n);
	else {
		tune_sha256_hex(data, len, hex);
		const char *name = strrchr(rel, '/') + 1;
		if (strncmp(name, hex, strcspn(name, ".")) != 0 ||
		    strcspn(name, ".") != 16)
			why = tune_fmt_alloc("the reference data %s is corrupt "
					     "(its SHA-256 is not its name)", path);
		else
			memcpy(dst, data, n);
	}
	free(data);
	free(path);
	return why;
}

/* The lock of the device this process times on: one per host and GPU
 * (the CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES a scheduler gives,
 * and --device), or per host on the CPU, whose timings want the machine
 * to themselves.  A file in DIR/results/, held with flock until the
 * descriptor closes (or the process ends); -1 when it cannot be had,
 * and the timing goes on unlocked. */
static int
timing_lock(Tune *t)
{
	char host[128] = "";
	gethostname(host, sizeof host - 1);
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	if (!vis)
		vis = getenv("ROCR_VISIBLE_DEVICES");
	TcBuf name;
	tc_buf_init(&name);
	tc_buf_printf(&name, "%s/results/.timing-%s", t->unit_dir, host);
	if (strcmp(t->target, "openmp") != 0)
		tc_buf_printf(&name, "-gpu%s-%d", vis ? vis : "", t->device_index);
	/* One file name: the host's and the list's bytes kept plain. */
	for (char *p = name.data + strlen(t->unit_dir) + 9; *p; p++)
		if (!(*p == '-' || *p == '.' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			*p = '_';
	tc_buf_puts(&name, ".lock");
	int fd = open(name.data, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	tc_buf_free(&name);
	while (fd >= 0 && flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			close(fd);
			fd = -1;
		}
	return fd;
}

/* What a configuration's process reports, as a JSON object. */
static json_t *
config_fail(const char *status, const char *reason, const char *log)
{
	json_t *o = json_object();
	json_object_set_new(o, "status", json_string(status));
	json_object_set_new(o, "reason", json_string(reason));
	if (log && log[0])
		json_object_set_new(o, "log", json_string(log));
	return o;
}

/* In the configuration's own process: check it against the unit's
 * reference data at the check shape, then time it at the tuning shape,
 * 1 + confirm_rounds timings. */
static json_t *
run_config(Tune *t, Units *u, json_t *cfg, const char *fault)
{
	json_t *m = u->m.root;
	json_t *values = json_object_get(cfg, "values");
	long long vals[MAX_TUNABLES];
	const char *stray = tune_values_from_json(t, values, vals);
	if (stray) {
		char *why = tune_fmt_alloc("the unit's values name %s, which "
					   "is no tunable of %s", stray,
					   t->file);
		json_t *r = config_fail("failed", why, NULL);
		free(why);
		return r;
	}
	TcHarnessSpec spec = tune_harness_spec(t, vals, false);
	TcHarness h;
	TcHarnessShape s;
	json_t *r = NULL;
	int lock = -1;          /* the device's timing lock, when held */
	Shape check = { 0 }, tune = { 0 };
	if (!shape_from_json(&check, json_object_get(json_object_get(cfg, "check"),
						      "shape")) ||
	    !shape_from_json(&tune, json_object_get(m, "shape"))) {
		r = config_fail("failed", "the manifest's shapes are not "
				"NAME: number", NULL);
		goto out_shapes;
	}
	bool ok = tc_harness_load(&h, &spec);
	tune_harness_shape(t, &check, &s);
	s.tol = json_number_value(json_object_get(m, "tol"));
	ok = ok && tc_harness_bind(&h, &s) && tc_harness_compile(&h);
	if (!ok) {
		r = config_fail(h.fail == TC_HARNESS_COMPILE ? "compile_error"
							      : "failed",
				h.message ? h.message : "the harness stopped",
				h.log);
		goto out;
	}
	if (strcmp(fault, "crash") == 0)
		raise(SIGSEGV);
	while (strcmp(fault, "hang") == 0)
		pause();
	/* On a GPU the device is taken from here on (the check runs on it
	 * too): what overlaps other units' timings is compiling and loading. */
	bool gpu = strcmp(t->target, "openmp") != 0;
	if (gpu)
		lock = timing_lock(t);
	/* The unit's reference data, in place of the interpreter. */
	json_t *inputs = json_object_get(json_object_get(cfg, "check"), "inputs");
	json_t *expected = json_object_get(json_object_get(cfg, "check"),
					   "expected");
	bool faulted = false;
	for (int i = 0; i < h.nparams; i++) {
		TcHarnessParam *p = &h.params[i];
		if (p->var->kind != TC_VAR_TENSOR)
			continue;
		const char *in = tune_str(inputs, p->var->name);
		const char *out = tune_str(expected, p->var->name);
		char *why = NULL;
		if (((p->role & TC_HARNESS_IN) && !in[0]) ||
		    ((p->role & TC_HARNESS_OUT) && !out[0]))
			why = tune_fmt_alloc("the unit has no reference data for "
					     "%s", p->var->name);
		if (!why && (p->role & TC_HARNESS_IN))
			why = load_data(t->unit_dir, in, p->data, p->bytes);
		if (!why && (p->role & TC_HARNESS_OUT))
			why = load_data(t->unit_dir, out, p->ref, p->bytes);
		if (!why && (p->role & TC_HARNESS_OUT) && !faulted &&
		    strcmp(fault, "wrong") == 0 && p->bytes > 0) {
			((unsigned char *)p->ref)[p->bytes - 1] ^= 0x5a;
			faulted = true;
		}
		if (why) {
			r = config_fail("failed", why, NULL);
			free(why);
			goto out;
		}
	}
	if (!tc_harness_check_stored(&h)) {
		r = config_fail(h.fail == TC_HARNESS_MISMATCH ? "wrong" : "failed",
				h.message ? h.message : "the check failed", NULL);
		goto out;
	}
	double rel = 0;
	for (int i = 0; i < h.nout; i++)
		rel = h.out[i].rel_err > rel ? h.out[i].rel_err : rel;
	tc_harness_unbind(&h);
	tune_harness_shape(t, &tune, &s);
	s.tol = json_number_value(json_object_get(m, "tol"));
	json_t *meas = json_object_get(m, "measure");
	int warmup = (int)json_integer_value(json_object_get(meas, "warmup"));
	int repeat = (int)json_integer_value(json_object_get(meas, "repeat"));
	int rounds = 1 + (int)json_integer_value(json_object_get(meas,
								 "confirm_rounds"));
	/* Timings one at a time on a device, whatever else runs there (other
	 * units of a -j, other tasks on the node): compiles overlap, timings
	 * do not.  The lock goes with this process. */
	if (!gpu)
		lock = timing_lock(t);
	double t0 = tilec_now();
	/* The interpreter counts the FLOPs at the tuning shape (nothing
	 * compared), as a search here does. */
	ok = tc_harness_bind(&h, &s) && tc_harness_check(&h, 1, false);
	json_t *times = json_array();
	TcHarnessTiming first = { 0 };
	int noisy = 0;
	for (int i = 0; ok && i < rounds; i++) {
		TcHarnessTiming b;
		ok = tc_harness_bench(&h, warmup, repeat, 0, &b);
		if (ok && i == 0)
			first = b;
		if (ok)
			json_array_append_new(times, json_real(b.median_ms));
		noisy += ok && b.median_ms > NOISE_RATIO * b.min_ms;
	}
	double timing_s = tilec_now() - t0;
	if (!ok) {
		json_decref(times);
		r = config_fail("failed", h.message ? h.message : "timing failed",
				NULL);
		goto out;
	}
	r = json_object();
	json_object_set_new(r, "timing_s", json_real(timing_s));
	json_object_set_new(r, "status", json_string("ok"));
	json_object_set_new(r, "max_rel_err", json_real(rel));
	json_object_set_new(r, "timings_ms", times);
	json_object_set_new(r, "median_ms", json_real(first.median_ms));
	json_object_set_new(r, "min_ms", json_real(first.min_ms));
	json_object_set_new(r, "mean_ms", json_real(first.mean_ms));
	json_object_set_new(r, "runs", json_integer(first.runs));
	json_object_set_new(r, "noisy_timings", json_integer(noisy));
	json_object_set_new(r, "input_sets", json_integer(first.input_sets));
	json_object_set_new(r, "gbps", json_real(first.gbps));
	json_object_set_new(r, "gflops", json_real(first.gflops));
out:
	tc_harness_free(&h);
	if (lock >= 0)
		close(lock);
out_shapes:
	tune_shape_free(&check);
	tune_shape_free(&tune);
	return r;
}

/* Run configuration cfg in a child process, which writes its result to a
 * pipe; a crash, a timeout or a result that is not JSON is a failure
 * with its reason. */
static json_t *
isolate_config(Tune *t, Units *u, json_t *cfg, double timeout)
{
	const char *id = tune_str(cfg, "id");
	const char *fault = test_fault(id);
	while (strcmp(fault, "stall") == 0 ||
	       (strcmp(fault, "stall-once") == 0 && !t->unit_rerun))
		pause();
	int fd[2];
	if (pipe(fd) != 0)
		return config_fail("failed", strerror(errno), NULL);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return config_fail("failed", strerror(errno), NULL);
	}
	if (pid == 0) {
		close(fd[0]);
		signal(SIGPIPE, SIG_IGN);
		json_t *r = run_config(t, u, cfg, fault);
		char *s = json_dumps(r, JSON_COMPACT);
		size_t n = s ? strlen(s) : 0, off = 0;
		while (off < n) {
			ssize_t w = write(fd[1], s + off, n - off);
			if (w <= 0)
				_exit(3);
			off += (size_t)w;
		}
		_exit(s ? 0 : 3);
	}
	close(fd[1]);
	TcBuf out;
	tc_buf_init(&out);
	double deadline = tilec_now() + timeout;
	bool timed_out = false;
	for (;;) {
		double left = deadline - tilec_now();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd p = { fd[0], POLLIN, 0 };
		int pr = poll(&p, 1, left > 1e6 ? 1000000000 : (int)(left * 1e3) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		char buf[4096];
		ssize_t got = read(fd[0], buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		tc_buf_printf(&out, "%.*s", (int)got, buf);
	}
	close(fd[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	json_t *r = NULL;
	if (timed_out) {
		char *why = tune_fmt_alloc("timed out after %g s (the unit's "
					   "timeout per configuration); killed",
					   timeout);
		r = config_fail("failed", why, NULL);
		free(why);
	} else if (WIFSIGNALED(status)) {
		char *why = tune_fmt_alloc("crashed: signal %d (%s)",
					   WTERMSIG(status),
					   strsignal(WTERMSIG(status)));
		r = config_fail("failed", why, NULL);
		free(why);
	} else {
		r = out.len ? json_loads(out.data, 0, NULL) : NULL;
		if (!json_is_object(r) || WEXITSTATUS(status) != 0) {
			json_decref(r);
			char *why = tune_fmt_alloc("its process exited with status "
						   "%d without a result",
						   WEXITSTATUS(status));
			r = config_fail("failed", why, NULL);
			free(why);
		}
	}
	tc_buf_free(&out);
	return r;
}

/* The unit's index: --index, else Slurm's array task id, else a
 * Kubernetes Indexed Job's completion index. */
static bool
unit_index(Tune *t, size_t nunits, size_t *index)
{
	const char *s = t->unit_index_arg;
	const char *from = "--index";
	if (!s && (s = getenv("SLURM_ARRAY_TASK_ID")))
		from = "SLURM_ARRAY_TASK_ID";
	/* A Kubernetes Indexed Job's pod index. */
	if (!s && (s = getenv("JOB_COMPLETION_INDEX")))
		from = "JOB_COMPLETION_INDEX";
	long long n;
	if (!s) {
		tune_failf("--unit %s: which unit? give --index N (or run it as "
			   "a Slurm array task)", t->unit_dir);
		return false;
	}
	if (!tc_opt_integer(s, &n) || n < 0 || (size_t)n >= nunits) {
		tune_failf("%s %s: expected a unit in 0 .. %zu", from, s,
			   nunits - 1);
		return false;
	}
	*index = (size_t)n;
	return true;
}

/* What a unit's marker and result say of where it ran. */
static void
where_json(json_t *o)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	json_object_set_new(o, "host", json_string(host));
	json_object_set_new(o, "pid", json_integer(getpid()));
	static const char *const env[] = { "SLURM_ARRAY_JOB_ID",
		"SLURM_ARRAY_TASK_ID", "SLURM_JOB_ID" };
	json_t *slurm = json_object();
	for (size_t i = 0; i < sizeof env / sizeof *env; i++)
		if (getenv(env[i]))
			json_object_set_new(slurm, env[i], json_string(getenv(env[i])));
	json_object_set_new(o, "slurm", slurm);
	/* The GPUs the scheduler gave the unit (Slurm's --gpus-per-task,
	 * Ray's num_gpus), as the device sees them. */
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	if (!vis)
		vis = getenv("ROCR_VISIBLE_DEVICES");
	if (vis)
		json_object_set_new(o, "visible_devices", json_string(vis));
}

/* Seconds since the epoch, for times compared across hosts. */
static double
epoch_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One unit: t->unit_index_arg's, or the scheduler's. */
static int
unit_one(Tune *t)
{
	Units u;
	int status = EXIT_STOPPED;
	double started = epoch_now();
	char *result = NULL, *marker = NULL, *rdir = NULL;
	if (!units_load(&u, t->unit_dir, true))
		goto out;
	size_t index;
	if (!unit_index(t, json_array_size(u.units), &index))
		goto out;
	json_t *unit = json_array_get(u.units, index);
	const char *uid = tune_str(unit, "id");
	result = tune_fmt_alloc("%s/%s", t->unit_dir, tune_str(unit, "result"));
	marker = tune_fmt_alloc("%s/results/%s.started", t->unit_dir, uid);
	rdir = tune_fmt_alloc("%s/results", t->unit_dir);
	/* Idempotent: a unit with a good result is done. */
	Doc r;
	if (access(result, F_OK) == 0) {
		bool good = doc_load(&r, result, false, TC_WARNING) &&
			    result_check(&u, unit, &r);
		if (good) {
			fprintf(stderr, "tilec tune: unit %s is done already (%s)\n",
				uid, result);
			doc_free(&r);
			status = EXIT_OK;
			goto out;
		}
		char *why = doc_reason(&r);
		fprintf(stderr, "tilec tune: unit %s: the result there is not "
			"usable (%s); running the unit again\n", uid, why);
		free(why);
		doc_free(&r);
	}
	json_t *m = u.m.root;
	/* This unit's machine, and the program as prepared. */
	t->target = tune_str(m, "target");
	t->arch = tune_str(m, "arch");
	if (strcmp(tune_str(m, "march"), t->arch) != 0)
		t->march = tune_str(m, "march");
	t->cpu_strip = tune_strip_from_json(m);
	t->kernel = tune_str(m, "kernel");
	char *prog = tune_fmt_alloc("%s/%s", t->unit_dir, tune_str(m, "program"));
	t->file = prog;
	t->owned_file = prog;
	char arch[32];
	if (!tune_open_device(t, arch, sizeof arch) || !tune_load_program(t))
		goto out;
	if (strcmp(t->sha, tune_str(m, "source_sha256")) != 0) {
		tune_failf("%s is not the program the manifest was prepared from "
			   "(its SHA-256 differs)", t->file);
		goto out;
	}
	json_t *ranges = json_object_get(m, "ranges");
	for (size_t i = 0; i < json_array_size(ranges); i++)
		if (!tune_add_ranges(t, json_string_value(json_array_get(ranges, i))))
			goto out;
	double timeout = t->config_timeout > 0 ? t->config_timeout
					       : u.config_timeout;
	if ((mkdir(rdir, 0755) != 0 && errno != EEXIST)) {
		tune_failf("cannot create %s: %s", rdir, strerror(errno));
		goto out;
	}
	json_t *mk = json_object();
	json_object_set_new(mk, "unit", json_string(uid));
	json_object_set_new(mk, "started", tune_now_json());
	where_json(mk);
	t->unit_rerun = access(marker, F_OK) == 0;
	bool ok = tune_write_json(marker, mk);
	json_decref(mk);
	if (!ok)
		goto out;
	json_t *list = json_object_get(unit, "configs");
	fprintf(stderr, "tilec tune: unit %s (%zu of %zu): %zu configurations "
		"on %s, %g s each at most\n", uid, index + 1,
		json_array_size(u.units), json_array_size(list), t->device,
		timeout);
	json_t *configs = json_object();
	double timing_s = 0;
	size_t i;
	json_t *cid;
	json_array_foreach(list, i, cid) {
		json_t *cfg = config_by_id(u.configs, json_string_value(cid));
		double t0 = tilec_now();
		json_t *c = isolate_config(t, &u, cfg, timeout);
		const char *st = tune_str(c, "status");
		if (strcmp(st, "ok") == 0)
			fprintf(stderr, "[%zu/%zu] %s: ok, %.4g ms (%.1f s)\n",
				i + 1, json_array_size(list),
				json_string_value(cid), tune_num(c, "median_ms"),
				tilec_now() - t0);
		else
			fprintf(stderr, "[%zu/%zu] %s: %s: %s\n", i + 1,
				json_array_size(list), json_string_value(cid),
				st, tune_str(c, "reason"));
		timing_s += json_number_value(json_object_get(c, "timing_s"));
		json_object_set_new(configs, json_string_value(cid), c);
	}
	json_t *res = json_object();
	json_object_set_new(res, "format", json_string(UNIT_RESULT_FORMAT));
	json_object_set_new(res, "manifest_sha256", json_string(u.sha));
	json_object_set_new(res, "unit", json_string(uid));
	json_object_set_new(res, "device", json_string(t->device));
	json_object_set_new(res, "compilers", json_incref(t->compilers));
	json_object_set_new(res, "timer", json_string(t->timer));
	json_object_set_new(res, "finished", tune_now_json());
	/* What the unit cost: from its start to its result, and the time its
	 * configurations held the device for timing. */
	double finished = epoch_now();
	/* Milliseconds since the epoch: integers, which the record's six
	 * significant digits leave whole. */
	json_object_set_new(res, "started_unix_ms",
			    json_integer((json_int_t)(started * 1e3)));
	json_object_set_new(res, "finished_unix_ms",
			    json_integer((json_int_t)(finished * 1e3)));
	json_object_set_new(res, "elapsed_s", json_real(finished - started));
	json_object_set_new(res, "timing_s", json_real(timing_s));
	json_object_set_new(res, "tilec_version", json_string(TILEC_VERSION));
	where_json(res);
	json_object_set_new(res, "configs", configs);
	/* Written whole or not at all: a temporary file, synced, renamed. */
	ok = tune_write_json(result, res);
	json_decref(res);
	if (ok) {
		fprintf(stderr, "tilec tune: unit %s: %s\n", uid, result);
		status = EXIT_OK;
	}
out:
	free(result);
	free(marker);
	free(rdir);
	units_free(&u);
	return status;
}

/* "3", "0-5,9" or "all": which of n units, into want[]; false when the
 * list is malformed or names a unit past the last. */
static bool
index_set(const char *s, size_t n, bool *want, size_t *count)
{
	*count = 0;
	if (strcmp(s, "all") == 0) {
		for (size_t i = 0; i < n; i++)
			want[i] = true;
		*count = n;
		return true;
	}
	for (const char *p = s; *p;) {
		char *end;
		errno = 0;
		unsigned long long lo = strtoull(p, &end, 10), hi = lo;
		if (end == p || errno || *p == '-' || *p == '+')
			return false;
		if (*end == '-') {
			const char *q = end + 1;
			if (*q < '0' || *q > '9')
				return false;
			hi = strtoull(q, &end, 10);
			if (errno || hi < lo)
				return false;
		}
		if (hi >= n)
			return false;
		for (unsigned long long i = lo; i <= hi; i++) {
			*count += !want[i];
			want[i] = true;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return false;
		p = end;
	}
	return *count > 0;
}

/* --unit DIR: one unit (--index N, or the scheduler's), or several
 * (--index LIST or all) run --jobs at a time on this machine, each in a
 * process of its own: their compiles and checks overlap, their timings
 * take turns on the device (timing_lock). */
int
tune_unit(Tune *t)
{
	const char *s = t->unit_index_arg;
	if (!s || (strcmp(s, "all") != 0 && !strpbrk(s, ",-")))
		return unit_one(t);
	Units u;
	if (!units_load(&u, t->unit_dir, true))
		return EXIT_STOPPED;
	size_t n = json_array_size(u.units), count = 0;
	units_free(&u);
	bool *want = calloc(n, sizeof *want);
	if (!want || !index_set(s, n, want, &count)) {
		tune_failf("--index %s: expected N, a list of N and N-M, or all "
			   "(units 0 .. %zu)", s, n - 1);
		free(want);
		return EXIT_STOPPED;
	}
	/* --jobs: by default one unit per CPU, as compiles run. */
	int jobs = t->jobs < 1 ? 1 : t->jobs;
	fprintf(stderr, "tilec tune: %zu units of %s, %d at a time\n", count,
		t->unit_dir, jobs);
	int status = EXIT_OK, running = 0;
	double t0 = tilec_now();
	char arg[32];
	for (size_t i = 0; i <= n; i++) {
		while (running > 0 && (running == jobs || i == n)) {
			int st = 0;
			if (wait(&st) < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			running--;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != EXIT_OK)
				status = EXIT_STOPPED;
		}
		if (i == n)
			break;
		if (!want[i])
			continue;
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			tune_failf("fork: %s", strerror(errno));
			status = EXIT_STOPPED;
			break;
		}
		if (pid == 0) {
			snprintf(arg, sizeof arg, "%zu", i);
			t->unit_index_arg = arg;
			_exit(unit_one(t));
		}
		running++;
	}
	while (running > 0) {
		if (wait(NULL) < 0 && errno != EINTR)
			break;
		running--;
	}
	free(want);
	fprintf(stderr, "tilec tune: %zu units in %.1f s%s\n", count,
		tilec_now() - t0, status == EXIT_OK ? "" : "; some failed (their "
		"logs above; tilec tune --finish says which)");
	return status;
}

/* --- Merging the units' results (--finish) ------------------------------------------- */

/* A shell-readable list of array indices: "1,4-6". */
static void
index_list(TcBuf *b, const bool *missing, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!missing[i])
			continue;
		size_t j = i;
		while (j + 1 < n && missing[j + 1])
			j++;
		tc_buf_printf(b, "%s%zu", b->len ? "," : "", i);
		if (j > i)
			tc_buf_printf(b, "-%zu", j);
		i = j;
	}
}

/* The units' results of the prepared directory t->finish, by
 * configuration id (t->unit_results, what the farm's timings file gives
 * tune_finish), and which units finished, failed or are missing
 * (t->unit_summary, for the record).  A missing or corrupt result makes
 * each of its configurations failed, with the reason. */
int
tune_merge_units(Tune *t)
{
	Units u;
	int status = EXIT_STOPPED;
	bool *rerun = NULL;
	json_t *summary = NULL;
	if (!units_load(&u, t->finish, true))
		goto out;
	size_t nunits = json_array_size(u.units);
	rerun = calloc(nunits, sizeof *rerun);
	if (!rerun)
		goto out;
	/* Each configuration's result, by id, and what became of each unit. */
	json_t *by_id = json_object();
	json_t *done = json_array(), *missing = json_object(),
	       *failed = json_object();
	const char *device = NULL;
	json_t *compilers = NULL, *timer = NULL;
	/* What the units cost (results written before these were kept lack
	 * them): the first start, the last finish, the sums. */
	double first = INFINITY, last = 0, unit_s = 0, timing_s = 0;
	Doc docs[1];
	for (size_t i = 0; i < nunits; i++) {
		json_t *unit = json_array_get(u.units, i);
		const char *uid = tune_str(unit, "id");
		char *rpath = tune_fmt_alloc("%s/%s", t->finish,
					     tune_str(unit, "result"));
		char *mpath = tune_fmt_alloc("%s/results/%s.started", t->finish,
					     uid);
		Doc *r = &docs[0];
		char *why = NULL;
		if (access(rpath, F_OK) != 0) {
			Doc mk;
			if (doc_load(&mk, mpath, false, TC_WARNING))
				why = tune_fmt_alloc("started on %s at %s but wrote "
						     "no result: killed, preempted "
						     "or timed out",
						     tune_str(mk.root, "host"),
						     tune_str(mk.root, "started"));
			else
				why = tune_xstrdup("not run");
			doc_free(&mk);
			json_object_set_new(missing, uid, json_string(why));
			rerun[i] = true;
		} else if (!doc_load(r, rpath, true, TC_WARNING) ||
			   !result_check(&u, unit, r)) {
			why = doc_reason(r);
			char *full = tune_fmt_alloc("corrupt result: %s", why);
			free(why);
			why = full;
			json_object_set_new(failed, uid, json_string(why));
			rerun[i] = true;
			doc_free(r);
		} else {
			const char *dev = tune_str(r->root, "device");
			if (device && strcmp(device, dev) != 0) {
				fprintf(stderr, "tilec tune: %s: unit %s ran on %s, "
					"the others on %s: one record is for one "
					"kind of device (give the array a Slurm "
					"--constraint)\n", rpath, uid, dev, device);
				free(rpath);
				free(mpath);
				doc_free(r);
				json_decref(by_id);
				json_decref(done);
				json_decref(missing);
				json_decref(failed);
				goto out;
			}
			if (!device) {
				/* Kept past the doc: copied into t now. */
				snprintf(t->device, sizeof t->device, "%s", dev);
				device = t->device;
				compilers = json_incref(json_object_get(r->root,
									"compilers"));
				timer = json_incref(json_object_get(r->root, "timer"));
			}
			json_t *o = r->root;
			double s0 = 1e-3 * json_number_value(json_object_get(o,
							"started_unix_ms"));
			double s1 = 1e-3 * json_number_value(json_object_get(o,
							"finished_unix_ms"));
			if (s0 > 0 && s1 >= s0) {
				first = s0 < first ? s0 : first;
				last = s1 > last ? s1 : last;
			}
			unit_s += fmax(0, json_number_value(json_object_get(o,
							"elapsed_s")));
			timing_s += fmax(0, json_number_value(json_object_get(o,
							"timing_s")));
			const char *cid;
			json_t *c;
			json_object_foreach(json_object_get(r->root, "configs"),
					    cid, c)
				json_object_set(by_id, cid, c);
			json_array_append_new(done, json_string(uid));
			doc_free(r);
		}
		if (why) {
			size_t j;
			json_t *cid;
			json_array_foreach(json_object_get(unit, "configs"), j, cid) {
				json_t *o = json_object();
				json_object_set_new(o, "status", json_string("failed"));
				char *reason = tune_fmt_alloc("unit %s: %s", uid, why);
				json_object_set_new(o, "reason", json_string(reason));
				free(reason);
				json_object_set(by_id, json_string_value(cid), o);
				json_decref(o);
			}
			free(why);
		}
		free(rpath);
		free(mpath);
	}
	summary = json_object();
	json_object_set_new(summary, "total", json_integer((json_int_t)nunits));
	json_object_set_new(summary, "done", done);
	json_object_set_new(summary, "missing", missing);
	json_object_set_new(summary, "failed", failed);
	if (last > 0) {
		t->wall_s = last - first;
		t->timing_s = timing_s;
		json_object_set_new(summary, "wall_s", json_real(t->wall_s));
		json_object_set_new(summary, "unit_s", json_real(unit_s));
		json_object_set_new(summary, "timing_s", json_real(timing_s));
		fprintf(stderr, "tilec tune: the units took %.1f s from the first "
			"start to the last result, %.1f s of units in all, %.1f s "
			"of it timing%s\n", t->wall_s, unit_s, timing_s,
			strcmp(tune_str(u.m.root, "target"), "openmp") == 0
				? "" : " (the GPU time)");
	}
	if (json_object_size(missing) + json_object_size(failed)) {
		TcBuf list;
		tc_buf_init(&list);
		index_list(&list, rerun, nunits);
		fprintf(stderr, "tilec tune: %zu of %zu units have results; "
			"%zu missing, %zu failed; the record is from those there "
			"are.  To resume:\n  sbatch --array=%s %s/tune.sbatch\n"
			"or with Ray:\n  python3 tools/tune_ray.py %s --units %s\n",
			json_array_size(done), nunits, json_object_size(missing),
			json_object_size(failed), list.data, t->finish, t->finish,
			list.data);
		json_object_set_new(summary, "rerun", json_string(list.data));
		tc_buf_free(&list);
	}
	t->unit_results = by_id;
	t->unit_summary = summary;
	summary = NULL;
	t->compilers = compilers ? compilers : json_object();
	snprintf(t->timer_buf, sizeof t->timer_buf, "%s",
		 json_is_string(timer) ? json_string_value(timer) : "unknown");
	t->timer = t->timer_buf;
	json_decref(timer);
	status = EXIT_OK;
out:
	json_decref(summary);
	free(rerun);
	units_free(&u);
	return status;
}
