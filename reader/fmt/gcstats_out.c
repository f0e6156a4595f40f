/*
 * fmt/gcstats_out.c - the GC statistics of one process as text and as
 * JSON (gcstats.h; every figure is explained in doc/GC-STATS.md): the
 * renderers of the figures gcstats.c computes (rd_gc_totals), counting
 * nothing themselves.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcstats_int.h"
#include "hist.h"
#include "ocamlver.h"
#include "out.h"

static const double percentiles[] = {
	10, 25, 50, 60, 70, 75, 80, 85, 90, 95, 96, 97, 98, 99,
	99.9, 99.99, 99.999, 99.9999, 100,
};
#define NPCT (sizeof percentiles / sizeof percentiles[0])

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

	if (rd_gc_totals(g, P, pr, &t) < 0)
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
	rd_gc_free_totals(&t);
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
	rd_out_json_str(o, rd_ocaml_release(u));
	rd_out_str(o, ",\"table\":");
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
	rd_out_json_str(o, u->trace.same_from);
	rd_out_str(o, ",\"trace_same_names_to\":");
	rd_out_json_str(o, u->trace.same_to);
	rd_outf(o, ",\"trace_sure\":\"%s\"}", rte_ocaml_sure_name(u->trace.sure));
}

int rd_gc_json(struct rd_gc *g, struct rd_out *o, const struct rd_procs *P,
               const struct rd_proc *pr)
{
	struct totals t;

	if (rd_gc_totals(g, P, pr, &t) < 0)
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
	rd_gc_free_totals(&t);
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
