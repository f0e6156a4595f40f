/*
 * profile.h - rte-read's side of the CPU and allocation profilers
 * (rte/profile.h): rte.sample, rte.alloc.sample, rte.alloc.free, the
 * rte.alloc.* int events and OCaml's `alloc` runtime event, aggregated
 * into stacks with values per process (and thread), symbolised from the
 * rte.module events of each file as crash stacks are (symbolize.h).
 *
 * Each sample is tagged with the innermost user span or runtime phase open
 * on its ring when it was taken (the ring's own event order, kept by
 * procs.c); --span NAME keeps only the samples taken inside NAME.
 *
 * Outputs: the folded, pprof and flamegraph formats (rd_sink_profile), and
 * a section of summary / summary-json (rd_prof_summary). Records are
 * untrusted: a short one, of an unknown version, or with more frames than
 * its payload holds is skipped and counted ("malformed"), never trusted.
 *
 * Not thread-safe.
 */
#ifndef RD_PROFILE_H
#define RD_PROFILE_H

#include "out.h"
#include "rte/profile.h"
#include "procs.h"

struct rd_sink;

/* Which profile a format writes (--profile). */
enum rd_prof_which {
	RD_PROF_AUTO = 0, /* cpu if there are CPU samples, else alloc */
	RD_PROF_CPU,
	RD_PROF_ALLOC,    /* every sampled allocation (estimated bytes) */
	RD_PROF_INUSE,    /* the sampled allocations still live at the end */
};

/* The profile formats. */
enum rd_prof_fmt { RD_PFMT_FOLDED, RD_PFMT_PPROF, RD_PFMT_FLAME };

/*
 * The options of the command line, for every aggregator made afterwards:
 * `which` (--profile), `span` (--span NAME, NULL: every sample; kept, not
 * copied), `by_thread` (--by-thread: the folded and flamegraph stacks get
 * their thread as the root frame). Returns 0, or -1 if `which` is not
 * cpu, alloc or inuse.
 */
int rd_prof_parse_which(const char *s);
/* --state (wall mode, RTE_PROFILE_MODE=wall): which samples are kept. */
enum { RD_STATE_ALL = 0, RD_STATE_RUNNING, RD_STATE_BLOCKED };
extern int rd_prof_state_opt;
/* Inlined functions as frames (profile_inline.c): 1 by default,
 * --no-inline 0. */
extern int rd_prof_inline_opt;
/* "running" or "blocked": RD_STATE_*; else -1. */
int rd_prof_parse_state(const char *s);
void rd_prof_options(int which, const char *span, int by_thread);

struct rd_prof;

/* A new, empty aggregator; NULL if out of memory. */
struct rd_prof *rd_prof_new(void);
void rd_prof_free(struct rd_prof *p);

/* Account for one merged event (any event; those of the profilers and
 * rte.module* are used, the others cost one test). P: the procs of it. */
void rd_prof_event(struct rd_prof *p, const struct rd_procs *P,
                   const struct rd_item *it);

/* One rte.sample, decoded and symbolised: its weight, the tid it names,
 * and its stack's function names (innermost first; p's strings, valid
 * until rd_prof_free; "lib.so+0x1f" or "0x4011a6" where unknown). */
struct rd_prof_stack {
	uint64_t cpu_ns;
	long tid;
	int truncated;          /* RTE_STACK_TRUNCATED */
	unsigned n;             /* at most RTE_PROFILE_MAX_FRAMES */
	const char *func[RTE_PROFILE_MAX_FRAMES];
};

/*
 * If event it is a well-formed rte.sample, fill st and return 1, else
 * (another event, malformed, out of memory, p NULL) 0. rd_prof_event(p)
 * must have seen it and the events before it (the rte.module events
 * symbolise it); --span does not apply here.
 */
int rd_prof_sample(struct rd_prof *p, const struct rd_procs *P,
                   const struct rd_item *it, struct rd_prof_stack *st);

/*
 * The summary's section of process pr: the CPU and allocation profiles as
 * text (nothing if the process has no such events), or for summary-json
 * `,"cpu_profile":{...}|null,"alloc_profile":{...}|null`
 * (doc/SUMMARY-JSON.md).
 */
void rd_prof_summary(struct rd_prof *p, struct rd_out *o,
                     const struct rd_proc *pr, int json);

/* The sink of a profile format; NULL if out of memory. */
struct rd_sink *rd_sink_profile(enum rd_prof_fmt fmt);

#endif
