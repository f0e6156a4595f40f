/*
 * gcstats_int.h - the state of gcstats.c, and its per-event accounting of
 * runtime phases and counters, inline: so that a format's own loop over a
 * run of one ring (fmt/summary.c's summary_run) accounts for them as it
 * goes, instead of a second loop over the run (rd_gc_run). Internal to
 * the GC statistics: gcstats.h is the interface.
 */
#ifndef RD_GCSTATS_INT_H
#define RD_GCSTATS_INT_H

#include <stdint.h>

#include "gcstats.h"
#include "hist.h"

#define MAXDEPTH 64
#define ROLE_IDS 64 /* ids whose role is cached per file */
#define SMALL_PAUSES 8 /* pauses of a file kept before a histogram (43 KiB):
                          memory stays small with many small files */

enum role {
	R_NONE = 0,
	R_PAUSE,      /* major, stw_leader, interrupt_remote */
	R_WAIT,       /* domain_condition_wait */
	R_MINOR,      /* minor: a minor collection (ring 0) */
	R_MAJOR,      /* major_gc_stw: the end of a major cycle (ring 0) */
	R_FORCED,     /* explicit_gc_major, explicit_gc_full_major (ring 0) */
	R_COMPACT     /* explicit_gc_compact (ring 0) */
};

/* The counters that count. */
enum crole { C_NONE = 0, C_MINOR_BYTES, C_PROMOTED_BYTES, C_MAJOR_WORDS };


struct gring {
	uint64_t last_ts;
	int seen;
	/* lifetimes */
	int open, seg;            /* a lifetime is open; events since a close */
	uint64_t open_ts, seg_ts;
	uint64_t life_ns;
	int life_lb;              /* a start or end was not seen */
	/* phases */
	uint16_t stack[MAXDEPTH];  /* open phase ids, and their roles */
	unsigned char srole[MAXDEPTH];
	unsigned depth, pdepth, wdepth, lost_depth;
	uint64_t pause_ts, wait_ts;
	uint64_t gc_ns, pauses, wait_ns, waits;
	uint64_t unmatched;       /* ends whose begin was not seen */
	/* counters */
	uint64_t minor_bytes, promoted_bytes, major_words;
	int has_major_words;
	/* ring 0: collections */
	uint64_t minors, majors, forced, compactions;
	/* phases olly's definitions leave out: minor on a ring other than 0
	 * (one collection, counted on ring 0), and phases begun outside any
	 * pause (not GC time) */
	uint64_t minor_other, outside;
	uint64_t lost;
	int runtime;              /* phases or GC counters seen */
};

/* The role of each phase and counter id, cached for its name. */
struct roles {
	const char *pname[ROLE_IDS], *cname[ROLE_IDS];
	unsigned char prole[ROLE_IDS], crole[ROLE_IDS];
};

struct gfile {
	struct gring *r;
	unsigned nrings;
	struct roles *rc;         /* allocated with r, freed when forgotten */
	struct rd_hist *h;       /* pauses, past SMALL_PAUSES of them */
	uint64_t pause[SMALL_PAUSES]; /* ... the pauses until then */
	unsigned npause;
	long double sumsq;
};

struct rd_gc {
	struct gfile *f;
	unsigned nf, cap;         /* f[0..nf) in use, room for cap */
	int oom;
};

unsigned char rd_gc_phase_role(const char *n);
unsigned char rd_gc_counter_role(const char *n);
/* The state of file src (rings rings), made on first use; NULL if out of
 * memory (g->oom set). */
struct gfile *rd_gc_file_of(struct rd_gc *g, unsigned src, unsigned rings);
/* A pause of ring r ended at ts. */
void rd_gc_record_pause(struct gfile *f, struct gring *r, uint64_t ts);

/* The role of a phase id, cached per file by the name it had. */
static inline unsigned char gc_prole(struct gfile *f, const struct rte_event *ev)
{
	if (ev->id >= ROLE_IDS)
		return rd_gc_phase_role(ev->name);
	if (f->rc->pname[ev->id] != ev->name || !ev->name) {
		f->rc->pname[ev->id] = ev->name;
		f->rc->prole[ev->id] = rd_gc_phase_role(ev->name);
	}
	return f->rc->prole[ev->id];
}

static inline unsigned char gc_crole(struct gfile *f, const struct rte_event *ev)
{
	if (ev->id >= ROLE_IDS)
		return rd_gc_counter_role(ev->name);
	if (f->rc->cname[ev->id] != ev->name || !ev->name) {
		f->rc->cname[ev->id] = ev->name;
		f->rc->crole[ev->id] = rd_gc_counter_role(ev->name);
	}
	return f->rc->crole[ev->id];
}

static inline void gc_begin(struct gfile *f, struct gring *r, unsigned ring,
                  const struct rte_event *ev)
{
	unsigned char role = gc_prole(f, ev);

	r->runtime = 1;
	if (r->depth < MAXDEPTH) {
		r->stack[r->depth] = (uint16_t)ev->id;
		r->srole[r->depth] = role;
	}
	r->depth++;
	r->outside += r->pdepth == 0 && role != R_PAUSE && role != R_WAIT;
	switch (role) {
	case R_PAUSE:
		if (r->pdepth++ == 0)
			r->pause_ts = ev->ts;
		break;
	case R_WAIT:
		if (r->wdepth++ == 0)
			r->wait_ts = ev->ts;
		break;
	case R_MINOR:
		r->minors += ring == 0;
		r->minor_other += ring != 0;
		break;
	case R_MAJOR:
		r->majors += ring == 0;
		break;
	case R_FORCED:
		r->forced += ring == 0;
		break;
	case R_COMPACT:
		r->compactions += ring == 0;
		break;
	default:
		break;
	}
}

/* A phase of role `role` closed at ts: a pause or a wait ends with the
 * last of its phases. */
static inline void gc_close_role(struct gfile *f, struct gring *r, unsigned char role,
                       uint64_t ts)
{
	if (role == R_PAUSE && r->pdepth && --r->pdepth == 0) {
		rd_gc_record_pause(f, r, ts);
	} else if (role == R_WAIT && r->wdepth && --r->wdepth == 0) {
		r->wait_ns += ts > r->wait_ts ? ts - r->wait_ts : 0;
		r->waits++;
	}
}

/* The end of a phase: it and whatever was opened inside it and not ended
 * (their ends were lost) close. An end whose begin is not open is only
 * counted. */
static inline void gc_end(struct gfile *f, struct gring *r, const struct rte_event *ev)
{
	unsigned d = r->depth;

	r->runtime = 1;
	if (d > MAXDEPTH) { /* deeper than kept: the id is not checked */
		r->depth--;
		gc_close_role(f, r, gc_prole(f, ev), ev->ts);
		return;
	}
	while (d > 0 && r->stack[d - 1] != ev->id)
		d--;
	if (d == 0) {
		r->unmatched++;
		return;
	}
	while (r->depth >= d)
		gc_close_role(f, r, r->srole[--r->depth], ev->ts);
}

static inline void gc_counter(struct gfile *f, struct gring *r,
                           const struct rte_event *ev)
{
	switch (gc_crole(f, ev)) {
	case C_MINOR_BYTES:
		r->minor_bytes += ev->u.counter;
		break;
	case C_PROMOTED_BYTES:
		r->promoted_bytes += ev->u.counter;
		break;
	case C_MAJOR_WORDS:
		r->major_words += ev->u.counter;
		r->has_major_words = 1;
		break;
	default:
		return;
	}
	r->runtime = 1;
}

/* A runtime event (phase, counter, lifecycle): the ring's last time, and
 * the start of a lifetime whose ring_start or domain_spawn was not seen.
 * User events take no part: a lifetime without its end ends at the last
 * runtime event. */
static inline void gc_note(struct gring *r, uint64_t ts, int lifecycle_ev)
{
	if (ts > r->last_ts)
		r->last_ts = ts;
	r->seen = 1;
	if (!r->open && !r->seg && !lifecycle_ev) {
		r->seg = 1;
		r->seg_ts = ts;
	}
}

/* A phase begin, a phase end, a counter x of ring r of file f, in the
 * ring's order: what ring_events() does for these kinds. Inlined into the
 * caller's loop, whose switch knows the kind already. */
#define GC_HOT static inline __attribute__((always_inline))

GC_HOT void rd_gc_rt_begin(struct gfile *f, struct gring *r,
                           const struct rte_event *x)
{
	gc_note(r, x->ts, 0);
	gc_begin(f, r, x->ring, x);
}

GC_HOT void rd_gc_rt_end(struct gfile *f, struct gring *r,
                         const struct rte_event *x)
{
	gc_note(r, x->ts, 0);
	gc_end(f, r, x);
}

GC_HOT void rd_gc_rt_counter(struct gfile *f, struct gring *r,
                             const struct rte_event *x)
{
	gc_note(r, x->ts, 0);
	gc_counter(f, r, x);
}

#endif
