/*
 * metrics.c - per-process Prometheus metrics from ring files, and their
 * exposition (see metrics.h; every metric is in doc/METRICS.md).
 *
 * Each followed file has its own cursor, read ring after ring through
 * rte_cursor_peek_words() (a file is never read twice, and kept mapped;
 * the one walk over each block of messages is ours), and its own
 * rd_procs, so begin/end matching is procs.c's, identical to the summary
 * formats', and a file is dropped by freeing what is its own.
 * Values are kept per process (pid) in series: one per family and label
 * set, found through a hash table keyed by (family, ring, id, name) behind
 * a small per-file cache keyed by (family, ring, event id).
 *
 * Two paths: the general one decodes each message into an rte_event
 * (rte_cursor_decode) for rd_procs_update() and account(); the fast one
 * (fast_msg) takes the steady stream of an exporter's load, user spans,
 * ints and units and runtime phases and counters whose series the general
 * path found already, straight from the message words: an array index per
 * message, no decoding into a struct, no hashing, event counts per block;
 * a leaf span (begin and end next to each other) in one step (fast_leaf).
 * Both update the same per-ring state (span stacks), message by message,
 * so the values are the same whichever path a message takes.
 *
 * The exposition is written in place (render_hist): room made once, no
 * stdio; the same bytes as sample by sample.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "ocamlver.h"
#include "rte/crash.h"
#include "procs.h"
#include "vec.h"

/* ---- families ------------------------------------------------------------ */

enum ftype { T_COUNTER, T_GAUGE, T_HIST };

enum fam {
	PF_EVENTS, PF_LOST, PF_PHASE, PF_PAUSE, PF_PHASE_TIME, PF_SPAN,
	PF_COUNTER, PF_COUNTER_ACC, PF_INT, PF_USER, PF_LIFECYCLE,
	PF_ALLOC_CALLS, PF_ALLOC_BYTES, PF_ALLOC_USABLE, PF_ALLOC_FREES,
	PF_ALLOC_FREED, PF_CRASHES, PF_N,
	PF_NAMESET = PF_N /* the set of a process's user names, not rendered */
};

struct famdef {
	const char *name; /* without _total for counters */
	enum ftype type;
	const char *help;
};

static const struct famdef fams[PF_N] = {
	[PF_EVENTS] = { "rte_events", T_COUNTER,
		"Events read from the process's ring files, by kind." },
	[PF_LOST] = { "rte_lost_words", T_COUNTER,
		"Ring words overwritten by the writer before they were read." },
	[PF_PHASE] = { "rte_runtime_phase_duration_seconds", T_HIST,
		"Durations of runtime phases (matched begin/end), by phase name." },
	[PF_PAUSE] = { "rte_gc_pause_duration_seconds", T_HIST,
		"Durations of outermost runtime phases on a thread (GC pauses)." },
	[PF_PHASE_TIME] = { "rte_runtime_phase_seconds", T_COUNTER,
		"Time with a runtime phase open, summed over threads (GC time)." },
	[PF_SPAN] = { "rte_span_duration_seconds", T_HIST,
		"Durations of user spans (matched begin/end), by span name." },
	[PF_COUNTER] = { "rte_runtime_stat", T_GAUGE,
		"Last value of each runtime counter (OCaml's EV_C_* statistics)." },
	[PF_COUNTER_ACC] = { "rte_runtime_stat_accumulated", T_COUNTER,
		"Sum of the values of each runtime counter." },
	[PF_INT] = { "rte_user_int", T_GAUGE,
		"Last value of each user int event." },
	[PF_USER] = { "rte_user_events", T_COUNTER,
		"User unit, int and custom events, by name and kind." },
	[PF_LIFECYCLE] = { "rte_lifecycle_events", T_COUNTER,
		"Lifecycle events (ring_start, fork_child, ...), by name." },
	[PF_ALLOC_CALLS] = { "rte_alloc_calls", T_COUNTER,
		"Allocations reported by alloc events (allocation profiler)." },
	[PF_ALLOC_BYTES] = { "rte_alloc_bytes", T_COUNTER,
		"Bytes asked for by the allocations rte's profiler counted (rte.alloc.bytes), exact." },
	[PF_ALLOC_USABLE] = { "rte_alloc_usable_bytes", T_COUNTER,
		"Usable bytes (malloc_usable_size) of those allocations (rte.alloc.usable)." },
	[PF_ALLOC_FREES] = { "rte_alloc_frees", T_COUNTER,
		"Frees rte's profiler counted (rte.alloc.frees)." },
	[PF_ALLOC_FREED] = { "rte_alloc_freed_bytes", T_COUNTER,
		"Usable bytes (malloc_usable_size) of those frees (rte.alloc.freed)." },
	[PF_CRASHES] = { "rte_crashes", T_COUNTER,
		"Crashes recorded (rte.crash events)." },
};

/* Histogram bounds: 1 us .. 10 s in 1-2.5-5 steps (doc/METRICS.md). */
#define NB 22
static const uint64_t bound_ns[NB] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000, 100000000,
	250000000, 500000000, 1000000000, 2500000000u, 5000000000u, 10000000000u,
};
/* The `le` label of each bucket and what follows it up to the count. */
#define LE_MAX 18 /* at least the longest: ,le="2.5e-06"} */
static const struct { char s[LE_MAX + 1]; unsigned char n; } le_txt[NB + 1] = {
#define LE(t) { ",le=\"" t "\"} ", sizeof ",le=\"" t "\"} " - 1 }
	LE("1e-06"), LE("2.5e-06"), LE("5e-06"), LE("1e-05"), LE("2.5e-05"),
	LE("5e-05"), LE("0.0001"), LE("0.00025"), LE("0.0005"), LE("0.001"),
	LE("0.0025"), LE("0.005"), LE("0.01"), LE("0.025"), LE("0.05"), LE("0.1"),
	LE("0.25"), LE("0.5"), LE("1"), LE("2.5"), LE("5"), LE("10"), LE("+Inf"),
#undef LE
};

/* ---- data ---------------------------------------------------------------- */

struct series {
	int fam, rk;       /* key: family, ring (-1: aggregated) */
	unsigned id;       /* key: kind or runtime id */
	char *name;        /* key: name (NULL for unnamed families) */
	char *labels;      /* rendered: ",name=\"x\"..." after pid and exe */
	size_t nlabels;    /* its length */
	uint64_t v;        /* counter, or gauge (u64 bits) */
	int64_t last;      /* PF_INT */
	uint64_t count, sum_ns;
	uint64_t *b;       /* PF_PHASE, PF_PAUSE, PF_SPAN: NB + 1 buckets */
};

struct vec {
	struct series **v;
	size_t n, cap;
};

struct proc {
	long pid;
	char *labels;                /* pid="1",exe="x" */
	size_t nlabels;              /* its length */
	struct series **tab;         /* open addressing, power of two */
	size_t tabcap, nser;
	struct vec fam[PF_N];
	unsigned nnames;
	int limited;                 /* some name went to "other" */
	unsigned nfiles, ndone;
	int final, delivered, oom;
	int exe_known;               /* the exe label came from rte.module */
};

#define CACHE 512

/* What fast_run() adds to for user event id: the span histogram, the int
 * gauge, and the PF_USER counter of the id's kind. */
struct fast_user {
	const char *name; /* the cursor's, for rd_spans_begin() */
	struct series *span, *ival, *count;
};

/* Per ring of a file. */
struct ring {
	uint64_t last_ts;  /* of its last event: where a loss is placed */
	int dead;          /* failed: not read again */
	int used;          /* written to once: read on every poll */
};

struct centry {
	int fam, rk;
	unsigned id;
	struct series *s;
};

struct file {
	char *path;
	rte_cursor *c;
	struct ring *rings;
	struct rd_procs procs;
	struct proc *proc;
	int done, failed;
	unsigned next_ring; /* where the pass the budget stopped goes on */
	struct series *by_kind[RTE_EV_KIND_COUNT]; /* rte_events_total, no ring */
	struct centry cache[CACHE];
	/* The fast path's series (fast_run), aggregated ones only: set by
	 * account() when the general path has found them, NULL until then. */
	struct fast_user *fu;  /* by user event id, grown to the highest */
	size_t nfu;            /* id seen + 1 */
	struct series *phase[RTE_P_COUNT], *pause, *phase_time;
	struct series *ctr[RTE_C_COUNT], *ctr_acc[RTE_C_COUNT];
	const char *phase_name[RTE_P_COUNT]; /* as decoded (may be NULL) */
	unsigned char phase_seen[RTE_P_COUNT]; /* phase_name is known */
};

struct rd_prom {
	struct rd_prom_opts o;
	struct file **f;
	size_t nf, fcap;
	struct proc **p;
	size_t np, pcap;
	uint64_t events_read, bytes_read, errors, scrapes, scrape_ns;
	uint64_t files_total;
	size_t last_len;            /* of the last exposition: room made at once */
	unsigned char first_ge[64]; /* bucket_of()'s table */
	void (*between)(void *);    /* rd_prom_between() */
	void *between_ud;
};

/* ---- output buffer ------------------------------------------------------- */

/* Room for n more bytes and a NUL at the end of b: where they go, or NULL
 * if out of memory (b->oom is set). */
static char *room(struct rd_buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *p;

		while (cap < b->n + n + 1)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->oom = 1;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->n;
}

/* What was written at room()'s pointer ends at o. */
static void grown(struct rd_buf *b, char *o)
{
	b->n = (size_t)(o - b->p);
	*o = 0;
}

static inline char *put(char *o, const void *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* v in decimal: at most 20 bytes. */
static char *put_u64(char *o, uint64_t v)
{
	char t[20];
	size_t i = sizeof t;

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return put(o, t + i, sizeof t - i);
}

/* Nanoseconds as exact decimal seconds: at most 30 bytes. */
static char *put_secs(char *o, uint64_t ns)
{
	unsigned f = (unsigned)(ns % 1000000000u);

	o = put_u64(o, ns / 1000000000u);
	*o++ = '.';
	for (int i = 8; i >= 0; i--, f /= 10)
		o[i] = (char)('0' + f % 10);
	return o + 9;
}

void rd_buf_mem(struct rd_buf *b, const void *s, size_t n)
{
	char *o = room(b, n);

	if (o)
		grown(b, put(o, s, n));
}

void rd_buf_str(struct rd_buf *b, const char *s)
{
	rd_buf_mem(b, s, strlen(s));
}

void rd_buf_u64(struct rd_buf *b, uint64_t v)
{
	char *o = room(b, 20);

	if (o)
		grown(b, put_u64(o, v));
}

static void buf_i64(struct rd_buf *b, int64_t v)
{
	if (v < 0) {
		rd_buf_mem(b, "-", 1);
		rd_buf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		rd_buf_u64(b, (uint64_t)v);
	}
}

/* Nanoseconds as exact decimal seconds. */
static void buf_secs(struct rd_buf *b, uint64_t ns)
{
	char *o = room(b, 30);

	if (o)
		grown(b, put_secs(o, ns));
}

/* A label value: valid UTF-8 kept, other bytes as '?', and \\ \" \n
 * escaped as both formats want. */
static void buf_label(struct rd_buf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		unsigned n = 0, c = *u;

		if (c == '\\' || c == '"') {
			char e[2] = { '\\', (char)c };

			rd_buf_mem(b, e, 2);
			u++;
			continue;
		}
		if (c == '\n') {
			rd_buf_mem(b, "\\n", 2);
			u++;
			continue;
		}
		if (c < 0x80)
			n = 1;
		else if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef)
			n = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4;
		for (unsigned k = 1; k < n; k++)
			if ((u[k] & 0xc0) != 0x80)
				n = 0;
		if (n == 0 || (c < 0x20 && c != '\t')) {
			rd_buf_mem(b, "?", 1);
			u++;
		} else {
			rd_buf_mem(b, u, n);
			u += n;
		}
	}
}

/* ---- series --------------------------------------------------------------- */

static uint64_t key_hash(int fam, int rk, unsigned id, const char *name)
{
	uint64_t h = 1469598103934665603ull;

	h = (h ^ (uint64_t)(unsigned)fam) * 1099511628211ull;
	h = (h ^ (uint64_t)(unsigned)rk) * 1099511628211ull;
	h = (h ^ id) * 1099511628211ull;
	for (const char *s = name; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ (h >> 29);
}

static int key_eq(const struct series *s, int fam, int rk, unsigned id,
                  const char *name)
{
	if (s->fam != fam || s->rk != rk || s->id != id)
		return 0;
	if (!s->name || !name)
		return s->name == name;
	return !strcmp(s->name, name);
}

static int tab_grow(struct proc *P)
{
	size_t cap = P->tabcap ? 2 * P->tabcap : 64;
	struct series **t = calloc(cap, sizeof *t);

	if (!t)
		return -1;
	for (size_t i = 0; i < P->tabcap; i++) {
		struct series *s = P->tab[i];
		size_t j;

		if (!s)
			continue;
		j = key_hash(s->fam, s->rk, s->id, s->name) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = s;
	}
	free(P->tab);
	P->tab = t;
	P->tabcap = cap;
	return 0;
}

static int vec_push(struct vec *v, struct series *s)
{
	if (RD_VEC_ROOM(v->v, v->cap, v->n, 16) < 0)
		return -1;
	v->v[v->n++] = s;
	return 0;
}

static const char *const user_kind[] = { "user_unit", "user_int", "user_custom" };

/* The `kind` label of rte_events_total: rte_event_kind_name() but with
 * span begins and ends apart. */
static const char *const event_kind[RTE_EV_KIND_COUNT] = {
	[RTE_EV_BEGIN] = "begin", [RTE_EV_END] = "end",
	[RTE_EV_COUNTER] = "counter", [RTE_EV_ALLOC] = "alloc",
	[RTE_EV_LIFECYCLE] = "lifecycle", [RTE_EV_LOST] = "lost",
	[RTE_EV_USER_UNIT] = "user_unit", [RTE_EV_USER_INT] = "user_int",
	[RTE_EV_USER_SPAN_BEGIN] = "user_span_begin",
	[RTE_EV_USER_SPAN_END] = "user_span_end",
	[RTE_EV_USER_CUSTOM] = "user_custom",
};

/* The label text of a new series. */
static char *make_labels(int fam, int rk, unsigned id, const char *name)
{
	struct rd_buf b = { 0 };

	if (name) {
		rd_buf_str(&b, ",name=\"");
		buf_label(&b, name);
		rd_buf_str(&b, "\"");
	}
	if (fam == PF_EVENTS) {
		rd_buf_str(&b, ",kind=\"");
		rd_buf_str(&b, id < RTE_EV_KIND_COUNT ? event_kind[id] : "unknown");
		rd_buf_str(&b, "\"");
	}
	if (fam == PF_USER && id < 3) {
		rd_buf_str(&b, ",kind=\"");
		rd_buf_str(&b, user_kind[id]);
		rd_buf_str(&b, "\"");
	}
	if (rk >= 0) {
		rd_buf_str(&b, ",ring=\"");
		rd_buf_u64(&b, (uint64_t)rk);
		rd_buf_str(&b, "\"");
	}
	rd_buf_mem(&b, "", 0);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p ? b.p : strdup("");
}

static void series_free(struct series *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->labels);
	free(s->b);
	free(s);
}

/* The series of the key, created if new; NULL if out of memory. */
static struct series *series_get(struct proc *P, int fam, int rk, unsigned id,
                                 const char *name)
{
	struct series *s;
	size_t j;

	if (P->tabcap == 0 || 2 * (P->nser + 1) > P->tabcap)
		if (tab_grow(P) < 0)
			goto oom;
	j = key_hash(fam, rk, id, name) & (P->tabcap - 1);
	for (; (s = P->tab[j]) != NULL; j = (j + 1) & (P->tabcap - 1))
		if (key_eq(s, fam, rk, id, name))
			return s;
	s = calloc(1, sizeof *s);
	if (!s)
		goto oom;
	s->fam = fam;
	s->rk = rk;
	s->id = id;
	if ((name && !(s->name = strdup(name))) ||
	    (fam != PF_NAMESET && !(s->labels = make_labels(fam, rk, id, name))) ||
	    ((fam == PF_PHASE || fam == PF_PAUSE || fam == PF_SPAN) &&
	     !(s->b = calloc(NB + 1, sizeof *s->b))) ||
	    (fam != PF_NAMESET && vec_push(&P->fam[fam], s) < 0)) {
		series_free(s);
		goto oom;
	}
	if (s->labels)
		s->nlabels = strlen(s->labels);
	P->tab[j] = s;
	P->nser++;
	return s;
oom:
	P->oom = 1;
	return NULL;
}

/* The name a user event's series uses: its own while the process has
 * fewer than max_names, else "other". */
static const char *user_name(struct rd_prom *p, struct proc *P, const char *name)
{
	size_t j;
	struct series *s;

	if (P->tabcap) {
		j = key_hash(PF_NAMESET, -1, 0, name) & (P->tabcap - 1);
		for (; (s = P->tab[j]) != NULL; j = (j + 1) & (P->tabcap - 1))
			if (key_eq(s, PF_NAMESET, -1, 0, name))
				return name;
	}
	if (P->nnames >= p->o.max_names) {
		P->limited = 1;
		return "other";
	}
	if (!series_get(P, PF_NAMESET, -1, 0, name))
		return "other";
	P->nnames++;
	return name;
}

/* ---- accounting ---------------------------------------------------------- */

static unsigned cache_slot(int fam, int rk, unsigned id)
{
	return ((unsigned)fam * 8191u + (unsigned)(rk + 1) * 131u + id) & (CACHE - 1);
}

/* The series for (fam, ring, event id) of file f: cached when `named`
 * (user events whose name slot is still empty are not cached). */
static inline struct series *lookup(struct rd_prom *p, struct file *f, int fam,
                             int rk, unsigned id, unsigned kid,
                             const char *name, int user)
{
	struct centry *c = &f->cache[cache_slot(fam, rk, id)];
	struct series *s;
	char buf[48];

	if (c->s && c->fam == fam && c->rk == rk && c->id == id)
		return c->s;
	if (user) {
		int named = name && name[0];

		if (!named) {
			snprintf(buf, sizeof buf, "(unnamed %u)", id);
			name = buf;
		}
		s = series_get(f->proc, fam, rk, kid, user_name(p, f->proc, name));
		if (!named)
			return s;
	} else {
		s = series_get(f->proc, fam, rk, kid, name);
	}
	if (s) {
		c->fam = fam;
		c->rk = rk;
		c->id = id;
		c->s = s;
	}
	return s;
}

/* first_ge[k] = the first bucket whose bound is >= 2^k (NB: none). */
static void bucket_table(unsigned char first_ge[64])
{
	for (unsigned k = 0, i = 0; k < 64; k++) {
		while (i < NB && bound_ns[i] < (uint64_t)1 << k)
			i++;
		first_ge[k] = (unsigned char)i;
	}
}

/* The bucket of ns: the first whose bound is >= ns (NB: +Inf). One bound
 * at most lies in [2^k, 2^(k+1)) (each bound is at least twice the one
 * before), so the table's guess is right or one short. */
static inline unsigned bucket_of(const unsigned char first_ge[64], uint64_t ns)
{
	unsigned i;

	if (ns == 0)
		return 0;
	i = first_ge[63 - __builtin_clzll(ns)];
	return i < NB && bound_ns[i] < ns ? i + 1 : i;
}

static inline void hist_add(const struct rd_prom *p, struct series *s,
                            uint64_t ns)
{
	if (!s)
		return;
	s->b[bucket_of(p->first_ge, ns)]++;
	s->count++;
	if (__builtin_add_overflow(s->sum_ns, ns, &s->sum_ns))
		s->sum_ns = UINT64_MAX;
}

static void add(struct series *s, uint64_t v)
{
	if (s)
		s->v += v;
}

/* Ring words of an event's message, for rte_exporter_read_bytes_total. */
static uint64_t event_words(const struct rte_event *ev)
{
	switch (ev->kind) {
	case RTE_EV_LOST:
		return 0;
	case RTE_EV_BEGIN:
	case RTE_EV_END:
	case RTE_EV_USER_UNIT:
	case RTE_EV_USER_SPAN_BEGIN:
	case RTE_EV_USER_SPAN_END:
		return 2;
	case RTE_EV_ALLOC:
		return 2 + RTE_ALLOC_BUCKETS;
	case RTE_EV_USER_CUSTOM:
		return 2 + rte_custom_words(ev->u.custom.len);
	default:
		return 3;
	}
}

static int is_prefix(const char *s, const char *pre)
{
	return s && !strncmp(s, pre, strlen(pre));
}

/* The family of an rte.alloc.* int event of rte's allocation profiler
 * (include/rte/profile.h; its calls are counted from the alloc event),
 * or -1. */
static int alloc_fam(const char *name)
{
	if (!is_prefix(name, "rte.alloc."))
		return -1;
	name += 10;
	return !strcmp(name, "bytes")    ? PF_ALLOC_BYTES
	       : !strcmp(name, "usable") ? PF_ALLOC_USABLE
	       : !strcmp(name, "frees")  ? PF_ALLOC_FREES
	       : !strcmp(name, "freed")  ? PF_ALLOC_FREED
	                                 : -1;
}

static void exe_from_module(struct proc *P, const struct rte_event *ev);

/* The fast path's entry for user event ev (named, aggregated series:
 * those lookup() caches too), grown to hold it; NULL if it may not be
 * cached or out of memory. */
static struct fast_user *fast_user_of(struct file *f, int rk,
                                      const struct rte_event *ev)
{
	if (rk >= 0 || !ev->name || !ev->name[0])
		return NULL;
	if (ev->kind == RTE_EV_USER_INT && alloc_fam(ev->name) >= 0)
		return NULL; /* also summed (account()): one a flush, rare */
	if (ev->id >= f->nfu) {
		size_t n = ev->id + 1 > 2 * f->nfu ? ev->id + 1 : 2 * f->nfu;
		struct fast_user *u = realloc(f->fu, n * sizeof *u);

		if (!u)
			return NULL;
		memset(u + f->nfu, 0, (n - f->nfu) * sizeof *u);
		f->fu = u;
		f->nfu = n;
	}
	f->fu[ev->id].name = ev->name;
	return &f->fu[ev->id];
}

/* The general path: one event, every kind, any series. Aggregated series
 * it finds are kept for fast_run(). */
static void account(struct rd_prom *p, struct file *f, const struct rd_item *it)
{
	const struct rte_event *ev = it->ev;
	int rk = p->o.per_thread ? (int)ev->ring : -1;
	char nb[48];
	struct series *s;
	struct fast_user *fu;

	p->events_read++;
	p->bytes_read += 8 * event_words(ev);
	if (ev->kind == RTE_EV_LOST) {
		add(lookup(p, f, PF_LOST, rk, 0, 0, NULL, 0), ev->u.lost_words);
		return;
	}
	if (rk < 0 && (unsigned)ev->kind < RTE_EV_KIND_COUNT) { /* the common case */
		s = f->by_kind[ev->kind];
		if (!s)
			s = f->by_kind[ev->kind] =
				lookup(p, f, PF_EVENTS, rk, ev->kind, ev->kind, NULL, 0);
		add(s, 1);
	} else {
		add(lookup(p, f, PF_EVENTS, rk, ev->kind, ev->kind, NULL, 0), 1);
	}
	switch (ev->kind) {
	case RTE_EV_BEGIN:
		if (ev->id < RTE_P_COUNT) {
			f->phase_name[ev->id] = ev->name;
			f->phase_seen[ev->id] = 1;
		}
		break;
	case RTE_EV_END:
		if (!it->matched)
			break;
		s = lookup(p, f, PF_PHASE, rk, ev->id, ev->id,
		           rte_event_name(ev, nb, sizeof nb), 0);
		hist_add(p, s, it->dur);
		if (rk < 0 && ev->id < RTE_P_COUNT)
			f->phase[ev->id] = s;
		if (it->th->phases.depth == 0 && it->ts >= it->th->phase_open_ts) {
			uint64_t d = it->ts - it->th->phase_open_ts;

			hist_add(p, s = lookup(p, f, PF_PAUSE, rk, 0, 0, NULL, 0), d);
			if (rk < 0)
				f->pause = s;
			add(s = lookup(p, f, PF_PHASE_TIME, rk, 0, 0, NULL, 0), d);
			if (rk < 0)
				f->phase_time = s;
		}
		break;
	case RTE_EV_USER_SPAN_END:
		if (!it->matched)
			break;
		s = lookup(p, f, PF_SPAN, rk, ev->id, 0, ev->name, 1);
		hist_add(p, s, it->dur);
		if ((fu = fast_user_of(f, rk, ev)) != NULL)
			fu->span = s;
		break;
	case RTE_EV_COUNTER:
		s = lookup(p, f, PF_COUNTER, rk, ev->id, ev->id,
		           rte_event_name(ev, nb, sizeof nb), 0);
		if (s)
			s->v = ev->u.counter;
		if (rk < 0 && ev->id < RTE_C_COUNT)
			f->ctr[ev->id] = s;
		s = lookup(p, f, PF_COUNTER_ACC, rk, ev->id, ev->id,
		           rte_event_name(ev, nb, sizeof nb), 0);
		add(s, ev->u.counter);
		if (rk < 0 && ev->id < RTE_C_COUNT)
			f->ctr_acc[ev->id] = s;
		break;
	case RTE_EV_USER_INT:
		if (is_prefix(ev->name, "rte.thread."))
			break;
		if (alloc_fam(ev->name) >= 0 && ev->u.value > 0)
			add(lookup(p, f, alloc_fam(ev->name), rk, 0, 0, NULL, 0),
			    (uint64_t)ev->u.value);
		s = lookup(p, f, PF_INT, rk, ev->id, 0, ev->name, 1);
		if (s)
			s->last = ev->u.value;
		if ((fu = fast_user_of(f, rk, ev)) != NULL)
			fu->ival = s;
		s = lookup(p, f, PF_USER, rk, ev->id, 1, ev->name, 1);
		add(s, 1);
		if (fu)
			fu->count = s;
		break;
	case RTE_EV_USER_UNIT:
	case RTE_EV_USER_CUSTOM:
		if (ev->kind == RTE_EV_USER_CUSTOM && !f->proc->exe_known &&
		    ev->name && !strcmp(ev->name, "rte.module"))
			exe_from_module(f->proc, ev);
		if (ev->kind == RTE_EV_USER_CUSTOM && ev->name &&
		    !strcmp(ev->name, "rte.crash"))
			add(lookup(p, f, PF_CRASHES, rk, 0, 0, NULL, 0), 1);
		if (is_prefix(ev->name, "rte.thread."))
			break;
		s = lookup(p, f, PF_USER, rk, ev->id,
		           ev->kind == RTE_EV_USER_UNIT ? 0 : 2, ev->name, 1);
		add(s, 1);
		if (ev->kind == RTE_EV_USER_UNIT && (fu = fast_user_of(f, rk, ev)))
			fu->count = s;
		break;
	case RTE_EV_LIFECYCLE:
		add(lookup(p, f, PF_LIFECYCLE, rk, ev->id, ev->id,
		           rte_event_name(ev, nb, sizeof nb), 0), 1);
		break;
	case RTE_EV_ALLOC: {
		uint64_t calls = 0;

		/* the buckets give sizes in ranges only: the bytes come
		 * from rte.alloc.bytes, exact */
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			calls += ev->u.buckets[i];
		add(lookup(p, f, PF_ALLOC_CALLS, rk, 0, 0, NULL, 0), calls);
		break;
	}
	default:
		break;
	}
}

/* ---- files and processes ------------------------------------------------- */

/* pid="N",exe="NAME", NAME the base name of path. */
static char *labels_of(long pid, const char *exe)
{
	struct rd_buf b = { 0 };

	rd_buf_str(&b, "pid=\"");
	buf_i64(&b, pid);
	rd_buf_str(&b, "\",exe=\"");
	buf_label(&b, strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
	rd_buf_str(&b, "\"");
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* The labels of a process first seen: its exe is /proc/PID/exe's while
 * serving ("" if it cannot be read; with --push the pid may be another
 * process's by now), until the file's rte.module record says (see
 * exe_from_module). */
static char *proc_labels(struct rd_prom *p, long pid)
{
	char link[64], exe[4096] = "";
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%ld/exe", pid);
	if (p->o.exporter && pid > 0 && (n = readlink(link, exe, sizeof exe - 1)) > 0)
		exe[n] = 0;
	return labels_of(pid, exe);
}

/* The first rte.module record of a process is its executable's (the shim
 * writes the executable first, with its /proc/self/exe path): its path
 * names the process in the exe label. */
static void exe_from_module(struct proc *P, const struct rte_event *ev)
{
	const uint8_t *b = ev->u.custom.bytes;
	size_t len = ev->u.custom.len, skip;
	struct rte_module_rec r;
	char path[4096], *l;

	P->exe_known = 1;
	if (len < sizeof r)
		return;
	memcpy(&r, b, sizeof r);
	skip = sizeof r + r.build_id_len;
	if (r.version != RTE_MODULE_VERSION || skip >= len || len - skip >= sizeof path)
		return;
	memcpy(path, b + skip, len - skip);
	path[len - skip] = 0;
	if (memchr(path, 0, len - skip) || !(l = labels_of(P->pid, path)))
		return;
	free(P->labels);
	P->labels = l;
	P->nlabels = strlen(l);
}

static struct proc *proc_of(struct rd_prom *p, long pid)
{
	struct proc *P;

	/* A final process not scraped yet takes its new file (it exec'd): one
	 * label set must never be rendered twice. */
	for (size_t i = 0; i < p->np; i++)
		if (p->p[i]->pid == pid && !p->p[i]->delivered) {
			p->p[i]->final = 0;
			return p->p[i];
		}
	if (RD_VEC_ROOM(p->p, p->pcap, p->np, 16) < 0)
		return NULL;
	P = calloc(1, sizeof *P);
	if (!P || !(P->labels = proc_labels(p, pid))) {
		free(P);
		return NULL;
	}
	P->nlabels = strlen(P->labels);
	P->pid = pid;
	p->p[p->np++] = P;
	return P;
}

static void proc_free(struct proc *P)
{
	for (size_t i = 0; i < P->tabcap; i++)
		series_free(P->tab[i]);
	for (int k = 0; k < PF_N; k++)
		free(P->fam[k].v);
	free(P->tab);
	free(P->labels);
	free(P);
}

static void file_free(struct file *f)
{
	rte_cursor_close(f->c);
	free(f->rings);
	rd_procs_fini(&f->procs);
	free(f->fu);
	free(f->path);
	free(f);
}

rd_prom *rd_prom_new(const struct rd_prom_opts *o)
{
	rd_prom *p = calloc(1, sizeof *p);

	if (p) {
		p->o = *o;
		bucket_table(p->first_ge);
	}
	return p;
}

void rd_prom_free(rd_prom *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nf; i++)
		file_free(p->f[i]);
	for (size_t i = 0; i < p->np; i++)
		proc_free(p->p[i]);
	free(p->f);
	free(p->p);
	free(p);
}

void rd_prom_error(rd_prom *p)
{
	p->errors++;
}

int rd_prom_follows(const rd_prom *p, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < p->nf; i++) {
		const struct stat *st = rte_cursor_stat(p->f[i]->c);

		if (st->st_dev == dev && st->st_ino == ino)
			return 1;
	}
	return 0;
}

int rd_prom_add_file(rd_prom *p, const char *path, rte_cursor *c)
{
	struct file *f = calloc(1, sizeof *f);
	long pid;

	if (f) {
		rd_procs_init(&f->procs);
		f->c = c;
	}
	if (!f || !(f->path = strdup(path)) ||
	    !(f->rings = calloc(rte_cursor_rings(c), sizeof *f->rings))) {
		if (!f)
			rte_cursor_close(c);
		goto fail;
	}
	pid = rd_pid_from_ring_start(path);
	if (pid < 0)
		pid = rd_pid_from_name(path);
	/* the names of its ids: the same choice as every other output's */
	rd_ocaml_name(c, f->path, pid);
	if (rd_procs_add_src(&f->procs, 0, f->path, pid, rte_cursor_rings(c)) < 0 ||
	    !(f->proc = proc_of(p, pid)))
		goto fail;
	if (RD_VEC_ROOM(p->f, p->fcap, p->nf, 16) < 0)
		goto fail;
	p->f[p->nf++] = f;
	f->proc->nfiles++;
	p->files_total++;
	return 0;
fail:
	if (f)
		file_free(f);
	return -1;
}

/* ---- reading ----------------------------------------------------------- */

/* Per thread: only the thread reading a file may jump back to it. */
static _Thread_local sigjmp_buf bus_jmp;
static _Thread_local volatile sig_atomic_t bus_armed;
static _Thread_local sigset_t bus_mask;  /* the thread's, saved once */
static _Thread_local int bus_mask_saved;

static void on_sigbus(int sig)
{
	if (bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_jmp, 1);
	}
	signal(sig, SIG_DFL); /* not ours: the fault repeats and kills */
}

void rd_prom_catch_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigbus;
	/* SIGBUS is not blocked in the handler, so the jump out of it leaves
	 * the signal mask as it was: read_guarded() need not save the mask
	 * (a system call per file read) to restore it. (A sanitizer's wrapper
	 * of the handler may block signals all the same: read_guarded()
	 * restores the mask it saved once after a jump.) */
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
}

/* What the fast path adds once per block of words (flush_fast()). */
struct tally {
	uint32_t nk[RTE_EV_KIND_COUNT]; /* events by kind */
};

/* Account the fast path's events of a block (counted in t by kind, the
 * last one at `last`), as account() and rd_procs_update() do per event.
 * Returns their number; t is then empty. */
static uint64_t flush_fast(struct rd_prom *p, struct file *f,
                           struct rd_thread *th, struct tally *t,
                           const uint64_t *last)
{
	struct rd_proc *pr = f->procs.src[0].proc;
	uint64_t n = 0, ts;

	if (!last)
		return 0;
	for (unsigned k = 0; k < RTE_EV_KIND_COUNT; k++) {
		if (!t->nk[k])
			continue;
		if (!f->by_kind[k])
			f->by_kind[k] = lookup(p, f, PF_EVENTS, -1, k, k, NULL, 0);
		add(f->by_kind[k], t->nk[k]);
		n += t->nk[k];
	}
	p->events_read += n;
	/* 2 words a message, 3 for ints and counters (fast_msg()) */
	p->bytes_read += 8 * (2 * n + t->nk[RTE_EV_USER_INT] + t->nk[RTE_EV_COUNTER]);
	/* rd_procs_update()'s own steps (procs.h): a ring's events come in
	 * time order, so its last is the block's latest */
	ts = last[1];
	rd_thread_count(th, pr, n);
	rd_times_note(&pr->first_ts, &pr->last_ts, &th->last_ts, ts);
	memset(t, 0, sizeof *t);
	return n;
}

/*
 * The fast path, for aggregated series (not --per-thread): one message m
 * (len >= 2 words) of ring th, decoded here from its words and accounted
 * as rd_cursor_decode(), rd_procs_update() and account() would, for user
 * spans, ints and units and runtime phases and counters whose series (and
 * names) the general path found already (struct fast_user and the arrays
 * of struct file): no struct rte_event, no hashing. Returns the kind of
 * the event if it took the message (its words are 2, 3 for user ints and
 * counters), -1 to leave it to the general path (a first sight of an id,
 * every other kind, short messages, rte.thread.* ints).
 */
static inline int fast_msg(const struct rd_prom *p, struct file *f,
                           struct rd_thread *th, const uint64_t *m,
                           unsigned len)
{
	const struct rd_span_open *d;
	uint64_t h = m[0], ts = m[1], b, dur;
	unsigned id = rte_hdr_id(h), nd;
	const struct fast_user *u = id < f->nfu ? &f->fu[id] : NULL;
	struct series *s;

	if (rte_hdr_is_user(h)) {
		switch (rte_hdr_type(h)) {
		case RTE_UMSG_SPAN_BEGIN:
			if (!u || !u->name)
				return -1;
			rd_spans_begin(&th->spans, id, ts, u->name);
			return RTE_EV_USER_SPAN_BEGIN;
		case RTE_UMSG_SPAN_END:
			if (!u || !(s = u->span))
				return -1;
			if (rd_thread_span_end(th, id, ts, &b, &dur, &d, &nd))
				hist_add(p, s, dur);
			return RTE_EV_USER_SPAN_END;
		case RTE_UMSG_INT:
			if (!u || len < 3 || !(s = u->ival) || !u->count)
				return -1;
			s->last = (int64_t)m[2];
			u->count->v++;
			return RTE_EV_USER_INT;
		case RTE_UMSG_UNIT:
			if (!u || !(s = u->count))
				return -1;
			s->v++;
			return RTE_EV_USER_UNIT;
		default:
			return -1;
		}
	} else {
		switch (rte_hdr_type(h)) {
		case RTE_MSG_BEGIN:
			if (id >= RTE_P_COUNT || !f->phase_seen[id])
				return -1;
			rd_thread_phase_begin(th, id, ts, f->phase_name[id]);
			return RTE_EV_BEGIN;
		case RTE_MSG_EXIT:
			if (id >= RTE_P_COUNT || !(s = f->phase[id]) || !f->pause ||
			    !f->phase_time)
				return -1;
			if (!rd_thread_phase_end(th, id, ts, &b, &dur, &d, &nd))
				return RTE_EV_END;
			hist_add(p, s, dur);
			if (th->phases.depth == 0 && ts >= th->phase_open_ts) {
				hist_add(p, f->pause, ts - th->phase_open_ts);
				f->phase_time->v += ts - th->phase_open_ts;
			}
			return RTE_EV_END;
		case RTE_MSG_COUNTER:
			if (id >= RTE_C_COUNT || len < 3 || !(s = f->ctr[id]) ||
			    !f->ctr_acc[id])
				return -1;
			s->v = m[2];
			f->ctr_acc[id]->v += m[2];
			return RTE_EV_COUNTER;
		default:
			return -1;
		}
	}
}

/*
 * A leaf span, the commonest shape: m (2 words) is the begin of user span
 * id and the 2 words after it are its end. Matched as fast_msg() would
 * match the two (the end pops the begin just pushed) without the push and
 * the pop: 1 if taken, 0 to go message by message. Only while the stack
 * has room, so that the push would not have forgotten an older begin (or
 * failed). The caller has checked that 4 words are there.
 */
static inline int fast_leaf(const struct rd_prom *p, struct file *f,
                            const struct rd_thread *th, const uint64_t *m)
{
	const uint64_t same = ((uint64_t)0x3ff << RTE_HDR_LEN_SHIFT) |
	                      RTE_HDR_USER_BIT | ((uint64_t)0x1fff << RTE_HDR_ID_SHIFT);
	uint64_t h = m[0], e = m[2];
	unsigned id = rte_hdr_id(h);
	const struct fast_user *u;

	if ((h ^ e) & same)
		return 0; /* not the same length, user bit and id */
	if (rte_hdr_len(h) != 2 || !rte_hdr_is_user(h) ||
	    rte_hdr_type(h) != RTE_UMSG_SPAN_BEGIN ||
	    rte_hdr_type(e) != RTE_UMSG_SPAN_END || id >= f->nfu ||
	    th->spans.depth >= th->spans.cap)
		return 0;
	u = &f->fu[id];
	if (!u->name || !u->span)
		return 0;
	hist_add(p, u->span, m[3] >= m[1] ? m[3] - m[1] : 0);
	return 1;
}

/* The general path: one event of ring r (or a loss, placed at the ring's
 * last event) through rd_procs_update() and account(). */
static void general(struct rd_prom *p, struct file *f, unsigned r,
                    const struct rte_event *ev)
{
	struct rd_merge_item mi;
	struct rd_item it;

	mi.ev = ev;
	mi.src = 0;
	mi.ts = ev->kind == RTE_EV_LOST ? f->rings[r].last_ts : ev->ts;
	if (ev->kind != RTE_EV_LOST)
		f->rings[r].last_ts = ev->ts;
	rd_procs_update(&f->procs, &mi, &it);
	account(p, f, &it);
}

/* The messages of w[0..n) of ring r (as rte_cursor_peek_words() returns
 * them: the first one whole, the others to check), each through the fast
 * path or the general one, up to the first message that is cut by n or
 * has no length (the next peek copies it again or says what is wrong).
 * Returns the events read and sets *used to the words walked, or returns
 * -1 if the ring failed (counted as an error). */
static long read_words(struct rd_prom *p, struct file *f, unsigned r,
                       const uint64_t *w, size_t n, size_t *used)
{
	struct rd_thread *th = &f->procs.src[0].threads[r];
	struct tally t;
	int fast = !p->o.per_thread && f->procs.src[0].proc->has_ts;
	long events = 0;
	size_t i = 0;
	const uint64_t *last = NULL; /* the fast path's last message */

	memset(&t, 0, sizeof t);
	while (i < n) {
		const uint64_t *m = w + i;
		unsigned len = rte_hdr_len(m[0]);
		struct rte_event ev;
		int got;

		if (len == 0 || len > n - i)
			break;
		i += len;
		if (fast && len >= 2) {
			int k;

			if (n - i >= 2 && fast_leaf(p, f, th, m)) {
				t.nk[RTE_EV_USER_SPAN_BEGIN]++;
				t.nk[RTE_EV_USER_SPAN_END]++;
				i += 2;
				last = m + 2;
				continue;
			}
			k = fast_msg(p, f, th, m, len);

			if (k >= 0) { /* counted here, accounted per block */
				t.nk[k]++;
				last = m;
				continue;
			}
		}
		got = rte_cursor_decode(f->c, r, m, &ev);
		if (got == 0)
			continue; /* padding, or a type this version skips */
		if (got < 0) {
			flush_fast(p, f, th, &t, last);
			p->errors++;
			f->rings[r].dead = 1;
			return -1;
		}
		events++;
		general(p, f, r, &ev);
		fast = !p->o.per_thread && f->procs.src[0].proc->has_ts;
	}
	events += (long)flush_fast(p, f, th, &t, last);
	if (last && last[1] > f->rings[r].last_ts)
		f->rings[r].last_ts = last[1];
	*used = i;
	return events;
}

/* Read up to budget events of f (0: no limit), ring after ring (the
 * metrics need each ring's order only). A pass over the rings that ran
 * out of budget goes on where it stopped, so a busy ring cannot starve
 * the others. Rings never written to (most of a file's 128) are looked at
 * only when `all_rings`: a poll costs the rings in use. Returns 1 if the
 * budget ran out. */
static int read_file(struct rd_prom *p, struct file *f, size_t budget,
                     int all_rings)
{
	unsigned rings = rte_cursor_rings(f->c);
	size_t n = 0;

	for (; f->next_ring < rings; f->next_ring++) {
		unsigned r = f->next_ring;

		if (!f->rings[r].used) {
			if (!all_rings || !rte_cursor_ring_used(f->c, r))
				continue;
			f->rings[r].used = 1;
		}
		while (!f->rings[r].dead) {
			const uint64_t *w;
			uint64_t lost;
			int got = rte_cursor_peek_words(f->c, r, &w, &lost);
			size_t used;
			long k;

			if (got < 0) {
				p->errors++;
				f->rings[r].dead = 1;
				break;
			}
			if (got == 0 && lost) {
				struct rte_event ev;

				memset(&ev, 0, sizeof ev);
				ev.kind = RTE_EV_LOST;
				ev.ring = r;
				ev.u.lost_words = lost;
				general(p, f, r, &ev);
				continue;
			}
			if (got == 0)
				break;
			if ((k = read_words(p, f, r, w, (size_t)got, &used)) < 0)
				break;
			rte_cursor_consume_words(f->c, r, used);
			n += (size_t)k;
			if (budget && n >= budget)
				return 1;
		}
	}
	f->next_ring = 0;
	return 0;
}

/* read_file() under the SIGBUS guard: -1 if the file was truncated under
 * us (it is then finished and counted as an error). */
static int read_guarded(struct rd_prom *p, struct file *f, size_t budget,
                        int all_rings)
{
	int r;

	if (!bus_mask_saved) /* once per thread: the mask does not change */
		bus_mask_saved = pthread_sigmask(SIG_SETMASK, NULL, &bus_mask) == 0;
	if (sigsetjmp(bus_jmp, 0)) { /* the mask is not saved with it */
		if (bus_mask_saved)
			pthread_sigmask(SIG_SETMASK, &bus_mask, NULL);
		f->failed = f->done = 1;
		p->errors++;
		f->proc->ndone++;
		return -1;
	}
	bus_armed = 1;
	r = read_file(p, f, budget, all_rings);
	bus_armed = 0;
	return r;
}

void rd_prom_between(rd_prom *p, void (*between)(void *), void *ud)
{
	p->between = between;
	p->between_ud = ud;
}

int rd_prom_poll(rd_prom *p, size_t budget, int what, int all_done)
{
	int more = 0;

	for (size_t i = 0; i < p->nf; i++) {
		struct file *f = p->f[i];
		int alive = 1, r;

		if (f->done)
			continue;
		if (i && p->between)
			p->between(p->between_ud);
		if (what & RD_PROM_ALIVE)
			alive = rd_src_alive(&f->procs.src[0], f->c);
		/* every ring when asked to, and at the end */
		r = read_guarded(p, f, budget,
		                 (what & RD_PROM_RINGS) || all_done || !alive);
		if (r)
			more |= r > 0;
		else if (!alive || all_done) {
			f->done = 1;
			f->proc->ndone++;
		}
	}
	for (size_t i = 0; i < p->np; i++) {
		struct proc *P = p->p[i];

		if (!P->final && P->ndone == P->nfiles &&
		    (all_done || ((what & RD_PROM_ALIVE) && !rd_pid_alive(P->pid))))
			P->final = 1;
	}
	return more;
}

void rd_prom_collect(rd_prom *p)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nf; i++) {
		if (p->f[i]->proc->final && p->f[i]->proc->delivered)
			file_free(p->f[i]);
		else
			p->f[k++] = p->f[i];
	}
	p->nf = k;
	k = 0;
	for (size_t i = 0; i < p->np; i++) {
		if (p->p[i]->final && p->p[i]->delivered)
			proc_free(p->p[i]);
		else
			p->p[k++] = p->p[i];
	}
	p->np = k;
}

void rd_prom_scrape_took(rd_prom *p, uint64_t ns)
{
	p->scrape_ns = ns;
}

/* ---- exposition ----------------------------------------------------------- */

static void head(struct rd_buf *b, const char *name, enum ftype t,
                 const char *help, int om)
{
	static const char *const tn[] = { "counter", "gauge", "histogram" };
	const char *suffix = t == T_COUNTER && !om ? "_total" : "";

	rd_buf_str(b, "# HELP ");
	rd_buf_str(b, name);
	rd_buf_str(b, suffix);
	rd_buf_str(b, " ");
	rd_buf_str(b, help);
	rd_buf_str(b, "\n# TYPE ");
	rd_buf_str(b, name);
	rd_buf_str(b, suffix);
	rd_buf_str(b, " ");
	rd_buf_str(b, tn[t]);
	rd_buf_str(b, "\n");
}

static void sample_start(struct rd_buf *b, const char *name, const char *suf,
                         const struct proc *P, const struct series *s)
{
	rd_buf_str(b, name);
	rd_buf_str(b, suf);
	rd_buf_str(b, "{");
	rd_buf_mem(b, P->labels, P->nlabels);
	if (s)
		rd_buf_mem(b, s->labels, s->nlabels);
}

/*
 * One histogram's samples, written in place: room for all of them is made
 * once, the first bucket line's head (name_bucket{ and the labels) is
 * written from its parts and copied for the other buckets, and the counts
 * are formatted without stdio. The text is what render_series() wrote
 * sample by sample before (tests/prom compares it with Prometheus).
 */
static void render_hist(struct rd_buf *b, const char *name,
                        const struct proc *P, const struct series *s)
{
	size_t nl = strlen(name), head = nl + sizeof "_bucket{" - 1 + P->nlabels +
	                               s->nlabels;
	char *o = room(b, (NB + 3) * (head + LE_MAX + 20 + 1) + 32), *h;
	uint64_t cum = 0;

	if (!o)
		return;
	h = o;
	o = put(o, name, nl);
	o = put(o, "_bucket{", sizeof "_bucket{" - 1);
	o = put(o, P->labels, P->nlabels);
	o = put(o, s->labels, s->nlabels);
	for (unsigned i = 0; i <= NB; i++) {
		if (i)
			o = put(o, h, head);
		cum += s->b[i];
		o = put(o, le_txt[i].s, le_txt[i].n);
		o = put_u64(o, cum);
		*o++ = '\n';
	}
	o = put(o, name, nl);
	o = put(o, "_sum{", sizeof "_sum{" - 1);
	o = put(o, h + nl + sizeof "_bucket{" - 1, P->nlabels + s->nlabels);
	o = put(o, "} ", 2);
	o = put_secs(o, s->sum_ns);
	*o++ = '\n';
	o = put(o, name, nl);
	o = put(o, "_count{", sizeof "_count{" - 1);
	o = put(o, h + nl + sizeof "_bucket{" - 1, P->nlabels + s->nlabels);
	o = put(o, "} ", 2);
	o = put_u64(o, s->count);
	*o++ = '\n';
	grown(b, o);
}

static void render_series(struct rd_buf *b, int fam, const struct proc *P,
                          const struct series *s)
{
	const struct famdef *d = &fams[fam];
	size_t nl;
	char *o;

	if (d->type == T_HIST) {
		render_hist(b, d->name, P, s);
		return;
	}
	nl = strlen(d->name);
	if (!(o = room(b, nl + P->nlabels + s->nlabels + 64)))
		return;
	o = put(o, d->name, nl);
	if (d->type == T_COUNTER)
		o = put(o, "_total", sizeof "_total" - 1);
	*o++ = '{';
	o = put(o, P->labels, P->nlabels);
	o = put(o, s->labels, s->nlabels);
	o = put(o, "} ", 2);
	if (fam == PF_PHASE_TIME) {
		o = put_secs(o, s->v);
	} else if (fam == PF_INT) {
		if (s->last < 0)
			*o++ = '-';
		o = put_u64(o, s->last < 0 ? (uint64_t)0 - (uint64_t)s->last
		                           : (uint64_t)s->last);
	} else {
		o = put_u64(o, s->v);
	}
	*o++ = '\n';
	grown(b, o);
}

static void simple(struct rd_buf *b, const char *name, enum ftype t,
                   const char *help, int om, uint64_t v)
{
	head(b, name, t, help, om);
	rd_buf_str(b, name);
	rd_buf_str(b, t == T_COUNTER ? "_total " : " ");
	rd_buf_u64(b, v);
	rd_buf_mem(b, "\n", 1);
}

static void render_exporter(struct rd_prom *p, struct rd_buf *b, int om)
{
	size_t done = 0;

	for (size_t i = 0; i < p->nf; i++)
		done += p->f[i]->done;
	simple(b, "rte_exporter_files_followed", T_GAUGE,
	       "Ring files being read (not yet finished).", om, p->nf - done);
	simple(b, "rte_exporter_files", T_COUNTER,
	       "Ring files picked up since the exporter started.", om, p->files_total);
	simple(b, "rte_exporter_processes", T_GAUGE,
	       "Processes with metrics in this exposition.", om, p->np);
	simple(b, "rte_exporter_read_events", T_COUNTER,
	       "Events read from ring files.", om, p->events_read);
	simple(b, "rte_exporter_read_bytes", T_COUNTER,
	       "Ring bytes read (sizes of the messages read).", om, p->bytes_read);
	simple(b, "rte_exporter_errors", T_COUNTER,
	       "Ring files that could not be opened or read, and corrupt rings.",
	       om, p->errors);
	simple(b, "rte_exporter_scrapes", T_COUNTER,
	       "Scrapes of /metrics answered.", om, p->scrapes);
	head(b, "rte_exporter_scrape_duration_seconds", T_GAUGE,
	     "Time the previous scrape took to render.", om);
	rd_buf_str(b, "rte_exporter_scrape_duration_seconds ");
	buf_secs(b, p->scrape_ns);
	rd_buf_mem(b, "\n", 1);
}

int rd_prom_render(rd_prom *p, struct rd_buf *b, int om, int mark)
{
	size_t start = b->n;

	/* about the size of the last one: one allocation, not a doubling
	 * series of copies (if it fails, room() tries again as it goes) */
	if (p->last_len && b->cap < b->n + p->last_len + p->last_len / 8) {
		size_t cap = b->n + p->last_len + p->last_len / 8;
		char *q = realloc(b->p, cap);

		if (q) {
			b->p = q;
			b->cap = cap;
		}
	}
	head(b, "rte_process_alive", T_GAUGE,
	     "1 while the process may still write its ring files, 0 for its final values.",
	     om);
	for (size_t i = 0; i < p->np; i++) {
		sample_start(b, "rte_process_alive", "", p->p[i], NULL);
		rd_buf_str(b, p->p[i]->final ? "} 0\n" : "} 1\n");
	}
	head(b, "rte_names_limited", T_GAUGE,
	     "1 if the process had more user event names than --max-names (the rest are name=\"other\").",
	     om);
	for (size_t i = 0; i < p->np; i++) {
		sample_start(b, "rte_names_limited", "", p->p[i], NULL);
		rd_buf_str(b, p->p[i]->limited || p->p[i]->oom ? "} 1\n" : "} 0\n");
	}
	for (int fam = 0; fam < PF_N; fam++) {
		int any = 0;

		for (size_t i = 0; i < p->np && !any; i++)
			any = p->p[i]->fam[fam].n != 0;
		if (!any)
			continue;
		head(b, fams[fam].name, fams[fam].type, fams[fam].help, om);
		for (size_t i = 0; i < p->np; i++)
			for (size_t k = 0; k < p->p[i]->fam[fam].n; k++)
				render_series(b, fam, p->p[i], p->p[i]->fam[fam].v[k]);
	}
	if (mark)
		p->scrapes++;
	if (p->o.exporter)
		render_exporter(p, b, om);
	if (om)
		rd_buf_str(b, "# EOF\n");
	if (b->oom)
		return -1;
	p->last_len = b->n - start;
	if (mark)
		for (size_t i = 0; i < p->np; i++)
			if (p->p[i]->final)
				p->p[i]->delivered = 1;
	return 0;
}
