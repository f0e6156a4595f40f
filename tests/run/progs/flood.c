/*
 * flood.c - flood N (argv[1], default 10000) int events on one user event
 * from each of T threads (argv[2], default 1; the main thread is one of
 * them): overflows a small ring (a reader after the fact finds lost
 * words), or, with fewer rings than threads (RTE_RINGS), makes the shim
 * drop events. Linked with -lrte; run under rte-run. Exit 0, or 2 if an
 * API call or a thread failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte/rte.h>

#define MAX_THREADS 16

static long n_events;
static int id;

static void *flood(void *arg)
{
	for (long i = 0; i < n_events; i++)
		rte_int(id, i);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 1;

	n_events = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
	if (threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "flood: 1 to %d threads\n", MAX_THREADS);
		return 2;
	}
	id = rte_register("flood.n", RTE_TYPE_INT);
	if (id < 0) {
		fprintf(stderr, "flood: rte_register: %s\n", rte_strerror(id));
		return 2;
	}
	for (long k = 1; k < threads; k++)
		if (pthread_create(&t[k], NULL, flood, NULL) != 0) {
			fprintf(stderr, "flood: pthread_create failed\n");
			return 2;
		}
	flood(NULL);
	for (long k = 1; k < threads; k++)
		pthread_join(t[k], NULL);
	return 0;
}
