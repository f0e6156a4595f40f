/*
 * fmt/summary.h - what the files of the summary and summary-json formats
 * share (internal to them): the renderers of fmt/summary_out.c, which
 * render the run model (model.h), and the sink of fmt/summary_sink.c
 * (the model's accounting, processes written early to a spool, the
 * finish).
 */
#ifndef RD_FMT_SUMMARY_H
#define RD_FMT_SUMMARY_H

#include <stdio.h>
#include <stdlib.h>

#include "model.h"
#include "ptab.h"
#include "profile.h"
#include "sinks.h"

/* Where a process written early is in the spool file. */
struct seg {
	uint64_t off, len; /* len 0: not written early */
};

/* The whole run's phases and spans, by name: every shown process's
 * histograms merged (fmt/summary_run.c), so its percentiles are the run's
 * own, not the largest of any process's. */
struct rd_sum_run_ent {
	int fam; /* F_PHASE or F_SPAN */
	const char *name; /* in the run's names (ptab) */
	struct rd_hist *h;
	uint64_t count, unmatched, unfinished, procs;
};
struct rd_sum_run {
	struct ptab names;        /* (fam, name) -> index into e (ptab.h) */
	struct rd_sum_run_ent *e; /* n of them, in order of first sight */
	size_t n, cap;
	int oom;
};

struct summary {
	struct rd_sink sink;
	struct rd_model m;     /* what is rendered (model.h) */
	/* processes written early (fmt/summary_sink.c): */
	int spooling;          /* 0 not yet, 1 on, -1 off (cannot) */
	struct rd_out spool;   /* the unlinked temporary file */
	struct seg *seg;       /* by process index, nseg of them */
	unsigned nseg;
	unsigned scan;         /* the next process to consider */
	unsigned cur_src;      /* the source being read */
	const struct rd_crash *report; /* the crashes seen (sinks.h), or NULL */
	int json;
	struct rd_sum_run run; /* summary-json "run" (fmt/summary_run.c) */
};

/* ---- fmt/summary_out.c: text and JSON of one process ---- */
void rd_sum_write_proc(struct summary *S, struct rd_out *o, struct rd_procs *P,
                       struct rd_proc *pr);

/* total_ns, mean_ns, min_ns, p50/p90/p99/p999_ns, max_ns of h. */
void rd_sum_json_hist(struct rd_out *o, int *first, const struct rd_hist *h);

/* ---- fmt/summary_run.c: the run's phases and spans (summary-json) ---- */
/* Add process entry e (a phase or span: its durations) to R. */
void rd_sum_run_add(struct rd_sum_run *R, const struct rd_entry *e);
/* ,"run":{"phases":[...],"spans":[...]}, each by total time. */
void rd_sum_json_run(struct rd_out *o, const struct rd_sum_run *R);
void rd_sum_run_free(struct rd_sum_run *R);

/* ---- fmt/summary_tree.c: a trace of several processes as a tree ---- */
/* 1 if the text summary starts with the tree (librte.so's process
 * records, no --pid): a single process's line too (its command line,
 * exit, CPU and RSS are nowhere else in the text). */
int rd_sum_tree_mode(struct rd_procs *P, const struct rd_filter *f);
/* 1 if pid's detail block is shown with the tree: with --all, in a trace
 * of one process, or if it wrote user events. */
int rd_sum_tree_detail(struct rd_procs *P, const struct rd_filter *f,
                       long pid);
void rd_sum_write_tree(struct rd_out *o, struct rd_procs *P);
void rd_sum_json_tree(struct rd_out *o, struct rd_procs *P); /* ,"tree":[..] */

#endif
