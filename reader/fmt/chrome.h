/*
 * fmt/chrome.h - what the three files of the Chrome format share (private
 * to them): chrome.c writes the events and is the sink, chrome_tracks.c
 * keeps the tracks (one per thread tenancy) and names them,
 * chrome_flows.c draws the fork and exec arrows and holds failed execs.
 * The format itself is described at the top of chrome.c.
 */
#ifndef RTE_READER_FMT_CHROME_H
#define RTE_READER_FMT_CHROME_H

#include <stdint.h>

#include "sinks.h"

#define PEND_MAX 4

struct ring_names {
	unsigned gen;     /* name_gen last seen */
	unsigned nrings;  /* of the source (the same in each) */
	char names[160];  /* distinct names seen on the ring, ", "-separated */
	unsigned tgen;    /* name_gen last given to the track */
	long ttid;        /* the tid it was given for, -1 none */
	int tshown;       /* that track has an event written */
	long last_tid;    /* tid of the ring's latest thread, -1 none */
	unsigned tenancy; /* threads (domains) that held the ring before */
	int any;          /* an event of the ring was seen */
	/* lifecycle events and rte.proc waiting for the ring's thread's
	 * tid (rte.proc's payload copied: pend_bytes) */
	struct rte_event pend[PEND_MAX];
	uint64_t pend_ts[PEND_MAX];
	uint8_t *pend_bytes[PEND_MAX];
	unsigned npend;
	/* an exec held until it is known to have failed (execvp's PATH
	 * search): its rte.exec (payload copied) and the ring_stop and
	 * ring_start that follow; dropped at rte.exec_failed */
	struct rte_event held[3];
	uint64_t held_ts[3];
	uint8_t *held_bytes;
	unsigned nheld;
};

/* Without a tid (OCaml's own files), the chrome tid of the track of ring r
 * in its tenancy k (k domains held it before): r, then r + k * this, above
 * any Linux pid (PID_MAX_LIMIT is 2^22), so that a ring reused by a later
 * domain shows each on a track of its own. */
#define CHROME_TENANCY_STRIDE 4194304L

/* One track: a thread (its tid) or, without one, a ring's tenancy. */
struct track {
	long pid, id;
	int is_ring, used;
	int shown;              /* an event was written on it */
	unsigned order;         /* of its first written event */
	unsigned last_src;
	char last[RD_THREAD_NAME_MAX];
	char names[256];
};

/* What the flow arrows need of each source. */
struct src_flow {
	int has_start, has_fc, has_exec;
	uint64_t start_ts, fc_ts, exec_ts;  /* ring_start, fork_child, rte.exec */
	long start_tid, fc_tid, exec_tid;   /* on which track */
};

struct fork_pt {
	long pid, tid, child;
	uint64_t ts;
};

/* The time of the latest fork_child seen of a pid (open addressing). */
struct fork_child_ts {
	long pid;    /* 0: free */
	uint64_t ts;
};

struct chrome {
	struct rd_sink sink;
	int started, any;
	uint64_t base;
	struct ring_names **rn; /* per source, per ring; lazy */
	unsigned nrn;
	uint64_t *first;        /* per source: its first event's time, + 1 */
	unsigned nfirst;
	struct track *tr;       /* open addressing on (pid, id, is_ring) */
	size_t trcap, ntr;
	unsigned nshown;        /* tracks with an event written */
	struct src_flow *sf;    /* per source, nsf of them */
	unsigned nsf;
	struct fork_pt *forks;
	size_t nforks, forkcap;
	struct fork_child_ts *fc; /* fcap slots, nfc used */
	size_t fcap, nfc;
	unsigned long long async; /* ids of async slices given */
	struct { unsigned src, ring; } holding[16]; /* rings with nheld */
	unsigned nholding;
	struct rd_prof *prof;   /* decodes rte.sample; NULL: drawn raw */
};

#define ARROW " \xe2\x86\x92 " /* " → " between the files of one pid */

/* chrome.c: the writing of one record */
void chrome_ev_open(struct chrome *C, struct rd_out *o, const char *ph,
                    long pid, long tid, uint64_t ts);
void chrome_put_name(struct rd_out *o, const char *name, const char *cat);
void chrome_instant_args(struct rd_out *o, const struct rte_event *ev);
/* Write the exec attempt held on ring rn (it did not fail). */
void chrome_flush_held(struct chrome *C, struct rd_ctx *c,
                       const struct rd_item *it, struct ring_names *rn);

/* chrome_tracks.c */
unsigned chrome_src(struct rd_ctx *c, const struct rd_item *it);
/* The ring state of (src, ring), made if new; NULL if out of memory. */
struct ring_names *chrome_ring(struct chrome *C, struct rd_ctx *c,
                               unsigned src, unsigned ring);
/* The chrome tid of an event: its thread's tid, else its ring's tenancy
 * (CHROME_TENANCY_STRIDE). */
long chrome_tid(struct chrome *C, struct rd_ctx *c, const struct rd_item *it);
/* The same for ring r of source src in tenancy k. */
long chrome_ring_tid(unsigned r, unsigned k);
void chrome_note_first(struct chrome *C, unsigned src, uint64_t ts);
void chrome_track_note(struct chrome *C, struct rd_ctx *c, const struct rd_item *it);
void chrome_track_show(struct chrome *C, struct rd_ctx *c, const struct rd_item *it);
void chrome_note_thread_name(struct chrome *C, struct rd_ctx *c,
                             const struct rd_item *it);
/* The thread_name records of process pr's tracks, and its process_name. */
void chrome_finish_proc(struct chrome *C, struct rd_ctx *c, struct rd_proc *pr);
struct rd_ptnode;
/* The process_name and thread_name of x, a process of the tree without a
 * file of its own (its track tid = pid), once a pid and only if no file
 * has its pid. */
void chrome_name_fileless(struct chrome *C, struct rd_ctx *c, const struct rd_ptnode *x);

/* chrome_recs.c: the instant of a well-formed rte.sample (named by its
 * leaf function), or of an rte.crash / rte.backtrace record: 1 if it was
 * one (written), else 0 (nothing written). */
int chrome_sample_instant(struct chrome *C, struct rd_ctx *c, const struct rd_item *it);
int chrome_crash_instant(struct chrome *C, struct rd_ctx *c, const struct rd_item *it);

/* chrome_flows.c */
int chrome_is_flow_point(const struct rte_event *ev);
void chrome_flow_note(struct chrome *C, struct rd_ctx *c,
                      const struct rd_item *it, const struct rte_event *ev,
                      uint64_t ts, long tid);
void chrome_flush_other_holds(struct chrome *C, struct rd_ctx *c,
                              const struct rd_item *it);
int chrome_hold_exec(struct chrome *C, struct rd_ctx *c,
                     const struct rd_item *it, struct ring_names *rn);
/* The process tree's lifetime slices and spawn arrows (ptree.h). */
void chrome_finish_ptree(struct chrome *C, struct rd_ctx *c);
void chrome_finish_flows(struct chrome *C, struct rd_ctx *c);
/* Note that pid's ring 0 got its fork_child at ts. */
void chrome_note_fork_child(struct chrome *C, long pid, uint64_t ts);
/* Where the parent's fork_parent(child) at ts is drawn: at ts, or at the
 * child's fork_child if that is earlier. The shim before this rule
 * stamped fork_parent after fork() returned, later than the child's
 * fork_child (stamped before the fork): the arrow would point back. */
uint64_t chrome_fork_anchor(struct chrome *C, long child, uint64_t ts);

#endif
