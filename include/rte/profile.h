/*
 * rte/profile.h - the payloads of rte's profiler events: the CPU profiler
 * (RTE_PROFILE: rte.sample) and the allocation profiler (RTE_ALLOC:
 * rte.alloc.sample, rte.alloc.free, and the rte.alloc.* int events). All
 * custom records follow the rules of rte/crash.h: the machine's byte
 * order, a 16-bit version first (a reader ignores a version it does not
 * know), then the fixed part, then `nframes` 64-bit addresses, the
 * innermost first. Stacks are symbolised from the rte.module events of the
 * same process, as crash stacks are. Pure data: include it anywhere.
 *
 * A stack of RTE_PROFILE_MAX_FRAMES frames fits any ring size
 * (RTE_CUSTOM_MAX_BYTES).
 */
#ifndef RTE_PROFILE_H
#define RTE_PROFILE_H

#include <stdint.h>

#define RTE_SAMPLE_VERSION 1u
#define RTE_ALLOC_SAMPLE_VERSION 1u
#define RTE_ALLOC_FREE_VERSION 1u
#define RTE_PROFILE_MAX_FRAMES 64u

/* rte.sample / rte.alloc.sample flags */
#define RTE_STACK_TRUNCATED 1u /* the walk stopped at RTE_PROFILE_MAX_FRAMES
                                  or at a frame it could not unwind */
/* rte.sample flags: the clock that took the sample (RTE_PROFILE_CLOCK).
 * None of them: the POSIX CPU-time timer, as asked (the default). */
#define RTE_SAMPLE_PERF      2u /* the perf_event cpu-clock (hrtimer) */
#define RTE_SAMPLE_PERF_FAIL 4u /* the perf clock was asked and could not
                                   be used: the timer; bits 16-23 say why */
#define RTE_SAMPLE_PERF_RATE 8u /* the perf clock was asked above its
                                   10 kHz: the timer */
#define RTE_SAMPLE_WHY_SHIFT 16 /* RTE_SAMPLE_PERF_FAIL: perf_event_open's
                                   errno (0-255) */
/* rte.sample flags of the wall-clock mode (RTE_PROFILE_MODE=wall), where
 * cpu_ns is the wall time the sample stands for and no clock flag above
 * is set. */
#define RTE_SAMPLE_WALL      32u /* a wall-clock sample */
#define RTE_SAMPLE_BLOCKED   64u /* the thread was off CPU (sleeping or
                                    waiting): written by the sampler
                                    thread, on its own ring, for `tid` */
#define RTE_SAMPLE_SYSCALL_SHIFT 16 /* RTE_SAMPLE_BLOCKED: bits 16-31 hold
                                    the system call it was blocked in + 1
                                    (the machine's numbers), 0 if none */

/*
 * rte.sample: one CPU-time sample of the thread whose ring it is on,
 * written by that thread's profiling signal handler; then `nframes`
 * addresses, the interrupted instruction first, then return addresses.
 * The event's timestamp is when the sample was taken. In wall mode a
 * RTE_SAMPLE_BLOCKED sample is on the sampler thread's ring and names
 * the sampled thread in `tid`; its first address is the instruction
 * after the blocking system call.
 */
struct rte_sample_rec {
	uint16_t version;  /* RTE_SAMPLE_VERSION */
	uint16_t nframes;
	uint32_t flags;    /* RTE_STACK_*, RTE_SAMPLE_* */
	uint64_t cpu_ns;   /* the thread's CPU time since its previous sample
	                      (or since its timer was armed): the weight;
	                      RTE_SAMPLE_WALL: wall time */
	int32_t tid;       /* kernel thread id */
	uint32_t hz;       /* the rate asked for (RTE_PROFILE) */
};                         /* 24 bytes */

/* rte.alloc.sample fn: which function made the allocation */
enum rte_alloc_fn {
	RTE_ALLOC_MALLOC = 1, RTE_ALLOC_CALLOC, RTE_ALLOC_REALLOC,
	RTE_ALLOC_REALLOCARRAY, RTE_ALLOC_POSIX_MEMALIGN,
	RTE_ALLOC_ALIGNED_ALLOC, RTE_ALLOC_MEMALIGN, RTE_ALLOC_VALLOC,
	RTE_ALLOC_PVALLOC
};

/*
 * rte.alloc.sample: one sampled allocation. Sampling picks on average one
 * allocation per `period` bytes allocated (exponentially distributed
 * intervals), so an allocation of s bytes is sampled with probability
 * 1 - exp(-s / period): a reader estimates the bytes and objects a sample
 * stands for as s / (1 - exp(-s / period)) and 1 / (1 - exp(-s / period)).
 * A realloc to s bytes advances the sampling clock by c < s only (its
 * growth, at least s / 8; since 2026-12): its sample records
 * period = RTE_ALLOC_SAMPLE * s / c, which makes the same formula the
 * probability it was taken with, so the estimates stay unbiased. The
 * process's period is the smallest a sample records.
 * Then `nframes` return addresses, the allocator's caller first.
 */
struct rte_alloc_sample_rec {
	uint16_t version;  /* RTE_ALLOC_SAMPLE_VERSION */
	uint16_t nframes;
	uint16_t fn;       /* enum rte_alloc_fn */
	uint16_t flags;    /* RTE_STACK_* */
	uint64_t size;     /* bytes asked for */
	uint64_t addr;     /* address returned */
	uint64_t period;   /* mean sampling interval in bytes (RTE_ALLOC_SAMPLE;
	                      a realloc's: scaled, see above) */
};                         /* 32 bytes */

/*
 * rte.alloc.free: a sampled allocation was freed (free, or realloc moved
 * or shrank it away), on the ring of the thread that freed it. An address
 * sampled and never freed was live at the end of the trace.
 */
#define RTE_ALLOC_FREE_TEMPORARY 1u /* the free of a temporary allocation
                                   (see rte.alloc.temporary); 0 in files
                                   of rte before 2026-12 */
struct rte_alloc_free_rec {
	uint16_t version;  /* RTE_ALLOC_FREE_VERSION */
	uint16_t flags;    /* RTE_ALLOC_FREE_* */
	uint32_t reserved2;
	uint64_t addr;
};                         /* 16 bytes */

/*
 * The rte.alloc.* int events, written on each thread's ring with its
 * `alloc` runtime event (the OCaml size-bucket histogram of the calls since
 * the previous flush): each value counts what happened on that thread
 * since its previous flush, so totals are sums over events.
 *   rte.alloc.calls    allocation calls (malloc family)
 *   rte.alloc.bytes    bytes asked for by those calls (a request of 2^48
 *                      bytes or more, which no allocator can satisfy,
 *                      adds nothing)
 *   rte.alloc.frees    free calls with a non-NULL pointer
 *   rte.alloc.freed    bytes freed (malloc_usable_size of each)
 *   rte.alloc.usable   usable bytes of the blocks those calls returned
 *                      (malloc_usable_size of each: the measure of
 *                      rte.alloc.freed, so that the bytes still live are
 *                      usable - freed, exactly; written by rte after
 *                      rte.alloc.freed, absent from older files)
 *   rte.alloc.temporary temporary allocations: blocks freed by the thread
 *                      that allocated them with no other allocation of
 *                      that thread in between (heaptrack's definition,
 *                      per thread; a realloc is a free then an
 *                      allocation)
 * and, not per flush but the process's (any thread may write them):
 *   rte.alloc.heap     usable bytes live in the process at the event's
 *                      time (a point of the heap series: written when
 *                      they moved RTE_ALLOC_HEAP_STEP bytes, or
 *                      RTE_ALLOC_HEAP_MS passed, since the last point)
 *   rte.alloc.peak     the highest live usable bytes so far
 *   rte.alloc.peak_ns  when they were reached (the rings' clock), right
 *                      after its rte.alloc.peak
 * The process-wide live bytes add up each thread's change every
 * RTE_ALLOC_HEAP_SLACK bytes: exact while one thread allocates at a time,
 * else within twice the slack per other allocating thread.
 */
#define RTE_ALLOC_EV_CALLS "rte.alloc.calls"
#define RTE_ALLOC_EV_BYTES "rte.alloc.bytes"
#define RTE_ALLOC_EV_FREES "rte.alloc.frees"
#define RTE_ALLOC_EV_FREED "rte.alloc.freed"
#define RTE_ALLOC_EV_USABLE "rte.alloc.usable"
#define RTE_ALLOC_EV_TEMPORARY "rte.alloc.temporary"
#define RTE_ALLOC_EV_HEAP "rte.alloc.heap"
#define RTE_ALLOC_EV_PEAK "rte.alloc.peak"
#define RTE_ALLOC_EV_PEAK_NS "rte.alloc.peak_ns"
#define RTE_ALLOC_EV_SAMPLE "rte.alloc.sample"
#define RTE_ALLOC_EV_FREE "rte.alloc.free"
#define RTE_SAMPLE_EV "rte.sample"

#endif
