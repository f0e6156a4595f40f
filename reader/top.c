/*
 * top.c - `rte-read --top N`: the N longest runtime phases (GC pauses and
 * the other phases of OCaml's runtime) and user spans that passed the
 * filters, longest first, each with where to find it: its start in the
 * time base of the text and chrome outputs (seconds, resp. microseconds,
 * since the trace start), its pid, thread id, ring and thread name.
 *
 *   text (default)  a table, one line a span
 *   json (-f json)  {"trace_start_ns":T,"top":[{...},...]}
 *
 * Only complete spans count (begin and end seen); unfinished ones are
 * left out (their length is not known). Keeps N entries in a min-heap:
 * O(log N) an end. Not thread-safe.
 */
#include <stdio.h>
#include <stdlib.h>

#include "top.h"

struct top_ent {
	uint64_t dur, begin_ts;
	long pid, tid;
	unsigned ring;
	int user;
	char name[RTE_NAME_MAX + 1];
	char thread[RD_THREAD_NAME_MAX];
};

struct top {
	struct rd_sink sink;
	int json;
	unsigned cap, n;
	struct top_ent *h; /* min-heap on dur: h[0] is the shortest kept */
};

static void swap(struct top_ent *a, struct top_ent *b)
{
	struct top_ent t = *a;

	*a = *b;
	*b = t;
}

static void sift_down(struct top *t, unsigned i, unsigned n)
{
	for (;;) {
		unsigned l = 2 * i + 1, m = i;

		if (l < n && t->h[l].dur < t->h[m].dur)
			m = l;
		if (l + 1 < n && t->h[l + 1].dur < t->h[m].dur)
			m = l + 1;
		if (m == i)
			return;
		swap(&t->h[i], &t->h[m]);
		i = m;
	}
}

static void sift_up(struct top *t, unsigned i)
{
	while (i > 0 && t->h[(i - 1) / 2].dur > t->h[i].dur) {
		swap(&t->h[(i - 1) / 2], &t->h[i]);
		i = (i - 1) / 2;
	}
}

static void fill(struct top_ent *e, const struct rd_item *it)
{
	char buf[48];

	e->dur = it->dur;
	e->begin_ts = it->begin_ts;
	e->pid = it->src->pid;
	e->tid = it->th->tid;
	e->ring = it->ev->ring;
	e->user = it->ev->kind == RTE_EV_USER_SPAN_END;
	snprintf(e->name, sizeof e->name, "%s", rte_event_name(it->ev, buf, sizeof buf));
	snprintf(e->thread, sizeof e->thread, "%s", it->th->name);
}

static void top_event(struct rd_sink *s, struct rd_ctx *c, const struct rd_item *it)
{
	struct top *t = (struct top *)s;
	enum rte_event_kind k = it->ev->kind;

	(void)c;
	if (!it->pass || !it->matched ||
	    (k != RTE_EV_END && k != RTE_EV_USER_SPAN_END))
		return;
	if (t->n < t->cap) {
		fill(&t->h[t->n], it);
		sift_up(t, t->n++);
	} else if (it->dur > t->h[0].dur) {
		fill(&t->h[0], it);
		sift_down(t, 0, t->n);
	}
}

static int by_dur_desc(const void *a, const void *b)
{
	const struct top_ent *x = a, *y = b;

	if (x->dur != y->dur)
		return x->dur < y->dur ? 1 : -1;
	return x->begin_ts < y->begin_ts ? -1 : x->begin_ts > y->begin_ts;
}

/* Time since the trace start, as text prints it (may be negative). */
static void put_rel(struct rd_out *o, uint64_t ts, uint64_t t0, int us)
{
	char b[40];

	if (ts < t0)
		rd_out_ch(o, '-');
	if (us)
		rd_out_us3(o, ts >= t0 ? ts - t0 : t0 - ts);
	else
		rd_out_mem(o, b, rd_fmt_secs(b, ts >= t0 ? ts - t0 : t0 - ts));
}

static void top_text(struct top *t, struct rd_ctx *c, uint64_t t0)
{
	struct rd_out *o = c->out;
	char line[512];

	snprintf(line, sizeof line,
	         "# the %u longest runtime phases and user spans; START: seconds since the trace start (as in text, and chrome's ts)\n"
	         "%4s %12s %14s %7s %7s %4s %-15s %-5s %s\n",
	         t->n, "RANK", "DURATION", "START", "PID", "TID", "RING", "THREAD", "KIND", "NAME");
	rd_out_str(o, line);
	for (unsigned i = 0; i < t->n; i++) {
		const struct top_ent *e = &t->h[i];
		char dur[40], st[48], tid[24];
		size_t n = rd_fmt_dur(dur, e->dur);

		dur[n] = '\0';
		n = 0;
		if (e->begin_ts < t0)
			st[n++] = '-';
		n += rd_fmt_secs(st + n, e->begin_ts >= t0 ? e->begin_ts - t0 : t0 - e->begin_ts);
		st[n] = '\0';
		if (e->tid >= 0)
			snprintf(tid, sizeof tid, "%ld", e->tid);
		else
			snprintf(tid, sizeof tid, "-");
		snprintf(line, sizeof line, "%4u %12s %14s %7ld %7s %4u %-15s %-5s %s\n",
		         i + 1, dur, st, e->pid, tid, e->ring,
		         e->thread[0] ? e->thread : "-", e->user ? "span" : "phase", e->name);
		rd_out_str(o, line);
	}
}

static void top_json(struct top *t, struct rd_ctx *c, uint64_t t0)
{
	struct rd_out *o = c->out;

	rd_out_kv_u64(o, "{\"trace_start_ns\":", t0);
	rd_out_str(o, ",\"top\":[");
	for (unsigned i = 0; i < t->n; i++) {
		const struct top_ent *e = &t->h[i];

		rd_out_str(o, i ? ",\n{\"rank\":" : "\n{\"rank\":");
		rd_out_u64(o, i + 1);
		rd_out_str(o, ",\"kind\":");
		rd_out_str(o, e->user ? "\"span\"" : "\"phase\"");
		rd_out_str(o, ",\"name\":");
		rd_out_json_str(o, e->name);
		rd_out_kv_u64(o, ",\"dur_ns\":", e->dur);
		rd_out_kv_u64(o, ",\"start_ns\":", e->begin_ts);
		rd_out_str(o, ",\"start_us\":"); /* chrome's ts */
		put_rel(o, e->begin_ts, t0, 1);
		rd_out_kv_i64(o, ",\"pid\":", e->pid);
		rd_out_str(o, ",\"tid\":");
		if (e->tid >= 0)
			rd_out_i64(o, e->tid);
		else
			rd_out_str(o, "null");
		rd_out_kv_u64(o, ",\"ring\":", e->ring);
		rd_out_str(o, ",\"thread\":");
		rd_out_json_str(o, e->thread);
		rd_out_ch(o, '}');
	}
	rd_out_str(o, "\n]}\n");
}

static void top_finish(struct rd_sink *s, struct rd_ctx *c)
{
	struct top *t = (struct top *)s;
	uint64_t t0 = c->filter->has_t0 ? c->filter->t0 : 0;

	qsort(t->h, t->n, sizeof *t->h, by_dur_desc);
	if (t->json)
		top_json(t, c, t0);
	else
		top_text(t, c, t0);
}

static void top_destroy(struct rd_sink *s)
{
	struct top *t = (struct top *)s;

	free(t->h);
	free(t);
}

struct rd_sink *rd_sink_top(unsigned n, int json)
{
	struct top *t = calloc(1, sizeof *t);

	if (!t || !(t->h = calloc(n, sizeof *t->h))) {
		free(t);
		return NULL;
	}
	t->cap = n;
	t->json = json;
	t->sink = (struct rd_sink){ NULL, top_event, top_finish, top_destroy, NULL };
	return &t->sink;
}
