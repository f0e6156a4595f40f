/*
 * fmt_chrome.c - Chrome Trace Event JSON (the "JSON Array Format" wrapped in
 * an object), for Perfetto UI and chrome://tracing.
 *
 *   pid   the process id; "process_name" metadata names it "pid N: <its
 *         executables>" (ring 0's thread of each of its files, in time
 *         order: "pid 42: sh → env → true" after two execs)
 *   tid   the ring; one "thread_name" metadata per pid and ring gives
 *         "ring N: <thread names>": the threads that reused the ring in
 *         one file are separated by ", ", the files of successive
 *         images (exec) by " → "
 *   X     a runtime phase or user span, written at its end with its begin
 *         time and duration; spans whose end never comes (lost, thread
 *         ended, file ended) are written up to where they were given up
 *         (for the file's end: the ring's last event) with
 *         args.unfinished = true
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
	uint64_t *first;        /* per source: its first event's time, + 1 */
	unsigned nfirst;
};

#define ARROW " \xe2\x86\x92 " /* " → " between the files of one pid */

/* Note the time of an event of source src (for ordering the files of a
 * process). */
static void note_first(struct chrome *C, unsigned src, uint64_t ts)
{
	if (src >= C->nfirst) {
		unsigned n = src + 8;
		uint64_t *p = realloc(C->first, n * sizeof *p);

		if (!p)
			return;
		memset(p + C->nfirst, 0, (n - C->nfirst) * sizeof *p);
		C->first = p;
		C->nfirst = n;
	}
	if (!C->first[src] || ts + 1 < C->first[src])
		C->first[src] = ts + 1;
}

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

static void unfinished(struct chrome *C, struct rd_ctx *c, long pid,
                       unsigned ring, const struct rd_abandoned *ab,
                       uint64_t until)
{
	char buf[48];

	for (unsigned i = 0; i < ab->n; i++) {
		const struct rte_span_open *s = &ab->s[i];

		if (!rd_span_passes(c->filter, s, ab->user))
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
	if (ev->kind != RTE_EV_LOST)
		note_first(C, (unsigned)(it->src - c->procs->src), it->ts);
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
	rd_out_str(o, "\",\"args\":{\"name\":\"");
	/* the bytes escaped one by one (rd_out_json_chars), the arrows
	 * between the files of a process as the character they are */
	for (const char *a; (a = strstr(name, ARROW)); name = a + strlen(ARROW)) {
		rd_out_json_chars(o, name, (size_t)(a - name));
		rd_out_str(o, " \\u2192 ");
	}
	rd_out_json_chars(o, name, strlen(name));
	rd_out_str(o, "\"}}");
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

/* The spans of source i still open at its end, drawn to the last event
 * of their ring; its rings' names completed with the current ones. */
static void finish_src(struct chrome *C, struct rd_ctx *c, unsigned i)
{
	struct rd_src *s = &c->procs->src[i];

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
		unfinished(C, c, s->pid, r, &ph, t->last_ts);
		unfinished(C, c, s->pid, r, &sp, t->last_ts);
	}
}

/* The sources of process pr in the order of their first event (execs
 * follow each other); n set to their number. Caller frees. */
static unsigned *proc_files(struct chrome *C, struct rd_procs *P,
                            const struct rd_proc *pr, unsigned *n)
{
	unsigned *v = malloc((P->nsrc ? P->nsrc : 1) * sizeof *v);

	*n = 0;
	if (!v)
		return NULL;
	for (unsigned i = 0; i < P->nsrc; i++) {
		uint64_t fi = i < C->nfirst ? C->first[i] : 0, fj;
		unsigned k = *n;

		if (P->src[i].proc != pr)
			continue;
		/* insertion sort: a process has a few files */
		while (k > 0 && (fj = v[k - 1] < C->nfirst ? C->first[v[k - 1]] : 0) > fi) {
			v[k] = v[k - 1];
			k--;
		}
		v[k] = i;
		(*n)++;
	}
	return v;
}

/* Append part to buf (of cap bytes) after sep, unless it repeats the part
 * appended last (prev: where that one starts). */
static void join(char *buf, size_t cap, size_t *prev, const char *sep,
                 const char *part)
{
	size_t len = strlen(buf);

	if (!part[0] || (len && !strcmp(buf + *prev, part)))
		return;
	snprintf(buf + len, cap - len, "%s", len ? sep : "");
	*prev = strlen(buf);
	snprintf(buf + *prev, cap - *prev, "%s", part);
}

/* One thread_name per ring of process pr (all its files merged), and its
 * process_name. */
static void finish_proc(struct chrome *C, struct rd_ctx *c, struct rd_proc *pr)
{
	struct rd_procs *P = c->procs;
	unsigned nf, rings = 0, *f = proc_files(C, P, pr, &nf);
	char names[1024], label[1100], exe[RD_THREAD_NAME_MAX];
	size_t prev = 0;

	if (!f)
		return;
	for (unsigned k = 0; k < nf; k++)
		if (P->src[f[k]].rings > rings)
			rings = P->src[f[k]].rings;
	for (unsigned r = 0; r < rings; r++) {
		int seen = 0;

		names[0] = '\0';
		for (unsigned k = 0; k < nf; k++) {
			unsigned i = f[k];
			struct rd_src *s = &P->src[i];

			if (r >= s->rings || !s->threads[r].seen)
				continue;
			seen = 1;
			if (i < C->nrn && C->rn[i])
				join(names, sizeof names, &prev, ARROW, C->rn[i][r].names);
		}
		if (!seen)
			continue;
		snprintf(label, sizeof label, "ring %u%s%s", r, names[0] ? ": " : "", names);
		metadata(C, c->out, "thread_name", pr->pid, r, label);
		sort_index(C, c->out, pr->pid, r);
	}
	/* the process: after ring 0's first thread name of each file */
	names[0] = '\0';
	for (unsigned k = 0; k < nf; k++) {
		unsigned i = f[k];
		const char *n = i < C->nrn && C->rn[i] ? C->rn[i][0].names : "";
		size_t l = strcspn(n, ",");

		if (l >= sizeof exe)
			l = sizeof exe - 1;
		memcpy(exe, n, l);
		exe[l] = '\0';
		join(names, sizeof names, &prev, ARROW, exe);
	}
	if (pr->pid >= 0)
		snprintf(label, sizeof label, "pid %ld%s%s", pr->pid,
		         names[0] ? ": " : "", names);
	else
		snprintf(label, sizeof label, "pid unknown%s%s", names[0] ? ": " : "", names);
	metadata(C, c->out, "process_name", pr->pid, 0, label);
	free(f);
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

	for (unsigned i = 0; i < P->nsrc; i++)
		finish_src(C, c, i);
	for (unsigned i = 0; i < P->nproc; i++)
		finish_proc(C, c, P->proc[i]);
	rd_out_str(c->out, "\n]}\n");
}

static void chrome_destroy(struct rd_sink *s)
{
	struct chrome *C = (struct chrome *)s;

	for (unsigned i = 0; i < C->nrn; i++)
		free(C->rn[i]);
	free(C->rn);
	free(C->first);
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
