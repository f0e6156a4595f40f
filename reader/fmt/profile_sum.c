/*
 * fmt/profile_sum.c - the summary's profile section (profile.h,
 * rd_prof_summary), text or JSON: the CPU profile's top functions and
 * spans and the allocation profile's sites, live bytes and histogram of
 * each process, rendered from the aggregates profile.c computed into the
 * run model (tallies by function are summed here from its stacks, for
 * the rendering only).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"
#include "rte/crash.h"
#include "rte/profile.h"

/* ---- the summary ------------------------------------------------------ */

#define TOP_FUNCS 10u
#define TOP_SPANS 5u
#define TOP_SPAN_FUNCS 3u
#define TOP_SITES 10u
#define TOP_LIVE 10u

/* A value per string id (function names, span tags), and the ids sorted
 * by it. */
struct tally {
	double *v;
	uint32_t *ids;
	uint32_t n;
};

static int tally_init(struct tally *t, const struct rd_prof *p)
{
	t->n = 0;
	t->v = calloc(p->strs.n + 1, sizeof *t->v);
	t->ids = malloc((p->strs.n + 1) * sizeof *t->ids);
	return t->v && t->ids ? 0 : -1;
}

static const double *g_sort_v;

static int by_value(const void *a, const void *b)
{
	double x = g_sort_v[*(const uint32_t *)a], y = g_sort_v[*(const uint32_t *)b];

	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void tally_sort(struct tally *t, uint32_t nstr)
{
	t->n = 0;
	for (uint32_t i = 0; i < nstr; i++)
		if (t->v[i] > 0)
			t->ids[t->n++] = i;
	g_sort_v = t->v;
	qsort(t->ids, t->n, sizeof *t->ids, by_value);
}

static void tally_fini(struct tally *t)
{
	free(t->v);
	free(t->ids);
}

static uint32_t fname(const struct rd_prof *p, uint32_t loc)
{
	return p->fn[p->loc[loc].func].name;
}

/* Self (leaf) and total (anywhere in the stack, once) samples per function
 * of process proc's CPU stacks, those of span tag `tag` only if tag. */
static void cpu_funcs(const struct rd_prof *p, uint32_t proc, uint32_t tag,
                      int only_tag, struct tally *self, struct tally *total,
                      uint32_t *mark)
{
	for (uint32_t i = 0; i < p->cst.n; i++) {
		const struct skey *k = pkey(&p->cst, i);
		double v = (double)p->cv[i].samples;

		if (k->proc != proc || (only_tag && k->tag != tag))
			continue;
		if (k->n)
			self->v[fname(p, k->loc[0])] += v;
		if (!total)
			continue;
		for (uint32_t j = 0; j < k->n; j++) {
			uint32_t f = fname(p, k->loc[j]);

			if (mark[f] != i + 1) {
				mark[f] = i + 1;
				total->v[f] += v;
			}
		}
	}
}

static void json_num(struct rd_out *o, int *first, const char *k, double v)
{
	rd_out_json_key(o, first, k);
	rd_outf(o, "%.3f", isfinite(v) ? v : 0.0);
}

static void json_s(struct rd_out *o, int *first, const char *k, const char *v)
{
	rd_out_json_key(o, first, k);
	rd_out_json_str(o, v);
}

/* Which samples a top list counts (rd_prof_hot_line's arguments). */
struct where { uint32_t proc, tag; int only_tag, self; };

/* Top functions: text lines "N share% name (file:line)" or a JSON array
 * of {function, file, line, samples, share}: file:line where most of its
 * samples were (fmt/profile_line.c), null where none has a line. */
static void top_funcs(const struct rd_prof *p, struct rd_out *o, int json,
                      const struct tally *t, unsigned max, double all,
                      const char *indent, struct where w)
{
	if (json)
		rd_out_ch(o, '[');
	for (uint32_t i = 0; i < t->n && i < max; i++) {
		uint32_t id = t->ids[i];
		double v = t->v[id];
		const char *file = NULL;
		int line = 0, has;

		has = rd_prof_hot_line(p, w.proc, w.tag, w.only_tag, id, w.self,
		                       &file, &line);
		if (json) {
			int f = 1;

			if (i)
				rd_out_ch(o, ',');
			rd_out_ch(o, '{');
			json_s(o, &f, "function", pstr(p, id));
			rd_out_json_key(o, &f, "file");
			has ? rd_out_json_str(o, file) : rd_out_str(o, "null");
			rd_out_json_key(o, &f, "line");
			has ? rd_out_u64(o, (uint64_t)line) : rd_out_str(o, "null");
			rd_out_json_u(o, &f, "samples", (uint64_t)v);
			json_num(o, &f, "share", all > 0 ? v / all : 0);
			rd_out_ch(o, '}');
		} else {
			rd_outf(o, "%s%10" PRIu64 " %6.2f%%  %s", indent, (uint64_t)v,
			        all > 0 ? 100.0 * v / all : 0.0, pstr(p, id));
			if (has)
				rd_outf(o, " (%s:%d)", file, line);
			rd_out_ch(o, '\n');
		}
	}
	if (json)
		rd_out_ch(o, ']');
}

static double rate_of(const struct pthr *t)
{
	return t->cpu_ns ? (double)t->samples * 1e9 / (double)t->cpu_ns : 0.0;
}

/* The thread table's time column: CPU time, or wall time of wall mode's
 * threads (RTE_SAMPLE_WALL); "time" if the process has both (exec
 * images of one pid profiled differently). */
static const char *time_label(const struct pproc *pp)
{
	unsigned wall = 0;

	for (unsigned i = 0; i < pp->nthr; i++)
		wall += pp->thr[i].wall != 0;
	return !wall ? "cpu" : wall == pp->nthr ? "wall" : "time";
}

static void cpu_section(struct rd_prof *p, struct rd_out *o,
                        const struct pproc *pp, uint32_t proc, int json)
{
	struct tally self, total, sp, ss;
	struct where ws = { proc, 0, 0, 1 }, wt = { proc, 0, 0, 0 };
	uint32_t *mark = calloc(p->strs.n + 1, sizeof *mark);
	double all = (double)pp->cpu_samples;
	char why[200];
	int f = 1;

	memset(&ss, 0, sizeof ss);
	if (!mark || tally_init(&self, p) || tally_init(&total, p) ||
	    tally_init(&sp, p) || tally_init(&ss, p)) {
		p->oom = 1;
		goto out;
	}
	cpu_funcs(p, proc, 0, 0, &self, &total, mark);
	tally_sort(&self, p->strs.n);
	tally_sort(&total, p->strs.n);
	for (uint32_t i = 0; i < p->cst.n; i++)
		if (pkey(&p->cst, i)->proc == proc && pkey(&p->cst, i)->tag)
			sp.v[pkey(&p->cst, i)->tag] += (double)p->cv[i].samples;
	tally_sort(&sp, p->strs.n);
	if (json) {
		rd_out_str(o, ",\"cpu_profile\":{");
		rd_out_json_u(o, &f, "samples", pp->cpu_samples);
		rd_out_json_u(o, &f, "cpu_ns", pp->cpu_ns);
		rd_out_json_u(o, &f, "outside_span", pp->outside_cpu);
		rd_out_json_u(o, &f, "malformed", pp->bad_cpu);
		json_s(o, &f, "clock", pp->nclock ? rd_prof_clock(pp->clock[0], why,
		                                                  sizeof why)
		                                  : "");
		rd_out_json_key(o, &f, "threads");
		rd_out_ch(o, '[');
		for (unsigned i = 0; i < pp->nthr; i++) {
			const struct pthr *t = &pp->thr[i];
			int g = 1;

			if (i)
				rd_out_ch(o, ',');
			rd_out_ch(o, '{');
			rd_out_json_u(o, &g, "ring", t->ring);
			rd_out_json_key(o, &g, "tid");
			rd_out_i64(o, t->tid);
			rd_out_json_key(o, &g, "thread");
			if (t->name[0])
				rd_out_json_str(o, t->name);
			else
				rd_out_str(o, "null");
			rd_out_json_u(o, &g, "samples", t->samples);
			rd_out_json_u(o, &g, "cpu_ns", t->cpu_ns);
			rd_out_json_u(o, &g, "hz", t->hz);
			json_num(o, &g, "effective_hz", rate_of(t));
			rd_out_ch(o, '}');
		}
		rd_out_ch(o, ']');
		rd_prof_blocked_section(p, o, pp, proc, 1);
		rd_out_json_key(o, &f, "top_self");
		top_funcs(p, o, 1, &self, TOP_FUNCS, all, "", ws);
		rd_out_json_key(o, &f, "top_total");
		top_funcs(p, o, 1, &total, TOP_FUNCS, all, "", wt);
		rd_out_json_key(o, &f, "spans");
		rd_out_ch(o, '[');
	} else {
		rd_outf(o, "\n  CPU profile (rte.sample): %" PRIu64 " samples, %.3f s %s",
		        pp->cpu_samples, (double)pp->cpu_ns / 1e9,
		        pp->nclock && pp->clock[0] & RTE_SAMPLE_WALL ? "of thread wall time"
		                                                     : "CPU");
		if (rd_prof_span_opt)
			rd_outf(o, ", inside span %s (%" PRIu64 " outside)",
			        rd_prof_span_opt, pp->outside_cpu);
		if (pp->bad_cpu)
			rd_outf(o, ", %" PRIu64 " malformed skipped", pp->bad_cpu);
		for (unsigned i = 0; i < pp->nclock; i++)
			rd_outf(o, "\n    clock: %s",
			        rd_prof_clock(pp->clock[i], why, sizeof why));
		rd_outf(o, "\n    %-5s %-8s %-16s %9s %12s %8s %12s\n", "ring", "tid",
		        "thread", "samples", time_label(pp), "asked", "effective");
		for (unsigned i = 0; i < pp->nthr; i++) {
			const struct pthr *t = &pp->thr[i];

			rd_outf(o, "    %-5u %-8ld %-16s %9" PRIu64 " %10.3f s %6u Hz %9.1f Hz\n",
			        t->ring, t->tid, t->name[0] ? t->name : "-", t->samples,
			        (double)t->cpu_ns / 1e9, t->hz, rate_of(t));
		}
		rd_prof_blocked_section(p, o, pp, proc, 0);
		rd_outf(o, "    top functions by self samples:\n");
		top_funcs(p, o, 0, &self, TOP_FUNCS, all, "    ", ws);
		rd_outf(o, "    top functions by total samples:\n");
		top_funcs(p, o, 0, &total, TOP_FUNCS, all, "    ", wt);
		if (sp.n)
			rd_outf(o, "    top spans (innermost span or phase at the sample):\n");
	}
	for (uint32_t i = 0; i < sp.n && i < TOP_SPANS; i++) {
		uint32_t tag = sp.ids[i];
		struct where wsp = { proc, tag, 1, 1 };
		int g = 1;

		memset(ss.v, 0, (p->strs.n + 1) * sizeof *ss.v);
		cpu_funcs(p, proc, tag, 1, &ss, NULL, mark);
		tally_sort(&ss, p->strs.n);
		if (json) {
			if (i)
				rd_out_ch(o, ',');
			rd_out_ch(o, '{');
			json_s(o, &g, "name", pstr(p, tag));
			rd_out_json_u(o, &g, "samples", (uint64_t)sp.v[tag]);
			rd_out_json_key(o, &g, "top_self");
			top_funcs(p, o, 1, &ss, TOP_SPAN_FUNCS, sp.v[tag], "", wsp);
			rd_out_ch(o, '}');
		} else {
			rd_outf(o, "    %10" PRIu64 " %6.2f%%  %s\n", (uint64_t)sp.v[tag],
			        all > 0 ? 100.0 * sp.v[tag] / all : 0.0, pstr(p, tag));
			top_funcs(p, o, 0, &ss, TOP_SPAN_FUNCS, sp.v[tag], "      ", wsp);
		}
	}
	if (json)
		rd_out_str(o, "]}");
out:
	free(mark);
	tally_fini(&self);
	tally_fini(&total);
	tally_fini(&sp);
	tally_fini(&ss);
}

static void bucket_label(unsigned i, char *b, size_t len)
{
	if (i < 10)
		snprintf(b, len, "%u", i);
	else if (i < RTE_ALLOC_BUCKETS - 1)
		snprintf(b, len, "%u-%u", (i - 9) * 10, (i - 9) * 10 + 9);
	else
		snprintf(b, len, "100+");
}

/* Stacks of proc's allocations sorted by a value. */
static const struct rd_prof *g_sort_p;
static int g_sort_live;

static int by_bytes(const void *a, const void *b)
{
	const struct aval *x = &g_sort_p->av[*(const uint32_t *)a];
	const struct aval *y = &g_sort_p->av[*(const uint32_t *)b];
	double u = g_sort_live ? x->ibytes : x->abytes;
	double v = g_sort_live ? y->ibytes : y->abytes;

	if (u != v)
		return u > v ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void stack_lines(const struct rd_prof *p, struct rd_out *o, int json,
                        const struct skey *k)
{
	if (json)
		rd_out_ch(o, '[');
	for (uint32_t j = 0; j < k->n; j++) {
		const struct ploc *l = &p->loc[k->loc[j]];
		const struct pfunc *fn = &p->fn[l->func];
		char b[1024];

		if (fn->file)
			snprintf(b, sizeof b, "%s (%s:%d)", pstr(p, fn->name),
			         pstr(p, fn->file), l->line);
		else
			snprintf(b, sizeof b, "%s", pstr(p, fn->name));
		if (json) {
			if (j)
				rd_out_ch(o, ',');
			rd_out_json_str(o, b);
		} else {
			rd_outf(o, "        #%-2u 0x%016" PRIx64 " %s\n", j, l->pc, b);
		}
	}
	if (json)
		rd_out_ch(o, ']');
}

/* Top allocation sites (the allocator's caller) by estimated bytes. */
static void alloc_sites(struct rd_prof *p, struct rd_out *o, uint32_t proc,
                        int json, double allbytes)
{
	struct tally b, obj, n, var;
	int f;

	memset(&obj, 0, sizeof obj);
	memset(&n, 0, sizeof n);
	memset(&var, 0, sizeof var);
	if (tally_init(&b, p) || tally_init(&obj, p) || tally_init(&n, p) ||
	    tally_init(&var, p)) {
		p->oom = 1;
		goto out;
	}
	for (uint32_t i = 0; i < p->ast.n; i++) {
		const struct skey *k = pkey(&p->ast, i);
		uint32_t fnm;

		if (k->proc != proc)
			continue;
		fnm = k->n ? fname(p, k->loc[0]) : pstr_id(p, "(no stack)");
		b.v[fnm] += p->av[i].abytes;
		obj.v[fnm] += p->av[i].aobj;
		n.v[fnm] += (double)p->av[i].n;
		var.v[fnm] += p->av[i].avar;
	}
	tally_sort(&b, p->strs.n);
	if (json)
		rd_out_ch(o, '[');
	else if (b.n)
		rd_outf(o, "    top allocation sites (estimated; +- is the relative standard error):\n"
		           "    %14s %12s %8s %7s  %s\n", "bytes", "objects", "samples", "+-", "site");
	for (uint32_t i = 0; i < b.n && i < TOP_SITES; i++) {
		uint32_t id = b.ids[i];
		/* the estimate's standard error over the estimate: about
		 * 1/sqrt(samples) for blocks of one size, more where a few
		 * small blocks (rarely sampled) stand for many bytes, 0 for
		 * blocks every one of which was sampled */
		double rse = n.v[id] > 0 && b.v[id] > 0 ? sqrt(var.v[id]) / b.v[id] : 1.0;

		if (json) {
			f = 1;
			if (i)
				rd_out_ch(o, ',');
			rd_out_ch(o, '{');
			json_s(o, &f, "function", pstr(p, id));
			json_num(o, &f, "est_bytes", b.v[id]);
			json_num(o, &f, "est_objects", obj.v[id]);
			rd_out_json_u(o, &f, "samples", (uint64_t)n.v[id]);
			json_num(o, &f, "rel_error", rse);
			json_num(o, &f, "share", allbytes > 0 ? b.v[id] / allbytes : 0);
			rd_out_ch(o, '}');
		} else {
			rd_outf(o, "    %14.0f %12.0f %8.0f %6.1f%%  %s\n", b.v[id], obj.v[id],
			        n.v[id], 100.0 * rse, pstr(p, id));
		}
	}
	if (json)
		rd_out_ch(o, ']');
out:
	tally_fini(&b);
	tally_fini(&obj);
	tally_fini(&n);
	tally_fini(&var);
}

/* The sampled allocations still live at the end, by stack. */
static void alloc_live(struct rd_prof *p, struct rd_out *o, uint32_t proc,
                       int json, const struct pproc *pp)
{
	uint32_t *ids = malloc((p->ast.n + 1) * sizeof *ids), n = 0;
	double live = 0;

	if (!ids) {
		p->oom = 1;
		return;
	}
	for (uint32_t i = 0; i < p->ast.n; i++)
		if (pkey(&p->ast, i)->proc == proc && p->av[i].nlive) {
			ids[n++] = i;
			live += p->av[i].ibytes;
		}
	g_sort_p = p;
	g_sort_live = 1;
	qsort(ids, n, sizeof *ids, by_bytes);
	if (json) {
		int f = 1;

		rd_out_str(o, ",\"live_est_bytes\":");
		rd_outf(o, "%.3f", live);
		rd_out_str(o, ",\"live\":[");
		for (uint32_t i = 0; i < n && i < TOP_LIVE; i++) {
			const struct aval *v = &p->av[ids[i]];

			f = 1;
			if (i)
				rd_out_ch(o, ',');
			rd_out_ch(o, '{');
			json_num(o, &f, "est_bytes", v->ibytes);
			json_num(o, &f, "est_objects", v->iobj);
			rd_out_json_u(o, &f, "samples", v->nlive);
			rd_out_json_u(o, &f, "sampled_bytes", v->live_sampled);
			rd_out_json_key(o, &f, "stack");
			stack_lines(p, o, 1, pkey(&p->ast, ids[i]));
			rd_out_ch(o, '}');
		}
		rd_out_ch(o, ']');
	} else if (n) {
		rd_outf(o, "    still live at the end (leak candidates): %u stack%s, about %.0f bytes"
		           " (from the samples%s)\n", n, n == 1 ? "" : "s", live,
		        pp->has_usable ? ", at most the exact live bytes" : "");
		for (uint32_t i = 0; i < n && i < TOP_LIVE; i++) {
			const struct aval *v = &p->av[ids[i]];

			rd_outf(o, "      %.0f bytes estimated (%" PRIu64 " sampled allocation%s, %" PRIu64 " bytes), +-%.1f%%:\n",
			        v->ibytes, v->nlive, v->nlive == 1 ? "" : "s",
			        v->live_sampled, 100.0 / sqrt((double)v->nlive));
			stack_lines(p, o, 0, pkey(&p->ast, ids[i]));
		}
	}
	free(ids);
}

static void alloc_section(struct rd_prof *p, struct rd_out *o,
                          const struct pproc *pp, uint32_t proc, int json)
{
	double secs = (double)pp->wall_ns / 1e9, ab = 0, ao = 0;
	char lb[16];
	int f = 1;

	for (uint32_t i = 0; i < p->ast.n; i++)
		if (pkey(&p->ast, i)->proc == proc) {
			ab += p->av[i].abytes;
			ao += p->av[i].aobj;
		}
	if (json) {
		rd_out_str(o, ",\"alloc_profile\":{");
		rd_out_json_u(o, &f, "calls", pp->calls);
		rd_out_json_u(o, &f, "bytes", pp->bytes);
		rd_out_json_u(o, &f, "frees", pp->frees);
		rd_out_json_u(o, &f, "freed_bytes", pp->freed);
		rd_out_json_key(o, &f, "usable_bytes");
		if (pp->has_usable)
			rd_out_u64(o, pp->usable);
		else
			rd_out_str(o, "null");
		rd_out_json_key(o, &f, "live_bytes");
		if (pp->has_usable)
			rd_outf(o, "%.0f", rd_prof_exact_live(pp));
		else
			rd_out_str(o, "null");
		json_num(o, &f, "calls_per_s", secs > 0 ? (double)pp->calls / secs : 0);
		json_num(o, &f, "bytes_per_s", secs > 0 ? (double)pp->bytes / secs : 0);
		rd_out_json_u(o, &f, "alloc_events", pp->alloc_events);
		rd_out_json_key(o, &f, "histogram");
		rd_out_ch(o, '[');
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++) {
			int g = 1;

			bucket_label(i, lb, sizeof lb);
			if (i)
				rd_out_ch(o, ',');
			rd_out_ch(o, '{');
			json_s(o, &g, "words", lb);
			rd_out_json_u(o, &g, "count", pp->hist[i]);
			rd_out_ch(o, '}');
		}
		rd_out_ch(o, ']');
		rd_out_json_u(o, &f, "samples", pp->alloc_samples);
		rd_out_json_u(o, &f, "outside_span", pp->outside_alloc);
		rd_out_json_u(o, &f, "malformed", pp->bad_alloc + pp->bad_free);
		json_num(o, &f, "est_bytes", ab);
		json_num(o, &f, "est_objects", ao);
		rd_out_json_key(o, &f, "sites");
		alloc_sites(p, o, proc, 1, ab);
		alloc_live(p, o, proc, 1, pp);
		rd_heap_section(p, o, pp, proc, 1);
		rd_out_ch(o, '}');
		return;
	}
	rd_outf(o, "\n  allocation profile: %" PRIu64 " calls (%.0f/s), %" PRIu64
	           " bytes asked for (%.0f/s), %" PRIu64 " frees\n",
	        pp->calls, secs > 0 ? (double)pp->calls / secs : 0, pp->bytes,
	        secs > 0 ? (double)pp->bytes / secs : 0, pp->frees);
	if (pp->has_usable)
		rd_outf(o, "    usable bytes (malloc_usable_size): %" PRIu64 " allocated, %"
		           PRIu64 " freed, %.0f live at the end (exact)\n",
		        pp->usable, pp->freed, rd_prof_exact_live(pp));
	else
		rd_outf(o, "    %" PRIu64 " bytes freed (malloc_usable_size); live bytes "
		           "not known: these files count the bytes asked for, not the "
		           "usable bytes allocated\n", pp->freed);
	rd_heap_section(p, o, pp, proc, 0);
	if (pp->alloc_events) {
		rd_outf(o, "    size histogram (%" PRIu64 " alloc events; size in words: calls):\n     ",
		        pp->alloc_events);
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			if (pp->hist[i]) {
				bucket_label(i, lb, sizeof lb);
				rd_outf(o, " %s:%" PRIu64, lb, pp->hist[i]);
			}
		rd_out_ch(o, '\n');
	}
	rd_outf(o, "    %" PRIu64 " sampled allocations: about %.0f bytes in %.0f objects",
	        pp->alloc_samples, ab, ao);
	if (rd_prof_span_opt)
		rd_outf(o, ", inside span %s (%" PRIu64 " outside)", rd_prof_span_opt,
		        pp->outside_alloc);
	if (pp->bad_alloc + pp->bad_free)
		rd_outf(o, ", %" PRIu64 " malformed skipped", pp->bad_alloc + pp->bad_free);
	rd_out_ch(o, '\n');
	alloc_sites(p, o, proc, 0, ab);
	alloc_live(p, o, proc, 0, pp);
}

void rd_prof_summary(struct rd_prof *p, struct rd_out *o,
                     const struct rd_proc *pr, int json)
{
	const struct pproc *pp = p && pr->index < p->npp && p->pp[pr->index].used
	                                 ? &p->pp[pr->index] : NULL;

	if (p)
		rd_prof_settle(p);
	if (pp) {
		((struct pproc *)pp)->wall_ns = rd_proc_wall(pr);
		((struct pproc *)pp)->t0 = pr->started ? pr->start_ts : pr->first_ts;
	}
	if (pp && (pp->has_cpu || pp->bad_cpu))
		cpu_section(p, o, pp, pr->index, json);
	else if (json)
		rd_out_str(o, ",\"cpu_profile\":null");
	if (pp && (pp->has_alloc || pp->bad_alloc || pp->bad_free))
		alloc_section(p, o, pp, pr->index, json);
	else if (json)
		rd_out_str(o, ",\"alloc_profile\":null");
}
