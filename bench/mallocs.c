/*
 * mallocs.c - the allocation profiler's benchmark program (bench/run.py):
 * THREADS threads, PAIRS malloc/free pairs in all (split evenly), sizes
 * uniformly random from 16 to 1040 bytes, a working set of 64 blocks per
 * thread (each step frees a random slot and refills it).
 *
 * The blocks come from eight allocation sites (site0 .. site7, never
 * inlined), picked with weights 16:12:9:7:5:3:2:1, so that the sites
 * ranked by bytes have clear gaps: the fidelity rows compare rte's ranking
 * (from samples) with heaptrack's. Prints "bytes N" (the exact total asked
 * for) and "site K N" (bytes per site) at the end.
 *
 * usage: mallocs [PAIRS]   (default 10000000)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xorshift.h"

#define THREADS 2
#define SLOTS 64

typedef void *(*site_fn)(size_t);

#define SITE(k)                                                               \
	__attribute__((noinline)) static void *site##k(size_t n)              \
	{                                                                     \
		void *p = malloc(n);                                          \
		__asm__ volatile("" : : "r"(p) : "memory");                   \
		return p;                                                     \
	}
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)

static const site_fn sites[8] = {site0, site1, site2, site3,
                                 site4, site5, site6, site7};
static const unsigned weights[8] = {16, 12, 9, 7, 5, 3, 2, 1}; /* sum 55 */

static long pairs_per_thread;
static uint64_t site_bytes[THREADS][8];

static unsigned pick(uint64_t r)
{
	unsigned w = (unsigned)(r % 55), k = 0;

	while (w >= weights[k])
		w -= weights[k++];
	return k;
}

static void *work(void *arg)
{
	long me = (long)arg;
	uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);
	void *slot[SLOTS] = {0};

	for (long i = 0; i < pairs_per_thread; i++) {
		uint64_t r = next(&s);
		unsigned j = (unsigned)(r & (SLOTS - 1)), k = pick(r >> 8);
		size_t n = 16 + (size_t)((r >> 32) % 1025);

		free(slot[j]);
		slot[j] = sites[k](n);
		site_bytes[me][k] += n;
	}
	for (int j = 0; j < SLOTS; j++)
		free(slot[j]);
	return NULL;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 10000000;
	pthread_t th[THREADS];
	uint64_t total = 0;

	pairs_per_thread = pairs / THREADS;
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, work, (void *)i))
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (int k = 0; k < 8; k++) {
		uint64_t b = 0;

		for (int i = 0; i < THREADS; i++)
			b += site_bytes[i][k];
		total += b;
		printf("site %d %llu\n", k, (unsigned long long)b);
	}
	printf("bytes %llu\n", (unsigned long long)total);
	return 0;
}
