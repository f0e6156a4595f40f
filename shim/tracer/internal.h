/*
 * internal.h - what the files of the tracer (shim/tracer/) share and
 * nothing outside it may use: the state machine's variables, the
 * per-process page, and the few functions one file of it calls in
 * another. The interface of the tracer is tracer.h; state.c has the
 * picture of the state machine and says who writes what.
 *
 *   state.c   the variables below marked (state.c), the lock, disable,
 *             accessors, pause and resume, load
 *   attach.c  threads bound to rings, thread end, rte.* writers
 *   fork.c    fork children: adoption, atfork handlers, materialize
 *   life.c    start, stop, exec: each file's first and last events
 *
 * Every name here is hidden (tracer.h pushes hidden visibility; librte.map
 * keeps them local too) and carries the prefix rte_tr_.
 */
#ifndef RTE_SHIM_TRACER_INTERNAL_H
#define RTE_SHIM_TRACER_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "forkvars.h"
#include "tracer.h"

#pragma GCC visibility push(hidden)

/* ---- the state machine (state.c) ---------------------------------------- */

extern uint32_t rte_tr_gen;          /* generation of the current file */
extern int rte_tr_state;             /* ST_*: read it through state() */
extern int rte_tr_paused;            /* rte_pause()d, lock held */
extern pid_t rte_tr_pid;             /* the process that owns the file */
extern struct rte_config rte_tr_cfg; /* read at start */
extern struct rte_file rte_tr_file;  /* the current file */
extern pthread_mutex_t rte_tr_lock;  /* the registry lock (rte_lock) */
extern int rte_tr_own[RTE_OWN_COUNT]; /* ids of rte.* events, -1: none */
extern int rte_tr_stopping;          /* ring_stop written, atomic */
extern int rte_tr_pool_ok;           /* the pool's key exists */
extern int rte_tr_not_preloaded;     /* rte_tracer_not_preloaded() */

RTE_FORKTEXT static inline int state(void)
{
	/* Acquire: pairs with the release stores of rte_tr_state. */
	return __atomic_load_n(&rte_tr_state, __ATOMIC_ACQUIRE);
}

/* Disabled after the file could not be made: quietly (RTE_LOG only) if
 * the directory denied this identity, else as rte_tracer_disable(). */
void rte_tr_disable_quiet(const struct rte_file *f, const char *why);

/* ---- rings (attach.c) --------------------------------------------------- */

extern int rte_tr_once_full; /* "all rings in use" said for this file */

static inline uint64_t user_hdr(unsigned type, int id)
{
	return rte_hdr_make(0, 1, type, (unsigned)id);
}

static inline uint64_t lc_hdr(unsigned lc)
{
	return rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, lc);
}

/* Ring r of the current file is the calling thread's (t), generation gen. */
void rte_tr_bind_ring(struct rte_thread *t, unsigned r, uint32_t gen);
/* rte.thread.tid and rte.thread.name on w (the caller's, busy). */
void rte_tr_write_labels(struct rte_ring_writer *w);
/* Like rte_enter() but also while paused: for lifecycle events. */
struct rte_ring_writer *rte_tr_enter_any(int quiet);
/* The pool key's destructor: a thread's end (v: its pool index + 1). */
void rte_tr_thread_end(void *v);

/* ---- fork children (fork.c) --------------------------------------------- */

/*
 * Per-process page, mapped with MADV_WIPEONFORK: pid is this process's id
 * once it knows its file (the constructor, or the atfork child handler),
 * and reads 0 in a child that no atfork handler saw (_Fork, a raw fork or
 * clone system call). -1 while such a child is being adopted.
 */
struct rte_proc {
	pid_t pid;
};
extern struct rte_proc *rte_tr_proc;
/* The state and id of the thread that forked: it keeps ring 0 in the
 * child's file (see rte_tr_begin_file) until it takes it or ends. */
extern struct rte_thread *rte_tr_heir;
extern pthread_t rte_tr_heir_th;
extern pid_t rte_tr_forked;     /* see fork.c */
extern pid_t rte_tr_fork_ppid;  /* the parent, for a fork child's rte.proc */
extern uint64_t rte_tr_fork_ts; /* the time of the fork */

/* Set while a fork child execs without a file (state.c). */
extern int rte_tr_hushed;

/* 1 in a child process not adopted yet: its atfork handler ran
 * (rte_tr_forked) or none did (the per-process page reads 0: _Fork, raw
 * fork or clone). */
RTE_FORKTEXT static inline int child_pending(void)
{
	/* Relaxed (both): written by this process's only thread at fork;
	 * the page is ours alone, 0 means wiped by fork. */
	return __atomic_load_n(&rte_tr_forked, __ATOMIC_RELAXED) ||
	       (rte_tr_proc &&
	        __atomic_load_n(&rte_tr_proc->pid, __ATOMIC_RELAXED) == 0);
}

/* Adopt a child not adopted yet: 0 once adopted, -1 if it cannot be
 * (see fork.c). */
int rte_tr_adopt_child(void);
/* 1 if this process, with PRESERVE, is a fork child that never wrote
 * and whose parent records its end (rte.reap): its exit makes no file
 * (see fork.c). */
int rte_tr_fileless_end(void);

/* ---- start and stop (life.c) -------------------------------------------- */

/* A failure's one line (start and materialize: lock held). */
extern char rte_tr_err[PATH_MAX + 160];

/* Fresh file mapped in rte_tr_file: reset the slots, give ring 0 to the
 * calling thread (or keep it for the thread that forked), publish the
 * generation, write ring_start (and fork_child). */
void rte_tr_begin_file(int fork_child, uint64_t start_ts);

#pragma GCC visibility pop

#endif
