/*
 * prom_writer.c - a live traced process for the exporter benchmark
 * (bench/prom.py): `prom_writer NAMES RATE SECS` registers NAMES span
 * names and, for SECS seconds, writes RATE events a second (span begin/end
 * pairs over the names, in 100 bursts a second), then exits 0. Linked
 * with librte.so; tracing starts with OCAML_RUNTIME_EVENTS_START=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rte/rte.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int ids[256], names;
	long rate, per_tick, k = 0;
	double secs, t0;
	struct timespec tick = { 0, 10000000 };

	if (argc != 4)
		return 2;
	names = atoi(argv[1]);
	rate = atol(argv[2]);
	secs = atof(argv[3]);
	if (names < 1 || names > 256 || rate < 0)
		return 2;
	for (int i = 0; i < names; i++) {
		char n[32];

		snprintf(n, sizeof n, "name-%03d", i);
		if ((ids[i] = rte_register(n, RTE_TYPE_SPAN)) < 0)
			return 3;
	}
	per_tick = rate / 200; /* pairs per 10 ms */
	t0 = now();
	while (now() - t0 < secs) {
		for (long i = 0; i < per_tick; i++, k++) {
			rte_span_begin(ids[k % names]);
			rte_span_end(ids[k % names]);
		}
		nanosleep(&tick, NULL);
	}
	return 0;
}
