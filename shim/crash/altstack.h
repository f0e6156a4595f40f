/*
 * crash/altstack.h - alternate signal stacks for the crash recorder
 * (altstack.c): one per thread, with a guard page below, from a pool of
 * the stacks of ended threads (no mmap/munmap per thread). Depends only on
 * log.h.
 */
#ifndef RTE_SHIM_CRASH_ALTSTACK_H
#define RTE_SHIM_CRASH_ALTSTACK_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

/* The functions that run on the stack the program's handler gets (a small
 * alternate stack of the program's, maybe): no sanitizer instrumentation,
 * whose redzones would double their frames. */
#define LEAN __attribute__((no_sanitize_address, no_sanitize_undefined))

/* Size the stacks and make the key that gives a thread's stack back at
 * its end. Once, before any rte_alt_thread_start (recorder start). */
void rte_alt_init(void);
/* Bytes of each stack, above its guard page. */
size_t rte_alt_size(void);
/* Give the calling thread one, unless it has an alternate stack already
 * (the program's). Preserves errno. Not signal-safe. */
void rte_alt_thread_start(void);
/* This thread's alternate stack of ours (its base, below the guard page),
 * or NULL. Async-signal-safe. */
LEAN char *rte_alt_own(void);

#pragma GCC visibility pop

#endif
