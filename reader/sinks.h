/*
 * sinks.h - rte-read's output formats. Each format is a sink: it gets every
 * event that passed the filters, in timeline order, annotated by procs.c,
 * then a finish call to write what comes at the end (the summary, the
 * closing of a JSON document, the totals).
 */
#ifndef RD_SINKS_H
#define RD_SINKS_H

#include <string.h>

#include "crashrep.h"
#include "filter.h"
#include "out.h"
#include "procs.h"

struct rd_ctx {
	struct rd_out *out;
	struct rd_procs *procs;
	struct rd_filter *filter;
	uint64_t lost_total;  /* lost words delivered so far */
	/* The crash recorder's events (crashrep.h), NULL for jsonl: `crash` has
	 * seen every rte.module/crash/backtrace event so far (symbolising);
	 * `report`, set before finish, has seen every event (the last events
	 * before each crash) and writes the crash reports. */
	struct rd_crash *crash, *report;
	/* 1 if the sources are read one after another, each to its end, in
	 * index order (a summary of files, not followed): once an event of
	 * source i comes, every source before i was read, and a format may
	 * finish their processes. */
	int files_in_order;
	/* With files_in_order: the merge, whose sources a format may close
	 * (rd_merge_close_source) once it wrote their processes out and
	 * holds nothing they delivered. NULL: none may be. */
	rd_merge *merge;
};

struct rd_sink {
	void (*start)(struct rd_sink *s, struct rd_ctx *c); /* may be NULL */
	void (*event)(struct rd_sink *s, struct rd_ctx *c, const struct rd_item *it);
	void (*finish)(struct rd_sink *s, struct rd_ctx *c);
	void (*destroy)(struct rd_sink *s);
	/* Optional fast path, used only when every event passes the filters
	 * and no other consumer needs them (a summary of finished files):
	 * account for the leading events of ev[0..n), a run of one ring of
	 * source `src`, exactly as rd_procs_update() then event() would, and
	 * return how many; the caller passes the next one the slow way. */
	size_t (*run)(struct rd_sink *s, struct rd_ctx *c, unsigned src,
	              const struct rte_event *ev, size_t n);
};

/* 1 if a span that began with s (a user span if user, else a runtime
 * phase) passes filter f: the filter its end would meet. */
static inline int rd_span_passes(struct rd_filter *f,
                                 const struct rd_span_open *s, int user)
{
	struct rte_event ev;

	memset(&ev, 0, sizeof ev);
	ev.kind = user ? RTE_EV_USER_SPAN_END : RTE_EV_END;
	ev.id = s->id;
	ev.name = s->name;
	return rd_filter_pass(f, &ev);
}

/* How many of the n unfinished spans s[0..n) pass filter f. */
static inline uint64_t rd_spans_passing(struct rd_filter *f,
                                        const struct rd_span_open *s,
                                        unsigned n, int user)
{
	uint64_t k = 0;

	for (unsigned i = 0; i < n; i++)
		k += (uint64_t)rd_span_passes(f, &s[i], user);
	return k;
}

/* Constructors; NULL if out of memory. */
struct rd_sink *rd_sink_text(void);
struct rd_sink *rd_sink_jsonl(void);
struct rd_sink *rd_sink_chrome(void);
struct rd_sink *rd_sink_summary(int json);
struct rd_sink *rd_sink_gcstats(int json); /* fmt/gcstats.c */

/* The crash report of `text` and `summary` (fmt/text.c): for every crash
 * of c, its process, signal, thread and ring, its symbolised stack (and
 * the stack that made the thread, with RTE_BACKTRACE=thread), then the
 * last events of every ring before it. Nothing if c is NULL or saw no
 * crash. */
void rd_text_crash_report(const struct rd_crash *c, struct rd_out *o);

#endif
