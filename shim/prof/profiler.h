/*
 * prof/profiler.h - the CPU profiler of librte.so (RTE_PROFILE,
 * prof/profiler.c, prof/actions.c): the hook calls the rest of the shim
 * makes. Hidden.
 *
 * The profiler owns one signal (RTE_PROFILE_SIGNAL) and one POSIX
 * CPU-time timer per thread; it writes rte.sample (rte/profile.h) on the
 * sampled thread's own ring through the ordinary write path (rte_enter),
 * so a sample that interrupts a write of its thread is dropped and counted
 * in rte.dropped, never torn. Every hook is a no-op when RTE_PROFILE is
 * off.
 */
#ifndef RTE_SHIM_PROF_PROFILER_H
#define RTE_SHIM_PROF_PROFILER_H

#include <signal.h>

#pragma GCC visibility push(hidden)

/* The tracer's observer (init.c) and hooks/process.c, hooks/signals.c
 * call these. */

/* Tracing has just started (registry lock held, after rte_crash_start):
 * read RTE_PROFILE*, install the handler unless the program has one on the
 * signal, arm the calling thread. Not signal-safe. */
void rte_prof_start(void);
/* The calling thread has a ring (first event, or its start): arm its timer
 * if it has none yet. Idempotent. Async-signal-safe (system calls only). */
void rte_prof_thread_arm(void);
/* Thread end (before its ring is given back): delete its timer.
 * Async-signal-safe. */
void rte_prof_thread_end(void);
/* atfork child handler (one thread, signals blocked): the parent's timers
 * are not the child's; arm the calling thread's own. */
void rte_prof_fork_child(void);
/* Before exec: delete the calling thread's timer (the kernel deletes the
 * others at a successful exec; meanwhile they write nothing, tracing being
 * stopped). After a failed exec: arm it again. */
void rte_prof_exec_begin(void);
void rte_prof_exec_failed(void);
/* hooks/masks.c: rte_prof_mask_signal() is the profiling signal while
 * profiling runs, else 0; rte_prof_thread_masked(blocked): the calling
 * thread's mask now blocks it (1: its timer is stopped, a sample left
 * pending taken back) or not (0: started again). Async-signal-safe. */
int rte_prof_mask_signal(void);
void rte_prof_thread_masked(int blocked);
/* The same from the calling thread's mask now (after one of our locks,
 * under which a thread armed starts stopped). */
void rte_prof_thread_check(void);

/* Exit (rte_core_stop): delete every thread's timer. Async-signal-safe. */
void rte_prof_stop(void);

/* The program's sigaction(), signal() family (hooks/signals.c calls
 * these first). rte_prof_owns(sig): 1 if sig is the profiling signal and
 * our handler is in the kernel. rte_prof_sigaction(): the whole call for
 * such a signal: a query reports the program's own action (SIG_DFL until
 * it sets one); SIG_DFL is remembered and ours stays; a handler or SIG_IGN
 * stops profiling for good (one warning) and goes to the kernel.
 * rte_prof_signal(sig, h, prev): the same for signal(sig, h): returns 1
 * if it did the whole call (*prev: the program's previous handler), 0 if
 * the caller must make the real call (profiling was stopped first if h
 * takes the signal over); rte_prof_hide(h): what the program sees as the
 * previous handler (ours shows as SIG_DFL). Thread-safe. */
int rte_prof_owns(int sig);
int rte_prof_sigaction(int sig, const struct sigaction *act,
                       struct sigaction *old);
int rte_prof_signal(int sig, sighandler_t h, sighandler_t *prev);
sighandler_t rte_prof_hide(sighandler_t h);
/* In a vfork child: *sa, an action the kernel returned, becomes the
 * program's view if it is our handler. Async-signal-safe. */
void rte_prof_hide_action(struct sigaction *sa);

#pragma GCC visibility pop

#endif
