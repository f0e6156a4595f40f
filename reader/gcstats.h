/*
 * gcstats.h - GC statistics of OCaml programs, computed the way olly
 * (tarides/runtime_events_tools, `olly gc-stats`) computes them, with the
 * differences doc/GC-STATS.md lists: per process, wall time, CPU time (the
 * sum of domain lifetimes), GC time and its share of CPU time overall and
 * per domain (ring), waits kept apart, collections, allocation totals from
 * counters, and the distribution of GC pauses.
 *
 * Events are fed ring by ring (each ring's events in their order; rings in
 * any order), through rd_gc_event() for any event annotated by procs.c,
 * or, from the run model's loop over a run of one ring (model.c), event
 * by event through gcstats_int.h's inline rd_gc_rt_begin/end/counter/note
 * (user events take no part in GC figures). The figures are computed
 * into the model; fmt/gcstats_out.c renders them. Memory grows with the
 * number of files and rings, never with the number of events.
 *
 * Not thread-safe.
 */
#ifndef RD_GCSTATS_H
#define RD_GCSTATS_H

#include "out.h"
#include "procs.h"

struct rd_gc;

/* A new accumulator, or NULL if out of memory. */
struct rd_gc *rd_gc_new(void);
void rd_gc_free(struct rd_gc *g);

/* Forget what was gathered for file (source) src, once its process was
 * written: its memory goes back. NULL g is allowed. */
void rd_gc_forget_file(struct rd_gc *g, unsigned src);

/* Account for one event (annotated by procs.c; it->src is one of P's). */
void rd_gc_event(struct rd_gc *g, const struct rd_procs *P,
                 const struct rd_item *it);

/* 1 if process pr has OCaml runtime events (phases or GC counters). */
int rd_gc_has_runtime(const struct rd_gc *g, const struct rd_procs *P,
                      const struct rd_proc *pr);

/*
 * The GC statistics of process pr: as text, each line indented by
 * `indent`, or as one JSON object (the value of the summary's "gc" key and
 * of each gc-stats-json process). 0 on success, -1 if out of memory.
 */
int rd_gc_text(struct rd_gc *g, struct rd_out *o, const struct rd_procs *P,
               const struct rd_proc *pr, const char *indent);
int rd_gc_json(struct rd_gc *g, struct rd_out *o, const struct rd_procs *P,
               const struct rd_proc *pr);

/* The summary's GC section of pr: text (nothing if pr has no runtime
 * events) or `,"gc":{...}` (null if none). g may be NULL (out of memory). */
void rd_gc_summary_section(struct rd_gc *g, struct rd_out *o,
                           const struct rd_procs *P, const struct rd_proc *pr,
                           int json);

#endif
