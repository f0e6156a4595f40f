/*
 * merge.h - merge the rings of several ring files into one timeline.
 *
 * Each ring of each file is a stream already in timestamp order; the merge
 * is a k-way merge (a binary heap keyed by the timestamp of each stream's
 * next event) built on rte_cursor_next_batch() (each stream reads a few
 * dozen events ahead). Ties go to the source added first,
 * then to the lower ring, so the output is deterministic and each ring's
 * events keep their order.
 *
 * Loss: a run of RTE_EV_LOST events of a ring is delivered as one lost event
 * placed just before the ring's next event (where the words went missing),
 * or after its previous one if nothing follows yet.
 *
 * Live files: rte_merge_next() returns 0 when no stream has anything new;
 * call rte_merge_refill() later to pick up what producers wrote meanwhile.
 * Across refills the order is only as good as the producers' timing allows.
 *
 * Mappings: in time order, at most a bounded number of sources (256) are
 * mapped at once: reading another releases the one mapped longest ago
 * (rte_cursor_release; it is mapped again when read again). A cursor
 * given to rte_merge_add() may be released by the merge at any time.
 * Unordered, each source is released once read to its end.
 *
 * Library candidate: uses only rte/consumer.h. Not thread-safe.
 */
#ifndef RTE_MERGE_H
#define RTE_MERGE_H

#include "rte/consumer.h"

typedef struct rte_merge rte_merge;

struct rte_merge_item {
	const struct rte_event *ev; /* valid until the next rte_merge_next() */
	unsigned src;               /* index returned by rte_merge_add() */
	uint64_t ts;                /* ev->ts, or the placement of a loss */
};

/* A new empty merge, or NULL if out of memory. */
rte_merge *rte_merge_new(void);

/* Close every cursor and free. NULL is allowed. */
void rte_merge_free(rte_merge *m);

/*
 * Add a source; the merge takes ownership of the cursor (also on failure).
 * Returns the source index (>= 0) or RTE_ENOMEM. Its rings are probed by
 * the next rte_merge_refill().
 */
int rte_merge_add(rte_merge *m, rte_cursor *c);

unsigned rte_merge_sources(const rte_merge *m);
rte_cursor *rte_merge_cursor(const rte_merge *m, unsigned src);

/*
 * Probe every stream that had nothing to give (and every ring of sources
 * added since) and queue those that have data now. Returns RTE_OK or the
 * first ring error (see rte_merge_next).
 */
int rte_merge_refill(rte_merge *m);

/*
 * The next event in time order. Returns 1 (item filled), 0 (no stream has
 * anything now), or a negative error of one ring: then item->src and
 * item->ts are set, item->ev is NULL, the ring is dropped from the merge
 * (rte_merge_errmsg() says why) and the next call goes on with the others.
 */
int rte_merge_next(rte_merge *m, struct rte_merge_item *item);

/*
 * Unordered mode, for consumers that only need each ring's own order (a
 * summary): rte_merge_next() then reads ring after ring without the heap,
 * which saves a third of the time per event. Losses are delivered where
 * they occur in their ring (item->ts = the ring's previous timestamp).
 * Set it before the first rte_merge_refill().
 */
void rte_merge_set_unordered(rte_merge *m, int on);

/* A run of events of one ring, from rte_merge_next_run(). */
struct rte_merge_run {
	const struct rte_event *ev; /* ev[0..n), valid until the next call */
	size_t n;
	unsigned src;               /* index returned by rte_merge_add() */
	uint64_t prev_ts;           /* the ring's timestamp before the run: where
	                               a loss (always alone in its run) goes */
};

/*
 * Unordered mode only (else RTE_EINVAL): the next run of events of one
 * ring (up to a few hundred, rte_cursor_next_batch), the fast way through
 * a summary.
 * Returns the number of events (> 0, run filled), 0 when every ring has
 * nothing now, or a negative error of one ring as rte_merge_next() does
 * (run->src set, run->ev NULL, the ring dropped). Do not mix with
 * rte_merge_next() between two refills.
 */
int rte_merge_next_run(rte_merge *m, struct rte_merge_run *run);

/* "PATH: ring N: problem" of the last error. */
const char *rte_merge_errmsg(const rte_merge *m);

/* The source being read right now, for a SIGBUS handler: async-signal-safe,
 * -1 if none. */
int rte_merge_current(const rte_merge *m);

#endif
