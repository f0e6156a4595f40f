/*
 * spans.h - match begin and end events of one ring into durations.
 *
 * One rd_spans stack per ring and per family (phases, user spans) pairs
 * each end with the most recent open begin of the same id. An end whose id
 * is not open is "unmatched" (its begin was lost or came before the reader
 * started).
 *
 * Runtime phases nest: rd_spans_end() drops the opens above the matched
 * one as unmatched begins (their ends were lost). User spans of different
 * names need not nest (A begin, B begin, A end, B end: fibers, Eio), and
 * only the same name nests: rd_spans_end_one() takes out the matched open
 * alone and leaves the others open. The depth is bounded: past
 * RD_SPANS_DEPTH the oldest open begin is forgotten, so a hostile stream
 * of begins costs no memory. The stack is allocated when a begin first
 * needs room and grown to at most RD_SPANS_DEPTH entries: a ring that
 * never nests deeply (most of them, and there may be 100,000 files of
 * them) costs a few bytes; free it with rd_spans_free(). A zeroed struct
 * is an empty stack.
 *
 * Library candidate: depends on nothing but libc. Not thread-safe.
 */
#ifndef RD_SPANS_H
#define RD_SPANS_H

#include <stdint.h>
#include <stddef.h>

#define RD_SPANS_DEPTH 64u

/* The one rule of a matched span's or phase's duration, for every output
 * (summary, exporter, Chrome...): its end's time minus its begin's, 0 if
 * the end is earlier (clocks of untrusted files may go back). */
static inline uint64_t rd_span_dur(uint64_t begin_ts, uint64_t end_ts)
{
	return end_ts >= begin_ts ? end_ts - begin_ts : 0;
}

/* The one rule of a total of durations: *sum += v, saturating at
 * UINT64_MAX (the summary's entries and histograms, the exporter's _sum). */
static inline void rd_dur_sum_add(uint64_t *sum, uint64_t v)
{
	if (__builtin_add_overflow(*sum, v, sum))
		*sum = UINT64_MAX;
}

struct rd_span_open {
	uint64_t ts;
	unsigned id;
	const char *name; /* the caller's, kept for it */
};

struct rd_spans {
	unsigned depth, cap;
	uint64_t dropped; /* begins forgotten without their end */
	struct rd_span_open *s; /* cap entries, NULL until the first begin */
};

static inline void rd_spans_reset(struct rd_spans *st)
{
	st->depth = 0;
}

/* Slow path of rd_spans_begin(): the stack is full. Grows it, or past
 * RD_SPANS_DEPTH (or out of memory) forgets the oldest open begin.
 * Returns 0 if there is room for one more, -1 if not (out of memory with
 * nothing open: the begin is counted as dropped). */
int rd_spans_make_room(struct rd_spans *st);

/* Free the stack; st is then empty (its dropped count is kept). */
void rd_spans_free(struct rd_spans *st);

/* Open a span `id` at `ts`; `name` is kept with it for the caller. */
static inline void rd_spans_begin(struct rd_spans *st, unsigned id,
                                   uint64_t ts, const char *name)
{
	if (st->depth == st->cap && rd_spans_make_room(st) < 0)
		return;
	st->s[st->depth].ts = ts;
	st->s[st->depth].id = id;
	st->s[st->depth].name = name;
	st->depth++;
}

/*
 * Close the innermost open span `id`. Returns 1 and its begin timestamp in
 * *begin_ts if one was open, else 0 (nothing changes). Spans opened inside
 * it and still open are dropped (counted in st->dropped); if `dropped` is
 * not NULL it is set to the first of them and *ndropped to their number
 * (they stay readable until the next rd_spans_begin()).
 */
static inline int rd_spans_end(struct rd_spans *st, unsigned id,
                                uint64_t *begin_ts,
                                const struct rd_span_open **dropped,
                                unsigned *ndropped)
{
	unsigned i = st->depth;

	/* The common case, the innermost span, costs one comparison. */
	while (i > 0 && st->s[i - 1].id != id)
		i--;
	if (i == 0)
		return 0;
	*begin_ts = st->s[i - 1].ts;
	if (dropped) {
		*dropped = &st->s[i];
		*ndropped = st->depth - i;
	}
	st->dropped += st->depth - i;
	st->depth = i - 1;
	return 1;
}

/*
 * Close the innermost open span `id` and only it: spans opened after it
 * stay open. Returns 1 and its begin timestamp in *begin_ts if one was
 * open, else 0 (nothing changes).
 */
static inline int rd_spans_end_one(struct rd_spans *st, unsigned id,
                                    uint64_t *begin_ts)
{
	unsigned i = st->depth;

	while (i > 0 && st->s[i - 1].id != id)
		i--;
	if (i == 0)
		return 0;
	*begin_ts = st->s[i - 1].ts;
	for (; i < st->depth; i++) /* usually none: the innermost matched */
		st->s[i - 1] = st->s[i];
	st->depth--;
	return 1;
}

/* Time spent with at least one span open is tracked by the caller: depth 0
 * before a begin means an outermost span starts. */
static inline unsigned rd_spans_depth(const struct rd_spans *st)
{
	return st->depth;
}

#endif
