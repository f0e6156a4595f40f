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
 * Live files: rd_merge_next() returns 0 when no stream has anything new;
 * call rd_merge_refill() later to pick up what producers wrote meanwhile.
 * Across refills the order is only as good as the producers' timing allows.
 *
 * Mappings: in time order, at most a bounded number of sources (256) are
 * mapped at once: reading another releases the one mapped longest ago
 * (rte_cursor_release; it is mapped again when read again). A cursor
 * given to rd_merge_add() may be released by the merge at any time.
 * Unordered, each source is released once read to its end.
 *
 * Library candidate: uses only rte/consumer.h. Not thread-safe.
 */
#ifndef RD_MERGE_H
#define RD_MERGE_H

#include "rte/consumer.h"

typedef struct rd_merge rd_merge;

struct rd_merge_item {
	const struct rte_event *ev; /* valid until the next rd_merge_next() */
	unsigned src;               /* index returned by rd_merge_add() */
	uint64_t ts;                /* ev->ts, or the placement of a loss */
};

/* A new empty merge, or NULL if out of memory. */
rd_merge *rd_merge_new(void);

/* Close every cursor and free. NULL is allowed. */
void rd_merge_free(rd_merge *m);

/*
 * Add a source; the merge takes ownership of the cursor (also on failure).
 * Returns the source index (>= 0) or RTE_ENOMEM. Its rings are probed by
 * the next rd_merge_refill().
 */
int rd_merge_add(rd_merge *m, rte_cursor *c);

unsigned rd_merge_sources(const rd_merge *m);
/*
 * Unordered mode: close source src, already read past (a later source is
 * being read), once nothing it delivered is used any more (the names of
 * its events die with it): a summary of many files keeps no cursor for
 * the processes it has written. rd_merge_cursor(m, src) is NULL after,
 * and later passes step over it. Otherwise nothing is done.
 */
void rd_merge_close_source(rd_merge *m, unsigned src);
rte_cursor *rd_merge_cursor(const rd_merge *m, unsigned src);

/*
 * Probe every stream that had nothing to give (and every ring of sources
 * added since) and queue those that have data now. Returns RTE_OK or the
 * first ring error (see rd_merge_next).
 */
int rd_merge_refill(rd_merge *m);

/*
 * The next event in time order. Returns 1 (item filled), 0 (no stream has
 * anything now), or a negative error of one ring: then item->src and
 * item->ts are set, item->ev is NULL, the ring is dropped from the merge
 * (rd_merge_errmsg() says why) and the next call goes on with the others.
 */
int rd_merge_next(rd_merge *m, struct rd_merge_item *item);

/*
 * Unordered mode, for consumers that only need each ring's own order (a
 * summary): rd_merge_next() then reads ring after ring without the heap,
 * which saves a third of the time per event. Losses are delivered where
 * they occur in their ring (item->ts = the ring's previous timestamp).
 * Set it before the first rd_merge_refill().
 */
void rd_merge_set_unordered(rd_merge *m, int on);

/* A run of events of one ring, from rd_merge_next_run(). */
struct rd_merge_run {
	const struct rte_event *ev; /* ev[0..n), valid until the next call */
	size_t n;
	unsigned src;               /* index returned by rd_merge_add() */
	uint64_t prev_ts;           /* the ring's timestamp before the run: where
	                               a loss (always alone in its run) goes */
};

/*
 * Unordered mode only (else RTE_EINVAL): the next run of events of one
 * ring (up to a few hundred, rte_cursor_next_batch), the fast way through
 * a summary.
 * Returns the number of events (> 0, run filled), 0 when every ring has
 * nothing now, or a negative error of one ring as rd_merge_next() does
 * (run->src set, run->ev NULL, the ring dropped). Do not mix with
 * rd_merge_next() between two refills.
 */
int rd_merge_next_run(rd_merge *m, struct rd_merge_run *run);

/* "PATH: ring N: problem" of the last error. */
const char *rd_merge_errmsg(const rd_merge *m);

/* The source being read right now, for a SIGBUS handler: async-signal-safe,
 * -1 if none. */
int rd_merge_current(const rd_merge *m);

#endif
