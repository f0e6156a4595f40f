/*
 * fork.c - fork children: which process owns the file, the adoption of a
 * child (with our atfork handlers or without: _Fork, raw fork and clone),
 * the atfork handlers, and the child's own file, made lazily
 * (materialize). Part of the tracer (state.c has its picture).
 *
 * Per-thread state (struct rte_thread) comes from a pool mapped with
 * MADV_WIPEONFORK (pool.c), reached through one initial-exec TLS pointer;
 * a page of per-process state is mapped the same way here. Both read zero
 * in any child, so a child made without our atfork handlers (_Fork, raw
 * fork or clone system calls) finds no writer attached (its first event
 * takes the slow path) and a zero pid in the page: it is then adopted as
 * a fork child (rte_tr_adopt_child), never writing into the parent's file.
 */
#include <errno.h>
#include <signal.h>
#include <sys/single_threaded.h>
#include <unistd.h>

#include "clock.h"
#include "forkvars.h"
#include "internal.h"
#include "proc.h"
#include "sys.h"

RTE_FORKVAR struct rte_proc *rte_tr_proc;
/* The state and id of the thread that forked: it keeps ring 0 in the
 * child's file (see rte_tr_begin_file) until it takes it or ends. */
RTE_FORKVAR struct rte_thread *rte_tr_heir;
RTE_FORKVAR pthread_t rte_tr_heir_th;

/*
 * A fork child settles lazily: its atfork handler only re-makes the lock
 * and notes its pid here (rte_tr_forked, on the page that handler writes
 * anyway); everything else (dropping the parent's mapping, the new state,
 * the pool) is done by rte_tr_adopt_child() when the child first needs it: an
 * event, a lock, exec or exit with PRESERVE, a crash. A child that only
 * execs or _exits then touches no other page of ours (each one a page
 * fault after fork). 0 in any other process.
 */
RTE_FORKVAR pid_t rte_tr_forked;
/* The parent of a fork child, for its rte.proc: noted by the atfork
 * prepare handler (in the parent, so the child inherits it), or at
 * adoption without our handlers (getppid then). */
RTE_FORKVAR pid_t rte_tr_fork_ppid;
/* The process that forks and the time, noted by the prepare handler
 * for the child (whose handler copies them into its own). */
static RTE_FORKVAR pid_t rte_tr_forker;
static RTE_FORKVAR uint64_t rte_tr_forker_ts;
/* 1 if the forking parent tells the child it makes (see
 * rte_tr_fileless_end): noted by the prepare handler, the child's copy by
 * the child handler. */
static RTE_FORKVAR int rte_tr_forker_tells;
static RTE_FORKVAR int rte_tr_fork_told;
/* The thread inside the fork wrapper (hooks/process.c), around the real
 * fork (0: none): only that fork writes fork_parent. Two threads forking
 * at once may see the other's (or none): their children are then told
 * as not told, and make a file. */
RTE_FORKVAR pthread_t rte_tr_fork_wrapper;

/*
 * 1 in a vfork child (or a child of clone(CLONE_VM) without CLONE_THREAD):
 * it shares our memory, the per-process page included, but has another
 * pid. The owner is the pid the atfork child handler noted (a fork child
 * not adopted yet), else the page's pid. A child of a raw fork that was
 * not adopted yet reads 0 there: it and a vfork child of it look alike,
 * and are taken as the former (adopted when they first need it).
 */
int rte_vfork_depth;

RTE_FORKTEXT int rte_tracer_vforked(void)
{
	/* Relaxed (both): see child_pending(); a vfork child reads what
	 * its parent wrote before it. */
	pid_t owner = __atomic_load_n(&rte_tr_forked, __ATOMIC_RELAXED);

	if (!owner && rte_tr_proc)
		owner = __atomic_load_n(&rte_tr_proc->pid, __ATOMIC_RELAXED);
	return owner > 0 && owner != rte_sys_getpid();
}


static void fork_switch(int from_handler);

/*
 * Adopt a child: it gets its own file, made lazily. After our atfork
 * handler, the thread that forked keeps ring 0 and ring_start carries the
 * time of the fork; without one (_Fork, raw fork or clone), the adopting
 * thread does and the time is now, and the registry lock is re-made (its
 * holder may not exist here). Returns 0 once adopted, -1 while another
 * thread of the child is adopting it, or in a vfork child of a child not
 * adopted yet (it shares that child's memory, not its pid).
 */
int rte_tr_adopt_child(void)
{
	pid_t zero = 0, me = getpid();
	/* Relaxed: see child_pending(). */
	pid_t forked = __atomic_load_n(&rte_tr_forked, __ATOMIC_RELAXED);

	if (forked && forked != me)
		return -1;
	/* Acq_rel: one adopter. */
	if (!rte_tr_proc ||
	    !__atomic_compare_exchange_n(&rte_tr_proc->pid, &zero, -1, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return rte_tr_proc && __atomic_load_n(&rte_tr_proc->pid,
		                                 __ATOMIC_ACQUIRE) > 0 ? 0 : -1;
	if (!forked)
		pthread_mutex_init(&rte_tr_lock, NULL);
	/* The states of the parent's other threads are free here, if no
	 * thread was made before us (else they are only lost). */
	if (__libc_single_threaded)
		rte_pool_fork_child();
	fork_switch(forked != 0);
	/* Release: pairs with the loads above. */
	__atomic_store_n(&rte_tr_proc->pid, me, __ATOMIC_RELEASE);
	__atomic_store_n(&rte_tr_forked, 0, __ATOMIC_RELEASE);
	return 0;
}

void rte_tracer_settle(void)
{
	if (child_pending())
		rte_tr_adopt_child();
	/* With PRESERVE, a child that settles (before its first thread, a
	 * profiler's start) makes its file too: its threads then never race
	 * to make it (the loser's event would be dropped). */
	if (rte_tr_cfg.preserve && state() == ST_FORKED) {
		int saved = errno;

		rte_tracer_materialize();
		errno = saved;
	}
}

int rte_tracer_may_write(void)
{
	pid_t me = rte_sys_getpid();
	/* Relaxed (both): see child_pending(). */
	pid_t forked = __atomic_load_n(&rte_tr_forked, __ATOMIC_RELAXED);

	if (forked)
		return forked == me; /* a fork child not adopted yet */
	if (rte_tr_proc &&
	    __atomic_load_n(&rte_tr_proc->pid, __ATOMIC_RELAXED) == 0)
		return 1; /* a child made without our handlers */
	return rte_tr_pid == me || rte_tr_pid == 0;
}

/*
 * 1 if this process is a fork child made through our handlers, not
 * adopted yet (it never wrote), whose end its parent will record: the
 * parent wrote its fork_parent and was tracing, not paused, with SIGCHLD
 * neither ignored nor SA_NOCLDWAIT when it forked (forker_tells), and is
 * still its parent now, so its wait hooks write the child's rte.reap
 * (status, signal, rusage). Its rte.proc would say what the parent's
 * fork_parent says (the parent, the parent's image and argv, unless the
 * argv was rewritten in place since the parent's rte.proc), and its
 * rte.exit what the rte.reap says: with PRESERVE such a child makes no
 * file at all (a shell's subshells: doc/DESIGN.md). A parent that after
 * the fork ignores SIGCHLD, execs an untraced image, ends before it
 * reaps, or reaps by a raw system call leaves the child known by its
 * fork_parent alone. Not for exec: the new image may be one that is not
 * traced (a static binary), and the fork child's file then names it.
 */
int rte_tr_fileless_end(void)
{
	pid_t forked = __atomic_load_n(&rte_tr_forked, __ATOMIC_RELAXED);
	int st = state();

	if (!rte_tr_cfg.preserve || !rte_tr_fork_told ||
	    (st != ST_RUNNING && st != ST_FORKED) || !forked ||
	    forked != rte_sys_getpid() || !rte_tr_fork_ppid ||
	    rte_sys_getppid() != rte_tr_fork_ppid)
		return 0;
	/* an argv rewritten since: its own rte.proc says so */
	return rte_proc_argv_as_written();
}

/* 1 if a child of this fork will be told by this process: its file is
 * running, it is not paused (fork_parent and rte.reap would not be
 * written), the fork is the wrapper's (which writes fork_parent; a fork
 * inside libc does not) from a thread not inside a write of ours, and
 * SIGCHLD is neither ignored nor SA_NOCLDWAIT (the kernel would reap the
 * child unseen). One system call, with PRESERVE only. */
static int forker_tells(int st)
{
	/* struct sigaction as the kernel lays it out: handler, flags first */
	unsigned long k[8] = { 0 };

	if (!rte_tr_cfg.preserve || st != ST_RUNNING || rte_tr_paused ||
	    !__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) ||
	    !pthread_equal(__atomic_load_n(&rte_tr_fork_wrapper,
	                                   __ATOMIC_RELAXED), pthread_self()) ||
	    (rte_self_p && rte_self_p->busy))
		return 0;
	if (rte_sys4(SYS_rt_sigaction, SIGCHLD, 0, (long)k, 8) != 0)
		return 0;
	return k[0] != (unsigned long)SIG_IGN && !(k[1] & SA_NOCLDWAIT);
}

int rte_tracer_owns_process(void)
{
	int st;

	/* A child that never wrote: without PRESERVE nothing to stop or
	 * remove (and nothing to adopt: its exit costs no more). */
	if (child_pending() &&
	    (!rte_tr_cfg.preserve || rte_tr_adopt_child() < 0))
		return 0;
	st = state();

	if ((st != ST_RUNNING && st != ST_FORKED) || getpid() != rte_tr_pid)
		return 0;
	if (st == ST_FORKED) {
		/* A fork child that never wrote: without PRESERVE there is
		 * nothing to stop or remove; with it, the file must exist. */
		if (!rte_tr_cfg.preserve)
			return 0;
		rte_tracer_materialize();
	}
	return state() == ST_RUNNING;
}

/*
 * A fork child gets its own file, but only when it first needs one: its
 * first event, a fork of its own, exec or exit with PRESERVE. A child that
 * writes nothing and execs or exits (the common fork+exec) then costs no
 * file at all; ring_start and fork_child carry the time of the fork.
 */
RTE_FORKVAR uint64_t rte_tr_fork_ts;

/* With PRESERVE, a fork child that has not written yet and forks makes
 * its file first (before the fork's locks): a process that forks always
 * has its own file when its child is made, as its fork_parent needs. */
void rte_tracer_fork_early(void)
{
	if (rte_tr_cfg.preserve && child_pending() &&
	    __atomic_load_n(&rte_tr_forked, __ATOMIC_RELAXED) == rte_sys_getpid())
		rte_tracer_settle(); /* with PRESERVE: adopted, its file made */
}

/* The prepare handler, in the parent with the lock held: what the child
 * will need, taken here, where it costs no page fault. */
void rte_tracer_atfork_prepare(void)
{
	int st = state();

	/* Peeked: each fork leaves the thread's clock anchor (TLS) and the
	 * clock's globals copy-on-write; storing there would be a fault. */
	if (st == ST_RUNNING || st == ST_FORKED)
		rte_tr_forker_ts = rte_clock_peek_ns();
	rte_tr_forker_tells = forker_tells(st);
	rte_tr_heir_th = pthread_self();
	/* The child's parent, known here for sure: in the child, getppid()
	 * may already name a reaper (daemon()'s parent _exits at once). Not
	 * rte_tr_fork_ppid itself: a fork child that has not written yet
	 * still needs its own parent's. */
	rte_tr_forker = rte_sys_getpid();
}

/* The child's switch to a file of its own (see rte_tr_adopt_child). */
static void fork_switch(int from_handler)
{
	int st = state();
	struct rte_thread *heir;

	/* Acquire: pairs with the exchange in rte_tracer_stop(). */
	if ((st != ST_RUNNING && st != ST_FORKED) ||
	    __atomic_load_n(&rte_tr_stopping, __ATOMIC_ACQUIRE))
		return;
	/* Nothing of this process writes before adoption (the per-thread
	 * states read zero). The parent's mapping goes at once, so nothing
	 * can ever write to it. */
	__atomic_store_n(&rte_g_active, 0, __ATOMIC_RELAXED);
	rte_file_drop(&rte_tr_file);
	rte_tr_pid = getpid();
	if (from_handler) {
		/* The thread that forked, noted by the handlers. */
		heir = __atomic_load_n(&rte_tr_heir, __ATOMIC_RELAXED);
	} else {
		/* No handler ran: the adopting thread keeps ring 0; the
		 * parent is the one we have now (it may have ended). */
		rte_tr_fork_ts = rte_clock_ns();
		rte_tr_fork_ppid = getppid();
		rte_tr_heir_th = pthread_self();
		heir = rte_self_p;
	}
	if (heir && !rte_pool_is_none(heir)) {
		heir->ring = -1;
		heir->gen = 0;
		heir->fail_gen = 0;
	}
	/* Relaxed: read by this thread or by threads it creates. */
	__atomic_store_n(&rte_tr_heir, heir, __ATOMIC_RELAXED);
	/* Release (both): pair with state() and the acquire of rte_tr_gen in
	 * attach_running(); the pending value sends writers there. */
	__atomic_store_n(&rte_tr_state, ST_FORKED, __ATOMIC_RELEASE);
	__atomic_store_n(&rte_g_active, rte_tr_paused ? 0 : RTE_GEN_PENDING,
	                 __ATOMIC_RELEASE);
}

/*
 * The atfork child handler: one thread, every signal blocked. It writes
 * only the page of RTE_FORKVAR variables and calls nothing outside this
 * file (no libc: see sys.h); adoption does the rest when needed. An
 * observer that acts in the child (the profilers) settles it first.
 */
RTE_FORKTEXT void rte_tracer_atfork_child(void)
{
	/* The lock was held by the forking thread: re-make it rather than
	 * unlock it (robust to any mutex kind). */
	static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	int st = state();

	rte_tr_lock = fresh;
	/* Relaxed (both): one thread. */
	/* The forking thread keeps ring 0 (not the state of threads that
	 * could get none: it never writes, and would hold ring 0 for ever). */
	if ((st == ST_RUNNING || st == ST_FORKED) && rte_self_p &&
	    !rte_pool_is_none(rte_self_p))
		__atomic_store_n(&rte_tr_heir, rte_self_p, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&rte_tr_heir, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&rte_tr_forked, (pid_t)rte_sys_getpid(),
	                 __ATOMIC_RELAXED);
	rte_tr_fork_ppid = rte_tr_forker;
	rte_tr_fork_ts = rte_tr_forker_ts;
	rte_tr_fork_told = rte_tr_forker_tells;
	__atomic_store_n(&rte_tr_fork_wrapper, (pthread_t)0, __ATOMIC_RELAXED);
	for (const struct rte_tracer_observer *const *o = rte_tracer_observers;
	     *o; o++)
		if ((*o)->fork_child)
			(*o)->fork_child(); /* e.g. prof/: the forker's timer */
	/* With PRESERVE too the file is made lazily: a child that only
	 * exits, reaped by its parent, needs none (rte_tr_fileless_end). */
}

void rte_tracer_materialize(void)
{
	sigset_t all, old;

	if (state() != ST_FORKED ||
	    __atomic_load_n(&rte_tr_hushed, __ATOMIC_RELAXED))
		return; /* (hushed: an exec without a file is under way) */
	/* Every signal blocked while the file is made: a signal that kills
	 * the process cannot leave a half-made file, and no handler of
	 * this thread can run while we hold the lock. */
	sigfillset(&all);
	rte_real_sigmask(SIG_SETMASK, &all, &old);
	/* trylock: another thread may be making the file (or registering);
	 * the event that asked is then dropped, and the next one tries
	 * again. The lock orders us against rte_register(). */
	if (pthread_mutex_trylock(&rte_tr_lock) == 0) {
		if (state() == ST_FORKED) {
			if (rte_file_create(&rte_tr_file, &rte_tr_cfg,
			                    rte_tr_pid, rte_tr_err,
			                    sizeof(rte_tr_err)) < 0)
				rte_tr_disable_quiet(&rte_tr_file, rte_tr_err);
			else
				rte_tr_begin_file(1, rte_tr_fork_ts);
		}
		pthread_mutex_unlock(&rte_tr_lock);
	}
	rte_real_sigmask(SIG_SETMASK, &old, NULL);
}
