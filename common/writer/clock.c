/*
 * clock.c - TSC calibration and per-thread re-anchoring. See clock.h.
 */
#include <stdint.h>

#include "clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc >= 2.33 */
#endif
#endif
#endif

__thread struct rte_clock_anchor rte_clock_tls
	__attribute__((tls_model("initial-exec")));

#define ANCHOR_NS 1000000u /* re-anchor about every millisecond */

/* MODE_CALIB: the TSC will be used once the baseline from g_tsc_start is
 * long enough; MODE_CALIB_BUSY: one thread is computing the rate. */
enum { MODE_UNSET = 0, MODE_BUSY, MODE_MONO, MODE_CALIB, MODE_CALIB_BUSY,
       MODE_TSC };

#define CALIB_NS 200000u /* baseline of the first rate */

static int g_mode;           /* MODE_*, atomic */
static uint64_t g_mult;      /* global ns per tick, 32.32, atomic */
static uint64_t g_tsc_start; /* calibration start pair, set once */
static uint64_t g_ns_start;
static uint64_t g_refined_at; /* ns elapsed at the last refinement, atomic */

#if defined(__x86_64__)
/* The invariant-TSC bit (CPUID 0x80000007, EDX bit 8). From the copy
 * glibc's loader made at start where it exposes one: in a virtual machine
 * each CPUID instruction traps to the hypervisor (about 16 us apiece on
 * the VMs measured, doc/BENCHMARKS.md), and every traced process starts
 * its clock. */
static int tsc_invariant(void)
{
#if defined(CPU_FEATURE_PRESENT)
	return CPU_FEATURE_PRESENT(INVARIANT_TSC) ? 1 : 0;
#else
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__cpuid(0x80000007u, a, b, c, d);
	return (d >> 8) & 1;
#endif
}

/* One (tsc, ns) pair, taking the TSC on both sides of clock_gettime and
 * keeping the tightest of a few tries. */
static void read_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 4; i++) {
		uint64_t t1 = __rdtsc();
		uint64_t n = rte_clock_monotonic_ns();
		uint64_t t2 = __rdtsc();

		if (t2 - t1 < best) {
			best = t2 - t1;
			*tsc = t1 + (t2 - t1) / 2;
			*ns = n;
		}
	}
}

static uint64_t mult_of(uint64_t dns, uint64_t dtsc)
{
	return dtsc ? (uint64_t)(((unsigned __int128)dns << 32) / dtsc) : 0;
}

/* Re-derive the global rate from the calibration start once the baseline
 * has doubled since the last refinement: the error shrinks as 1/elapsed. */
static void refine(uint64_t tsc, uint64_t ns)
{
	uint64_t el = ns - g_ns_start;
	uint64_t last = __atomic_load_n(&g_refined_at, __ATOMIC_RELAXED);

	if (el < 2 * last || tsc <= g_tsc_start)
		return;
	__atomic_store_n(&g_mult, mult_of(el, tsc - g_tsc_start),
	                 __ATOMIC_RELAXED);
	__atomic_store_n(&g_refined_at, el, __ATOMIC_RELAXED);
}
#endif

#if defined(__x86_64__)
/* The anchor's clock at tick t, not past the end of its period (0 before
 * the first anchor): where the next period starts at the earliest. */
static uint64_t extrapolate(const struct rte_clock_anchor *a, uint64_t t)
{
	if (!a->period || t < a->tsc0)
		return 0;
	return a->ns0 + (uint64_t)(((unsigned __int128)(
	               t - a->tsc0 < a->period ? t - a->tsc0 : a->period) *
	               a->mult) >> 32);
}
#endif

uint64_t rte_clock_peek_ns(void)
{
#if defined(__x86_64__)
	const struct rte_clock_anchor *a = &rte_clock_tls;
	uint64_t tsc = __rdtsc(), t, n, extrap;

	if (tsc - a->tsc0 < a->period)
		return rte_clock_at(a, tsc - a->tsc0);
	if (__atomic_load_n(&g_mode, __ATOMIC_ACQUIRE) != MODE_TSC)
		return rte_clock_monotonic_ns();
	read_pair(&t, &n);
	/* As rte_clock_reanchor() would start its next period: the next
	 * real re-anchor starts from at least this (same cap, later n). */
	extrap = extrapolate(a, t);
	return extrap > n ? extrap : n;
#else
	return rte_clock_monotonic_ns();
#endif
}

void rte_clock_init(int force_monotonic)
{
	int unset = MODE_UNSET;

	if (!__atomic_compare_exchange_n(&g_mode, &unset, MODE_BUSY, 0,
	                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
#if defined(__x86_64__)
	if (!force_monotonic && tsc_invariant()) {
		read_pair(&g_tsc_start, &g_ns_start);
		/* Publishes the start pair; pairs with the acquire load in
		 * rte_clock_reanchor(). */
		__atomic_store_n(&g_mode, MODE_CALIB, __ATOMIC_RELEASE);
		return;
	}
#else
	(void)force_monotonic;
#endif
	__atomic_store_n(&g_mode, MODE_MONO, __ATOMIC_RELEASE);
}

int rte_clock_uses_tsc(void)
{
	int m = __atomic_load_n(&g_mode, __ATOMIC_ACQUIRE);

	return m == MODE_CALIB || m == MODE_CALIB_BUSY || m == MODE_TSC;
}

#if defined(__x86_64__)
/* MODE_CALIB: once the baseline is CALIB_NS long, one thread derives the
 * rate and switches to MODE_TSC. Returns the mode now in force. */
static int calibrate(void)
{
	int m = MODE_CALIB;
	uint64_t t1, n1;

	if (rte_clock_monotonic_ns() - g_ns_start < CALIB_NS ||
	    !__atomic_compare_exchange_n(&g_mode, &m, MODE_CALIB_BUSY, 0,
	                                 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		return m;
	read_pair(&t1, &n1);
	__atomic_store_n(&g_mult, mult_of(n1 - g_ns_start, t1 - g_tsc_start),
	                 __ATOMIC_RELAXED);
	__atomic_store_n(&g_refined_at, n1 - g_ns_start, __ATOMIC_RELAXED);
	m = __atomic_load_n(&g_mult, __ATOMIC_RELAXED) ? MODE_TSC : MODE_MONO;
	/* Publishes g_mult; pairs with the acquire load in
	 * rte_clock_reanchor(). */
	__atomic_store_n(&g_mode, m, __ATOMIC_RELEASE);
	return m;
}
#endif

uint64_t rte_clock_reanchor(struct rte_clock_anchor *a, uint64_t tsc)
{
#if defined(__x86_64__)
	uint64_t t, n, mult, extrap, period;
	int m = __atomic_load_n(&g_mode, __ATOMIC_ACQUIRE);

	if (m == MODE_CALIB)
		m = calibrate();
	if (m != MODE_TSC) {
		a->period = 0;
		return rte_clock_monotonic_ns();
	}
	read_pair(&t, &n);
	refine(t, n);
	mult = __atomic_load_n(&g_mult, __ATOMIC_RELAXED);
	period = ((uint64_t)ANCHOR_NS << 32) / mult;
	/* The largest value handed out since the last anchor is at most the
	 * extrapolation to the end of its period: continuing from there keeps
	 * the clock monotonic, and not extrapolating further keeps a rate
	 * error from growing with the time the thread did not ask (a sleep). */
	extrap = extrapolate(a, t);
	if (extrap > n) {
		/* The scaled clock ran ahead: continue from where it is (never
		 * step back) at a rate that meets CLOCK_MONOTONIC at the end
		 * of the next period. */
		uint64_t target = n + ANCHOR_NS;

		a->ns0 = extrap;
		a->mult = target > extrap ? mult_of(target - extrap, period)
		                          : mult / 2;
	} else {
		a->ns0 = n;
		a->mult = mult;
	}
	a->tsc0 = t;
	a->period = period;
	(void)tsc;
	return a->ns0;
#else
	(void)a;
	(void)tsc;
	return rte_clock_monotonic_ns();
#endif
}
