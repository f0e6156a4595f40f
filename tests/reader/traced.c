/*
 * traced.c - a real program for rte-read's --follow tests, run with
 * librte.so (linked -lrte, tracing started by OCAML_RUNTIME_EVENTS_START):
 *
 *   traced N US [fork]
 *
 * The main thread and two threads named "worker-1" and "worker-2" each
 * write user int "seq" = 0..N-1 (pausing US microseconds every 16 events)
 * inside a span "batch" every 100 events; with "fork", a child process
 * writes N more then exits. Exits 0 normally (ring_stop).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rte/rte.h"

static long n, us;
static int seq_id, batch_id;

static void write_seq(void)
{
	for (long i = 0; i < n; i++) {
		if (i % 100 == 0)
			rte_span_begin(batch_id);
		rte_int(seq_id, i);
		if (i % 100 == 99 || i == n - 1)
			rte_span_end(batch_id);
		if (us && i % 16 == 15)
			usleep((useconds_t)us);
	}
}

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), arg);
	write_seq();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	pid_t child = -1;
	int status = 0;

	if (argc < 3)
		return 2;
	n = atol(argv[1]);
	us = atol(argv[2]);
	seq_id = rte_register("seq", RTE_TYPE_INT);
	batch_id = rte_register("batch", RTE_TYPE_SPAN);
	if (seq_id < 0 || batch_id < 0)
		return 3;
	if (argc > 3 && !strcmp(argv[3], "fork")) {
		child = fork();
		if (child == 0) {
			write_seq();
			exit(0);
		}
	}
	pthread_create(&t[0], NULL, worker, "worker-1");
	pthread_create(&t[1], NULL, worker, "worker-2");
	write_seq();
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	if (child > 0)
		waitpid(child, &status, 0);
	return status == 0 ? 0 : 4;
}
