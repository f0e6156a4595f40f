/*
 * diff_int.h - what diff.c (thresholds, output, main) and diff_load.c (the
 * runs loaded from summary-json) share: a run's figures, entry by entry.
 * Internal to rte-read diff: diff.h is the interface.
 */
#ifndef RD_DIFF_INT_H
#define RD_DIFF_INT_H

#include <stddef.h>

/* Figures of an entry, in this order everywhere. */
enum fig { G_COUNT, G_TOTAL, G_P50, G_P99, G_MAX, G_NFIG };

/* Whole-run figures. */
enum gfig { GC_PCT, GC_MINOR, GC_PROMOTED, GC_MAJOR, GC_NFIG };

struct ent {
	char *name;
	int span; /* 0 runtime phase, 1 user span */
	double f[G_NFIG];
};

struct run {
	const char *path;
	struct ent *e;
	size_t n, cap;
	double g[GC_NFIG];
	int has_g[GC_NFIG];
	double gc_ns, cpu_ns;
};

/* Load the run at path (ring files, a directory or a summary-json file)
 * into R: 0, or -1 with one line in err. */
int rd_diff_load(struct run *R, const char *path, char *err, size_t errlen);
void rd_diff_free_run(struct run *R);

#endif
