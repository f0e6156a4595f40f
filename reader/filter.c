/*
 * filter.c - kind and name filters (see filter.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"
#include "procs.h"

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

/* ---- navigation ---------------------------------------------------------- */

int rd_filter_parse_when(const char *s, struct rd_when *w)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	memset(w, 0, sizeof *w);
	if (s[0] == '@') {
		unsigned long long ns;

		if (s[1] < '0' || s[1] > '9')
			return -1;
		errno = 0;
		ns = strtoull(s + 1, &end, 10);
		if (errno || *end)
			return -1;
		w->set = w->abs = 1;
		w->ns = ns;
		return 0;
	}
	if ((s[0] < '0' || s[0] > '9') && s[0] != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v > 1e7)
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(end, units[i].unit)) {
			w->set = 1;
			w->ns = (uint64_t)(v * units[i].ns + 0.5);
			return 0;
		}
	return -1;
}

int rd_filter_add_pid(struct rd_filter *f, const char *s)
{
	char *end;
	long pid;

	errno = 0;
	pid = strtol(s, &end, 10);
	if (errno || end == s || *end || pid <= 0 || pid >= (1L << 30) ||
	    f->npids == RD_FILTER_MAX_GLOBS)
		return -1;
	f->pids[f->npids++] = pid;
	f->nav = 1;
	return 0;
}

int rd_filter_add_thread(struct rd_filter *f, const char *s)
{
	if (!s[0] || f->nthreads == RD_FILTER_MAX_GLOBS)
		return -1;
	f->threads[f->nthreads++] = s;
	f->nav = 1;
	return 0;
}

void rd_filter_set_start(struct rd_filter *f, const char *const *paths,
                         unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		rte_cursor *c;

		if (rte_cursor_open(paths[i], &c, NULL, 0) != RTE_OK)
			continue;
		for (unsigned r = 0; r < rte_cursor_rings(c); r++) {
			struct rte_event ev;
			int got, tries = 8; /* a writer racing ahead: few */

			if (!rte_cursor_ring_used(c, r))
				continue;
			/* A wrapped ring starts with its loss record, which
			 * has no time (ts 0): the start is its first event. */
			while ((got = rte_cursor_next(c, r, &ev)) == 1 &&
			       ev.kind == RTE_EV_LOST && --tries > 0)
				;
			if (got == 1 && ev.kind == RTE_EV_LOST)
				continue;
			if (got != 1)
				continue;
			if (!f->has_t0 || ev.ts < f->t0) {
				f->t0 = ev.ts;
				f->has_t0 = 1;
			}
		}
		rte_cursor_close(c);
	}
}

int64_t rd_wall_offset(void)
{
	struct timespec m, r;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000 +
	       ((int64_t)r.tv_nsec - m.tv_nsec);
}

/* The absolute time of a --since/--until bound. */
static uint64_t when_ns(const struct rd_filter *f, const struct rd_when *w)
{
	return w->abs ? w->ns : f->t0 + w->ns;
}

static int thread_pass(const struct rd_filter *f, const struct rd_thread *th)
{
	for (unsigned i = 0; i < f->nthreads; i++) {
		const char *t = f->threads[i];
		char *end;
		long tid = strtol(t, &end, 10);

		if (!*end && end != t ? tid == th->tid
		                      : th->name[0] && fnmatch(t, th->name, 0) == 0)
			return 1;
	}
	return 0;
}

int rd_filter_pass_item(struct rd_filter *f, const struct rd_item *it)
{
	if (f->nav) {
		if (!f->has_t0) { /* no file had an event when reading began */
			f->t0 = it->ts;
			f->has_t0 = 1;
		}
		if (f->since.set && it->ts < when_ns(f, &f->since))
			return 0;
		if (f->until.set && it->ts > when_ns(f, &f->until))
			return 0;
		if (f->npids) {
			unsigned i = 0;

			while (i < f->npids && f->pids[i] != it->src->pid)
				i++;
			if (i == f->npids)
				return 0;
		}
		if (f->nthreads && !thread_pass(f, it->th))
			return 0;
	}
	return rd_filter_pass(f, it->ev);
}
