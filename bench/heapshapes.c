/*
 * heapshapes.c - malloc-heavy programs of several shapes for the
 * allocation profiler's bench rows (bench/alloc.py), beside mallocs.c's
 * working set:
 *
 *   heapshapes lifo N      one thread, N malloc/free pairs (16..1040 B),
 *                          each block freed at once (every one a
 *                          temporary)
 *   heapshapes realloc N   one thread, N/64 buffers each grown by 64
 *                          reallocs of +1 KiB from 1 KiB, then freed
 *   heapshapes threads N   16 threads, N pairs in all, a working set of
 *                          16 blocks each freed at random (16..1040 B)
 *
 * Prints "done". Exit status 2 on a bad argument.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xorshift.h"

#define THREADS 16
#define SLOTS 16

static long g_n;

static void lifo(long n)
{
	uint64_t s = 88172645463325252ull;

	for (long i = 0; i < n; i++) {
		char *p = malloc(16 + (size_t)(next(&s) % 1025));

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

static void grow(long n)
{
	for (long i = 0; i < n / 64; i++) {
		char *p = NULL;

		for (int k = 1; k <= 64; k++) {
			char *q = realloc(p, (size_t)k * 1024);

			if (!q) {
				free(p);
				return;
			}
			p = q;
			p[0] = (char)k;
		}
		free(p);
	}
}

static void *work(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)((long)arg + 1);
	void *slot[SLOTS] = {0};

	for (long i = 0; i < g_n / THREADS; i++) {
		uint64_t r = next(&s);
		unsigned j = (unsigned)(r & (SLOTS - 1));

		free(slot[j]);
		slot[j] = malloc(16 + (size_t)((r >> 32) % 1025));
	}
	for (int j = 0; j < SLOTS; j++)
		free(slot[j]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];

	if (argc != 3 || (g_n = atol(argv[2])) <= 0)
		return 2;
	if (!strcmp(argv[1], "lifo")) {
		lifo(g_n);
	} else if (!strcmp(argv[1], "realloc")) {
		grow(g_n);
	} else if (!strcmp(argv[1], "threads")) {
		for (long i = 0; i < THREADS; i++)
			if (pthread_create(&t[i], NULL, work, (void *)i))
				return 1;
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
	} else {
		return 2;
	}
	printf("done\n");
	return 0;
}
