/*
 * alloc/alloc.h - the allocation profiler (RTE_ALLOC): its per-thread state
 * and its narrow interface to the rest of the shim.
 *
 * Pieces:
 *   hooks/alloc.c   the interposed malloc family, the bootstrap arena, the
 *                   real allocator behind us, the one-branch fast path
 *   alloc/sample.c  counting, flushing (the `alloc` runtime event and the
 *                   rte.alloc.* int events), sampling (rte.alloc.sample)
 *                   and the lock-free set of live sampled addresses
 *                   (rte.alloc.free)
 *
 * What the rest of the shim calls (each a one-line hook):
 *   rte_alloc_init()        the constructor, before tracing may start
 *   rte_alloc_start()       tracing starts (registry lock held)
 *   rte_alloc_flush_self()  thread end, fork prepare, exec, exit, stop
 * Records: include/rte/profile.h. Everything here is hidden.
 */
#ifndef RTE_ALLOC_H
#define RTE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "rte/format.h"
#include "rte/profile.h"

#pragma GCC visibility push(hidden)

/* Per-thread state, a member of struct rte_thread (wiped by fork: a child
 * starts with nothing counted and a fresh random stream). Touched only by
 * its thread, inside the guard (or by its own flush). */
struct rte_alloc_thread {
	int guard;          /* inside a wrapper: nested calls pass straight */
	uint32_t pending;   /* calls since the last flush */
	uint64_t buckets[RTE_ALLOC_BUCKETS]; /* allocation calls by size */
	uint64_t calls, bytes, frees, freed; /* since the last flush */
	uint64_t last_ns;   /* time of the last flush (0: none yet) */
	int64_t left;       /* bytes before the next sample */
	uint64_t rng;       /* xorshift64* state; 0: not seeded */
	uint64_t rec[(sizeof(struct rte_alloc_sample_rec) + 7) / 8 +
	             RTE_PROFILE_MAX_FRAMES + 8]; /* sample record buffer */
};

/* ---- hooks/alloc.c ------------------------------------------------------ */

/* The constructor's part: resolve the real allocator and read RTE_ALLOC
 * (0/unset: every call is one branch and a tail call). Idempotent. */
void rte_alloc_init(void);
/* 1 if RTE_ALLOC asked for profiling and our malloc is the one the program
 * calls. */
int rte_alloc_enabled(void);
/* Start counting (the end of rte_alloc_start: the shim's own start-up is
 * not counted). */
void rte_alloc_on(void);
/* The real allocator's malloc_usable_size (never one of our arena's
 * pointers). */
size_t rte_alloc_real_usable(void *p);

/* ---- alloc/sample.c ----------------------------------------------------- */

/* Tracing starts (registry lock held, not signal-safe): register the
 * rte.alloc.* events, read RTE_ALLOC_SAMPLE and the flush knobs, map the
 * sampled-address set, load libunwind. No-op unless rte_alloc_enabled(). */
void rte_alloc_start(void);
/* Count an allocation call of n bytes that returned p (NULL: failed) made
 * by fn (enum rte_alloc_fn), and maybe sample it. Inside the guard.
 * Preserves errno. */
void rte_alloc_note(struct rte_alloc_thread *a, void *p, size_t n,
                    unsigned fn);
/* Count a free of p (non-NULL, allocated by the real allocator): counted
 * only if a != NULL (the thread may count). If p is a sampled address,
 * writes rte.alloc.free and forgets it, whatever a is. Call before the
 * real free. Preserves errno. */
void rte_alloc_note_free(struct rte_alloc_thread *a, void *p);
/* Flush if N calls or T ms have passed since the last flush. Inside the
 * guard. */
void rte_alloc_maybe_flush(struct rte_alloc_thread *a);
/* Write the calling thread's counts now (thread end, fork prepare, exec,
 * exit); nothing if it has none or is inside a wrapper or a write.
 * Async-signal-safe. Preserves errno. */
void rte_alloc_flush_self(void);

#pragma GCC visibility pop

#endif
