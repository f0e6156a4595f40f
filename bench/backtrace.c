/*
 * backtrace.c - cost of one captured stack, with the shim's own capture
 * code (shim/backtrace.c, linked in directly): libunwind local unwinding,
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
 *   backtrace_signal            the CPU profiler's capture in a signal
 *                               handler (rte_bt_capture_signal: libunwind's
 *                               trace cache from the signal frame), timed
 *                               inside the handler of a raise() made at the
 *                               same depth
 *   backtrace_signal_fp         the same with the frame-pointer walk
 *                               (rte_bt_capture_signal_fp: one
 *                               process_vm_readv a frame); this file is
 *                               built with frame pointers (mk/tests-prof.mk)
 *   backtrace_signal_frames, backtrace_signal_fp_frames  their depths
 *
 * usage: backtrace [CAPTURES [ROUNDS<=64 [DEPTH]]]
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../shim/backtrace.h"

#define MAX_ROUNDS 64

static long n_captures = 100000;
static int rounds = 7;
static unsigned depth = 16;
static volatile uint64_t sink;
static int sig_fp;                 /* the handler's way of capturing */
static volatile double sig_ns;     /* time of the handler's captures */
static volatile unsigned sig_frames;

static void on_sig(int sig, siginfo_t *si, void *uc)
{
	uint64_t pcs[RTE_BT_MAX];
	struct timespec a, b;

	(void)sig;
	(void)si;
	clock_gettime(CLOCK_MONOTONIC, &a);
	sig_frames = sig_fp ? rte_bt_capture_signal_fp(uc, pcs, RTE_BT_MAX)
	                    : rte_bt_capture_signal(uc, pcs, RTE_BT_MAX, 1);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sig_ns += (double)(b.tv_sec - a.tv_sec) * 1e9 +
	          (double)(b.tv_nsec - a.tv_nsec);
	sink += pcs[0];
}

/* Recurse `d` frames, then raise SIGUSR1 n times; returns the mean ns of
 * the handler's capture. */
static __attribute__((noinline)) double dive_sig(unsigned d, long n)
{
	double r;

	if (d > 0) {
		r = dive_sig(d - 1, n);
		sink += d; /* not a tail call */
		return r;
	}
	sig_ns = 0;
	for (long i = 0; i < n; i++)
		raise(SIGUSR1);
	return sig_ns / (double)n;
}

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
	double frames[MAX_ROUNDS], sig[MAX_ROUNDS], sigfp[MAX_ROUNDS];
	double sigf[MAX_ROUNDS], sigfpf[MAX_ROUNDS];
	unsigned nf = 0;
	struct sigaction sa = {.sa_sigaction = on_sig, .sa_flags = SA_SIGINFO};

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
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	/* Interleaved rounds; the slower ways capture fewer stacks. */
	/* The signal captures first, libunwind's before the frame-pointer
	 * walk's: once the other ways have run in this process (even the
	 * walk, which uses no libunwind), libunwind's trace from a signal
	 * frame no longer finds the interrupted frame and every capture
	 * takes the slow walk (measured here: 0.2 us becomes 7 us). A
	 * profiled process only ever uses one way. */
	sig_fp = 0;
	for (int r = 0; r < rounds; r++) {
		sig[r] = dive_sig(depth, n_captures / 10 + 1);
		sigf[r] = sig_frames;
	}
	sig_fp = 1;
	for (int r = 0; r < rounds; r++) {
		sigfp[r] = dive_sig(depth, n_captures / 10 + 1);
		sigfpf[r] = sig_frames;
	}
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
	print_figure("backtrace_signal", sig, rounds);
	print_figure("backtrace_signal_fp", sigfp, rounds);
	print_figure("backtrace_signal_frames", sigf, rounds);
	print_figure("backtrace_signal_fp_frames", sigfpf, rounds);
	return 0;
}
