/*
 * filter.h - which events rte-read prints: by kind and by name glob.
 *
 * Kinds: the JSONL kind names (begin, end, counter, alloc, lifecycle, lost,
 * user_unit, user_int, user_span, user_custom) and the groups phase
 * (begin,end), runtime (begin,end,counter,alloc,lifecycle) and user (the
 * five user kinds). Names: fnmatch(3) globs matched against the event's
 * name (phase, counter, lifecycle or user event name; "alloc" for alloc
 * events). Lost words always pass a name filter: a loss has no name, and
 * hiding it would hide that events are missing; exclude kind `lost` to drop
 * them.
 *
 * Navigation (rd_filter_pass_item, on events annotated by procs.c): a time
 * window (--since/--until: relative to the trace start, the earliest
 * first event of any ring of the inputs, or absolute @NS in the files'
 * CLOCK_MONOTONIC nanoseconds; an event is kept if its own time is inside,
 * so a span that ends inside keeps its whole duration), processes (--pid)
 * and threads (--thread: a tid, or a glob over the ring's thread name).
 * Not thread-safe.
 */
#ifndef RD_FILTER_H
#define RD_FILTER_H

#include "rte/consumer.h"

#define RD_FILTER_MAX_GLOBS 32
#define RD_FILTER_CACHE 1024

struct rd_filter {
	unsigned kinds;  /* bit per enum rte_event_kind; all set by default */
	const char *include[RD_FILTER_MAX_GLOBS];
	const char *exclude[RD_FILTER_MAX_GLOBS];
	unsigned ninclude, nexclude;
	int by_name;
	int kinds_set;    /* --kind given: it replaced "all kinds" */
	struct {
		const char *name;
		int pass;
	} cache[RD_FILTER_CACHE];
	/* navigation */
	int nav;                 /* a pid, thread or time filter is set */
	long pids[RD_FILTER_MAX_GLOBS];
	unsigned npids;
	const char *threads[RD_FILTER_MAX_GLOBS];
	unsigned nthreads;
	struct rd_when { int set, abs; uint64_t ns; } since, until;
	uint64_t t0;             /* trace start (rd_filter_set_start) */
	int has_t0;
	int wall_clock;          /* --wall-clock: text prints wall time */
	int all;                 /* --all: chrome shows rte.* bookkeeping */
};

void rd_filter_init(struct rd_filter *f);

/* Add a comma-separated kind list (the first call replaces "all kinds").
 * Returns 0, or -1 with the unknown word in bad (cap bytes). */
int rd_filter_add_kinds(struct rd_filter *f, const char *list, char *bad,
                        size_t cap);

/* Add a name glob to include (exclude = 0) or exclude. The string must
 * outlive f. Returns 0 or -1 if there are too many. */
int rd_filter_add_name(struct rd_filter *f, const char *glob, int exclude);

/* 1 if the event passes. */
int rd_filter_pass(struct rd_filter *f, const struct rte_event *ev);

/* 1 if no filter was set. */
static inline int rd_filter_all(const struct rd_filter *f)
{
	return !f->by_name && !f->nav &&
	       f->kinds == (1u << RTE_EV_KIND_COUNT) - 1;
}

/* Parse a --since/--until value: DURATION (a decimal number and a unit:
 * ns, us, ms, s; no unit: seconds) after the trace start, or @NS (an
 * absolute CLOCK_MONOTONIC time in ns). Returns 0 or -1. */
int rd_filter_parse_when(const char *s, struct rd_when *w);

/* Add --pid P (-1 if not a pid) or --thread NAME|TID (the string must
 * outlive f). Return 0 or -1 (not a pid, too many). */
int rd_filter_add_pid(struct rd_filter *f, const char *s);
int rd_filter_add_thread(struct rd_filter *f, const char *s);

/* The trace start: the earliest first event of any used ring of the
 * files paths[0..n) (read through cursors of their own). Sets f->t0 the
 * first time some file has an event. */
void rd_filter_set_start(struct rd_filter *f, const char *const *paths,
                         unsigned n);

/* The nanoseconds to add to a CLOCK_MONOTONIC time for CLOCK_REALTIME,
 * as they are now on this machine (valid for files of this boot). */
int64_t rd_wall_offset(void);

/* 1 if process pid passes --pid (every pid does without one): the
 * per-process formats leave the others out. */
static inline int rd_filter_pid_pass(const struct rd_filter *f, long pid)
{
	for (unsigned i = 0; i < f->npids; i++)
		if (f->pids[i] == pid)
			return 1;
	return f->npids == 0;
}

struct rd_item;
/* 1 if the annotated event passes every filter (navigation, kind, name). */
int rd_filter_pass_item(struct rd_filter *f, const struct rd_item *it);

#endif
