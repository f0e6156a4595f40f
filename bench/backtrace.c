/*
 * backtrace.c - cost of one captured stack, with the shim's own capture
 * code (shim/crash/backtrace.c, linked in directly): libunwind local unwinding,
 * with its per-thread cache (what librte.so uses) and without it.
 *
 * Each capture walks the same stack: the benchmark recurses DEPTH frames
 * (default 16) before capturing, as a crash or RTE_BACKTRACE=thread would
 * in a real program. Figures, per captured stack, in the JSON-lines form
 * of bench/producer.c:
 *   backtrace_capture           what the shim does: unw_backtrace with
 *                               libunwind's trace cache, DWARF cache on
 *   backtrace_capture_step      frame by frame with unw_step, its
 *                               per-thread DWARF cache on (the fallback)
 *   backtrace_capture_uncached  unw_step with UNW_CACHE_NONE
 *   backtrace_frames            frames per stack (a count, not a time, so
 *                               that the depth is on record)
 *
 * usage: backtrace [CAPTURES [ROUNDS<=64 [DEPTH]]]
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../shim/crash/backtrace.h"

#define MAX_ROUNDS 64

static long n_captures = 100000;
static int rounds = 7;
static unsigned depth = 16;
static volatile uint64_t sink;

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Recurse `d` frames, then capture n stacks; returns ns per capture. */
static __attribute__((noinline)) double dive(unsigned d, long n,
                                             unsigned *frames)
{
	uint64_t pcs[RTE_BT_MAX];
	double t0, r;

	if (d > 0) {
		r = dive(d - 1, n, frames);
		sink += d; /* not a tail call */
		return r;
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		*frames = rte_bt_capture_here(pcs, RTE_BT_MAX, 0);
	r = (now_ns() - t0) / (double)n;
	sink += pcs[0];
	return r;
}

static void print_figure(const char *name, const double *v, int n)
{
	printf("{\"name\":\"%s\",\"ns\":[", name);
	for (int r = 0; r < n; r++)
		printf(r ? ",%.3f" : "%.3f", v[r]);
	printf("]}\n");
}

int main(int argc, char **argv)
{
	double cached[MAX_ROUNDS], step[MAX_ROUNDS], uncached[MAX_ROUNDS];
	double frames[MAX_ROUNDS];
	unsigned nf = 0;

	if (argc > 1)
		n_captures = atol(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (argc > 3)
		depth = (unsigned)atoi(argv[3]);
	if (n_captures <= 0 || rounds <= 0 || rounds > MAX_ROUNDS ||
	    depth > 10000) {
		fprintf(stderr, "usage: %s [CAPTURES [ROUNDS<=64 [DEPTH]]]\n",
		        argv[0]);
		return 2;
	}
	if (rte_bt_init(1, dlopen, dlclose) < 0) {
		fprintf(stderr, "libunwind.so.8 cannot be loaded\n");
		return 1;
	}
	/* Interleaved rounds; the slower ways capture fewer stacks. */
	for (int r = 0; r < rounds; r++) {
		rte_bt_set_fast(1);
		rte_bt_set_cached(1);
		cached[r] = dive(depth, n_captures, &nf);
		frames[r] = nf;
		rte_bt_set_fast(0);
		step[r] = dive(depth, n_captures / 10 + 1, &nf);
		rte_bt_set_cached(0);
		uncached[r] = dive(depth, n_captures / 50 + 1, &nf);
	}
	print_figure("backtrace_capture", cached, rounds);
	print_figure("backtrace_capture_step", step, rounds);
	print_figure("backtrace_capture_uncached", uncached, rounds);
	print_figure("backtrace_frames", frames, rounds);
	return 0;
}
