/*
 * fmt/profile.c - the profile formats of rte-read (profile.h): folded
 * (collapsed stacks), pprof (gzipped profile.proto, by a small protobuf
 * encoder of our own) and flamegraph (one self-contained SVG with inline
 * JavaScript: search, click to zoom, no network).
 *
 * Which profile: --profile (rd_prof_pick). Values: CPU samples; for alloc
 * and inuse the estimated bytes (folded, flamegraph), all four heap values
 * in pprof. The pprof encoder is fmt/profile_pprof.c's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"
#include "ptree.h"
#include "rte/profile.h"
#include "sinks.h"

/* ---- merged stacks (folded, flamegraph) -------------------------------- */

/* Stacks of function names, the root first, with their values: a process
 * and thread root frame where asked, tags dropped. */
struct merged {
	struct ptab t;
	double *v;
	uint32_t vcap;
};

static double value_of(const struct rd_prof *p, int which, uint32_t i)
{
	if (which == RD_PROF_CPU)
		return (double)p->cv[i].samples;
	return which == RD_PROF_ALLOC ? p->av[i].abytes : p->av[i].ibytes;
}

/* Are there several processes with stacks in t? */
static int many_procs(const struct ptab *t)
{
	for (uint32_t i = 1; i < t->n; i++)
		if (pkey(t, i)->proc != pkey(t, 0)->proc)
			return 1;
	return 0;
}

static int grow_values(struct merged *m, uint32_t j)
{
	uint32_t c = m->vcap ? m->vcap : 256;
	double *nv;

	if (j < m->vcap)
		return 0;
	while (c <= j)
		c *= 2;
	if (!(nv = realloc(m->v, c * sizeof *nv)))
		return -1;
	memset(nv + m->vcap, 0, (c - m->vcap) * sizeof *nv);
	m->v = nv;
	m->vcap = c;
	return 0;
}

static int merge_stacks(struct rd_prof *p, int which, struct merged *m)
{
	const struct ptab *t = which == RD_PROF_CPU ? &p->cst : &p->ast;
	uint32_t w[2 + 2 + RD_PROF_MAX_LOCS];
	int procs = many_procs(t);
	char b[128];

	memset(m, 0, sizeof *m);
	for (uint32_t i = 0; i < t->n; i++) {
		const struct skey *k = pkey(t, i);
		uint32_t n = 0;
		int64_t j;
		int isnew;

		if (rd_ptree_opts.by_exe) /* one root per executable */
			w[n++] = p->pp[k->proc].exe ? p->pp[k->proc].exe
			                            : pstr_id(p, "?");
		else if (procs) {
			snprintf(b, sizeof b, "pid %ld", p->pp[k->proc].pid);
			w[n++] = pstr_id(p, b);
		}
		if (rd_prof_by_thread) {
			const char *name = "";

			for (unsigned x = 0; x < p->pp[k->proc].nthr; x++)
				if (p->pp[k->proc].thr[x].tid == k->tid)
					name = p->pp[k->proc].thr[x].name;
			snprintf(b, sizeof b, "thread %d%s%s", (int)k->tid,
			         *name ? " " : "", name);
			w[n++] = pstr_id(p, b);
		}
		for (uint32_t x = k->n; x-- > 0;)
			w[n++] = p->fn[p->loc[k->loc[x]].func].name;
		j = ptab_get(&m->t, w, n * 4, &isnew);
		if (j < 0 || grow_values(m, (uint32_t)j) < 0) {
			p->oom = 1;
			return -1;
		}
		m->v[j] += value_of(p, which, i);
	}
	return 0;
}

static void merged_fini(struct merged *m)
{
	ptab_fini(&m->t);
	free(m->v);
}

static uint32_t mlen(const struct merged *m, uint32_t i)
{
	return m->t.e[i].len / 4;
}

static const uint32_t *mnames(const struct merged *m, uint32_t i)
{
	return (const uint32_t *)(const void *)m->t.e[i].key;
}

/* A frame name for folded output: ';' separates frames, newlines end
 * lines: both replaced. */
static void folded_name(struct rd_out *o, const char *s)
{
	for (; *s; s++)
		rd_out_ch(o, *s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s);
}

static void write_folded(struct rd_prof *p, int which, struct rd_out *o)
{
	struct merged m;

	if (merge_stacks(p, which, &m) == 0)
		for (uint32_t i = 0; i < m.t.n; i++) {
			uint64_t v = (uint64_t)llround(m.v[i]);
			const uint32_t *nm = mnames(&m, i);

			if (!v)
				continue;
			if (!mlen(&m, i))
				rd_out_str(o, "(no stack)");
			for (uint32_t j = 0; j < mlen(&m, i); j++) {
				if (j)
					rd_out_ch(o, ';');
				folded_name(o, pstr(p, nm[j]));
			}
			rd_out_ch(o, ' ');
			rd_out_u64(o, v);
			rd_out_ch(o, '\n');
		}
	merged_fini(&m);
}

/* ---- flamegraph ----------------------------------------------------------- */

static void write_flame(struct rd_prof *p, int which, struct rd_out *o)
{
	static const char *what[] = { "", "CPU samples", "allocated bytes (estimated)",
	                              "bytes in use at the end (estimated)" };
	char title[80];
	struct ftree t;
	struct merged m;

	if (merge_stacks(p, which, &m) < 0)
		return;
	if (rd_flame_init(&t) < 0) {
		p->oom = 1;
		goto out;
	}
	for (uint32_t i = 0; i < m.t.n; i++) {
		uint64_t v = (uint64_t)llround(m.v[i]);

		if (v && rd_flame_add(&t, mnames(&m, i), mlen(&m, i), v, 0) < 0) {
			p->oom = 1;
			goto out;
		}
	}
	snprintf(title, sizeof title, "rte flame graph: %s", what[which]);
	rd_flame_write(p, &t, title, 0, o);
out:
	rd_flame_fini(&t);
	merged_fini(&m);
}

/* ---- the sink ------------------------------------------------------------- */

struct psink {
	struct rd_sink sink;
	enum rd_prof_fmt fmt;
	struct rd_prof *p;
};

static void prof_event(struct rd_sink *s, struct rd_ctx *c, const struct rd_item *it)
{
	if (it->pass)
		rd_prof_event(((struct psink *)s)->p, c->procs, it);
}

/* --by exe: each process's executable (its last image's argv[0], as the
 * summary's --by exe table names it). */
static void exe_names(struct rd_prof *p, struct rd_procs *P)
{
	struct rd_ptree *T = rd_ptree_build(P);
	char b[64];
	int x;

	for (unsigned i = 0; i < p->npp; i++)
		if (T && (x = rd_ptree_find(T, p->pp[i].pid)) >= 0)
			p->pp[i].exe = pstr_id(p, rd_ptree_exe(&T->n[x], b, sizeof b));
}

static void prof_finish(struct rd_sink *s, struct rd_ctx *c)
{
	struct psink *ps = (struct psink *)s;
	struct rd_prof *p = ps->p;
	int which;
	uint64_t bad;

	for (unsigned i = 0; i < c->procs->nproc; i++) {
		const struct rd_proc *pr = c->procs->proc[i];

		if (pr->index < p->npp)
			p->pp[pr->index].wall_ns = rd_proc_wall(pr);
	}
	if (rd_ptree_opts.by_exe)
		exe_names(p, c->procs);
	rd_prof_settle(p);
	which = rd_prof_pick(p);
	if ((which == RD_PROF_CPU ? p->cst.n : p->ast.n) == 0)
		fprintf(stderr, "rte-read: warning: no %s samples in the input%s%s\n",
		        which == RD_PROF_CPU ? "CPU (rte.sample)"
		                             : "allocation (rte.alloc.sample)",
		        rd_prof_span_opt ? " inside span " : "",
		        rd_prof_span_opt ? rd_prof_span_opt : "");
	if (ps->fmt == RD_PFMT_FOLDED)
		write_folded(p, which, c->out);
	else if (ps->fmt == RD_PFMT_FLAME)
		write_flame(p, which, c->out);
	else
		rd_prof_write_pprof(p, which, c->out);
	if ((bad = rd_prof_malformed(p)))
		fprintf(stderr, "rte-read: warning: %" PRIu64 " malformed profiler record%s skipped\n",
		        bad, bad == 1 ? "" : "s");
	if (p->oom)
		fprintf(stderr, "rte-read: warning: out of memory: the profile is incomplete\n");
}

static void prof_destroy(struct rd_sink *s)
{
	rd_prof_free(((struct psink *)s)->p);
	free(s);
}

struct rd_sink *rd_sink_profile(enum rd_prof_fmt fmt)
{
	struct psink *s = calloc(1, sizeof *s);

	if (!s || !(s->p = rd_prof_new())) {
		free(s);
		return NULL;
	}
	s->sink = (struct rd_sink){ NULL, prof_event, prof_finish, prof_destroy, NULL };
	s->fmt = fmt;
	return &s->sink;
}

const char *rd_prof_clock(uint32_t flags, char *buf, size_t len)
{
	unsigned e = (flags >> RTE_SAMPLE_WHY_SHIFT) & 0xffu;

	if (flags & RTE_SAMPLE_WALL)
		snprintf(buf, len, "wall clock (RTE_PROFILE_MODE=wall): every "
		         "thread, running or blocked; weights are wall time");
	else if (flags & RTE_SAMPLE_PERF)
		snprintf(buf, len, "perf_event cpu-clock (RTE_PROFILE_CLOCK=perf)");
	else if (flags & RTE_SAMPLE_PERF_RATE)
		snprintf(buf, len, "CPU-time timer (tick-bound): the perf clock "
		         "was asked above its 10000 Hz");
	else if (flags & RTE_SAMPLE_PERF_FAIL)
		snprintf(buf, len, "CPU-time timer (tick-bound): the perf clock "
		         "was asked, perf_event_open failed: %s%s",
		         e ? strerror((int)e) : "?",
		         e == 1 || e == 13 ? " (perf_event_paranoid above 2, "
		                             "or a seccomp filter)"
		                           : "");
	else
		snprintf(buf, len, "CPU-time timer (tick-bound; the default: "
		         "RTE_PROFILE_CLOCK=perf for the asked rate)");
	return buf;
}
