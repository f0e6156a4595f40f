/*
 * spans.h - match begin and end events of one ring into durations.
 *
 * Runtime phases and user spans nest on a ring; one rte_spans stack per
 * ring and per family (phases, user spans) pairs each end with the most
 * recent open begin of the same id. An end whose id is not open is
 * "unmatched" (its begin was lost or came before the reader started); opens
 * below the matched one are dropped as unmatched begins (their ends were
 * lost). The depth is bounded: past RTE_SPANS_DEPTH the oldest open begin is
 * forgotten, so a hostile stream of begins costs no memory.
 *
 * Library candidate: depends on nothing but libc. Not thread-safe; no
 * allocation.
 */
#ifndef RTE_SPANS_H
#define RTE_SPANS_H

#include <stdint.h>

#define RTE_SPANS_DEPTH 64u

struct rte_span_open {
	uint64_t ts;
	unsigned id;
	const char *name; /* the caller's, kept for it */
};

struct rte_spans {
	unsigned depth;
	uint64_t dropped; /* begins forgotten without their end */
	struct rte_span_open s[RTE_SPANS_DEPTH];
};

static inline void rte_spans_reset(struct rte_spans *st)
{
	st->depth = 0;
}

/* Open a span `id` at `ts`; `name` is kept with it for the caller. */
void rte_spans_begin(struct rte_spans *st, unsigned id, uint64_t ts,
                     const char *name);

/*
 * Close the innermost open span `id`. Returns 1 and its begin timestamp in
 * *begin_ts if one was open, else 0 (nothing changes). Spans opened inside
 * it and still open are dropped (counted in st->dropped); if `dropped` is
 * not NULL it is set to the first of them and *ndropped to their number
 * (they stay readable until the next rte_spans_begin()).
 */
int rte_spans_end(struct rte_spans *st, unsigned id, uint64_t *begin_ts,
                  const struct rte_span_open **dropped, unsigned *ndropped);

/* Time spent with at least one span open is tracked by the caller: depth 0
 * before a begin means an outermost span starts. */
static inline unsigned rte_spans_depth(const struct rte_spans *st)
{
	return st->depth;
}

#endif
