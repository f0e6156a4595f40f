/*
 * prof/wall.h - the CPU profiler's wall-clock mode (RTE_PROFILE_MODE=wall,
 * prof/wall.c; a leaf of prof/, for profiler.c only): one sampler thread
 * per process looks at every profiled thread HZ times a second of wall
 * time; a running one is sent the profiling signal (its handler takes the
 * stack, as in CPU mode), a blocked one is never signalled (no EINTR):
 * its stack is read from its user stack pointer, by the sampler.
 */
#ifndef RTE_SHIM_PROF_WALL_H
#define RTE_SHIM_PROF_WALL_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* Threads profiled at once in wall mode (more are not profiled). */
#define RTE_WALL_SLOTS 4096u

/* What the sampler writes for a blocked thread (profiler.c): thread tid,
 * blocked for `ns` of wall time since its previous sample, in system call
 * nr (-1: not in one), with user stack pointer sp and instruction pointer
 * pc. Called on the sampler thread (not in a signal handler). */
typedef void (*rte_wall_blocked_fn)(pid_t tid, uint64_t ns, int nr,
                                    uint64_t sp, uint64_t pc);

/* Start the sampler thread (every signal blocked in it; made by
 * pthread_create as the program's calls resolve it, so that a sanitizer
 * knows it): rate hz, signal sig; self() is its first call (to undo what
 * the thread hooks did for it). Returns 0, or -1 with errno. Not
 * signal-safe. */
int rte_wall_start(unsigned hz, int sig, rte_wall_blocked_fn blocked,
                   void (*self)(void));
/* 1 while a sampler is being made: a thread armed meanwhile (the sampler,
 * by our thread hook) does not make libunwind's per-thread cache (its
 * dynamic TLS, in a thread alive at exit, breaks LeakSanitizer's scan). */
int rte_wall_spawning(void);
/* 1 on the sampler thread (it is never profiled). */
int rte_wall_is_sampler(void);
/* The calling thread is profiled from now on (masked: it blocks the
 * signal, so it is never sent one). Returns its slot + 1, or 0 (full).
 * Async-signal-safe. */
int rte_wall_add(int masked);
/* The thread of `slot` blocks the signal (1) or not (0): waits out a
 * signal the sampler is sending it, so that none is sent once this
 * returns (the caller then takes back one left pending). */
void rte_wall_mask(int slot, int masked);
/* The thread of `slot` is no longer profiled (same wait). */
void rte_wall_remove(int slot);
/* si is a sample the sampler sent: 1 and *ns, the wall time it stands
 * for; else 0. */
int rte_wall_ours(const siginfo_t *si, uint64_t *ns);
/* No signal is sent once this returns (waits out one being sent); the
 * sampler ends. Async-signal-safe. */
void rte_wall_stop(void);
/* A fork child (one thread, the sampler gone): empty table, a new
 * sampler. Returns as rte_wall_start. */
int rte_wall_fork_child(void);

#pragma GCC visibility pop

#endif
