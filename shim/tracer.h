/*
 * tracer.h - the tracer (the folder tracer/: state.c, attach.c, fork.c,
 * life.c, sharing tracer/internal.h): the one owner of the tracing state
 * machine (its diagram is in tracer/state.c's header), the attach slow
 * path of the write path and the writers of rte.* and lifecycle events. Below it:
 * the ring slots (slots.h) and the per-thread state pool (pool.h, struct
 * rte_thread and rte_self_get), both included here, and the leaves
 * (config, log, fd, file, ocaml, real, registry);
 * above it: hooks/, the crash recorder, api.c and init.c (see init.c for
 * the picture).
 *
 * The state globals below are written by tracer/ only; other files read
 * them (with the memory orders their comments give). rte_g_active is the
 * hot-path word and stays a plain exported global for the inline check.
 *
 * Everything here is hidden: librte.so exports only rte/rte.h, rte_strerror
 * and the libc functions it interposes (shim/librte.map).
 */
#ifndef RTE_SHIM_TRACER_H
#define RTE_SHIM_TRACER_H

#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "backtrace.h"
#include "config.h"
#include "fd.h"
#include "file.h"
#include "log.h"
#include "ocaml.h"
#include "pool.h"
#include "real.h"
#include "slots.h"
#include "ring.h"
#include "rte/format.h"
#include "rte/rte.h"

#pragma GCC visibility push(hidden)

#define RTE_EXPORT __attribute__((visibility("default")))

/* ---- global state (tracer/) ------------------------------------------------ */

/* ST_FORKED: a fork child whose own file is not made yet (it is made by
 * the child's first event, its own fork or thread, exec or rte_path();
 * with PRESERVE at exit too, unless rte_tr_fileless_end() says its
 * parent tells its end). */
enum { ST_OFF = 0, ST_RUNNING, ST_STOPPED, ST_DISABLED, ST_FORKED };
/* rte_g_active while ST_FORKED: matches no thread's generation, so the
 * first event takes the slow path, which makes the file. */
#define RTE_GEN_PENDING 0xffffffffu

/* The ids of rte's own events (-1 if no id was free): RTE_OWN_*, not
 * RTE_EV_* (the consumer library's event kinds). */
enum {
	RTE_OWN_TID,       /* rte.thread.tid, int */
	RTE_OWN_NAME,      /* rte.thread.name, custom */
	RTE_OWN_NAME_OF,   /* rte.thread.name_of, custom "<ring>:<name>" */
	RTE_OWN_DROPPED,   /* rte.dropped, int */
	RTE_OWN_EXEC,      /* rte.exec, custom: the program being executed */
	RTE_OWN_EXEC_FAIL, /* rte.exec_failed, int: errno of the failed exec */
	RTE_OWN_PROC,      /* rte.proc, custom: rte_proc_rec + argv */
	RTE_OWN_EXIT,      /* rte.exit, custom: rte_exit_rec of this process */
	RTE_OWN_REAP,      /* rte.reap, custom: rte_exit_rec of a reaped child */
	RTE_OWN_SPAWN,     /* rte.spawn, int: pid of a spawned/vforked child */
	RTE_OWN_SPAWN_FAIL, /* rte.spawn_failed, custom: rte_spawn_fail_rec +
	                       argv of a posix_spawn that failed */
	RTE_OWN_COUNT
};

/* Hot: the generation of the current file while tracing runs and is not
 * paused, else 0. The only word the write path reads when tracing is off. */
extern uint32_t rte_g_active RTE_EXPORT; /* also declared in rte/rte.h */
/* Hot: events dropped (a nested signal handler, no ring). */
extern uint64_t rte_g_dropped;

/* Read accessors of the tracer's state (written by tracer/ only). All
 * async-signal-safe. */
int rte_tracer_state(void);      /* ST_*, acquire */
int rte_tracer_paused(void);     /* rte_pause()d (lock held for a stable
                                    answer) */
uint32_t rte_tracer_gen(void);   /* generation of the current file, acquire */
pid_t rte_tracer_pid(void);      /* process that owns the file */
const struct rte_config *rte_tracer_config(void); /* read at start */
const struct rte_file *rte_tracer_file(void);     /* the current file */


/* Take the registry lock with every signal blocked (the previous mask in
 * *old): a signal handler can never interrupt its holder, so a handler
 * that forks (atfork prepare takes the lock) or registers cannot deadlock.
 * In a fork child that no atfork handler saw, first adopts the child. */
void rte_lock(sigset_t *old);
void rte_unlock(const sigset_t *old);
/* The same, for a caller that has blocked every signal itself. */
void rte_lock_blocked(void);
void rte_unlock_blocked(void);

/*
 * Extension point: what the layers above learn of the tracer's
 * transitions. The list is defined by init.c (the wiring layer) as a
 * constant table, so that it is in place even if another library's
 * constructor starts tracing before ours ran; it ends with a NULL. Any
 * member may be NULL. A new module (e.g. a CPU profiler arming its
 * per-thread timers) adds one entry in init.c; nothing here changes.
 */
struct rte_tracer_observer {
	/* Tracing has just started (registry lock held). Not signal-safe. */
	void (*started)(void);
	/* At stop: nonzero keeps the file even without PRESERVE (a crash was
	 * recorded). Async-signal-safe. */
	int (*keep_file)(void);
	/* A thread that had a per-thread state is ending (pthread key
	 * destructor), before its ring is given back. */
	void (*thread_end)(void);
	/* The calling thread has just taken a ring (its first event, or its
	 * start), not on an exit path. May run in a signal handler: must be
	 * async-signal-safe. */
	void (*attached)(void);
	/* atfork child handler, after the tracer's own work (one thread,
	 * every signal blocked). */
	void (*fork_child)(void);
	/* Stop for good (exit, _exit, a terminating signal; not exec),
	 * once per process, before ring_stop is written. Async-signal-safe. */
	void (*final_stop)(void);
	/* Tracing is about to stop in this process (exit, a fatal signal,
	 * exec): the calling thread's last moment to write. Async-signal-
	 * safe. */
	void (*stopping)(void);
};
extern const struct rte_tracer_observer *const rte_tracer_observers[];

/* Set up the per-thread state's key and the per-process page: called
 * once by the constructor (init.c), before any start. */
void rte_tracer_load(void);
/* rte_pause()/rte_resume() (lock held): RUNNING <-> paused, writing
 * ring_pause/ring_resume; a fork child without its file only changes the
 * flag. */
void rte_tracer_pause_locked(void);
void rte_tracer_resume_locked(void);
/* The ring mapping lost its blocks (SIGBUS on it, crash handler):
 * tracing disabled for good, the file removed unless PRESERVE. The caller
 * has replaced the mapping. Async-signal-safe. */
void rte_tracer_lost(void);

/* Start tracing (lock held by the caller). Returns RTE_OK or RTE_ESTATE. */
int rte_tracer_start_locked(void);
/* Disable tracing for good after an error, with one line on stderr. */
void rte_tracer_disable(const char *why);
/* Slow path of rte_tracer_writer(): attach the calling thread to a ring of
 * generation `gen`. quiet: no domain_spawn/tid/name events (exit paths).
 * Returns the writer or NULL (events are then dropped and counted). */
struct rte_ring_writer *rte_tracer_attach(int quiet);
/* Give the calling thread's ring back (thread end). Writes domain_terminate
 * first if tracing is active. */
void rte_tracer_release(void);
/* Write ring_stop (and rte.dropped) once and remove the file unless
 * PRESERVE. Safe at exit, in _exit, in a signal handler. */
void rte_tracer_stop(void);
/* The atfork prepare handler's part (lock held, in the parent): note the
 * fork's time and thread for the child. */
void rte_tracer_atfork_prepare(void);
/* The thread inside the fork wrapper (hooks/process.c), set around the
 * real fork (0 after it): the forks that write fork_parent. */
extern pthread_t rte_tr_fork_wrapper;
/* Before a fork's handlers take their locks (hooks/process.c): with
 * PRESERVE, a fork child that never wrote makes its file now. */
void rte_tracer_fork_early(void);
/* The atfork child handler's part (signals blocked, one thread): re-make
 * the lock, note that this is a child to settle and which thread forked;
 * the observers' fork_child (the file is made lazily, with PRESERVE too).
 * Touches only RTE_FORKVAR pages and calls no libc function unless an
 * observer acts (see tracer/life.c). */
void rte_tracer_atfork_child(void);
/* In a fork child (made with or without our handlers) not settled yet:
 * let go of the parent's file and state (the child's own file is made
 * lazily, but at once here with PRESERVE; the thread that forked keeps
 * ring 0 of it). A no-op anywhere else. Async-signal-safe. Preserves
 * errno. Called by every slow path of the tracer, and by
 * whoever acts in a child before any event (pthread_create, observers). */
void rte_tracer_settle(void);
/* What stop would do now: 0 if rte_tracer_stop() (or exec) has nothing
 * to do (not tracing, or a fork child that made no file and keeps none
 * without PRESERVE), read without touching any per-thread page. */
int rte_tracer_stop_needed(void);
/* 1 in a fork child with PRESERVE that has not made its file yet (it
 * never wrote): an exec into an image that traces itself into the same
 * directory needs none (hooks/execimage.c). */
int rte_tracer_file_pending(void);
/* Around such an exec (one thread: a child that made no file has no
 * other): nothing makes the file meanwhile (a signal handler's event
 * would, and the new image's own file could then not be made). */
void rte_tracer_hush(void);
void rte_tracer_unhush(void);
/* The same at exit: 0 also for a fork child whose parent tells its end
 * (rte_tr_fileless_end: with PRESERVE it makes no file). */
int rte_tracer_exit_needed(void);
/* Fork child: make the pending file now if we can (see ST_FORKED). */
void rte_tracer_materialize(void);
/* Write a name into name slot `id` of the file (lock held or single). */
void rte_tracer_write_name(unsigned id, const char *name);
/* Register an rte.* event from the top of the id space, its name written
 * into the file if one is mapped (lock held). Returns the id or -1. */
int rte_tracer_register_own(const char *name, enum rte_type type);
/* Write the calling thread's name as rte.thread.name on its ring. */
void rte_tracer_write_thread_name(void);
/* Write rte.thread.name_of "<ring>:<name>" for thread `t` on our ring. */
void rte_tracer_write_name_of(pthread_t t, const char *name);
/* Lifecycle event on our ring, written whether or not tracing is paused
 * (as long as it runs). */
void rte_tracer_lifecycle(unsigned lc, int64_t data, int with_data);
/* fork_parent(child) on our ring, right after fork, stamped ts: the
 * time taken before fork was called, so that it is never later than the
 * child's fork_child (stamped in the prepare handler) and the arrow from
 * parent to child points forward. Writes none of our copy-on-write
 * pages besides the ring's. */
void rte_tracer_fork_parent(pid_t child, uint64_t ts);
/* The id of rte.* event `which` (RTE_OWN_*), -1 if it has none. */
int rte_tracer_own_id(int which);
/* Write an rte.* event of the calling thread (no-op when not active). */
void rte_tracer_own_int(int which, int64_t v);
void rte_tracer_own_custom(int which, const void *bytes, size_t n);
/* The same while paused too (a process record, as lifecycle events are:
 * rte.reap). */
void rte_tracer_own_custom_always(int which, const void *bytes, size_t n);
/* 1 if this process's file is running (paused or not). */
int rte_tracer_running(void);
/* Write a custom message with a payload of n bytes. Returns 0 or -1. */
int rte_tracer_write_custom(struct rte_ring_writer *w, uint64_t hdr,
                          const void *bytes, size_t n);

/* exec: write ring_stop and move the file out of the new image's way;
 * returns 1 if it did (then call rte_tracer_exec_failed if exec returns). */
int rte_tracer_exec_begin(const char *prog);
void rte_tracer_exec_failed(int err);
/* A user change after which this process may not remove its file (the
 * caller, hooks/identity.c, judged it): as exec does, ring_stop and the
 * file removed (RTE_LOG notes it), tracing stopped for good. Returns 1 if
 * it did (then call rte_tracer_identity_failed if the change failed: the
 * file is back, tracing goes on). Nothing with PRESERVE (the file stays
 * whatever happens) or where the process owns no file. */
int rte_tracer_identity_begin(void);
void rte_tracer_identity_failed(void);

/* 0 in a vfork child of the process that owns the state (it shares our
 * memory, not our pid: it must write nothing), else 1. One getpid system
 * call. Async-signal-safe. */
int rte_tracer_may_write(void);
/* 1 if the calling process owns the file and tracing runs (false in a
 * vfork child, which shares our memory but has another pid). A fork child
 * with PRESERVE makes its pending file here (at exec, or at an exit its
 * parent does not tell). */
int rte_tracer_owns_process(void);

/* 1 in a vfork child: it shares our memory (every variable of ours, the
 * per-thread state of the thread that vforked) but not our pid. Every hook
 * then calls the real function and nothing else (one getpid system call:
 * hooks take it off their fast paths). Async-signal-safe. Exact for every
 * child that shares our memory. */
int rte_tracer_vforked(void);
/* The vforks our vfork wrapper (x86-64) is inside of: the child runs
 * while this is above 0 (it shares it with its parent, which takes it
 * down again once the child has exec'd or exited). Atomic. */
extern int rte_vfork_depth;
/* rte_tracer_vforked() for the allocation profiler's sampling paths, a
 * load instead of a system call where it can: on x86-64 no vfork child
 * can run unless rte_vfork_depth is above 0, except a child of a raw
 * vfork or clone(CLONE_VM) system call that then calls malloc (what it
 * could write is only a record on its parent's thread's ring). Elsewhere
 * rte_tracer_vforked() itself. Async-signal-safe. */
static inline int rte_tracer_vforked_fast(void)
{
#if defined(__x86_64__)
	if (!__atomic_load_n(&rte_vfork_depth, __ATOMIC_RELAXED))
		return 0;
#endif
	return rte_tracer_vforked();
}

/* The constructor found our wrappers bypassed (librte.so loaded with
 * dlopen): tracing never starts (rte_start and OCAML_RUNTIME_EVENTS_START
 * give one warning and RTE_ESTATE), so no file is left half-traced. */
void rte_tracer_not_preloaded(void);

/*
 * The write path. Returns the calling thread's writer, marked busy, or NULL
 * (nothing to do: tracing is off or paused, or no ring). Pair every
 * non-NULL return with rte_leave().
 */
static inline struct rte_ring_writer *rte_enter(void)
{
	/* Relaxed: only decides whether to write at all. The writer's own
	 * pointers were published by the acquire in rte_tracer_attach(). */
	uint32_t a = __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED);
	struct rte_ring_writer *w;
	struct rte_thread *t;

	if (__builtin_expect(a == 0, 0))
		return NULL;
	t = rte_self_get();
	if (__builtin_expect(t->busy, 0)) {
		/* A signal handler interrupted a write of this thread: its
		 * ring is mid-message, so this event is dropped. */
		__atomic_fetch_add(&rte_g_dropped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	t->busy = 1;
	/* Keeps the busy store before the ring stores (same thread: only a
	 * signal handler observes it). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(t->gen == a, 1))
		return &t->w;
	w = rte_tracer_attach(0);
	if (!w) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->busy = 0;
	}
	return w;
}

/* rte_leave() for the writer w that rte_enter() returned: no second
 * look at the TLS pointer. */
static inline void rte_leave_w(struct rte_ring_writer *w)
{
	struct rte_thread *t =
		(struct rte_thread *)((char *)w - offsetof(struct rte_thread, w));

	/* Keeps the ring stores before the busy store, for signal handlers. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

static inline void rte_leave(void)
{
	/* Keeps the ring stores before the busy store, for signal handlers. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rte_self_p->busy = 0; /* set by rte_enter: allocated */
}

#pragma GCC visibility pop

#endif
