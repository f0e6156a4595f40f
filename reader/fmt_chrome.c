/*
 * fmt_chrome.c - Chrome Trace Event JSON (the "JSON Array Format" wrapped in
 * an object), for Perfetto UI and chrome://tracing.
 *
 *   pid   the process id; "process_name" metadata names it
 *   tid   the ring; "thread_name" metadata gives "ring N: <thread names>"
 *   X     a runtime phase or user span, written at its end with its begin
 *         time and duration; spans whose end never comes (lost, thread
 *         ended, file ended) are written up to where they were given up
 *         with args.unfinished = true
 *   i     lifecycle, unit, custom, alloc and lost events, and ends whose
 *         begin was not seen (args.unmatched = "end")
 *   C     counters and user ints: one track per name, one series per ring
 *
 * Timestamps are microseconds (three decimals: nanosecond precision) since
 * the first event of the timeline.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sinks.h"

struct ring_names {
	unsigned gen;     /* name_gen last seen */
	char names[160];  /* distinct names seen on the ring, ", "-separated */
};

struct chrome {
	struct rd_sink sink;
	int started, any;
	uint64_t base;
	struct ring_names **rn; /* per source, per ring; lazy */
	unsigned nrn;
};

static void ev_open(struct chrome *C, struct rd_out *o, const char *ph,
                    long pid, unsigned tid, uint64_t ts)
{
	rd_out_str(o, C->any ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
	C->any = 1;
	rd_out_str(o, ph);
	rd_out_str(o, "\",\"pid\":");
	rd_out_i64(o, pid < 0 ? 0 : pid);
	rd_out_str(o, ",\"tid\":");
	rd_out_u64(o, tid);
	rd_out_str(o, ",\"ts\":");
	rd_out_us3(o, ts > C->base ? ts - C->base : 0);
}

static void put_name(struct rd_out *o, const char *name, const char *cat)
{
	rd_out_str(o, ",\"name\":");
	rd_out_json_str(o, name && name[0] ? name : "(unnamed)");
	rd_out_str(o, ",\"cat\":\"");
	rd_out_str(o, cat);
	rd_out_ch(o, '"');
}

static const char *span_name(const struct rte_span_open *s, int user,
                             char *buf, size_t cap)
{
	struct rte_event ev;

	if (s->name)
		return s->name;
	memset(&ev, 0, sizeof ev);
	ev.kind = user ? RTE_EV_USER_SPAN_BEGIN : RTE_EV_BEGIN;
	ev.id = s->id;
	return rte_event_name(&ev, buf, cap);
}

/* 1 if a span that began with `s` would pass the filters. */
static int span_passes(struct rd_filter *f, const struct rte_span_open *s,
                       int user)
{
	struct rte_event ev;

	memset(&ev, 0, sizeof ev);
	ev.kind = user ? RTE_EV_USER_SPAN_END : RTE_EV_END;
	ev.id = s->id;
	ev.name = s->name;
	return rd_filter_pass(f, &ev);
}

static void unfinished(struct chrome *C, struct rd_ctx *c, long pid,
                       unsigned ring, const struct rd_abandoned *ab,
                       uint64_t until)
{
	char buf[48];

	for (unsigned i = 0; i < ab->n; i++) {
		const struct rte_span_open *s = &ab->s[i];

		if (!span_passes(c->filter, s, ab->user))
			continue;
		ev_open(C, c->out, "X", pid, ring, s->ts);
		rd_out_str(c->out, ",\"dur\":");
		rd_out_us3(c->out, until > s->ts ? until - s->ts : 0);
		put_name(c->out, span_name(s, ab->user, buf, sizeof buf),
		         ab->user ? "user" : "runtime");
		rd_out_str(c->out, ",\"args\":{\"unfinished\":true}}");
	}
}

static void note_thread_name(struct chrome *C, struct rd_ctx *c,
                             const struct rd_item *it)
{
	unsigned src = (unsigned)(it->src - c->procs->src);
	struct ring_names *rn;
	size_t len;

	if (src >= C->nrn) {
		unsigned n = src + 8;
		struct ring_names **p = realloc(C->rn, n * sizeof *p);

		if (!p)
			return;
		memset(p + C->nrn, 0, (n - C->nrn) * sizeof *p);
		C->rn = p;
		C->nrn = n;
	}
	if (!C->rn[src] && !(C->rn[src] = calloc(it->src->rings, sizeof **C->rn)))
		return;
	rn = &C->rn[src][it->ev->ring];
	if (rn->gen == it->th->name_gen)
		return;
	rn->gen = it->th->name_gen;
	if (!it->th->name[0] || strstr(rn->names, it->th->name))
		return;
	len = strlen(rn->names);
	snprintf(rn->names + len, sizeof rn->names - len, "%s%s",
	         len ? ", " : "", it->th->name);
}

static void counter(struct chrome *C, struct rd_out *o, const struct rd_item *it,
                    const char *name, const char *cat)
{
	const struct rte_event *ev = it->ev;

	ev_open(C, o, "C", it->src->pid, ev->ring, it->ts);
	put_name(o, name, cat);
	rd_out_str(o, ",\"args\":{\"ring ");
	rd_out_u64(o, ev->ring);
	rd_out_str(o, "\":");
	if (ev->kind == RTE_EV_COUNTER)
		rd_out_u64(o, ev->u.counter);
	else
		rd_out_i64(o, ev->u.value);
	rd_out_str(o, "}}");
}

static void instant_args(struct rd_out *o, const struct rte_event *ev)
{
	switch (ev->kind) {
	case RTE_EV_LIFECYCLE:
		rd_out_str(o, ",\"args\":{\"data\":");
		rd_out_i64(o, ev->u.data);
		rd_out_ch(o, '}');
		break;
	case RTE_EV_USER_CUSTOM:
		rd_out_str(o, ",\"args\":{\"bytes\":");
		rd_out_json_mem(o, ev->u.custom.bytes, ev->u.custom.len);
		rd_out_ch(o, '}');
		break;
	case RTE_EV_ALLOC:
		rd_out_str(o, ",\"args\":{\"buckets\":[");
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++) {
			if (i)
				rd_out_ch(o, ',');
			rd_out_u64(o, ev->u.buckets[i]);
		}
		rd_out_str(o, "]}");
		break;
	case RTE_EV_LOST:
		rd_out_str(o, ",\"args\":{\"words\":");
		rd_out_u64(o, ev->u.lost_words);
		rd_out_ch(o, '}');
		break;
	case RTE_EV_END:
	case RTE_EV_USER_SPAN_END:
		rd_out_str(o, ",\"args\":{\"unmatched\":\"end\"}");
		break;
	default:
		break;
	}
}

static void instant(struct chrome *C, struct rd_out *o, const struct rd_item *it,
                    const char *name, const char *cat)
{
	ev_open(C, o, "i", it->src->pid, it->ev->ring, it->ts);
	rd_out_str(o, ",\"s\":\"t\"");
	put_name(o, name, cat);
	instant_args(o, it->ev);
	rd_out_ch(o, '}');
}

static void slice(struct chrome *C, struct rd_out *o, const struct rd_item *it,
                  const char *name, const char *cat)
{
	ev_open(C, o, "X", it->src->pid, it->ev->ring, it->begin_ts);
	rd_out_str(o, ",\"dur\":");
	rd_out_us3(o, it->dur);
	put_name(o, name, cat);
	rd_out_ch(o, '}');
}

static void chrome_event(struct rd_sink *s, struct rd_ctx *c,
                         const struct rd_item *it)
{
	struct chrome *C = (struct chrome *)s;
	const struct rte_event *ev = it->ev;
	struct rd_out *o = c->out;
	const char *cat = ev->kind >= RTE_EV_USER_UNIT ? "user" : "runtime";
	char buf[48], lost[64];

	if (!C->started) {
		C->started = 1;
		C->base = it->ts;
	}
	for (int k = 0; k < 2; k++)
		if (it->ab[k].n)
			unfinished(C, c, it->src->pid, ev->ring, &it->ab[k], it->ts);
	if (!it->pass)
		return;
	note_thread_name(C, c, it);
	switch (ev->kind) {
	case RTE_EV_BEGIN:
	case RTE_EV_USER_SPAN_BEGIN:
		return; /* written as X at the end */
	case RTE_EV_END:
	case RTE_EV_USER_SPAN_END:
		if (it->matched)
			slice(C, o, it, rte_event_name(ev, buf, sizeof buf), cat);
		else
			instant(C, o, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	case RTE_EV_COUNTER:
	case RTE_EV_USER_INT:
		counter(C, o, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	case RTE_EV_ALLOC:
		instant(C, o, it, "alloc", cat);
		return;
	case RTE_EV_LOST:
		snprintf(lost, sizeof lost, "lost %llu words",
		         (unsigned long long)ev->u.lost_words);
		instant(C, o, it, lost, "lost");
		return;
	case RTE_EV_USER_CUSTOM:
		if (c->crash && rd_crash_chrome_name(it, lost, sizeof lost)) {
			ev_open(C, o, "i", it->src->pid, ev->ring, it->ts);
			rd_out_str(o, ",\"s\":\"t\"");
			put_name(o, lost, "crash");
			rd_out_str(o, ",\"args\":");
			rd_crash_chrome_args(c->crash, it, o);
			rd_out_ch(o, '}');
			return;
		}
		instant(C, o, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	default:
		instant(C, o, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	}
}

static void metadata(struct chrome *C, struct rd_out *o, const char *what,
                     long pid, unsigned tid, const char *name)
{
	rd_out_str(o, C->any ? ",\n{\"ph\":\"M\",\"pid\":" : "\n{\"ph\":\"M\",\"pid\":");
	C->any = 1;
	rd_out_i64(o, pid < 0 ? 0 : pid);
	rd_out_str(o, ",\"tid\":");
	rd_out_u64(o, tid);
	rd_out_str(o, ",\"name\":\"");
	rd_out_str(o, what);
	rd_out_str(o, "\",\"args\":{\"name\":");
	rd_out_json_str(o, name);
	rd_out_str(o, "}}");
}

static void sort_index(struct chrome *C, struct rd_out *o, long pid,
                       unsigned tid)
{
	rd_out_str(o, ",\n{\"ph\":\"M\",\"pid\":");
	C->any = 1;
	rd_out_i64(o, pid < 0 ? 0 : pid);
	rd_out_str(o, ",\"tid\":");
	rd_out_u64(o, tid);
	rd_out_str(o, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
	rd_out_u64(o, tid);
	rd_out_str(o, "}}");
}

/* Metadata for the rings of source i, and its spans still open. */
static void finish_src(struct chrome *C, struct rd_ctx *c, unsigned i)
{
	struct rd_src *s = &c->procs->src[i];
	char name[200];

	for (unsigned r = 0; r < s->rings; r++) {
		struct rd_thread *t = &s->threads[r];
		struct ring_names *rn = i < C->nrn && C->rn[i] ? &C->rn[i][r] : NULL;
		struct rd_abandoned ph = { t->phases.s, t->phases.depth, 0 };
		struct rd_abandoned sp = { t->spans.s, t->spans.depth, 1 };

		if (!t->seen)
			continue;
		if (rn && t->name[0] && !strstr(rn->names, t->name)) {
			size_t len = strlen(rn->names);

			snprintf(rn->names + len, sizeof rn->names - len, "%s%s",
			         len ? ", " : "", t->name);
		}
		unfinished(C, c, s->pid, r, &ph, s->proc->last_ts);
		unfinished(C, c, s->pid, r, &sp, s->proc->last_ts);
		snprintf(name, sizeof name, "ring %u%s%s", r,
		         rn && rn->names[0] ? ": " : "", rn ? rn->names : "");
		metadata(C, c->out, "thread_name", s->pid, r, name);
		sort_index(C, c->out, s->pid, r);
	}
}

static void chrome_start(struct rd_sink *s, struct rd_ctx *c)
{
	(void)s;
	rd_out_str(c->out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"rte-read\"},\"traceEvents\":[");
}

static void chrome_finish(struct rd_sink *s, struct rd_ctx *c)
{
	struct chrome *C = (struct chrome *)s;
	struct rd_procs *P = c->procs;
	char name[64];

	for (unsigned i = 0; i < P->nsrc; i++)
		finish_src(C, c, i);
	for (unsigned i = 0; i < P->nproc; i++) {
		if (P->proc[i]->pid >= 0)
			snprintf(name, sizeof name, "pid %ld", P->proc[i]->pid);
		else
			snprintf(name, sizeof name, "pid unknown");
		metadata(C, c->out, "process_name", P->proc[i]->pid, 0, name);
	}
	rd_out_str(c->out, "\n]}\n");
}

static void chrome_destroy(struct rd_sink *s)
{
	struct chrome *C = (struct chrome *)s;

	for (unsigned i = 0; i < C->nrn; i++)
		free(C->rn[i]);
	free(C->rn);
	free(C);
}

struct rd_sink *rd_sink_chrome(void)
{
	struct chrome *C = calloc(1, sizeof *C);

	if (!C)
		return NULL;
	C->sink = (struct rd_sink){ chrome_start, chrome_event, chrome_finish, chrome_destroy, NULL };
	return &C->sink;
}
