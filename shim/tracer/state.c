/*
 * state.c - the tracer's state machine: its variables, the lock, the
 * disabled state, the read accessors, pause and resume. The tracer is the
 * folder shim/tracer/ (its interface tracer.h, its private header
 * internal.h): this file, attach.c (threads bound to rings; the rte.* and
 * lifecycle event writers), fork.c (fork children: adoption, the atfork
 * handlers, the lazy file) and life.c (start, stop, exec: each file's
 * first and last events). The ring slots are slots.c's, the per-thread
 * states pool.c's. No file outside this folder writes the state,
 * rte_g_active, the paused flag or the generation (they read them, with
 * the orders noted there).
 *
 * The state machine (rte_tr_state; "paused" is a flag beside RUNNING and
 * FORKED, rte_g_active is the generation while RUNNING and not paused,
 * RTE_GEN_PENDING while FORKED and not paused, else 0):
 *
 *               start (rte_start, or the constructor with
 *               OCAML_RUNTIME_EVENTS_START): file made, ring_start
 *      +-----+ ----------------------------------------> +---------+
 *      | OFF |                                           | RUNNING |<-+
 *      +-----+ ---+  start: OCaml 5 runs its own events, +---------+  |
 *                 |  no MADV_WIPEONFORK, or no file         | |  ^    |
 *                 v                                         | |  |    | pause/resume
 *           +----------+ <--- disable: an error (any state) | |  |    | (rte_pause,
 *           | DISABLED | <--- lost: SIGBUS on the ring      | |  |    | rte_resume):
 *           +----------+      (crash handler)               | |  |    | paused flag,
 *                                                           | |  |    | ring_pause /
 *                 stop (destructor at exit, _exit wrappers, | |  |    | ring_resume
 *                 a terminating signal): ring_stop, file    | |  |    |
 *                 removed unless PRESERVE or an observer    | |  |  --+
 *                 keeps it                                  | |  |
 *           +---------+ <-----------------------------------+ |  | exec failed
 *           | STOPPED | <-------------------------------------+  | (exec wrappers):
 *           +---------+    exec begin (exec wrappers): ring_stop,|  file back,
 *                |         file moved away (<pid>.execN.events   |  ring_start,
 *                +-------- or unlinked)  ------------------------+  rte.exec_failed
 *
 *   RUNNING or FORKED --fork child (atfork child handler, or rte_tr_adopt_child
 *       for a child made without one)--> FORKED: the parent's mapping is
 *       dropped; generation pending
 *   FORKED --materialize (first event, exec, rte_path, or at once with
 *       PRESERVE)--> RUNNING: <childpid>.events made, ring_start +
 *       fork_child, a new generation
 *   FORKED --stop, exec--> no transition without PRESERVE (no file was
 *       made: nothing to stop or remove); with it, materialize first
 *   fork parent: no transition (fork_parent lifecycle event, hooks)
 *
 * Illegal requests change nothing: start in STOPPED or DISABLED returns
 * RTE_ESTATE, start in RUNNING or FORKED returns RTE_OK; pause/resume
 * outside RUNNING/FORKED, or twice, are no-ops; stop and exec begin run
 * once per file (rte_tr_stopping). tests/unit/test_shim_tracer.c makes
 * each of these transitions.
 *
 * The file is never unmapped while other threads may run (only in a fork
 * child, which has one thread): at exit, other threads may still be
 * writing when ring_stop is written, and their stores must land in memory.
 *
 * The registry lock is only ever held with every signal blocked
 * (rte_lock), so no signal handler can run in its holder.
 */
#include <errno.h>
#include <signal.h>

#include "internal.h"
#include "sys.h"

/* Exported: the inline check of rte/rte.h reads it in the caller. */
RTE_FORKVAR RTE_EXPORT uint32_t rte_g_active;
uint32_t rte_tr_gen;
RTE_FORKVAR int rte_tr_state;
RTE_FORKVAR int rte_tr_paused;
RTE_FORKVAR pid_t rte_tr_pid;
struct rte_config rte_tr_cfg;
struct rte_file rte_tr_file;
RTE_FORKVAR pthread_mutex_t rte_tr_lock = PTHREAD_MUTEX_INITIALIZER;
int rte_tr_own[RTE_OWN_COUNT] = {[0 ... RTE_OWN_COUNT - 1] = -1};
uint64_t rte_g_dropped;
RTE_FORKVAR int rte_tr_stopping; /* ring_stop written, atomic */
int rte_tr_pool_ok;              /* the pool's key exists (rte_pool_load) */
int rte_tr_not_preloaded;        /* rte_tracer_not_preloaded() */

void rte_lock_blocked(void)
{
	if (child_pending())
		rte_tr_adopt_child();
	pthread_mutex_lock(&rte_tr_lock);
}

void rte_unlock_blocked(void)
{
	pthread_mutex_unlock(&rte_tr_lock);
}

void rte_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	rte_real_sigmask(SIG_SETMASK, &all, old);
	rte_lock_blocked();
}

void rte_unlock(const sigset_t *old)
{
	rte_unlock_blocked();
	rte_real_sigmask(SIG_SETMASK, old, NULL);
}

void rte_tracer_disable(const char *why)
{
	rte_warn(NULL, "%s; tracing disabled", why);
	/* Release: pairs with the relaxed load in rte_enter() only as far as
	 * stopping goes; writers already inside finish into a valid map. */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	/* Release: pairs with state(); nothing is attached any more. */
	__atomic_store_n(&rte_tr_state, ST_DISABLED, __ATOMIC_RELEASE);
}

/* The file could not be made: a process whose identity may not use the
 * directory (a child that switched user, a daemon that dropped
 * privileges) stands aside without a word on the program's stderr; only
 * RTE_LOG's file records it. */
void rte_tr_disable_quiet(const struct rte_file *f, const char *why)
{
	if (!f->denied) {
		rte_tracer_disable(why);
		return;
	}
	rte_note("%s; tracing disabled", why);
	/* Release: as in rte_tracer_disable(). */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&rte_tr_state, ST_DISABLED, __ATOMIC_RELEASE);
}

/* ---- read accessors ------------------------------------------------------ */

int rte_tracer_state(void)
{
	rte_tracer_settle();
	return state();
}

/* 1 if this process (state st, running or forked) is a fork child that
 * has not made its file yet. */
RTE_FORKTEXT static int no_file_yet(int st)
{
	return st == ST_FORKED || child_pending();
}

RTE_FORKTEXT int rte_tracer_stop_needed(void)
{
	int st = state();

	if (st != ST_RUNNING && st != ST_FORKED)
		return 0;
	return no_file_yet(st) ? rte_tr_cfg.preserve : 1;
}

RTE_FORKTEXT int rte_tracer_file_pending(void)
{
	int st = state();

	return rte_tr_cfg.preserve && (st == ST_RUNNING || st == ST_FORKED) &&
	       no_file_yet(st);
}

/* 1 between rte_tracer_hush() and rte_tracer_unhush(): the fork child
 * makes no file (rte_tracer_materialize, the one place a child's file is
 * made), whatever asks (a handler's event, fork or exit: its event is
 * dropped, as when another thread is making the file). */
int rte_tr_hushed;

void rte_tracer_hush(void)
{
	__atomic_store_n(&rte_tr_hushed, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void rte_tracer_unhush(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&rte_tr_hushed, 0, __ATOMIC_RELAXED);
}

RTE_FORKTEXT int rte_tracer_exit_needed(void)
{
	/* a fork child its parent tells needs nothing at exit */
	return rte_tracer_stop_needed() && !rte_tr_fileless_end();
}

int rte_tracer_running(void)
{
	return state() == ST_RUNNING;
}

int rte_tracer_paused(void)
{
	return rte_tr_paused;
}

uint32_t rte_tracer_gen(void)
{
	/* Acquire: pairs with the release of rte_tr_gen in
	 * rte_tr_begin_file(). */
	return __atomic_load_n(&rte_tr_gen, __ATOMIC_ACQUIRE);
}

pid_t rte_tracer_pid(void)
{
	rte_tracer_settle();
	return rte_tr_pid;
}

const struct rte_config *rte_tracer_config(void)
{
	return &rte_tr_cfg;
}

const struct rte_file *rte_tracer_file(void)
{
	return &rte_tr_file;
}

/* ---- pause and resume ---------------------------------------------------- */

void rte_tracer_pause_locked(void)
{
	if (rte_tr_state == ST_FORKED && !rte_tr_paused) {
		/* A fork child without its file yet: nothing to write. */
		rte_tr_paused = 1;
		/* Release: as below. */
		__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	} else if (rte_tr_state == ST_RUNNING && !rte_tr_paused) {
		rte_tracer_lifecycle(RTE_LC_RING_PAUSE, 0, 1);
		rte_tr_paused = 1;
		/* Release: pairs with nothing in particular; writers that
		 * still see the old value finish a valid write. */
		__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	}
}

void rte_tracer_resume_locked(void)
{
	if (rte_tr_state == ST_FORKED && rte_tr_paused) {
		rte_tr_paused = 0;
		/* Release: the pending value sends the next event to the
		 * slow path, which makes the file. */
		__atomic_store_n(&rte_g_active, RTE_GEN_PENDING,
		                 __ATOMIC_RELEASE);
	} else if (rte_tr_state == ST_RUNNING && rte_tr_paused) {
		rte_tr_paused = 0;
		/* Release: pairs with the acquire in rte_tracer_attach() (the
		 * generation is already published; this only re-opens). */
		__atomic_store_n(&rte_g_active, rte_tr_gen, __ATOMIC_RELEASE);
		rte_tracer_lifecycle(RTE_LC_RING_RESUME, 0, 1);
	}
}

void rte_tracer_lost(void)
{
	/* Release: pairs with the relaxed load in rte_enter(). */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELEASE);
	/* Release: pairs with the state loads: no exit path writes or
	 * removes anything from now on. */
	__atomic_store_n(&rte_tr_state, ST_DISABLED, __ATOMIC_RELEASE);
	if (!rte_tr_cfg.preserve)
		rte_file_remove(&rte_tr_file);
}

/* ---- load --------------------------------------------------------------- */

void rte_tracer_not_preloaded(void)
{
	rte_tr_not_preloaded = 1;
}

void rte_tracer_load(void)
{
	rte_tr_pool_ok = rte_pool_load(rte_tr_thread_end) == 0;
	if ((rte_tr_proc = rte_pool_map_wiped(sizeof(*rte_tr_proc))))
		rte_tr_proc->pid = rte_sys_getpid();
}
