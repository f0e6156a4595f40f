/*
 * fmt/summary.c - the summary and summary-json formats: the accounting
 * (fmt/summary_out.c renders, fmt/summary_sink.c is the sink).
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
#include <stdio.h>
#include <stdlib.h>

#include "gcstats_int.h"
#include "summary.h"

struct psum *rd_sum_psum_of(struct summary *S, struct rd_proc *pr)
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

/* The histogram of duration entry e, to read until rd_sum_dur_unview(): its own,
 * or S->view filled with its few values. NULL if out of memory. */
const struct rd_hist *rd_sum_dur_view(struct summary *S, const struct entry *e)
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

/* Empty S->view again after rd_sum_dur_view(e): only the buckets e filled. */
void rd_sum_dur_unview(struct summary *S, const struct entry *e)
{
	if (e->h || !S->view)
		return;
	for (unsigned i = 0; i < e->ndur; i++)
		S->view->b[rd_hist_index(e->dur[i])] = 0;
	S->view->count = S->view->sum = S->view->min = S->view->max = 0;
}

/* The total of duration entry e (saturated as the histogram's). */
uint64_t rd_sum_dur_sum(const struct entry *e)
{
	uint64_t t = 0;

	if (e->h)
		return e->h->sum;
	for (unsigned i = 0; i < e->ndur; i++)
		if (__builtin_add_overflow(t, e->dur[i], &t))
			t = UINT64_MAX;
	return t;
}

int rd_sum_is_dur(const struct entry *e)
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
void rd_sum_add_unfinished(struct summary *S, struct psum *ps,
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

void rd_sum_spool_ready(struct summary *S, struct rd_ctx *c, unsigned src);

void rd_sum_event(struct rd_sink *s, struct rd_ctx *c,
                          const struct rd_item *it)
{
	struct summary *S = (struct summary *)s;
	const struct rte_event *ev = it->ev;
	struct psum *ps;
	struct entry *e;

	rd_sum_spool_ready(S, c, (unsigned)(it->src - c->procs->src));
	if ((it->ab[0].n || it->ab[1].n) && (ps = rd_sum_psum_of(S, it->proc)))
		for (int k = 0; k < 2; k++)
			rd_sum_add_unfinished(S, ps, c->filter, it->ab[k].s, it->ab[k].n,
			               it->ab[k].user);
	if (!it->pass)
		return;
	if (S->gc)
		rd_gc_event(S->gc, c->procs, it);
	rd_prof_event(S->prof, c->procs, it);
	ps = rd_sum_psum_of(S, it->proc);
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
 * The sink's run(): what rd_procs_update() and rd_sum_event() do, for the
 * kinds and ids whose entry is known already; stops at the first event it
 * leaves to them (losses, lifecycle, alloc, a first sight, rte.* events).
 * Per-ring and per-process state is looked up once per run.
 */
size_t rd_sum_run(struct rd_sink *s, struct rd_ctx *c, unsigned src,
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

	rd_sum_spool_ready(S, c, src);
	if (!pr->has_ts || n == 0)
		return 0;
	if (!ps && !(ps = rd_sum_psum_of(S, pr)))
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
				rd_sum_add_unfinished(S, ps, NULL, d, nd, 0);
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

void rd_sum_free_psum(struct rd_proc *pr)
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
void rd_sum_free_state(struct rd_procs *P)
{
	for (unsigned i = 0; i < P->nsrc; i++) {
		free(P->src[i].fmt);
		P->src[i].fmt = NULL;
	}
	for (unsigned i = 0; i < P->nproc; i++)
		rd_sum_free_psum(P->proc[i]);
}

/* Spans of pr still open at the end of their file are unfinished: counted
 * once (their stacks are emptied). */
void rd_sum_end_open_spans(struct summary *S, struct rd_ctx *c,
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
			if (!(ps = rd_sum_psum_of(S, pr)))
				return;
			rd_sum_add_unfinished(S, ps, c->filter, t->phases.s, t->phases.depth, 0);
			rd_sum_add_unfinished(S, ps, c->filter, t->spans.s, t->spans.depth, 1);
			rd_spans_free(&t->phases);
			rd_spans_free(&t->spans);
		}
	}
}

