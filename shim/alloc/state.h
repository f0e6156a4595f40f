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
 * its thread (and its signal handlers).
 *
 * The fast path (alloc/alloc.h) takes a call only while tick > 0 and, for
 * an allocation of n bytes, n < left; anything else goes to the slow path
 * (alloc/sample.c), which also counts the call unless the thread is in its
 * guard (our own slow work: a sample, a flush; the calls it makes, e.g.
 * libunwind's, pass uncounted). While the guard is set, tick and left are
 * 0 (their values kept in saved_*), so that the fast path needs no look at
 * the guard; a fresh (zeroed) state starts in the slow path too. */
struct __attribute__((aligned(64))) rte_alloc_thread {
	/* The fast path's words, first (two cache lines with the buckets).
	 * The 32-bit counts cannot wrap: a flush comes at most
	 * RTE_ALLOC_FLUSH_CALLS (< 2^30) calls after the previous one. */
	int32_t tick;       /* calls the fast path may take before the slow
	                       path looks at the flush rules */
	uint32_t frees;     /* frees since the last flush */
	uint64_t left;      /* bytes before the next sample (<= 2^48) */
	uint64_t bytes;     /* bytes asked for since the last flush */
	uint64_t freed8;    /* freed bytes + 8 per free, since the last
	                       flush (what glibc's chunk header gives) */
	uint64_t got;       /* usable bytes of the blocks allocated since
	                       the last flush (malloc_usable_size: the
	                       measure of the freed bytes) */
	uint32_t buckets[RTE_ALLOC_BUCKETS]; /* allocation calls by size (their
	                       sum: the calls since the last flush) */
	/* The slow path's. */
	int guard;          /* inside our slow work: calls pass uncounted */
	int32_t saved_tick; /* tick and left while the guard is set */
	uint64_t saved_left;
	uint32_t step;      /* calls between looks at the flush rules */
	uint64_t check_ns;  /* time of the last look that read the clock */
	uint64_t last_ns;   /* time of the last flush (0: none yet) */
	uint64_t rng;       /* xorshift64* state; 0: not seeded */
	uint64_t rec[(sizeof(struct rte_alloc_sample_rec) + 7) / 8 +
	             RTE_PROFILE_MAX_FRAMES + 8]; /* sample record buffer */
};

#endif
