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
