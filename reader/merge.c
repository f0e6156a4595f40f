/*
 * merge.c - k-way merge of ring streams (see merge.h).
 *
 * Every (source, ring) pair is a stream. A stream is IDLE (nothing to give
 * right now, probed again by rd_merge_refill), QUEUED (in the heap, with
 * something to deliver: a pending loss, an event, or an error, in that
 * order) or DEAD (its ring failed). The stream whose event was delivered
 * last stays at the top of the heap until the next call, because the
 * event's pointers live in the cursor's ring buffer until the ring is read
 * again.
 *
 * Mappings: in time order, at most MAX_MAPPED sources are mapped at once.
 * Reading a source that is not mapped first releases the source mapped
 * longest ago (rte_cursor_release); the events it read ahead and not yet
 * delivered keep their payloads (custom bytes, alloc buckets) in a copy
 * of their stream's own. A merge of 100,000 small files thus maps each
 * about once and never more than MAX_MAPPED together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"

#define MAX_LOST_RUN 64 /* consecutive losses folded before delivering */
#define RUN_EVENTS 256  /* events of a run (rd_merge_next_run) */
#define STREAM_EVENTS 32 /* events read ahead on a stream (in time order) */
#define MAX_MAPPED 256   /* sources mapped at once, in time order */

enum { S_IDLE = 0, S_QUEUED, S_DEAD };

struct stream {
	rte_cursor *cur;
	unsigned src, ring;
	int state;
	int has_ev;
	int err;               /* ring error to deliver, 0 if none */
	uint64_t pending_lost; /* lost words to deliver before ev */
	uint64_t last_ts;
	uint64_t key;
	struct rte_event ev;
	/* In time order: events read ahead (rte_cursor_next_batch), buf[bi]
	 * the next; buf is lazy, &ev (one event) if it cannot be had. cur_ev
	 * is the event to deliver when has_ev. */
	struct rte_event *buf, *cur_ev;
	unsigned bn, bi;
	unsigned char *own;    /* payloads of buffered events whose source */
	size_t owncap;         /* was released */
};

struct source {
	rte_cursor *cur;
	struct stream *streams;
	unsigned rings;
	int mapped;            /* in time order: counted in the FIFO below */
};

struct rd_merge {
	struct source *src;
	unsigned nsrc, srccap;
	struct stream **heap;
	size_t hlen, hcap;
	struct stream *last; /* delivered last, at heap[0], to be advanced */
	struct rte_event lost_ev;
	int current;         /* source being read, for a SIGBUS handler */
	int unordered;       /* ring after ring, no heap */
	unsigned u_src, u_ring; /* unordered: the stream being read */
	struct stream *u_cur;   /* ... and its stream, NULL to look it up */
	struct rte_event run[RUN_EVENTS]; /* the events of the last run */
	unsigned mq[MAX_MAPPED]; /* time order: the mapped sources, oldest */
	unsigned mq_head, mq_len; /* first (a ring of MAX_MAPPED) */
	char errmsg[600];
};

rd_merge *rd_merge_new(void)
{
	rd_merge *m = calloc(1, sizeof *m);

	if (m)
		m->current = -1;
	return m;
}

void rd_merge_free(rd_merge *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < m->nsrc; i++) {
		rte_cursor_close(m->src[i].cur);
		for (unsigned r = 0; r < m->src[i].rings; r++) {
			if (m->src[i].streams[r].buf != &m->src[i].streams[r].ev)
				free(m->src[i].streams[r].buf);
			free(m->src[i].streams[r].own);
		}
		free(m->src[i].streams);
	}
	free(m->src);
	free(m->heap);
	free(m);
}

int rd_merge_add(rd_merge *m, rte_cursor *c)
{
	unsigned rings = rte_cursor_rings(c);
	struct stream *st = NULL;

	if (m->nsrc == m->srccap) {
		unsigned cap = m->srccap ? 2 * m->srccap : 8;
		struct source *p = realloc(m->src, cap * sizeof *p);

		if (!p)
			goto fail;
		m->src = p;
		m->srccap = cap;
	}
	{
		size_t cap = m->hcap + rings;
		struct stream **h = realloc(m->heap, cap * sizeof *h);

		if (!h)
			goto fail;
		m->heap = h;
		m->hcap = cap;
	}
	st = calloc(rings, sizeof *st);
	if (!st)
		goto fail;
	for (unsigned r = 0; r < rings; r++) {
		st[r].cur = c;
		st[r].src = m->nsrc;
		st[r].ring = r;
	}
	m->src[m->nsrc] = (struct source){ c, st, rings, 0 };
	/* The first MAX_MAPPED sources stay mapped as they were opened: a
	 * live file, or one its writer removes at exit before it is first
	 * read, is read without being opened again by its name. The others
	 * are given back until they are read (a directory of many files). */
	if (m->mq_len < MAX_MAPPED) {
		m->mq[(m->mq_head + m->mq_len) % MAX_MAPPED] = m->nsrc;
		m->mq_len++;
		m->src[m->nsrc].mapped = 1;
	} else {
		rte_cursor_release(c);
	}
	return (int)m->nsrc++;
fail:
	rte_cursor_close(c);
	return RTE_ENOMEM;
}

void rd_merge_close_source(rd_merge *m, unsigned i)
{
	struct source *src;

	if (!m->unordered || i >= m->nsrc || i >= m->u_src || !m->src[i].cur)
		return;
	src = &m->src[i];
	for (unsigned r = 0; r < src->rings; r++) {
		if (src->streams[r].buf != &src->streams[r].ev)
			free(src->streams[r].buf);
		free(src->streams[r].own);
	}
	free(src->streams);
	rte_cursor_close(src->cur);
	src->cur = NULL;
	src->streams = NULL;
	src->rings = 0; /* a later pass (rd_merge_refill) steps over it */
}

unsigned rd_merge_sources(const rd_merge *m) { return m->nsrc; }
rte_cursor *rd_merge_cursor(const rd_merge *m, unsigned src) { return m->src[src].cur; }
const char *rd_merge_errmsg(const rd_merge *m) { return m->errmsg; }

int rd_merge_current(const rd_merge *m)
{
	/* Relaxed: read by a signal handler of the same thread. */
	return __atomic_load_n(&m->current, __ATOMIC_RELAXED);
}

/* ---- heap ------------------------------------------------------------- */

static int before(const struct stream *a, const struct stream *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	if (a->src != b->src)
		return a->src < b->src;
	return a->ring < b->ring;
}

static void sift_down(rd_merge *m, size_t i)
{
	struct stream **h = m->heap, *s = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= m->hlen)
			break;
		if (c + 1 < m->hlen && before(h[c + 1], h[c]))
			c++;
		if (!before(h[c], s))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = s;
}

static void push(rd_merge *m, struct stream *s)
{
	struct stream **h = m->heap;
	size_t i = m->hlen++;

	while (i > 0 && before(s, h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = s;
	s->state = S_QUEUED;
}

static void pop_top(rd_merge *m, int state)
{
	m->heap[0]->state = state;
	m->heap[0] = m->heap[--m->hlen];
	if (m->hlen)
		sift_down(m, 0);
}

/* ---- streams ------------------------------------------------------------ */

/* The bytes of event e's payload that live in its cursor's buffers (and
 * *p, where they are), or 0. */
static size_t payload(const struct rte_event *e, const unsigned char **p)
{
	if (e->kind == RTE_EV_USER_CUSTOM && e->u.custom.len) {
		*p = e->u.custom.bytes;
		return e->u.custom.len;
	}
	if (e->kind == RTE_EV_ALLOC && e->u.buckets) {
		*p = (const unsigned char *)e->u.buckets;
		return RTE_ALLOC_BUCKETS * sizeof *e->u.buckets;
	}
	return 0;
}

/* Before stream s's source is released: copy the payloads of the events it
 * read ahead and did not deliver (cur_ev among them) into s->own. Returns
 * 0, or -1 if out of memory (nothing changed). */
static int keep_payloads(struct stream *s)
{
	struct rte_event *e = s->buf;
	unsigned from = s->bi, to = s->bn;
	const unsigned char *p;
	size_t need = 0, at = 0, n;

	if (!e)
		return 0;
	if (s->has_ev && from > 0)
		from--; /* cur_ev is buf[bi - 1] */
	for (unsigned i = from; i < to; i++)
		need += (payload(&e[i], &p) + 7) & ~(size_t)7;
	if (need == 0)
		return 0;
	if (need > s->owncap) {
		unsigned char *o = malloc(need);

		if (!o)
			return -1;
		/* the old copy may hold some of these payloads: copy first */
		for (unsigned i = from; i < to; i++)
			if ((n = payload(&e[i], &p)) != 0) {
				memcpy(o + at, p, n);
				at += (n + 7) & ~(size_t)7;
			}
		free(s->own);
		s->own = o;
		s->owncap = need;
	} else {
		/* in place: the payloads already in own come first, in order */
		for (unsigned i = from; i < to; i++)
			if ((n = payload(&e[i], &p)) != 0) {
				memmove(s->own + at, p, n);
				at += (n + 7) & ~(size_t)7;
			}
	}
	at = 0;
	for (unsigned i = from; i < to; i++)
		if ((n = payload(&e[i], &p)) != 0) {
			if (e[i].kind == RTE_EV_USER_CUSTOM)
				e[i].u.custom.bytes = s->own + at;
			else
				e[i].u.buckets = (const uint64_t *)(void *)(s->own + at);
			at += (n + 7) & ~(size_t)7;
		}
	return 0;
}

/* Release source i's mapping, its streams keeping what they read ahead.
 * Returns 0, or -1 if it cannot be (out of memory: it stays mapped). */
static int unmap_source(rd_merge *m, unsigned i)
{
	struct source *src = &m->src[i];

	for (unsigned r = 0; r < src->rings; r++)
		if (keep_payloads(&src->streams[r]) < 0)
			return -1;
	rte_cursor_release(src->cur);
	src->mapped = 0;
	return 0;
}

/* Source i is about to be read (mapped again if it was released): count
 * it, releasing the one mapped longest ago if MAX_MAPPED are. */
static void map_source(rd_merge *m, unsigned i)
{
	if (m->src[i].mapped)
		return;
	while (m->mq_len == MAX_MAPPED) {
		unsigned old = m->mq[m->mq_head];

		m->mq_head = (m->mq_head + 1) % MAX_MAPPED;
		m->mq_len--;
		if (unmap_source(m, old) < 0)
			break; /* out of memory: one more mapped, no harm */
	}
	if (m->mq_len < MAX_MAPPED) {
		m->mq[(m->mq_head + m->mq_len) % MAX_MAPPED] = i;
		m->mq_len++;
		m->src[i].mapped = 1;
	}
}

/* The next event of `s`, read ahead in batches: 1 (*ev set), 0 or an
 * error. The events of a batch stay valid until the next batch is read,
 * which is after the last of them was delivered. */
static int stream_next(rd_merge *m, struct stream *s, struct rte_event **ev)
{
	int r;

	if (s->bi == s->bn) {
		unsigned cap = STREAM_EVENTS;

		if (!s->buf && !(s->buf = malloc(STREAM_EVENTS * sizeof *s->buf)))
			s->buf = &s->ev;
		if (s->buf == &s->ev)
			cap = 1;
		map_source(m, s->src);
		/* Relaxed: only this thread's SIGBUS handler reads it. */
		__atomic_store_n(&m->current, (int)s->src, __ATOMIC_RELAXED);
		r = rte_cursor_next_batch(s->cur, s->ring, s->buf, cap);
		if (r <= 0) {
			s->bi = s->bn = 0; /* nothing read ahead any more */
			return r;
		}
		s->bn = (unsigned)r;
		s->bi = 0;
	}
	*ev = &s->buf[s->bi++];
	return 1;
}

/* Read ahead on `s`. Returns 1 if it has something to deliver, else 0. */
static int fill(rd_merge *m, struct stream *s)
{
	int run = 0;

	s->has_ev = 0;
	while (!s->err) {
		struct rte_event *ev;
		int r = stream_next(m, s, &ev);

		if (r < 0) {
			s->err = r;
			break;
		}
		if (r == 0)
			break;
		if (ev->kind != RTE_EV_LOST) {
			s->has_ev = 1;
			s->cur_ev = ev;
			s->key = ev->ts;
			return 1;
		}
		s->pending_lost += ev->u.lost_words;
		if (++run >= MAX_LOST_RUN)
			break;
	}
	s->key = s->last_ts;
	return s->pending_lost || s->err;
}

static void advance_last(rd_merge *m)
{
	struct stream *s = m->last;

	if (!s)
		return;
	m->last = NULL;
	if (fill(m, s)) {
		if (m->hlen > 1)
			sift_down(m, 0);
	} else
		pop_top(m, S_IDLE);
}

int rd_merge_refill(rd_merge *m)
{
	if (m->unordered) {
		m->u_src = m->u_ring = 0; /* one more pass over every ring */
		m->u_cur = NULL;
		return RTE_OK;
	}
	advance_last(m);
	for (unsigned i = 0; i < m->nsrc; i++) {
		struct source *src = &m->src[i];

		for (unsigned r = 0; r < src->rings; r++)
			if (src->streams[r].state == S_IDLE &&
			    fill(m, &src->streams[r]))
				push(m, &src->streams[r]);
	}
	return RTE_OK;
}

void rd_merge_set_unordered(rd_merge *m, int on)
{
	m->unordered = on;
}

/* Unordered: every ring of the current source was read to its end, and
 * its events delivered: give back its mapping (rte_cursor_release), so
 * that a directory of many files never has more than one mapped at a
 * time, and move on to the next source. A lone source stays mapped: it
 * is the only one anyway, and a live file read pass after pass (the
 * exporter's) would otherwise be mapped again and fault its pages in
 * again on every pass. */
static void next_source(rd_merge *m)
{
	if (m->nsrc > 1)
		rte_cursor_release(m->src[m->u_src].cur);
	m->u_src++;
	m->u_ring = 0;
}

/* Unordered: deliver what rte_cursor_next() returned (r, 1 or an error)
 * on stream s. Returns r. */
static int deliver_unordered(rd_merge *m, struct stream *s, int r,
                             struct rd_merge_item *item)
{
	item->src = s->src;
	if (r == 1) {
		if (s->ev.kind != RTE_EV_LOST)
			s->last_ts = s->ev.ts;
		item->ev = &s->ev;
		item->ts = s->ev.kind == RTE_EV_LOST ? s->last_ts : s->ev.ts;
		return 1;
	}
	s->state = S_DEAD;
	item->ev = NULL;
	item->ts = s->last_ts;
	snprintf(m->errmsg, sizeof m->errmsg, "%s", rte_cursor_errmsg(s->cur));
	return r;
}

/* Unordered: the next event of the current stream, moving on to the next
 * stream when it has nothing. The heap is not used. */
static int next_unordered(rd_merge *m, struct rd_merge_item *item)
{
	struct stream *s = m->u_cur;
	int r;

	/* The common case: the stream read last has more (m->current
	 * already names its source). */
	if (s) {
		r = rte_cursor_next(s->cur, s->ring, &s->ev);
		if (r == 1)
			return deliver_unordered(m, s, r, item);
		m->u_cur = NULL; /* drained or failed: on to the next stream */
		m->u_ring++;
		if (r < 0)
			return deliver_unordered(m, s, r, item);
	}
	while (m->u_src < m->nsrc) {
		struct source *src = &m->src[m->u_src];

		if (m->u_ring >= src->rings) {
			next_source(m);
			continue;
		}
		s = &src->streams[m->u_ring];
		if (s->state == S_DEAD) {
			m->u_ring++;
			continue;
		}
		/* Relaxed: only this thread's SIGBUS handler reads it. */
		__atomic_store_n(&m->current, (int)m->u_src, __ATOMIC_RELAXED);
		r = rte_cursor_next(s->cur, s->ring, &s->ev);
		if (r == 1) {
			m->u_cur = s;
			return deliver_unordered(m, s, r, item);
		}
		m->u_ring++;
		if (r < 0)
			return deliver_unordered(m, s, r, item);
	}
	return 0;
}

/* The stream read by the next run in unordered mode, NULL if none. */
static struct stream *next_stream(rd_merge *m)
{
	while (m->u_src < m->nsrc) {
		struct source *src = &m->src[m->u_src];

		if (m->u_ring >= src->rings) {
			next_source(m);
			continue;
		}
		if (src->streams[m->u_ring].state != S_DEAD)
			return &src->streams[m->u_ring];
		m->u_ring++;
	}
	return NULL;
}

int rd_merge_next_run(rd_merge *m, struct rd_merge_run *run)
{
	struct stream *s;

	if (!m->unordered)
		return RTE_EINVAL;
	while ((s = next_stream(m)) != NULL) {
		int r;

		/* Relaxed: only this thread's SIGBUS handler reads it. */
		__atomic_store_n(&m->current, (int)s->src, __ATOMIC_RELAXED);
		r = rte_cursor_next_batch(s->cur, s->ring, m->run, RUN_EVENTS);
		run->src = s->src;
		run->prev_ts = s->last_ts;
		if (r > 0) {
			run->ev = m->run;
			run->n = (size_t)r;
			if (m->run[r - 1].kind != RTE_EV_LOST)
				s->last_ts = m->run[r - 1].ts;
			return r;
		}
		m->u_ring++; /* drained or failed: on to the next stream */
		if (r < 0) {
			s->state = S_DEAD;
			run->ev = NULL;
			run->n = 0;
			snprintf(m->errmsg, sizeof m->errmsg, "%s",
			         rte_cursor_errmsg(s->cur));
			return r;
		}
	}
	return 0;
}

int rd_merge_next(rd_merge *m, struct rd_merge_item *item)
{
	struct stream *s;

	if (m->unordered)
		return next_unordered(m, item);
	advance_last(m);
	if (m->hlen == 0)
		return 0;
	s = m->heap[0];
	item->src = s->src;
	item->ts = s->key;
	if (s->pending_lost) {
		memset(&m->lost_ev, 0, sizeof m->lost_ev);
		m->lost_ev.kind = RTE_EV_LOST;
		m->lost_ev.ring = s->ring;
		m->lost_ev.u.lost_words = s->pending_lost;
		s->pending_lost = 0;
		item->ev = &m->lost_ev;
		if (!s->has_ev && !s->err)
			pop_top(m, S_IDLE);
		return 1;
	}
	if (s->has_ev) {
		s->last_ts = s->cur_ev->ts;
		item->ev = s->cur_ev;
		m->last = s;
		return 1;
	}
	item->ev = NULL;
	snprintf(m->errmsg, sizeof m->errmsg, "%s", rte_cursor_errmsg(s->cur));
	pop_top(m, S_DEAD);
	return s->err;
}
