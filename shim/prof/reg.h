/*
 * prof/reg.h - the registry of the profiler's per-thread clocks
 * (prof/reg.c; a leaf of prof/, for profiler.c only). Every function is
 * async-signal-safe (atomics and system calls).
 */
#ifndef RTE_SHIM_PROF_REG_H
#define RTE_SHIM_PROF_REG_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Registry slots (threads profiled at once); more threads are still
 * profiled, but their clocks are left to thread end and the kernel. */
#define RTE_PROF_REG_SLOTS 65536u

/* Map the table (at start; perf: kept across fork). Without it every
 * other call does nothing (rte_prof_reg_add returns 0). */
void rte_prof_reg_map(int perf);
/* Take a slot for timer id `id` (>= 0), or perf descriptor fd as
 * -2 - fd with event id `eid`. Returns its index + 1, or 0. */
int rte_prof_reg_add(int id, uint64_t eid);
/* Delete timer `id` / close descriptor -2 - id if it is still event eid
 * of signal sig. */
void rte_prof_reg_kill(int id, uint64_t eid, int sig);
/* Delete the clock of slot `slot` (index + 1) if nobody did yet. */
void rte_prof_reg_delete(int slot, int sig);
/* Every slot's. */
void rte_prof_reg_delete_all(int sig);
/* A fork child (one thread): close its copies of its parent's
 * descriptors, empty the table. */
void rte_prof_reg_forget_all(int sig);

#pragma GCC visibility pop

#endif
