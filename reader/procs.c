/*
 * procs.c - per-process and per-ring state along the timeline (procs.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "procs.h"
#include "ptree.h"

#define THREAD_NAME_EVENT "rte.thread.name"
#define THREAD_TID_EVENT "rte.thread.tid"
#define THREAD_NAME_OF_EVENT "rte.thread.name_of" /* "RING:name" */

void rd_procs_init(struct rd_procs *p)
{
	memset(p, 0, sizeof *p);
}

void rd_procs_fini(struct rd_procs *p)
{
	for (unsigned i = 0; i < p->nsrc; i++)
		rd_src_forget_threads(&p->src[i]);
	for (unsigned i = 0; i < p->nproc; i++)
		free(p->proc[i]);
	free(p->src);
	free(p->proc);
	free(p->bypid);
	rd_ptree_free(p->tree);
	memset(p, 0, sizeof *p);
}

struct rd_src_rings rd_src_rings(const struct rd_src *s)
{
	struct rd_src_rings o = { 0 };

	if (!s->threads)
		return s->kept;
	for (unsigned r = 0; r < s->rings; r++) {
		const struct rd_thread *th = &s->threads[r];

		if (th->last_ts > o.last_ts)
			o.last_ts = th->last_ts;
		o.lost += th->lost_words;
		if (th->first_ts && (!o.first_ts || th->first_ts < o.first_ts))
			o.first_ts = th->first_ts; /* no ring_start: OCaml */
		o.phases |= th->phase_ns > 0 || th->phases.depth > 0;
	}
	if (s->rings)
		o.tid0 = s->threads[0].tid;
	return o;
}

/* The rings go (a process written out early, or the end): what the
 * process tree needs of them stays (s->kept). */
void rd_src_forget_threads(struct rd_src *s)
{
	if (s->threads)
		s->kept = rd_src_rings(s);
	for (unsigned r = 0; s->threads && r < s->rings; r++) {
		rd_spans_free(&s->threads[r].phases);
		rd_spans_free(&s->threads[r].spans);
	}
	free(s->threads);
	free(s->ten);
	s->threads = NULL;
	s->ten = NULL;
	s->nten = s->tencap = 0;
}

/* The slot of pid in p->bypid: its process, or the empty slot where it
 * goes. The table is never full. */
static struct rd_proc **pid_slot(struct rd_procs *p, long pid)
{
	unsigned long h = (unsigned long)pid * 0x9e3779b97f4a7c15ul;
	unsigned mask = p->bypidcap - 1, i = (unsigned)(h >> 32) & mask;

	while (p->bypid[i] && p->bypid[i]->pid != pid)
		i = (i + 1) & mask;
	return &p->bypid[i];
}

/* Index process pr (pid >= 0) by its pid. Returns 0 or -1 (out of
 * memory). */
static int index_pid(struct rd_procs *p, struct rd_proc *pr)
{
	if (2 * (p->nproc + 1) > p->bypidcap) {
		struct rd_proc **old = p->bypid;
		unsigned oldcap = p->bypidcap, cap = oldcap ? 2 * oldcap : 64;

		if (!(p->bypid = calloc(cap, sizeof *p->bypid))) {
			p->bypid = old;
			return -1;
		}
		p->bypidcap = cap;
		for (unsigned i = 0; i < oldcap; i++)
			if (old[i])
				*pid_slot(p, old[i]->pid) = old[i];
		free(old);
	}
	*pid_slot(p, pr->pid) = pr;
	return 0;
}

/* The process of pid, created if new (a pid < 0, unknown, is a process of
 * its own each time). NULL if out of memory. */
static struct rd_proc *find_proc(struct rd_procs *p, long pid)
{
	struct rd_proc *pr;

	if (pid >= 0 && p->bypidcap && (pr = *pid_slot(p, pid)) != NULL)
		return pr;
	if (p->nproc == p->proccap) {
		unsigned cap = p->proccap ? 2 * p->proccap : 8;
		struct rd_proc **n = realloc(p->proc, cap * sizeof *n);

		if (!n)
			return NULL;
		p->proc = n;
		p->proccap = cap;
	}
	pr = calloc(1, sizeof *pr);
	if (!pr)
		return NULL;
	pr->pid = pid;
	pr->index = p->nproc;
	pr->first_src = pr->last_src = RD_NO_SRC;
	if (pid >= 0 && index_pid(p, pr) < 0) {
		free(pr);
		return NULL;
	}
	p->proc[p->nproc++] = pr;
	return pr;
}

/* Link source index into its process's list, in index order (sources
 * are added in increasing order: appended). */
static void link_src(struct rd_procs *p, struct rd_proc *pr, unsigned index)
{
	unsigned *at = &pr->first_src;

	if (pr->last_src != RD_NO_SRC && pr->last_src < index)
		at = &p->src[pr->last_src].next_src;
	while (*at != RD_NO_SRC && *at < index)
		at = &p->src[*at].next_src;
	p->src[index].next_src = *at;
	*at = index;
	if (p->src[index].next_src == RD_NO_SRC)
		pr->last_src = index;
	pr->nsrc++;
}

/* Capacity for cap sources, exactly (added zeroed). 0, or -1. */
static int src_cap(struct rd_procs *p, unsigned cap)
{
	struct rd_src *n;

	if (cap <= p->srccap)
		return 0;
	n = realloc(p->src, cap * sizeof *n);
	if (!n)
		return -1;
	memset(n + p->srccap, 0, (cap - p->srccap) * sizeof *n);
	p->src = n;
	p->srccap = cap;
	return 0;
}

int rd_procs_reserve(struct rd_procs *p, unsigned more)
{
	return more > UINT_MAX - p->nsrc ? -1 : src_cap(p, p->nsrc + more);
}

int rd_procs_add_src(struct rd_procs *p, unsigned index, const char *path,
                     long pid, unsigned rings)
{
	struct rd_src *s;

	if (index >= p->srccap) {
		unsigned cap = p->srccap ? 2 * p->srccap : 8;

		while (cap <= index)
			cap *= 2;
		if (src_cap(p, cap) < 0)
			return -1;
	}
	s = &p->src[index];
	s->path = path;
	s->pid = pid;
	s->rings = rings;
	s->proc = find_proc(p, pid);
	s->threads = calloc(rings, sizeof *s->threads);
	if (!s->proc || !s->threads)
		return -1;
	link_src(p, s->proc, index);
	for (unsigned r = 0; r < rings; r++)
		s->threads[r].tid = -1;
	if (index >= p->nsrc)
		p->nsrc = index + 1;
	return 0;
}

int rd_src_alive(struct rd_src *s, const rte_cursor *c)
{
	int alive;

	if (s->writer_state == RD_WRITER_UNKNOWN) {
		rd_writer_init(&s->writer, s->pid, rte_cursor_stat(c));
		rd_writer_locate(&s->writer, rte_cursor_path(c)); /* btrfs... */
	}
	alive = rd_writer_alive(&s->writer);
	s->writer_state = alive ? RD_WRITER_RUNNING : RD_WRITER_GONE;
	return alive;
}

void rd_procs_judge_writers(struct rd_procs *p, const rd_merge *m)
{
	for (unsigned i = 0; i < p->nsrc && i < rd_merge_sources(m); i++) {
		struct rd_src *s = &p->src[i];

		if (s->stopped || rd_src_alive(s, rd_merge_cursor(m, i)))
			continue;
		/* Gone now; if it ended normally while the file was being read,
		 * its ring_stop is there now. */
		if (rd_file_has_ring_stop(s->path) != 0)
			s->writer_state = RD_WRITER_UNKNOWN;
	}
}

int rd_src_killed(const struct rd_src *s)
{
	return !s->stopped && s->writer_state == RD_WRITER_GONE;
}

uint64_t rd_proc_wall(const struct rd_proc *pr)
{
	if (pr->started && pr->stopped && pr->stop_ts >= pr->start_ts)
		return pr->stop_ts - pr->start_ts;
	return pr->has_ts && pr->last_ts >= pr->first_ts ? pr->last_ts - pr->first_ts : 0;
}

void rd_proc_json_files(struct rd_out *o, const struct rd_procs *P,
                        const struct rd_proc *pr, int killed_only)
{
	int first = 1;

	rd_out_ch(o, '[');
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		if (killed_only && !rd_src_killed(&P->src[i]))
			continue;
		if (!first)
			rd_out_ch(o, ',');
		first = 0;
		rd_out_json_str(o, P->src[i].path);
	}
	rd_out_ch(o, ']');
}

static void tenant_of(const struct rd_thread *th, unsigned ring,
                      struct rd_tenant *t)
{
	t->ring = ring;
	memcpy(t->name, th->name, sizeof t->name);
	t->tid = th->tid;
	t->events = th->events - th->ev0;
	t->lost_words = th->lost_words - th->lost0;
	t->phase_ns = th->phase_ns - th->ph0;
}

/* A domain_spawn on a ring: its tenant so far, if it wrote anything,
 * goes to the file's list, and a new one begins. */
static void new_tenant(struct rd_src *s, struct rd_thread *th)
{
	if (th->events == th->ev0 && th->lost_words == th->lost0)
		return; /* nothing yet: the spawn is this tenant's */
	if (s->nten == s->tencap) {
		unsigned cap = s->tencap ? 2 * s->tencap : 4;
		struct rd_tenant *n = realloc(s->ten, cap * sizeof *n);

		if (!n) {
			s->oom = 1;
			goto next;
		}
		s->ten = n;
		s->tencap = cap;
	}
	tenant_of(th, (unsigned)(th - s->threads), &s->ten[s->nten++]);
next:
	th->ev0 = th->events;
	th->lost0 = th->lost_words;
	th->ph0 = th->phase_ns;
}

void rd_src_each_thread(const struct rd_src *s,
                        void (*fn)(void *arg, const struct rd_tenant *t),
                        void *arg)
{
	struct rd_tenant cur;

	for (unsigned r = 0; r < s->rings; r++) {
		const struct rd_thread *th = &s->threads[r];
		int before = 0;

		for (unsigned i = 0; i < s->nten; i++)
			if (s->ten[i].ring == r) {
				fn(arg, &s->ten[i]);
				before = 1;
			}
		if (!th->seen || (before && th->events == th->ev0 &&
		                  th->lost_words == th->lost0))
			continue;
		tenant_of(th, r, &cur);
		fn(arg, &cur);
	}
}

/* Give up on every open span of the ring (a loss, or a new thread). */
static void abandon_all(struct rd_thread *th, struct rd_item *it)
{
	it->ab[0] = (struct rd_abandoned){ th->phases.s, th->phases.depth, 0 };
	it->ab[1] = (struct rd_abandoned){ th->spans.s, th->spans.depth, 1 };
	th->phases.dropped += th->phases.depth;
	th->spans.dropped += th->spans.depth;
	rd_spans_reset(&th->phases);
	rd_spans_reset(&th->spans);
}

static void set_thread_name(struct rd_thread *th, const uint8_t *b, size_t n,
                            uint64_t ts)
{
	size_t i;

	if (ts < th->name_ts)
		return; /* a later name is already known */
	th->name_ts = ts;
	if (n > RD_THREAD_NAME_MAX - 1)
		n = RD_THREAD_NAME_MAX - 1;
	for (i = 0; i < n && b[i]; i++)
		th->name[i] = b[i] < 0x20 || b[i] == 0x7f ? '?' : (char)b[i];
	th->name[i] = '\0';
	th->name_gen++;
}

/* Another thread renamed the thread of ring R: payload "R:name". */
static void name_of(struct rd_src *s, const uint8_t *b, size_t n, uint64_t ts)
{
	size_t i = 0;
	unsigned long r = 0;

	while (i < n && i < 6 && b[i] >= '0' && b[i] <= '9')
		r = r * 10 + (b[i++] - '0');
	if (i == 0 || i >= n || b[i] != ':' || r >= s->rings)
		return;
	set_thread_name(&s->threads[r], b + i + 1, n - i - 1, ts);
}

static void lifecycle(struct rd_src *s, struct rd_thread *th,
                      struct rd_item *it)
{
	struct rd_proc *pr = it->proc;
	const struct rte_event *ev = it->ev;

	if (ev->id < RTE_LC_COUNT)
		pr->lifecycle[ev->id]++;
	switch (ev->id) {
	case RTE_LC_RING_START:
		if (s->stopped && ev->ring == 0) /* an exec failed: back on */
			s->stopped = pr->stopped = 0;
		if (!pr->started || it->ts < pr->start_ts) {
			pr->started = 1;
			pr->start_ts = it->ts;
		}
		break;
	case RTE_LC_RING_STOP:
		s->stopped = 1;
		pr->stopped = 1;
		if (it->ts > pr->stop_ts)
			pr->stop_ts = it->ts;
		break;
	case RTE_LC_DOMAIN_TERMINATE: /* the thread ends: its spans too */
		abandon_all(th, it);
		break;
	case RTE_LC_DOMAIN_SPAWN:
		new_tenant(s, th);
		abandon_all(th, it);
		if (it->ts >= th->name_ts) { /* a new thread: no name yet */
			th->name[0] = '\0';
			th->name_gen++;
			th->name_ts = it->ts;
			th->tid = -1;
		}
		break;
	default:
		break;
	}
}

static void phase_end(struct rd_thread *th, struct rd_item *it)
{
	const struct rd_span_open *d;
	unsigned nd = 0;

	it->matched = rd_thread_phase_end(th, it->ev->id, it->ts, &it->begin_ts,
	                                  &it->dur, &d, &nd);
	if (it->matched)
		it->ab[0] = (struct rd_abandoned){ d, nd, 0 };
}

static void span_end(struct rd_thread *th, struct rd_item *it)
{
	const struct rd_span_open *d;
	unsigned nd = 0;

	it->matched = rd_thread_span_end(th, it->ev->id, it->ts, &it->begin_ts,
	                                 &it->dur, &d, &nd);
	if (it->matched)
		it->ab[1] = (struct rd_abandoned){ d, nd, 1 };
}

static int is_name(const char *name, const char *want)
{
	return name && name[0] == 'r' && strcmp(name, want) == 0;
}

static int is_rte(const char *name)
{
	return name && name[0] == 'r' && !strncmp(name, "rte.", 4);
}

void rd_procs_update(struct rd_procs *p, const struct rd_merge_item *mi,
                     struct rd_item *it)
{
	const struct rte_event *ev = mi->ev;
	struct rd_src *s = &p->src[mi->src];
	struct rd_thread *th = &s->threads[ev->ring];
	struct rd_proc *pr = s->proc;

	it->ev = ev;
	it->ts = mi->ts;
	it->src = s;
	it->proc = pr;
	it->th = th;
	it->matched = 0;
	it->ab[0].n = it->ab[1].n = 0;
	th->seen = 1; /* a loss too */
	if (ev->kind == RTE_EV_LOST) {
		/* A loss has no time of its own (its timestamp is 0, or where
		 * the merge placed it): it never moves the time range. */
		th->lost_words += ev->u.lost_words;
		pr->lost_words += ev->u.lost_words;
		abandon_all(th, it);
		/* the merge places a loss at the next event of its ring: a
		 * base for relative times if nothing came before (not 0) */
		if (!pr->has_base && it->ts) {
			pr->has_base = 1;
			pr->base_ts = it->ts;
		}
		return;
	}
	if (!pr->has_ts) {
		pr->has_ts = 1;
		pr->first_ts = mi->ts;
	}
	if (!pr->has_base) {
		pr->has_base = 1;
		pr->base_ts = mi->ts;
	}
	if (!th->first_ts)
		th->first_ts = mi->ts;
	rd_times_note(&pr->first_ts, &pr->last_ts, &th->last_ts, mi->ts);
	switch (ev->kind) {
	case RTE_EV_LIFECYCLE:
		lifecycle(s, th, it);
		break;
	case RTE_EV_BEGIN:
		rd_thread_phase_begin(th, ev->id, it->ts, ev->name);
		break;
	case RTE_EV_END:
		phase_end(th, it);
		break;
	case RTE_EV_USER_SPAN_BEGIN:
		rd_spans_begin(&th->spans, ev->id, it->ts, ev->name);
		break;
	case RTE_EV_USER_SPAN_END:
		span_end(th, it);
		break;
	case RTE_EV_USER_CUSTOM:
		s->librte |= is_rte(ev->name);
		if (is_name(ev->name, THREAD_NAME_EVENT))
			set_thread_name(th, ev->u.custom.bytes, ev->u.custom.len,
			                it->ts);
		else if (is_name(ev->name, THREAD_NAME_OF_EVENT))
			name_of(s, ev->u.custom.bytes, ev->u.custom.len, it->ts);
		break;
	case RTE_EV_USER_INT:
		s->librte |= is_rte(ev->name);
		if (is_name(ev->name, THREAD_TID_EVENT))
			th->tid = (long)ev->u.value;
		break;
	default:
		break;
	}
	if (ev->kind >= RTE_EV_LIFECYCLE || ev->kind == RTE_EV_BEGIN)
		rd_ptree_note(p, it); /* the process tree's events */
	rd_thread_count(th, pr, 1);
}
