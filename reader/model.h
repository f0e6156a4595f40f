/*
 * model.h - the one model of a run that every summary-like output renders
 * (summary, summary-json, gc-stats, gc-stats-json): built by one
 * accounting pass, so that two outputs never count the same thing twice
 * or differently.
 *
 * The model is:
 * - processes, their files, the threads of every ring with every tenancy,
 *   times, event counts and lost words: struct rd_procs (procs.h), kept
 *   by rd_procs_update() for every event the slow way, and by the same
 *   inline steps (rd_thread_phase_begin/end, rd_thread_span_end,
 *   rd_times_note, rd_thread_count) in the fast path below;
 * - per process, the entries by name (struct rd_entry): runtime phases
 *   and user spans (count, durations, ends without begin, unfinished),
 *   counters and user ints (last, min, max, each ring's last), user
 *   unit/custom counts, and the allocation histogram (struct rd_psum);
 * - the GC figures (gcstats.h, computed per ring as the events come);
 * - the profiles and allocation aggregates (profile.h);
 * - the crashes (crashrep.h, rd_ctx.report) and the lost words total
 *   (rd_ctx.lost_total), kept by the reader's loop.
 *
 * Accounting: rd_model_event() for one event annotated by procs.c (the
 * slow way: any kind), rd_model_run() for a run of one ring that
 * rd_procs_update() has not seen (the fast way: it stops at the first
 * event it leaves to the slow way). Both are the same steps; the fast
 * path is that code specialised by which figures are asked for
 * (RD_MODEL_*): gc-stats asks for the GC figures only, and its run
 * (rd_model_run_gc) is the same loop compiled without the entries.
 * The renderers (fmt/summary_out.c, fmt/gcstats_out.c, fmt/profile.c)
 * read the model and count nothing.
 *
 * Memory grows with the number of distinct names (and of rings writing
 * each value), never with the number of events. A process written out
 * early (a summary of many files) is forgotten (rd_model_forget_proc).
 *
 * Not thread-safe.
 */
#ifndef RD_MODEL_H
#define RD_MODEL_H

#include <stdint.h>

#include "hist.h"
#include "sinks.h"

struct rd_gc;
struct rd_prof;

enum { F_PHASE, F_SPAN, F_COUNTER, F_INT, F_UNIT, F_CUSTOM, F_NFAM };

#define SMALL_DURS 8 /* durations of an entry kept before a histogram */

/* The last value a ring wrote for an entry (counters, user ints). */
struct rd_ringval {
	unsigned src, ring;
	int64_t last;
	uint64_t ts;
};

/* What a process's events of one name (and family) add up to. */
struct rd_entry {
	int fam;
	char *name;
	struct rd_hist *h;   /* F_PHASE, F_SPAN, past SMALL_DURS values */
	uint64_t dur[SMALL_DURS]; /* ... the values until then */
	unsigned ndur;
	uint64_t count;       /* values, or events for unit/custom */
	uint64_t unmatched;   /* ends whose begin was not seen */
	uint64_t unfinished;  /* begins whose end never came */
	int64_t last, min, max; /* F_INT; F_COUNTER stores u64 bit patterns */
	uint64_t last_ts;     /* time of `last`: the latest across rings */
	struct rd_ringval *rv; /* per ring, in order of first value */
	size_t nrv, rvcap, rvhint;
	int hidden;           /* rte.thread.*: shown with the rings instead */
	int rte;              /* rte.*: procs.c or crashrep.c may need the event */
};

/* The entries of one process (rd_proc.model). */
struct rd_psum {
	struct rd_entry **e;
	size_t n, cap;
	struct rd_entry *phase[RTE_P_COUNT];
	struct rd_entry *counter[RTE_C_COUNT];
	uint64_t alloc_events, alloc[RTE_ALLOC_BUCKETS];
};

enum {
	RD_MODEL_ENTRIES = 1, /* phases, spans, values, counts, allocations */
	RD_MODEL_GC = 2,      /* the GC figures */
	RD_MODEL_PROF = 4,    /* profiles and allocation aggregates */
};

struct rd_model {
	unsigned what;        /* RD_MODEL_* asked for */
	struct rd_gc *gc;     /* NULL: not asked for, or out of memory */
	struct rd_prof *prof; /* NULL: not asked for, or out of memory */
	struct rd_hist *view; /* scratch of rd_entry_view() */
	int oom;              /* some figure could not be kept */
};

/* Start a model of the figures `what`. Returns 0, or -1 if out of memory
 * for the entries (the GC figures and profiles may be missing: NULL). */
int rd_model_init(struct rd_model *M, unsigned what);
/* Free M and what it hung on P (which outlives it until rd_procs_fini). */
void rd_model_fini(struct rd_model *M, struct rd_procs *P);

/* Account for one event annotated by rd_procs_update() (it->pass set). */
void rd_model_event(struct rd_model *M, struct rd_ctx *c, const struct rd_item *it);

/*
 * Account for the leading events of ev[0..n), a run of one ring of source
 * src, exactly as rd_procs_update() then rd_model_event() would, and
 * return how many (the caller passes the next one the slow way): for a
 * sink's run() (sinks.h). rd_model_run_gc() is the same for a model of
 * the GC figures only.
 */
size_t rd_model_run(struct rd_model *M, struct rd_ctx *c, unsigned src,
                    const struct rte_event *ev, size_t n);
size_t rd_model_run_gc(struct rd_model *M, struct rd_ctx *c, unsigned src,
                       const struct rte_event *ev, size_t n);

/* Spans of pr still open at the end of their files are unfinished:
 * counted once (their stacks are emptied). */
void rd_model_end_open_spans(struct rd_model *M, struct rd_ctx *c, struct rd_proc *pr);

/* Forget everything kept for pr and its files once it was written out
 * (its files are closed if c->merge allows). pr itself stays, counted. */
void rd_model_forget_proc(struct rd_model *M, struct rd_ctx *c, struct rd_proc *pr);

/* The entries of pr, made on first use; NULL if out of memory. */
struct rd_psum *rd_model_psum(struct rd_model *M, struct rd_proc *pr);

/* Reading an entry: 1 for phases and spans; their total (saturated);
 * their histogram until rd_entry_unview() (its own, or M's scratch
 * filled with its few values; NULL if out of memory). */
int rd_entry_is_dur(const struct rd_entry *e);
uint64_t rd_entry_dur_sum(const struct rd_entry *e);
const struct rd_hist *rd_entry_view(struct rd_model *M, const struct rd_entry *e);
void rd_entry_unview(struct rd_model *M, const struct rd_entry *e);

#endif
