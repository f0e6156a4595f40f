/*
 * model.c - the run model's accounting (model.h): one pass over the
 * events, the slow way (rd_model_event, after rd_procs_update) or the
 * fast way (rd_model_run, the same steps over a run of one ring).
 *
 * Per process: runtime phases and user spans with count and durations
 * (the first SMALL_DURS values of an entry as they are, then a histogram
 * of about 43 KiB: hist.h), ends without begin and unfinished spans
 * (begun, never ended: see procs.h), counters and user ints (last/min/max,
 * where "last" is the value of the latest timestamp across the process's
 * rings; each ring's own last value is kept too), user unit/custom counts
 * and the allocation histogram. Each event is a table lookup and a
 * histogram add; a file's cache of user entries is as long as its
 * highest id: a directory of 100,000 small files costs a few KiB each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcstats_int.h"
#include "model.h"
#include "profile.h"
#include "vec.h"

/* A file's user entries by id, as long as its highest id seen + 1
 * (rd_src.model). */
struct ucache {
	unsigned n;
	struct rd_entry *e[];
};

struct rd_psum *rd_model_psum(struct rd_model *M, struct rd_proc *pr)
{
	if (!pr->model && !(pr->model = calloc(1, sizeof(struct rd_psum))))
		M->oom = 1;
	return pr->model;
}

static struct rd_entry *find_entry(struct rd_model *M, struct rd_psum *ps, int fam,
                                const char *name)
{
	struct rd_entry *e;

	for (size_t i = 0; i < ps->n; i++)
		if (ps->e[i]->fam == fam && !strcmp(ps->e[i]->name, name))
			return ps->e[i];
	if (RD_VEC_ROOM(ps->e, ps->cap, ps->n, 16) < 0)
		goto oom;
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
	M->oom = 1;
	return NULL;
}

/* Room for id in the user entry cache of source rs (grown to id + 1):
 * the cache, or NULL if out of memory. */
static struct ucache *cache_for(struct rd_src *rs, unsigned id)
{
	struct ucache *c = rs->model;
	unsigned n = c ? c->n : 0;

	if (id < n)
		return c;
	c = realloc(c, sizeof *c + (id + 1) * sizeof c->e[0]);
	if (!c)
		return NULL;
	memset(c->e + n, 0, (id + 1 - n) * sizeof c->e[0]);
	c->n = id + 1;
	rs->model = c;
	return c;
}

/* The entry of a user event, cached per file and id once named. */
static struct rd_entry *user_entry(struct rd_model *M, struct rd_psum *ps,
                                const struct rd_item *it, int fam)
{
	const struct rte_event *ev = it->ev;
	struct ucache *cache = it->src->model;
	struct rd_entry *e;
	char buf[48];

	if (cache && ev->id < cache->n && cache->e[ev->id] &&
	    cache->e[ev->id]->fam == fam)
		return cache->e[ev->id];
	if (!ev->name || !ev->name[0]) { /* not registered (yet) */
		snprintf(buf, sizeof buf, "(unnamed %u)", ev->id);
		return find_entry(M, ps, fam, buf);
	}
	e = find_entry(M, ps, fam, ev->name);
	if ((cache = cache_for(it->src, ev->id)) != NULL)
		cache->e[ev->id] = e;
	return e;
}

/* Record duration v in e: kept as it is while there are few, then in a
 * histogram. */
static void dur_add(struct rd_model *M, struct rd_entry *e, uint64_t v)
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
		M->oom = 1;
		return;
	}
	for (unsigned i = 0; i < e->ndur; i++)
		rd_hist_add(e->h, e->dur[i]);
	rd_hist_add(e->h, v);
}

/* The entry of family fam for ev, by its name; those of the known ids
 * (below n) kept in cache[ev->id] after the first look. */
static struct rd_entry *cached_entry(struct rd_model *M, struct rd_psum *ps,
                                     int fam, struct rd_entry **cache,
                                     unsigned n, const struct rte_event *ev)
{
	char buf[48];

	if (ev->id < n) {
		if (!cache[ev->id])
			cache[ev->id] = find_entry(M, ps, fam,
			                           rte_event_name(ev, buf, sizeof buf));
		return cache[ev->id];
	}
	return find_entry(M, ps, fam, rte_event_name(ev, buf, sizeof buf));
}

static struct rd_entry *phase_entry(struct rd_model *M, struct rd_psum *ps,
                                 const struct rte_event *ev)
{
	return cached_entry(M, ps, F_PHASE, ps->phase, RTE_P_COUNT, ev);
}

static struct rd_entry *counter_entry(struct rd_model *M, struct rd_psum *ps,
                                   const struct rte_event *ev)
{
	return cached_entry(M, ps, F_COUNTER, ps->counter, RTE_C_COUNT, ev);
}

static void add_end(struct rd_model *M, struct rd_entry *e, const struct rd_item *it)
{
	if (!e)
		return;
	if (it->matched) {
		dur_add(M, e, it->dur);
		e->count++;
	} else {
		e->unmatched++;
	}
}

/* Ring (src, ring)'s last value of e is v at ts. Most values come in runs
 * of one ring: the ring of the previous call is tried first. */
static void ring_value(struct rd_model *M, struct rd_entry *e, unsigned src,
                       unsigned ring, int64_t v, uint64_t ts)
{
	struct rd_ringval *r = e->nrv ? &e->rv[e->rvhint] : NULL;

	if (!r || r->src != src || r->ring != ring) {
		size_t i;

		for (i = 0; i < e->nrv; i++)
			if (e->rv[i].src == src && e->rv[i].ring == ring)
				break;
		if (i == e->nrv) {
			if (RD_VEC_ROOM(e->rv, e->rvcap, e->nrv, 4) < 0) {
				M->oom = 1;
				return;
			}
			e->rv[e->nrv++] = (struct rd_ringval){ src, ring, v, ts };
		}
		e->rvhint = i;
		r = &e->rv[i];
	}
	if (ts >= r->ts) {
		r->last = v;
		r->ts = ts;
	}
}

static void add_value(struct rd_model *M, struct rd_entry *e, int64_t v,
                      int is_unsigned, uint64_t ts, unsigned src,
                      unsigned ring)
{
	if (!e)
		return;
	ring_value(M, e, src, ring, v, ts);
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
static struct rd_entry *open_entry(struct rd_model *M, struct rd_psum *ps,
                                const struct rd_span_open *s, int user)
{
	struct rte_event ev;
	char buf[48];

	memset(&ev, 0, sizeof ev);
	ev.kind = user ? RTE_EV_USER_SPAN_END : RTE_EV_END;
	ev.id = s->id;
	ev.name = s->name;
	if (!user)
		return phase_entry(M, ps, &ev);
	if (!s->name || !s->name[0]) {
		snprintf(buf, sizeof buf, "(unnamed %u)", s->id);
		return find_entry(M, ps, F_SPAN, buf);
	}
	return find_entry(M, ps, F_SPAN, s->name);
}

/* Count n unfinished spans s[0..n) of process ps that pass filter f (NULL:
 * all pass). */
static void add_unfinished(struct rd_model *M, struct rd_psum *ps,
                           struct rd_filter *f, const struct rd_span_open *s,
                           unsigned n, int user)
{
	for (unsigned i = 0; i < n; i++) {
		struct rd_entry *e;

		if (f && !rd_span_passes(f, &s[i], user))
			continue;
		if ((e = open_entry(M, ps, &s[i], user)))
			e->unfinished++;
	}
}

void rd_model_event(struct rd_model *M, struct rd_ctx *c, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	struct rd_psum *ps;
	struct rd_entry *e;

	if (!(M->what & RD_MODEL_ENTRIES)) {
		if (it->pass && M->gc)
			rd_gc_event(M->gc, c->procs, it);
		if (it->pass && M->prof)
			rd_prof_event(M->prof, c->procs, it);
		return;
	}
	if ((it->ab[0].n || it->ab[1].n) && (ps = rd_model_psum(M, it->proc)))
		for (int k = 0; k < 2; k++)
			add_unfinished(M, ps, c->filter, it->ab[k].s, it->ab[k].n,
			               it->ab[k].user);
	if (!it->pass)
		return;
	if (M->gc)
		rd_gc_event(M->gc, c->procs, it);
	if (M->prof)
		rd_prof_event(M->prof, c->procs, it);
	ps = rd_model_psum(M, it->proc);
	if (!ps)
		return;
	switch (ev->kind) {
	case RTE_EV_END:
		add_end(M, phase_entry(M, ps, ev), it);
		break;
	case RTE_EV_USER_SPAN_END:
		add_end(M, user_entry(M, ps, it, F_SPAN), it);
		break;
	case RTE_EV_COUNTER:
		add_value(M, counter_entry(M, ps, ev), (int64_t)ev->u.counter, 1,
		          it->ts, (unsigned)(it->src - c->procs->src), ev->ring);
		break;
	case RTE_EV_USER_INT:
		add_value(M, user_entry(M, ps, it, F_INT), ev->u.value, 0, it->ts,
		          (unsigned)(it->src - c->procs->src), ev->ring);
		break;
	case RTE_EV_USER_UNIT:
	case RTE_EV_USER_CUSTOM:
		e = user_entry(M, ps, it,
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
static inline struct rd_entry *fast_user(const struct ucache *cache, unsigned id,
                                         int fam)
{
	struct rd_entry *e = cache && id < cache->n ? cache->e[id] : NULL;

	return e && e->fam == fam && !e->rte ? e : NULL;
}

/* Without entries: 1 if procs.c or crashrep.c may need the event (an
 * rte.* int or custom event), which the fast path leaves to them. */
static inline int rte_event(const struct rte_event *x)
{
	return x->name && x->name[0] == 'r' && !strncmp(x->name, "rte.", 4);
}

static inline void fast_end(struct rd_model *M, struct rd_entry *e, int matched,
                            uint64_t dur)
{
	if (matched) {
		if (__builtin_expect(e->h != NULL, 1))
			rd_hist_add(e->h, dur);
		else
			dur_add(M, e, dur);
		e->count++;
	} else {
		e->unmatched++;
	}
}

/* The GC state of ring `ring` of source src (gcstats_int.h), or NULL. */
static struct gring *gc_ring(struct rd_model *M, struct rd_ctx *c,
                             unsigned src, unsigned ring, struct gfile **gf)
{
	struct gfile *f = rd_gc_file_of(M->gc, src, c->procs->src[src].rings);

	if (!f || ring >= f->nrings)
		return NULL;
	*gf = f;
	return &f->r[ring];
}

/* A runtime event of the run, for the GC figures, in the ring's order as
 * rd_gc_event() would see it (user events take no part in GC figures). */
#define GC_RT(what, x)                                                        \
	do {                                                                  \
		if (gr || (M->gc && (gr = gc_ring(M, c, src, (x)->ring, &gf)))) \
			rd_gc_rt_##what(gf, gr, (x));                         \
	} while (0)

/*
 * The fast path: what rd_procs_update() and rd_model_event() do, for the
 * kinds and ids whose entry is known already; stops at the first event it
 * leaves to them (losses, lifecycle, a first sight, rte.* events, and with
 * entries allocations). Per-ring and per-process state is looked up once
 * per run. `entries` is a constant: each caller below is this loop
 * specialised, with or without the entries (and the phase and span
 * stacks, which only the entries read).
 */
static inline __attribute__((always_inline)) size_t
run(struct rd_model *M, struct rd_ctx *c, unsigned src,
    const struct rte_event *ev, size_t n, const int entries)
{
	struct rd_src *rs = &c->procs->src[src];
	struct rd_proc *pr = rs->proc;
	struct rd_psum *ps = pr->model;
	const struct ucache *cache = rs->model;
	struct rd_entry *e;
	struct rd_thread *th;
	const struct rd_span_open *d;
	uint64_t lo, hi, b, dur, thi;
	unsigned nd;
	size_t i;
	int m;
	/* The GC state of this ring, found at the run's first phase or
	 * counter: a run of user events costs it nothing. */
	struct gfile *gf = NULL;
	struct gring *gr = NULL;

	if (!pr->has_ts || n == 0 || ev[0].ring >= rs->rings)
		return 0;
	if (entries && !ps && !(ps = rd_model_psum(M, pr)))
		return 0;
	th = &rs->threads[ev[0].ring];
	lo = pr->first_ts;
	hi = pr->last_ts;
	thi = th->last_ts;
	for (i = 0; i < n; i++) {
		const struct rte_event *x = &ev[i];

		switch (x->kind) {
		case RTE_EV_BEGIN:
			if (entries)
				rd_thread_phase_begin(th, x->id, x->ts, x->name);
			GC_RT(begin, x);
			break;
		case RTE_EV_END:
			if (entries) {
				if (x->id >= RTE_P_COUNT || !(e = ps->phase[x->id]))
					goto out;
				m = rd_thread_phase_end(th, x->id, x->ts, &b, &dur, &d, &nd);
				fast_end(M, e, m, dur);
				if (m && nd)
					add_unfinished(M, ps, NULL, d, nd, 0);
			}
			GC_RT(end, x);
			break;
		case RTE_EV_COUNTER:
			if (entries) {
				if (x->id >= RTE_C_COUNT || !(e = ps->counter[x->id]))
					goto out;
				add_value(M, e, (int64_t)x->u.counter, 1, x->ts, src, x->ring);
			}
			GC_RT(counter, x);
			break;
		case RTE_EV_ALLOC:
			if (entries)
				goto out;
			GC_RT(note, x);
			break;
		case RTE_EV_USER_INT:
			if (!entries) {
				if (rte_event(x))
					goto out;
				break;
			}
			if (!(e = fast_user(cache, x->id, F_INT)))
				goto out;
			add_value(M, e, x->u.value, 0, x->ts, src, x->ring);
			break;
		case RTE_EV_USER_SPAN_BEGIN:
			if (entries)
				rd_spans_begin(&th->spans, x->id, x->ts, x->name);
			break;
		case RTE_EV_USER_SPAN_END:
			if (!entries)
				break;
			if (!(e = fast_user(cache, x->id, F_SPAN)))
				goto out;
			m = rd_thread_span_end(th, x->id, x->ts, &b, &dur, &d, &nd);
			fast_end(M, e, m, dur);
			break;
		case RTE_EV_USER_UNIT:
		case RTE_EV_USER_CUSTOM:
			if (!entries) {
				if (x->kind == RTE_EV_USER_CUSTOM && rte_event(x))
					goto out;
				break;
			}
			if (!(e = fast_user(cache, x->id, x->kind == RTE_EV_USER_UNIT
			                                  ? F_UNIT : F_CUSTOM)))
				goto out;
			e->count++;
			break;
		default:
			goto out;
		}
		rd_times_note(&lo, &hi, &thi, x->ts);
	}
out:
	pr->first_ts = lo;
	pr->last_ts = hi;
	th->last_ts = thi;
	if (i && !th->first_ts) /* as rd_procs_update() */
		th->first_ts = ev[0].ts;
	if (i)
		rd_thread_count(th, pr, i);
	return i;
}

size_t rd_model_run(struct rd_model *M, struct rd_ctx *c, unsigned src,
                    const struct rte_event *ev, size_t n)
{
	return run(M, c, src, ev, n, 1);
}

size_t rd_model_run_gc(struct rd_model *M, struct rd_ctx *c, unsigned src,
                       const struct rte_event *ev, size_t n)
{
	return run(M, c, src, ev, n, 0);
}

void rd_model_end_open_spans(struct rd_model *M, struct rd_ctx *c,
                             struct rd_proc *pr)
{
	struct rd_procs *P = c->procs;
	struct rd_psum *ps;

	if (!(M->what & RD_MODEL_ENTRIES))
		return;
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		struct rd_src *rs = &P->src[i];

		for (unsigned r = 0; rs->threads && r < rs->rings; r++) {
			struct rd_thread *t = &rs->threads[r];

			if (!t->phases.depth && !t->spans.depth)
				continue;
			if (!(ps = rd_model_psum(M, pr)))
				return;
			add_unfinished(M, ps, c->filter, t->phases.s, t->phases.depth, 0);
			add_unfinished(M, ps, c->filter, t->spans.s, t->spans.depth, 1);
			rd_spans_free(&t->phases);
			rd_spans_free(&t->spans);
		}
	}
}
