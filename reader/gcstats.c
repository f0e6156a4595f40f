/*
 * gcstats.c - GC statistics per process (see gcstats.h and
 * doc/GC-STATS.md, which explains every figure).
 *
 * Per ring (an OCaml domain) the state is a stack of open phase ids, the
 * depth of open pause phases (olly's: major, stw_leader,
 * interrupt_remote) and of waits (domain_condition_wait), the lifetimes
 * (ring_start or domain_spawn to ring_stop or domain_terminate, summed
 * over every domain that used the ring; what comes after a seen end and
 * before the next start is in none) and the counter sums. A pause is
 * the outermost open pause phase: from its begin to its end, recorded in
 * the file's histogram. Collections are counted on ring 0 of each file,
 * as olly does. A loss empties the ring's stack (what was open is
 * unknown) and makes the figures it could change lower bounds.
 *
 * This file computes (per ring as the events come, per process in
 * rd_gc_totals()); fmt/gcstats_out.c renders the figures as text and JSON.
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

struct rd_gc *rd_gc_new(void)
{
	return calloc(1, sizeof(struct rd_gc));
}

void rd_gc_free(struct rd_gc *g)
{
	if (!g)
		return;
	for (unsigned i = 0; i < g->nf; i++)
		rd_gc_forget_file(g, i);
	free(g->f);
	free(g);
}

void rd_gc_forget_file(struct rd_gc *g, unsigned src)
{
	if (!g || src >= g->nf || !g->f[src])
		return;
	free(g->f[src]->r);
	free(g->f[src]->h);
	free(g->f[src]->rc);
	free(g->f[src]);
	g->f[src] = NULL;
}

/* The state of file i, or NULL. */
static const struct gfile *file_at(const struct rd_gc *g, unsigned i)
{
	return i < g->nf ? g->f[i] : NULL;
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
		struct gfile **n;

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
	if (!(f = g->f[src])) {
		if (!(f = calloc(1, sizeof *f)))
			goto oom;
		if (!(f->rc = calloc(1, sizeof *f->rc)) ||
		    !(f->r = calloc(rings ? rings : 1, sizeof *f->r))) {
			free(f->rc);
			free(f);
			goto oom;
		}
		f->nrings = rings;
		g->f[src] = f;
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
	r->ended = exact;
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
		r->ended = 0;
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
	r->ended = 0; /* the next start may be among the words lost */
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

/* ---- per process ----------------------------------------------------------- */

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
int rd_gc_totals(struct rd_gc *g, const struct rd_procs *P,
                  const struct rd_proc *pr, struct totals *t)
{
	const struct gfile *f;
	unsigned n = 0;

	memset(t, 0, sizeof *t);
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src)
		if ((f = file_at(g, i)) != NULL)
			n += f->nrings;
	if (!(t->h = rd_hist_new()) || !(t->d = calloc(n ? n : 1, sizeof *t->d))) {
		free(t->h);
		return -1;
	}
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		f = file_at(g, i);
		if (!t->ocaml)
			t->ocaml = rd_ocaml_choice_of(P->src[i].path);
		t->librte |= P->src[i].librte;
		if (!f || !f->r)
			continue;
		if (f->h)
			rd_hist_merge(t->h, f->h);
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

void rd_gc_free_totals(struct totals *t)
{
	free(t->h);
	free(t->d);
}

int rd_gc_has_runtime(const struct rd_gc *g, const struct rd_procs *P,
                      const struct rd_proc *pr)
{
	const struct gfile *f;

	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src)
		for (unsigned r = 0; (f = file_at(g, i)) && r < f->nrings; r++)
			if (f->r[r].runtime)
				return 1;
	return 0;
}
