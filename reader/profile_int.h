/*
 * profile_int.h - the aggregator's tables, shared by profile.c (input,
 * summary; with profile_tab.c, the tables, and profile_settle.c, the
 * end) and fmt/profile.c (the folded, pprof and flamegraph writers;
 * pprof's encoder in fmt/profile_pprof.c).
 * Private to those files. Not thread-safe.
 *
 * Strings, locations (a code address of one file image, symbolised once),
 * functions and mappings are global over every process, so that one pprof
 * file can hold them all; stacks are keyed by process, thread and span
 * tag.
 */
#ifndef RD_PROFILE_INT_H
#define RD_PROFILE_INT_H

#include <stdint.h>

#include "profile.h"
#include "ptab.h"
#include "symbolize.h"


struct ploc {
	uint64_t pc;
	uint32_t map;   /* mapping index + 1, 0: none */
	uint32_t func;  /* function index */
	int line;       /* 0: unknown */
};

struct pfunc {
	uint32_t name, file; /* string ids */
};

struct pmap {
	uint64_t start, end, off;
	uint32_t path, bid;  /* string ids */
	uint32_t src;
};

/* The most locations of a stack: its frames, a [blocked] frame, and
 * --inline's inlined functions (as many as fit). */
#define RD_PROF_MAX_LOCS (4 * RTE_PROFILE_MAX_FRAMES)

/* A stack's key: then n location indexes, the innermost first. */
struct skey {
	uint32_t proc;  /* rd_proc index */
	int32_t tid;
	uint32_t tag;   /* string id of the innermost span or phase, 0: none */
	uint32_t n;
	uint32_t loc[];
};

struct cval {
	uint64_t samples, cpu_ns;
};

struct aval {
	double aobj, abytes, iobj, ibytes;
	double avar; /* the estimated variance of abytes (Horvitz-Thompson:
	                each sample's bytes^2 (1 - q), q its probability) */
	uint64_t n, nlive, sampled, live_sampled;
};

struct pthr {
	unsigned src, ring;
	long tid;
	char name[RD_THREAD_NAME_MAX];
	uint64_t samples, cpu_ns;
	uint64_t blocked, blocked_ns; /* wall mode: RTE_SAMPLE_BLOCKED ones */
	int wall;                     /* RTE_SAMPLE_WALL seen */
	unsigned hz;
};

struct pproc {
	long pid;
	int used, has_cpu, has_alloc;
	int has_usable;       /* rte.alloc.usable seen (rte after 2026-12) */
	uint64_t calls, bytes, frees, freed, alloc_events;
	uint64_t usable;      /* usable bytes allocated: freed's measure */
	uint64_t hist[RTE_ALLOC_BUCKETS];
	uint64_t bad_cpu, bad_alloc, bad_free;
	uint64_t outside_cpu, outside_alloc; /* samples left out by --span */
	uint64_t cpu_samples, cpu_ns, alloc_samples;
	uint32_t clock[4];    /* the RTE_SAMPLE_* clock flags seen (exec images
	                         of one pid may differ), first ones kept */
	unsigned nclock;
	uint64_t wall_ns;
	uint32_t exe;         /* --by exe: its executable's name (string id;
	                         its last image's), 0 unknown */
	/* The heap (heap.c): rte.alloc.peak / peak_ns / temporary / heap. */
	int has_peak, has_temps;
	uint64_t peak, peak_ns, peak_pending, temps;
	uint64_t t0;          /* the process's start (summary)*/
	struct hpt { uint64_t ts, v; } *heap;
	size_t nheap, heapcap;
	struct pthr *thr;
	unsigned nthr, thrcap;
};

struct psrc {
	struct rd_sym *sym;
	uint32_t modgen;
};

/* One sampled allocation or free, replayed in time order at the end. */
struct aev {
	uint64_t ts, seq, addr, size;
	double obj, bytes;    /* what the sample stands for */
	uint32_t proc, stack; /* stack: UINT32_MAX for a free */
	uint32_t flags;       /* a free's RTE_ALLOC_FREE_* */
};

/* The inline frames' locations of one address (profile_inline.c's cache,
 * keyed as loc_of's locations are): the innermost first. */
#define RD_PROF_INLINE_DEPTH 16 /* inlined calls kept per address */
struct pinl {
	uint32_t n, loc[RD_PROF_INLINE_DEPTH];
};

struct rd_prof {
	struct ptab strs, locs, funcs, cst, ast;
	struct ptab inl;  /* addresses looked up for inline frames */
	struct pinl *inlv;
	uint32_t inlcap;
	struct ploc *loc;
	struct pfunc *fn;
	struct cval *cv;
	struct aval *av;
	uint32_t loccap, fncap, cvcap, avcap;
	struct pmap *map;
	uint32_t nmap, mapcap;
	struct pproc *pp;
	unsigned npp;
	struct psrc *ps;
	unsigned nps;
	struct aev *aev;
	size_t naev, aevcap;
	uint64_t seq;
	uint64_t period;  /* the last rte.alloc.sample's period */
	unsigned hz;      /* the last rte.sample's rate */
	int oom, settled;
};

/* What took the CPU samples, from an rte.sample's flags (RTE_SAMPLE_*),
 * as one line into buf (fmt/profile.c): "perf_event cpu-clock", or the
 * timer and why. */
const char *rd_prof_clock(uint32_t flags, char *buf, size_t len);

/* The chosen profile (RD_PROF_*) as pprof into o (fmt/profile_pprof.c). */
void rd_prof_write_pprof(struct rd_prof *p, int which, struct rd_out *o);

/* The options (profile.c; --state: profile_wall.c). */
extern int rd_prof_which_opt, rd_prof_by_thread, rd_prof_state_opt;
extern const char *rd_prof_span_opt;

/* profile_inline.c: unless --no-inline (rd_prof_inline_opt): the locations of the
 * functions inlined at pc (rd_sym_inlines of source src's symboliser s),
 * innermost first, into out (at most max); how many. */
extern int rd_prof_inline_opt;
unsigned rd_prof_inline_locs(struct rd_prof *p, unsigned src, struct psrc *s,
                             uint64_t pc, int ret, uint32_t *out,
                             unsigned max);
/* Unless --no-inline, where pc holds inlined code: 1 and the source
 * line of pc in its own function (the outermost inlined call's site;
 * *file NULL if unknown); else 0 (the line table's line is its own). */
int rd_prof_inline_site(struct rd_sym *sym, uint64_t pc, int ret,
                        const char **file, int *line);

/* profile_span.c: the innermost open user span or phase of th (its
 * string id, 0: none); 0 in *keep if --span is given and th is not
 * inside it. */
uint32_t rd_prof_tag_of(struct rd_prof *p, const struct rd_thread *th,
                        int *keep);

/* Grow array *a (of cap *cap elements of size sz) to hold index i:
 * 0, or -1 (out of memory, p->oom set). profile.c. */
int rd_prof_room(struct rd_prof *p, void **a, uint32_t *cap, uint32_t i,
                 size_t sz);
/* profile_wall.c: the location of the `[blocked:CALL]` frame of an
 * RTE_SAMPLE_BLOCKED sample's flags (one per call); -1 if out of memory.
 * The thread of tid among s's rings (*ring its ring), NULL if none. */
int64_t rd_prof_blocked_loc(struct rd_prof *p, uint32_t flags);
const struct rd_thread *rd_prof_thread_of_tid(const struct rd_src *s,
                                              long tid, unsigned *ring);

/* fmt/profile_blocked.c: the wall mode's blocked shares and stacks per
 * thread of process proc (summary text lines, or for summary-json
 * `,"blocked":[...]`). */
void rd_prof_blocked_section(struct rd_prof *p, struct rd_out *o,
                             const struct pproc *pp, uint32_t proc, int json);

/* fmt/flame.c: a flame graph's tree of frames (names: p's string ids),
 * each with its value v and, in a differential graph, its base value v0;
 * node 0 is the root. rd_flame_add: one stack of n names, the root
 * first. rd_flame_write: the self-contained interactive SVG page, diff:
 * colours by the change of share from v0 to v. Init and add return 0,
 * or -1 if out of memory. */
struct fnode {
	uint32_t name, child, next; /* child/next: node index + 1, 0: none */
	uint64_t v, v0;
};
struct ftree {
	struct fnode *n;
	uint32_t len, cap;
	unsigned depth;
};
int rd_flame_init(struct ftree *t);
void rd_flame_fini(struct ftree *t);
int rd_flame_add(struct ftree *t, const uint32_t *names, uint32_t n,
                 uint64_t v, uint64_t v0);
void rd_flame_write(const struct rd_prof *p, const struct ftree *t,
                    const char *title, int diff, struct rd_out *o);

/* String of id. */
static inline const char *pstr(const struct rd_prof *p, uint32_t id)
{
	return p->strs.e[id].key;
}

static inline const struct skey *pkey(const struct ptab *t, uint32_t i)
{
	return (const struct skey *)(const void *)t->e[i].key;
}

/* Intern s; returns its id, 0 ("") if out of memory. */
uint32_t pstr_id(struct rd_prof *p, const char *s);

/* The key of an address in the location tables and the inline cache:
 * (source, its module generation, pc, ret, depth), depth 0 the address's
 * own function, k inlined frame k (profile_inline.c). Zeroed padding. */
struct plockey {
	uint32_t src, gen;
	uint64_t pc;
	uint32_t ret, depth;
};
void rd_prof_lockey(struct plockey *k, unsigned src, const struct psrc *s,
                    uint64_t pc, int ret, unsigned depth);
/* Room for one more location and function (before a new index is handed
 * out, so that it always has its element): 0, or -1 (p->oom). */
int rd_prof_loc_room(struct rd_prof *p);
/* The function (name, file, both interned; file 0: none), made if new:
 * its index, or -1 if out of memory. Needs rd_prof_loc_room first. */
int64_t rd_prof_func(struct rd_prof *p, const char *name, const char *file);

/* Replay the allocations in time order: fills the in-use values (once). */
void rd_prof_settle(struct rd_prof *p);

/* The profile a format writes: RD_PROF_CPU, _ALLOC or _INUSE. */
int rd_prof_pick(const struct rd_prof *p);

/* Any CPU samples / allocation samples at all. */
int rd_prof_any_cpu(const struct rd_prof *p);

/* Total malformed records over every process. */
uint64_t rd_prof_malformed(const struct rd_prof *p);

/* heap.c: the rte.alloc.* int events of the heap (name after
 * "rte.alloc."): 1 if name is one of them (accounted), else 0. */
/* A process's exact live bytes at the end (usable allocated - freed), or
 * -1 when its files count only the bytes asked for. */
double rd_prof_exact_live(const struct pproc *pp);
int rd_heap_int(struct rd_prof *p, struct pproc *pp, const char *name,
                uint64_t ts, uint64_t v);
/* heap.c: process proc's peak, heap series and temporaries, for
 * summary-json (members after a comma) or as summary text lines. */
void rd_heap_section(struct rd_prof *p, struct rd_out *o,
                     const struct pproc *pp, uint32_t proc, int json);
/* heap.c: a process's heap series freed. */
void rd_heap_fini(struct pproc *pp);

/* fmt/profile_line.c: the file:line most of function-name string id
 * name's samples in process proc (span tag's only if only_tag) were at:
 * as the innermost frame (self) or anywhere (once per stack); 1 and
 * *file, *line, or 0 if none of them has a line. */
int rd_prof_hot_line(const struct rd_prof *p, uint32_t proc, uint32_t tag,
                     int only_tag, uint32_t name, int self,
                     const char **file, int *line);

#endif
