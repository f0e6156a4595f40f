/*
 * fmt/text.c - the default output: one aligned line an event.
 *
 *   TIME           DELTA      PID RING THREAD  KIND        NAME        VALUE
 *   0.000123456  +1.203us    4242    0 main    end         minor       dur 12.35us
 *
 * TIME is seconds since the trace start (the earliest first event of any
 * ring of the inputs: one time base for every process, as in chrome and
 * --top), or with --wall-clock the wall-clock time (UTC, ISO 8601) from
 * this machine's current CLOCK_REALTIME - CLOCK_MONOTONIC offset; DELTA
 * is the time since the previous line. The value column depends on the
 * kind (see rte-read(1)). A last line totals
 * the events (LOST lines are not events) and lost words, and another the
 * unfinished spans (begun, never ended: their thread or file ended first,
 * or words were lost), if any.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rte/proc.h"
#include "text.h"
#include "sinks.h"

#define W_TIME 14
#define W_WALL 30
#define W_DELTA 11
#define W_PID 7
#define W_RING 4
#define W_THREAD 15
#define W_KIND 11
#define W_NAME 28

struct text {
	struct rd_sink sink;
	int header_done;
	uint64_t events;
	uint64_t unfinished; /* spans begun and never ended (procs.h) */
	uint64_t base, prev; /* trace start; time of the previous line */
	int has_prev, wall;
	int64_t wall_off;    /* --wall-clock: CLOCK_MONOTONIC to REALTIME */
};

static char *pad_to(char *p, char *start, size_t width)
{
	while ((size_t)(p - start) < width)
		*p++ = ' ';
	return p;
}

/* Right-align the n bytes just written at `start` in `width` columns. */
static char *align_right(char *start, size_t n, size_t width)
{
	if (n < width) {
		memmove(start + (width - n), start, n);
		memset(start, ' ', width - n);
		return start + width;
	}
	return start + n;
}

static char *put_cstr(char *p, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++)
		*p++ = (char)((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
	return p;
}

/* YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ: 30 bytes. */
static char *put_wall(char *p, uint64_t mono, int64_t off)
{
	int64_t ns = (int64_t)mono + off;
	time_t sec = (time_t)(ns / 1000000000);
	struct tm tm;

	if (ns < 0 || !gmtime_r(&sec, &tm))
		return p + sprintf(p, "%30s", "?");
	return p + sprintf(p, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ",
	                   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	                   tm.tm_hour, tm.tm_min, tm.tm_sec,
	                   (long long)(ns % 1000000000));
}

static char *put_time(char *p, const struct text *t, const struct rd_item *it)
{
	char *start = p;

	if (t->wall)
		return put_wall(p, it->ts, t->wall_off);
	if (it->ts >= t->base) {
		p += rd_fmt_secs(p, it->ts - t->base);
	} else {
		*p++ = '-';
		p += rd_fmt_secs(p, t->base - it->ts);
	}
	return align_right(start, (size_t)(p - start), W_TIME);
}

/* +DURATION since the previous line (-DURATION: a loss placed earlier). */
static char *put_delta(char *p, struct text *t, const struct rd_item *it)
{
	char *start = p;

	if (!t->has_prev) {
		*p++ = '-';
	} else {
		*p++ = it->ts >= t->prev ? '+' : '-';
		p += rd_fmt_dur(p, it->ts >= t->prev ? it->ts - t->prev : t->prev - it->ts);
	}
	t->prev = it->ts;
	t->has_prev = 1;
	return align_right(start, (size_t)(p - start), W_DELTA);
}

static char *put_prefix(char *p, struct text *t, const struct rd_item *it)
{
	char *s;

	p = put_time(p, t, it);
	*p++ = ' ';
	p = put_delta(p, t, it);
	*p++ = ' ';
	s = p;
	if (it->src->pid >= 0)
		p += rd_fmt_i64(p, it->src->pid);
	else
		*p++ = '?';
	p = align_right(s, (size_t)(p - s), W_PID);
	*p++ = ' ';
	s = p;
	p += rd_fmt_u64(p, it->ev->ring);
	p = align_right(s, (size_t)(p - s), W_RING);
	*p++ = ' ';
	s = p;
	p = put_cstr(p, it->th->name[0] ? it->th->name : "-", W_THREAD);
	p = pad_to(p, s, W_THREAD);
	*p++ = ' ';
	return p;
}

static int printable(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] < 0x20 || b[i] >= 0x7f)
			return 0;
	return 1;
}

/* The custom payload: "text" if printable, else 0x and hex. */
static void put_custom(struct rd_out *o, const uint8_t *b, size_t n)
{
	if (printable(b, n)) {
		rd_out_ch(o, '"');
		for (size_t i = 0; i < n; i++) {
			if (b[i] == '"' || b[i] == '\\')
				rd_out_ch(o, '\\');
			rd_out_ch(o, (char)b[i]);
		}
		rd_out_ch(o, '"');
	} else {
		rd_out_mem(o, "0x", 2);
		rd_out_hex(o, b, n);
	}
}

/* Non-zero allocation buckets as size:count, sizes in words. */
static char *put_alloc(char *p, const uint64_t *b)
{
	char *start = p;

	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++) {
		if (!b[i])
			continue;
		if (p != start)
			*p++ = ' ';
		if (i < 10) {
			p += rd_fmt_u64(p, i);
		} else if (i < 19) {
			p += rd_fmt_u64(p, (i - 9) * 10);
			*p++ = '-';
			p += rd_fmt_u64(p, (i - 9) * 10 + 9);
		} else {
			memcpy(p, "100+", 4);
			p += 4;
		}
		*p++ = ':';
		p += rd_fmt_u64(p, b[i]);
	}
	return p;
}

static char *put_end(char *p, const struct rd_item *it, int user)
{
	if (user) {
		memcpy(p, "end ", 4);
		p += 4;
	}
	if (it->matched) {
		memcpy(p, "dur ", 4);
		p += 4;
		return p + rd_fmt_dur(p, it->dur);
	}
	memcpy(p, "(begin not seen)", 16);
	return p + 16;
}

static char *put_value(char *p, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;

	switch (ev->kind) {
	case RTE_EV_END:
		return put_end(p, it, 0);
	case RTE_EV_USER_SPAN_END:
		return put_end(p, it, 1);
	case RTE_EV_USER_SPAN_BEGIN:
		memcpy(p, "begin", 5);
		return p + 5;
	case RTE_EV_COUNTER:
		return p + rd_fmt_u64(p, ev->u.counter);
	case RTE_EV_LIFECYCLE:
		return p + rd_fmt_i64(p, ev->u.data);
	case RTE_EV_USER_INT:
		return p + rd_fmt_i64(p, ev->u.value);
	case RTE_EV_LOST:
		p += rd_fmt_u64(p, ev->u.lost_words);
		memcpy(p, " words lost", 11);
		return p + 11;
	default:
		return p;
	}
}

/* ---- the crash recorder's events and report (crashrep.h) ---------------- */

/* "SIGSEGV (SEGV_MAPERR: address not mapped) at address 0x10, fatal" */
static void crash_headline(struct rd_out *o, const struct rte_crash_rec *r)
{
	char sb[32];
	const char *code = rd_crash_code_name(r->signo, r->code);

	rd_outf(o, "%s", rd_crash_sig_name(r->signo, sb, sizeof(sb)));
	if (code)
		rd_outf(o, " (%s)", code);
	else
		rd_outf(o, " (si_code %d)", r->code);
	if (r->signo != SIGABRT && r->code > 0)
		rd_outf(o, " at address 0x%" PRIx64, r->addr);
	if (r->code <= 0 && r->sender)
		rd_outf(o, " from pid %d", r->sender);
	rd_outf(o, "%s%s", r->flags & RTE_CRASH_FATAL ? ", fatal" : "",
	     r->flags & RTE_CRASH_HANDLED ? ", passed to the program's handler"
	                                  : "");
}

/* The VALUE column of an rte.crash, rte.backtrace, rte.module or
 * rte.module.unload event: one line, then (for stacks) one indented line
 * a frame, each ending with '\n' except the first line's. */
static void crash_value(struct rd_crash *c, const struct rd_item *it,
                        struct rd_out *o)
{
	const struct rte_event *ev = it->ev;
	struct rd_crash_event e;

	rd_crash_decode(c, it, 1, &e);
	if (e.malformed) {
		rd_outf(o, "(malformed %s payload, %zu bytes)", ev->name,
		     ev->u.custom.len);
		rd_crash_event_fini(&e);
		return;
	}
	switch (e.kind) {
	case RD_CRASH_CRASH:
		crash_headline(o, &e.crash);
		rd_outf(o, ", tid %d", e.crash.tid);
		break;
	case RD_CRASH_BT:
		if (e.bt.kind == RTE_BT_FORK)
			rd_outf(o, "fork of pid %" PRId64 " by tid %d", e.bt.data, e.bt.tid);
		else if (e.bt.kind == RTE_BT_THREAD)
			rd_outf(o, "thread made by ring %" PRId64 " (tid %d)", e.bt.data,
			     e.bt.tid);
		else
			rd_outf(o, "kind %u", e.bt.kind);
		break;
	case RD_CRASH_MOD:
		rd_outf(o, "%s at 0x%" PRIx64 "-0x%" PRIx64 " bias 0x%" PRIx64
		     " build id ", e.mod.path, e.mod.start, e.mod.end, e.mod.bias);
		if (e.mod.build_id_len)
			rd_out_hex(o, e.mod.build_id, e.mod.build_id_len);
		else
			rd_out_str(o, "none");
		break;
	case RD_CRASH_UNMOD:
		rd_outf(o, "at 0x%" PRIx64 " bias 0x%" PRIx64, e.mod.start, e.mod.bias);
		break;
	default:
		break;
	}
	for (unsigned i = 0; i < e.nframes; i++)
		rd_outf(o, "\n    %s", e.frames[i]);
	rd_crash_event_fini(&e);
}

/* The frames, a run of identical ones (deep recursion) as one line. */
static void crash_frames(struct rd_out *o, char *const *v, unsigned n)
{
	for (unsigned k = 0; k < n;) {
		const char *a = strstr(v[k], "0x");
		unsigned run = 1;

		while (a && k + run < n) {
			const char *b = strstr(v[k + run], "0x");

			if (!b || strcmp(a, b))
				break;
			run++;
		}
		rd_outf(o, "    %s\n", v[k]);
		if (run > 2) {
			rd_outf(o, "    ... the same frame %u more times\n", run - 1);
			k += run;
		} else {
			k++;
		}
	}
}

static void crash_last(void *ud, const char *ring, const char *line)
{
	if (ring)
		rd_outf(ud, "    %s\n", ring);
	else
		rd_outf(ud, "      %s\n", line);
}

void rd_text_crash_report(const struct rd_crash *c, struct rd_out *o)
{
	unsigned n = rd_crash_count(c, 0);

	for (unsigned i = 0; i < n; i++) {
		struct rd_crash_view v;

		rd_crash_view(c, i, &v);
		rd_outf(o, "\n%s in process %ld: ",
		     v.r->flags & RTE_CRASH_FATAL ? "CRASH" : "SIGNAL", v.pid);
		crash_headline(o, v.r);
		rd_outf(o, "\n  thread %s (tid %d), ring %u of %s\n",
		     v.thread[0] ? v.thread : "(no name)", v.r->tid, v.ring, v.path);
		rd_outf(o, "  stack:\n");
		if (!v.nframes)
			rd_outf(o, "    (no frames recorded)\n");
		crash_frames(o, v.frames, v.nframes);
		if (v.nmade) {
			rd_outf(o, "  thread made by ring %d (tid %ld) at:\n",
			     v.made_ring, v.made_tid);
			crash_frames(o, v.made_by, v.nmade);
		}
		rd_outf(o, "  last events before it, by ring (time relative to "
		     "the crash):\n");
		rd_crash_each_last(c, i, crash_last, o);
	}
}

/* Pad to column `col` of line and write word w. */
static char *col_word(char *p, char *line, size_t col, const char *w)
{
	size_t n = strlen(w);

	p = pad_to(p, line, col);
	memcpy(p, w, n);
	return p + n;
}

static void header(struct rd_out *o, int wall)
{
	char line[200], *p = line;
	size_t c = wall ? W_WALL : W_TIME; /* end of the time column */

	p = wall ? col_word(p, line, 0, "WALL CLOCK (UTC)")
	         : col_word(p, line, W_TIME - 4, "TIME");
	c += 1 + W_DELTA;
	p = col_word(p, line, c - 5, "DELTA");
	c += 1 + W_PID;
	p = col_word(p, line, c - 3, "PID");
	c += 1 + W_RING;
	p = col_word(p, line, c - 4, "RING");
	p = col_word(p, line, c + 1, "THREAD");
	c += 1 + W_THREAD;
	p = col_word(p, line, c + 1, "KIND");
	c += 1 + W_KIND;
	p = col_word(p, line, c + 1, "NAME");
	c += 1 + W_NAME;
	p = col_word(p, line, c + 1, "VALUE\n");
	rd_out_mem(o, line, (size_t)(p - line));
}

static void text_event(struct rd_sink *s, struct rd_ctx *c,
                       const struct rd_item *it)
{
	struct text *t = (struct text *)s;
	const struct rte_event *ev = it->ev;
	struct rd_out *o = c->out;
	char *p, *start, *name, nbuf[48];
	const char *kind = ev->kind == RTE_EV_LOST ? "LOST" : rte_event_kind_name(ev->kind);

	for (int k = 0; k < 2 && rd_filter_pid_pass(c->filter, it->src->pid); k++)
		t->unfinished += rd_spans_passing(c->filter, it->ab[k].s, it->ab[k].n,
		                                  it->ab[k].user);
	if (!it->pass)
		return;
	if (!t->header_done) {
		t->base = c->filter->has_t0 ? c->filter->t0 : it->ts;
		t->wall = c->filter->wall_clock;
		if (t->wall)
			t->wall_off = rd_wall_offset();
		header(o, t->wall);
		t->header_done = 1;
	}
	t->events += ev->kind != RTE_EV_LOST; /* a loss record is no event */
	start = p = rd_out_reserve(o, 1024);
	p = put_prefix(p, t, it);
	name = p;
	p = put_cstr(p, kind, W_KIND);
	p = pad_to(p, name, W_KIND);
	*p++ = ' ';
	name = p;
	if (ev->kind == RTE_EV_LOST)
		*p++ = '-';
	else if (ev->kind == RTE_EV_ALLOC)
		memcpy(p, "alloc", 5), p += 5;
	else
		p = put_cstr(p, ev->name && !ev->name[0] ? "(unnamed)"
		                : rte_event_name(ev, nbuf, sizeof nbuf), RTE_NAME_MAX);
	p = pad_to(p, name, W_NAME);
	*p++ = ' ';
	if (ev->kind == RTE_EV_ALLOC)
		p = put_alloc(p, ev->u.buckets); /* at most 20 x 31 bytes */
	else
		p = put_value(p, it);
	o->len += (size_t)(p - start);
	if (ev->kind == RTE_EV_USER_CUSTOM) {
		if (c->crash && rd_crash_is_own(ev))
			crash_value(c->crash, it, o); /* decoded, symbolised */
		else if (!rd_text_proc_value(o, ev))
			put_custom(o, ev->u.custom.bytes, ev->u.custom.len);
	}
	while (o->len && o->buf[o->len - 1] == ' ')
		o->len--;
	rd_out_ch(o, '\n');
}

/* "# PATH: process PID ended without ring_stop (killed?)" for each file
 * whose writer is gone without writing its ring_stop. */
static void killed_notes(struct rd_ctx *c)
{
	for (unsigned i = 0; i < c->procs->nsrc; i++) {
		const struct rd_src *s = &c->procs->src[i];
		char num[24];

		if (!rd_src_killed(s))
			continue;
		rd_out_str(c->out, "# ");
		rd_out_str(c->out, s->path);
		rd_out_str(c->out, ": process ");
		rd_out_mem(c->out, num, rd_fmt_i64(num, s->pid));
		rd_out_str(c->out, " ended without ring_stop (killed?) and is gone\n");
	}
}

/* "# N unfinished spans (begun, never ended)": those given up while
 * reading and those still open at the end of their file. */
static void unfinished_note(struct text *t, struct rd_ctx *c)
{
	uint64_t n = t->unfinished;
	char num[24];

	for (unsigned i = 0; i < c->procs->nsrc; i++) {
		const struct rd_src *s = &c->procs->src[i];

		if (!rd_filter_pid_pass(c->filter, s->pid)) /* --pid */
			continue;
		for (unsigned r = 0; r < s->rings; r++) {
			const struct rd_thread *th = &s->threads[r];

			n += rd_spans_passing(c->filter, th->phases.s, th->phases.depth, 0);
			n += rd_spans_passing(c->filter, th->spans.s, th->spans.depth, 1);
		}
	}
	if (!n)
		return;
	rd_out_str(c->out, "# ");
	rd_out_mem(c->out, num, rd_fmt_u64(num, n));
	rd_out_str(c->out, n == 1 ? " unfinished span (begun, never ended)\n"
	                          : " unfinished spans (begun, never ended)\n");
}

static void text_finish(struct rd_sink *s, struct rd_ctx *c)
{
	struct text *t = (struct text *)s;
	char line[128], *p = line;

	if (!t->header_done)
		header(c->out, c->filter->wall_clock);
	memcpy(p, "# ", 2), p += 2;
	p += rd_fmt_u64(p, t->events);
	memcpy(p, " events, ", 9), p += 9;
	p += rd_fmt_u64(p, c->lost_total);
	memcpy(p, " words lost\n", 12), p += 12;
	rd_out_mem(c->out, line, (size_t)(p - line));
	unfinished_note(t, c);
	killed_notes(c);
	rd_text_crash_report(c->report, c->out);
}

static void text_destroy(struct rd_sink *s)
{
	free(s);
}

struct rd_sink *rd_sink_text(void)
{
	struct text *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->sink = (struct rd_sink){ NULL, text_event, text_finish, text_destroy, NULL };
	return &t->sink;
}
