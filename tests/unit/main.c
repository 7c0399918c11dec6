/*
 * main.c - the unit test runner.
 *
 * `unit` runs every suite, `unit NAME...` the named ones (tests/meson.build
 * registers one meson test per suite).  Exit status 0 when every test
 * passed, 1 otherwise, 2 for an unknown suite name.
 */
#include "unit.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;     /* as given on the command line */
	Suite *(*make)(void); /* builds the suite */
} suites[] = {
#define X(name) { #name, unit_suite_##name },
	UNIT_SUITES(X)
#undef X
};

#define NSUITES (sizeof suites / sizeof suites[0])

int
main(int argc, char **argv)
{
	SRunner *sr = NULL;
	for (size_t i = 0; i < NSUITES; i++) {
		bool wanted = argc < 2;
		for (int j = 1; j < argc; j++)
			wanted = wanted || strcmp(argv[j], suites[i].name) == 0;
		if (!wanted)
			continue;
		if (!sr)
			sr = srunner_create(suites[i].make());
		else
			srunner_add_suite(sr, suites[i].make());
	}
	for (int j = 1; j < argc; j++) {
		bool known = false;
		for (size_t i = 0; i < NSUITES; i++)
			known = known || strcmp(argv[j], suites[i].name) == 0;
		if (!known) {
			fprintf(stderr, "unit: no suite named '%s'\n", argv[j]);
			if (sr)
				srunner_free(sr);
			return 2;
		}
	}
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
