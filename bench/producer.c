/*
 * producer.c - cost of writing events through the public API of librte.so,
 * measured side by side with its baselines in one process.
 *
 * Each figure is measured in `rounds` rounds, interleaved with the others,
 * and printed as one JSON object per line:
 *   {"name":"int","ns":[r1,r2,...]}
 * bench/run.py takes the medians and the ratios. Tracing is started with
 * rte_start() (OCAML_RUNTIME_EVENTS_DIR chooses where), with the default
 * ring size unless OCAMLRUNPARAM says otherwise.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rte/rte.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define MAX_ROUNDS 64

static long n_events = 2000000;
static int rounds = 7;
static int ev_int, ev_span, ev_custom;
static volatile uint64_t sink;

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Each body writes `n` events (a begin/end pair counts as two). */
static void body_empty(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("" ::: "memory");
}

static void body_int(long n)
{
	for (long i = 0; i < n; i++)
		rte_int(ev_int, i);
}

static void body_span(long n)
{
	for (long i = 0; i < n; i += 2) {
		rte_span_begin(ev_span);
		rte_span_end(ev_span);
	}
}

static void body_runtime(long n)
{
	for (long i = 0; i < n; i += 2) {
		rte_runtime_begin(RTE_P_MINOR);
		rte_runtime_end(RTE_P_MINOR);
	}
}

static void body_custom64(long n)
{
	char msg[64];

	memset(msg, 'x', sizeof msg);
	for (long i = 0; i < n; i++) {
		msg[0] = (char)i;
		rte_custom(ev_custom, msg, sizeof msg);
	}
}

static void body_clock(long n)
{
	struct timespec t;
	uint64_t s = 0;

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		s += (uint64_t)t.tv_nsec;
	}
	sink = s;
}

/* The TSC read alone: the floor of any event that carries a timestamp
 * (0 where there is no TSC). */
static void body_rdtsc(long n)
{
#if defined(__x86_64__)
	uint64_t s = 0;

	for (long i = 0; i < n; i++)
		s += __rdtsc();
	sink = s;
#else
	(void)n;
#endif
}

/* The same three words an int event stores, into a ring of the default
 * size, without a timestamp or any bookkeeping. */
static void body_store(long n)
{
	static uint64_t ring[1 << 16];
	uint64_t hdr = rte_hdr_make(3, 1, RTE_UMSG_INT, 1);
	uint64_t pos = 0;

	for (long i = 0; i < n; i++) {
		uint64_t *p = &ring[pos & ((1 << 16) - 1)];

		__atomic_store_n(p, hdr, __ATOMIC_RELAXED);
		__atomic_store_n(p + 1, (uint64_t)i, __ATOMIC_RELAXED);
		__atomic_store_n(p + 2, (uint64_t)i, __ATOMIC_RELAXED);
		pos += 3;
		if ((pos & ((1 << 16) - 1)) > (1 << 16) - 3)
			pos = (pos | ((1 << 16) - 1)) + 1;
		__atomic_store_n(&ring[0], pos, __ATOMIC_RELEASE);
	}
}

static double time_body(void (*body)(long), long n)
{
	double t0 = now_ns();

	body(n);
	return (now_ns() - t0) / (double)n;
}

struct figure {
	const char *name;
	void (*body)(long);
	double ns[MAX_ROUNDS];
};

static void print_figure(const struct figure *f)
{
	printf("{\"name\":\"%s\",\"ns\":[", f->name);
	for (int r = 0; r < rounds; r++)
		printf(r ? ",%.3f" : "%.3f", f->ns[r]);
	printf("]}\n");
	fflush(stdout);
}

/* Run every figure once per round, in turn, so drift affects all alike. */
static void run_interleaved(struct figure *figs, int nfig)
{
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < nfig; i++)
			figs[i].ns[r] = time_body(figs[i].body, n_events);
	for (int i = 0; i < nfig; i++)
		print_figure(&figs[i]);
}

static void *thread_int(void *arg)
{
	(void)arg;
	body_int(n_events);
	return NULL;
}

/* Wall time per event of `nthreads` threads writing int events at once. */
static double time_threads(int nthreads)
{
	pthread_t t[8];
	double t0 = now_ns();

	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, thread_int, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return (now_ns() - t0) / ((double)n_events * nthreads);
}

static void run_threads(void)
{
	struct figure one = { "int_1thread_wall", NULL, { 0 } };
	struct figure two = { "int_2threads_wall", NULL, { 0 } };

	for (int r = 0; r < rounds; r++) {
		one.ns[r] = time_threads(1);
		two.ns[r] = time_threads(2);
	}
	print_figure(&one);
	print_figure(&two);
}

int main(int argc, char **argv)
{
	struct figure idle[] = {
		{ "empty_loop", body_empty, { 0 } },
		{ "int_not_started", body_int, { 0 } },
	};
	struct figure paused[] = {
		{ "empty_loop_2", body_empty, { 0 } },
		{ "int_paused", body_int, { 0 } },
	};
	struct figure active[] = {
		{ "clock_gettime", body_clock, { 0 } },
		{ "rdtsc", body_rdtsc, { 0 } },
		{ "store_only", body_store, { 0 } },
		{ "int", body_int, { 0 } },
		{ "begin_end", body_span, { 0 } },
		{ "runtime_begin_end", body_runtime, { 0 } },
		{ "custom64", body_custom64, { 0 } },
	};

	if (argc > 1)
		n_events = atol(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (n_events < 2 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: %s [EVENTS [ROUNDS<=64]]\n", argv[0]);
		return 1;
	}
	ev_int = rte_register("bench.int", RTE_TYPE_INT);
	ev_span = rte_register("bench.span", RTE_TYPE_SPAN);
	ev_custom = rte_register("bench.custom", RTE_TYPE_CUSTOM);
	if (ev_int < 0 || ev_span < 0 || ev_custom < 0) {
		fprintf(stderr, "register: %s\n", rte_strerror(ev_int));
		return 1;
	}
	run_interleaved(idle, 2);
	if (rte_start() != RTE_OK) {
		fprintf(stderr, "rte_start failed\n");
		return 1;
	}
	rte_pause();
	run_interleaved(paused, 2);
	rte_resume();
	run_interleaved(active, (int)(sizeof active / sizeof active[0]));
	run_threads();
	return 0;
}
