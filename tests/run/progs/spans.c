/*
 * spans.c - write N (argv[1]) span pairs (rte_span_begin/rte_span_end of
 * one user event, "spans.s") from each of T threads (argv[2], default 1;
 * the main thread is one of them), as fast as they can, or at RATE
 * (argv[3]) events a second per thread: the load of rte-run's drain
 * tests and of its bench rows. Linked with -lrte; run under rte-run.
 * Prints nothing; exit 0, or 2 if an API call or a thread failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rte/rte.h>

#define MAX_THREADS 16
#define BATCH 256 /* span pairs between two looks at the clock */

static long n_pairs;
static double rate; /* events a second per thread; 0: no limit */
static int id;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *spans(void *arg)
{
	double t0 = now_s();

	for (long i = 0; i < n_pairs; i++) {
		rte_span_begin(id);
		rte_span_end(id);
		/* Paced: wait until the events written so far are due. */
		if (rate > 0 && i % BATCH == BATCH - 1)
			while (now_s() - t0 < (double)(2 * (i + 1)) / rate)
				;
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 1;

	n_pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
	rate = argc > 3 ? strtod(argv[3], NULL) : 0;
	if (threads < 1 || threads > MAX_THREADS || n_pairs < 0) {
		fprintf(stderr, "spans: N >= 0 and 1 to %d threads\n", MAX_THREADS);
		return 2;
	}
	id = rte_register("spans.s", RTE_TYPE_SPAN);
	if (id < 0) {
		fprintf(stderr, "spans: rte_register: %s\n", rte_strerror(id));
		return 2;
	}
	for (long k = 1; k < threads; k++)
		if (pthread_create(&t[k], NULL, spans, NULL) != 0) {
			fprintf(stderr, "spans: pthread_create failed\n");
			return 2;
		}
	spans(NULL);
	for (long k = 1; k < threads; k++)
		pthread_join(t[k], NULL);
	return 0;
}
