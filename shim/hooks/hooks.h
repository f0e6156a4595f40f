/*
 * hooks.h - the interposed libc functions of librte.so, one file per area:
 *   threads.c  pthread_create (the one thread-start trampoline),
 *              pthread_setname_np, prctl(PR_SET_NAME)
 *   process.c  fork, daemon, forkpty, the exec family, _exit/_Exit/
 *              quick_exit, and the pthread_atfork handlers
 *   signals.c  sigaction, signal, bsd_signal, sysv_signal (over the crash
 *              recorder's handler table)
 *   dl.c       dlopen, dlclose (module events)
 *   masks.c    pthread_sigmask, sigprocmask (the profiler's timer stopped
 *              while a thread blocks its signal)
 *   identity.c the setuid and setgid families (a process that becomes a
 *              user who may not remove its file stands aside first)
 *   alloc.c    the malloc family (RTE_ALLOC; the profiler is alloc/)
 *   execenv.c  the environment the exec family passes on (execenv.h)
 * Each wrapper calls the real function through real.h's table. The hooks
 * sit above the tracer (tracer.h) and call the modules beside them only
 * through the observer list below.
 *
 * Extension points (for new modules such as an allocation or a CPU
 * profiler): a new libc area gets its own file here (e.g. alloc.c for the
 * malloc family, its real functions added to real.h); a module that must
 * hear of thread starts and fork parents adds an entry to
 * rte_hook_observers in init.c. Thread ends and tracing start/stop are the
 * tracer's (struct rte_tracer_observer in tracer.h).
 */
#ifndef RTE_SHIM_HOOKS_H
#define RTE_SHIM_HOOKS_H

#include <sys/types.h>

#pragma GCC visibility push(hidden)

struct rte_hook_observer {
	/* pthread_create while tracing runs, in the creator before the real
	 * call: returns a context handed to thread_start (NULL: none). */
	void *(*thread_create)(void);
	/* The real pthread_create failed: give the context back. */
	void (*thread_create_failed)(void *ctx);
	/* First code of a thread created while tracing runs, in the new
	 * thread (its ring already claimed), with thread_create's context. */
	void (*thread_start)(void *ctx);
	/* fork() in the parent, after fork_parent was written. */
	void (*fork_parent)(pid_t child);
	/* Any fork (pthread_atfork prepare), in the forking thread, before
	 * the registry lock is taken: its last writes before the child
	 * exists. */
	void (*fork_prepare)(void);
	/* Any fork, every signal blocked, before the registry lock is taken
	 * (so these locks come before it): take the locks no child may
	 * inherit held by a thread that does not exist there. */
	void (*fork_lock)(void);
	/* After the fork, signals still blocked, the registry lock given
	 * back: in the parent, release them (observers in reverse order)... */
	void (*fork_unlock_parent)(void);
	/* ...and in the child, re-make them: the child's first code (one
	 * thread), before the tracer's handler; no libc call (see sys.h). */
	void (*fork_unlock_child)(void);
};
/* Defined by init.c; ends with a NULL. */
extern const struct rte_hook_observer *const rte_hook_observers[];

/* Most observers the list can have (threads.c keeps one context each). */
#define RTE_HOOK_OBSERVERS_MAX 4

/* process.c: 1 if the program's calls of the functions we wrap come to
 * us: librte.so was preloaded (or linked before libc), not loaded later
 * with dlopen, where the program's calls were bound to libc's already. */
int rte_hooks_interposed(void);

/* process.c: register the pthread_atfork handlers (constructor). */
void rte_hooks_process_init(void);

/* alloc.c, the constructor's part: resolve the real allocator and read
 * RTE_ALLOC (0/unset: every call is one branch and a tail call).
 * Idempotent. */
void rte_alloc_init(void);

#pragma GCC visibility pop

#endif
