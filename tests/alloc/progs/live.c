/*
 * live.c - a known heap at exit, for the live-bytes tests of
 * tests/alloc/run.sh (t_live: against heaptrack; t_live_estimate: the
 * sampled leak estimate bounded by the counts).
 *
 * It churns (malloc, calloc, realloc chains, all freed, every block of
 * 800 bytes or more), keeps KEEP blocks of 1000 to 8000 bytes (some grown
 * by realloc, half of them freed again), has a thread keep 50 blocks of
 * 4096 bytes, and keeps one block of each of RARE small sizes, each from
 * its own function (rare_N: one call site, one stack, one size class
 * with a single call of ours). Prints "kept N": the bytes asked for by the
 * blocks still allocated at exit (its own; libc keeps a few of its own).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEP 400
#define THREAD_KEEP 50

static void *kept[KEEP], *tkept[THREAD_KEEP], *rare[32];
static size_t kept_bytes;

#define RARE(n)                                                               \
	static void *rare_##n(void)                                           \
	{                                                                     \
		void *p = malloc(n);                                          \
		if (p)                                                        \
			memset(p, 1, n);                                      \
		return p;                                                     \
	}
RARE(8) RARE(16) RARE(24) RARE(32) RARE(40) RARE(48) RARE(56) RARE(64)
RARE(72) RARE(100) RARE(180) RARE(260) RARE(340) RARE(420) RARE(500)
RARE(580) RARE(660) RARE(740)

static void *(*const rares[])(void) = {
	rare_8, rare_16, rare_24, rare_32, rare_40, rare_48, rare_56, rare_64,
	rare_72, rare_100, rare_180, rare_260, rare_340, rare_420, rare_500,
	rare_580, rare_660, rare_740,
};
static const size_t rare_size[] = { 8, 16, 24, 32, 40, 48, 56, 64, 72, 100,
                                    180, 260, 340, 420, 500, 580, 660, 740 };

static void churn(void)
{
	for (int i = 0; i < 20000; i++) {
		void *p = malloc((size_t)(800 + i % 3000));
		void *q = calloc(1, (size_t)(1000 + i % 500));

		free(p);
		free(q);
	}
	for (int i = 0; i < 200; i++) {
		void *p = NULL, *q;

		for (int k = 0; k < 20; k++) {
			if (!(q = realloc(p, (size_t)(1000 + 100 * k))))
				break;
			p = q;
		}
		free(p);
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < THREAD_KEEP; i++)
		if ((tkept[i] = malloc(4096)))
			memset(tkept[i], 2, 4096);
	churn();
	return NULL;
}

int main(void)
{
	pthread_t t;
	size_t sizes[KEEP];

	churn();
	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		return 1;
	for (int i = 0; i < KEEP; i++) {
		sizes[i] = 1000 + (size_t)(i * 37) % 7000;
		if (!(kept[i] = malloc(sizes[i])))
			return 1;
		memset(kept[i], 3, sizes[i]);
	}
	for (int i = 0; i < KEEP; i += 4) { /* grown: a free and an allocation */
		void *q = realloc(kept[i], sizes[i] + 500);

		if (!q)
			return 1;
		kept[i] = q;
		sizes[i] += 500;
	}
	for (int i = 1; i < KEEP; i += 2) {
		free(kept[i]);
		kept[i] = NULL;
		sizes[i] = 0;
	}
	pthread_join(t, NULL);
	for (size_t i = 0; i < sizeof rares / sizeof rares[0]; i++)
		if (!(rare[i] = rares[i]()))
			return 1;
	for (int i = 0; i < KEEP; i++)
		kept_bytes += sizes[i];
	kept_bytes += (size_t)THREAD_KEEP * 4096;
	for (size_t i = 0; i < sizeof rare_size / sizeof rare_size[0]; i++)
		kept_bytes += rare_size[i];
	printf("kept %zu\n", kept_bytes);
	return 0;
}
