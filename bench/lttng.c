/*
 * lttng.c - cost of one LTTng-UST tracepoint carrying what an rte int event
 * carries, for bench/run.py, which enables it in a session of its own
 * before running this. Prints {"name":"lttng_int","ns":[...]}.
 * usage: lttng EVENTS ROUNDS
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lttng_tp.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;

	if (n < 1 || rounds < 1) {
		fprintf(stderr, "usage: %s EVENTS ROUNDS\n", argv[0]);
		return 1;
	}
	printf("{\"name\":\"lttng_int\",\"ns\":[");
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();

		for (long i = 0; i < n; i++)
			lttng_ust_tracepoint(rte_bench, int_event, 1, i);
		printf(r ? ",%.3f" : "%.3f", (now_ns() - t0) / (double)n);
	}
	printf("]}\n");
	return 0;
}
