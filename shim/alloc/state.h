/*
 * alloc/state.h - the allocation profiler's per-thread state (a member of
 * the tracer's struct rte_thread; its code is in alloc/ and hooks/alloc.c,
 * see alloc/alloc.h). Pure data: a leaf any layer may include.
 */
#ifndef RTE_SHIM_ALLOC_STATE_H
#define RTE_SHIM_ALLOC_STATE_H

#include <stdint.h>

#include "rte/format.h"
#include "rte/profile.h"

/* Per-thread state, a member of struct rte_thread (wiped by fork: a child
 * starts with nothing counted and a fresh random stream). Touched only by
 * its thread. The guard is set only around our own slow work (a sample, a
 * flush): the calls it makes (libunwind's) pass straight through. */
struct rte_alloc_thread {
	/* The counted path's words, in two cache lines. The 32-bit counts
	 * cannot wrap: a flush comes at most RTE_ALLOC_FLUSH_CALLS (< 2^30)
	 * + 64 calls after the previous one. */
	int guard;          /* inside our slow work: calls pass straight */
	uint32_t check_at;  /* look at the flush rules when calls + frees
	                       reaches it */
	uint32_t calls;     /* allocation calls since the last flush */
	uint32_t frees;     /* frees since the last flush */
	uint64_t bytes, freed;                     /* since the last flush */
	int64_t left;       /* bytes before the next sample */
	uint32_t buckets[RTE_ALLOC_BUCKETS]; /* allocation calls by size */
	uint64_t last_ns;   /* time of the last flush (0: none yet) */
	uint64_t rng;       /* xorshift64* state; 0: not seeded */
	uint64_t rec[(sizeof(struct rte_alloc_sample_rec) + 7) / 8 +
	             RTE_PROFILE_MAX_FRAMES + 8]; /* sample record buffer */
};

#endif
