/*
 * fmt/chrome.c - Chrome Trace Event JSON (the "JSON Array Format" wrapped in
 * an object), for Perfetto UI and chrome://tracing.
 *
 *   pid   the process id; "process_name" metadata names it "pid N: <its
 *         executables>" (ring 0's thread of each of its files, in time
 *         order: "pid 42: sh → env → true" after two execs); every process
 *         of the tree (ptree.h) is one, those without a file of their own
 *         too (chrome_flows.c: their one track, its lifetime slice)
 *   tid   the thread's kernel tid (rte.thread.tid): one track per real
 *         thread, however many threads reused its ring; one
 *         "thread_name" metadata per track: "<names> (tid N)", the names
 *         it took separated by ", ", those of successive images (exec,
 *         same tid) by " → ". Without a tid (OCaml's own files) the
 *         ring's tenancy: "ring N: <names>" for its first domain, "ring
 *         N, domain K on it" for a later one (tid N + (K - 1) * 2^22,
 *         above any pid). The few events a ring gets before its
 *         thread's tid (ring_start, fork_child, domain_spawn, the
 *         shim's rte.proc) wait for it and go on the thread's track.
 *   X     a runtime phase or user span, written at its end with its begin
 *         time and duration; spans whose end never comes (lost, thread
 *         ended, file ended) are written up to where they were given up
 *         (for the file's end: the ring's last event) with
 *         args.unfinished = true
 *         (a span that crosses another one still open on its thread,
 *         e.g. user spans A begin, B begin, A end: an async slice b/e,
 *         args.nesting = "crossed", on a track of its own)
 *   i     lifecycle, unit, custom, alloc and lost events, and ends whose
 *         begin was not seen (args.unmatched = "end")
 *         (a CPU profiler sample, rte.sample: an instant named by its
 *         leaf function, cat "sample", on the sampled thread's track,
 *         args.cpu_ns and args.stack, the function names innermost first)
 *   C     counters and user ints: a counter track per process and
 *         name, one series per ring (rte.alloc.heap, the process's
 *         heap written by any of its threads: one series, "live bytes")
 *   s/f   flow arrows (cat "process"): fork, from the parent's fork_parent
 *         to the child's fork_child; exec, from the old image's rte.exec
 *         to the new image's ring_start. These four events are drawn as
 *         1 ns slices (X) for the arrows to bind to; an arrow is written
 *         only when both its ends were. A fork_parent later than its
 *         child's fork_child (the shim stamped it after fork() returned
 *         until fork_parent was stamped before the call) is drawn at the
 *         fork_child's time, so that every arrow points forward.
 *
 * The shim's bookkeeping events (rte.thread.*, rte.module*,
 * rte.exec_failed, and each failed try of an exec: its rte.exec,
 * ring_stop and ring_start, as execvp's PATH search makes them, held
 * until the try is known to have failed) are left out unless --all; crash, backtrace,
 * rte.dropped, rte.exec and lost-word markers are always kept.
 *
 * Timestamps are microseconds (three decimals: nanosecond precision) since
 * the trace start (the earliest first event of any ring of the inputs),
 * the time base of the text output and of --top.
 *
 * This file writes the records and is the sink; chrome_tracks.c keeps the
 * tracks and their names, chrome_flows.c the arrows and the held execs,
 * chrome_recs.c the shim's sample and crash records (chrome.h: what they
 * share).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome.h"
#include "profile.h"

void chrome_ev_open(struct chrome *C, struct rd_out *o, const char *ph,
                    long pid, long tid, uint64_t ts)
{
	rd_out_str(o, C->any ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
	C->any = 1;
	rd_out_str(o, ph);
	rd_out_str(o, "\",\"pid\":");
	rd_out_i64(o, pid < 0 ? 0 : pid);
	rd_out_str(o, ",\"tid\":");
	rd_out_i64(o, tid);
	rd_out_str(o, ",\"ts\":");
	rd_out_us3(o, ts > C->base ? ts - C->base : 0);
}

/* 1 for the shim's bookkeeping events, hidden unless --all. */
static int is_bookkeeping(const struct rte_event *ev)
{
	if (ev->kind < RTE_EV_USER_UNIT || !ev->name || strncmp(ev->name, "rte.", 4))
		return 0;
	return !strncmp(ev->name, "rte.thread.", 11) ||
	       !strncmp(ev->name, "rte.module", 10) ||
	       !strcmp(ev->name, "rte.exec_failed");
}

void chrome_put_name(struct rd_out *o, const char *name, const char *cat)
{
	rd_out_str(o, ",\"name\":");
	rd_out_json_str(o, name && name[0] ? name : "(unnamed)");
	rd_out_str(o, ",\"cat\":\"");
	rd_out_str(o, cat);
	rd_out_ch(o, '"');
}

static const char *span_name(const struct rd_span_open *s, int user,
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
                       long tid, const struct rd_abandoned *ab,
                       uint64_t until)
{
	char buf[48];

	for (unsigned i = 0; i < ab->n; i++) {
		const struct rd_span_open *s = &ab->s[i];

		if (!rd_span_passes(c->filter, s, ab->user))
			continue;
		chrome_ev_open(C, c->out, "X", pid, tid, s->ts);
		rd_out_str(c->out, ",\"dur\":");
		rd_out_us3(c->out, until > s->ts ? until - s->ts : 0);
		chrome_put_name(c->out, span_name(s, ab->user, buf, sizeof buf),
		         ab->user ? "user" : "runtime");
		rd_out_str(c->out, ",\"args\":{\"unfinished\":true}}");
	}
}

static void counter(struct chrome *C, struct rd_ctx *c, const struct rd_item *it,
                    const char *name, const char *cat)
{
	struct rd_out *o = c->out;
	const struct rte_event *ev = it->ev;

	chrome_ev_open(C, o, "C", it->src->pid, chrome_tid(C, c, it), it->ts);
	chrome_put_name(o, name, cat);
	if (ev->kind == RTE_EV_USER_INT && ev->name &&
	    !strcmp(ev->name, RTE_ALLOC_EV_HEAP)) {
		/* the process's heap, whichever thread wrote the point: one
		 * series */
		rd_out_str(o, ",\"args\":{\"live bytes\":");
		rd_out_i64(o, ev->u.value);
		rd_out_str(o, "}}");
		return;
	}
	rd_out_str(o, ",\"args\":{\"ring ");
	rd_out_u64(o, ev->ring);
	rd_out_str(o, "\":");
	if (ev->kind == RTE_EV_COUNTER)
		rd_out_u64(o, ev->u.counter);
	else
		rd_out_i64(o, ev->u.value);
	rd_out_str(o, "}}");
}

void chrome_instant_args(struct rd_out *o, const struct rte_event *ev)
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

static void instant(struct chrome *C, struct rd_ctx *c, const struct rd_item *it,
                    const char *name, const char *cat)
{
	struct rd_out *o = c->out;
	chrome_ev_open(C, o, "i", it->src->pid, chrome_tid(C, c, it), it->ts);
	rd_out_str(o, ",\"s\":\"t\"");
	chrome_put_name(o, name, cat);
	chrome_instant_args(o, it->ev);
	rd_out_ch(o, '}');
}

/* An end of a flow arrow: a 1 ns slice for the arrow to bind to (a
 * fork_parent no later than its child's fork_child: chrome_fork_anchor). */
static void point(struct chrome *C, struct rd_ctx *c, const struct rd_item *it,
                  const char *name)
{
	const struct rte_event *ev = it->ev;
	uint64_t ts = it->ts;

	if (ev->kind == RTE_EV_LIFECYCLE && ev->id == RTE_LC_FORK_PARENT && ev->u.data > 0)
		ts = chrome_fork_anchor(C, (long)ev->u.data, ts);
	chrome_ev_open(C, c->out, "X", it->src->pid, chrome_tid(C, c, it), ts);
	rd_out_str(c->out, ",\"dur\":0.001");
	chrome_put_name(c->out, name, "process");
	chrome_instant_args(c->out, ev);
	rd_out_ch(c->out, '}');
	chrome_flow_note(C, c, it, ev, ts, chrome_tid(C, c, it));
}

/* 1 if a span of the thread still open began after `begin`: the span
 * that began at `begin` and ends now overlaps it without nesting. */
static int crosses_open(const struct rd_thread *th, uint64_t begin)
{
	for (unsigned i = 0; i < th->phases.depth; i++)
		if (th->phases.s[i].ts > begin)
			return 1;
	for (unsigned i = 0; i < th->spans.depth; i++)
		if (th->spans.s[i].ts > begin)
			return 1;
	return 0;
}

/* A complete span: an X slice on its thread's track, or, if it does not
 * nest with the spans still open there (user spans matched by name, e.g.
 * A begins, B begins, A ends), an async slice (b/e, its own track). */
static void slice(struct chrome *C, struct rd_ctx *c, const struct rd_item *it,
                  const char *name, const char *cat)
{
	struct rd_out *o = c->out;
	if (crosses_open(it->th, it->begin_ts)) {
		unsigned long long id = ++C->async;

		chrome_ev_open(C, o, "b", it->src->pid, chrome_tid(C, c, it), it->begin_ts);
		rd_out_str(o, ",\"id\":");
		rd_out_u64(o, id);
		chrome_put_name(o, name, cat);
		rd_out_str(o, ",\"args\":{\"nesting\":\"crossed\"}}");
		chrome_ev_open(C, o, "e", it->src->pid, chrome_tid(C, c, it), it->ts);
		rd_out_str(o, ",\"id\":");
		rd_out_u64(o, id);
		chrome_put_name(o, name, cat);
		rd_out_ch(o, '}');
		return;
	}
	chrome_ev_open(C, o, "X", it->src->pid, chrome_tid(C, c, it), it->begin_ts);
	rd_out_str(o, ",\"dur\":");
	rd_out_us3(o, it->dur);
	chrome_put_name(o, name, cat);
	rd_out_ch(o, '}');
}

/* Write one passing event. */
static void put_event(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	const char *cat = ev->kind >= RTE_EV_USER_UNIT ? "user" : "runtime";
	char buf[48], lost[64];

	chrome_track_show(C, c, it);
	/* a ring_start after a failed exec continues the same image */
	if (chrome_is_flow_point(ev) &&
	    !(ev->kind == RTE_EV_LIFECYCLE && ev->id == RTE_LC_RING_START &&
	      chrome_src(c, it) < C->nsf && C->sf[chrome_src(c, it)].has_start)) {
		point(C, c, it, rte_event_name(ev, buf, sizeof buf));
		return;
	}
	switch (ev->kind) {
	case RTE_EV_BEGIN:
	case RTE_EV_USER_SPAN_BEGIN:
		return; /* written as X at the end */
	case RTE_EV_END:
	case RTE_EV_USER_SPAN_END:
		if (it->matched)
			slice(C, c, it, rte_event_name(ev, buf, sizeof buf), cat);
		else
			instant(C, c, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	case RTE_EV_COUNTER:
	case RTE_EV_USER_INT:
		counter(C, c, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	case RTE_EV_ALLOC:
		instant(C, c, it, "alloc", cat);
		return;
	case RTE_EV_LOST:
		snprintf(lost, sizeof lost, "lost %llu words",
		         (unsigned long long)ev->u.lost_words);
		instant(C, c, it, lost, "lost");
		return;
	case RTE_EV_USER_CUSTOM:
		if (c->crash && rd_crash_is_own(ev) && chrome_crash_instant(C, c, it))
			return;
		if (chrome_sample_instant(C, c, it))
			return;
		instant(C, c, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	default:
		instant(C, c, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	}
}

/* Write the n events evs (at times ts) saved on a ring, as events of
 * the thread of it (flush_pending, chrome_flush_held). */
static void put_saved(struct chrome *C, struct rd_ctx *c, const struct rd_item *it,
                      const struct rte_event *evs, const uint64_t *ts, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct rd_item p = *it;

		p.ev = &evs[i];
		p.ts = ts[i];
		p.ab[0].n = p.ab[1].n = 0;
		put_event(C, c, &p);
	}
}

/* Write the lifecycle events of ring rn that waited for its tid, as
 * events of thread th (its tid known now, or never: its ring). */
static void flush_pending(struct chrome *C, struct rd_ctx *c,
                          const struct rd_item *it, struct ring_names *rn)
{
	put_saved(C, c, it, rn->pend, rn->pend_ts, rn->npend);
	for (unsigned i = 0; i < rn->npend; i++) {
		free(rn->pend_bytes[i]);
		rn->pend_bytes[i] = NULL;
	}
	rn->npend = 0;
}

/* Does event ev of a ring whose thread's tid is not known yet wait for
 * it? Lifecycle events, and the shim's rte.proc (its payload copied: it
 * lives in the consumer's buffer only until the next event). */
static int pend(struct ring_names *rn, const struct rte_event *ev, uint64_t ts)
{
	uint8_t *b = NULL;

	if (rn->npend >= PEND_MAX)
		return 0;
	if (ev->kind == RTE_EV_USER_CUSTOM && ev->name && !strcmp(ev->name, "rte.proc")) {
		if (!(b = malloc(ev->u.custom.len ? ev->u.custom.len : 1)))
			return 0;
		memcpy(b, ev->u.custom.bytes, ev->u.custom.len);
	} else if (ev->kind != RTE_EV_LIFECYCLE) {
		return 0;
	}
	rn->pend[rn->npend] = *ev;
	if (b)
		rn->pend[rn->npend].u.custom.bytes = b;
	rn->pend_bytes[rn->npend] = b;
	rn->pend_ts[rn->npend++] = ts;
	return 1;
}

/* Write the exec attempt held on ring rn (it did not fail). */
void chrome_flush_held(struct chrome *C, struct rd_ctx *c,
                       const struct rd_item *it, struct ring_names *rn)
{
	put_saved(C, c, it, rn->held, rn->held_ts, rn->nheld);
	rn->nheld = 0;
	free(rn->held_bytes);
	rn->held_bytes = NULL;
}

static void chrome_event(struct rd_sink *s, struct rd_ctx *c,
                         const struct rd_item *it)
{
	struct chrome *C = (struct chrome *)s;
	const struct rte_event *ev = it->ev;
	struct ring_names *rn;
	long owner;

	if (!C->started) {
		C->started = 1;
		C->base = c->filter->has_t0 && c->filter->t0 < it->ts ? c->filter->t0 : it->ts;
	}
	if (ev->kind != RTE_EV_LOST)
		chrome_note_first(C, chrome_src(c, it), it->ts);
	rn = chrome_ring(C, c, chrome_src(c, it), ev->ring);
	if (ev->kind == RTE_EV_LIFECYCLE && ev->id == RTE_LC_FORK_CHILD)
		chrome_note_fork_child(C, it->src->pid, it->ts);
	owner = rn ? chrome_ring_tid(ev->ring, rn->tenancy) : (long)ev->ring;
	if (rn && ev->kind != RTE_EV_LOST) {
		/* a domain_spawn on a ring used before: a new tenancy, on a
		 * track of its own (without tids); the events of the last one
		 * still waiting go on the last one's track */
		if (ev->kind == RTE_EV_LIFECYCLE && ev->id == RTE_LC_DOMAIN_SPAWN && rn->any) {
			if (rn->npend)
				flush_pending(C, c, it, rn);
			rn->tenancy++;
		}
		rn->any = 1;
	}
	if (ev->kind != RTE_EV_LOST)
		chrome_track_note(C, c, it); /* every name the thread took */
	for (int k = 0; k < 2; k++)
		if (it->ab[k].n) /* the thread that began them: the ring's last */
			unfinished(C, c, it->src->pid,
			           it->th->tid >= 0 ? it->th->tid
			           : rn && rn->last_tid >= 0 ? rn->last_tid : owner,
			           &it->ab[k], it->ts);
	if (it->pass) {
		rd_prof_event(C->prof, c->procs, it); /* modules, for samples */
		chrome_note_thread_name(C, c, it);
		if (ev->kind == RTE_EV_LIFECYCLE && ev->id == RTE_LC_DOMAIN_SPAWN && rn)
			rn->last_tid = -1; /* a new thread: its tid comes next */
	}
	if (C->nholding)
		chrome_flush_other_holds(C, c, it);
	if (chrome_hold_exec(C, c, it, rn))
		return;
	/* Lifecycle events and rte.proc before the ring's thread's tid
	 * wait for it. */
	if (it->pass && rn && it->th->tid < 0 && pend(rn, ev, it->ts))
		return;
	if (rn && rn->npend && (it->th->tid >= 0 || it->pass))
		flush_pending(C, c, it, rn);
	if (!it->pass || (is_bookkeeping(ev) && !c->filter->all))
		return;
	put_event(C, c, it);
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
		long tid;

		if (!t->seen)
			continue;
		if (rn && t->name[0] && !strstr(rn->names, t->name)) {
			size_t len = strlen(rn->names);

			snprintf(rn->names + len, sizeof rn->names - len, "%s%s",
			         len ? ", " : "", t->name);
		}
		if (rn && (rn->npend || rn->nheld)) {
			struct rte_event ev;
			struct rd_item it;

			memset(&it, 0, sizeof it);
			memset(&ev, 0, sizeof ev);
			ev.ring = r;
			it.ev = &ev;
			it.src = s;
			it.proc = s->proc;
			it.th = t;
			chrome_flush_held(C, c, &it, rn);
			flush_pending(C, c, &it, rn);
		}
		tid = t->tid >= 0 ? t->tid : chrome_ring_tid(r, rn ? rn->tenancy : 0);
		unfinished(C, c, s->pid, tid, &ph, t->last_ts);
		unfinished(C, c, s->pid, tid, &sp, t->last_ts);
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

	for (unsigned i = 0; i < P->nsrc; i++)
		finish_src(C, c, i);
	chrome_finish_flows(C, c);
	chrome_finish_ptree(C, c);
	for (unsigned i = 0; i < P->nproc; i++)
		chrome_finish_proc(C, c, P->proc[i]);
	rd_out_str(c->out, "\n]}\n");
}

static void chrome_destroy(struct rd_sink *s)
{
	struct chrome *C = (struct chrome *)s;

	for (unsigned i = 0; i < C->nrn; i++) {
		for (unsigned r = 0; C->rn[i] && r < C->rn[i][0].nrings; r++) {
			free(C->rn[i][r].held_bytes);
			for (unsigned k = 0; k < C->rn[i][r].npend; k++)
				free(C->rn[i][r].pend_bytes[k]);
		}
		free(C->rn[i]);
	}
	free(C->rn);
	free(C->first);
	free(C->tr);
	free(C->sf);
	free(C->forks);
	free(C->fc);
	rd_prof_free(C->prof);
	free(C);
}

struct rd_sink *rd_sink_chrome(void)
{
	struct chrome *C = calloc(1, sizeof *C);

	if (!C)
		return NULL;
	C->sink = (struct rd_sink){ chrome_start, chrome_event, chrome_finish, chrome_destroy, NULL };
	C->prof = rd_prof_new(); /* NULL: samples drawn as plain events */
	return &C->sink;
}
