/*
 * fmt/summary_run.c - summary-json's "run": each phase and span name of
 * the whole run, its processes' histograms merged (fmt/summary.h), so the
 * run's percentiles are computed from every duration, as one process's
 * are. rte-read diff compares these (diff_load.c).
 */
#include <stdlib.h>
#include <string.h>

#include "summary.h"

static size_t slot_of(const struct rd_sum_run *R, int fam, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)fam;
	size_t i;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	for (i = (size_t)h & (R->cap - 1);; i = (i + 1) & (R->cap - 1))
		if (!R->e[i].name || (R->e[i].fam == fam && !strcmp(R->e[i].name, name)))
			return i;
}

static int grow(struct rd_sum_run *R)
{
	struct rd_sum_run old = *R;
	size_t cap = R->cap ? 2 * R->cap : 64;

	if (!(R->e = calloc(cap, sizeof *R->e))) {
		R->e = old.e;
		return -1;
	}
	R->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.e[i].name)
			R->e[slot_of(R, old.e[i].fam, old.e[i].name)] = old.e[i];
	free(old.e);
	return 0;
}

void rd_sum_run_add(struct rd_sum_run *R, const struct rd_entry *e)
{
	struct rd_sum_run_ent *x;

	if (e->fam != F_PHASE && e->fam != F_SPAN)
		return;
	if (2 * (R->n + 1) > R->cap && grow(R) < 0) {
		R->oom = 1;
		return;
	}
	x = &R->e[slot_of(R, e->fam, e->name)];
	if (!x->name) {
		if (!(x->h = rd_hist_new()) || !(x->name = strdup(e->name))) {
			free(x->h);
			x->h = NULL;
			R->oom = 1;
			return;
		}
		x->fam = e->fam;
		R->n++;
	}
	/* A process's few durations are added one by one (a whole
	 * histogram's merge is 5 k buckets: 100 000 small files would pay it
	 * for every name); past SMALL_DURS it has a histogram to merge. */
	if (e->h)
		rd_hist_merge(x->h, e->h);
	else
		for (unsigned i = 0; i < e->ndur; i++)
			rd_hist_add(x->h, e->dur[i]);
	x->count += e->count;
	x->unmatched += e->unmatched;
	x->unfinished += e->unfinished;
	x->procs++;
}

static int by_total(const void *a, const void *b)
{
	const struct rd_sum_run_ent *x = *(const struct rd_sum_run_ent *const *)a;
	const struct rd_sum_run_ent *y = *(const struct rd_sum_run_ent *const *)b;

	if (x->h->sum != y->h->sum)
		return x->h->sum > y->h->sum ? -1 : 1;
	return strcmp(x->name, y->name);
}

void rd_sum_json_run(struct rd_out *o, const struct rd_sum_run *R)
{
	static const char *const key[2] = { "phases", "spans" };
	const struct rd_sum_run_ent **v = calloc(R->n ? R->n : 1, sizeof *v);
	size_t n;

	rd_out_str(o, ",\"run\":{");
	for (int fam = F_PHASE; fam <= F_SPAN; fam++) {
		n = 0;
		for (size_t i = 0; v && i < R->cap; i++)
			if (R->e[i].name && R->e[i].fam == fam)
				v[n++] = &R->e[i];
		qsort(v, n, sizeof *v, by_total);
		rd_outf(o, "%s\"%s\":[", fam == F_PHASE ? "" : ",", key[fam]);
		for (size_t i = 0; i < n; i++) {
			int f = 1;

			rd_out_str(o, i ? ",{" : "{");
			rd_out_json_key(o, &f, "name");
			rd_out_json_str(o, v[i]->name);
			rd_out_json_u(o, &f, "count", v[i]->count);
			rd_sum_json_hist(o, &f, v[i]->h);
			rd_out_json_u(o, &f, "unmatched_ends", v[i]->unmatched);
			rd_out_json_u(o, &f, "unfinished", v[i]->unfinished);
			rd_out_json_u(o, &f, "processes", v[i]->procs);
			rd_out_ch(o, '}');
		}
		rd_out_ch(o, ']');
	}
	rd_out_str(o, ",\"complete\":");
	rd_out_str(o, R->oom || !v ? "false" : "true");
	rd_out_ch(o, '}');
	free(v);
}

void rd_sum_run_free(struct rd_sum_run *R)
{
	for (size_t i = 0; i < R->cap; i++) {
		free(R->e[i].name);
		free(R->e[i].h);
	}
	free(R->e);
	memset(R, 0, sizeof *R);
}
