/*
 * outprog.c - a real program for the tests of rte-read's output formats
 * (tests/reader/out.sh), run under librte.so (linked -lrte, tracing
 * started by OCAML_RUNTIME_EVENTS_START):
 *
 *   outprog interleave N  N times: span app.A begins, app.B begins, app.A
 *                         ends, app.B ends (fibers); then a thread begins
 *                         app.open and ends; a thread begins app.hang,
 *                         writes int app.after 3 times and blocks until
 *                         the process exits; the main thread begins
 *                         app.tail and exits 20 ms later (never ended)
 *   outprog last          a thread (ring 1) writes int app.v = 111 and
 *                         counter major_heap_pool_words = 7, and ends;
 *                         then the main thread (ring 0) writes app.v =
 *                         222 and the counter 9: the latest in time are on
 *                         ring 0
 *   outprog spans N       N spans app.s (a ring with e=8 wraps)
 *   outprog renames [NAME ARG...]  a thread writes app.v = 1, names
 *                         itself "first", then NAME (default "second";
 *                         no event between), and writes app.v = 2; the
 *                         ARGs only make the argv rte-read shows
 *
 * Exits 0 (ring_stop), 2 on bad usage.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rte/rte.h"

static int id_open, id_hang, id_after, id_v;

static void *opener(void *arg)
{
	(void)arg;
	rte_span_begin(id_open);
	return NULL;
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_ready;

static void *hanger(void *arg)
{
	(void)arg;
	rte_span_begin(id_hang);
	for (int i = 0; i < 3; i++)
		rte_int(id_after, i);
	pthread_mutex_lock(&g_lock);
	g_ready = 1;
	pthread_cond_broadcast(&g_cond);
	for (;;) /* until the process exits; g_ready never changes again */
		pthread_cond_wait(&g_cond, &g_lock);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	rte_int(id_v, 111);
	rte_runtime_counter(RTE_C_MAJOR_HEAP_POOL_WORDS, 7);
	return NULL;
}

static void *renamer(void *arg)
{
	rte_int(id_v, 1);
	pthread_setname_np(pthread_self(), "first");
	pthread_setname_np(pthread_self(), arg);
	rte_int(id_v, 2);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec t = { 0, ms * 1000000L };

	while (nanosleep(&t, &t) != 0)
		;
}

static int interleave(long n)
{
	int a = rte_register("app.A", RTE_TYPE_SPAN);
	int b = rte_register("app.B", RTE_TYPE_SPAN);
	int tail = rte_register("app.tail", RTE_TYPE_SPAN);
	pthread_t t;

	id_open = rte_register("app.open", RTE_TYPE_SPAN);
	id_hang = rte_register("app.hang", RTE_TYPE_SPAN);
	id_after = rte_register("app.after", RTE_TYPE_INT);
	for (long i = 0; i < n; i++) {
		rte_span_begin(a);
		rte_span_begin(b);
		rte_span_end(a);
		rte_span_end(b);
	}
	if (pthread_create(&t, NULL, opener, NULL) || pthread_join(t, NULL))
		return 3;
	if (pthread_create(&t, NULL, hanger, NULL))
		return 3;
	pthread_mutex_lock(&g_lock);
	while (!g_ready)
		pthread_cond_wait(&g_cond, &g_lock);
	pthread_mutex_unlock(&g_lock);
	rte_span_begin(tail);
	sleep_ms(20);
	return 0; /* exit: app.hang's thread still blocked */
}

static int last(void)
{
	pthread_t t;

	id_v = rte_register("app.v", RTE_TYPE_INT);
	if (pthread_create(&t, NULL, writer, NULL) || pthread_join(t, NULL))
		return 3;
	sleep_ms(2);
	rte_int(id_v, 222);
	rte_runtime_counter(RTE_C_MAJOR_HEAP_POOL_WORDS, 9);
	return 0;
}

static int renames(const char *name)
{
	pthread_t t;

	id_v = rte_register("app.v", RTE_TYPE_INT);
	if (pthread_create(&t, NULL, renamer, (void *)name) || pthread_join(t, NULL))
		return 3;
	return 0;
}

static int spans(long n)
{
	int s = rte_register("app.s", RTE_TYPE_SPAN);

	for (long i = 0; i < n; i++) {
		rte_span_begin(s);
		rte_span_end(s);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "interleave"))
		return interleave(atol(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "last"))
		return last();
	if (argc >= 2 && !strcmp(argv[1], "renames"))
		return renames(argc > 2 ? argv[2] : "second");
	if (argc == 3 && !strcmp(argv[1], "spans"))
		return spans(atol(argv[2]));
	return 2;
}
