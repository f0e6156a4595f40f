/*
 * events.c - a small traced program for the file's footprint
 * (tests/shim/footprint.sh): writes N int events "e.value" = 0..N-1 from
 * its main thread, optionally with T threads writing N each too, then
 * prints "events done N" and exits 0. The same with and without the shim.
 * Every thread writes its first event before any writes its second (a
 * barrier): each holds a ring of its own, however the machine schedules
 * them, and none is reused. Usage: events N [T]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "weak.h"

static int g_id = -1;
static long g_n;
static pthread_barrier_t g_all;

static void *writer(void *p)
{
	for (long i = 0; i < g_n; i++) {
		weak_int(g_id, i);
		if (i == 0)
			pthread_barrier_wait(&g_all);
	}
	if (g_n == 0)
		pthread_barrier_wait(&g_all);
	return p;
}

int main(int argc, char **argv)
{
	long nt = argc > 2 ? atol(argv[2]) : 0;
	pthread_t th[64];

	if (argc < 2 || nt < 0 || nt > 64) {
		fprintf(stderr, "usage: events N [THREADS <= 64]\n");
		return 2;
	}
	g_n = atol(argv[1]);
	g_id = weak_register_int("e.value");
	if (pthread_barrier_init(&g_all, NULL, (unsigned)nt + 1) != 0)
		return 1;
	for (long i = 0; i < nt; i++)
		if (pthread_create(&th[i], NULL, writer, NULL) != 0)
			return 1;
	writer(NULL);
	for (long i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	printf("events done %ld\n", g_n);
	return 0;
}
