/*
 * record.c - reading tuning records: the values `--config RECORD` binds.
 *
 * Input: a record's path (JSON written by `tilec tune`, docs/tuning.md),
 * the tile program's text and the options being built.  Output: the
 * record's chosen tunable values appended to the options' bindings (the
 * -D bindings already there win), and located diagnostics for what is
 * wrong with the record (malformed JSON at its line and column, a missing
 * or mistyped key at the key) or worth a warning (another version of the
 * program, another device or arch).
 *
 * tune.c writes records; this file reads them (and names the device they
 * are for), for the tilec command's subcommands and for the library
 * (tilec_translator_set_config), which is why it lives apart from the
 * tuner.
 */
#include "ir/tilec_int.h"
#include "tilec_runtime.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the member at `path` (n keys, outermost first) is in the JSON
 * text: each key is looked for after the previous one.  Line and column
 * are 0 when it is not there. */
TcLoc
tc_json_key_loc(const char *file, const char *text, const char *const *path,
		int n)
{
	TcLoc loc = { file, 0, 0 };
	const char *p = text;
	for (int i = 0; i < n; i++) {
		size_t kl = strlen(path[i]);
		const char *hit = NULL;
		for (const char *q = strchr(p, '"'); q; q = strchr(q + 1, '"')) {
			if (strncmp(q + 1, path[i], kl) != 0 || q[kl + 1] != '"')
				continue;
			const char *c = q + kl + 2;
			while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')
				c++;
			if (*c == ':') {
				hit = q;
				break;
			}
		}
		if (!hit)
			return loc;
		p = hit + 1;
	}
	loc.line = 1;
	const char *bol = text;
	for (const char *q = text; q < p - 1; q++)
		if (*q == '\n') {
			loc.line++;
			bol = q + 1;
		}
	loc.col = (int)(p - 1 - bol) + 1;
	return loc;
}

void
tc_record_free(TcRecord *r)
{
	free(r->text);
	json_decref(r->root);
	memset(r, 0, sizeof *r);
}

bool
tc_record_load(TcRecord *r, const char *path, TcDiags *d)
{
	memset(r, 0, sizeof *r);
	r->path = path;
	if (!(r->text = tc_read_file(path, NULL))) {
		tc_diag(d, TC_ERROR, (TcLoc){ path, 0, 0 },
			"cannot read the tuning record: %s", strerror(errno));
		return false;
	}
	json_error_t err;
	r->root = json_loads(r->text, JSON_REJECT_DUPLICATES, &err);
	if (!r->root) {
		tc_diag(d, TC_ERROR, (TcLoc){ path, err.line, err.column },
			"malformed JSON in the tuning record: %s", err.text);
		return false;
	}
	if (!json_is_object(r->root)) {
		tc_diag(d, TC_ERROR, (TcLoc){ path, 1, 1 },
			"a tuning record is a JSON object");
		return false;
	}
	return true;
}

/* The string member `key` of the record; NULL (after an error, when
 * required) if missing or not a string. */
static const char *
record_string(TcRecord *r, const char *key, bool required, TcDiags *d)
{
	json_t *v = json_object_get(r->root, key);
	const char *path[1] = { key };
	if (!v && !required)
		return NULL;
	if (!v) {
		tc_diag(d, TC_ERROR, (TcLoc){ r->path, 0, 0 },
			"key \"%s\" is missing from the tuning record", key);
		return NULL;
	}
	if (!json_is_string(v)) {
		tc_diag(d, TC_ERROR, tc_json_key_loc(r->path, r->text, path, 1),
			"key \"%s\": expected a string", key);
		return NULL;
	}
	return json_string_value(v);
}

bool
tc_config_apply(const char *path, const char *text, size_t len,
		const char *device, TcArena *a, TcOptions *opt, TcDiags *d)
{
	TcRecord r;
	int errors = d->errors;
	if (!tc_record_load(&r, path, d)) {
		tc_record_free(&r);
		return false;
	}
	const char *format = record_string(&r, "format", true, d);
	if (format && strcmp(format, TC_RECORD_FORMAT) != 0) {
		const char *k[1] = { "format" };
		tc_diag(d, TC_ERROR, tc_json_key_loc(path, r.text, k, 1),
			"key \"format\": \"%s\" is not a tuning record this "
			"tilec reads (\"%s\")", format, TC_RECORD_FORMAT);
	}
	const char *target = record_string(&r, "target", true, d);
	const char *arch = record_string(&r, "arch", false, d);
	const char *sha = record_string(&r, "source_sha256", true, d);
	const char *rdevice = record_string(&r, "device", false, d);
	const char *source = record_string(&r, "source", false, d);
	const char *kernel = record_string(&r, "kernel", false, d);
	json_t *chosen = json_object_get(r.root, "chosen");
	json_t *partial = json_object_get(r.root, "partial");
	const char *ck[1] = { "chosen" }, *pk[1] = { "partial" };
	if (partial && !chosen)
		tc_diag(d, TC_ERROR, tc_json_key_loc(path, r.text, pk, 1),
			"key \"partial\": the record is what an interrupted "
			"search had measured, and it had timed nothing");
	else if (!chosen)
		tc_diag(d, TC_ERROR, (TcLoc){ path, 0, 0 },
			"key \"chosen\" is missing from the tuning record");
	else if (!json_is_object(chosen))
		tc_diag(d, TC_ERROR, tc_json_key_loc(path, r.text, ck, 1),
			"key \"chosen\": expected an object of tunable values");
	if (d->errors != errors) {
		tc_record_free(&r);
		return false;
	}

	/* Refused: values tuned for another target. */
	if (strcmp(target, opt->target.name) != 0) {
		const char *k[1] = { "target" };
		tc_diag(d, TC_ERROR, tc_json_key_loc(path, r.text, k, 1),
			"key \"target\": the record was tuned for %s, not %s",
			target, opt->target.name);
	}
	/* Refused: another kernel's values (known when the kernel is named;
	 * the same words as tilec export's check of several records). */
	if (kernel && opt->kernel && strcmp(kernel, opt->kernel) != 0) {
		const char *k[1] = { "kernel" };
		tc_diag(d, TC_ERROR, tc_json_key_loc(path, r.text, k, 1),
			"key \"kernel\": the record is for %s, not %s", kernel,
			opt->kernel);
	}
	/* Warned: the values still bind, but may no longer be the best. */
	if (partial)
		tc_diag(d, TC_WARNING, tc_json_key_loc(path, r.text, pk, 1),
			"key \"partial\": the record is what an interrupted "
			"search had measured (%lld of %lld configurations "
			"timed); \"chosen\" is the fastest of those",
			(long long)json_integer_value(
				json_object_get(partial, "timed")),
			(long long)json_integer_value(
				json_object_get(partial, "to_time")));
	if (arch && opt->target.arch && strcmp(target, opt->target.name) == 0 &&
	    strcmp(arch, opt->target.arch) != 0) {
		const char *k[1] = { "arch" };
		tc_diag(d, TC_WARNING, tc_json_key_loc(path, r.text, k, 1),
			"key \"arch\": tuned for %s/%s, used for %s/%s",
			target, arch, opt->target.name, opt->target.arch);
	}
	char hex[65];
	tilec_sha256_hex(text, len, hex);
	if (strcmp(sha, hex) != 0) {
		const char *k[1] = { "source_sha256" };
		tc_diag(d, TC_WARNING, tc_json_key_loc(path, r.text, k, 1),
			"key \"source_sha256\": the record was tuned on "
			"another version of %s (SHA-256 %.12s..., this one "
			"%.12s...)", source ? source : "the program", sha, hex);
	}
	if (device && device[0] && rdevice && strcmp(device, rdevice) != 0) {
		const char *k[1] = { "device" };
		tc_diag(d, TC_WARNING, tc_json_key_loc(path, r.text, k, 1),
			"key \"device\": tuned on %s, running on %s", rdevice,
			device);
	}

	const char *name;
	json_t *v;
	json_object_foreach(chosen, name, v) {
		const char *k[2] = { "chosen", name };
		TcLoc loc = tc_json_key_loc(path, r.text, k, 2);
		if (!json_is_integer(v)) {
			tc_diag(d, TC_ERROR, loc, "key \"chosen.%s\": expected "
				"an integer", name);
			continue;
		}
		bool given = false;
		for (int i = 0; i < opt->ndefines; i++)
			given |= strcmp(opt->define_name[i], name) == 0;
		if (given)
			continue;
		if (opt->ndefines == TC_MAX_DEFINES) {
			tc_diag(d, TC_ERROR, loc, "more than %d tunable "
				"bindings", TC_MAX_DEFINES);
			break;
		}
		/* A tunable the program lacks is specialize's error, at
		 * this location. */
		int i = opt->ndefines++;
		opt->define_name[i] = tc_strdup(a, name);
		opt->define_value[i] = json_integer_value(v);
		opt->define_loc[i] = (TcLoc){ tc_strdup(a, path), loc.line,
					      loc.col };
	}
	tc_record_free(&r);
	return d->errors == errors;
}

/* The device name records carry (tilec_int.h). */
void
tc_tune_device_name(const char *target, const char *runtime_name, char *out,
		    size_t n)
{
	snprintf(out, n, "%s", runtime_name ? runtime_name : "");
	if (!target || strcmp(target, "openmp") != 0)
		return;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		const char *c = strchr(line, ':');
		if (!c)
			break;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, n, "%s", c);
		break;
	}
	fclose(f);
}

/* --- Shape dispatch: which of several records a launch takes ------------------- */

bool
tc_bucket_read(const TcRecord *r, int index, TcBucket *b, TcDiags *d)
{
	memset(b, 0, sizeof *b);
	b->rec = r;
	b->index = index;
	b->size = 1;
	const char *bk[1] = { "shape_bucket" };
	json_t *o = json_object_get(r->root, "shape_bucket");
	if (!json_is_object(o) || json_object_size(o) == 0 ||
	    json_object_size(o) > TC_BUCKET_MAX) {
		tc_diag(d, TC_ERROR, tc_json_key_loc(r->path, r->text, bk, 1),
			"key \"shape_bucket\": expected the integer scalars "
			"tuned for (1 to %d), each rounded up to a power of two "
			"(what tilec tune writes)", TC_BUCKET_MAX);
		return false;
	}
	const char *name;
	json_t *val;
	json_object_foreach(o, name, val) {
		if (!json_is_integer(val) || json_integer_value(val) < 1) {
			const char *kp[2] = { "shape_bucket", name };
			tc_diag(d, TC_ERROR, tc_json_key_loc(r->path, r->text,
							     kp, 2),
				"key \"shape_bucket.%s\": expected an integer "
				">= 1", name);
			return false;
		}
		b->name[b->n] = name;
		b->value[b->n++] = json_integer_value(val);
		b->size *= (double)json_integer_value(val);
	}
	return true;
}

static int
bucket_cmp(const void *pa, const void *pb)
{
	const TcBucket *a = pa, *b = pb;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return a->index - b->index;
}

bool
tc_buckets_order(TcBucket *b, int n, TcDiags *d)
{
	qsort(b, (size_t)n, sizeof *b, bucket_cmp);
	bool ok = true;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			if (!json_equal(json_object_get(b[i].rec->root,
							"shape_bucket"),
					json_object_get(b[j].rec->root,
							"shape_bucket")))
				continue;
			const TcBucket *later = b[i].index > b[j].index ? &b[i]
								       : &b[j];
			const TcBucket *first = later == &b[i] ? &b[j] : &b[i];
			const char *bk[1] = { "shape_bucket" };
			tc_diag(d, TC_ERROR, tc_json_key_loc(later->rec->path,
							     later->rec->text,
							     bk, 1),
				"key \"shape_bucket\": the bucket of %s too; "
				"give one record per bucket", first->rec->path);
			ok = false;
		}
	return ok;
}

bool
tc_bucket_holds(const TcBucket *b, const char *const *names,
		const long long *values, int nvalues, const char **missing)
{
	for (int i = 0; i < b->n; i++) {
		int j = 0;
		while (j < nvalues && strcmp(names[j], b->name[i]) != 0)
			j++;
		if (j == nvalues) {
			if (missing)
				*missing = b->name[i];
			return false;
		}
		if (values[j] > b->value[i])
			return false;
	}
	return true;
}

int
tc_records_select(const char *const *paths, int n, const char *const *names,
		  const long long *values, int nvalues, TcDiags *d, TcBuf *why)
{
	if (n < 1)
		return -1;
	TcRecord *recs = calloc((size_t)n, sizeof *recs);
	TcBucket *b = calloc((size_t)n, sizeof *b);
	int pick = -1;
	bool ok = recs && b;
	for (int i = 0; ok && i < n; i++)
		ok = tc_record_load(&recs[i], paths[i], d) &&
		     tc_bucket_read(&recs[i], i, &b[i], d);
	ok = ok && tc_buckets_order(b, n, d);
	/* Every scalar a bucket names must be the launch's. */
	for (int i = 0; ok && i < n; i++)
		for (int k = 0; ok && k < b[i].n; k++) {
			const char *name = b[i].name[k];
			int j = 0;
			while (j < nvalues && strcmp(names[j], name) != 0)
				j++;
			if (j < nvalues)
				continue;
			const char *kp[2] = { "shape_bucket", name };
			tc_diag(d, TC_ERROR, tc_json_key_loc(b[i].rec->path,
							     b[i].rec->text,
							     kp, 2),
				"key \"shape_bucket.%s\": the launch gives no "
				"value for %s", name, name);
			ok = false;
		}
	int at = n - 1;
	for (int i = 0; ok && i < n - 1; i++)
		if (tc_bucket_holds(&b[i], names, values, nvalues, NULL)) {
			at = i;
			break;
		}
	if (ok) {
		pick = b[at].index;
		if (why) {
			bool held = at < n - 1 ||
				    tc_bucket_holds(&b[at], names, values,
						    nvalues, NULL);
			/* In the launch's order of its scalars. */
			tc_buf_printf(why, "%s (", paths[pick]);
			int shown = 0;
			for (int j = 0; j < nvalues; j++)
				for (int i = 0; i < b[at].n; i++)
					if (strcmp(names[j], b[at].name[i]) == 0)
						tc_buf_printf(why, "%s%s <= %lld",
							      shown++ ? ", " : "",
							      b[at].name[i],
							      b[at].value[i]);
			tc_buf_printf(why, "%s)", held ? ""
				      : "; the largest bucket, which takes "
					"shapes past every bucket");
		}
	}
	for (int i = 0; recs && i < n; i++)
		tc_record_free(&recs[i]);
	free(recs);
	free(b);
	return pick;
}
