/*
 * prof/actions.h - what the CPU profiler's two halves share (profiler.c:
 * the timers, the handler, start; actions.c: the program's calls on the
 * signal). Not for the rest of the shim (prof/profiler.h is its
 * interface).
 */
#ifndef RTE_SHIM_PROF_ACTIONS_H
#define RTE_SHIM_PROF_ACTIONS_H

#include <signal.h>

#pragma GCC visibility push(hidden)

/* profiler.c: the profiling signal; 1 while our handler is in the kernel,
 * 2 once the program took the signal, 0 before (atomic); exit or the
 * program took it (atomic); our handler. */
extern int rte_prof_sig;
extern int rte_prof_on;
extern int rte_prof_stopped;
void rte_prof_on_sample(int sig, siginfo_t *si, void *uc);

/* actions.c: the program's view of the signal (set at start, then under
 * its lock). */
extern struct sigaction rte_prof_prog;

#pragma GCC visibility pop

#endif
