/*
 * mt.c - the peak across threads: 4 threads each allocate 1024 blocks of
 * 8 KiB, wait for each other (a barrier: the heap's peak, 4 x 8 MiB plus
 * the blocks' headers, is then live at once), then free them all. Prints
 * "peak N", N the usable bytes of those blocks (malloc_usable_size).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define BLOCKS 1024

static pthread_barrier_t g_bar;
static size_t g_usable[THREADS];

static void *work(void *arg)
{
	long me = (long)arg;
	void **b = malloc(BLOCKS * sizeof *b);

	for (int i = 0; i < BLOCKS; i++) {
		b[i] = malloc(8192);
		g_usable[me] += malloc_usable_size(b[i]);
	}
	pthread_barrier_wait(&g_bar);
	for (int i = 0; i < BLOCKS; i++)
		free(b[i]);
	free(b);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	size_t all = 0;

	pthread_barrier_init(&g_bar, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, (void *)i))
			return 1;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		all += g_usable[i];
	}
	printf("peak %zu\n", all);
	return 0;
}
