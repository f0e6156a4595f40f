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
 * them. Not thread-safe.
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
	return !f->by_name && f->kinds == (1u << RTE_EV_KIND_COUNT) - 1;
}

#endif
