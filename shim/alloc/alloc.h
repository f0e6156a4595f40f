/*
 * alloc/alloc.h - the allocation profiler (RTE_ALLOC): its per-thread state
 * and its narrow interface to the rest of the shim.
 *
 * Pieces:
 *   hooks/alloc.c   the interposed malloc family, the resolution of the
 *                   real allocator behind us, the one-branch fast path
 *   alloc/arena.c   the mode the wrappers switch on, the bootstrap arena,
 *                   which allocator comes first (alloc/arena.h)
 *   alloc/heap.c    the process-wide live bytes, the peak, the heap
 *                   series (rte.alloc.heap, rte.alloc.peak[_ns])
 *   alloc/sample.c  counting, flushing (the `alloc` runtime event and the
 *                   rte.alloc.* int events), sampling (rte.alloc.sample)
 *                   and the lock-free set of live sampled addresses
 *                   (rte.alloc.free)
 *
 * Its place in the layers (shim/init.c): above the tracer (whose per-
 * thread state holds alloc/state.h's struct), beside the crash recorder,
 * below hooks/. init.c wires it in:
 *   rte_alloc_init()        the constructor, before tracing may start
 *                           (hooks/alloc.c, declared in hooks/hooks.h)
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


/* ---- alloc/arena.c ------------------------------------------------------ */

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

/* ---- alloc/heap.c ------------------------------------------------------- */

/* RTE_ALLOC_HEAP_SLACK: the live bytes a thread may allocate (or free)
 * before it adds them to the process-wide total (0: every call, exact
 * across threads). Set before counting starts. */
extern int64_t rte_alloc_heap_slack;
/* Add the thread's unpublished live bytes to the process-wide total,
 * raise the peak, write a heap point if due. Outside the guard.
 * Async-signal-safe, preserves errno. */
void rte_alloc_heap_publish(struct rte_alloc_thread *a);
/* The flush rules' look at time `now` (outside the guard): publish, and
 * a heap point if RTE_ALLOC_HEAP_MS passed since the last one. */
void rte_alloc_heap_tick(struct rte_alloc_thread *a, uint64_t now);
/* Inside a flush (guard set, w entered, ts its time): publish without
 * writing, then the heap point if due (always if `force`), and the peak
 * if it rose since it was last written. */
void rte_alloc_heap_flush(struct rte_alloc_thread *a,
                          struct rte_ring_writer *w, uint64_t ts, int force);
/* 1 if the thread or the process has heap figures not yet written. */
int rte_alloc_heap_pending(const struct rte_alloc_thread *a);
/* Tracing starts: register rte.alloc.heap/peak/peak_ns/temporary, read
 * RTE_ALLOC_HEAP_SLACK, RTE_ALLOC_HEAP_STEP and RTE_ALLOC_HEAP_MS. */
void rte_alloc_heap_start(void);
/* The id of rte.alloc.temporary (-1: not registered). */
extern int rte_alloc_heap_temp_id;
/* A fork child: its heap starts from zero (as its counts do). */
void rte_alloc_heap_fork_child(void);

/* ---- alloc/sample.c ----------------------------------------------------- */

/* The set of live sampled addresses (set.c): 2^15 buckets of 8
 * addresses, guarded by 4096 counters indexed by the hash's top bits. */
#define RTE_ALLOC_SET_BITS 15u
#define RTE_ALLOC_SET_WAYS 8u
#define RTE_ALLOC_FILTER_BITS 12u

struct rte_alloc_set {
	uint32_t filter[1u << RTE_ALLOC_FILTER_BITS];    /* atomic */
	uint64_t ways[1u << RTE_ALLOC_SET_BITS][RTE_ALLOC_SET_WAYS]
		__attribute__((aligned(64)));
};
/* NULL until sampling starts; mapped with MADV_WIPEONFORK. */
extern struct rte_alloc_set *rte_alloc_g_set;
/* The set's filter once sampling started, before that a static array of
 * zeros: never NULL, so that a free looks at one counter and nothing
 * else. */
extern uint32_t *rte_alloc_g_filter;

/* set.c: map the set (0, or -1: no memory; sampling stays off); add a
 * sampled block's address (0, or -1 if its bucket is full: the sample is
 * not written); 1 if addr is in the set, with take also removed. */
int rte_alloc_set_map(void);
int rte_alloc_set_add(uint64_t addr);
int rte_alloc_set_find(uint64_t addr, int take);

/* Blocks are at least 8-byte aligned: the multiply mixes the upper bits
 * into the top ones, which index the filter and the set's buckets. */
static inline uint64_t rte_alloc_addr_hash(uint64_t addr)
{
	return addr * 0x9e3779b97f4a7c15ull;
}

static inline uint32_t *rte_alloc_filter_of(uint32_t *filter, uint64_t h)
{
	return &filter[h >> (64 - RTE_ALLOC_FILTER_BITS)];
}

/* 0 if p was surely never sampled (the common case: two loads); 1 if it
 * may have been (then call rte_alloc_note_free). */
static inline int rte_alloc_maybe_sampled(const void *p)
{
	/* Relaxed: see sample.c (set_add / set_remove). */
	uint32_t *f = __atomic_load_n(&rte_alloc_g_filter, __ATOMIC_RELAXED);

	return __atomic_load_n(rte_alloc_filter_of(
	                               f, rte_alloc_addr_hash((uintptr_t)p)),
	                       __ATOMIC_RELAXED) != 0;
}

/* rte_alloc_bucket(w) for w <= 100, as a table (sample.c; filled by
 * rte_alloc_start(), before counting starts). */
extern uint8_t rte_alloc_bucket_of[101];

/* The bucket of an allocation of n bytes: ceil(n / 8) words, or 100 for
 * 100 words and more (n > 792). */
static inline unsigned rte_alloc_bucket_n(size_t n)
{
	return rte_alloc_bucket_of[n < 800 ? (n + 7) >> 3 : 100];
}

/* Requests of this many bytes or more (no allocator can satisfy them on a
 * 64-bit Linux) count as calls and add nothing to the bytes. Sampling
 * intervals are at most this long, so that such a request always takes
 * the slow path. */
#define RTE_ALLOC_BYTES_MAX (UINT64_C(1) << 48)

/*
 * The sampling clock's advance for an allocation of n bytes: n, except for
 * a realloc (rte_alloc_realloc_clock). Any advance c > 0 keeps the
 * estimates unbiased as long as the sample says what it was: a sample
 * records its period as RTE_ALLOC_SAMPLE * n / c, so that a reader's
 * 1 - exp(-size / period) is the probability it was taken with.
 */

/* A realloc to n bytes of a block of `old` usable bytes (0: none)
 * advances the clock by its growth, n - old, but by n / 8 at least (and n
 * for n < 8, or a request too large to be satisfied): growing a buffer
 * step by step takes as many samples as the bytes it adds, not as the
 * sizes of every step, and no sample stands for more than 8 times the
 * bytes a malloc's of the same size would. */
static inline uint64_t rte_alloc_realloc_clock(size_t n, uint64_t old)
{
	uint64_t g = n > old ? n - old : 0, f = n >> 3;

	if (n >= RTE_ALLOC_BYTES_MAX || n < 8)
		return n;
	return g > f ? g : f;
}

/*
 * The fast path of a counted allocation of n bytes, before the real call,
 * its sampling clock advancing by c (n, or rte_alloc_realloc_clock's):
 * counts it and returns 1, or returns 0 and counts nothing when the slow
 * path must (a sample is due, the flush rules are to be looked at, the
 * guard is set, the state is fresh). No branch but the one.
 */
static inline int rte_alloc_fast_c(struct rte_alloc_thread *a, size_t n,
                                   uint64_t c)
{
	int32_t tick = a->tick;
	uint64_t left = a->left;

	if (__builtin_expect((tick <= 0) | (c >= left), 0))
		return 0;
	a->tick = tick - 1;
	a->left = left - c;
	a->bytes += n;
	a->buckets[rte_alloc_bucket_n(n)]++;
	return 1;
}

static inline int rte_alloc_fast(struct rte_alloc_thread *a, size_t n)
{
	return rte_alloc_fast_c(a, n, n);
}

/* The slow path of a counted allocation of n bytes (clock c), before the
 * real call (rte_alloc_fast_c returned 0): counts it unless the guard is
 * set, looks at the flush rules if due. Returns nonzero if a sample is
 * due: the call must then end with rte_alloc_after(). Preserves errno. */
int rte_alloc_slow(struct rte_alloc_thread *a, size_t n, uint64_t c);

/* The end of a call that rte_alloc_slow() flagged: the call made by fn
 * (enum rte_alloc_fn) for n bytes (clock c) returned p (NULL: it failed).
 * Takes the sample (a failed call only draws the next interval).
 * Preserves errno. */
void rte_alloc_after(struct rte_alloc_thread *a, void *p, size_t n,
                     uint64_t c, unsigned fn);

/* The usable bytes of the block p (NULL: 0) a counted allocation
 * returned: added to the thread's allocated bytes in the measure of its
 * frees, and to its unpublished share of the live bytes (alloc/heap.c:
 * published past RTE_ALLOC_HEAP_SLACK); p becomes the thread's last
 * allocation (temporaries). Call only for an allocation that was counted:
 * after rte_alloc_fast() returned 1, or after rte_alloc_slow() outside
 * the guard (rte_alloc_counted()). */
static inline void rte_alloc_got(struct rte_alloc_thread *a, const void *p,
                                 uint64_t usable)
{
	int64_t hd = a->hd + (int64_t)usable;

	a->got += usable;
	a->last = (uintptr_t)p;
	a->hd = hd;
	/* a branch, not a conditional move: the high point rises rarely
	 * (a heap going up raises it at every call: predicted too) */
	if (hd > a->hmax)
		a->hmax = hd;
	if (__builtin_expect(hd >= rte_alloc_heap_slack, 0))
		rte_alloc_heap_publish(a);
}

/* 1 if the slow path counted the allocation it was called for: it does
 * unless the thread is in its guard (our own slow work). */
static inline int rte_alloc_counted(const struct rte_alloc_thread *a)
{
	return !a->guard;
}

/* Both halves around a call already made (the less common functions),
 * the block p having `usable` bytes, the clock advancing by c. */
static inline void rte_alloc_count_c(struct rte_alloc_thread *a, void *p,
                                     size_t n, uint64_t c, uint64_t usable,
                                     unsigned fn)
{
	if (rte_alloc_fast_c(a, n, c)) {
		rte_alloc_got(a, p, usable);
		return;
	}
	if (rte_alloc_slow(a, n, c))
		rte_alloc_after(a, p, n, c, fn);
	if (rte_alloc_counted(a))
		rte_alloc_got(a, p, usable);
}

static inline void rte_alloc_count(struct rte_alloc_thread *a, void *p,
                                   size_t n, uint64_t usable, unsigned fn)
{
	rte_alloc_count_c(a, p, n, n, usable, fn);
}

/* The thread's temporaries (heaptrack's definition: a block freed with
 * no allocation of the thread since it was allocated; frees in between do
 * not matter): a free of p counts one if p is the thread's last
 * allocation, and leaves p | 1 there if so (rte_alloc_note_free() reads
 * it; no later free matches it). */
static inline void rte_alloc_temp(struct rte_alloc_thread *a, const void *p)
{
	/* a branch: a site's frees are temporaries or not, mostly the same
	 * way each time (cheaper than the flag arithmetic and two stores) */
	if (a->last == (uintptr_t)p) {
		a->temps++;
		a->last = (uintptr_t)p | 1;
	}
}

/* The fast path of a counted free of the block p of `usable` bytes,
 * given as usable + 8 (glibc's chunk size, less 8 for a block of its own
 * mmap): counts it and returns 1, or 0 when the slow path must. */
static inline int rte_alloc_free_fast(struct rte_alloc_thread *a,
                                      const void *p, uint64_t usable8)
{
	int32_t tick = a->tick;
	int64_t hd = a->hd - (int64_t)usable8 + 8;

	if (__builtin_expect((tick <= 0) | (hd <= -rte_alloc_heap_slack), 0))
		return 0;
	a->tick = tick - 1;
	a->frees++;
	a->freed8 += usable8;
	a->hd = hd;
	rte_alloc_temp(a, p);
	return 1;
}

/* Its slow path: counts unless the guard is set, looks at the flush rules
 * if due, publishes the live bytes if due. Preserves errno. */
void rte_alloc_free_slow(struct rte_alloc_thread *a, const void *p,
                         uint64_t usable8);

/* A counted free: both paths. */
static inline void rte_alloc_count_free(struct rte_alloc_thread *a,
                                        const void *p, uint64_t usable8)
{
	if (!rte_alloc_free_fast(a, p, usable8))
		rte_alloc_free_slow(a, p, usable8);
}

/* The guard around our own slow work (a sample, a flush, a heap point):
 * the calls it makes (libunwind's) go to the slow path, which passes them
 * uncounted (tick and left 0, see alloc/state.h). Not nested. */
static inline void rte_alloc_guard_enter(struct rte_alloc_thread *a)
{
	a->guard = 1;
	a->saved_tick = a->tick;
	a->saved_left = a->left;
	a->tick = 0;
	a->left = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void rte_alloc_guard_leave(struct rte_alloc_thread *a)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	a->tick = a->saved_tick;
	a->left = a->saved_left;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	a->guard = 0;
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
