/*
 * procs.h - what rte-read knows about each process, file and ring while it
 * walks the merged timeline: pids, time bases, thread names, open phases
 * and spans, per-ring counts. Every event goes through rd_procs_update()
 * (before any filter) which annotates it for the output formats: its
 * process, its ring's thread, and for an end its duration.
 *
 * Thread names come from the shim's events `rte.thread.name` (custom, the
 * name bytes) and `rte.thread.tid` (int, the kernel tid) written on the
 * thread's own ring, and `rte.thread.name_of` (custom, "RING:name", a
 * thread renamed by another one); a `domain_spawn` on a ring starts a new
 * thread there (rings are reused), forgetting the previous name and open
 * spans. Without these events (OCaml's own files) rings are unnamed.
 *
 * Spans still open when their thread ends (domain_terminate, or a
 * domain_spawn reusing the ring), when words are lost, or at the end of
 * the file are "unfinished": an event that gives up on open spans lists
 * them in rd_item.ab; those open at the end stay in each rd_thread's
 * stacks for the formats' finish.
 *
 * Not thread-safe.
 */
#ifndef RD_PROCS_H
#define RD_PROCS_H

#include "inputs.h"
#include "liveness.h"
#include "merge.h"
#include "spans.h"

#define RD_THREAD_NAME_MAX 64

struct rd_thread {
	char name[RD_THREAD_NAME_MAX]; /* "" if unknown */
	long tid;                      /* -1 if unknown */
	unsigned name_gen;             /* bumped when name changes */
	uint64_t name_ts;              /* time of the name (rings may be read
	                                  one after another: latest wins) */
	struct rd_spans phases, spans;
	uint64_t events, lost_words;
	uint64_t phase_open_ts;        /* when the outermost phase began */
	uint64_t phase_ns;             /* time with at least one phase open */
	uint64_t last_ts;              /* latest event of the ring (not losses) */
	uint64_t first_ts;             /* its first event (not losses), 0 until
	                                  then */
	int seen;
	/* where the ring's current tenant began: events, lost_words and
	 * phase_ns are the ring's, its tenant's are the differences */
	uint64_t ev0, lost0, ph0;
};

/*
 * One tenancy of a ring: the thread that held it from a domain_spawn (or
 * from the ring's first event) to the next spawn. Rings are reused, so a
 * ring has several; those that ended are kept in their file's list
 * (rd_src.ten), the current one is the ring's rd_thread.
 */
struct rd_tenant {
	unsigned ring;
	char name[RD_THREAD_NAME_MAX];
	long tid;
	uint64_t events, lost_words, phase_ns;
};

struct rd_proc {
	long pid;
	unsigned index;           /* order of first appearance, from 0 */
	uint64_t base_ts;         /* ring_start, else the first event */
	uint64_t first_ts, last_ts, start_ts, stop_ts;
	int has_base, has_ts, started, stopped;
	uint64_t lifecycle[RTE_LC_COUNT];
	uint64_t events, lost_words;
	unsigned first_src, last_src; /* its sources, in index order, linked */
	unsigned nsrc;                /* by rd_src.next_src; RD_NO_SRC: none */
	void *fmt;                /* per-process state of the output format */
	void *model;              /* its entries in the run model (model.h) */
};

#define RD_NO_SRC 0xffffffffu

/* The sources of process pr: for (i = pr->first_src; i != RD_NO_SRC;
 * i = p->src[i].next_src). */

/* A source's ring figures (the process tree's: ptree.c), from its rings
 * while it has them, kept by rd_src_forget_threads() once they go. */
struct rd_src_rings {
	uint64_t last_ts, first_ts, lost;
	int phases;              /* runtime phases were seen */
	long tid0;               /* ring 0's tid */
};

struct rd_src {
	const char *path;
	long pid;                 /* -1 if unknown */
	struct rd_proc *proc;
	struct rd_thread *threads; /* one per ring */
	unsigned rings;
	int stopped;              /* ring_stop seen */
	struct rd_writer writer;  /* is the file's writer still there? */
	int writer_state;         /* RD_WRITER_*: last rd_src_alive() answer */
	unsigned next_src;        /* the next source of proc, or RD_NO_SRC */
	void *fmt;                /* per-file state of the output format */
	void *model;              /* the run model's cache for it (model.c) */
	struct rd_tenant *ten;    /* the tenancies that ended, in order */
	unsigned nten, tencap;
	int oom;                  /* a tenancy could not be kept */
	int librte;               /* rte.* events: written by librte.so, not
	                             by an OCaml runtime */
	struct rd_src_rings kept; /* its rings' figures once they were
	                             forgotten (rd_src_forget_threads) */
};

enum { RD_WRITER_UNKNOWN = 0, RD_WRITER_RUNNING, RD_WRITER_GONE };

/* An abandoned open span: its begin was seen, its end never will be. */
struct rd_abandoned {
	const struct rd_span_open *s;
	unsigned n;
	int user; /* 1: user spans, 0: runtime phases */
};

struct rd_item {
	const struct rte_event *ev;
	uint64_t ts;              /* ev->ts, or where a loss is placed */
	struct rd_src *src;
	struct rd_proc *proc;
	struct rd_thread *th;
	int matched;              /* an end whose begin was seen */
	uint64_t begin_ts, dur;   /* for a matched end */
	struct rd_abandoned ab[2]; /* spans this event gave up on */
	int pass;                 /* passed the filters (set by the caller) */
};

struct rd_procs {
	struct rd_src *src;
	unsigned nsrc, srccap;
	struct rd_proc **proc;
	unsigned nproc, proccap;
	struct rd_proc **bypid;   /* open addressing on pid, bypidcap a power */
	unsigned bypidcap;        /* of two, at most half full */
	struct rd_ptree *tree;    /* the process tree (ptree.h), or NULL */
};

void rd_procs_init(struct rd_procs *p);
void rd_procs_fini(struct rd_procs *p);

/* Register source `index` (as numbered by rd_merge_add) of `rings` rings.
 * `path` must outlive p. Returns 0 or -1 (out of memory). */
int rd_procs_add_src(struct rd_procs *p, unsigned index, const char *path,
                     long pid, unsigned rings);

/* Room for `more` sources beyond those added, exactly (a directory's
 * files are counted before they are added: no doubling slack with
 * 100,000 of them). 0, or -1 if out of memory (nothing is lost). */
int rd_procs_reserve(struct rd_procs *p, unsigned more);

/* Account for one merged event and fill *it. */
void rd_procs_update(struct rd_procs *p, const struct rd_merge_item *mi,
                     struct rd_item *it);

/*
 * The steps of rd_procs_update() that a fast path (the run model's, over a
 * run of one ring: model.h) takes too, the same code.
 *
 * rd_times_note(): an event at ts (not a loss) widens the time range of
 * its process (*lo, *hi: first_ts, last_ts) and of its ring (*thi:
 * last_ts). Min and max, not in time order: a summary reads ring after
 * ring.
 */
static inline void rd_times_note(uint64_t *lo, uint64_t *hi, uint64_t *thi,
                                 uint64_t ts)
{
	if (ts > *thi)
		*thi = ts;
	if (ts > *hi)
		*hi = ts;
	else if (ts < *lo)
		*lo = ts;
}

/* n more events of ring th of process pr. */
static inline void rd_thread_count(struct rd_thread *th, struct rd_proc *pr,
                                   uint64_t n)
{
	th->seen = 1;
	th->events += n;
	pr->events += n;
}

/*
 * Phases: rd_thread_phase_end() returns 1 and the duration in *dur if a
 * begin was open (spans opened inside it and still open are given up:
 * *d, *nd), else 0. rd_thread_phase_end() returns 1 and the
 * duration in *dur if a begin was open (spans opened inside it and still
 * open are given up: *d, *nd), else 0.
 */
static inline void rd_thread_phase_begin(struct rd_thread *th, unsigned id,
                                         uint64_t ts, const char *name)
{
	if (th->phases.depth == 0)
		th->phase_open_ts = ts;
	rd_spans_begin(&th->phases, id, ts, name);
}

static inline int rd_thread_phase_end(struct rd_thread *th, unsigned id,
                                      uint64_t ts, uint64_t *begin_ts,
                                      uint64_t *dur,
                                      const struct rd_span_open **d,
                                      unsigned *nd)
{
	if (!rd_spans_end(&th->phases, id, begin_ts, d, nd))
		return 0;
	*dur = rd_span_dur(*begin_ts, ts);
	if (th->phases.depth == 0 && ts >= th->phase_open_ts)
		th->phase_ns += ts - th->phase_open_ts;
	return 1;
}

/* The same for user spans (no time in spans is kept), matched by name:
 * spans of other names opened inside it stay open (*nd is always 0). */
static inline int rd_thread_span_end(struct rd_thread *th, unsigned id,
                                     uint64_t ts, uint64_t *begin_ts,
                                     uint64_t *dur,
                                     const struct rd_span_open **d,
                                     unsigned *nd)
{
	*d = NULL;
	*nd = 0;
	if (!rd_spans_end_one(&th->spans, id, begin_ts))
		return 0;
	*dur = rd_span_dur(*begin_ts, ts);
	return 1;
}

/*
 * 1 if the writer of source s, read through cursor c, may still write to
 * it, 0 if it is gone (rd_writer_alive); also records the answer in
 * s->writer_state.
 */
int rd_src_alive(struct rd_src *s, const rte_cursor *c);

/*
 * After reading: for every source of p whose ring_stop was not seen, find
 * out whether its writer is gone without one (killed): it is gone now and
 * its file, read again, still has no ring_stop (a writer that ended
 * normally during the read wrote one). m is the merge of the sources.
 * Asking after the read costs nothing for finished files.
 */
void rd_procs_judge_writers(struct rd_procs *p, const rd_merge *m);

/* 1 if source s ended without ring_stop and its writer is gone (killed). */
int rd_src_killed(const struct rd_src *s);

/*
 * Every tenancy of every ring of source s, ring by ring, each ring's in
 * time order: fn(arg, t) for each (the current one of a ring built in
 * *t for the call). A ring never written to has none.
 */
void rd_src_each_thread(const struct rd_src *s,
                        void (*fn)(void *arg, const struct rd_tenant *t),
                        void *arg);

/*
 * Free the per-ring state of source s (threads, tenancies, open spans)
 * once its process was written out and nothing reads it again: a summary
 * of many files keeps no per-ring state for those it has written.
 * s->threads is NULL afterwards; s->rings stays.
 */
void rd_src_forget_threads(struct rd_src *s);
/* s's ring figures: from its rings, or what rd_src_forget_threads() kept
 * of them (zero if it never had any). */
struct rd_src_rings rd_src_rings(const struct rd_src *s);

/* Wall time of a process: ring_start to ring_stop when both were seen,
 * else first to last event. */
uint64_t rd_proc_wall(const struct rd_proc *pr);

/* Write to o the JSON array of the paths of process pr's files (only
 * those rd_src_killed() judges killed when killed_only). */
struct rd_out;
void rd_proc_json_files(struct rd_out *o, const struct rd_procs *P,
                        const struct rd_proc *pr, int killed_only);

#endif
