/*
 * spans.c - write N (argv[1]) span pairs (rte_span_begin/rte_span_end of
 * one user event, "spans.s") from each of T threads (argv[2], default 1;
 * the main thread is one of them), as fast as they can, or at RATE
 * (argv[3]) events a second per thread (0: no limit), with WORK
 * (argv[4]) rounds of a dummy loop after each pair: the load of
 * rte-run's drain tests and of its bench rows (bench/drain.py). Linked
 * with -lrte; run under rte-run. Prints nothing, or with WORK the
 * seconds from the first pair to the last thread's end and the CPU
 * seconds the process used; exit 0, or 2 if an API call or a thread
 * failed. With SPANS_HOLD=PATH in the environment it does not exit
 * before PATH exists: a test can catch the live process and its ring
 * file however loaded the machine is.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <time.h>

#include <rte/rte.h>

#define MAX_THREADS 16
#define BATCH 256 /* span pairs between two looks at the clock */

static long n_pairs;
static double rate; /* events a second per thread; 0: no limit */
static long work;   /* dummy loop rounds after each pair */
static volatile unsigned long sink;
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
		for (long k = 0; k < work; k++)
			sink = sink + (unsigned long)k;
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
	double t0;

	n_pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
	rate = argc > 3 ? strtod(argv[3], NULL) : 0;
	work = argc > 4 ? strtol(argv[4], NULL, 10) : -1;
	if (threads < 1 || threads > MAX_THREADS || n_pairs < 0) {
		fprintf(stderr, "spans: N >= 0 and 1 to %d threads\n", MAX_THREADS);
		return 2;
	}
	id = rte_register("spans.s", RTE_TYPE_SPAN);
	if (id < 0) {
		fprintf(stderr, "spans: rte_register: %s\n", rte_strerror(id));
		return 2;
	}
	t0 = now_s();
	for (long k = 1; k < threads; k++)
		if (pthread_create(&t[k], NULL, spans, NULL) != 0) {
			fprintf(stderr, "spans: pthread_create failed\n");
			return 2;
		}
	spans(NULL);
	for (long k = 1; k < threads; k++)
		pthread_join(t[k], NULL);
	if (work >= 0) {
		struct rusage ru;
		double wall = now_s() - t0;

		getrusage(RUSAGE_SELF, &ru);
		printf("%.6f %.6f\n", wall,
		       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6);
	}
	if (getenv("SPANS_HOLD"))
		while (access(getenv("SPANS_HOLD"), F_OK) != 0)
			usleep(1000);
	return 0;
}
