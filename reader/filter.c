/*
 * filter.c - kind and name filters (see filter.h).
 */
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"

#define K(x) (1u << (x))

static const struct {
	const char *name;
	unsigned mask;
} kind_words[] = {
	{ "begin", K(RTE_EV_BEGIN) },
	{ "end", K(RTE_EV_END) },
	{ "phase", K(RTE_EV_BEGIN) | K(RTE_EV_END) },
	{ "counter", K(RTE_EV_COUNTER) },
	{ "alloc", K(RTE_EV_ALLOC) },
	{ "lifecycle", K(RTE_EV_LIFECYCLE) },
	{ "lost", K(RTE_EV_LOST) },
	{ "user_unit", K(RTE_EV_USER_UNIT) },
	{ "user_int", K(RTE_EV_USER_INT) },
	{ "user_span", K(RTE_EV_USER_SPAN_BEGIN) | K(RTE_EV_USER_SPAN_END) },
	{ "user_custom", K(RTE_EV_USER_CUSTOM) },
	{ "runtime", K(RTE_EV_BEGIN) | K(RTE_EV_END) | K(RTE_EV_COUNTER) |
	             K(RTE_EV_ALLOC) | K(RTE_EV_LIFECYCLE) },
	{ "user", K(RTE_EV_USER_UNIT) | K(RTE_EV_USER_INT) |
	          K(RTE_EV_USER_SPAN_BEGIN) | K(RTE_EV_USER_SPAN_END) |
	          K(RTE_EV_USER_CUSTOM) },
};

void rd_filter_init(struct rd_filter *f)
{
	memset(f, 0, sizeof *f);
	f->kinds = K(RTE_EV_KIND_COUNT) - 1;
}

static int kind_mask(const char *w, size_t n, unsigned *mask)
{
	for (size_t i = 0; i < sizeof kind_words / sizeof kind_words[0]; i++)
		if (strlen(kind_words[i].name) == n &&
		    memcmp(kind_words[i].name, w, n) == 0) {
			*mask = kind_words[i].mask;
			return 0;
		}
	return -1;
}

int rd_filter_add_kinds(struct rd_filter *f, const char *list, char *bad,
                        size_t cap)
{
	const char *p = list;

	if (!f->kinds_set) {
		f->kinds = 0;
		f->kinds_set = 1;
	}
	for (;;) {
		size_t n = strcspn(p, ",");
		unsigned m;

		if (kind_mask(p, n, &m) < 0) {
			snprintf(bad, cap, "%.*s", (int)(n < 64 ? n : 64), p);
			return -1;
		}
		f->kinds |= m;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int rd_filter_add_name(struct rd_filter *f, const char *glob, int exclude)
{
	if (exclude) {
		if (f->nexclude == RD_FILTER_MAX_GLOBS)
			return -1;
		f->exclude[f->nexclude++] = glob;
	} else {
		if (f->ninclude == RD_FILTER_MAX_GLOBS)
			return -1;
		f->include[f->ninclude++] = glob;
	}
	f->by_name = 1;
	return 0;
}

static int match_any(const char *const *globs, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (fnmatch(globs[i], name, 0) == 0)
			return 1;
	return 0;
}

static int name_pass(const struct rd_filter *f, const char *name)
{
	if (f->ninclude && !match_any(f->include, f->ninclude, name))
		return 0;
	return !match_any(f->exclude, f->nexclude, name);
}

int rd_filter_pass(struct rd_filter *f, const struct rte_event *ev)
{
	char buf[48];
	size_t slot;
	int pass;

	if (!(f->kinds & K(ev->kind)))
		return 0;
	if (!f->by_name || ev->kind == RTE_EV_LOST)
		return 1;
	if (ev->kind == RTE_EV_ALLOC)
		return name_pass(f, "alloc");
	if (!ev->name) /* an id this version does not know */
		return name_pass(f, rte_event_name(ev, buf, sizeof buf));
	/* Names are static strings or the cursor's cached copies: their
	 * address identifies them for as long as the cursors live. */
	slot = ((uintptr_t)ev->name >> 3) % RD_FILTER_CACHE;
	if (f->cache[slot].name == ev->name)
		return f->cache[slot].pass;
	pass = name_pass(f, ev->name);
	if (ev->name[0]) { /* an empty name may still be filled in later */
		f->cache[slot].name = ev->name;
		f->cache[slot].pass = pass;
	}
	return pass;
}
