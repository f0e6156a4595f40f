/*
 * metrics.c - the Prometheus exporter's accounting: what every message of
 * a followed file's rings adds to its process's series (see metrics.h;
 * every metric is in doc/METRICS.md). Series, processes and files are
 * metrics_series.c's and metrics_files.c's, the exposition metrics_out.c's.
 *
 * Two paths: the general one decodes each message into an rte_event
 * (rte_cursor_decode) for rd_procs_update() and account(); the fast one
 * (fast_msg) takes the steady stream of an exporter's load, user spans,
 * ints and units and runtime phases and counters whose series the general
 * path found already, straight from the message words: an array index per
 * message, no decoding into a struct, no hashing, event counts per block;
 * a leaf span (begin and end next to each other) in one step (fast_leaf).
 * Both update the same per-ring state (span stacks), message by message,
 * so the values are the same whichever path a message takes. Both, and the
 * inline helpers they share, are in this one file, so that they inline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_int.h"

/* Histogram bounds: 1 us .. 10 s in 1-2.5-5 steps (doc/METRICS.md). */
static const uint64_t bound_ns[NB] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000, 100000000,
	250000000, 500000000, 1000000000, 2500000000u, 5000000000u, 10000000000u,
};

/* ---- accounting ---------------------------------------------------------- */

static unsigned cache_slot(int fam, int rk, unsigned id)
{
	return ((unsigned)fam * 8191u + (unsigned)(rk + 1) * 131u + id) & (CACHE - 1);
}

/* The series for (fam, ring, event id) of file f: cached when `named`
 * (user events whose name slot is still empty are not cached). */
static inline struct series *lookup(struct rd_prom *p, struct file *f, int fam,
                             int rk, unsigned id, unsigned kid,
                             const char *name, int user)
{
	struct centry *c = &f->cache[cache_slot(fam, rk, id)];
	struct series *s;
	char buf[48];

	if (c->s && c->fam == fam && c->rk == rk && c->id == id)
		return c->s;
	if (user) {
		int named = name && name[0];

		if (!named) {
			snprintf(buf, sizeof buf, "(unnamed %u)", id);
			name = buf;
		}
		s = rd_prom_series_get(f->proc, fam, rk, kid, rd_prom_user_name(p, f->proc, name));
		if (!named)
			return s;
	} else {
		s = rd_prom_series_get(f->proc, fam, rk, kid, name);
	}
	if (s) {
		c->fam = fam;
		c->rk = rk;
		c->id = id;
		c->s = s;
	}
	return s;
}

/* first_ge[k] = the first bucket whose bound is >= 2^k (NB: none). */
void rd_prom_bucket_table(unsigned char first_ge[64])
{
	for (unsigned k = 0, i = 0; k < 64; k++) {
		while (i < NB && bound_ns[i] < (uint64_t)1 << k)
			i++;
		first_ge[k] = (unsigned char)i;
	}
}

/* The bucket of ns: the first whose bound is >= ns (NB: +Inf). One bound
 * at most lies in [2^k, 2^(k+1)) (each bound is at least twice the one
 * before), so the table's guess is right or one short. */
static inline unsigned bucket_of(const unsigned char first_ge[64], uint64_t ns)
{
	unsigned i;

	if (ns == 0)
		return 0;
	i = first_ge[63 - __builtin_clzll(ns)];
	return i < NB && bound_ns[i] < ns ? i + 1 : i;
}

static inline void hist_add(const struct rd_prom *p, struct series *s,
                            uint64_t ns)
{
	if (!s)
		return;
	s->b[bucket_of(p->first_ge, ns)]++;
	s->count++;
	rd_dur_sum_add(&s->sum_ns, ns);
}

static void add(struct series *s, uint64_t v)
{
	if (s)
		s->v += v;
}

static int is_prefix(const char *s, const char *pre)
{
	return s && !strncmp(s, pre, strlen(pre));
}

/* The fast path's entry for user event ev (named, aggregated series:
 * those lookup() caches too), grown to hold it; NULL if it may not be
 * cached or out of memory. */
static struct fast_user *fast_user_of(struct file *f, int rk,
                                      const struct rte_event *ev)
{
	if (rk >= 0 || !ev->name || !ev->name[0])
		return NULL;
	if (ev->kind == RTE_EV_USER_INT && is_prefix(ev->name, "rte.alloc."))
		return NULL; /* the allocation families (account()): rare */
	if (ev->id >= f->nfu) {
		size_t n = ev->id + 1 > 2 * f->nfu ? ev->id + 1 : 2 * f->nfu;
		struct fast_user *u = realloc(f->fu, n * sizeof *u);

		if (!u)
			return NULL;
		memset(u + f->nfu, 0, (n - f->nfu) * sizeof *u);
		f->fu = u;
		f->nfu = n;
	}
	f->fu[ev->id].name = ev->name;
	return &f->fu[ev->id];
}

/* The general path: one event, every kind, any series. Aggregated series
 * it finds are kept for fast_run(). */
static void account(struct rd_prom *p, struct file *f, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	int rk = p->o.per_thread ? (int)ev->ring : -1;
	char nb[48];
	struct series *s;
	struct fast_user *fu;

	p->events_read++;
	p->bytes_read += 8 * rd_prom_event_words(ev);
	if (ev->kind == RTE_EV_LOST) {
		/* procs.c's count (rd_procs_update() has just added this
		 * loss): the summary's lost words, what it grew by */
		uint64_t now = rk < 0 ? it->proc->lost_words : it->th->lost_words;
		uint64_t *done = rk < 0 ? &f->lost_done : &f->rings[ev->ring].lost_done;

		add(lookup(p, f, PF_LOST, rk, 0, 0, NULL, 0), now - *done);
		*done = now;
		return;
	}
	if (rk < 0 && (unsigned)ev->kind < RTE_EV_KIND_COUNT) { /* the common case */
		s = f->by_kind[ev->kind];
		if (!s)
			s = f->by_kind[ev->kind] =
				lookup(p, f, PF_EVENTS, rk, ev->kind, ev->kind, NULL, 0);
		add(s, 1);
	} else {
		add(lookup(p, f, PF_EVENTS, rk, ev->kind, ev->kind, NULL, 0), 1);
	}
	switch (ev->kind) {
	case RTE_EV_BEGIN:
		if (ev->id < RTE_P_COUNT) {
			f->phase_name[ev->id] = ev->name;
			f->phase_seen[ev->id] = 1;
		}
		break;
	case RTE_EV_END:
		if (!it->matched)
			break;
		s = lookup(p, f, PF_PHASE, rk, ev->id, ev->id,
		           rte_event_name(ev, nb, sizeof nb), 0);
		hist_add(p, s, it->dur);
		if (rk < 0 && ev->id < RTE_P_COUNT)
			f->phase[ev->id] = s;
		if (it->th->phases.depth == 0 && it->ts >= it->th->phase_open_ts) {
			uint64_t d = it->ts - it->th->phase_open_ts;

			hist_add(p, s = lookup(p, f, PF_PAUSE, rk, 0, 0, NULL, 0), d);
			if (rk < 0)
				f->pause = s;
			add(s = lookup(p, f, PF_PHASE_TIME, rk, 0, 0, NULL, 0), d);
			if (rk < 0)
				f->phase_time = s;
		}
		break;
	case RTE_EV_USER_SPAN_END:
		if (!it->matched)
			break;
		s = lookup(p, f, PF_SPAN, rk, ev->id, 0, ev->name, 1);
		hist_add(p, s, it->dur);
		if ((fu = fast_user_of(f, rk, ev)) != NULL)
			fu->span = s;
		break;
	case RTE_EV_COUNTER:
		s = lookup(p, f, PF_COUNTER, rk, ev->id, ev->id,
		           rte_event_name(ev, nb, sizeof nb), 0);
		if (s)
			s->v = ev->u.counter;
		if (rk < 0 && ev->id < RTE_C_COUNT)
			f->ctr[ev->id] = s;
		s = lookup(p, f, PF_COUNTER_ACC, rk, ev->id, ev->id,
		           rte_event_name(ev, nb, sizeof nb), 0);
		add(s, ev->u.counter);
		if (rk < 0 && ev->id < RTE_C_COUNT)
			f->ctr_acc[ev->id] = s;
		break;
	case RTE_EV_USER_INT:
		if (is_prefix(ev->name, "rte.thread."))
			break;
		if (is_prefix(ev->name, "rte.alloc.")) {
			/* per-flush amounts: counters of their own, exact
			 * (not gauges of their last value); the peak a gauge
			 * of the highest */
			int af = rd_prom_alloc_fam(ev->name);
			uint64_t v = ev->u.value > 0 ? (uint64_t)ev->u.value : 0;

			/* the peak: the summary's rule (heap.h), per process */
			if (rd_heap_peak_fold(&f->peak, ev->name + 10, v) &&
			    af == PF_ALLOC_PEAK) {
				v = f->peak.has ? f->peak.bytes : 0;
				s = lookup(p, f, af, rk, 0, 0, NULL, 0);
				if (s && v > s->v)
					s->v = v;
				break;
			}
			if (af >= 0)
				add(lookup(p, f, af, rk, 0, 0, NULL, 0), v);
			break;
		}
		s = lookup(p, f, PF_INT, rk, ev->id, 0, ev->name, 1);
		if (s)
			s->last = ev->u.value;
		if ((fu = fast_user_of(f, rk, ev)) != NULL)
			fu->ival = s;
		s = lookup(p, f, PF_USER, rk, ev->id, 1, ev->name, 1);
		add(s, 1);
		if (fu)
			fu->count = s;
		break;
	case RTE_EV_USER_UNIT:
	case RTE_EV_USER_CUSTOM:
		if (ev->kind == RTE_EV_USER_CUSTOM && !f->exe_known && ev->name)
			rd_prom_exe_from(f, ev);
		if (ev->kind == RTE_EV_USER_CUSTOM && ev->name &&
		    !strcmp(ev->name, "rte.crash"))
			add(lookup(p, f, PF_CRASHES, rk, 0, 0, NULL, 0), 1);
		if (is_prefix(ev->name, "rte.thread."))
			break;
		s = lookup(p, f, PF_USER, rk, ev->id,
		           ev->kind == RTE_EV_USER_UNIT ? 0 : 2, ev->name, 1);
		add(s, 1);
		if (ev->kind == RTE_EV_USER_UNIT && (fu = fast_user_of(f, rk, ev)))
			fu->count = s;
		break;
	case RTE_EV_LIFECYCLE:
		add(lookup(p, f, PF_LIFECYCLE, rk, ev->id, ev->id,
		           rte_event_name(ev, nb, sizeof nb), 0), 1);
		break;
	case RTE_EV_ALLOC:
		/* the calls, by heap.h's rule; the buckets give sizes in
		 * ranges only: the bytes come from rte.alloc.bytes, exact */
		add(lookup(p, f, PF_ALLOC_CALLS, rk, 0, 0, NULL, 0),
		    rd_alloc_calls(ev->u.buckets));
		break;
	default:
		break;
	}
}

/* ---- reading ----------------------------------------------------------- */

/* What the fast path adds once per block of words (flush_fast()). */
struct tally {
	uint32_t nk[RTE_EV_KIND_COUNT]; /* events by kind */
};

/* Account the fast path's events of a block (counted in t by kind, the
 * last one at `last`), as account() and rd_procs_update() do per event.
 * Returns their number; t is then empty. */
static uint64_t flush_fast(struct rd_prom *p, struct file *f,
                           struct rd_thread *th, struct tally *t,
                           const uint64_t *last)
{
	struct rd_proc *pr = f->procs.src[0].proc;
	uint64_t n = 0, ts;

	if (!last)
		return 0;
	for (unsigned k = 0; k < RTE_EV_KIND_COUNT; k++) {
		if (!t->nk[k])
			continue;
		if (!f->by_kind[k])
			f->by_kind[k] = lookup(p, f, PF_EVENTS, -1, k, k, NULL, 0);
		add(f->by_kind[k], t->nk[k]);
		n += t->nk[k];
	}
	p->events_read += n;
	/* 2 words a message, 3 for ints and counters (fast_msg()) */
	p->bytes_read += 8 * (2 * n + t->nk[RTE_EV_USER_INT] + t->nk[RTE_EV_COUNTER]);
	/* rd_procs_update()'s own steps (procs.h): a ring's events come in
	 * time order, so its last is the block's latest */
	ts = last[1];
	rd_thread_count(th, pr, n);
	rd_times_note(&pr->first_ts, &pr->last_ts, &th->last_ts, ts);
	memset(t, 0, sizeof *t);
	return n;
}

/*
 * The fast path, for aggregated series (not --per-thread): one message m
 * (len >= 2 words) of ring th, decoded here from its words and accounted
 * as rd_cursor_decode(), rd_procs_update() and account() would, for user
 * spans, ints and units and runtime phases and counters whose series (and
 * names) the general path found already (struct fast_user and the arrays
 * of struct file): no struct rte_event, no hashing. Returns the kind of
 * the event if it took the message (its words are 2, 3 for user ints and
 * counters), -1 to leave it to the general path (a first sight of an id,
 * every other kind, short messages, rte.thread.* ints).
 */
static inline int fast_msg(const struct rd_prom *p, struct file *f,
                           struct rd_thread *th, const uint64_t *m,
                           unsigned len)
{
	const struct rd_span_open *d;
	uint64_t h = m[0], ts = m[1], b, dur;
	unsigned id = rte_hdr_id(h), nd;
	const struct fast_user *u = id < f->nfu ? &f->fu[id] : NULL;
	struct series *s;

	if (rte_hdr_is_user(h)) {
		switch (rte_hdr_type(h)) {
		case RTE_UMSG_SPAN_BEGIN:
			if (!u || !u->name)
				return -1;
			rd_spans_begin(&th->spans, id, ts, u->name);
			return RTE_EV_USER_SPAN_BEGIN;
		case RTE_UMSG_SPAN_END:
			if (!u || !(s = u->span))
				return -1;
			if (rd_thread_span_end(th, id, ts, &b, &dur, &d, &nd))
				hist_add(p, s, dur);
			return RTE_EV_USER_SPAN_END;
		case RTE_UMSG_INT:
			if (!u || len < 3 || !(s = u->ival) || !u->count)
				return -1;
			s->last = (int64_t)m[2];
			u->count->v++;
			return RTE_EV_USER_INT;
		case RTE_UMSG_UNIT:
			if (!u || !(s = u->count))
				return -1;
			s->v++;
			return RTE_EV_USER_UNIT;
		default:
			return -1;
		}
	} else {
		switch (rte_hdr_type(h)) {
		case RTE_MSG_BEGIN:
			if (id >= RTE_P_COUNT || !f->phase_seen[id])
				return -1;
			rd_thread_phase_begin(th, id, ts, f->phase_name[id]);
			return RTE_EV_BEGIN;
		case RTE_MSG_EXIT:
			if (id >= RTE_P_COUNT || !(s = f->phase[id]) || !f->pause ||
			    !f->phase_time)
				return -1;
			if (!rd_thread_phase_end(th, id, ts, &b, &dur, &d, &nd))
				return RTE_EV_END;
			hist_add(p, s, dur);
			if (th->phases.depth == 0 && ts >= th->phase_open_ts) {
				hist_add(p, f->pause, ts - th->phase_open_ts);
				f->phase_time->v += ts - th->phase_open_ts;
			}
			return RTE_EV_END;
		case RTE_MSG_COUNTER:
			if (id >= RTE_C_COUNT || len < 3 || !(s = f->ctr[id]) ||
			    !f->ctr_acc[id])
				return -1;
			s->v = m[2];
			f->ctr_acc[id]->v += m[2];
			return RTE_EV_COUNTER;
		default:
			return -1;
		}
	}
}

/*
 * A leaf span, the commonest shape: m (2 words) is the begin of user span
 * id and the 2 words after it are its end. Matched as fast_msg() would
 * match the two (the end pops the begin just pushed) without the push and
 * the pop: 1 if taken, 0 to go message by message. Only while the stack
 * has room, so that the push would not have forgotten an older begin (or
 * failed). The caller has checked that 4 words are there.
 */
static inline int fast_leaf(const struct rd_prom *p, struct file *f,
                            const struct rd_thread *th, const uint64_t *m)
{
	const uint64_t same = ((uint64_t)0x3ff << RTE_HDR_LEN_SHIFT) |
	                      RTE_HDR_USER_BIT | ((uint64_t)0x1fff << RTE_HDR_ID_SHIFT);
	uint64_t h = m[0], e = m[2];
	unsigned id = rte_hdr_id(h);
	const struct fast_user *u;

	if ((h ^ e) & same)
		return 0; /* not the same length, user bit and id */
	if (rte_hdr_len(h) != 2 || !rte_hdr_is_user(h) ||
	    rte_hdr_type(h) != RTE_UMSG_SPAN_BEGIN ||
	    rte_hdr_type(e) != RTE_UMSG_SPAN_END || id >= f->nfu ||
	    th->spans.depth >= th->spans.cap)
		return 0;
	u = &f->fu[id];
	if (!u->name || !u->span)
		return 0;
	hist_add(p, u->span, rd_span_dur(m[1], m[3]));
	return 1;
}

/* The general path: one event of ring r (or a loss, placed at the ring's
 * last event) through rd_procs_update() and account(). */
static void general(struct rd_prom *p, struct file *f, unsigned r,
                    const struct rte_event *ev)
{
	struct rd_merge_item mi;
	struct rd_item it;

	mi.ev = ev;
	mi.src = 0;
	mi.ts = ev->kind == RTE_EV_LOST ? f->rings[r].last_ts : ev->ts;
	if (ev->kind != RTE_EV_LOST)
		f->rings[r].last_ts = ev->ts;
	rd_procs_update(&f->procs, &mi, &it);
	account(p, f, &it);
}

/* The messages of w[0..n) of ring r (as rte_cursor_peek_words() returns
 * them: the first one whole, the others to check), each through the fast
 * path or the general one, up to the first message that is cut by n or
 * has no length (the next peek copies it again or says what is wrong).
 * Returns the events read and sets *used to the words walked, or returns
 * -1 if the ring failed (counted as an error). */
static long read_words(struct rd_prom *p, struct file *f, unsigned r,
                       const uint64_t *w, size_t n, size_t *used)
{
	struct rd_thread *th = &f->procs.src[0].threads[r];
	struct tally t;
	int fast = !p->o.per_thread && f->procs.src[0].proc->has_ts;
	long events = 0;
	size_t i = 0;
	const uint64_t *last = NULL; /* the fast path's last message */

	memset(&t, 0, sizeof t);
	while (i < n) {
		const uint64_t *m = w + i;
		unsigned len = rte_hdr_len(m[0]);
		struct rte_event ev;
		int got;

		if (len == 0 || len > n - i)
			break;
		i += len;
		if (fast && len >= 2) {
			int k;

			if (n - i >= 2 && fast_leaf(p, f, th, m)) {
				t.nk[RTE_EV_USER_SPAN_BEGIN]++;
				t.nk[RTE_EV_USER_SPAN_END]++;
				i += 2;
				last = m + 2;
				continue;
			}
			k = fast_msg(p, f, th, m, len);

			if (k >= 0) { /* counted here, accounted per block */
				t.nk[k]++;
				last = m;
				continue;
			}
		}
		got = rte_cursor_decode(f->c, r, m, &ev);
		if (got == 0)
			continue; /* padding, or a type this version skips */
		if (got < 0) {
			flush_fast(p, f, th, &t, last);
			p->errors++;
			f->rings[r].dead = 1;
			return -1;
		}
		events++;
		general(p, f, r, &ev);
		fast = !p->o.per_thread && f->procs.src[0].proc->has_ts;
	}
	events += (long)flush_fast(p, f, th, &t, last);
	if (last && last[1] > f->rings[r].last_ts)
		f->rings[r].last_ts = last[1];
	*used = i;
	return events;
}

/* Read up to budget events of f (0: no limit), ring after ring (the
 * metrics need each ring's order only). A pass over the rings that ran
 * out of budget goes on where it stopped, so a busy ring cannot starve
 * the others. Rings never written to (most of a file's 128) are looked at
 * only when `all_rings`: a poll costs the rings in use. Returns 1 if the
 * budget ran out. */
int rd_prom_read_file(struct rd_prom *p, struct file *f, size_t budget,
                      int all_rings)
{
	unsigned rings = rte_cursor_rings(f->c);
	size_t n = 0;

	for (; f->next_ring < rings; f->next_ring++) {
		unsigned r = f->next_ring;

		if (!f->rings[r].used) {
			if (!all_rings || !rte_cursor_ring_used(f->c, r))
				continue;
			f->rings[r].used = 1;
		}
		while (!f->rings[r].dead) {
			const uint64_t *w;
			uint64_t lost;
			int got = rte_cursor_peek_words(f->c, r, &w, &lost);
			size_t used;
			long k;

			if (got < 0) {
				p->errors++;
				f->rings[r].dead = 1;
				break;
			}
			if (got == 0 && lost) {
				struct rte_event ev;

				memset(&ev, 0, sizeof ev);
				ev.kind = RTE_EV_LOST;
				ev.ring = r;
				ev.u.lost_words = lost;
				general(p, f, r, &ev);
				f->read_any = 1;
				continue;
			}
			if (got == 0)
				break;
			if ((k = read_words(p, f, r, w, (size_t)got, &used)) < 0)
				break;
			rte_cursor_consume_words(f->c, r, used);
			n += (size_t)k;
			f->read_any |= k > 0;
			if (budget && n >= budget)
				return 1;
		}
	}
	f->next_ring = 0;
	return 0;
}
