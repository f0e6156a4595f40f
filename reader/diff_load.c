/*
 * diff_load.c - the runs of rte-read diff (see diff.h): each input loaded
 * as a summary-json document (read as is, or rte-read's own summary-json
 * of ring files or a directory) and its phases and spans taken into one
 * table of entries by kind and name (diff.c compares two of them): the
 * document's "run" (every process's durations together), or, in a
 * document without one, its processes folded (p50/p99/max the largest).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdint.h>
#include <unistd.h>

#include "diff_int.h"
#include "selfrun.h"
#include "jsonp.h"

#define MAX_INPUT ((size_t)256 << 20)

/* The summary-json keys of the figures of an entry (enum fig). */
static const char *const fig_key[G_NFIG] = { "count", "total_ns", "p50_ns", "p99_ns", "max_ns" };

/* 1 if path is a regular file whose first non-blank byte is '{'. */
static int is_json_file(const char *path)
{
	struct stat st;
	FILE *f;
	int c;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb")))
		return 0;
	while ((c = getc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{';
}

/* The summary-json of a ring file, directory or pid: rte-read's own. */
static char *summarise(const char *path, size_t *len)
{
	char *const argv[] = { "rte-read", "-f", "summary-json", "--", (char *)path, NULL };

	return rd_self_run(argv, MAX_INPUT, len);
}

static struct ent *find(struct run *R, const char *name, int span)
{
	for (size_t i = 0; i < R->n; i++)
		if (R->e[i].span == span && !strcmp(R->e[i].name, name))
			return &R->e[i];
	if (R->n == R->cap) {
		size_t cap = R->cap ? 2 * R->cap : 32;
		struct ent *n = realloc(R->e, cap * sizeof *n);

		if (!n)
			return NULL;
		R->e = n;
		R->cap = cap;
	}
	memset(&R->e[R->n], 0, sizeof R->e[R->n]);
	if (!(R->e[R->n].name = strdup(name)))
		return NULL;
	R->e[R->n].span = span;
	return &R->e[R->n++];
}

static int fold_entries(struct run *R, const struct rd_jv *arr, int span)
{
	for (size_t i = 0; arr && arr->t == RD_JARR && i < arr->n; i++) {
		const struct rd_jv *o = &arr->v[i], *nm = rd_json_get(o, "name");
		struct ent *e;

		if (!nm || nm->t != RD_JSTR)
			continue;
		if (!(e = find(R, nm->str, span)))
			return -1;
		for (int f = 0; f < G_NFIG; f++) {
			double v = rd_json_num(o, fig_key[f], 0);

			if (f <= G_TOTAL)
				e->f[f] += v;
			else if (v > e->f[f])
				e->f[f] = v;
		}
	}
	return 0;
}

static void fold_gc(struct run *R, const struct rd_jv *gc)
{
	const struct rd_jv *a = rd_json_get(gc, "allocations");
	static const char *const akey[] = { NULL, "minor_words", "promoted_words", "major_words" };

	if (!gc || gc->t != RD_JOBJ)
		return;
	R->gc_ns += rd_json_num(gc, "gc_ns", 0);
	R->cpu_ns += rd_json_num(gc, "cpu_ns", 0);
	R->has_g[GC_PCT] = 1;
	for (int g = GC_MINOR; g < GC_NFIG; g++) {
		const struct rd_jv *v = rd_json_get(a, akey[g]);

		if (v && v->t == RD_JNUM) {
			R->g[g] += v->num;
			R->has_g[g] = 1;
		}
	}
}

int rd_diff_load(struct run *R, const char *path, char *err, size_t errlen)
{
	const struct rd_jv *procs, *run;
	struct rd_jv *doc;
	size_t len = 0;
	char *text, why[160];
	int fd;

	R->path = path;
	if (is_json_file(path)) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		text = rd_read_fd(fd, MAX_INPUT, &len);
		close(fd);
	} else {
		text = summarise(path, &len);
	}
	if (!text) {
		snprintf(err, errlen, "%s: cannot be summarised (see above) or read", path);
		return -1;
	}
	doc = rd_json_parse(text, len, why, sizeof why);
	free(text);
	if (!doc) {
		snprintf(err, errlen, "%s: not summary-json: %s", path, why);
		return -1;
	}
	procs = rd_json_get(doc, "processes");
	if (!procs || procs->t != RD_JARR) {
		rd_json_free(doc);
		snprintf(err, errlen, "%s: not summary-json: no \"processes\" array", path);
		return -1;
	}
	/* The run's own phases and spans (their percentiles from every
	 * duration); a document without them (an older rte-read's) is folded
	 * from its processes, each percentile the largest of any. */
	run = rd_json_get(doc, "run");
	if (run && run->t != RD_JOBJ)
		run = NULL;
	if (run && (fold_entries(R, rd_json_get(run, "phases"), 0) ||
	            fold_entries(R, rd_json_get(run, "spans"), 1)))
		goto oom;
	for (size_t i = 0; i < procs->n; i++) {
		const struct rd_jv *p = &procs->v[i];

		if (!run && (fold_entries(R, rd_json_get(p, "phases"), 0) ||
		     fold_entries(R, rd_json_get(p, "spans"), 1)))
			goto oom;
		fold_gc(R, rd_json_get(p, "gc"));
	}
	R->g[GC_PCT] = R->cpu_ns > 0 ? 100.0 * R->gc_ns / R->cpu_ns : 0;
	rd_json_free(doc);
	return 0;
oom:
	rd_json_free(doc);
	snprintf(err, errlen, "out of memory");
	return -1;
}

void rd_diff_free_run(struct run *R)
{
	for (size_t i = 0; i < R->n; i++)
		free(R->e[i].name);
	free(R->e);
}
