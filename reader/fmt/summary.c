/*
 * fmt/summary.c - the summary and summary-json formats.
 *
 * Per process (pid): wall time, rings, runtime phases and user spans with
 * count/total/mean/p50/p90/p99/p99.9/max from fixed-size histograms
 * (hist.h), ends without begin and unfinished spans (begun, never ended:
 * see procs.h), the share of wall time spent in runtime phases, counters
 * and user ints (last/min/max, where "last" is the value of the latest
 * timestamp across the process's rings; each ring's own last value is
 * listed per ring), user unit/custom counts, the lifecycle tally and lost
 * words. Memory grows with the number of distinct names (and of rings
 * writing each value), never with the number of events: each event is a
 * table lookup and a histogram add. A duration entry keeps its first
 * SMALL_DURS values as they are and takes a histogram (about 43 KiB) only
 * past them, and a file's cache of user entries is as long as its highest
 * id: a directory of 100,000 small files costs a few KiB each.
 *
 * Files read one after another (rd_ctx.files_in_order): a process whose
 * files were all read and all ended with ring_stop is written at once to
 * an unlinked temporary file and its state freed; the finish copies each
 * process's text from there in order (a crash report still comes first).
 * Memory then stays flat in the number of processes, whatever their
 * number: the temporary file holds the output meanwhile.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gcstats_int.h"
#include "hist.h"
#include "profile.h"
#include "sinks.h"

enum fam { F_PHASE, F_SPAN, F_COUNTER, F_INT, F_UNIT, F_CUSTOM, F_NFAM };

static const char *const fam_title[F_NFAM] = {
	"runtime phase", "user span", "counter", "user int", "user unit",
	"user custom",
};
static const char *const fam_key[F_NFAM] = {
	"phases", "spans", "counters", "user_ints", "user_units", "user_customs",
};

#define SMALL_DURS 8 /* durations of an entry kept before a histogram */

/* The last value a ring wrote for an entry (counters, user ints). */
struct ringval {
	unsigned src, ring;
	int64_t last;
	uint64_t ts;
};

struct entry {
	int fam;
	char *name;
	struct rd_hist *h;   /* F_PHASE, F_SPAN, past SMALL_DURS values */
	uint64_t dur[SMALL_DURS]; /* ... the values until then */
	unsigned ndur;
	uint64_t count;       /* values, or events for unit/custom */
	uint64_t unmatched;   /* ends whose begin was not seen */
	uint64_t unfinished;  /* begins whose end never came */
	int64_t last, min, max; /* F_INT; F_COUNTER stores u64 bit patterns */
	uint64_t last_ts;     /* time of `last`: the latest across rings */
	struct ringval *rv;   /* per ring, in order of first value */
	size_t nrv, rvcap, rvhint;
	int hidden;           /* rte.thread.*: shown with the rings instead */
	int rte;              /* rte.*: procs.c or crashrep.c may need the event */
};

struct psum {
	struct entry **e;
	size_t n, cap;
	struct entry *phase[RTE_P_COUNT];
	struct entry *counter[RTE_C_COUNT];
	uint64_t alloc_events, alloc[RTE_ALLOC_BUCKETS];
};

/* A file's user entries by id, as long as its highest id seen + 1. */
struct ucache {
	unsigned n;
	struct entry *e[];
};

/* Where a process written early is in the spool file. */
struct seg {
	uint64_t off, len; /* len 0: not written early */
};

struct summary {
	struct rd_sink sink;
	struct rd_hist *view; /* scratch: the histogram of a small entry */
	/* processes written early (see the top): */
	int spooling;          /* 0 not yet, 1 on, -1 off (cannot) */
	struct rd_out spool;   /* the unlinked temporary file */
	struct seg *seg;       /* by process index, nseg of them */
	unsigned nseg;
	unsigned scan;         /* the next process to consider */
	unsigned cur_src;      /* the source being read */
	struct rd_gc *gc; /* the GC section (gcstats.h); NULL if out of memory */
	struct rd_prof *prof; /* the profiles' section (profile.h); NULL: none */
	const struct rd_crash *report; /* the crashes seen (sinks.h), or NULL */
	int json;
	int oom;
};

static struct psum *psum_of(struct summary *S, struct rd_proc *pr)
{
	if (!pr->fmt && !(pr->fmt = calloc(1, sizeof(struct psum))))
		S->oom = 1;
	return pr->fmt;
}

static struct entry *find_entry(struct summary *S, struct psum *ps, int fam,
                                const char *name)
{
	struct entry *e;

	for (size_t i = 0; i < ps->n; i++)
		if (ps->e[i]->fam == fam && !strcmp(ps->e[i]->name, name))
			return ps->e[i];
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 16;
		struct entry **n = realloc(ps->e, cap * sizeof *n);

		if (!n)
			goto oom;
		ps->e = n;
		ps->cap = cap;
	}
	e = calloc(1, sizeof *e);
	if (!e || !(e->name = strdup(name))) {
		if (e)
			free(e->name);
		free(e);
		goto oom;
	}
	e->fam = fam;
	e->hidden = !strncmp(name, "rte.thread.", 11);
	e->rte = !strncmp(name, "rte.", 4);
	ps->e[ps->n++] = e;
	return e;
oom:
	S->oom = 1;
	return NULL;
}

/* Room for id in the user entry cache of source rs (grown to id + 1):
 * the cache, or NULL if out of memory. */
static struct ucache *cache_for(struct rd_src *rs, unsigned id)
{
	struct ucache *c = rs->fmt;
	unsigned n = c ? c->n : 0;

	if (id < n)
		return c;
	c = realloc(c, sizeof *c + (id + 1) * sizeof c->e[0]);
	if (!c)
		return NULL;
	memset(c->e + n, 0, (id + 1 - n) * sizeof c->e[0]);
	c->n = id + 1;
	rs->fmt = c;
	return c;
}

/* The entry of a user event, cached per file and id once named. */
static struct entry *user_entry(struct summary *S, struct psum *ps,
                                const struct rd_item *it, int fam)
{
	const struct rte_event *ev = it->ev;
	struct ucache *cache = it->src->fmt;
	struct entry *e;
	char buf[48];

	if (cache && ev->id < cache->n && cache->e[ev->id] &&
	    cache->e[ev->id]->fam == fam)
		return cache->e[ev->id];
	if (!ev->name || !ev->name[0]) { /* not registered (yet) */
		snprintf(buf, sizeof buf, "(unnamed %u)", ev->id);
		return find_entry(S, ps, fam, buf);
	}
	e = find_entry(S, ps, fam, ev->name);
	if ((cache = cache_for(it->src, ev->id)) != NULL)
		cache->e[ev->id] = e;
	return e;
}

/* Record duration v in e: kept as it is while there are few, then in a
 * histogram. */
static void dur_add(struct summary *S, struct entry *e, uint64_t v)
{
	if (e->h) {
		rd_hist_add(e->h, v);
		return;
	}
	if (e->ndur < SMALL_DURS) {
		e->dur[e->ndur++] = v;
		return;
	}
	if (!(e->h = rd_hist_new())) {
		S->oom = 1;
		return;
	}
	for (unsigned i = 0; i < e->ndur; i++)
		rd_hist_add(e->h, e->dur[i]);
	rd_hist_add(e->h, v);
}

/* The histogram of duration entry e, to read until dur_unview(): its own,
 * or S->view filled with its few values. NULL if out of memory. */
static const struct rd_hist *dur_view(struct summary *S, const struct entry *e)
{
	if (e->h)
		return e->h;
	if (!S->view && !(S->view = rd_hist_new())) {
		S->oom = 1;
		return NULL;
	}
	for (unsigned i = 0; i < e->ndur; i++)
		rd_hist_add(S->view, e->dur[i]);
	return S->view;
}

/* Empty S->view again after dur_view(e): only the buckets e filled. */
static void dur_unview(struct summary *S, const struct entry *e)
{
	if (e->h || !S->view)
		return;
	for (unsigned i = 0; i < e->ndur; i++)
		S->view->b[rd_hist_index(e->dur[i])] = 0;
	S->view->count = S->view->sum = S->view->min = S->view->max = 0;
}

/* The total of duration entry e (saturated as the histogram's). */
static uint64_t dur_sum(const struct entry *e)
{
	uint64_t t = 0;

	if (e->h)
		return e->h->sum;
	for (unsigned i = 0; i < e->ndur; i++)
		if (__builtin_add_overflow(t, e->dur[i], &t))
			t = UINT64_MAX;
	return t;
}

static int is_dur(const struct entry *e)
{
	return e->fam == F_PHASE || e->fam == F_SPAN;
}

static struct entry *phase_entry(struct summary *S, struct psum *ps,
                                 const struct rte_event *ev)
{
	char buf[48];

	if (ev->id < RTE_P_COUNT) {
		if (!ps->phase[ev->id])
			ps->phase[ev->id] = find_entry(S, ps, F_PHASE,
			                              rte_event_name(ev, buf, sizeof buf));
		return ps->phase[ev->id];
	}
	return find_entry(S, ps, F_PHASE, rte_event_name(ev, buf, sizeof buf));
}

static struct entry *counter_entry(struct summary *S, struct psum *ps,
                                   const struct rte_event *ev)
{
	char buf[48];

	if (ev->id < RTE_C_COUNT) {
		if (!ps->counter[ev->id])
			ps->counter[ev->id] = find_entry(S, ps, F_COUNTER,
			                                 rte_event_name(ev, buf, sizeof buf));
		return ps->counter[ev->id];
	}
	return find_entry(S, ps, F_COUNTER, rte_event_name(ev, buf, sizeof buf));
}

static void add_end(struct summary *S, struct entry *e, const struct rd_item *it)
{
	if (!e)
		return;
	if (it->matched) {
		dur_add(S, e, it->dur);
		e->count++;
	} else {
		e->unmatched++;
	}
}

/* Ring (src, ring)'s last value of e is v at ts. Most values come in runs
 * of one ring: the ring of the previous call is tried first. */
static void ring_value(struct summary *S, struct entry *e, unsigned src,
                       unsigned ring, int64_t v, uint64_t ts)
{
	struct ringval *r = e->nrv ? &e->rv[e->rvhint] : NULL;

	if (!r || r->src != src || r->ring != ring) {
		size_t i;

		for (i = 0; i < e->nrv; i++)
			if (e->rv[i].src == src && e->rv[i].ring == ring)
				break;
		if (i == e->nrv) {
			if (e->nrv == e->rvcap) {
				size_t cap = e->rvcap ? 2 * e->rvcap : 4;
				struct ringval *n = realloc(e->rv, cap * sizeof *n);

				if (!n) {
					S->oom = 1;
					return;
				}
				e->rv = n;
				e->rvcap = cap;
			}
			e->rv[e->nrv++] = (struct ringval){ src, ring, v, ts };
		}
		e->rvhint = i;
		r = &e->rv[i];
	}
	if (ts >= r->ts) {
		r->last = v;
		r->ts = ts;
	}
}

static void add_value(struct summary *S, struct entry *e, int64_t v,
                      int is_unsigned, uint64_t ts, unsigned src,
                      unsigned ring)
{
	if (!e)
		return;
	ring_value(S, e, src, ring, v, ts);
	/* rings are read one after another: the latest time wins */
	if (e->count == 0 || ts >= e->last_ts) {
		e->last = v;
		e->last_ts = ts;
	}
	if (e->count == 0) {
		e->min = e->max = v;
	} else if (is_unsigned) {
		if ((uint64_t)v < (uint64_t)e->min)
			e->min = v;
		if ((uint64_t)v > (uint64_t)e->max)
			e->max = v;
	} else {
		if (v < e->min)
			e->min = v;
		if (v > e->max)
			e->max = v;
	}
	e->count++;
}

/* The entry of an unfinished span (the begin kept in s). */
static struct entry *open_entry(struct summary *S, struct psum *ps,
                                const struct rd_span_open *s, int user)
{
	struct rte_event ev;
	char buf[48];

	memset(&ev, 0, sizeof ev);
	ev.kind = user ? RTE_EV_USER_SPAN_END : RTE_EV_END;
	ev.id = s->id;
	ev.name = s->name;
	if (!user)
		return phase_entry(S, ps, &ev);
	if (!s->name || !s->name[0]) {
		snprintf(buf, sizeof buf, "(unnamed %u)", s->id);
		return find_entry(S, ps, F_SPAN, buf);
	}
	return find_entry(S, ps, F_SPAN, s->name);
}

/* Count n unfinished spans s[0..n) of process ps that pass filter f (NULL:
 * all pass). */
static void add_unfinished(struct summary *S, struct psum *ps,
                           struct rd_filter *f, const struct rd_span_open *s,
                           unsigned n, int user)
{
	for (unsigned i = 0; i < n; i++) {
		struct entry *e;

		if (f && !rd_span_passes(f, &s[i], user))
			continue;
		if ((e = open_entry(S, ps, &s[i], user)))
			e->unfinished++;
	}
}

static void spool_ready(struct summary *S, struct rd_ctx *c, unsigned src);

static void summary_event(struct rd_sink *s, struct rd_ctx *c,
                          const struct rd_item *it)
{
	struct summary *S = (struct summary *)s;
	const struct rte_event *ev = it->ev;
	struct psum *ps;
	struct entry *e;

	spool_ready(S, c, (unsigned)(it->src - c->procs->src));
	if ((it->ab[0].n || it->ab[1].n) && (ps = psum_of(S, it->proc)))
		for (int k = 0; k < 2; k++)
			add_unfinished(S, ps, c->filter, it->ab[k].s, it->ab[k].n,
			               it->ab[k].user);
	if (!it->pass)
		return;
	if (S->gc)
		rd_gc_event(S->gc, c->procs, it);
	rd_prof_event(S->prof, c->procs, it);
	ps = psum_of(S, it->proc);
	if (!ps)
		return;
	switch (ev->kind) {
	case RTE_EV_END:
		add_end(S, phase_entry(S, ps, ev), it);
		break;
	case RTE_EV_USER_SPAN_END:
		add_end(S, user_entry(S, ps, it, F_SPAN), it);
		break;
	case RTE_EV_COUNTER:
		add_value(S, counter_entry(S, ps, ev), (int64_t)ev->u.counter, 1,
		          it->ts, (unsigned)(it->src - c->procs->src), ev->ring);
		break;
	case RTE_EV_USER_INT:
		add_value(S, user_entry(S, ps, it, F_INT), ev->u.value, 0, it->ts,
		          (unsigned)(it->src - c->procs->src), ev->ring);
		break;
	case RTE_EV_USER_UNIT:
	case RTE_EV_USER_CUSTOM:
		e = user_entry(S, ps, it,
		               ev->kind == RTE_EV_USER_UNIT ? F_UNIT : F_CUSTOM);
		if (e)
			e->count++;
		break;
	case RTE_EV_ALLOC:
		ps->alloc_events++;
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			ps->alloc[i] += ev->u.buckets[i];
		break;
	default: /* begins, lifecycle and losses are tallied by procs.c */
		break;
	}
}

/* ---- the fast path ------------------------------------------------------ */

/* The cached entry of user event `id` if the fast path may use it: named,
 * of family `fam`, and none of the rte.* events procs.c or crashrep.c read. */
static inline struct entry *fast_user(const struct ucache *cache, unsigned id,
                                      int fam)
{
	struct entry *e = cache && id < cache->n ? cache->e[id] : NULL;

	return e && e->fam == fam && !e->rte ? e : NULL;
}

static inline void fast_end(struct summary *S, struct entry *e, int matched,
                            uint64_t dur)
{
	if (matched) {
		if (__builtin_expect(e->h != NULL, 1))
			rd_hist_add(e->h, dur);
		else
			dur_add(S, e, dur);
		e->count++;
	} else {
		e->unmatched++;
	}
}

/* The GC state of ring `ring` of source src (gcstats_int.h), or NULL. */
static struct gring *gc_ring(struct summary *S, struct rd_ctx *c,
                             unsigned src, unsigned ring, struct gfile **gf)
{
	struct gfile *f = rd_gc_file_of(S->gc, src, c->procs->src[src].rings);

	if (!f || ring >= f->nrings)
		return NULL;
	*gf = f;
	return &f->r[ring];
}

/* A phase begin or end or a counter of the run, for the GC section, in
 * the ring's order as rd_gc_run() would see it (user events take no part
 * in GC figures). */
#define GC_RT(what, x)                                                        \
	do {                                                                  \
		if (gr || (S->gc && (gr = gc_ring(S, c, src, (x)->ring, &gf)))) \
			rd_gc_rt_##what(gf, gr, (x));                         \
	} while (0)

/*
 * The sink's run(): what rd_procs_update() and summary_event() do, for the
 * kinds and ids whose entry is known already; stops at the first event it
 * leaves to them (losses, lifecycle, alloc, a first sight, rte.* events).
 * Per-ring and per-process state is looked up once per run.
 */
static size_t summary_run(struct rd_sink *s, struct rd_ctx *c, unsigned src,
                          const struct rte_event *ev, size_t n)
{
	struct summary *S = (struct summary *)s;
	struct rd_src *rs = &c->procs->src[src];
	struct rd_proc *pr = rs->proc;
	struct psum *ps = pr->fmt;
	const struct ucache *cache = rs->fmt;
	struct entry *e;
	struct rd_thread *th;
	const struct rd_span_open *d;
	uint64_t lo, hi, b, dur, thi;
	unsigned nd;
	size_t i;
	int m;
	/* The GC section's state of this ring, found at the run's first
	 * phase or counter: a run of user events costs it nothing. */
	struct gfile *gf = NULL;
	struct gring *gr = NULL;

	spool_ready(S, c, src);
	if (!pr->has_ts || n == 0)
		return 0;
	if (!ps && !(ps = psum_of(S, pr)))
		return 0;
	th = &rs->threads[ev[0].ring];
	lo = pr->first_ts;
	hi = pr->last_ts;
	thi = th->last_ts;
	for (i = 0; i < n; i++) {
		const struct rte_event *x = &ev[i];

		switch (x->kind) {
		case RTE_EV_BEGIN:
			rd_thread_phase_begin(th, x->id, x->ts, x->name);
			GC_RT(begin, x);
			break;
		case RTE_EV_END:
			if (x->id >= RTE_P_COUNT || !(e = ps->phase[x->id]))
				goto out;
			m = rd_thread_phase_end(th, x->id, x->ts, &b, &dur, &d, &nd);
			fast_end(S, e, m, dur);
			if (m && nd)
				add_unfinished(S, ps, NULL, d, nd, 0);
			GC_RT(end, x);
			break;
		case RTE_EV_COUNTER:
			if (x->id >= RTE_C_COUNT || !(e = ps->counter[x->id]))
				goto out;
			add_value(S, e, (int64_t)x->u.counter, 1, x->ts, src, x->ring);
			GC_RT(counter, x);
			break;
		case RTE_EV_USER_INT:
			if (!(e = fast_user(cache, x->id, F_INT)))
				goto out;
			add_value(S, e, x->u.value, 0, x->ts, src, x->ring);
			break;
		case RTE_EV_USER_SPAN_BEGIN:
			rd_spans_begin(&th->spans, x->id, x->ts, x->name);
			break;
		case RTE_EV_USER_SPAN_END:
			if (!(e = fast_user(cache, x->id, F_SPAN)))
				goto out;
			m = rd_thread_span_end(th, x->id, x->ts, &b, &dur, &d, &nd);
			fast_end(S, e, m, dur);
			break;
		case RTE_EV_USER_UNIT:
		case RTE_EV_USER_CUSTOM:
			if (!(e = fast_user(cache, x->id, x->kind == RTE_EV_USER_UNIT
			                                  ? F_UNIT : F_CUSTOM)))
				goto out;
			e->count++;
			break;
		default:
			goto out;
		}
		/* as rd_procs_update(): min and max, not in time order */
		if (x->ts > thi)
			thi = x->ts;
		if (x->ts > hi)
			hi = x->ts;
		else if (x->ts < lo)
			lo = x->ts;
	}
out:
	pr->first_ts = lo;
	pr->last_ts = hi;
	th->last_ts = thi;
	if (i) {
		th->seen = 1;
		th->events += i;
		pr->events += i;
	}
	return i;
}

/* ---- finish ----------------------------------------------------------- */

static int by_total(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;
	uint64_t tx = is_dur(x) ? dur_sum(x) : x->count;
	uint64_t ty = is_dur(y) ? dur_sum(y) : y->count;

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
                           struct psum *ps, int fam, uint64_t wall)
{
	const struct rd_hist *h;
	int head = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct entry *e = ps->e[i];

		if (e->fam != fam || e->hidden)
			continue;
		if (!head) {
			rd_outf(o, "\n  %-28s %9s %10s %10s %10s %10s %10s %10s %10s %6s\n",
			     fam_title[fam], "count", "total", "mean", "p50", "p90",
			     "p99", "p99.9", "max", "%wall");
			head = 1;
		}
		rd_outf(o, "  %-28.127s %9llu", e->name, (unsigned long long)e->count);
		if (!(h = dur_view(S, e)))
			continue;
		out_dur(o, h->sum, 11);
		out_dur(o, rd_hist_mean(h), 11);
		for (size_t q = 0; q < sizeof quantiles / sizeof quantiles[0]; q++)
			out_dur(o, rd_hist_quantile(h, quantiles[q].q), 11);
		out_dur(o, h->max, 11);
		rd_outf(o, " %5.1f%%", 100.0 * share(h->sum, wall));
		dur_unview(S, e);
		if (e->unmatched)
			rd_outf(o, "  (%llu ends without begin)", (unsigned long long)e->unmatched);
		if (e->unfinished)
			rd_outf(o, "  (%llu unfinished)", (unsigned long long)e->unfinished);
		rd_out_ch(o, '\n');
	}
}

static void text_values(struct rd_out *o, struct psum *ps, int fam)
{
	int head = 0, u = fam == F_COUNTER;

	for (size_t i = 0; i < ps->n; i++) {
		struct entry *e = ps->e[i];

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

static void text_counts(struct rd_out *o, struct psum *ps)
{
	int head = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct entry *e = ps->e[i];

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
static void text_ring_values(struct rd_out *o, struct psum *ps)
{
	int head = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct entry *e = ps->e[i];

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
                      struct rd_proc *pr, struct psum *ps)
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

static void json_key(struct rd_out *o, int *first, const char *k)
{
	if (!*first)
		rd_out_ch(o, ',');
	*first = 0;
	rd_out_ch(o, '"');
	rd_out_str(o, k);
	rd_out_mem(o, "\":", 2);
}

static void json_u(struct rd_out *o, int *first, const char *k, uint64_t v)
{
	json_key(o, first, k);
	rd_out_u64(o, v);
}

static void json_entry(struct summary *S, struct rd_out *o,
                       const struct entry *e, uint64_t wall)
{
	const struct rd_hist *h;
	int f = 1;

	rd_out_ch(o, '{');
	json_key(o, &f, "name");
	rd_out_json_str(o, e->name);
	json_u(o, &f, "count", e->count);
	if (is_dur(e) && (h = dur_view(S, e)) != NULL) {
		json_u(o, &f, "total_ns", h->sum);
		json_u(o, &f, "mean_ns", rd_hist_mean(h));
		json_u(o, &f, "min_ns", h->count ? h->min : 0);
		json_u(o, &f, "p50_ns", rd_hist_quantile(h, 0.5));
		json_u(o, &f, "p90_ns", rd_hist_quantile(h, 0.9));
		json_u(o, &f, "p99_ns", rd_hist_quantile(h, 0.99));
		json_u(o, &f, "p999_ns", rd_hist_quantile(h, 0.999));
		json_u(o, &f, "max_ns", h->max);
		json_key(o, &f, "wall_share");
		rd_outf(o, "%.6f", share(h->sum, wall));
		dur_unview(S, e);
		json_u(o, &f, "unmatched_ends", e->unmatched);
		json_u(o, &f, "unfinished", e->unfinished);
	} else if (e->fam == F_COUNTER) {
		json_u(o, &f, "last", (uint64_t)e->last);
		json_u(o, &f, "min", (uint64_t)e->min);
		json_u(o, &f, "max", (uint64_t)e->max);
	} else if (e->fam == F_INT) {
		json_key(o, &f, "last");
		rd_out_i64(o, e->last);
		json_key(o, &f, "min");
		rd_out_i64(o, e->min);
		json_key(o, &f, "max");
		rd_out_i64(o, e->max);
	}
	rd_out_ch(o, '}');
}

/* "last_values" of ring (src, ring): each counter and int it wrote. */
static void json_ring_values(struct rd_out *o, struct psum *ps, unsigned src,
                             unsigned ring)
{
	int first = 1;

	rd_out_str(o, ",\"last_values\":[");
	for (size_t i = 0; ps && i < ps->n; i++) {
		struct entry *e = ps->e[i];

		if ((e->fam != F_COUNTER && e->fam != F_INT) || e->hidden)
			continue;
		for (size_t k = 0; k < e->nrv; k++) {
			int f = 1;

			if (e->rv[k].src != src || e->rv[k].ring != ring)
				continue;
			rd_out_str(o, first ? "{" : ",{");
			first = 0;
			json_key(o, &f, "name");
			rd_out_json_str(o, e->name);
			json_key(o, &f, "last");
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
                       struct psum *ps)
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
			json_u(o, &f, "file", i);
			json_u(o, &f, "ring", r);
			json_key(o, &f, "thread");
			if (t->name[0])
				rd_out_json_str(o, t->name);
			else
				rd_out_str(o, "null");
			json_key(o, &f, "tid");
			if (t->tid >= 0)
				rd_out_i64(o, t->tid);
			else
				rd_out_str(o, "null");
			json_u(o, &f, "events", t->events);
			json_u(o, &f, "lost_words", t->lost_words);
			json_u(o, &f, "runtime_phase_ns", t->phase_ns);
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
	json_u(w->o, &f, "file", w->file);
	json_u(w->o, &f, "ring", t->ring);
	json_key(w->o, &f, "thread");
	if (t->name[0])
		rd_out_json_str(w->o, t->name);
	else
		rd_out_str(w->o, "null");
	json_key(w->o, &f, "tid");
	if (t->tid >= 0)
		rd_out_i64(w->o, t->tid);
	else
		rd_out_str(w->o, "null");
	json_u(w->o, &f, "events", t->events);
	json_u(w->o, &f, "lost_words", t->lost_words);
	json_u(w->o, &f, "runtime_phase_ns", t->phase_ns);
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
                      struct rd_proc *pr, struct psum *ps, struct rd_gc *gc,
                      struct rd_prof *prof)
{
	uint64_t wall = rd_proc_wall(pr), ph = proc_phase_ns(P, pr);
	int f = 1, first = 1;

	rd_out_ch(o, '{');
	json_key(o, &f, "pid");
	rd_out_i64(o, pr->pid);
	rd_out_str(o, ",\"files\":");
	rd_proc_json_files(o, P, pr, 0);
	/* Files whose writer ended without ring_stop and is gone. */
	rd_out_str(o, ",\"killed_files\":");
	rd_proc_json_files(o, P, pr, 1);
	json_u(o, &f, "wall_ns", wall);
	json_key(o, &f, "wall_from");
	rd_out_str(o, pr->started && pr->stopped ? "\"ring_start_to_ring_stop\""
	                                         : "\"first_to_last_event\"");
	json_u(o, &f, "events", pr->events);
	json_u(o, &f, "lost_words", pr->lost_words);
	json_u(o, &f, "runtime_phase_ns", ph);
	json_key(o, &f, "runtime_phase_share");
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
	json_u(o, &f, "alloc_events", ps ? ps->alloc_events : 0);
	rd_out_str(o, ",\"lifecycle\":{");
	first = 1;
	for (unsigned i = 0; i < RTE_LC_COUNT; i++)
		json_u(o, &first, rte_lifecycle_name(i), pr->lifecycle[i]);
	rd_out_ch(o, '}');
	rd_gc_summary_section(gc, o, P, pr, 1);
	rd_prof_summary(prof, o, pr, 1);
	rd_out_ch(o, '}');
}

static void free_psum(struct rd_proc *pr)
{
	struct psum *ps = pr->fmt;

	for (size_t k = 0; ps && k < ps->n; k++) {
		free(ps->e[k]->rv);
		free(ps->e[k]->name);
		free(ps->e[k]->h);
		free(ps->e[k]);
	}
	if (ps)
		free(ps->e);
	free(ps);
	pr->fmt = NULL;
}

/* The per-file and per-process state this format hung on procs. */
static void free_state(struct rd_procs *P)
{
	for (unsigned i = 0; i < P->nsrc; i++) {
		free(P->src[i].fmt);
		P->src[i].fmt = NULL;
	}
	for (unsigned i = 0; i < P->nproc; i++)
		free_psum(P->proc[i]);
}

/* Spans of pr still open at the end of their file are unfinished: counted
 * once (their stacks are emptied). */
static void end_open_spans(struct summary *S, struct rd_ctx *c,
                           struct rd_proc *pr)
{
	struct rd_procs *P = c->procs;
	struct psum *ps;

	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		struct rd_src *rs = &P->src[i];

		for (unsigned r = 0; r < rs->rings; r++) {
			struct rd_thread *t = &rs->threads[r];

			if (!t->phases.depth && !t->spans.depth)
				continue;
			if (!(ps = psum_of(S, pr)))
				return;
			add_unfinished(S, ps, c->filter, t->phases.s, t->phases.depth, 0);
			add_unfinished(S, ps, c->filter, t->spans.s, t->spans.depth, 1);
			rd_spans_free(&t->phases);
			rd_spans_free(&t->spans);
		}
	}
}

/* Write process pr (text or JSON, without separator) to o. */
static void write_proc(struct summary *S, struct rd_out *o, struct rd_procs *P,
                       struct rd_proc *pr)
{
	if (S->json) {
		json_proc(S, o, P, pr, pr->fmt, S->gc, S->prof);
	} else {
		text_proc(S, o, P, pr, pr->fmt);
		rd_gc_summary_section(S->gc, o, P, pr, 0);
		rd_prof_summary(S->prof, o, pr, 0);
	}
}

/* ---- processes written early ------------------------------------------- */

/* Open the spool: an unlinked file in $TMPDIR (else /tmp). 0 or -1. */
static int spool_open(struct summary *S)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof path, "%s/rte-read-XXXXXX", dir) >= sizeof path)
		return -1;
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
		return -1;
	unlink(path);
	if (rd_out_init(&S->spool, fd, "a temporary file") < 0) {
		close(fd);
		return -1;
	}
	return 0;
}

/* The position of the next byte written to the spool. */
static uint64_t spool_pos(struct summary *S)
{
	off_t at = lseek(S->spool.fd, 0, SEEK_CUR);

	return (uint64_t)(at < 0 ? 0 : at) + S->spool.len;
}

/* 1 if every file of pr was read (the next source read is `src`) and
 * ended with ring_stop: nothing can change what is said of it. */
static int proc_done(const struct rd_procs *P, const struct rd_proc *pr,
                     unsigned src)
{
	if (pr->last_src == RD_NO_SRC || pr->last_src >= src)
		return 0;
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src)
		if (!P->src[i].stopped)
			return 0;
	return 1;
}

/* Write pr to the spool and free its state. */
static void spool_proc(struct summary *S, struct rd_ctx *c, struct rd_proc *pr)
{
	S->report = c->report;
	struct rd_procs *P = c->procs;
	uint64_t off;

	if (pr->index >= S->nseg) {
		unsigned n = S->nseg ? 2 * S->nseg : 1024;
		struct seg *g;

		while (n <= pr->index)
			n *= 2;
		if (!(g = realloc(S->seg, n * sizeof *g)))
			return; /* written at the end instead */
		memset(g + S->nseg, 0, (n - S->nseg) * sizeof *g);
		S->seg = g;
		S->nseg = n;
	}
	end_open_spans(S, c, pr);
	if (rd_filter_pid_pass(c->filter, pr->pid)) { /* else not shown (--pid) */
		off = spool_pos(S);
		write_proc(S, &S->spool, P, pr);
		S->seg[pr->index] = (struct seg){ off, spool_pos(S) - off };
	}
	free_psum(pr);
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		free(P->src[i].fmt);
		P->src[i].fmt = NULL;
		rd_gc_forget_file(S->gc, i);
		for (unsigned r = 0; r < P->src[i].rings; r++) {
			rd_spans_free(&P->src[i].threads[r].phases);
			rd_spans_free(&P->src[i].threads[r].spans);
		}
	}
}

/* An event of source src comes: write the processes finished before it. */
static void spool_ready(struct summary *S, struct rd_ctx *c, unsigned src)
{
	struct rd_procs *P = c->procs;

	if (!c->files_in_order || src <= S->cur_src || S->spooling < 0)
		return;
	S->cur_src = src;
	for (; S->scan < P->nproc; S->scan++) {
		struct rd_proc *pr = P->proc[S->scan];

		if (pr->last_src == RD_NO_SRC || pr->last_src >= src)
			break; /* not read yet: wait (the processes stay in order) */
		if (!proc_done(P, pr, src))
			continue; /* written at the end */
		if (!S->spooling)
			S->spooling = spool_open(S) < 0 ? -1 : 1;
		if (S->spooling < 0 || S->spool.state != RD_OUT_OK)
			return;
		spool_proc(S, c, pr);
	}
}

/* Copy process pr's text from the spool to o. 0, or -1 if it cannot be
 * read back. */
static int spool_copy(struct summary *S, struct rd_out *o, const struct seg *g)
{
	char b[65536];
	uint64_t done = 0;

	while (done < g->len) {
		size_t want = g->len - done < sizeof b ? (size_t)(g->len - done) : sizeof b;
		ssize_t n = pread(S->spool.fd, b, want, (off_t)(g->off + done));

		if (n <= 0)
			return -1;
		rd_out_mem(o, b, (size_t)n);
		done += (uint64_t)n;
	}
	return 0;
}

/* ---- the crash report of summary-json (crashrep.h) --------------------- */

struct jlast {
	struct rd_out *o;
	int open;  /* a ring's object is open */
	int first; /* no event written in it yet */
};

/* [{"ring":"ring 0 (...)","events":["...",...]},...] */
static void json_last(void *ud, const char *ring, const char *line)
{
	struct jlast *j = ud;

	if (ring) {
		if (j->open)
			rd_out_str(j->o, "]},");
		rd_out_str(j->o, "{\"ring\":");
		rd_out_json_str(j->o, ring);
		rd_out_str(j->o, ",\"events\":[");
		j->open = 1;
		j->first = 1;
		return;
	}
	if (!j->first)
		rd_out_ch(j->o, ',');
	j->first = 0;
	rd_out_json_str(j->o, line);
}

/* `,"crashes":[...]` (always written, [] if none; doc/SUMMARY-JSON.md). */
static void json_crashes(struct rd_out *o, const struct rd_crash *c)
{
	unsigned n = rd_crash_count(c, 0);

	rd_out_str(o, ",\"crashes\":[");
	for (unsigned i = 0; i < n; i++) {
		struct rd_crash_view v;
		struct jlast jl = { .o = o };

		rd_crash_view(c, i, &v);
		if (i)
			rd_out_ch(o, ',');
		rd_outf(o, "{\"pid\":%ld,\"file\":", v.pid);
		rd_out_json_str(o, v.path);
		rd_outf(o, ",\"ring\":%u,\"thread\":", v.ring);
		rd_out_json_str(o, v.thread);
		rd_outf(o, ",\"ts\":%" PRIu64 ",", v.ts);
		rd_crash_json_fields(o, v.r);
		rd_out_str(o, ",\"stack\":");
		rd_crash_json_frames(o, v.frames, v.nframes);
		if (v.nmade) {
			rd_outf(o, ",\"made_by_ring\":%d,\"made_by_stack\":",
			     v.made_ring);
			rd_crash_json_frames(o, v.made_by, v.nmade);
		}
		rd_out_str(o, ",\"last_events\":[");
		rd_crash_each_last(c, i, json_last, &jl);
		rd_out_str(o, jl.open ? "]}]}" : "]}");
	}
	rd_out_ch(o, ']');
}

static void summary_finish(struct rd_sink *s, struct rd_ctx *c)
{
	struct summary *S = (struct summary *)s;
	struct rd_procs *P = c->procs;
	struct rd_out *o = c->out;
	uint64_t events = 0;

	S->report = c->report;
	for (unsigned i = 0; i < P->nproc; i++)
		events += P->proc[i]->events;
	/* Spans still open at the end of their file are unfinished. */
	for (unsigned i = 0; i < P->nproc; i++)
		end_open_spans(S, c, P->proc[i]);
	if (S->spooling > 0 && rd_out_flush(&S->spool) < 0)
		S->oom = 1; /* the processes written there are lost */
	if (S->json)
		rd_out_str(o, "{\"schema_version\":1,\"processes\":[");
	else
		rd_text_crash_report(c->report, o); /* a crash comes first */
	for (unsigned i = 0, shown = 0; i < P->nproc; i++) {
		struct rd_proc *pr = P->proc[i];

		if (!rd_filter_pid_pass(c->filter, pr->pid)) /* --pid */
			continue;
		if (shown++)
			rd_out_ch(o, S->json ? ',' : '\n');
		if (i < S->nseg && S->seg[i].len) {
			if (spool_copy(S, o, &S->seg[i]) < 0)
				S->oom = 1;
		} else {
			write_proc(S, o, P, pr);
		}
	}
	if (S->json) {
		int f = 0;

		rd_out_ch(o, ']');
		json_crashes(o, c->report);
		json_u(o, &f, "events", events);
		json_u(o, &f, "lost_words", c->lost_total);
		rd_out_str(o, ",\"complete\":");
		rd_out_str(o, S->oom ? "false" : "true");
		rd_out_str(o, "}\n");
	} else {
		rd_outf(o, "\ntotal: %u process%s, %llu events, %llu lost words\n", P->nproc,
		     P->nproc == 1 ? "" : "es", (unsigned long long)events,
		     (unsigned long long)c->lost_total);
		if (S->oom)
			rd_outf(o, "(incomplete: out of memory while summarising)\n");
	}
	free_state(P);
}

static void summary_destroy(struct rd_sink *s)
{
	struct summary *S = (struct summary *)s;

	rd_gc_free(S->gc);
	free(S->view);
	free(S->seg);
	if (S->spooling > 0) {
		int fd = S->spool.fd;

		rd_out_fini(&S->spool);
		close(fd);
	}
	rd_prof_free(S->prof);
	free(S);
}

struct rd_sink *rd_sink_summary(int json)
{
	struct summary *S = calloc(1, sizeof *S);

	if (!S)
		return NULL;
	S->sink = (struct rd_sink){ NULL, summary_event, summary_finish, summary_destroy,
	                           summary_run };
	S->json = json;
	S->gc = rd_gc_new(); /* NULL: the summary without its GC section */
	S->prof = rd_prof_new(); /* NULL: without its profiles */
	return &S->sink;
}
