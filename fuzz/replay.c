/*
 * replay.c - run files through the fuzz target without libFuzzer.
 *
 *   rte-fuzz-replay FILE-OR-DIR...
 *
 * Each file (each regular file of a directory, in name order) is passed to
 * LLVMFuzzerTestOneInput once. Built with gcc and AddressSanitizer +
 * UndefinedBehaviorSanitizer, this replays fuzz/regressions/ and the seed
 * corpus on machines without clang. With RTE_FUZZ_DUMP set, stdout gets
 * the events of each input's final read as JSON lines. Exit status: 0 if every file ran (a
 * broken promise aborts), 2 on a usage or I/O error.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_input.h"

static int run_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!fp || fseek(fp, 0, SEEK_END) || (len = ftell(fp)) < 0 ||
	    fseek(fp, 0, SEEK_SET) || !(buf = malloc((size_t)len + 1)) ||
	    fread(buf, 1, (size_t)len, fp) != (size_t)len) {
		fprintf(stderr, "rte-fuzz-replay: %s: cannot read\n", path);
		if (fp)
			fclose(fp);
		free(buf);
		return -1;
	}
	fclose(fp);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Runs every regular file of dir; returns the count or -1. */
static int run_dir(const char *dir)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, by_name), ran = 0, err = 0;

	if (n < 0) {
		fprintf(stderr, "rte-fuzz-replay: %s: cannot list\n", dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name);
		if (!err && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path) < 0)
				err = 1;
			else
				ran++;
		}
		free(list[i]);
	}
	free(list);
	return err ? -1 : ran;
}

int main(int argc, char **argv)
{
	int total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: rte-fuzz-replay FILE-OR-DIR...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int n;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "rte-fuzz-replay: %s: no such file\n", argv[i]);
			return 2;
		}
		n = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) + 1;
		if (n < 0)
			return 2;
		total += n;
	}
	fprintf(stderr, "rte-fuzz-replay: %d inputs ran clean\n", total);
	return 0;
}
