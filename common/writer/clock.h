/*
 * clock.h - timestamps in CLOCK_MONOTONIC nanoseconds, fast (internal).
 *
 * On x86-64 with an invariant TSC, rte_clock_ns() reads the TSC and scales
 * it from a per-thread anchor (a TSC reading paired with a
 * clock_gettime(CLOCK_MONOTONIC) reading). Each thread re-anchors about
 * every millisecond, so the scaled value never strays far from
 * CLOCK_MONOTONIC (about 1 us; tests/unit/test_clock.c prints how close and
 * asserts a load-proof bound of two periods); when a
 * re-anchor finds the scaled clock ahead, the next period's rate is bent so
 * it converges without ever stepping back. Per thread, values never
 * decrease. Elsewhere, or with rte_clock_init(1), it calls clock_gettime.
 *
 * Thread-safety: all functions are thread-safe. rte_clock_ns() is
 * async-signal-safe (the TLS block is initial-exec). rte_clock_init() may
 * be called any number of times; calls after the first do nothing.
 */
#ifndef RTE_CLOCK_H
#define RTE_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

struct rte_clock_anchor {
	uint64_t tsc0;   /* TSC at the anchor */
	uint64_t ns0;    /* nanoseconds at the anchor */
	uint64_t mult;   /* ns per tick, 32.32 fixed point */
	uint64_t period; /* ticks until the next re-anchor; 0 = none yet */
};

extern __thread struct rte_clock_anchor rte_clock_tls
	__attribute__((tls_model("initial-exec")));

/* Start calibrating (once per process; it does not wait). force_monotonic:
 * always use clock_gettime. Until it runs, and for the first 200 us after
 * (the calibration baseline, measured by the first re-anchor after it, so
 * a short-lived process pays no busy wait), rte_clock_ns() uses
 * clock_gettime. */
void rte_clock_init(int force_monotonic);

/* 1 if timestamps come from the TSC, 0 if from clock_gettime. */
int rte_clock_uses_tsc(void);

uint64_t rte_clock_reanchor(struct rte_clock_anchor *a, uint64_t tsc);

/* The value rte_clock_ns() would return now, storing nothing (neither the
 * thread's anchor nor the global rate): for a parent's first event after
 * fork, when those pages are copy-on-write. Never below a value handed out
 * before, nor above the next one. */
uint64_t rte_clock_peek_ns(void);

static inline uint64_t rte_clock_monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The raw counter the anchors scale: the TSC on x86-64; elsewhere 0,
 * which with a period of 0 (no anchor ever) sends every caller of a
 * split path (shim/api.c's emit) to rte_clock_ns(). */
static inline uint64_t rte_clock_tsc(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return 0;
#endif
}

/* The anchor's time d ticks after its tsc0, d inside its period (the
 * one scaling of the fast paths: rte_clock_ns, rte_clock_peek_ns,
 * shim/api.c's emit). */
static inline uint64_t rte_clock_at(const struct rte_clock_anchor *a, uint64_t d)
{
	return a->ns0 + ((d * a->mult) >> 32);
}

static inline uint64_t rte_clock_ns(void)
{
#if defined(__x86_64__)
	struct rte_clock_anchor *a = &rte_clock_tls;
	uint64_t tsc = __rdtsc();
	uint64_t d = tsc - a->tsc0;

	if (__builtin_expect(d < a->period, 1))
		return rte_clock_at(a, d);
	return rte_clock_reanchor(a, tsc);
#else
	return rte_clock_monotonic_ns();
#endif
}


#endif
