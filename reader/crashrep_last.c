/*
 * crashrep_last.c - the last events of every ring at a crash (crashrep.h):
 * the histories remember() keeps in crashrep.c, snapshot when the crash
 * arrives (rd_crash_snapshot()), then merged in time order with the
 * events of other rings before the crash, one line each
 * (rd_crash_each_last()).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crashrep.h"
#include "crashrep_int.h"

static void value_of(const struct last *l, char *buf, size_t len)
{
	size_t k = 0;

	switch (l->kind) {
	case RTE_EV_COUNTER:
	case RTE_EV_LIFECYCLE:
	case RTE_EV_USER_INT:
		snprintf(buf, len, "%" PRId64, l->v);
		return;
	case RTE_EV_LOST:
		snprintf(buf, len, "%" PRId64 " words lost", l->v);
		return;
	case RTE_EV_USER_CUSTOM:
		if (!strncmp(l->name, "rte.", 4) && strcmp(l->name, "rte.thread.name")) {
			snprintf(buf, len, "(%" PRId64 " bytes)", l->v);
			return;
		}
		buf[k++] = '"';
		for (unsigned i = 0; i < l->clen && k + 3 < len; i++)
			buf[k++] = l->custom[i] < 0x20 || l->custom[i] >= 0x7f
			                   ? '?' : (char)l->custom[i];
		if ((uint64_t)l->v > l->clen && k + 6 < len)
			memcpy(buf + k, "...", 3), k += 3;
		buf[k++] = '"';
		buf[k] = '\0';
		return;
	default:
		buf[0] = '\0';
	}
}

/* Keep every ring's history as it is when the crash arrives. */
void rd_crash_snapshot(struct crash *cr, const struct pfile *f,
                       const struct rd_src *src)
{
	cr->snap = malloc((f->nrings ? f->nrings : 1) * sizeof(*cr->snap));
	if (!cr->snap)
		return;
	memcpy(cr->snap, f->rings, f->nrings * sizeof(*cr->snap));
	for (unsigned r = 0; r < f->nrings; r++) {
		struct rring *rr = &cr->snap[r];

		rr->made_by = NULL; /* not ours to free */
		rr->nmade = 0;
		rr->thread[0] = '\0';
		rr->tid = -1;
		if (r < src->rings) {
			snprintf(rr->thread, sizeof(rr->thread), "%s",
			         src->threads[r].name);
			rr->tid = src->threads[r].tid;
		}
	}
	cr->nsnap = f->nrings;
}

static int by_ts(const void *a, const void *b)
{
	const struct last *x = *(const struct last *const *)a;
	const struct last *y = *(const struct last *const *)b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int same_event(const struct last *a, const struct last *b)
{
	return a->ts == b->ts && a->kind == b->kind && a->id == b->id &&
	       a->v == b->v && !strcmp(a->name, b->name);
}

/*
 * The last events of ring r up to the crash: from the history kept when
 * the crash arrived and the one at the end (rte-read's summary reads ring
 * after ring, so another ring's events before the crash may come after it
 * in reading order), without the crash event itself, the newest
 * RD_CRASH_LAST. Returns how many were stored in out.
 */
static unsigned ring_before(const struct crash *cr, const struct rring *now,
                            unsigned r, const struct last **out)
{
	const struct rring *src[2] = {&cr->snap[r], now};
	const struct last *all[2 * RD_CRASH_LAST];
	unsigned n = 0, k = 0;

	for (int s = 0; s < 2; s++) {
		if (!src[s])
			continue;
		for (unsigned i = 0; i < src[s]->n; i++) {
			const struct last *l = &src[s]->ev[i];
			int dup = 0;

			if (l->ts > cr->ts || (r == cr->ring && l->ts == cr->ts &&
			                       !strcmp(l->name, "rte.crash")))
				continue;
			for (unsigned j = 0; j < n && !dup; j++)
				dup = same_event(all[j], l);
			if (!dup)
				all[n++] = l;
		}
	}
	qsort(all, n, sizeof(all[0]), by_ts);
	if (n > RD_CRASH_LAST)
		k = n - RD_CRASH_LAST;
	for (unsigned i = k; i < n; i++)
		out[i - k] = all[i];
	return n - k;
}

static char *last_line(const struct crash *cr, const struct last *l)
{
	char val[64];
	uint64_t d = l->ts <= cr->ts ? cr->ts - l->ts : l->ts - cr->ts;

	value_of(l, val, sizeof(val));
	return rd_crash_xasprintf("%c%" PRIu64 ".%09" PRIu64 "s %-12s %-28s %s",
	                 l->ts <= cr->ts ? '-' : '+', d / 1000000000u,
	                 d % 1000000000u,
	                 l->kind == RTE_EV_LOST ? "LOST"
	                                        : rte_event_kind_name(l->kind),
	                 l->name, val);
}

void rd_crash_each_last(const struct rd_crash *c, unsigned n,
                        void (*fn)(void *ud, const char *ring, const char *line),
                        void *ud)
{
	const struct crash *cr = &c->crashes[n];
	const struct pfile *f = &c->files[cr->file];

	for (unsigned r = 0; cr->snap && r < cr->nsnap; r++) {
		const struct last *ev[RD_CRASH_LAST];
		const struct rring *rr = f->rings && r < f->nrings ? &f->rings[r] : NULL;
		const struct rring *named = &cr->snap[r];
		unsigned k = ring_before(cr, rr, r, ev);
		char *h;

		if (!k)
			continue;
		h = rd_crash_xasprintf("ring %u (%s%s, tid %ld)%s", r,
		              named->thread[0] ? "thread " : "no name",
		              named->thread, named->tid,
		              r == cr->ring ? ", the crashing thread" : "");
		if (h)
			fn(ud, h, NULL);
		free(h);
		for (unsigned i = 0; i < k; i++) {
			char *line = last_line(cr, ev[i]);

			if (line)
				fn(ud, NULL, line);
			free(line);
		}
	}
}

