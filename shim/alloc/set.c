/*
 * alloc/set.c - the allocation profiler's set of live sampled addresses
 * (alloc/alloc.h; sample.c describes it): a sampled block's address goes
 * in when its rte.alloc.sample is written and comes out at its free,
 * which then writes an rte.alloc.free. Lock-free (CAS on one word), in
 * memory mapped with MADV_WIPEONFORK.
 *
 * Thread-safety: every function is safe from any thread (atomics only);
 * rte_alloc_set_find() is async-signal-safe, and with take = 0 reads only
 * (what a vfork child may do).
 */
#include <sys/mman.h>

#include "forkvars.h"
#include "alloc/alloc.h"


struct rte_alloc_set *rte_alloc_g_set;
#define g_set rte_alloc_g_set
static RTE_BIGVAR uint32_t g_no_filter[1u << RTE_ALLOC_FILTER_BITS]; /* zeros */
uint32_t *rte_alloc_g_filter = g_no_filter;

static inline uint32_t *filter_of(uint64_t h)
{
	return rte_alloc_filter_of(g_set->filter, h);
}

static inline uint64_t *bucket_of(uint64_t h)
{
	return g_set->ways[h >> (64 - RTE_ALLOC_SET_BITS)];
}

/* Add addr (not in the set: it was just returned by the allocator).
 * Returns 0, or -1 if its bucket is full. Lock-free. */
static int set_add(uint64_t addr)
{
	uint64_t h = rte_alloc_addr_hash(addr), *b = bucket_of(h);

	for (unsigned i = 0; i < RTE_ALLOC_SET_WAYS; i++) {
		uint64_t zero = 0;

		/* Relaxed everywhere: an address is added by the thread that
		 * got it and removed by a free that the program orders after
		 * the allocation; the counters only need their values. */
		if (__atomic_load_n(&b[i], __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&b[i], &zero, addr, 0,
		                                __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED)) {
			__atomic_fetch_add(filter_of(h), 1, __ATOMIC_RELAXED);
			return 0;
		}
	}
	return -1;
}

/* 1 if addr is in the set, and with `take` removed from it (without,
 * read only: the look a vfork child may make before the system call that
 * tells it is one). Lock-free; reads one counter when addr was never
 * sampled. */
int rte_alloc_set_find(uint64_t addr, int take)
{
	uint64_t h, *b;

	if (!g_set)
		return 0;
	h = rte_alloc_addr_hash(addr);
	if (!__atomic_load_n(filter_of(h), __ATOMIC_RELAXED))
		return 0;
	b = bucket_of(h);
	for (unsigned i = 0; i < RTE_ALLOC_SET_WAYS; i++) {
		uint64_t a = addr;

		if (__atomic_load_n(&b[i], __ATOMIC_RELAXED) != addr)
			continue;
		if (!take)
			return 1;
		if (__atomic_compare_exchange_n(&b[i], &a, 0, 0,
		                                __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED)) {
			__atomic_fetch_sub(filter_of(h), 1, __ATOMIC_RELAXED);
			return 1;
		}
	}
	return 0;
}

/* Samples taken (this process and, not wiped, its parent before a fork).
 * On a cache line of its own: every thread's samples add to it, and a
 * line it shared could hold what every malloc reads (sample.c's
 * rte_alloc_bucket_of). */
static struct {
	uint64_t n; /* atomic */
	char pad[56];
} g_samples __attribute__((aligned(64)));
#define POPULATE_AFTER 64u
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Samples hit the set's pages at random: in a program that samples much,
 * each of its 513 pages costs a page fault on first touch. After
 * POPULATE_AFTER samples (32 MiB allocated at the default period) they
 * are all made present in one call instead; a program that samples
 * little keeps the set sparse. Where the kernel has no
 * MADV_POPULATE_WRITE, nothing happens. (errno: saved by the caller.) */
static void populate_set(void)
{
	(void)madvise(g_set, sizeof(*g_set), MADV_POPULATE_WRITE);
}

int rte_alloc_set_add(uint64_t addr)
{
	if (set_add(addr) < 0)
		return -1;
	if (__atomic_add_fetch(&g_samples.n, 1, __ATOMIC_RELAXED) == POPULATE_AFTER)
		populate_set();
	return 0;
}

int rte_alloc_set_map(void)
{
	void *p = mmap(NULL, sizeof(struct rte_alloc_set), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	if (madvise(p, sizeof(struct rte_alloc_set), MADV_WIPEONFORK)) {
		munmap(p, sizeof(struct rte_alloc_set));
		return -1;
	}
	/* Release: the mapping before its use (pairs with the acquire in
	 * sample.c's sample()). */
	__atomic_store_n(&g_set, (struct rte_alloc_set *)p, __ATOMIC_RELEASE);
	/* Relaxed would do (fresh zero pages): release as above. */
	__atomic_store_n(&rte_alloc_g_filter, g_set->filter, __ATOMIC_RELEASE);
	return 0;
}
