/*
 * fmt/summary.h - what the files of the summary and summary-json formats
 * share (internal to them): the per-process accounting of fmt/summary.c
 * (entries by name, durations, last values), the renderers of
 * fmt/summary_out.c, and the sink of fmt/summary_sink.c (processes
 * written early to a spool, the finish).
 */
#ifndef RD_FMT_SUMMARY_H
#define RD_FMT_SUMMARY_H

#include <stdio.h>
#include <stdlib.h>

#include "hist.h"
#include "profile.h"
#include "sinks.h"

struct rd_gc;

enum fam { F_PHASE, F_SPAN, F_COUNTER, F_INT, F_UNIT, F_CUSTOM, F_NFAM };

#define SMALL_DURS 8 /* durations of an entry kept before a histogram */

/* The last value a ring wrote for an entry (counters, user ints). */
struct ringval {
	unsigned src, ring;
	int64_t last;
	uint64_t ts;
};

struct entry {
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
	struct ringval *rv;   /* per ring, in order of first value */
	size_t nrv, rvcap, rvhint;
	int hidden;           /* rte.thread.*: shown with the rings instead */
	int rte;              /* rte.*: procs.c or crashrep.c may need the event */
};

struct psum {
	struct entry **e;
	size_t n, cap;
	struct entry *phase[RTE_P_COUNT];
	struct entry *counter[RTE_C_COUNT];
	uint64_t alloc_events, alloc[RTE_ALLOC_BUCKETS];
};

/* A file's user entries by id, as long as its highest id seen + 1. */
struct ucache {
	unsigned n;
	struct entry *e[];
};

/* Where a process written early is in the spool file. */
struct seg {
	uint64_t off, len; /* len 0: not written early */
};

struct summary {
	struct rd_sink sink;
	struct rd_hist *view; /* scratch: the histogram of a small entry */
	/* processes written early (see the top): */
	int spooling;          /* 0 not yet, 1 on, -1 off (cannot) */
	struct rd_out spool;   /* the unlinked temporary file */
	struct seg *seg;       /* by process index, nseg of them */
	unsigned nseg;
	unsigned scan;         /* the next process to consider */
	unsigned cur_src;      /* the source being read */
	struct rd_gc *gc; /* the GC section (gcstats.h); NULL if out of memory */
	struct rd_prof *prof; /* the profiles' section (profile.h); NULL: none */
	const struct rd_crash *report; /* the crashes seen (sinks.h), or NULL */
	int json;
	int oom;
};


/* ---- fmt/summary.c: the accounting ---- */
struct psum *rd_sum_psum_of(struct summary *S, struct rd_proc *pr);
const struct rd_hist *rd_sum_dur_view(struct summary *S, const struct entry *e);
void rd_sum_dur_unview(struct summary *S, const struct entry *e);
uint64_t rd_sum_dur_sum(const struct entry *e);
int rd_sum_is_dur(const struct entry *e);
void rd_sum_add_unfinished(struct summary *S, struct psum *ps,
                           struct rd_filter *f, const struct rd_span_open *s,
                           unsigned n, int user);
void rd_sum_event(struct rd_sink *s, struct rd_ctx *c, const struct rd_item *it);
size_t rd_sum_run(struct rd_sink *s, struct rd_ctx *c, unsigned src,
                  const struct rte_event *ev, size_t n);
void rd_sum_free_psum(struct rd_proc *pr);
void rd_sum_free_state(struct rd_procs *P);
void rd_sum_end_open_spans(struct summary *S, struct rd_ctx *c, struct rd_proc *pr);

/* ---- fmt/summary_out.c: text and JSON of one process ---- */
void rd_sum_write_proc(struct summary *S, struct rd_out *o, struct rd_procs *P,
                       struct rd_proc *pr);
/* JSON helpers, also used for the document's own keys */
void rd_sum_json_key(struct rd_out *o, int *first, const char *k);
void rd_sum_json_u(struct rd_out *o, int *first, const char *k, uint64_t v);

/* ---- fmt/summary_sink.c ---- */
/* An event of source src comes: write the processes finished before it. */
void rd_sum_spool_ready(struct summary *S, struct rd_ctx *c, unsigned src);

/* ---- fmt/summary_tree.c: a trace of several processes as a tree ---- */
/* 1 if the text summary is the tree (several processes, librte.so's
 * process records, no --all/--pid). */
int rd_sum_tree_mode(struct rd_procs *P, const struct rd_filter *f);
/* 1 if pid's detail block is shown with the tree (it wrote user events). */
int rd_sum_tree_detail(struct rd_procs *P, long pid);
void rd_sum_write_tree(struct rd_out *o, struct rd_procs *P);
void rd_sum_json_tree(struct rd_out *o, struct rd_procs *P); /* ,"tree":[..] */

#endif
