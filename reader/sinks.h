/*
 * sinks.h - rte-read's output formats. Each format is a sink: it gets every
 * event that passed the filters, in timeline order, annotated by procs.c,
 * then a finish call to write what comes at the end (the summary, the
 * closing of a JSON document, the totals).
 */
#ifndef RD_SINKS_H
#define RD_SINKS_H

#include "crash.h"
#include "filter.h"
#include "out.h"
#include "procs.h"

struct rd_ctx {
	struct rd_out *out;
	struct rd_procs *procs;
	struct rd_filter *filter;
	uint64_t lost_total;  /* lost words delivered so far */
	/* The crash recorder's events (crash.h), NULL for jsonl: `crash` has
	 * seen every rte.module/crash/backtrace event so far (symbolising);
	 * `report`, set before finish, has seen every event (the last events
	 * before each crash) and writes the crash reports. */
	struct rd_crash *crash, *report;
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

/* Constructors; NULL if out of memory. */
struct rd_sink *rd_sink_text(void);
struct rd_sink *rd_sink_jsonl(void);
struct rd_sink *rd_sink_chrome(void);
struct rd_sink *rd_sink_summary(int json);
struct rd_sink *rd_sink_gcstats(int json); /* fmt_gcstats.c */

#endif
