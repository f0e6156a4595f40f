/*
 * fmt/summary_out.c - the text and JSON of one process of the summary
 * (fmt/summary.h): renders the run model (model.h: what model.c,
 * procs.c, gcstats.c and profile.c accounted); counts nothing itself.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gcstats.h"
#include "summary.h"

static const char *const fam_title[F_NFAM] = {
	"runtime phase", "user span", "counter", "user int", "user unit",
	"user custom",
};
static const char *const fam_key[F_NFAM] = {
	"phases", "spans", "counters", "user_ints", "user_units", "user_customs",
};

/* ---- finish ----------------------------------------------------------- */

static int by_total(const void *a, const void *b)
{
	const struct rd_entry *x = *(struct rd_entry *const *)a, *y = *(struct rd_entry *const *)b;
	uint64_t tx = rd_entry_is_dur(x) ? rd_entry_dur_sum(x) : x->count;
	uint64_t ty = rd_entry_is_dur(y) ? rd_entry_dur_sum(y) : y->count;

	if (x->fam != y->fam)
		return x->fam - y->fam;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return strcmp(x->name, y->name);
}

static uint64_t proc_phase_ns(struct rd_procs *P, const struct rd_proc *pr)
{
	uint64_t t = 0;

	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src)
		for (unsigned r = 0; r < P->src[i].rings; r++)
			t += P->src[i].threads[r].phase_ns;
	return t;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

struct q { const char *key; double q; };
static const struct q quantiles[] = {
	{ "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p99.9", 0.999 },
};

static void out_dur(struct rd_out *o, uint64_t ns, int width)
{
	char b[40];
	size_t n = rd_fmt_dur(b, ns);

	for (int i = (int)n; i < width; i++)
		rd_out_ch(o, ' ');
	rd_out_mem(o, b, n);
}

static void text_durations(struct summary *S, struct rd_out *o,
                           struct rd_psum *ps, int fam, uint64_t wall)
{
	const struct rd_hist *h;
	int head = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct rd_entry *e = ps->e[i];

		if (e->fam != fam || e->hidden)
			continue;
		if (!head) {
			rd_outf(o, "\n  %-28s %9s %10s %10s %10s %10s %10s %10s %10s %6s\n",
			     fam_title[fam], "count", "total", "mean", "p50", "p90",
			     "p99", "p99.9", "max", "%wall");
			head = 1;
		}
		rd_outf(o, "  %-28.127s %9llu", e->name, (unsigned long long)e->count);
		if (!(h = rd_entry_view(&S->m, e)))
			continue;
		out_dur(o, h->sum, 11);
		out_dur(o, rd_hist_mean(h), 11);
		for (size_t q = 0; q < sizeof quantiles / sizeof quantiles[0]; q++)
			out_dur(o, rd_hist_quantile(h, quantiles[q].q), 11);
		out_dur(o, h->max, 11);
		rd_outf(o, " %5.1f%%", 100.0 * share(h->sum, wall));
		rd_entry_unview(&S->m, e);
		if (e->unmatched)
			rd_outf(o, "  (%llu ends without begin)", (unsigned long long)e->unmatched);
		if (e->unfinished)
			rd_outf(o, "  (%llu unfinished)", (unsigned long long)e->unfinished);
		rd_out_ch(o, '\n');
	}
}

static void text_values(struct rd_out *o, struct rd_psum *ps, int fam)
{
	int head = 0, u = fam == F_COUNTER;

	for (size_t i = 0; i < ps->n; i++) {
		struct rd_entry *e = ps->e[i];

		if (e->fam != fam || e->hidden)
			continue;
		if (!head) {
			rd_outf(o, "\n  %-28s %9s %20s %20s %20s\n", fam_title[fam],
			     "count", "last (latest time)", "min", "max");
			head = 1;
		}
		if (u)
			rd_outf(o, "  %-28.127s %9llu %20llu %20llu %20llu\n", e->name,
			     (unsigned long long)e->count, (unsigned long long)e->last,
			     (unsigned long long)e->min, (unsigned long long)e->max);
		else
			rd_outf(o, "  %-28.127s %9llu %20lld %20lld %20lld\n", e->name,
			     (unsigned long long)e->count, (long long)e->last,
			     (long long)e->min, (long long)e->max);
	}
}

static void text_counts(struct rd_out *o, struct rd_psum *ps)
{
	int head = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct rd_entry *e = ps->e[i];

		if ((e->fam != F_UNIT && e->fam != F_CUSTOM) || e->hidden)
			continue;
		if (!head) {
			rd_outf(o, "\n  %-28s %9s\n", "user event (unit, custom)", "count");
			head = 1;
		}
		rd_outf(o, "  %-28.127s %9llu  %s\n", e->name, (unsigned long long)e->count,
		     e->fam == F_UNIT ? "unit" : "custom");
	}
}

struct trow {
	struct rd_out *o;
	unsigned file;
	int first; /* JSON: no thread written yet */
};

static void text_thread(void *arg, const struct rd_tenant *t)
{
	struct trow *w = arg;
	char tid[24] = "-";

	if (t->tid >= 0)
		snprintf(tid, sizeof tid, "%ld", t->tid);
	rd_outf(w->o, "  %-4u %-4u %-20.63s %8s %12llu %12llu ", w->file, t->ring,
	     t->name[0] ? t->name : "-", tid, (unsigned long long)t->events,
	     (unsigned long long)t->lost_words);
	out_dur(w->o, t->phase_ns, 12);
	rd_out_ch(w->o, '\n');
}

/* One row per thread: every tenancy of every ring. */
static void text_rings(struct rd_out *o, struct rd_procs *P, struct rd_proc *pr)
{
	struct trow w = { .o = o };

	rd_outf(o, "\n  %-4s %-4s %-20s %8s %12s %12s %12s\n", "file", "ring", "thread",
	     "tid", "events", "lost words", "in phases");
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		w.file = i;
		rd_src_each_thread(&P->src[i], text_thread, &w);
	}
}

/* Each ring's last value of the counters and ints written by more than
 * one ring (the process's "last" is the latest of them in time). */
static void text_ring_values(struct rd_out *o, struct rd_psum *ps)
{
	int head = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct rd_entry *e = ps->e[i];

		if ((e->fam != F_COUNTER && e->fam != F_INT) || e->hidden || e->nrv < 2)
			continue;
		if (!head) {
			rd_outf(o, "\n  %-28s %4s %4s %20s\n", "last value per ring",
			     "file", "ring", "last");
			head = 1;
		}
		for (size_t k = 0; k < e->nrv; k++)
			if (e->fam == F_COUNTER)
				rd_outf(o, "  %-28.127s %4u %4u %20llu\n", e->name, e->rv[k].src,
				     e->rv[k].ring, (unsigned long long)e->rv[k].last);
			else
				rd_outf(o, "  %-28.127s %4u %4u %20lld\n", e->name, e->rv[k].src,
				     e->rv[k].ring, (long long)e->rv[k].last);
	}
}

static void text_lifecycle(struct rd_out *o, const struct rd_proc *pr)
{
	int any = 0;

	rd_outf(o, "\n  lifecycle:");
	for (unsigned i = 0; i < RTE_LC_COUNT; i++)
		if (pr->lifecycle[i]) {
			rd_outf(o, "%s %s %llu", any ? "," : "", rte_lifecycle_name(i),
			     (unsigned long long)pr->lifecycle[i]);
			any = 1;
		}
	rd_outf(o, "%s\n", any ? "" : " none");
}

/* 1 if a crash was recorded in file path (crashrep.h): fatal, or one a
 * handler of the program's (or a sanitizer's) took over. */
static int crashed_in(const struct rd_crash *c, const char *path)
{
	unsigned n = c ? rd_crash_count(c, 0) : 0;

	for (unsigned i = 0; i < n; i++) {
		struct rd_crash_view v;

		rd_crash_view(c, i, &v);
		if (v.path && !strcmp(v.path, path))
			return 1;
	}
	return 0;
}

/* How the file ended, after its name in the text summary. */
static const char *file_note(const struct summary *S, const struct rd_src *s)
{
	if (s->stopped)
		return "";
	if (rd_src_killed(s))
		return crashed_in(S->report, s->path)
		       ? " (no ring_stop: its writer crashed and is gone, see the crash report)"
		       : " (no ring_stop: its writer ended without it and is gone, killed?)";
	if (s->writer_state == RD_WRITER_RUNNING)
		return " (no ring_stop yet: its writer is running)";
	return " (no ring_stop)";
}

static void text_proc(struct summary *S, struct rd_out *o, struct rd_procs *P,
                      struct rd_proc *pr, struct rd_psum *ps)
{
	uint64_t wall = rd_proc_wall(pr), ph = proc_phase_ns(P, pr);

	if (pr->pid >= 0)
		rd_outf(o, "process %ld\n", pr->pid);
	else
		rd_outf(o, "process (pid unknown)\n");
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src)
		rd_outf(o, "  file %u: %s%s\n", i, P->src[i].path,
		     file_note(S, &P->src[i]));
	rd_outf(o, "  wall time       ");
	out_dur(o, wall, 0);
	rd_outf(o, " (%s)\n", pr->started && pr->stopped ? "ring_start to ring_stop"
	                                              : "first to last event");
	rd_outf(o, "  events          %llu\n  lost words      %llu\n",
	     (unsigned long long)pr->events, (unsigned long long)pr->lost_words);
	rd_outf(o, "  runtime phases  ");
	out_dur(o, ph, 0);
	rd_outf(o, " = %.1f%% of wall time (outermost phases, summed over rings)\n",
	     100.0 * share(ph, wall));
	text_rings(o, P, pr);
	if (ps) {
		if (ps->n > 1)
			qsort(ps->e, ps->n, sizeof *ps->e, by_total);
		text_ring_values(o, ps);
		text_durations(S, o, ps, F_PHASE, wall);
		text_durations(S, o, ps, F_SPAN, wall);
		text_values(o, ps, F_COUNTER);
		text_values(o, ps, F_INT);
		text_counts(o, ps);
		if (ps->alloc_events)
			rd_outf(o, "\n  alloc events: %llu\n", (unsigned long long)ps->alloc_events);
	}
	text_lifecycle(o, pr);
}

/* ---- summary-json -------------------------------------------------------- */

void rd_sum_json_hist(struct rd_out *o, int *f, const struct rd_hist *h)
{
	rd_out_json_u(o, f, "total_ns", h->sum);
	rd_out_json_u(o, f, "mean_ns", rd_hist_mean(h));
	rd_out_json_u(o, f, "min_ns", h->count ? h->min : 0);
	rd_out_json_u(o, f, "p50_ns", rd_hist_quantile(h, 0.5));
	rd_out_json_u(o, f, "p90_ns", rd_hist_quantile(h, 0.9));
	rd_out_json_u(o, f, "p99_ns", rd_hist_quantile(h, 0.99));
	rd_out_json_u(o, f, "p999_ns", rd_hist_quantile(h, 0.999));
	rd_out_json_u(o, f, "max_ns", h->max);
}

static void json_entry(struct summary *S, struct rd_out *o,
                       const struct rd_entry *e, uint64_t wall)
{
	const struct rd_hist *h;
	int f = 1;

	rd_out_ch(o, '{');
	rd_out_json_key(o, &f, "name");
	rd_out_json_str(o, e->name);
	rd_out_json_u(o, &f, "count", e->count);
	if (rd_entry_is_dur(e) && (h = rd_entry_view(&S->m, e)) != NULL) {
		rd_sum_json_hist(o, &f, h);
		rd_out_json_key(o, &f, "wall_share");
		rd_outf(o, "%.6f", share(h->sum, wall));
		rd_sum_run_add(&S->run, e);
		rd_entry_unview(&S->m, e);
		rd_out_json_u(o, &f, "unmatched_ends", e->unmatched);
		rd_out_json_u(o, &f, "unfinished", e->unfinished);
	} else if (e->fam == F_COUNTER) {
		rd_out_json_u(o, &f, "last", (uint64_t)e->last);
		rd_out_json_u(o, &f, "min", (uint64_t)e->min);
		rd_out_json_u(o, &f, "max", (uint64_t)e->max);
	} else if (e->fam == F_INT) {
		rd_out_json_key(o, &f, "last");
		rd_out_i64(o, e->last);
		rd_out_json_key(o, &f, "min");
		rd_out_i64(o, e->min);
		rd_out_json_key(o, &f, "max");
		rd_out_i64(o, e->max);
	}
	rd_out_ch(o, '}');
}

/* "last_values" of ring (src, ring): each counter and int it wrote. */
static void json_ring_values(struct rd_out *o, struct rd_psum *ps, unsigned src,
                             unsigned ring)
{
	int first = 1;

	rd_out_str(o, ",\"last_values\":[");
	for (size_t i = 0; ps && i < ps->n; i++) {
		struct rd_entry *e = ps->e[i];

		if ((e->fam != F_COUNTER && e->fam != F_INT) || e->hidden)
			continue;
		for (size_t k = 0; k < e->nrv; k++) {
			int f = 1;

			if (e->rv[k].src != src || e->rv[k].ring != ring)
				continue;
			rd_out_str(o, first ? "{" : ",{");
			first = 0;
			rd_out_json_key(o, &f, "name");
			rd_out_json_str(o, e->name);
			rd_out_json_key(o, &f, "last");
			if (e->fam == F_COUNTER)
				rd_out_u64(o, (uint64_t)e->rv[k].last);
			else
				rd_out_i64(o, e->rv[k].last);
			rd_out_ch(o, '}');
		}
	}
	rd_out_ch(o, ']');
}

static void json_rings(struct rd_out *o, struct rd_procs *P, struct rd_proc *pr,
                       struct rd_psum *ps)
{
	int first = 1;

	rd_out_str(o, ",\"rings\":[");
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		struct rd_src *s = &P->src[i];

		for (unsigned r = 0; r < s->rings; r++) {
			struct rd_thread *t = &s->threads[r];
			int f = 1;

			if (!t->seen)
				continue;
			rd_out_str(o, first ? "{" : ",{");
			first = 0;
			rd_out_json_u(o, &f, "file", i);
			rd_out_json_u(o, &f, "ring", r);
			rd_out_json_key(o, &f, "thread");
			if (t->name[0])
				rd_out_json_str(o, t->name);
			else
				rd_out_str(o, "null");
			rd_out_json_key(o, &f, "tid");
			if (t->tid >= 0)
				rd_out_i64(o, t->tid);
			else
				rd_out_str(o, "null");
			rd_out_json_u(o, &f, "events", t->events);
			rd_out_json_u(o, &f, "lost_words", t->lost_words);
			rd_out_json_u(o, &f, "runtime_phase_ns", t->phase_ns);
			json_ring_values(o, ps, i, r);
			rd_out_ch(o, '}');
		}
	}
	rd_out_ch(o, ']');
}

static void json_thread(void *arg, const struct rd_tenant *t)
{
	struct trow *w = arg;
	int f = 1;

	rd_out_str(w->o, w->first ? "{" : ",{");
	w->first = 0;
	rd_out_json_u(w->o, &f, "file", w->file);
	rd_out_json_u(w->o, &f, "ring", t->ring);
	rd_out_json_key(w->o, &f, "thread");
	if (t->name[0])
		rd_out_json_str(w->o, t->name);
	else
		rd_out_str(w->o, "null");
	rd_out_json_key(w->o, &f, "tid");
	if (t->tid >= 0)
		rd_out_i64(w->o, t->tid);
	else
		rd_out_str(w->o, "null");
	rd_out_json_u(w->o, &f, "events", t->events);
	rd_out_json_u(w->o, &f, "lost_words", t->lost_words);
	rd_out_json_u(w->o, &f, "runtime_phase_ns", t->phase_ns);
	rd_out_ch(w->o, '}');
}

/* ,"threads":[...]: every tenancy of every ring. */
static void json_threads(struct rd_out *o, struct rd_procs *P, struct rd_proc *pr)
{
	struct trow w = { .o = o, .first = 1 };

	rd_out_str(o, ",\"threads\":[");
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		w.file = i;
		rd_src_each_thread(&P->src[i], json_thread, &w);
	}
	rd_out_ch(o, ']');
}

static void json_proc(struct summary *S, struct rd_out *o, struct rd_procs *P,
                      struct rd_proc *pr, struct rd_psum *ps, struct rd_gc *gc,
                      struct rd_prof *prof)
{
	uint64_t wall = rd_proc_wall(pr), ph = proc_phase_ns(P, pr);
	int f = 1, first = 1;

	rd_out_ch(o, '{');
	rd_out_json_key(o, &f, "pid");
	rd_out_i64(o, pr->pid);
	rd_out_str(o, ",\"files\":");
	rd_proc_json_files(o, P, pr, 0);
	/* Files whose writer ended without ring_stop and is gone. */
	rd_out_str(o, ",\"killed_files\":");
	rd_proc_json_files(o, P, pr, 1);
	rd_out_json_u(o, &f, "wall_ns", wall);
	rd_out_json_key(o, &f, "wall_from");
	rd_out_str(o, pr->started && pr->stopped ? "\"ring_start_to_ring_stop\""
	                                         : "\"first_to_last_event\"");
	rd_out_json_u(o, &f, "events", pr->events);
	rd_out_json_u(o, &f, "lost_words", pr->lost_words);
	rd_out_json_u(o, &f, "runtime_phase_ns", ph);
	rd_out_json_key(o, &f, "runtime_phase_share");
	rd_outf(o, "%.6f", share(ph, wall));
	if (ps && ps->n > 1)
		qsort(ps->e, ps->n, sizeof *ps->e, by_total);
	json_rings(o, P, pr, ps);
	json_threads(o, P, pr);
	for (int fam = 0; fam < F_NFAM; fam++) {
		first = 1;
		rd_outf(o, ",\"%s\":[", fam_key[fam]);
		for (size_t i = 0; ps && i < ps->n; i++)
			if (ps->e[i]->fam == fam && !ps->e[i]->hidden) {
				if (!first)
					rd_out_ch(o, ',');
				first = 0;
				json_entry(S, o, ps->e[i], wall);
			}
		rd_out_ch(o, ']');
	}
	rd_out_json_u(o, &f, "alloc_events", ps ? ps->alloc_events : 0);
	rd_out_str(o, ",\"lifecycle\":{");
	first = 1;
	for (unsigned i = 0; i < RTE_LC_COUNT; i++)
		rd_out_json_u(o, &first, rte_lifecycle_name(i), pr->lifecycle[i]);
	rd_out_ch(o, '}');
	rd_gc_summary_section(gc, o, P, pr, 1);
	rd_prof_summary(prof, o, pr, 1);
	rd_out_ch(o, '}');
}

/* Write process pr (text or JSON, without separator) to o. */
void rd_sum_write_proc(struct summary *S, struct rd_out *o, struct rd_procs *P,
                       struct rd_proc *pr)
{
	if (S->json) {
		json_proc(S, o, P, pr, pr->model, S->m.gc, S->m.prof);
	} else {
		text_proc(S, o, P, pr, pr->model);
		rd_gc_summary_section(S->m.gc, o, P, pr, 0);
		rd_prof_summary(S->m.prof, o, pr, 0);
	}
}

