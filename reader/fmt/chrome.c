/*
 * fmt/chrome.c - Chrome Trace Event JSON (the "JSON Array Format" wrapped in
 * an object), for Perfetto UI and chrome://tracing.
 *
 *   pid   the process id; "process_name" metadata names it "pid N: <its
 *         executables>" (ring 0's thread of each of its files, in time
 *         order: "pid 42: sh → env → true" after two execs)
 *   tid   the thread's kernel tid (rte.thread.tid): one track per real
 *         thread, however many threads reused its ring; one
 *         "thread_name" metadata per track: "<names> (tid N)", the names
 *         it took separated by ", ", those of successive images (exec,
 *         same tid) by " → ". Without a tid (OCaml's own files) the
 *         ring: "ring N: <names>". The few lifecycle events a ring gets
 *         before its thread's tid (ring_start, fork_child, domain_spawn)
 *         wait for it and go on the thread's track.
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
 *         name, one series per ring
 *   s/f   flow arrows (cat "process"): fork, from the parent's fork_parent
 *         to the child's fork_child; exec, from the old image's rte.exec
 *         to the new image's ring_start. These four events are drawn as
 *         1 ns slices (X) for the arrows to bind to; an arrow is written
 *         only when both its ends were.
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
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile.h"
#include "sinks.h"

#define PEND_MAX 4

struct ring_names {
	unsigned gen;     /* name_gen last seen */
	unsigned nrings;  /* of the source (the same in each) */
	char names[160];  /* distinct names seen on the ring, ", "-separated */
	unsigned tgen;    /* name_gen last given to the track */
	long ttid;        /* the tid it was given for, -1 none */
	int tshown;       /* that track has an event written */
	long last_tid;    /* tid of the ring's latest thread, -1 none */
	/* lifecycle events waiting for the ring's thread's tid */
	struct rte_event pend[PEND_MAX];
	uint64_t pend_ts[PEND_MAX];
	unsigned npend;
	/* an exec held until it is known to have failed (execvp's PATH
	 * search): its rte.exec (payload copied) and the ring_stop and
	 * ring_start that follow; dropped at rte.exec_failed */
	struct rte_event held[3];
	uint64_t held_ts[3];
	uint8_t *held_bytes;
	unsigned nheld;
};

/* One track: a thread (its tid) or, without one, a ring. */
struct track {
	long pid, id;
	int is_ring, used;
	int shown;              /* an event was written on it */
	unsigned order;         /* of its first written event */
	unsigned last_src;
	char last[RD_THREAD_NAME_MAX];
	char names[256];
};

/* What the flow arrows need of each source. */
struct src_flow {
	int has_start, has_fc, has_exec;
	uint64_t start_ts, fc_ts, exec_ts;  /* ring_start, fork_child, rte.exec */
	long start_tid, fc_tid, exec_tid;   /* on which track */
};

struct fork_pt {
	long pid, tid, child;
	uint64_t ts;
};

struct chrome {
	struct rd_sink sink;
	int started, any;
	uint64_t base;
	struct ring_names **rn; /* per source, per ring; lazy */
	unsigned nrn;
	uint64_t *first;        /* per source: its first event's time, + 1 */
	unsigned nfirst;
	struct track *tr;       /* open addressing on (pid, id, is_ring) */
	size_t trcap, ntr;
	unsigned nshown;        /* tracks with an event written */
	struct src_flow *sf;    /* per source, nsf of them */
	unsigned nsf;
	struct fork_pt *forks;
	size_t nforks, forkcap;
	unsigned long long async; /* ids of async slices given */
	struct { unsigned src, ring; } holding[16]; /* rings with nheld */
	unsigned nholding;
	struct rd_prof *prof;   /* decodes rte.sample; NULL: drawn raw */
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

/* ---- tracks --------------------------------------------------------------- */

static size_t track_hash(long pid, long id, int is_ring)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull ^
	             ((uint64_t)id * 2 + (unsigned)is_ring) * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ (h >> 29));
}

static int track_grow(struct chrome *C)
{
	size_t cap = C->trcap ? C->trcap * 2 : 64;
	struct track *t = calloc(cap, sizeof *t);

	if (!t)
		return -1;
	for (size_t i = 0; i < C->trcap; i++) {
		struct track *o = &C->tr[i];
		size_t j;

		if (!o->used)
			continue;
		j = track_hash(o->pid, o->id, o->is_ring) & (cap - 1);
		while (t[j].used)
			j = (j + 1) & (cap - 1);
		t[j] = *o;
	}
	free(C->tr);
	C->tr = t;
	C->trcap = cap;
	return 0;
}

/* The track (pid, id), made if new; NULL if out of memory. */
static struct track *track_get(struct chrome *C, long pid, long id, int is_ring)
{
	size_t j;

	if ((C->ntr + 1) * 2 > C->trcap && track_grow(C) < 0)
		return NULL;
	j = track_hash(pid, id, is_ring) & (C->trcap - 1);
	while (C->tr[j].used) {
		struct track *t = &C->tr[j];

		if (t->pid == pid && t->id == id && t->is_ring == is_ring)
			return t;
		j = (j + 1) & (C->trcap - 1);
	}
	C->tr[j].used = 1;
	C->tr[j].pid = pid;
	C->tr[j].id = id;
	C->tr[j].is_ring = is_ring;
	C->tr[j].order = (unsigned)C->ntr++;
	return &C->tr[j];
}

/* The ring state of (src, ring), made if new; NULL if out of memory. */
static struct ring_names *ring_state(struct chrome *C, struct rd_ctx *c,
                                     unsigned src, unsigned ring)
{
	struct rd_src *s = &c->procs->src[src];

	if (src >= C->nrn) {
		unsigned n = src + 8;
		struct ring_names **p = realloc(C->rn, n * sizeof *p);

		if (!p)
			return NULL;
		memset(p + C->nrn, 0, (n - C->nrn) * sizeof *p);
		C->rn = p;
		C->nrn = n;
	}
	if (!C->rn[src]) {
		if (!(C->rn[src] = calloc(s->rings, sizeof **C->rn)))
			return NULL;
		for (unsigned r = 0; r < s->rings; r++) {
			C->rn[src][r].ttid = C->rn[src][r].last_tid = -1;
			C->rn[src][r].nrings = s->rings;
		}
	}
	return ring < s->rings ? &C->rn[src][ring] : NULL;
}

static unsigned src_of(struct rd_ctx *c, const struct rd_item *it)
{
	return (unsigned)(it->src - c->procs->src);
}

/* The chrome tid of an event: its thread's tid, else its ring. */
static long tid_of(const struct rd_item *it)
{
	return it->th->tid >= 0 ? it->th->tid : (long)it->ev->ring;
}

/* Make sure the event's track exists and carries its thread's name:
 * called for every event, written or not (a name taken between written
 * events, set by a hidden rte.thread.name, is one the thread took). */
static void track_note(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	unsigned src = src_of(c, it);
	struct ring_names *rn = ring_state(C, c, src, it->ev->ring);
	const struct rd_thread *th = it->th;
	struct track *t;
	size_t len;

	if (!rn)
		return;
	if (th->tid >= 0)
		rn->last_tid = th->tid;
	if (rn->tgen == th->name_gen + 1 && rn->ttid == th->tid)
		return;
	rn->tgen = th->name_gen + 1;
	rn->ttid = th->tid;
	t = track_get(C, it->src->pid, tid_of(it), th->tid < 0);
	rn->tshown = t && t->shown;
	if (!t || !th->name[0] || !strcmp(t->last, th->name))
		return;
	len = strlen(t->names);
	snprintf(t->names + len, sizeof t->names - len, "%s%s",
	         !len ? "" : t->last_src == src ? ", " : ARROW, th->name);
	snprintf(t->last, sizeof t->last, "%s", th->name);
	t->last_src = src;
}

/* The event's track gets a thread_name record: an event is written on it. */
static void track_show(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	struct ring_names *rn = ring_state(C, c, src_of(c, it), it->ev->ring);
	struct track *t;

	track_note(C, c, it);
	if (!rn || rn->tshown)
		return;
	t = track_get(C, it->src->pid, tid_of(it), it->th->tid < 0);
	if (t && !t->shown) {
		t->shown = 1;
		t->order = C->nshown++;
	}
	rn->tshown = t != NULL;
}

/* ---- flows ---------------------------------------------------------------- */

static struct src_flow *flow_of(struct chrome *C, unsigned src)
{
	if (src >= C->nsf) {
		unsigned n = src + 8;
		struct src_flow *p = realloc(C->sf, n * sizeof *p);

		if (!p)
			return NULL;
		memset(p + C->nsf, 0, (n - C->nsf) * sizeof *p);
		C->sf = p;
		C->nsf = n;
	}
	return &C->sf[src];
}

/* Note an end of a flow arrow: ring_start, fork_parent, fork_child,
 * rte.exec (drawn as 1 ns slices on track tid). */
static void flow_note(struct chrome *C, struct rd_ctx *c,
                      const struct rd_item *it, const struct rte_event *ev,
                      uint64_t ts, long tid)
{
	struct src_flow *f = flow_of(C, src_of(c, it));

	if (!f)
		return;
	if (ev->kind == RTE_EV_USER_CUSTOM) {
		f->has_exec = 1; /* the last one: a failed exec is followed */
		f->exec_ts = ts;
		f->exec_tid = tid;
	} else if (ev->id == RTE_LC_RING_START && !f->has_start) {
		f->has_start = 1;
		f->start_ts = ts;
		f->start_tid = tid;
	} else if (ev->id == RTE_LC_FORK_CHILD && !f->has_fc) {
		f->has_fc = 1;
		f->fc_ts = ts;
		f->fc_tid = tid;
	} else if (ev->id == RTE_LC_FORK_PARENT && ev->u.data > 0) {
		if (C->nforks == C->forkcap) {
			size_t n = C->forkcap ? C->forkcap * 2 : 16;
			struct fork_pt *p = realloc(C->forks, n * sizeof *p);

			if (!p)
				return;
			C->forks = p;
			C->forkcap = n;
		}
		C->forks[C->nforks++] = (struct fork_pt){ it->src->pid, tid,
		                                          (long)ev->u.data, ts };
	}
}

static int is_flow_point(const struct rte_event *ev)
{
	if (ev->kind == RTE_EV_LIFECYCLE)
		return ev->id == RTE_LC_RING_START || ev->id == RTE_LC_FORK_PARENT ||
		       ev->id == RTE_LC_FORK_CHILD;
	return ev->kind == RTE_EV_USER_CUSTOM && ev->name &&
	       !strcmp(ev->name, "rte.exec");
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

static void put_name(struct rd_out *o, const char *name, const char *cat)
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
		ev_open(C, c->out, "X", pid, tid, s->ts);
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
	struct ring_names *rn = ring_state(C, c, src_of(c, it), it->ev->ring);
	size_t len;

	if (!rn)
		return;
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

	ev_open(C, o, "C", it->src->pid, tid_of(it), it->ts);
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
	ev_open(C, o, "i", it->src->pid, tid_of(it), it->ts);
	rd_out_str(o, ",\"s\":\"t\"");
	put_name(o, name, cat);
	instant_args(o, it->ev);
	rd_out_ch(o, '}');
}

/* An end of a flow arrow: a 1 ns slice for the arrow to bind to. */
static void point(struct chrome *C, struct rd_ctx *c, const struct rd_item *it,
                  const char *name)
{
	ev_open(C, c->out, "X", it->src->pid, tid_of(it), it->ts);
	rd_out_str(c->out, ",\"dur\":0.001");
	put_name(c->out, name, "process");
	instant_args(c->out, it->ev);
	rd_out_ch(c->out, '}');
	flow_note(C, c, it, it->ev, it->ts, tid_of(it));
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
static void slice(struct chrome *C, struct rd_out *o, const struct rd_item *it,
                  const char *name, const char *cat)
{
	if (crosses_open(it->th, it->begin_ts)) {
		unsigned long long id = ++C->async;

		ev_open(C, o, "b", it->src->pid, tid_of(it), it->begin_ts);
		rd_out_str(o, ",\"id\":");
		rd_out_u64(o, id);
		put_name(o, name, cat);
		rd_out_str(o, ",\"args\":{\"nesting\":\"crossed\"}}");
		ev_open(C, o, "e", it->src->pid, tid_of(it), it->ts);
		rd_out_str(o, ",\"id\":");
		rd_out_u64(o, id);
		put_name(o, name, cat);
		rd_out_ch(o, '}');
		return;
	}
	ev_open(C, o, "X", it->src->pid, tid_of(it), it->begin_ts);
	rd_out_str(o, ",\"dur\":");
	rd_out_us3(o, it->dur);
	put_name(o, name, cat);
	rd_out_ch(o, '}');
}

/* If it is a well-formed rte.sample: an instant on its thread's track,
 * named by its leaf function, and 1; else 0. */
static int sample_instant(struct chrome *C, struct rd_ctx *c,
                          const struct rd_item *it)
{
	struct rd_prof_stack st;
	struct rd_out *o = c->out;

	if (!rd_prof_sample(C->prof, c->procs, it, &st))
		return 0;
	ev_open(C, o, "i", it->src->pid, tid_of(it), it->ts);
	rd_out_str(o, ",\"s\":\"t\"");
	put_name(o, st.n ? st.func[0] : "rte.sample", "sample");
	rd_out_str(o, ",\"args\":{\"cpu_ns\":");
	rd_out_u64(o, st.cpu_ns);
	if (st.truncated)
		rd_out_str(o, ",\"truncated\":true");
	rd_out_str(o, ",\"stack\":[");
	for (unsigned i = 0; i < st.n; i++) {
		if (i)
			rd_out_ch(o, ',');
		rd_out_json_str(o, st.func[i]);
	}
	rd_out_str(o, "]}}");
	return 1;
}

/* An rte.crash or rte.backtrace event (crashrep.h) as a thread-scoped
 * instant event of category "crash", named "crash SIGSEGV", "signal
 * SIGUSR1", "backtrace fork", "backtrace thread" (or "... (malformed)"),
 * its args the record's fields and its symbolised stack; returns 0 (and
 * writes nothing) for any other event. */
static int crash_instant(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	struct rd_out *o = c->out;
	struct rd_crash_event e;
	char name[64], sb[32];

	rd_crash_decode(c->crash, it, 1, &e);
	if (e.kind == RD_CRASH_CRASH && e.malformed)
		snprintf(name, sizeof name, "crash (malformed)");
	else if (e.kind == RD_CRASH_CRASH)
		snprintf(name, sizeof name, "%s %s",
		         e.crash.flags & RTE_CRASH_FATAL ? "crash" : "signal",
		         rd_crash_sig_name(e.crash.signo, sb, sizeof(sb)));
	else if (e.kind == RD_CRASH_BT)
		snprintf(name, sizeof name, "backtrace %s",
		         e.malformed                ? "(malformed)"
		         : e.bt.kind == RTE_BT_FORK ? "fork"
		                                    : "thread");
	else {
		rd_crash_event_fini(&e);
		return 0;
	}
	ev_open(C, o, "i", it->src->pid, tid_of(it), it->ts);
	rd_out_str(o, ",\"s\":\"t\"");
	put_name(o, name, "crash");
	rd_out_str(o, ",\"args\":{");
	if (e.malformed) {
		rd_out_str(o, "\"malformed\":true}");
	} else {
		if (e.kind == RD_CRASH_CRASH)
			rd_crash_json_fields(o, &e.crash);
		else
			rd_outf(o, "\"kind\":\"%s\",\"data\":%" PRId64 ",\"tid\":%d",
			        e.bt.kind == RTE_BT_FORK ? "fork" : "thread", e.bt.data,
			        e.bt.tid);
		rd_out_str(o, ",\"stack\":");
		rd_crash_json_frames(o, e.frames, e.nframes);
		rd_out_ch(o, '}');
	}
	rd_out_ch(o, '}');
	rd_crash_event_fini(&e);
	return 1;
}

/* Write one passing event. */
static void put_event(struct chrome *C, struct rd_ctx *c, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	struct rd_out *o = c->out;
	const char *cat = ev->kind >= RTE_EV_USER_UNIT ? "user" : "runtime";
	char buf[48], lost[64];

	track_show(C, c, it);
	/* a ring_start after a failed exec continues the same image */
	if (is_flow_point(ev) &&
	    !(ev->kind == RTE_EV_LIFECYCLE && ev->id == RTE_LC_RING_START &&
	      src_of(c, it) < C->nsf && C->sf[src_of(c, it)].has_start)) {
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
		if (c->crash && rd_crash_is_own(ev) && crash_instant(C, c, it))
			return;
		if (sample_instant(C, c, it))
			return;
		instant(C, o, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	default:
		instant(C, o, it, rte_event_name(ev, buf, sizeof buf), cat);
		return;
	}
}

/* Write the n events evs (at times ts) saved on a ring, as events of
 * the thread of it (flush_pending, flush_held). */
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
	rn->npend = 0;
}

/* Write the exec attempt held on ring rn (it did not fail). */
static void flush_held(struct chrome *C, struct rd_ctx *c,
                       const struct rd_item *it, struct ring_names *rn)
{
	put_saved(C, c, it, rn->held, rn->held_ts, rn->nheld);
	rn->nheld = 0;
	free(rn->held_bytes);
	rn->held_bytes = NULL;
}

static void unhold(struct chrome *C, unsigned src, unsigned ring)
{
	for (unsigned i = 0; i < C->nholding; i++)
		if (C->holding[i].src == src && C->holding[i].ring == ring) {
			C->holding[i] = C->holding[--C->nholding];
			return;
		}
}

/* An event of another file of a process holding an exec: the exec
 * succeeded (this is the next image), write it first. */
static void flush_other_holds(struct chrome *C, struct rd_ctx *c,
                              const struct rd_item *it)
{
	unsigned src = src_of(c, it);

	for (unsigned i = 0; i < C->nholding; i++) {
		unsigned hs = C->holding[i].src, hr = C->holding[i].ring;
		struct rd_src *s = &c->procs->src[hs];
		struct rd_item p;

		if (hs == src || s->proc != it->proc)
			continue;
		p = *it;
		p.src = s;
		p.th = &s->threads[hr];
		flush_held(C, c, &p, &C->rn[hs][hr]);
		C->holding[i--] = C->holding[--C->nholding];
	}
}

/* Without --all, an exec that fails (rte.exec, ring_stop, ring_start,
 * rte.exec_failed: one try of execvp's PATH search) is bookkeeping too.
 * Returns 1 if the event was taken (held or dropped). */
static int hold_exec(struct chrome *C, struct rd_ctx *c,
                     const struct rd_item *it, struct ring_names *rn)
{
	const struct rte_event *ev = it->ev;
	int is_exec = ev->kind == RTE_EV_USER_CUSTOM && ev->name &&
	              !strcmp(ev->name, "rte.exec");

	if (c->filter->all || !rn || !it->pass)
		return 0;
	if (rn->nheld && ev->kind == RTE_EV_USER_INT && ev->name &&
	    !strcmp(ev->name, "rte.exec_failed")) {
		rn->nheld = 0; /* the try failed: nothing of it is shown */
		free(rn->held_bytes);
		rn->held_bytes = NULL;
		unhold(C, src_of(c, it), ev->ring);
		return 1;
	}
	if (rn->nheld && !is_exec && rn->nheld < 3 && ev->kind == RTE_EV_LIFECYCLE &&
	    (ev->id == RTE_LC_RING_STOP || ev->id == RTE_LC_RING_START)) {
		rn->held[rn->nheld] = *ev;
		rn->held_ts[rn->nheld++] = it->ts;
		return 1;
	}
	if (rn->nheld) {
		flush_held(C, c, it, rn);
		unhold(C, src_of(c, it), ev->ring);
	}
	if (!is_exec || C->nholding == 16 ||
	    !(rn->held_bytes = malloc(ev->u.custom.len ? ev->u.custom.len : 1)))
		return 0;
	C->holding[C->nholding].src = src_of(c, it);
	C->holding[C->nholding++].ring = ev->ring;
	memcpy(rn->held_bytes, ev->u.custom.bytes, ev->u.custom.len);
	rn->held[0] = *ev;
	rn->held[0].u.custom.bytes = rn->held_bytes;
	rn->held_ts[0] = it->ts;
	rn->nheld = 1;
	return 1;
}

static void chrome_event(struct rd_sink *s, struct rd_ctx *c,
                         const struct rd_item *it)
{
	struct chrome *C = (struct chrome *)s;
	const struct rte_event *ev = it->ev;
	struct ring_names *rn;

	if (!C->started) {
		C->started = 1;
		C->base = c->filter->has_t0 && c->filter->t0 < it->ts ? c->filter->t0 : it->ts;
	}
	if (ev->kind != RTE_EV_LOST)
		note_first(C, src_of(c, it), it->ts);
	rn = ring_state(C, c, src_of(c, it), ev->ring);
	if (ev->kind != RTE_EV_LOST)
		track_note(C, c, it); /* every name the thread took */
	for (int k = 0; k < 2; k++)
		if (it->ab[k].n) /* the thread that began them: the ring's last */
			unfinished(C, c, it->src->pid,
			           it->th->tid >= 0 ? it->th->tid
			           : rn && rn->last_tid >= 0 ? rn->last_tid : (long)ev->ring,
			           &it->ab[k], it->ts);
	if (it->pass) {
		rd_prof_event(C->prof, c->procs, it); /* modules, for samples */
		note_thread_name(C, c, it);
		if (ev->kind == RTE_EV_LIFECYCLE && ev->id == RTE_LC_DOMAIN_SPAWN && rn)
			rn->last_tid = -1; /* a new thread: its tid comes next */
	}
	if (C->nholding)
		flush_other_holds(C, c, it);
	if (hold_exec(C, c, it, rn))
		return;
	/* Lifecycle events before the ring's thread's tid wait for it. */
	if (it->pass && rn && it->th->tid < 0 && ev->kind == RTE_EV_LIFECYCLE &&
	    rn->npend < PEND_MAX) {
		rn->pend[rn->npend] = *ev;
		rn->pend_ts[rn->npend++] = it->ts;
		return;
	}
	if (rn && rn->npend && (it->th->tid >= 0 || it->pass))
		flush_pending(C, c, it, rn);
	if (!it->pass || (is_bookkeeping(ev) && !c->filter->all))
		return;
	put_event(C, c, it);
}

static void metadata(struct chrome *C, struct rd_out *o, const char *what,
                     long pid, long tid, const char *name)
{
	rd_out_str(o, C->any ? ",\n{\"ph\":\"M\",\"pid\":" : "\n{\"ph\":\"M\",\"pid\":");
	C->any = 1;
	rd_out_i64(o, pid < 0 ? 0 : pid);
	rd_out_str(o, ",\"tid\":");
	rd_out_i64(o, tid);
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
                       long tid, unsigned order)
{
	rd_out_str(o, ",\n{\"ph\":\"M\",\"pid\":");
	C->any = 1;
	rd_out_i64(o, pid < 0 ? 0 : pid);
	rd_out_str(o, ",\"tid\":");
	rd_out_i64(o, tid);
	rd_out_str(o, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
	rd_out_u64(o, order);
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
			flush_held(C, c, &it, rn);
			flush_pending(C, c, &it, rn);
		}
		unfinished(C, c, s->pid, t->tid >= 0 ? t->tid : (long)r, &ph, t->last_ts);
		unfinished(C, c, s->pid, t->tid >= 0 ? t->tid : (long)r, &sp, t->last_ts);
	}
}

static void flow(struct chrome *C, struct rd_out *o, const char *name,
                 unsigned long long id, long pid, long tid, uint64_t ts,
                 long pid2, long tid2, uint64_t ts2)
{
	ev_open(C, o, "s", pid, tid, ts);
	rd_out_str(o, ",\"id\":");
	rd_out_u64(o, id);
	put_name(o, name, "process");
	rd_out_ch(o, '}');
	ev_open(C, o, "f", pid2, tid2, ts2);
	rd_out_str(o, ",\"bp\":\"e\",\"id\":");
	rd_out_u64(o, id);
	put_name(o, name, "process");
	rd_out_ch(o, '}');
}

static int by_pid(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The arrows whose two ends were written: fork_parent to the child's
 * fork_child; an image's rte.exec to the next image's ring_start. */
static void finish_flows(struct chrome *C, struct rd_ctx *c)
{
	struct rd_procs *P = c->procs;
	unsigned long long id = 1;

	struct child { long pid; unsigned src; } *ch = NULL;
	unsigned nch = 0;

	/* the files that begin with fork_child, by pid: one lookup a fork */
	if (C->nforks && (ch = malloc((C->nsf ? C->nsf : 1) * sizeof *ch))) {
		for (unsigned i = 0; i < P->nsrc && i < C->nsf; i++)
			if (C->sf[i].has_fc)
				ch[nch++] = (struct child){ P->src[i].pid, i };
		qsort(ch, nch, sizeof *ch, by_pid);
	}
	for (size_t k = 0; ch && k < C->nforks; k++) {
		const struct fork_pt *fp = &C->forks[k];
		struct child key = { fp->child, 0 };
		const struct child *hit = bsearch(&key, ch, nch, sizeof *ch, by_pid);

		if (hit) {
			const struct src_flow *f = &C->sf[hit->src];

			flow(C, c->out, "fork", id++, fp->pid, fp->tid, fp->ts,
			     fp->child, f->fc_tid, f->fc_ts);
		}
	}
	free(ch);
	for (unsigned i = 0; i < P->nsrc && i < C->nsf; i++) {
		const struct src_flow *a = &C->sf[i];
		const struct src_flow *b = NULL;
		uint64_t at = i < C->nfirst ? C->first[i] : 0, bt = 0;

		if (!a->has_exec)
			continue;
		/* the next image: the file of the same pid that starts next */
		for (unsigned j = 0; j < P->nsrc && j < C->nsf; j++) {
			uint64_t jt = j < C->nfirst ? C->first[j] : 0;

			if (j == i || P->src[j].proc != P->src[i].proc ||
			    !C->sf[j].has_start || jt <= at || (b && jt >= bt))
				continue;
			b = &C->sf[j];
			bt = jt;
		}
		if (b)
			flow(C, c->out, "exec", id++, P->src[i].pid, a->exec_tid,
			     a->exec_ts, P->src[i].pid, b->start_tid, b->start_ts);
	}
}

/* One thread_name and sort index for each track of process pid. */
static void finish_tracks(struct chrome *C, struct rd_ctx *c, long pid)
{
	char label[400];

	for (size_t i = 0; i < C->trcap; i++) {
		const struct track *t = &C->tr[i];

		if (!t->used || !t->shown || t->pid != pid)
			continue;
		if (t->is_ring)
			snprintf(label, sizeof label, "ring %ld%s%s", t->id,
			         t->names[0] ? ": " : "", t->names);
		else if (t->names[0])
			snprintf(label, sizeof label, "%s (tid %ld)", t->names, t->id);
		else
			snprintf(label, sizeof label, "tid %ld", t->id);
		metadata(C, c->out, "thread_name", pid, t->id, label);
		sort_index(C, c->out, pid, t->id, t->order);
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
	unsigned nf, *f = proc_files(C, P, pr, &nf);
	char names[1024], label[1100], exe[RD_THREAD_NAME_MAX];
	size_t prev = 0;

	if (!f)
		return;
	finish_tracks(C, c, pr->pid);
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
	finish_flows(C, c);
	for (unsigned i = 0; i < P->nproc; i++)
		finish_proc(C, c, P->proc[i]);
	rd_out_str(c->out, "\n]}\n");
}

static void chrome_destroy(struct rd_sink *s)
{
	struct chrome *C = (struct chrome *)s;

	for (unsigned i = 0; i < C->nrn; i++) {
		for (unsigned r = 0; C->rn[i] && r < C->rn[i][0].nrings; r++)
			free(C->rn[i][r].held_bytes);
		free(C->rn[i]);
	}
	free(C->rn);
	free(C->first);
	free(C->tr);
	free(C->sf);
	free(C->forks);
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
