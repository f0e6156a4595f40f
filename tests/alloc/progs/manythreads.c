/*
 * manythreads.c - THREADS threads one after another (more than the shim's
 * pool of per-thread states, 65536), each allocating and freeing once,
 * then one last thread that allocates LAST blocks of 48 bytes (bucket 6).
 * Every thread's state must go back to the pool at its end, whatever it
 * allocates or frees during its exit: otherwise the last thread finds
 * none, and its counts are lost.
 */
#include <pthread.h>
#include <stdlib.h>

#define THREADS 70000
#define LAST 1000

static void *one(void *arg)
{
	free(malloc(100));
	return arg;
}

static void *last(void *arg)
{
	for (int i = 0; i < LAST; i++)
		free(malloc(48));
	return arg;
}

int main(void)
{
	pthread_t t;

	for (int i = 0; i < THREADS; i++) {
		if (pthread_create(&t, NULL, one, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	if (pthread_create(&t, NULL, last, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
