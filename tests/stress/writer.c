/*
 * writer.c - the traced side of the stress test: T threads (argv[1]) each
 * write N (argv[2]) int events as fast as they can, thread t on its own
 * user event "stress.tTT" with value (t << 40) | seq, seq = 0 .. N-1. The
 * value says which thread wrote it and where it stands, so a reader can
 * tell a delivered event from a torn, duplicated or reordered one.
 *
 * The threads are created first (each claims its ring and writes its
 * domain_spawn when it starts), then wait until one byte (or EOF) arrives
 * on stdin, so the reader can attach before the flood. At the end one line
 * per thread on stdout: "thread <t> written <n>", then "comm <name>" (the
 * name the threads inherited, which the shim wrote as rte.thread.name).
 * Exit 0, or 2 on a usage or thread error.
 *
 * STRESS_YIELD=K in the environment: each thread yields the CPU after
 * every K events, so that the reader interleaves with the writers often
 * (many short lost spans instead of a few long ones).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "stress_weak.h"

#define MAX_THREADS 64

struct worker {
	pthread_t th;
	int t;
	int id;
	long written;
};

static long g_events;
static long g_yield;
static pthread_barrier_t g_go;

static void *work(void *arg)
{
	struct worker *w = arg;
	int64_t tag = (int64_t)w->t << 40;

	pthread_barrier_wait(&g_go);
	for (long k = 0; k < g_events; k++) {
		weak_int(w->id, tag | k);
		if (g_yield && k % g_yield == 0)
			sched_yield();
	}
	w->written = g_events;
	return NULL;
}

static int start(struct worker *ws, int n)
{
	char name[32];

	for (int t = 0; t < n; t++) {
		snprintf(name, sizeof name, "stress.t%02d", t);
		ws[t].t = t;
		ws[t].id = weak_register_int(name);
		if (RTE_LOADED() && ws[t].id < 0)
			return -1;
		if (pthread_create(&ws[t].th, NULL, work, &ws[t]) != 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct worker ws[MAX_THREADS];
	int n = argc > 2 ? atoi(argv[1]) : 0;
	char comm[17] = "", c;

	g_events = argc > 2 ? atol(argv[2]) : 0;
	g_yield = getenv("STRESS_YIELD") ? atol(getenv("STRESS_YIELD")) : 0;
	if (n < 1 || n > MAX_THREADS || g_events < 0 ||
	    g_events >= (1L << 40)) {
		fprintf(stderr, "usage: writer THREADS(1..%d) EVENTS\n",
		        MAX_THREADS);
		return 2;
	}
	if (pthread_barrier_init(&g_go, NULL, (unsigned)n + 1) != 0 ||
	    start(ws, n) < 0) {
		fprintf(stderr, "writer: cannot start the threads\n");
		return 2;
	}
	if (read(0, &c, 1) < 0)
		perror("writer: read");
	pthread_barrier_wait(&g_go);
	for (int t = 0; t < n; t++)
		pthread_join(ws[t].th, NULL);
	for (int t = 0; t < n; t++)
		printf("thread %d written %ld\n", t, ws[t].written);
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	printf("comm %s\n", comm);
	return 0;
}
