/*
 * profile.c - the profilers' events in rte-read (profile.h): decoding,
 * symbolising, aggregating into stacks, the liveness of sampled
 * allocations: the profiles and allocation aggregates of the run model
 * (model.h). It renders nothing: the summary's section is
 * fmt/profile_sum.c's, the folded, pprof and flame graph formats are
 * fmt/profile.c's. The options and the tables are profile_tab.c's, the
 * replay at the end profile_settle.c's.
 *
 * Per file (one process image) a symboliser fed by its rte.module events;
 * each code address is symbolised once per module set (a location), and
 * stacks of locations are aggregated with their values. Sampled
 * allocations and frees are kept with their times and replayed in time
 * order at the end (rings may be read one after another), so that a free
 * read before its allocation still frees it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "profile_int.h"
#include "rte/crash.h"
#include "rte/profile.h"

/* Make room for index i in a parallel array of `size`-byte elements. */
int rd_prof_room(struct rd_prof *p, void **a, uint32_t *cap, uint32_t i,
                 size_t size)
{
	uint32_t c;
	void *n;

	if (i < *cap)
		return 0;
	c = *cap ? *cap * 2 : 256;
	while (c <= i)
		c *= 2;
	n = realloc(*a, c * size);
	if (!n) {
		p->oom = 1;
		return -1;
	}
	memset((char *)n + *cap * size, 0, (c - *cap) * size);
	*a = n;
	*cap = c;
	return 0;
}

/* Per-process / per-file state, grown on first sight. */
static struct pproc *pproc_of(struct rd_prof *p, const struct rd_proc *pr)
{
	unsigned i = pr->index;

	if (i >= p->npp) { /* doubling: many processes cost no copies */
		unsigned n = p->npp ? 2 * p->npp : 8;
		struct pproc *a;

		while (n <= i)
			n *= 2;
		if (!(a = realloc(p->pp, n * sizeof *a))) {
			p->oom = 1;
			return NULL;
		}
		memset(a + p->npp, 0, (n - p->npp) * sizeof *a);
		p->pp = a;
		p->npp = n;
	}
	p->pp[i].used = 1;
	p->pp[i].pid = pr->pid;
	return &p->pp[i];
}

static struct psrc *psrc_of(struct rd_prof *p, unsigned i)
{
	if (i >= p->nps) { /* doubling: many processes cost no copies */
		unsigned n = p->nps ? 2 * p->nps : 8;
		struct psrc *a;

		while (n <= i)
			n *= 2;
		if (!(a = realloc(p->ps, n * sizeof *a))) {
			p->oom = 1;
			return NULL;
		}
		memset(a + p->nps, 0, (n - p->nps) * sizeof *a);
		p->ps = a;
		p->nps = n;
	}
	if (!p->ps[i].sym && !(p->ps[i].sym = rd_sym_new())) {
		p->oom = 1;
		return NULL;
	}
	return &p->ps[i];
}

/* ---- modules ---------------------------------------------------------- */

/* Decode an rte.module payload (path only if `m->path` is wanted: the
 * caller frees it). Returns 0 or -1 (malformed). */
static int module_of(const struct rte_event *ev, struct rd_module *m,
                     int with_path)
{
	const uint8_t *b = ev->u.custom.bytes;
	size_t n = ev->u.custom.len, plen;
	struct rte_module_rec r;

	if (n < sizeof r)
		return -1;
	memcpy(&r, b, sizeof r);
	if (r.version != RTE_MODULE_VERSION || r.end < r.start ||
	    r.build_id_len > sizeof m->build_id || r.build_id_len > n - sizeof r)
		return -1;
	memset(m, 0, sizeof *m);
	m->bias = r.bias;
	m->start = r.start;
	m->end = r.end;
	m->build_id_len = r.build_id_len;
	memcpy(m->build_id, b + sizeof r, r.build_id_len);
	if (!with_path)
		return 0;
	plen = n - sizeof r - r.build_id_len;
	if (memchr(b + sizeof r + r.build_id_len, '\0', plen) ||
	    !(m->path = malloc(plen + 1)))
		return -1;
	memcpy(m->path, b + sizeof r + r.build_id_len, plen);
	m->path[plen] = '\0';
	return 0;
}

static void on_module(struct rd_prof *p, unsigned src, const struct rte_event *ev,
                      int load)
{
	struct psrc *s = psrc_of(p, src);
	struct rd_module m;
	char hex[2 * sizeof m.build_id + 1];
	struct pmap *pm;

	if (!s || module_of(ev, &m, load) < 0)
		return;
	s->modgen++;
	if (!load) {
		rd_sym_remove(s->sym, m.bias, m.start);
		return;
	}
	if (rd_sym_add(s->sym, &m) < 0 ||
	    rd_prof_room(p, (void **)&p->map, &p->mapcap, p->nmap, sizeof *p->map) < 0) {
		p->oom = 1;
		free(m.path);
		return;
	}
	for (unsigned i = 0; i < m.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", m.build_id[i]);
	hex[2 * m.build_id_len] = '\0';
	pm = &p->map[p->nmap++];
	pm->start = m.start;
	pm->end = m.end;
	pm->off = m.start - m.bias; /* the object's address of the start */
	pm->path = pstr_id(p, m.path);
	pm->bid = pstr_id(p, hex);
	pm->src = src;
	free(m.path);
}

/* ---- locations -------------------------------------------------------- */

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static uint32_t map_of(const struct rd_prof *p, unsigned src, uint64_t pc)
{
	for (uint32_t i = p->nmap; i-- > 0;)
		if (p->map[i].src == src && pc >= p->map[i].start && pc < p->map[i].end)
			return i + 1;
	return 0;
}

/* The location of pc in file src (ret: a return address); -1 if out of
 * memory. */
static int64_t loc_of(struct rd_prof *p, unsigned src, struct psrc *s,
                      uint64_t pc, int ret)
{
	struct plockey k;
	struct rd_frame f;
	struct ploc *l;
	char name[512];
	int64_t i, fi;
	int isnew;

	rd_prof_lockey(&k, src, s, pc, ret, 0);
	if (rd_prof_loc_room(p) < 0)
		return -1;
	i = ptab_get(&p->locs, &k, sizeof k, &isnew);
	if (i < 0 || !isnew)
		return i;
	rd_sym_lookup(s->sym, pc, ret, &f);
	/* inlined code at pc: the line of the call in pc's own function */
	rd_prof_inline_site(s->sym, pc, ret, &f.file, &f.line);
	if (f.func) {
		snprintf(name, sizeof name, "%s", f.func);
		name[strcspn(name, "@")] = '\0'; /* "memcpy@@GLIBC_2.14": memcpy */
		if (!name[0])
			snprintf(name, sizeof name, "%s", f.func);
	}
	else if (f.module)
		snprintf(name, sizeof name, "%s+0x%" PRIx64, base_of(f.module), f.mod_off);
	else
		snprintf(name, sizeof name, "0x%" PRIx64, pc);
	l = &p->loc[i];
	fi = rd_prof_func(p, name, f.file);
	if (fi < 0) {
		memset(l, 0, sizeof *l); /* function 0 is "" */
		return -1;
	}
	l->pc = pc;
	l->map = map_of(p, src, pc);
	l->func = (uint32_t)fi;
	l->line = f.file ? f.line : 0;
	return i;
}

/* ---- samples ---------------------------------------------------------- */

/* The stack of key fields + pcs (ret: from frame `first_ret` on; leaf:
 * a [blocked] frame's location first, or -1; --inline: each pc's inlined
 * functions before its own, as room allows); its index in t, or -1. */
static int64_t stack_of(struct rd_prof *p, struct ptab *t, unsigned src,
                        uint32_t proc, int32_t tid, uint32_t tag,
                        const uint8_t *pcs, unsigned n, unsigned first_ret,
                        int64_t leaf)
{
	union { struct skey k; uint32_t w[4 + RD_PROF_MAX_LOCS]; } u;
	struct psrc *s = psrc_of(p, src);
	unsigned m = 0;
	int isnew;

	if (!s || n > RTE_PROFILE_MAX_FRAMES)
		return -1;
	u.k.proc = proc;
	u.k.tid = tid;
	u.k.tag = tag;
	if (leaf >= 0)
		u.k.loc[m++] = (uint32_t)leaf;
	for (unsigned i = 0; i < n; i++) {
		unsigned room = RD_PROF_MAX_LOCS - 1 - m - (n - i - 1);
		uint64_t pc;
		int64_t l;

		memcpy(&pc, pcs + 8 * i, 8);
		if (rd_prof_inline_opt && room)
			m += rd_prof_inline_locs(p, src, s, pc, i >= first_ret,
			                         &u.k.loc[m], room);
		if ((l = loc_of(p, src, s, pc, i >= first_ret)) < 0)
			return -1;
		u.k.loc[m++] = (uint32_t)l;
	}
	u.k.n = m;
	return ptab_get(t, &u, (uint32_t)(sizeof u.k + 4 * m), &isnew);
}

static struct pthr *thread_of(struct rd_prof *p, struct pproc *pp, unsigned src,
                              const struct rd_thread *th, unsigned ring,
                              long tid)
{
	for (unsigned i = 0; i < pp->nthr; i++)
		if (pp->thr[i].src == src && pp->thr[i].ring == ring &&
		    pp->thr[i].tid == tid)
			return &pp->thr[i];
	if (pp->nthr == pp->thrcap) {
		unsigned c = pp->thrcap ? pp->thrcap * 2 : 8;
		struct pthr *n = realloc(pp->thr, c * sizeof *n);

		if (!n) {
			p->oom = 1;
			return NULL;
		}
		pp->thr = n;
		pp->thrcap = c;
	}
	memset(&pp->thr[pp->nthr], 0, sizeof pp->thr[0]);
	pp->thr[pp->nthr].src = src;
	pp->thr[pp->nthr].ring = ring;
	pp->thr[pp->nthr].tid = tid;
	if (th)
		snprintf(pp->thr[pp->nthr].name, sizeof pp->thr[0].name, "%s",
		         th->name);
	return &pp->thr[pp->nthr++];
}

/* 1 if n frames of 8 bytes fit after a fixed part of `fixed` bytes in a
 * payload of len bytes (len >= fixed) and n is at most the maximum. */
static int frames_ok(size_t len, size_t fixed, unsigned n)
{
	return n <= RTE_PROFILE_MAX_FRAMES && (len - fixed) / 8 >= n;
}

/* Decode an rte.sample payload's fixed part into r: 0, or -1 if it is
 * short, of an unknown version or its frames do not fit. */
static int sample_rec(const struct rte_event *ev, struct rte_sample_rec *r)
{
	if (ev->u.custom.len < sizeof *r)
		return -1;
	memcpy(r, ev->u.custom.bytes, sizeof *r);
	if (r->version != RTE_SAMPLE_VERSION ||
	    !frames_ok(ev->u.custom.len, sizeof *r, r->nframes))
		return -1;
	return 0;
}

static void clock_seen(struct pproc *pp, uint32_t c)
{
	for (unsigned i = 0; i < pp->nclock; i++)
		if (pp->clock[i] == c)
			return;
	if (pp->nclock < sizeof pp->clock / sizeof pp->clock[0])
		pp->clock[pp->nclock++] = c;
}

static void on_sample(struct rd_prof *p, struct pproc *pp, unsigned src,
                      const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	const struct rd_thread *th = it->th;
	unsigned ring = ev->ring;
	struct rte_sample_rec r;
	struct pthr *t;
	uint32_t tag, clk;
	int64_t k, leaf = -1;
	int keep, blocked;

	if (sample_rec(ev, &r) < 0) {
		pp->bad_cpu++;
		return;
	}
	pp->has_cpu = 1;
	blocked = (r.flags & (RTE_SAMPLE_WALL | RTE_SAMPLE_BLOCKED)) ==
	          (RTE_SAMPLE_WALL | RTE_SAMPLE_BLOCKED);
	/* A blocked one is on the sampler's ring: its thread's ring's. */
	if (blocked && !(th = rd_prof_thread_of_tid(it->src, r.tid, &ring)))
		ring = ev->ring;
	if ((rd_prof_state_opt == RD_STATE_RUNNING && blocked) ||
	    (rd_prof_state_opt == RD_STATE_BLOCKED && !blocked))
		return;
	tag = rd_prof_tag_of(p, th, &keep);
	if (!keep) {
		pp->outside_cpu++;
		return;
	}
	if (rd_prof_room(p, (void **)&p->cv, &p->cvcap, p->cst.n, sizeof *p->cv) < 0)
		return;
	if (blocked && (leaf = rd_prof_blocked_loc(p, r.flags)) < 0) {
		p->oom = 1;
		return;
	}
	k = stack_of(p, &p->cst, src, it->proc->index, r.tid, tag,
	             ev->u.custom.bytes + sizeof r, r.nframes, 1, leaf);
	if (k < 0) {
		p->oom = 1;
		return;
	}
	p->cv[k].samples++;
	p->cv[k].cpu_ns += r.cpu_ns;
	pp->cpu_samples++;
	pp->cpu_ns += r.cpu_ns;
	clk = r.flags & (r.flags & RTE_SAMPLE_WALL
	                         ? RTE_SAMPLE_WALL
	                         : ~(uint32_t)RTE_STACK_TRUNCATED);
	clock_seen(pp, clk);
	if ((t = thread_of(p, pp, src, th, ring, r.tid))) {
		t->samples++;
		t->cpu_ns += r.cpu_ns;
		t->hz = r.hz;
		t->wall |= !!(r.flags & RTE_SAMPLE_WALL);
		if (blocked) {
			t->blocked++;
			t->blocked_ns += r.cpu_ns;
		}
	}
	if (r.hz)
		p->hz = r.hz;
}

static int add_aev(struct rd_prof *p, const struct rd_item *it, uint64_t addr,
                   uint32_t stack, uint64_t size, double obj, double bytes)
{
	if (p->naev == p->aevcap) {
		size_t c = p->aevcap ? p->aevcap * 2 : 1024;
		struct aev *n = realloc(p->aev, c * sizeof *n);

		if (!n) {
			p->oom = 1;
			return -1;
		}
		p->aev = n;
		p->aevcap = c;
	}
	p->aev[p->naev++] = (struct aev){ it->ts, p->seq++, addr, size, obj,
	                                  bytes, it->proc->index, stack, 0 };
	return 0;
}

static void on_alloc_sample(struct rd_prof *p, struct pproc *pp, unsigned src,
                            const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	struct rte_alloc_sample_rec r;
	double q, obj, bytes;
	uint32_t tag;
	int64_t k;
	int keep;

	if (ev->u.custom.len < sizeof r) {
		pp->bad_alloc++;
		return;
	}
	memcpy(&r, ev->u.custom.bytes, sizeof r);
	if (r.version != RTE_ALLOC_SAMPLE_VERSION ||
	    !frames_ok(ev->u.custom.len, sizeof r, r.nframes)) {
		pp->bad_alloc++;
		return;
	}
	pp->has_alloc = 1;
	tag = rd_prof_tag_of(p, it->th, &keep);
	if (!keep) {
		pp->outside_alloc++;
		return;
	}
	if (rd_prof_room(p, (void **)&p->av, &p->avcap, p->ast.n, sizeof *p->av) < 0)
		return;
	k = stack_of(p, &p->ast, src, it->proc->index,
	             it->th ? (int32_t)it->th->tid : -1, tag,
	             ev->u.custom.bytes + sizeof r, r.nframes, 0, -1);
	if (k < 0) {
		p->oom = 1;
		return;
	}
	/* sampled with probability q = 1 - exp(-size / period) */
	q = r.period && r.size ? -expm1(-(double)r.size / (double)r.period) : 1.0;
	if (!(q > 0)) /* a size far below the period: q underflowed */
		q = (double)r.size / (double)r.period;
	if (!(q > 0) || q > 1)
		q = 1.0;
	obj = 1.0 / q;
	bytes = (double)r.size / q;
	p->av[k].aobj += obj;
	p->av[k].abytes += bytes;
	p->av[k].avar += bytes * bytes * (1.0 - q);
	p->av[k].n++;
	p->av[k].sampled += r.size;
	pp->alloc_samples++;
	/* The smallest: a realloc's sample records a longer one (its
	 * clock advanced by less than its size: include/rte/profile.h). */
	if (r.period && (!p->period || r.period < p->period))
		p->period = r.period;
	add_aev(p, it, r.addr, (uint32_t)k, r.size, obj, bytes);
}

static void on_alloc_free(struct rd_prof *p, struct pproc *pp,
                          const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	struct rte_alloc_free_rec r;

	if (ev->u.custom.len < sizeof r) {
		pp->bad_free++;
		return;
	}
	memcpy(&r, ev->u.custom.bytes, sizeof r);
	if (r.version != RTE_ALLOC_FREE_VERSION) {
		pp->bad_free++;
		return;
	}
	pp->has_alloc = 1;
	if (add_aev(p, it, r.addr, UINT32_MAX, 0, 0, 0) == 0)
		p->aev[p->naev - 1].flags = r.flags;
}

static void on_int(struct rd_prof *p, struct pproc *pp, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	const char *n = ev->name + 10; /* after "rte.alloc." */
	uint64_t v = ev->u.value > 0 ? (uint64_t)ev->u.value : 0;

	/* heap.h's rule, the exporter's too: calls come from the alloc
	 * events (rd_alloc_calls), rte.alloc.calls only repeats them */
	switch (rd_alloc_fig_of(n)) {
	case RD_AF_BYTES:
		pp->bytes += v;
		break;
	case RD_AF_FREES:
		pp->frees += v;
		break;
	case RD_AF_FREED:
		pp->freed += v;
		break;
	case RD_AF_USABLE:
		pp->usable += v;
		pp->has_usable = 1;
		break;
	default:
		if (strcmp(n, "calls") && !rd_heap_int(p, pp, n, it->ts, v))
			return;
	}
	pp->has_alloc = 1;
}

void rd_prof_event(struct rd_prof *p, const struct rd_procs *P,
                   const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	struct pproc *pp;
	unsigned src;

	if (!p || !it->proc || !it->src)
		return;
	if (ev->kind != RTE_EV_ALLOC &&
	    ((ev->kind != RTE_EV_USER_CUSTOM && ev->kind != RTE_EV_USER_INT) ||
	     !ev->name || strncmp(ev->name, "rte.", 4)))
		return;
	if (!(pp = pproc_of(p, it->proc)))
		return;
	src = (unsigned)(it->src - P->src);
	p->settled = 0;
	if (ev->kind == RTE_EV_ALLOC) {
		pp->alloc_events++;
		pp->has_alloc = 1;
		pp->calls += rd_alloc_calls(ev->u.buckets);
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			pp->hist[i] += ev->u.buckets[i];
	} else if (ev->kind == RTE_EV_USER_INT) {
		if (!strncmp(ev->name, "rte.alloc.", 10))
			on_int(p, pp, it);
	} else if (!strcmp(ev->name, "rte.module")) {
		on_module(p, src, ev, 1);
	} else if (!strcmp(ev->name, "rte.module.unload")) {
		on_module(p, src, ev, 0);
	} else if (!strcmp(ev->name, RTE_SAMPLE_EV)) {
		on_sample(p, pp, src, it);
	} else if (!strcmp(ev->name, RTE_ALLOC_EV_SAMPLE)) {
		on_alloc_sample(p, pp, src, it);
	} else if (!strcmp(ev->name, RTE_ALLOC_EV_FREE)) {
		on_alloc_free(p, pp, it);
	}
}

int rd_prof_sample(struct rd_prof *p, const struct rd_procs *P,
                   const struct rd_item *it, struct rd_prof_stack *st)
{
	const struct rte_event *ev = it->ev;
	struct rte_sample_rec r;
	unsigned src;
	struct psrc *s;

	if (!p || !it->src || ev->kind != RTE_EV_USER_CUSTOM || !ev->name ||
	    strcmp(ev->name, RTE_SAMPLE_EV) || sample_rec(ev, &r) < 0)
		return 0;
	src = (unsigned)(it->src - P->src);
	if (!(s = psrc_of(p, src)))
		return 0;
	st->cpu_ns = r.cpu_ns;
	st->tid = r.tid;
	st->truncated = !!(r.flags & RTE_STACK_TRUNCATED);
	st->n = r.nframes;
	for (unsigned i = 0; i < r.nframes; i++) {
		uint64_t pc;
		int64_t l;

		memcpy(&pc, ev->u.custom.bytes + sizeof r + 8 * i, 8);
		if ((l = loc_of(p, src, s, pc, i >= 1)) < 0) {
			p->oom = 1;
			return 0;
		}
		st->func[i] = pstr(p, p->fn[p->loc[l].func].name);
	}
	return 1;
}
