/*
 * alloc/sample.c - the allocation profiler's counting, flushing and
 * sampling (RTE_ALLOC; the records are in include/rte/profile.h).
 *
 * Counting: each thread counts its calls into OCaml's 20 size buckets
 * (rte_alloc_bucket of the size in 8-byte words, rounded up) and its
 * bytes, frees and freed bytes, in its own state (no lock, no atomic;
 * the fast path is alloc/alloc.h's, this file is the slow one). A flush
 * writes them on the thread's ring, as the `alloc` runtime event and the
 * four rte.alloc.* int events, every RTE_ALLOC_FLUSH_CALLS calls, or at
 * the first call RTE_ALLOC_FLUSH_MS after the previous flush, and at
 * thread end, fork, exec and exit (the exiting thread's counts; another
 * thread's last unflushed calls are lost at exit). The flush rules are
 * looked at every `step` calls: 64 at first, doubled (up to 4096) while
 * that many calls take less than 1/64 of RTE_ALLOC_FLUSH_MS and halved
 * (down to 1) while they take more than 1/16 of it, so that a busy thread
 * reads the clock rarely and a flush is late by a small part of the
 * period at most.
 *
 * Sampling: each thread draws exponentially distributed byte intervals
 * of mean RTE_ALLOC_SAMPLE (xorshift64* and -log(U)); the allocation that
 * crosses the end of an interval is sampled, so an allocation of s bytes
 * is sampled with probability 1 - exp(-s / period). A realloc advances
 * the clock by its growth (at least 1/8 of its size: alloc/alloc.h's
 * rte_alloc_realloc_clock) and its sample records the period that makes
 * that formula its probability. A sample is an
 * rte.alloc.sample with the stack (libunwind, per-thread cache), and its
 * address goes into a lock-free set (alloc/set.c) so that its free writes
 * an rte.alloc.free. The set is 2^15 buckets of 8 addresses (one cache line
 * each; insert and erase are CAS on one word), guarded by 4096 counters
 * indexed by the top bits of the address's hash: a free of an address
 * that was never sampled reads one counter (zero) and stops. A sample whose bucket
 * is full (more than 8 live samples hashing together) is not written.
 * The set lives in memory mapped with MADV_WIPEONFORK: a fork child starts
 * with no live samples (its parent's are in its parent's file).
 *
 * Thread-safety: everything touches only the calling thread's state and
 * the set (atomics). rte_alloc_flush_self() is async-signal-safe.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "forkvars.h"
#include "alloc/alloc.h"
#include "tracer.h"
#include "clock.h"
#include "rte/rte.h"

/* ---- configuration ----------------------------------------------------------- */

#define SAMPLE_DEFAULT 524288u
#define FLUSH_CALLS_DEFAULT 65536u
#define FLUSH_MS_DEFAULT 100u

static uint64_t g_period = SAMPLE_DEFAULT; /* 0: no sampling */
static uint32_t g_flush_calls = FLUSH_CALLS_DEFAULT;
static uint64_t g_flush_ns = FLUSH_MS_DEFAULT * 1000000ull;

/* ids of our events, -1 until registered */
static int g_id_calls = -1, g_id_bytes = -1, g_id_frees = -1,
           g_id_freed = -1, g_id_usable = -1, g_id_sample = -1,
           g_id_free = -1;
static int g_started;

/* An unsigned decimal in [lo, hi] from the environment, else def with a
 * warning (malformed) or silently (unset). */
static uint64_t env_uint(const char *name, uint64_t lo, uint64_t hi,
                         uint64_t def)
{
	const char *s = secure_getenv(name);
	uint64_t v = 0;
	const char *p;

	if (!s || !*s)
		return def;
	for (p = s; *p >= '0' && *p <= '9' && v <= hi; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (*p || v < lo || v > hi || p - s > 20) {
		rte_warn(NULL, "%s=%.32s is not a number from %llu to %llu; "
		         "using %llu", name, s, (unsigned long long)lo,
		         (unsigned long long)hi, (unsigned long long)def);
		return def;
	}
	return v;
}

/* ---- our own code's addresses (frames stripped from samples) ---------------- */

static uintptr_t g_text_lo, g_text_hi;

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t me = (uintptr_t)data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo &&
		    me < lo + ph->p_memsz) {
			g_text_lo = lo;
			g_text_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void start_sampling(void);

/* ---- start ---------------------------------------------------------------------- */

void rte_alloc_start(void)
{
	const char *owner = rte_alloc_first_owner();
	Dl_info info;

	if (owner) {
		rte_warn(NULL, "RTE_ALLOC: malloc is interposed before librte.so "
		         "(by %s): allocations are not profiled (put librte.so "
		         "first in LD_PRELOAD)", owner);
		return;
	}
	if (!rte_alloc_enabled())
		return;
	if (!g_started) {
		g_period = env_uint("RTE_ALLOC_SAMPLE", 0, 1ull << 40,
		                    SAMPLE_DEFAULT);
		g_flush_calls = (uint32_t)env_uint("RTE_ALLOC_FLUSH_CALLS", 1,
		                                   1u << 30,
		                                   FLUSH_CALLS_DEFAULT);
		g_flush_ns = env_uint("RTE_ALLOC_FLUSH_MS", 1, 3600000,
		                      FLUSH_MS_DEFAULT) * 1000000ull;
		for (unsigned w = 0; w <= 100; w++)
			rte_alloc_bucket_of[w] = (uint8_t)rte_alloc_bucket(w);
		if (dladdr((void *)rte_alloc_start, &info))
			dl_iterate_phdr(find_text, (void *)rte_alloc_start);
		g_started = 1;
	}
	g_id_calls = rte_tracer_register_own(RTE_ALLOC_EV_CALLS, RTE_TYPE_INT);
	g_id_bytes = rte_tracer_register_own(RTE_ALLOC_EV_BYTES, RTE_TYPE_INT);
	g_id_frees = rte_tracer_register_own(RTE_ALLOC_EV_FREES, RTE_TYPE_INT);
	g_id_freed = rte_tracer_register_own(RTE_ALLOC_EV_FREED, RTE_TYPE_INT);
	g_id_usable = rte_tracer_register_own(RTE_ALLOC_EV_USABLE, RTE_TYPE_INT);
	rte_alloc_heap_start();
	if (g_period && !rte_alloc_g_set)
		start_sampling();
	rte_alloc_on();
}

/* The sampling part of rte_alloc_start(). */
static void start_sampling(void)
{
	g_id_sample = rte_tracer_register_own(RTE_ALLOC_EV_SAMPLE,
	                                   RTE_TYPE_CUSTOM);
	g_id_free = rte_tracer_register_own(RTE_ALLOC_EV_FREE, RTE_TYPE_CUSTOM);
	rte_bt_init(1, rte_real.dlopen, rte_real.dlclose);
	if (rte_alloc_set_map() < 0)
		rte_warn(NULL, "RTE_ALLOC: no memory for the sample set; "
		         "allocations are counted, not sampled");
}

/* ---- sampling ------------------------------------------------------------------ */

static uint64_t next_random(struct rte_alloc_thread *a)
{
	uint64_t x = a->rng;

	if (!x) {
		x = (uint64_t)syscall(SYS_gettid) * 0x9e3779b97f4a7c15ull ^
		    rte_clock_ns() ^ (uint64_t)(uintptr_t)a;
		x = x ? x : 88172645463325252ull;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	a->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

/*
 * -ln(u) for u in (0, 1], here rather than libm's log: linking libm made
 * every traced process load it (its open, mappings and IFUNC relocations
 * cost a short process more than this file's whole start). u = m * 2^e
 * with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m - 1)/(m + 1),
 * |s| < 0.172: the series to s^13 is exact to about 1e-12.
 */
static double neg_log(double u)
{
	uint64_t b;
	int e;
	double m, s, s2, t;

	memcpy(&b, &u, sizeof(b));
	/* u is normal: at least 2^-53. */
	e = (int)((b >> 52) & 0x7ff) - 1023;
	b = (b & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1023) << 52);
	memcpy(&m, &b, sizeof(m));
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	s = (m - 1) / (m + 1);
	s2 = s * s;
	t = 1.0 / 13;
	for (int k = 11; k >= 1; k -= 2)
		t = 1.0 / k + s2 * t;
	return -((double)e * 0.6931471805599453 + 2 * s * t);
}

/* Bytes to the next sample: exponential of mean g_period, from 1 to
 * RTE_ALLOC_BYTES_MAX. */
static uint64_t next_interval(struct rte_alloc_thread *a)
{
	/* U in (0, 1]: 53 random bits. */
	double u = (double)((next_random(a) >> 11) + 1) * 0x1p-53;
	double v = neg_log(u) * (double)g_period;

	if (v < 1)
		return 1;
	if (v >= (double)RTE_ALLOC_BYTES_MAX)
		return RTE_ALLOC_BYTES_MAX;
	return (uint64_t)v;
}

static uint64_t user_hdr(unsigned type, int id)
{
	return rte_hdr_make(0, 1, type, (unsigned)id);
}

uint8_t rte_alloc_bucket_of[101]; /* filled by rte_alloc_start() */

/* The period a sample of n bytes taken at a clock advance of c records:
 * RTE_ALLOC_SAMPLE, or for a realloc's smaller advance that scaled by
 * n / c (alloc/alloc.h), so that 1 - exp(-n / period) is the probability
 * it was sampled with and n / that the bytes it stands for. */
static uint64_t period_of(size_t n, uint64_t c)
{
	double v;

	if (c >= n || !c)
		return g_period;
	v = (double)g_period * (double)n / (double)c + 0.5;
	return v < (double)RTE_ALLOC_BYTES_MAX ? (uint64_t)v
	                                       : RTE_ALLOC_BYTES_MAX;
}

/* Write the sample of the block p of n bytes, clock c (inside the
 * guard). */
static void sample(struct rte_alloc_thread *a, void *p, size_t n,
                   uint64_t c, unsigned fn)
{
	struct rte_alloc_sample_rec *r = (void *)a->rec;
	uint64_t *pcs = a->rec + sizeof(*r) / 8, raw[RTE_BT_MAX];
	unsigned got, skip = 0, k;
	struct rte_ring_writer *w;

	if (g_id_sample < 0 || !__atomic_load_n(&rte_alloc_g_set, __ATOMIC_ACQUIRE) ||
	    rte_alloc_set_add((uint64_t)(uintptr_t)p) < 0)
		return;
	got = rte_bt_capture_here(raw, RTE_BT_MAX, 0);
	/* Our own frames (this function, the wrapper) are not the site. */
	while (skip < got && raw[skip] >= g_text_lo && raw[skip] < g_text_hi)
		skip++;
	k = got - skip;
	if (k > RTE_PROFILE_MAX_FRAMES)
		k = RTE_PROFILE_MAX_FRAMES;
	memcpy(pcs, raw + skip, k * sizeof(uint64_t));
	memset(r, 0, sizeof(*r));
	r->version = RTE_ALLOC_SAMPLE_VERSION;
	r->nframes = (uint16_t)k;
	r->fn = (uint16_t)fn;
	r->flags = got == RTE_BT_MAX || got == 0 ? RTE_STACK_TRUNCATED : 0;
	r->size = n;
	r->addr = (uint64_t)(uintptr_t)p;
	r->period = period_of(n, c);
	if (!(w = rte_enter()))
		return; /* stays in the set: its free is written (and dropped) */
	rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, g_id_sample), r,
	                      sizeof(*r) + k * sizeof(uint64_t));
	rte_leave_w(w);
}

#define guard_enter rte_alloc_guard_enter
#define guard_leave rte_alloc_guard_leave

/* rte_alloc_after(): the sample that rte_alloc_slow() found due (or the
 * thread's first interval). */
void rte_alloc_after(struct rte_alloc_thread *a, void *p, size_t n,
                     uint64_t c, unsigned fn)
{
	uint64_t b = n < RTE_ALLOC_BYTES_MAX ? c : 0;
	int saved = errno;

	if (!g_period) {
		/* No sampling: never due again (b < left always). */
		a->left = RTE_ALLOC_BYTES_MAX;
		goto out;
	}
	if (!a->rng) {
		/* The thread's first allocation: its first interval, then
		 * this allocation's bytes taken from it as from any. */
		a->left = next_interval(a);
		if (b < a->left) {
			a->left -= b;
			goto out;
		}
	}
	a->left = next_interval(a);
	if (!p)
		goto out; /* a failed call: nothing to sample */
	/* Not in the shared state of threads that got none (busy), nor in
	 * our own slow work (a nested call from libunwind). */
	if (!a->guard && !rte_self_p->busy && !rte_tracer_vforked_fast()) {
		guard_enter(a);
		sample(a, p, n, c, fn);
		guard_leave(a);
	}
out:
	errno = saved;
}

void rte_alloc_note_free(void *p)
{
	struct rte_alloc_free_rec r;
	struct rte_ring_writer *w;
	int saved;

	/* Not in a vfork child: the set and the ring are its parent's. */
	if (!rte_alloc_set_find((uint64_t)(uintptr_t)p, 0) || rte_tracer_vforked_fast() ||
	    !rte_alloc_set_find((uint64_t)(uintptr_t)p, 1))
		return;
	saved = errno;
	memset(&r, 0, sizeof(r));
	r.version = RTE_ALLOC_FREE_VERSION;
	r.addr = (uint64_t)(uintptr_t)p;
	/* Its thread's last allocation (before its free is counted: realloc)
	 * or just found a temporary (after: free; see rte_alloc_temp). */
	if (rte_self_p && (rte_self_p->alloc.last & ~(uint64_t)1) == r.addr)
		r.flags = RTE_ALLOC_FREE_TEMPORARY;
	if (g_id_free >= 0 && (w = rte_enter())) {
		rte_tracer_write_custom(w, user_hdr(RTE_UMSG_CUSTOM, g_id_free),
		                      &r, sizeof(r));
		rte_leave_w(w);
	}
	errno = saved;
}

/* ---- flushing ------------------------------------------------------------------ */

/* Allocation calls since the last flush. */
static uint64_t calls_of(const struct rte_alloc_thread *a)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		n += a->buckets[i];
	return n;
}

static void flush(struct rte_alloc_thread *a, int force)
{
	uint64_t buckets[RTE_ALLOC_BUCKETS];
	struct rte_ring_writer *w;
	uint64_t ts;
	int saved = errno;

	/* Not in a vfork child: the ring is its parent's thread's (the
	 * counts stay for that thread's next flush). */
	if (rte_tracer_vforked_fast())
		goto out;
	w = rte_enter();
	if (!w) {
		/* Relaxed: tracing stopped or paused: drop what we have. */
		if (!__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED))
			goto clear;
		goto out; /* a write of ours is interrupted: later */
	}
	ts = rte_clock_ns();
	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		buckets[i] = a->buckets[i];
	rte_ring_write(w, rte_hdr_make(0, 0, RTE_MSG_ALLOC, 0), ts, buckets,
	               RTE_ALLOC_BUCKETS);
	{
		const int id[] = { g_id_calls, g_id_bytes, g_id_frees,
		                   g_id_freed, g_id_usable,
		                   rte_alloc_heap_temp_id };
		const uint64_t v[] = { calls_of(a), a->bytes, a->frees,
		                       a->freed8 - 8 * (uint64_t)a->frees, a->got,
		                       a->temps };

		for (unsigned i = 0; i < sizeof id / sizeof id[0]; i++)
			if (id[i] >= 0)
				rte_ring_write1(w, user_hdr(RTE_UMSG_INT, id[i]),
				                ts, v[i]);
	}
	rte_alloc_heap_flush(a, w, ts, force);
	rte_leave_w(w);
	a->last_ns = ts;
clear:
	memset(a->buckets, 0, sizeof(a->buckets));
	a->bytes = a->freed8 = a->got = 0;
	a->frees = a->temps = 0;
out:
	errno = saved;
}

/* flush() inside the guard, unless the thread is already inside it. */
static void flush_guarded(struct rte_alloc_thread *a, int force)
{
	if (a->guard)
		return;
	guard_enter(a);
	flush(a, force);
	guard_leave(a);
}

#define STEP_FIRST 64u
#define STEP_MAX 4096u

/* The flush rules, when the tick ran out (outside the guard): flush if
 * RTE_ALLOC_FLUSH_CALLS calls or RTE_ALLOC_FLUSH_MS passed, adapt the
 * step (see the top of this file) and start the next tick. */
static void check_flush(struct rte_alloc_thread *a)
{
	uint64_t pending = calls_of(a) + a->frees, now, dt;
	uint32_t step = a->step ? a->step : STEP_FIRST;

	if (pending >= g_flush_calls) {
		flush_guarded(a, 0);
		pending = calls_of(a) + a->frees;
	} else if (pending) {
		now = rte_clock_ns();
		if (a->check_ns) {
			dt = now - a->check_ns;
			if (dt < g_flush_ns / 64) {
				if (step < STEP_MAX)
					step *= 2;
			} else if (dt > g_flush_ns / 16 && step > 1) {
				step /= 2;
			}
		}
		a->check_ns = now;
		rte_alloc_heap_tick(a, now);
		if (!a->last_ns)
			a->last_ns = now;
		else if (now - a->last_ns >= g_flush_ns)
			flush_guarded(a, 0);
		pending = calls_of(a) + a->frees;
	}
	a->step = step;
	/* The call that brings the count to g_flush_calls takes the slow
	 * path, which flushes it with the others. (pending is below
	 * g_flush_calls unless a flush could not write now.) */
	if (pending + step >= g_flush_calls)
		step = pending + 1 < g_flush_calls
		               ? (uint32_t)(g_flush_calls - 1 - pending)
		               : 0;
	a->tick = (int32_t)step;
}

int rte_alloc_slow(struct rte_alloc_thread *a, size_t n, uint64_t c)
{
	uint64_t b = n < RTE_ALLOC_BYTES_MAX ? c : 0;

	if (a->guard)
		return 0;
	a->buckets[rte_alloc_bucket_n(n)]++;
	a->bytes += n < RTE_ALLOC_BYTES_MAX ? n : 0;
	if (a->tick <= 0)
		check_flush(a);
	else
		a->tick--;
	/* Due when this allocation crosses the end of the interval, or
	 * the state is fresh (left 0: the first interval is drawn). */
	if (b >= a->left)
		return b || !a->left;
	a->left -= b;
	return 0;
}

void rte_alloc_free_slow(struct rte_alloc_thread *a, const void *p,
                         uint64_t usable8)
{
	if (a->guard)
		return;
	a->frees++;
	a->freed8 += usable8;
	a->hd -= (int64_t)usable8 - 8;
	rte_alloc_temp(a, p);
	if (a->hd <= -rte_alloc_heap_slack)
		rte_alloc_heap_publish(a);
	if (a->tick <= 0)
		check_flush(a);
	else
		a->tick--;
}

void rte_alloc_flush_self(void)
{
	struct rte_thread *t = rte_self_p;

	if (!t || t->busy || !(calls_of(&t->alloc) + t->alloc.frees ||
	                       rte_alloc_heap_pending(&t->alloc)))
		return;
	flush_guarded(&t->alloc, 1);
}
