/*
 * fmt/summary_run.c - summary-json's "run": each phase and span name of
 * the whole run, its processes' histograms merged (fmt/summary.h), so the
 * run's percentiles are computed from every duration, as one process's
 * are. rte-read diff compares these (diff_load.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "vec.h"

/* The entry of e's family and name, made if new; NULL if out of memory. */
static struct rd_sum_run_ent *entry_of(struct rd_sum_run *R, const struct rd_entry *e)
{
	size_t len = strlen(e->name);
	char key[256], *k = len < sizeof key ? key : malloc(len + 1);
	struct rd_sum_run_ent *x = NULL;
	int64_t i;
	int isnew;

	if (!k || len >= UINT32_MAX)
		goto out;
	k[0] = (char)('0' + e->fam); /* family first: a phase and a span may share a name */
	memcpy(k + 1, e->name, len);
	if ((i = ptab_get(&R->names, k, (uint32_t)len + 1, &isnew)) < 0)
		goto out;
	if (isnew) {
		if (RD_VEC_ROOM(R->e, R->cap, R->n, 16) < 0)
			goto out; /* (the name stays known: R->oom is set) */
		x = &R->e[R->n++];
		memset(x, 0, sizeof *x);
		x->fam = e->fam;
		x->name = R->names.e[i].key + 1;
		if (!(x->h = rd_hist_new())) {
			R->n--;
			x = NULL;
			goto out;
		}
	} else if ((size_t)i < R->n) {
		x = &R->e[i];
	}
out:
	if (k != key)
		free(k);
	return x;
}

void rd_sum_run_add(struct rd_sum_run *R, const struct rd_entry *e)
{
	struct rd_sum_run_ent *x;

	if (e->fam != F_PHASE && e->fam != F_SPAN)
		return;
	if (R->oom || !(x = entry_of(R, e))) {
		R->oom = 1;
		return;
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
		for (size_t i = 0; v && i < R->n; i++)
			if (R->e[i].fam == fam)
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
	for (size_t i = 0; i < R->n; i++)
		free(R->e[i].h);
	free(R->e);
	ptab_fini(&R->names);
	memset(R, 0, sizeof *R);
}
