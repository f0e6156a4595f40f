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
 * Its place in the layers (shim/init.c): above the tracer (whose per-
 * thread state holds alloc/state.h's struct), beside the crash recorder,
 * below hooks/. init.c wires it in:
 *   rte_alloc_init()        the constructor, before tracing may start
 *   rte_alloc_start()       tracer observer `started` (registry lock held)
 *   rte_alloc_flush_self()  tracer observers `thread_end` and `stopping`
 *                           (exit, a fatal signal, exec), hook observer
 *                           `fork_prepare`
 * Records: include/rte/profile.h. Everything here is hidden.
 */
#ifndef RTE_ALLOC_H
#define RTE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "alloc/state.h"
#include "rte/format.h"
#include "rte/profile.h"
#include "tracer.h"

#pragma GCC visibility push(hidden)


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
/* NULL, or when RTE_ALLOC asked for profiling but another allocator (or a
 * sanitizer) comes before librte.so and takes the calls: the file that
 * defines it, for the warning. Not signal-safe. */
const char *rte_alloc_first_owner(void);

/* ---- alloc/sample.c ----------------------------------------------------- */

/* The set of live sampled addresses (sample.c): 2^15 buckets of 8
 * addresses, guarded by 4096 counters indexed by another hash. */
#define RTE_ALLOC_SET_BITS 15u
#define RTE_ALLOC_SET_WAYS 8u
#define RTE_ALLOC_FILTER_BITS 12u

struct rte_alloc_set {
	uint64_t live;                                   /* atomic */
	uint32_t filter[1u << RTE_ALLOC_FILTER_BITS];    /* atomic */
	uint64_t ways[1u << RTE_ALLOC_SET_BITS][RTE_ALLOC_SET_WAYS]
		__attribute__((aligned(64)));
};
/* NULL until sampling starts; mapped with MADV_WIPEONFORK. */
extern struct rte_alloc_set *rte_alloc_g_set;

static inline uint64_t rte_alloc_addr_hash(uint64_t addr)
{
	return (addr >> 4) * 0x9e3779b97f4a7c15ull;
}

static inline uint32_t *rte_alloc_filter_of(struct rte_alloc_set *s,
                                            uint64_t h)
{
	return &s->filter[(h >> 20) & ((1u << RTE_ALLOC_FILTER_BITS) - 1)];
}

/* 0 if p was surely never sampled (the common case: one or two loads);
 * 1 if it may have been (then call rte_alloc_note_free). */
static inline int rte_alloc_maybe_sampled(const void *p)
{
	/* Relaxed: see sample.c (set_add / set_remove). */
	struct rte_alloc_set *s =
		__atomic_load_n(&rte_alloc_g_set, __ATOMIC_RELAXED);

	return s && __atomic_load_n(&s->live, __ATOMIC_RELAXED) &&
	       __atomic_load_n(rte_alloc_filter_of(
	                               s, rte_alloc_addr_hash((uintptr_t)p)),
	                       __ATOMIC_RELAXED);
}

/* The slow part of rte_alloc_tick: apply the flush rules. */
void rte_alloc_check_flush(struct rte_alloc_thread *a);

/* rte_alloc_bucket(w) for w <= 100, as a table (sample.c). */
extern uint8_t rte_alloc_bucket_of[101];

/* Requests of this many bytes or more (no allocator can satisfy them on a
 * 64-bit Linux) count as calls and add nothing to the bytes. */
#define RTE_ALLOC_BYTES_MAX (UINT64_C(1) << 48)

/* The first half of a counted allocation call of n bytes, before the real
 * call: counts it (call, bucket, bytes asked for). Returns nonzero if the
 * call must end with rte_alloc_after() (a sample is due, or the flush
 * rules are to be looked at), 0 if the real function can be tail-called.
 * Outside the guard. */
static inline int rte_alloc_before(struct rte_alloc_thread *a, size_t n)
{
	/* ceil(n / 8) words, or 100 for 100 words and more (n > 792) */
	size_t w = n < 800 ? (n + 7) >> 3 : 100;
	uint64_t b = n < RTE_ALLOC_BYTES_MAX ? n : 0;

	a->buckets[rte_alloc_bucket_of[w]]++;
	a->calls++;
	a->bytes += b;
	a->left -= (int64_t)b;
	return (a->left <= 0) | (a->calls + a->frees >= a->check_at);
}

/* The second half, when rte_alloc_before() asked for it: the call made by
 * fn (enum rte_alloc_fn) returned p (NULL: it failed). Takes the sample
 * that was due (a failed call only draws the next interval) and looks at
 * the flush rules. Preserves errno. */
void rte_alloc_after(struct rte_alloc_thread *a, void *p, size_t n,
                     unsigned fn);

/* Both halves around a call already made (the less common functions). */
static inline void rte_alloc_count(struct rte_alloc_thread *a, void *p,
                                   size_t n, unsigned fn)
{
	if (__builtin_expect(rte_alloc_before(a, n), 0))
		rte_alloc_after(a, p, n, fn);
}

/* Count a free of `usable` bytes. Outside the guard. */
static inline void rte_alloc_count_free(struct rte_alloc_thread *a,
                                        size_t usable)
{
	a->frees++;
	a->freed += usable;
}

/* At the end of each wrapper: flush if N calls or T ms have passed (the
 * rules are looked at every 64 calls at most). Outside the guard. */
static inline void rte_alloc_tick(struct rte_alloc_thread *a)
{
	if (__builtin_expect(a->calls + a->frees >= a->check_at, 0))
		rte_alloc_check_flush(a);
}

/* Tracing starts (registry lock held, not signal-safe): register the
 * rte.alloc.* events, read RTE_ALLOC_SAMPLE and the flush knobs, map the
 * sampled-address set, load libunwind. No-op unless rte_alloc_enabled(). */
void rte_alloc_start(void);
/* p (non-NULL, allocated by the real allocator) is being freed and
 * rte_alloc_maybe_sampled(p) said it may be sampled: if it is, write
 * rte.alloc.free and forget it. Call before the real free. Preserves
 * errno. Lock-free. */
void rte_alloc_note_free(void *p);
/* Write the calling thread's counts now (thread end, fork prepare, exec,
 * exit); nothing if it has none or is inside a wrapper or a write.
 * Async-signal-safe. Preserves errno. */
void rte_alloc_flush_self(void);

#pragma GCC visibility pop

#endif
