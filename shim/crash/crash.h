/*
 * crash/crash.h - the crash flight recorder inside librte.so (handler.c,
 * actions.c, stacks.c, modules.c, altstack.c): hook calls made by the rest
 * of the shim.
 * Hidden; see doc/DESIGN.md "Crash flight recorder".
 */
#ifndef RTE_SHIM_CRASH_H
#define RTE_SHIM_CRASH_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)


/* Tracing has just started (rte_tracer_start_locked, registry lock held):
 * register rte.signal, read RTE_BACKTRACE, register the rte.* crash
 * events, load libunwind only for RTE_BACKTRACE=fork or thread (else the
 * first pthread_create does; see stacks.c), give the calling thread an alternate signal
 * stack, install the crash handlers (whatever RTE_BACKTRACE says) and
 * those of the terminating signals left at SIG_DFL, record the loaded
 * modules, and register the atfork handlers of the signal actions' lock.
 * Not signal-safe. */
void rte_crash_start(void);
/* 1 if the file must be kept at exit even without PRESERVE: a fatal crash
 * was recorded, or the exit is made from a program's crash handler that
 * we called. Async-signal-safe. */
int rte_crash_keep_file(void);
/* The recorder's hook observers (hooks.h), wired by init.c:
 * pthread_create, before the real one: loads libunwind if it is not yet
 * (crash stacks); with RTE_BACKTRACE=thread, the creator's stack in a slot
 * of a static pool (the context), else NULL; _failed gives the slot back.
 * Not signal-safe. */
void *rte_crash_thread_create(void);
void rte_crash_thread_create_failed(void *ctx);
/* First code of a thread made by pthread_create while tracing runs: give
 * it an alternate signal stack, then write the creator's stack (ctx) as
 * rte.backtrace on its ring. Not signal-safe (mmap is, but it runs once
 * per thread anyway). */
void rte_crash_thread_start(void *ctx);
/* hooks/signals.c: the program's sigaction() (the recorder keeps the
 * actions of the signals it handles, libc gets the others); 1 if
 * signal(sig, h) must go through that sigaction (a crash signal, or
 * SIG_DFL for a terminating one, which brings our handler back); and the
 * previous handler libc's signal() returned, as sigaction() would report
 * it (SIG_DFL for ours). Async-signal-safe. */
int rte_crash_sigaction(int sig, const struct sigaction *act,
                        struct sigaction *old);
int rte_crash_signal_ours(int sig, sighandler_t h);
sighandler_t rte_crash_signal_prev(sighandler_t r);
/* In a vfork child (hooks/signals.c): *sa (or h), an action the kernel
 * returned, becomes the program's action we keep if it is ours.
 * Async-signal-safe. */
void rte_crash_hide_action(int sig, struct sigaction *sa);
sighandler_t rte_crash_hide_handler(int sig, sighandler_t h);
/* fork, in the parent: with RTE_BACKTRACE=fork, record the stack. */
void rte_crash_fork_parent(pid_t child);
/* Around fork (hook observer, every signal blocked): the lock of the
 * program's signal actions held, then released in the parent, re-made in
 * the child (with the module map's state: no libc call there). */
void rte_crash_fork_lock(void);
void rte_crash_fork_unlock_parent(void);
void rte_crash_fork_unlock_child(void);
/* Write an rte.* custom event of id `id` on the calling thread's ring.
 * force: also while paused and even over an interrupted write of this
 * thread (only for a crash that will never return to it). Returns 0 or
 * -1 (not written). Async-signal-safe. */
int rte_crash_emit(int id, const void *bytes, size_t n, int force);

/* ---- modules.c ---- */

/* 1 once rte_modules_register() ran (and the events have ids).
 * Async-signal-safe. */
int rte_modules_enabled(void);
/* Register rte.module / rte.module.unload (registry lock held). */
void rte_modules_register(void);
/* Bring the file's module events up to date: rte.module for each object
 * not yet recorded in this file, rte.module.unload for each recorded one
 * that is gone. from_signal: only try the lock (a crash handler).
 * Takes the loader's lock (dl_iterate_phdr), like libunwind does. */
void rte_modules_sync(int from_signal);
/* A fatal crash: write rte.module for every loaded object again on the
 * calling thread's ring (the first ones may have been overwritten), even
 * while paused. From a signal handler: only tries the lock. */
void rte_modules_resend(void);
/* 1 if the loader's lock (dl_iterate_phdr, libunwind) can only be held by
 * threads of this process: the process that started tracing, or a fork
 * child of a single-threaded parent. Elsewhere the syncs above use the
 * table the parent recorded, never the loader. Async-signal-safe. */
int rte_modules_loader_ok(void);
/* atfork child handler (actions.c): re-make the table's lock; trust the
 * loader's lock if the parent had a single thread when it forked. */
void rte_modules_fork_child(int parent_threaded);

#pragma GCC visibility pop

#endif
