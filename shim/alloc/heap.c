/*
 * alloc/heap.c - the process-wide heap of the allocation profiler
 * (RTE_ALLOC): the usable bytes live now, their peak and when it was
 * reached, and the heap series (the rte.alloc.heap, rte.alloc.peak and
 * rte.alloc.peak_ns int events; include/rte/profile.h).
 *
 * Each thread keeps its change of the live bytes (usable bytes allocated
 * less freed) since it last added it to the process-wide total (hd), and
 * the highest value that change reached meanwhile (hmax): the fast paths
 * (alloc/alloc.h) add to them, no atomic. A thread adds hd to the total
 * (one atomic add) when it reaches +-RTE_ALLOC_HEAP_SLACK (64 KiB), at
 * each look at the flush rules and at each flush. At that add, total
 * before + hmax is the highest the heap stood during the thread's batch
 * had the other threads not changed it meanwhile: the peak is raised to
 * it. In a process where one thread allocates at a time this is the
 * exact peak; otherwise each other allocating thread's unpublished change
 * (at most the slack each way) can make it off by twice the slack.
 * RTE_ALLOC_HEAP_SLACK=0 adds every call (exact, one contended atomic
 * per call).
 *
 * A point of the heap series is written (by the thread whose add moved
 * the total) when the total moved RTE_ALLOC_HEAP_STEP bytes (1 MiB) from
 * the last point, or at a look at the flush rules RTE_ALLOC_HEAP_MS
 * (10 ms) after the last point if it moved at all; the peak is written
 * with a point or a flush when it rose since it was last written. A point
 * is claimed by a CAS on the last point's value, so two threads never
 * write the same one. The clock is read when the peak rises (once per
 * add at most) and when a point is written.
 *
 * A fork child starts from zero, as its counts do (its inherited blocks
 * are its parent's figures). A vfork child allocates from its parent's
 * heap: the fast paths count its calls in the thread's state (shared),
 * and a publish adds them to the total as the parent's next one would;
 * it writes no point and no peak (the ring is its parent's thread's).
 *
 * Thread-safety: atomics only; everything is async-signal-safe.
 */
#include <errno.h>
#include <stdlib.h>

#include "forkvars.h"
#include "alloc/alloc.h"
#include "clock.h"
#include "rte/rte.h"
#include "tracer.h"

#define SLACK_DEFAULT 65536u
#define STEP_DEFAULT (1u << 20)
#define MS_DEFAULT 10u

int64_t rte_alloc_heap_slack = SLACK_DEFAULT;
static int64_t g_step = STEP_DEFAULT;
static uint64_t g_point_ns = MS_DEFAULT * 1000000ull;

int rte_alloc_heap_temp_id = -1;
static int g_id_heap = -1, g_id_peak = -1, g_id_peak_ns = -1;

/* The process's figures: the total (written by every allocating thread)
 * alone on its line, the rest read much more often than written. */
static struct {
	int64_t live __attribute__((aligned(64))); /* usable bytes live */
	int64_t peak __attribute__((aligned(64))); /* highest live */
	uint64_t peak_ns;      /* when (0: not yet) */
	int64_t peak_written;  /* the peak last written (0: none) */
	int64_t mark;          /* the live bytes of the last point */
	uint64_t mark_ns;      /* its time (0: none yet) */
} g_heap;

static uint64_t env_u(const char *name, uint64_t hi, uint64_t def)
{
	const char *s = secure_getenv(name), *p;
	uint64_t v = 0;

	if (!s || !*s)
		return def;
	for (p = s; *p >= '0' && *p <= '9' && v <= hi; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (*p || v > hi) {
		rte_warn(NULL, "%s=%.32s is not a number from 0 to %llu; using %llu",
		         name, s, (unsigned long long)hi, (unsigned long long)def);
		return def;
	}
	return v;
}

void rte_alloc_heap_start(void)
{
	static int read;

	if (!read) {
		rte_alloc_heap_slack = (int64_t)env_u("RTE_ALLOC_HEAP_SLACK",
		                                      1u << 30, SLACK_DEFAULT);
		g_step = (int64_t)env_u("RTE_ALLOC_HEAP_STEP", 1ull << 40,
		                        STEP_DEFAULT);
		if (g_step < 1)
			g_step = 1;
		g_point_ns = env_u("RTE_ALLOC_HEAP_MS", 3600000, MS_DEFAULT) *
		             1000000ull;
		read = 1;
	}
	rte_alloc_heap_temp_id = rte_tracer_register_own(RTE_ALLOC_EV_TEMPORARY,
	                                                 RTE_TYPE_INT);
	g_id_heap = rte_tracer_register_own(RTE_ALLOC_EV_HEAP, RTE_TYPE_INT);
	g_id_peak = rte_tracer_register_own(RTE_ALLOC_EV_PEAK, RTE_TYPE_INT);
	g_id_peak_ns = rte_tracer_register_own(RTE_ALLOC_EV_PEAK_NS,
	                                       RTE_TYPE_INT);
}

RTE_FORKTEXT void rte_alloc_heap_fork_child(void)
{
	g_heap.live = g_heap.peak = g_heap.mark = 0;
	g_heap.peak_ns = g_heap.mark_ns = 0;
	g_heap.peak_written = 0;
}

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static void raise_peak(int64_t pk)
{
	int64_t cur = LD(g_heap.peak);

	while (pk > cur)
		if (__atomic_compare_exchange_n(&g_heap.peak, &cur, pk, 1,
		                                __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED)) {
			ST(g_heap.peak_ns, rte_clock_ns());
			return;
		}
}

/* Add the thread's change to the total; returns the new total. */
static int64_t add(struct rte_alloc_thread *a)
{
	int64_t d = a->hd, m = a->hmax, old;

	a->hd = a->hmax = 0;
	old = d ? __atomic_fetch_add(&g_heap.live, d, __ATOMIC_RELAXED)
	        : LD(g_heap.live);
	if (old + m > LD(g_heap.peak))
		raise_peak(old + m);
	return old + d;
}

static uint64_t user_hdr(int id)
{
	return rte_hdr_make(0, 1, RTE_UMSG_INT, (unsigned)id);
}

static int64_t nonneg(int64_t v)
{
	return v > 0 ? v : 0;
}

/* Claim the point of `live` at ts (due, or forced): 1 if this thread is
 * to write it. */
/* 1 if a point of `live` at ts is due (read only). */
static int due(int64_t live, uint64_t ts)
{
	int64_t m = LD(g_heap.mark);
	uint64_t mns = LD(g_heap.mark_ns);

	return live - m >= g_step || m - live >= g_step ||
	       (live != m && !(mns && ts - mns < g_point_ns) && ts);
}

static int claim(int64_t live, uint64_t ts, int force)
{
	int64_t m = LD(g_heap.mark);

	if (!force && !due(live, ts))
		return 0;
	if (!__atomic_compare_exchange_n(&g_heap.mark, &m, live, 0,
	                                 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return force; /* another thread writes a point now */
	ST(g_heap.mark_ns, ts ? ts : 1);
	return 1;
}

/* Write the point and, if it rose since last written, the peak. */
static void write_point(struct rte_ring_writer *w, uint64_t ts, int64_t live,
                        int point)
{
	int64_t pk = LD(g_heap.peak), pw = LD(g_heap.peak_written);

	if (point && g_id_heap >= 0)
		rte_ring_write1(w, user_hdr(g_id_heap), ts,
		                (uint64_t)nonneg(live));
	if (pk > pw && g_id_peak >= 0 && g_id_peak_ns >= 0 &&
	    __atomic_compare_exchange_n(&g_heap.peak_written, &pw, pk, 0,
	                                __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		uint64_t pns = LD(g_heap.peak_ns);

		rte_ring_write1(w, user_hdr(g_id_peak), ts, (uint64_t)pk);
		rte_ring_write1(w, user_hdr(g_id_peak_ns), ts,
		                pns && pns <= ts ? pns : ts);
	}
}

/* A point written outside a flush: inside the guard, on the thread's own
 * ring (nothing if it is inside a write of ours already). */
static void point_now(struct rte_alloc_thread *a, int64_t live, uint64_t ts)
{
	struct rte_ring_writer *w;

	if (a->guard)
		return;
	rte_alloc_guard_enter(a);
	if ((w = rte_enter())) {
		write_point(w, ts, live, 1);
		rte_leave_w(w);
	}
	rte_alloc_guard_leave(a);
}

void rte_alloc_heap_publish(struct rte_alloc_thread *a)
{
	int saved = errno;
	int64_t live = add(a), m = LD(g_heap.mark);
	uint64_t ts;

	/* The add is fine in a vfork child: its blocks are its parent's
	 * (the same heap; the fast paths counted them in the thread's state
	 * already), and the total is what the parent would add later. A
	 * point is not: its ring is the parent's thread's (that look is a
	 * system call: only when a point is due, not at every add). */
	if ((live - m >= g_step || m - live >= g_step) &&
	    !rte_tracer_vforked_fast() && claim(live, ts = rte_clock_ns(), 0))
		point_now(a, live, ts);
	errno = saved;
}

void rte_alloc_heap_tick(struct rte_alloc_thread *a, uint64_t now)
{
	int saved = errno;
	int64_t live = add(a);

	/* A vfork child adds, writes no point (see above). */
	if (due(live, now) && !rte_tracer_vforked_fast() && claim(live, now, 0))
		point_now(a, live, rte_clock_ns());
	errno = saved;
}

void rte_alloc_heap_flush(struct rte_alloc_thread *a,
                          struct rte_ring_writer *w, uint64_t ts, int force)
{
	int64_t live = add(a);

	write_point(w, ts, live, claim(live, ts, force));
}

int rte_alloc_heap_pending(const struct rte_alloc_thread *a)
{
	if (g_id_heap < 0) /* not profiling */
		return 0;
	return a->hd || a->hmax || LD(g_heap.peak) > LD(g_heap.peak_written) ||
	       LD(g_heap.live) != LD(g_heap.mark);
}
