/*
 * profprog.c - a real program for the tests of rte-read's profiles
 * (tests/reader/profile.sh), run under librte.so (linked -lrte, tracing
 * started by OCAML_RUNTIME_EVENTS_START, so the shim writes its
 * rte.module events). Until the shim's profilers exist, it writes the
 * profilers' records itself (rte/profile.h), with stacks of real return
 * addresses taken by backtrace() in its own functions, in known
 * proportions:
 *
 *   CPU (100 samples of 10 ms, 100 Hz):
 *     main thread: work;mid;leaf_a   60  inside span app.hot (the first
 *                                        20 also inside app.inner)
 *                  work;mid;leaf_b   10  outside any span
 *     thread 2:    work_b;leaf_b     30
 *   allocations (period 1024 bytes):
 *     work_alloc;alloc_big    10 samples of 4096 bytes, 5 freed
 *     work_alloc;alloc_small  20 samples of 64 bytes, all freed
 *   ints: calls 10 + 20 (the reader counts calls from the `alloc` events'
 *   buckets: 33), bytes 42240, frees 25, freed 21760; two `alloc`
 *   events: bucket 19 (100+ words) 10, bucket 8 20, then bucket 1 3.
 *   `profprog hostile` adds malformed records: 3 rte.sample (version 99,
 *   64 frames in a 2-frame payload, 10 bytes), 1 rte.alloc.sample (40
 *   frames in a 1-frame payload), 1 rte.alloc.free (version 7).
 *   `profprog garbage` adds 450 records of random bytes and lengths.
 *
 * The public API reserves rte.* names (rte_register refuses them), so the
 * events are registered as rtx.* and tests/reader/profile.sh renames
 * those name slots of the finished file to rte.*, same length.
 *
 * Exits 0, 2 on bad usage, 3 if a thread cannot be made.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rte/profile.h"
#include "rte/rte.h"

#define PERIOD 1024u
#define NOINLINE __attribute__((noinline, noipa))
#define NO_TAIL() __asm__ volatile("" ::: "memory")

/* Not static: their names are in the symbol table for the symboliser. */
void prof_leaf_a(void);
void prof_leaf_b(void);
void prof_mid(int which);
void prof_work(void);
void prof_work_b(void);
void *prof_alloc_big(void);
void prof_alloc_small(void);
void prof_work_alloc(void);

static int id_sample, id_asample, id_free, id_calls, id_bytes, id_frees,
	id_freed, id_hot, id_inner;

NOINLINE static void write_sample(void *const *pcs, int n)
{
	uint8_t b[sizeof(struct rte_sample_rec) + 8 * RTE_PROFILE_MAX_FRAMES];
	struct rte_sample_rec r;

	memset(&r, 0, sizeof r);
	r.version = RTE_SAMPLE_VERSION;
	r.nframes = (uint16_t)n;
	r.cpu_ns = 10000000;
	r.tid = (int32_t)gettid();
	r.hz = 100;
	memcpy(b, &r, sizeof r);
	for (int i = 0; i < n; i++) {
		uint64_t pc = (uint64_t)(uintptr_t)pcs[i];

		memcpy(b + sizeof r + 8 * (size_t)i, &pc, 8);
	}
	rte_custom(id_sample, b, sizeof r + 8 * (size_t)n);
}

NOINLINE static void write_alloc(void *const *pcs, int n, size_t size,
                                 void *addr)
{
	uint8_t b[sizeof(struct rte_alloc_sample_rec) + 8 * RTE_PROFILE_MAX_FRAMES];
	struct rte_alloc_sample_rec r;

	memset(&r, 0, sizeof r);
	r.version = RTE_ALLOC_SAMPLE_VERSION;
	r.nframes = (uint16_t)n;
	r.fn = RTE_ALLOC_MALLOC;
	r.size = size;
	r.addr = (uint64_t)(uintptr_t)addr;
	r.period = PERIOD;
	memcpy(b, &r, sizeof r);
	for (int i = 0; i < n; i++) {
		uint64_t pc = (uint64_t)(uintptr_t)pcs[i];

		memcpy(b + sizeof r + 8 * (size_t)i, &pc, 8);
	}
	rte_custom(id_asample, b, sizeof r + 8 * (size_t)n);
}

static void write_free(uintptr_t addr, unsigned version)
{
	struct rte_alloc_free_rec r;

	memset(&r, 0, sizeof r);
	r.version = (uint16_t)version;
	r.addr = (uint64_t)addr;
	rte_custom(id_free, &r, sizeof r);
}

/* Drop the frames above function fn (a sanitizer's interceptor of
 * backtrace): returns the frames left, fn's first. */
static int from_fn(void **pcs, int n, void (*fn)(void))
{
	void *want = (void *)(uintptr_t)fn;
	Dl_info d;
	int i = 0;

	while (i < n && !(dladdr(pcs[i], &d) && d.dli_saddr == want))
		i++;
	if (i == n)
		return n; /* not found (no symbol): keep them all */
	memmove(pcs, pcs + i, (size_t)(n - i) * sizeof *pcs);
	return n - i;
}

/* The stack of the function fn it is written in, fn first. */
#define STACK(pcs, n, fn) \
	void *pcs[RTE_PROFILE_MAX_FRAMES]; \
	int n = from_fn(pcs, backtrace(pcs, (int)RTE_PROFILE_MAX_FRAMES), \
	                (void (*)(void))(fn))

NOINLINE void prof_leaf_a(void)
{
	STACK(pcs, n, prof_leaf_a);
	write_sample(pcs, n);
	NO_TAIL();
}

NOINLINE void prof_leaf_b(void)
{
	STACK(pcs, n, prof_leaf_b);
	write_sample(pcs, n);
	NO_TAIL();
}

NOINLINE void prof_mid(int which)
{
	if (which == 1)
		prof_leaf_a();
	else
		prof_leaf_b();
	NO_TAIL();
}

NOINLINE void prof_work(void)
{
	rte_span_begin(id_hot);
	rte_span_begin(id_inner);
	for (int i = 0; i < 20; i++)
		prof_mid(1);
	rte_span_end(id_inner);
	for (int i = 0; i < 40; i++)
		prof_mid(1);
	rte_span_end(id_hot);
	for (int i = 0; i < 10; i++)
		prof_mid(2);
	NO_TAIL();
}

NOINLINE void prof_work_b(void)
{
	for (int i = 0; i < 30; i++)
		prof_leaf_b();
	NO_TAIL();
}

static void *thread_main(void *arg)
{
	(void)arg;
	prof_work_b();
	return NULL;
}

NOINLINE void *prof_alloc_big(void)
{
	void *p = malloc(4096);
	STACK(pcs, n, prof_alloc_big);

	write_alloc(pcs, n, 4096, p);
	NO_TAIL();
	return p;
}

NOINLINE void prof_alloc_small(void)
{
	void *p = malloc(64);
	STACK(pcs, n, prof_alloc_small);

	write_alloc(pcs, n, 64, p);
	uintptr_t a = (uintptr_t)p;

	free(p);
	write_free(a, RTE_ALLOC_FREE_VERSION);
	NO_TAIL();
}

static void *g_keep[10];

NOINLINE void prof_work_alloc(void)
{
	uint64_t b[RTE_ALLOC_BUCKETS];

	for (int i = 0; i < 10; i++)
		g_keep[i] = prof_alloc_big();
	for (int i = 0; i < 5; i++) { /* the other 5 stay live: leaks */
		uintptr_t a = (uintptr_t)g_keep[i];

		free(g_keep[i]);
		write_free(a, RTE_ALLOC_FREE_VERSION);
	}
	for (int i = 0; i < 20; i++)
		prof_alloc_small();
	rte_int(id_calls, 10);
	rte_int(id_calls, 20);
	rte_int(id_bytes, 10 * 4096 + 20 * 64);
	rte_int(id_frees, 25);
	rte_int(id_freed, 5 * 4096 + 20 * 64);
	memset(b, 0, sizeof b);
	b[19] = 10;
	b[8] = 20;
	rte_runtime_alloc(b);
	memset(b, 0, sizeof b);
	b[1] = 3;
	rte_runtime_alloc(b);
	NO_TAIL();
}

static void hostile(void)
{
	uint8_t b[sizeof(struct rte_sample_rec) + 16];
	struct rte_sample_rec r;
	struct rte_alloc_sample_rec a;

	memset(b, 0, sizeof b);
	memset(&r, 0, sizeof r);
	r.version = 99;
	r.nframes = 2;
	memcpy(b, &r, sizeof r);
	rte_custom(id_sample, b, sizeof b);      /* unknown version */
	r.version = RTE_SAMPLE_VERSION;
	r.nframes = 64;
	memcpy(b, &r, sizeof r);
	rte_custom(id_sample, b, sizeof b);      /* 64 frames, room for 2 */
	rte_custom(id_sample, b, 10);            /* short */
	memset(&a, 0, sizeof a);
	a.version = RTE_ALLOC_SAMPLE_VERSION;
	a.nframes = 40;
	a.size = 1 << 20;
	a.period = PERIOD;
	{
		uint8_t c[sizeof a + 8];

		memset(c, 0, sizeof c);
		memcpy(c, &a, sizeof a);
		rte_custom(id_asample, c, sizeof c);  /* 40 frames, room for 1 */
	}
	write_free((uintptr_t)g_keep[9], 7);               /* unknown version */
}

/* 150 records of random bytes and lengths (half with a known version),
 * each of the three kinds: whatever they hold, the reader survives. */
static void garbage(void)
{
	uint8_t b[320];
	int ids[3] = { id_sample, id_asample, id_free };

	srand(42);
	for (int i = 0; i < 450; i++) {
		size_t len = (size_t)rand() % sizeof b;

		for (size_t k = 0; k < sizeof b; k++)
			b[k] = (uint8_t)rand();
		if (i & 1) {
			b[0] = 1;
			b[1] = 0;
		}
		rte_custom(ids[i % 3], b, len);
	}
}

int main(int argc, char **argv)
{
	int bad = argc == 2 && !strcmp(argv[1], "hostile");
	int fuzz = argc == 2 && !strcmp(argv[1], "garbage");
	pthread_t t;

	if (argc > 2 || (argc == 2 && !bad && !fuzz))
		return 2;
	id_sample = rte_register("rtx.sample", RTE_TYPE_CUSTOM);
	id_asample = rte_register("rtx.alloc.sample", RTE_TYPE_CUSTOM);
	id_free = rte_register("rtx.alloc.free", RTE_TYPE_CUSTOM);
	id_calls = rte_register("rtx.alloc.calls", RTE_TYPE_INT);
	id_bytes = rte_register("rtx.alloc.bytes", RTE_TYPE_INT);
	id_frees = rte_register("rtx.alloc.frees", RTE_TYPE_INT);
	id_freed = rte_register("rtx.alloc.freed", RTE_TYPE_INT);
	id_hot = rte_register("app.hot", RTE_TYPE_SPAN);
	id_inner = rte_register("app.inner", RTE_TYPE_SPAN);
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
		return 3;
	prof_work();
	prof_work_alloc();
	if (bad)
		hostile();
	if (fuzz)
		garbage();
	return 0;
}
