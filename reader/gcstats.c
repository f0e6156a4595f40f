/*
 * gcstats.c - GC statistics per process (see gcstats.h and
 * doc/GC-STATS.md, which explains every figure).
 *
 * Per ring (an OCaml domain) the state is a stack of open phase ids, the
 * depth of open pause phases (olly's: major, stw_leader,
 * interrupt_remote) and of waits (domain_condition_wait), the lifetimes
 * (ring_start or domain_spawn to ring_stop or domain_terminate, summed
 * over every domain that used the ring) and the counter sums. A pause is
 * the outermost open pause phase: from its begin to its end, recorded in
 * the file's histogram. Collections are counted on ring 0 of each file,
 * as olly does. A loss empties the ring's stack (what was open is
 * unknown) and makes the figures it could change lower bounds.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcstats_int.h"
#include "hist.h"
#include "ocamlver.h"

static const double percentiles[] = {
	10, 25, 50, 60, 70, 75, 80, 85, 90, 95, 96, 97, 98, 99,
	99.9, 99.99, 99.999, 99.9999, 100,
};
#define NPCT (sizeof percentiles / sizeof percentiles[0])

struct rd_gc *rd_gc_new(void)
{
	return calloc(1, sizeof(struct rd_gc));
}

void rd_gc_free(struct rd_gc *g)
{
	if (!g)
		return;
	for (unsigned i = 0; i < g->nf; i++) {
		free(g->f[i].r);
		free(g->f[i].h);
		free(g->f[i].rc);
	}
	free(g->f);
	free(g);
}

void rd_gc_forget_file(struct rd_gc *g, unsigned src)
{
	if (!g || src >= g->nf)
		return;
	free(g->f[src].r);
	free(g->f[src].h);
	free(g->f[src].rc);
	memset(&g->f[src], 0, sizeof g->f[src]);
}

/* ---- roles --------------------------------------------------------------- */

unsigned char rd_gc_phase_role(const char *n)
{
	if (!n)
		return R_NONE;
	if (!strcmp(n, "major") || !strcmp(n, "stw_leader") ||
	    !strcmp(n, "interrupt_remote"))
		return R_PAUSE;
	if (!strcmp(n, "domain_condition_wait"))
		return R_WAIT;
	if (!strcmp(n, "minor"))
		return R_MINOR;
	if (!strcmp(n, "major_gc_stw"))
		return R_MAJOR;
	if (!strcmp(n, "explicit_gc_major") || !strcmp(n, "explicit_gc_full_major"))
		return R_FORCED;
	if (!strcmp(n, "explicit_gc_compact"))
		return R_COMPACT;
	return R_NONE;
}

unsigned char rd_gc_counter_role(const char *n)
{
	if (!n)
		return C_NONE;
	if (!strcmp(n, "minor_allocated"))
		return C_MINOR_BYTES;
	if (!strcmp(n, "minor_promoted"))
		return C_PROMOTED_BYTES;
	if (!strcmp(n, "major_allocated_words"))
		return C_MAJOR_WORDS;
	return C_NONE;
}

/* ---- state ------------------------------------------------------------- */

struct gfile *rd_gc_file_of(struct rd_gc *g, unsigned src, unsigned rings)
{
	struct gfile *f;

	if (src >= g->cap) { /* doubling: many files cost no copies */
		unsigned cap = g->cap ? 2 * g->cap : 16;
		struct gfile *n;

		while (cap <= src)
			cap *= 2;
		if (!(n = realloc(g->f, cap * sizeof *n)))
			goto oom;
		memset(n + g->cap, 0, (cap - g->cap) * sizeof *n);
		g->f = n;
		g->cap = cap;
	}
	if (src >= g->nf)
		g->nf = src + 1;
	f = &g->f[src];
	if (!f->r) {
		if (!(f->rc = calloc(1, sizeof *f->rc)) ||
		    !(f->r = calloc(rings ? rings : 1, sizeof *f->r))) {
			free(f->rc);
			f->rc = NULL;
			goto oom;
		}
		f->nrings = rings;
	}
	return f;
oom:
	g->oom = 1;
	return NULL;
}

static void close_life(struct gring *r, uint64_t ts, int exact)
{
	if (r->open) {
		r->life_ns += ts > r->open_ts ? ts - r->open_ts : 0;
		r->life_lb |= !exact;
	} else if (r->seg) { /* its start was not seen */
		r->life_ns += ts > r->seg_ts ? ts - r->seg_ts : 0;
		r->life_lb = 1;
	}
	r->open = r->seg = 0;
}

static void lifecycle(struct gring *r, const struct rte_event *ev)
{
	switch (ev->id) {
	case RTE_LC_RING_START:
	case RTE_LC_DOMAIN_SPAWN:
		if (r->open || r->seg) /* the previous end was not seen */
			close_life(r, r->last_ts, 0);
		r->open = 1;
		r->open_ts = ev->ts;
		break;
	case RTE_LC_RING_STOP:
	case RTE_LC_DOMAIN_TERMINATE:
		close_life(r, ev->ts, 1);
		break;
	default:
		break;
	}
}

/* Words were lost: what was open is unknown from here. */
static void lost(struct gring *r, uint64_t words)
{
	r->lost += words;
	r->depth = r->pdepth = r->wdepth = 0;
}

void rd_gc_record_pause(struct gfile *f, struct gring *r, uint64_t ts)
{
	uint64_t d = ts > r->pause_ts ? ts - r->pause_ts : 0;

	if (f->h) {
		rd_hist_add(f->h, d);
	} else if (f->npause < SMALL_PAUSES) {
		f->pause[f->npause++] = d;
	} else if ((f->h = rd_hist_new()) != NULL) {
		for (unsigned i = 0; i < f->npause; i++)
			rd_hist_add(f->h, f->pause[i]);
		rd_hist_add(f->h, d);
	}
	f->sumsq += (long double)d * (long double)d;
	r->gc_ns += d;
	r->pauses++;
}

/* The events ev[0..n) of one ring r. */
static void ring_events(struct gfile *f, struct gring *r, const struct rte_event *ev,
                        size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct rte_event *x = &ev[i];

		switch (x->kind) {
		case RTE_EV_LOST:
			lost(r, x->u.lost_words);
			continue;
		case RTE_EV_BEGIN:
			rd_gc_rt_begin(f, r, x);
			break;
		case RTE_EV_END:
			rd_gc_rt_end(f, r, x);
			break;
		case RTE_EV_COUNTER:
			rd_gc_rt_counter(f, r, x);
			break;
		case RTE_EV_LIFECYCLE:
			gc_note(r, x->ts, 1);
			lifecycle(r, x);
			break;
		case RTE_EV_ALLOC:
			gc_note(r, x->ts, 0);
			break;
		default: /* user events: no part of any GC figure */
			break;
		}
	}
}

void rd_gc_event(struct rd_gc *g, const struct rd_procs *P,
                 const struct rd_item *it)
{
	struct gfile *f;

	/* User events take no part (ring_events): no state for them, so a
	 * file with none but user events costs nothing here. */
	if (it->ev->kind >= RTE_EV_USER_UNIT)
		return;
	/* it->src points into P's array of sources */
	f = rd_gc_file_of(g, (unsigned)(it->src - P->src), it->src->rings);

	if (f && it->ev->ring < f->nrings)
		ring_events(f, &f->r[it->ev->ring], it->ev, 1);
}

void rd_gc_run(struct rd_gc *g, const struct rd_procs *P, unsigned src,
               const struct rte_event *ev, size_t n)
{
	struct gfile *f = n ? rd_gc_file_of(g, src, P->src[src].rings) : NULL;

	if (f && ev[0].ring < f->nrings)
		ring_events(f, &f->r[ev[0].ring], ev, n);
}

/* ---- per process ----------------------------------------------------------- */

struct dom { /* one ring of one file, finished */
	unsigned file, ring;
	const struct gring *r;
	uint64_t life_ns;
	int life_lb;
};

struct totals {
	uint64_t wall_ns, cpu_ns, gc_ns, wait_ns, waits, pauses, lost, unmatched;
	int wall_lb, cpu_lb, gc_lb, coll_lb, alloc_lb;
	uint64_t minors, majors, forced, compactions;
	uint64_t minor_other, outside; /* phases left out (gcstats_int.h) */
	int librte;                /* a file written by librte.so */
	uint64_t minor_words, promoted_words, major_words;
	int has_major_words, runtime;
	struct rd_hist *h; /* every file's pauses */
	long double sumsq;
	struct dom *d;
	unsigned nd;
	const struct rd_ocaml_used *ocaml; /* of the first file */
};

/* A ring's lifetime as of the end of reading: an open one ends at its
 * last event (a lower bound). */
static uint64_t ring_life(const struct gring *r, int *lb)
{
	uint64_t t = r->life_ns;

	*lb = r->life_lb || r->lost;
	if (r->open && r->last_ts > r->open_ts) {
		t += r->last_ts - r->open_ts;
		*lb = 1;
	} else if (r->seg && r->last_ts > r->seg_ts) {
		t += r->last_ts - r->seg_ts;
		*lb = 1;
	}
	return t;
}

static void add_hist(struct rd_hist *to, const struct rd_hist *h)
{
	if (!h || !h->count)
		return;
	if (!to->count || h->min < to->min)
		to->min = h->min;
	if (h->max > to->max)
		to->max = h->max;
	to->count += h->count;
	if (__builtin_add_overflow(to->sum, h->sum, &to->sum))
		to->sum = UINT64_MAX;
	for (unsigned i = 0; i < RD_HIST_BUCKETS; i++)
		to->b[i] += h->b[i];
}

static void add_ring(struct totals *t, unsigned file, unsigned ring,
                     const struct gring *r)
{
	struct dom *d = &t->d[t->nd++];

	d->file = file;
	d->ring = ring;
	d->r = r;
	d->life_ns = ring_life(r, &d->life_lb);
	t->cpu_ns += d->life_ns;
	t->cpu_lb |= d->life_lb;
	t->gc_ns += r->gc_ns;
	t->pauses += r->pauses;
	t->wait_ns += r->wait_ns;
	t->waits += r->waits;
	t->unmatched += r->unmatched;
	t->lost += r->lost;
	t->minor_words += r->minor_bytes / 8;
	t->promoted_words += r->promoted_bytes / 8;
	t->major_words += r->major_words;
	t->has_major_words |= r->has_major_words;
	t->runtime |= r->runtime;
	t->minor_other += r->minor_other;
	t->outside += r->outside;
	if (ring == 0) {
		t->minors += r->minors;
		t->majors += r->majors;
		t->forced += r->forced;
		t->compactions += r->compactions;
		t->coll_lb |= r->lost != 0;
	}
}

/* Gather the files and rings of pr. Returns 0 or -1 (out of memory). */
static int totals(struct rd_gc *g, const struct rd_procs *P,
                  const struct rd_proc *pr, struct totals *t)
{
	unsigned n = 0;

	memset(t, 0, sizeof *t);
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src)
		if (i < g->nf && g->f[i].r)
			n += g->f[i].nrings;
	if (!(t->h = rd_hist_new()) || !(t->d = calloc(n ? n : 1, sizeof *t->d))) {
		free(t->h);
		return -1;
	}
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		const struct gfile *f = i < g->nf ? &g->f[i] : NULL;

		if (!t->ocaml)
			t->ocaml = rd_ocaml_choice_of(P->src[i].path);
		t->librte |= P->src[i].librte;
		if (!f || !f->r)
			continue;
		add_hist(t->h, f->h);
		for (unsigned k = 0; !f->h && k < f->npause; k++)
			rd_hist_add(t->h, f->pause[k]);
		t->sumsq += f->sumsq;
		for (unsigned r = 0; r < f->nrings; r++)
			if (f->r[r].seen || f->r[r].lost)
				add_ring(t, i, r, &f->r[r]);
	}
	t->wall_ns = rd_proc_wall(pr);
	t->wall_lb = !(pr->started && pr->stopped);
	t->gc_lb = t->alloc_lb = t->lost != 0;
	return 0;
}

static void free_totals(struct totals *t)
{
	free(t->h);
	free(t->d);
}

int rd_gc_has_runtime(const struct rd_gc *g, const struct rd_procs *P,
                      const struct rd_proc *pr)
{
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src)
		for (unsigned r = 0; i < g->nf && g->f[i].r && r < g->f[i].nrings; r++)
			if (g->f[i].r[r].runtime)
				return 1;
	return 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static double per_s(uint64_t n, uint64_t ns)
{
	return ns ? (double)n * 1e9 / (double)ns : 0.0;
}

static uint64_t stddev(const struct totals *t)
{
	long double n = t->h->count, mean, var;

	if (!t->h->count)
		return 0;
	mean = (long double)t->h->sum / n;
	var = t->sumsq / n - mean * mean;
	return var > 0 ? (uint64_t)(sqrtl(var) + 0.5L) : 0;
}

/* The p-th percentile (0 < p <= 100); the 100th is the exact max. */
static uint64_t pctl(const struct rd_hist *h, double p)
{
	return p >= 100 ? h->max : rd_hist_quantile(h, p / 100);
}

/* How many pauses lie in buckets above the one holding value v. */
static uint64_t count_above(const struct rd_hist *h, uint64_t v)
{
	uint64_t n = 0;

	for (unsigned i = rd_hist_index(v) + 1; i < RD_HIST_BUCKETS; i++)
		n += h->b[i];
	return n;
}

/* ---- text ------------------------------------------------------------- */

#define GE(lb) ((lb) ? ">=" : "")
#define S(ns) ((double)(ns) / 1e9)
#define MS(ns) ((double)(ns) / 1e6)

static void text_times(struct rd_out *o, const struct totals *t, const char *in)
{
	rd_outf(o, "%sExecution times:\n", in);
	rd_outf(o, "%s  Wall time (s):                %s%.6f%s\n", in, GE(t->wall_lb),
	     S(t->wall_ns), t->wall_lb ? "  (no ring_start/ring_stop pair: first to last event)" : "");
	rd_outf(o, "%s  CPU time (s):                 %s%.6f  (sum of domain lifetimes)\n",
	     in, GE(t->cpu_lb), S(t->cpu_ns));
	rd_outf(o, "%s  GC time (s):                  %s%.6f  (outermost major, stw_leader, interrupt_remote)\n",
	     in, GE(t->gc_lb), S(t->gc_ns));
	rd_outf(o, "%s  GC overhead (%% of CPU time):  %s%.2f%%\n", in,
	     t->gc_lb || t->cpu_lb ? "~" : "", pct(t->gc_ns, t->cpu_ns));
	rd_outf(o, "%s  Waits (s):                    %s%.6f  (domain_condition_wait, %llu waits; not GC time)\n",
	     in, GE(t->gc_lb), S(t->wait_ns), (unsigned long long)t->waits);
	if (t->lost)
		rd_outf(o, "%s  Lost words:                   %llu  (figures marked >= are lower bounds, ~ uncertain)\n",
		     in, (unsigned long long)t->lost);
}

static void text_domains(struct rd_out *o, const struct totals *t, const char *in)
{
	rd_outf(o, "\n%sPer domain stats:\n", in);
	rd_outf(o, "%s  %-4s %-6s %14s %12s %8s %8s %12s %12s\n", in, "File", "Domain",
	     "Wall(s)", "GC(s)", "GC(%)", "Pauses", "Waits(s)", "Lost words");
	for (unsigned i = 0; i < t->nd; i++) {
		const struct dom *d = &t->d[i];
		/* a domain's lost words make its own sums lower bounds */
		const char *ge = GE(d->r->lost > 0);
		char life[32], gc[32], pauses[32], waits[32];

		snprintf(life, sizeof life, "%s%.6f", GE(d->life_lb), S(d->life_ns));
		snprintf(gc, sizeof gc, "%s%.6f", ge, S(d->r->gc_ns));
		snprintf(pauses, sizeof pauses, "%s%llu", ge, (unsigned long long)d->r->pauses);
		snprintf(waits, sizeof waits, "%s%.6f", ge, S(d->r->wait_ns));
		rd_outf(o, "%s  %-4u %-6u %14s %12s %8.2f %8s %12s %12llu\n", in,
		     d->file, d->ring, life, gc, pct(d->r->gc_ns, d->life_ns), pauses,
		     waits, (unsigned long long)d->r->lost);
	}
}

static void text_alloc(struct rd_out *o, const struct totals *t, const char *in)
{
	const char *ge = GE(t->alloc_lb);
	uint64_t total = t->minor_words - t->promoted_words + t->major_words;

	rd_outf(o, "\n%sCollections%s:\n", in, t->coll_lb ? " (ring 0 lost words: lower bounds)" : "");
	rd_outf(o, "%s  Minor Gen:    %s%llu collections\n", in, GE(t->coll_lb),
	     (unsigned long long)t->minors);
	rd_outf(o, "%s  Major Gen:    %s%llu collections, %s%llu forced collections\n", in,
	     GE(t->coll_lb), (unsigned long long)t->majors, GE(t->coll_lb),
	     (unsigned long long)t->forced);
	rd_outf(o, "%s  Compactions:  %s%llu\n", in, GE(t->coll_lb),
	     (unsigned long long)t->compactions);
	if (t->minor_other || t->outside)
		rd_outf(o, "%s  Not counted (olly's definitions): %llu minor phases on"
		     " rings other than 0 (a collection is counted once, on ring 0);"
		     " %llu phases begun outside any major, stw_leader or"
		     " interrupt_remote (not GC time)\n", in,
		     (unsigned long long)t->minor_other, (unsigned long long)t->outside);
	rd_outf(o, "\n%sGC allocations (in words; rate per second of CPU time):\n", in);
	rd_outf(o, "%s  Minor heap:       %s%llu  (%.0f/s)\n", in, ge,
	     (unsigned long long)t->minor_words, per_s(t->minor_words, t->cpu_ns));
	rd_outf(o, "%s  Promoted words:   %s%llu  (%.2f%% of minor, %.0f/s)\n", in, ge,
	     (unsigned long long)t->promoted_words,
	     pct(t->promoted_words, t->minor_words),
	     per_s(t->promoted_words, t->cpu_ns));
	if (t->has_major_words) {
		rd_outf(o, "%s  Major heap:       %s%llu  (%.0f/s)\n", in, ge,
		     (unsigned long long)t->major_words, per_s(t->major_words, t->cpu_ns));
		rd_outf(o, "%s  Total heap:       %s%llu  (minor - promoted + major)\n", in,
		     ge, (unsigned long long)total);
	} else {
		rd_outf(o, "%s  Major heap:       n/a (major_allocated_words needs OCaml 5.3 or later)\n", in);
	}
}

static void text_pauses(struct rd_out *o, const struct totals *t, const char *in)
{
	const struct rd_hist *h = t->h;
	uint64_t p999 = rd_hist_quantile(h, 0.999);

	rd_outf(o, "\n%sGC latency profile (%s%llu pauses; percentiles within 0.4%%):\n",
	     in, GE(t->gc_lb), (unsigned long long)h->count);
	if (!h->count)
		return;
	rd_outf(o, "%s  #[Mean (ms):   %.6f,  Stddev (ms): %.6f]\n", in,
	     MS(h->sum) / (double)h->count, MS(stddev(t)));
	rd_outf(o, "%s  #[Min (ms):    %.6f,  Max (ms):    %.6f]\n", in, MS(h->min), MS(h->max));
	rd_outf(o, "%s  Percentile    Latency (ms)\n", in);
	for (unsigned i = 0; i < NPCT; i++)
		rd_outf(o, "%s  %-12.4f  %.6f\n", in, percentiles[i],
		     MS(pctl(h, percentiles[i])));
	rd_outf(o, "%s  Above p99.9:  %llu pauses;  beyond the histogram (>= 2^%u ns): %llu\n",
	     in, (unsigned long long)count_above(h, p999), RD_HIST_MAX_BITS,
	     (unsigned long long)h->b[RD_HIST_BUCKETS - 1]);
}

int rd_gc_text(struct rd_gc *g, struct rd_out *o, const struct rd_procs *P,
               const struct rd_proc *pr, const char *in)
{
	struct totals t;
	char names[PATH_MAX + 512];

	if (totals(g, P, pr, &t) < 0)
		return -1;
	if (t.ocaml) {
		rd_ocaml_describe(t.ocaml, names, sizeof names);
		rd_outf(o, "%sNames: %s\n", in, names);
	}
	if (t.librte)
		rd_outf(o, "%sWriter: librte.so, not an OCaml runtime: the program wrote"
		     " these phases itself under OCaml's names\n", in);
	text_times(o, &t, in);
	text_domains(o, &t, in);
	text_pauses(o, &t, in);
	text_alloc(o, &t, in);
	if (t.unmatched)
		rd_outf(o, "\n%s(%llu phase ends without their begin were ignored)\n", in,
		     (unsigned long long)t.unmatched);
	free_totals(&t);
	return g->oom ? -1 : 0;
}

/* ---- JSON -------------------------------------------------------------- */

static void ju(struct rd_out *o, const char *k, uint64_t v)
{
	rd_outf(o, ",\"%s\":%llu", k, (unsigned long long)v);
}

static void jb(struct rd_out *o, const char *k, int v)
{
	rd_outf(o, ",\"%s\":%s", k, v ? "true" : "false");
}

static void json_domains(struct rd_out *o, const struct totals *t)
{
	rd_out_str(o, ",\"domains\":[");
	for (unsigned i = 0; i < t->nd; i++) {
		const struct dom *d = &t->d[i];
		const struct gring *r = d->r;

		rd_outf(o, "%s{\"file\":%u,\"ring\":%u", i ? "," : "", d->file, d->ring);
		ju(o, "lifetime_ns", d->life_ns);
		jb(o, "lifetime_lower_bound", d->life_lb);
		ju(o, "gc_ns", r->gc_ns);
		rd_outf(o, ",\"gc_pct\":%.4f", pct(r->gc_ns, d->life_ns));
		ju(o, "pauses", r->pauses);
		ju(o, "wait_ns", r->wait_ns);
		ju(o, "waits", r->waits);
		ju(o, "minor_words", r->minor_bytes / 8);
		ju(o, "promoted_words", r->promoted_bytes / 8);
		ju(o, "major_words", r->major_words);
		ju(o, "lost_words", r->lost);
		rd_out_ch(o, '}');
	}
	rd_out_ch(o, ']');
}

static void json_pauses(struct rd_out *o, const struct totals *t)
{
	const struct rd_hist *h = t->h;

	rd_outf(o, ",\"pauses\":{\"count\":%llu", (unsigned long long)h->count);
	jb(o, "lower_bound", t->gc_lb);
	ju(o, "total_ns", h->sum);
	rd_outf(o, ",\"mean_ns\":%.3f", h->count ? (double)h->sum / (double)h->count : 0.0);
	ju(o, "stddev_ns", stddev(t));
	ju(o, "min_ns", h->count ? h->min : 0);
	ju(o, "max_ns", h->max);
	rd_out_str(o, ",\"percentiles_ns\":{");
	for (unsigned i = 0; i < NPCT; i++)
		rd_outf(o, "%s\"%g\":%llu", i ? "," : "", percentiles[i],
		     (unsigned long long)pctl(h, percentiles[i]));
	rd_out_ch(o, '}');
	ju(o, "above_p99_9", count_above(h, rd_hist_quantile(h, 0.999)));
	ju(o, "beyond_histogram", h->b[RD_HIST_BUCKETS - 1]);
	rd_out_str(o, ",\"relative_error\":0.004}");
}

static void json_alloc(struct rd_out *o, const struct totals *t)
{
	rd_out_str(o, ",\"collections\":{");
	rd_outf(o, "\"minor\":%llu", (unsigned long long)t->minors);
	ju(o, "major", t->majors);
	ju(o, "forced_major", t->forced);
	ju(o, "compactions", t->compactions);
	jb(o, "lower_bound", t->coll_lb);
	rd_outf(o, "},\"not_counted\":{\"minor_other_rings\":%llu",
	     (unsigned long long)t->minor_other);
	ju(o, "outside_pauses", t->outside);
	rd_out_str(o, "},\"allocations\":{");
	rd_outf(o, "\"minor_words\":%llu", (unsigned long long)t->minor_words);
	ju(o, "promoted_words", t->promoted_words);
	rd_outf(o, ",\"promoted_pct\":%.4f", pct(t->promoted_words, t->minor_words));
	if (t->has_major_words) {
		ju(o, "major_words", t->major_words);
		ju(o, "total_heap_words", t->minor_words - t->promoted_words + t->major_words);
	} else {
		rd_out_str(o, ",\"major_words\":null,\"total_heap_words\":null");
	}
	rd_outf(o, ",\"minor_words_per_cpu_s\":%.3f", per_s(t->minor_words, t->cpu_ns));
	rd_outf(o, ",\"promoted_words_per_cpu_s\":%.3f", per_s(t->promoted_words, t->cpu_ns));
	rd_outf(o, ",\"major_words_per_cpu_s\":%.3f", per_s(t->major_words, t->cpu_ns));
	jb(o, "lower_bound", t->alloc_lb);
	rd_out_ch(o, '}');
}

/* Which names were used, and why (doc/GC-STATS.md, "ocaml"). */
static void json_ocaml(struct rd_out *o, const struct rd_ocaml_used *u)
{
	const struct rte_ocaml_choice *ch = &u->ch;
	const struct rte_ocaml_exe *x = &u->exever;

	rd_out_str(o, "{\"version\":");
	rd_out_json_str(o, ch->table->version);
	rd_outf(o, ",\"sure\":\"%s\",\"same_names_from\":\"%s\",\"same_names_to\":\"%s\"",
	     rte_ocaml_sure_name(ch->sure), ch->same_from, ch->same_to);
	ju(o, "nestings", ch->nestings);
	ju(o, "explained", ch->explained);
	ju(o, "best_other", ch->best_other);
	rd_outf(o, ",\"from\":\"%s\",\"executable\":", rd_ocaml_from_name(u->from));
	if (u->exe) {
		rd_out_str(o, "{\"path\":");
		rd_out_json_str(o, u->exe);
		rd_out_str(o, ",\"ocaml\":");
		if (x->how != RTE_OCAML_EXE_NONE) {
			rd_out_json_str(o, x->version);
			rd_out_str(o, ",\"evidence\":");
			rd_out_json_str(o, rte_ocaml_exe_how_name(x->how));
		} else {
			rd_out_str(o, "null,\"evidence\":null");
		}
		rd_out_str(o, ",\"error\":");
		if (u->exe_err)
			rd_out_json_str(o, rte_strerror(u->exe_err));
		else
			rd_out_str(o, "null");
		rd_out_ch(o, '}');
	} else {
		rd_out_str(o, "null");
	}
	rd_out_str(o, ",\"trace_version\":");
	rd_out_json_str(o, u->trace.table->version);
	rd_outf(o, ",\"trace_sure\":\"%s\"}", rte_ocaml_sure_name(u->trace.sure));
}

int rd_gc_json(struct rd_gc *g, struct rd_out *o, const struct rd_procs *P,
               const struct rd_proc *pr)
{
	struct totals t;

	if (totals(g, P, pr, &t) < 0)
		return -1;
	rd_out_str(o, "{\"writer\":");
	rd_out_str(o, t.librte ? "\"librte\"" : "\"ocaml\"");
	rd_out_str(o, ",\"ocaml\":");
	if (t.ocaml) {
		json_ocaml(o, t.ocaml);
	} else {
		rd_out_str(o, "null");
	}
	ju(o, "wall_ns", t.wall_ns);
	jb(o, "wall_lower_bound", t.wall_lb);
	ju(o, "cpu_ns", t.cpu_ns);
	jb(o, "cpu_lower_bound", t.cpu_lb);
	ju(o, "gc_ns", t.gc_ns);
	jb(o, "gc_lower_bound", t.gc_lb);
	rd_outf(o, ",\"gc_pct\":%.4f", pct(t.gc_ns, t.cpu_ns));
	rd_outf(o, ",\"waits\":{\"phases\":[\"domain_condition_wait\"],\"count\":%llu,\"ns\":%llu}",
	     (unsigned long long)t.waits, (unsigned long long)t.wait_ns);
	ju(o, "lost_words", t.lost);
	ju(o, "unmatched_ends", t.unmatched);
	json_domains(o, &t);
	json_pauses(o, &t);
	json_alloc(o, &t);
	rd_out_ch(o, '}');
	free_totals(&t);
	return g->oom ? -1 : 0;
}

void rd_gc_summary_section(struct rd_gc *g, struct rd_out *o,
                           const struct rd_procs *P, const struct rd_proc *pr,
                           int json)
{
	int has = g && rd_gc_has_runtime(g, P, pr);

	if (json) {
		rd_out_str(o, ",\"gc\":");
		if (!has || rd_gc_json(g, o, P, pr) < 0)
			rd_out_str(o, has ? "{}" : "null");
	} else if (has) {
		rd_out_str(o, "\n  GC statistics (as olly gc-stats; see doc/GC-STATS.md):\n");
		rd_gc_text(g, o, P, pr, "    ");
	}
}
