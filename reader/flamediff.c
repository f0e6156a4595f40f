/*
 * flamediff.c - `rte-read diff -f flamegraph [OPTIONS] BASE NEW` (and its
 * alias `rte-read flamediff [OPTIONS] BASE NEW`): the differential
 * flame graph of two runs' profiles (fmt/flame.c): NEW's frames, their
 * widths NEW's samples, each red where its share of the samples grew from
 * BASE to NEW, blue where it shrank (FlameGraph's difffolded.pl's
 * reading). Each run's profile is rte-read's own folded output (itself,
 * through /proc/self/exe), so both are the same profile model as every
 * other format. Not thread-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flamediff.h"
#include "out.h"
#include "profile_int.h"
#include "selfrun.h"

static const char usage[] =
"usage: rte-read diff -f flamegraph [-o FILE] [--profile=cpu|alloc|inuse]\n"
"                     [--state=running|blocked] [--by exe] [--no-inline]\n"
"                     BASE NEW\n"
"       rte-read flamediff [the same options, -f flamegraph implied]\n"
"  The differential flame graph (SVG) of two runs' profiles (ring files,\n"
"  directories or pids, as rte-read reads): NEW's stacks, red where a\n"
"  frame's share of the samples grew since BASE, blue where it shrank.\n";

int rd_flamediff_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-fflamegraph") || !strcmp(a, "--format=flamegraph"))
			return 1;
		if ((!strcmp(a, "-f") || !strcmp(a, "--format")) && i + 1 < argc) {
			if (!strcmp(argv[i + 1], "flamegraph"))
				return 1;
			i++; /* the format's value */
		} else if (!strcmp(a, "--fail-if") || !strcmp(a, "-o") ||
		           !strcmp(a, "--output") || !strcmp(a, "--profile") ||
		           !strcmp(a, "--state") || !strcmp(a, "--by")) {
			i++; /* an option's value, never a format */
		}
	}
	return 0;
}

/* rte-read -f folded OPTS -- path: its output, or NULL (it said why). */
static char *folded(const char *path, char *const *opts, int nopts)
{
	char *argv[16];
	int n = 0;

	argv[n++] = "rte-read";
	argv[n++] = "-f";
	argv[n++] = "folded";
	for (int i = 0; i < nopts && n < 12; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	argv[n++] = (char *)path;
	argv[n] = NULL;
	return rd_self_run(argv, (size_t)1 << 30, NULL);
}

/* Add every "a;b;c N" line of text to t: as the new value (is_new) or
 * the base one. Lines that are not such are skipped. */
static int add_lines(struct rd_prof *p, struct ftree *t, char *text, int is_new)
{
	uint32_t names[RD_PROF_MAX_LOCS + 4];

	for (char *line = text, *next; line && *line; line = next) {
		char *sp, *end, *f, *save = NULL;
		unsigned long long v;
		uint32_t n = 0;

		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if (!(sp = strrchr(line, ' ')))
			continue;
		*sp = '\0';
		v = strtoull(sp + 1, &end, 10);
		if (*end || end == sp + 1)
			continue;
		for (f = strtok_r(line, ";", &save); f && n < sizeof names / 4;
		     f = strtok_r(NULL, ";", &save))
			names[n++] = pstr_id(p, f);
		if (rd_flame_add(t, names, n, is_new ? v : 0, is_new ? 0 : v) < 0)
			return -1;
	}
	return 0;
}

int rd_flamediff_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "profile", required_argument, NULL, 'p' },
		{ "state", required_argument, NULL, 's' },
		{ "by", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "no-inline", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char optbuf[4][64], *opts[4], *a = NULL, *b = NULL;
	const char *outp = NULL;
	int nopts = 0, c, fd = 1, rc = 1;
	struct rd_prof *p = NULL;
	struct rd_out o;
	struct ftree t = { NULL, 0, 0, 0 };

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:f:h", lo, NULL)) != -1) {
		if (c == 'o') {
			outp = optarg;
		} else if (c == 'f' && !strcmp(optarg, "flamegraph")) {
			continue; /* the only format of a differential profile */
		} else if (c == 'n' && nopts < 4) {
			static char noinl[] = "--no-inline";

			opts[nopts++] = noinl;
		} else if ((c == 'p' || c == 's' || c == 'b') && nopts < 4) {
			snprintf(optbuf[nopts], sizeof optbuf[0], "--%s=%s",
			         c == 'p' ? "profile" : c == 's' ? "state" : "by",
			         optarg);
			opts[nopts] = optbuf[nopts];
			nopts++;
		} else {
			fputs(usage, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (argc - optind != 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!(a = folded(argv[optind], opts, nopts)) ||
	    !(b = folded(argv[optind + 1], opts, nopts))) {
		fprintf(stderr, "rte-read: flamediff: cannot read the profile of %s\n",
		        a ? argv[optind + 1] : argv[optind]);
		goto out;
	}
	if (!(p = rd_prof_new()) || rd_flame_init(&t) < 0 ||
	    add_lines(p, &t, a, 0) < 0 || add_lines(p, &t, b, 1) < 0) {
		fprintf(stderr, "rte-read: flamediff: out of memory\n");
		goto out;
	}
	if (outp && (fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	                       0666)) < 0) {
		fprintf(stderr, "rte-read: %s: %s\n", outp, strerror(errno));
		goto out;
	}
	if (rd_out_init(&o, fd, outp ? outp : "standard output") < 0) {
		fprintf(stderr, "rte-read: flamediff: out of memory\n");
		if (fd != 1)
			close(fd);
		goto out;
	}
	rd_flame_write(p, &t, "rte differential flame graph: red grew, blue shrank",
	               1, &o);
	rc = rd_out_fini(&o) < 0;
	if (fd != 1)
		close(fd);
out:
	rd_flame_fini(&t);
	rd_prof_free(p);
	free(a);
	free(b);
	return rc;
}
