/*
 * demo.c - a small program that shows what rte records: `make demo` runs
 * it under rte-run, prints its summary and writes a Chrome trace.
 *
 * It plays a toy job server with its own little "runtime":
 *   - the main thread registers user events and starts WORKERS threads
 *     (named worker-N with pthread_setname_np);
 *   - each worker takes JOBS jobs: a span demo.job around each, an int
 *     demo.queue_depth before it, a unit demo.cache_miss on some, a custom
 *     demo.job_tag naming it;
 *   - every tenth job of each worker, all four threads (the main thread
 *     and the workers: OCaml's domains) stop for a toy "minor
 *     collection", written as OCaml 5.2 writes one (compare
 *     tests/fixtures/ocaml-5.2/gc): the domain leading it writes
 *     stw_leader around minor, each other one interrupt_remote >
 *     stw_handler around minor; minor holds minor_local_roots and the
 *     counters minor_promoted and minor_allocated, in bytes, for this
 *     collection and this domain (not running totals). The lead turns
 *     round, so each domain, ring 0 included, leads one of the COLLECTIONS;
 *   - halfway, the main thread forks a child that "compacts" as
 *     Gc.compact does (explicit_gc_compact > stw_leader > compaction with
 *     its sub-phases) in its own ring file, and waits for it.
 *
 * Run alone it starts tracing itself (rte_start()) and prints where its
 * ring file is; under rte-run (or OCAML_RUNTIME_EVENTS_START=1) tracing is
 * already running and that call does nothing. Exit status 0, or 1 if a
 * call of the C API failed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte/rte.h>

#define WORKERS 3
#define JOBS 40
#define DOMAINS (WORKERS + 1)   /* the main thread is domain (ring) 0 */
#define COLLECTIONS (JOBS / 10) /* one every tenth job */
#define ALLOCATED 65536u        /* bytes a worker allocates between two */
#define PROMOTED 512u           /* bytes it promotes at each */

static pthread_barrier_t stw; /* the DOMAINS, meeting for a collection */

static struct {
	int job, depth, miss, tag, phase;
} ev;

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Some real work, so that spans have CPU time in them, not only sleep. */
static uint64_t churn(uint64_t seed, unsigned rounds)
{
	for (unsigned i = 0; i < rounds; i++)
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return seed;
}

/* Domain dom's part of toy collection k: the domain leading it (k
 * turns round) writes stw_leader around minor, the others are
 * interrupted (interrupt_remote > stw_handler) and collect their own minor
 * heap too, as in OCaml 5.2. The counters are this domain's figures for
 * this collection, as OCaml writes them. */
static void minor_gc(unsigned k, unsigned dom, uint64_t allocated)
{
	int lead = k % DOMAINS == dom;

	/* every domain ready: the wait for the slowest is mutator time */
	pthread_barrier_wait(&stw);
	if (lead) {
		rte_runtime_begin(RTE_P_STW_LEADER);
	} else {
		rte_runtime_begin(RTE_P_INTERRUPT_REMOTE);
		rte_runtime_begin(RTE_P_STW_HANDLER);
	}
	pthread_barrier_wait(&stw);
	rte_runtime_begin(RTE_P_MINOR);
	rte_runtime_begin(RTE_P_MINOR_LOCAL_ROOTS);
	sleep_us(150);
	rte_runtime_end(RTE_P_MINOR_LOCAL_ROOTS);
	rte_runtime_counter(RTE_C_MINOR_PROMOTED, allocated ? PROMOTED : 0);
	rte_runtime_counter(RTE_C_MINOR_ALLOCATED, allocated);
	rte_runtime_end(RTE_P_MINOR);
	pthread_barrier_wait(&stw);
	if (lead) {
		rte_runtime_end(RTE_P_STW_LEADER);
	} else {
		rte_runtime_end(RTE_P_STW_HANDLER);
		rte_runtime_end(RTE_P_INTERRUPT_REMOTE);
	}
}

static void *worker(void *arg)
{
	unsigned n = (unsigned)(uintptr_t)arg;
	uint64_t x = n + 1;
	char name[16], tag[32];

	snprintf(name, sizeof name, "worker-%u", n);
	pthread_setname_np(pthread_self(), name);
	for (unsigned j = 0; j < JOBS; j++) {
		rte_int(ev.depth, (int64_t)(JOBS - j));
		rte_span_begin(ev.job);
		snprintf(tag, sizeof tag, "job %u.%u", n, j);
		rte_custom(ev.tag, tag, strlen(tag));
		if ((j + n) % 7 == 0)
			rte_unit(ev.miss);
		x = churn(x, 20000 + 5000 * (j % 4));
		sleep_us(300 + 100 * (long)((j + n) % 5));
		rte_span_end(ev.job);
		if (j % 10 == 9)
			minor_gc(j / 10, n + 1, ALLOCATED);
	}
	return (void *)(uintptr_t)(x & 1); /* keeps churn() from being elided */
}

/* The forked child: its own file (<pid>.events), one compaction, as
 * Gc.compact () writes it (a stop-the-world section of one domain). */
static void child_compacts(void)
{
	rte_span_begin(ev.phase);
	rte_runtime_begin(RTE_P_EXPLICIT_GC_COMPACT);
	rte_runtime_begin(RTE_P_STW_LEADER);
	rte_runtime_begin(RTE_P_COMPACTION);
	rte_runtime_begin(RTE_P_COMPACTION_EVACUATE);
	sleep_us(2000);
	rte_runtime_end(RTE_P_COMPACTION_EVACUATE);
	rte_runtime_begin(RTE_P_COMPACTION_FORWARD);
	sleep_us(1000);
	rte_runtime_end(RTE_P_COMPACTION_FORWARD);
	rte_runtime_begin(RTE_P_COMPACTION_RELEASE);
	sleep_us(500);
	rte_runtime_end(RTE_P_COMPACTION_RELEASE);
	rte_runtime_end(RTE_P_COMPACTION);
	rte_runtime_end(RTE_P_STW_LEADER);
	rte_runtime_end(RTE_P_EXPLICIT_GC_COMPACT);
	rte_span_end(ev.phase);
}

static int register_all(void)
{
	ev.job = rte_register("demo.job", RTE_TYPE_SPAN);
	ev.depth = rte_register("demo.queue_depth", RTE_TYPE_INT);
	ev.miss = rte_register("demo.cache_miss", RTE_TYPE_UNIT);
	ev.tag = rte_register("demo.job_tag", RTE_TYPE_CUSTOM);
	ev.phase = rte_register("demo.compaction", RTE_TYPE_SPAN);
	if (ev.job < 0 || ev.depth < 0 || ev.miss < 0 || ev.tag < 0 || ev.phase < 0) {
		fprintf(stderr, "rte-demo: rte_register: %s\n",
		        rte_strerror(ev.job < 0 ? ev.job : ev.depth < 0 ? ev.depth :
		                     ev.miss < 0 ? ev.miss : ev.tag < 0 ? ev.tag : ev.phase));
		return -1;
	}
	return 0;
}

/* Fork the compacting child and wait for it. Returns 0 or -1. */
static int fork_child(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0) {
		perror("rte-demo: fork");
		return -1;
	}
	if (pid == 0) {
		child_compacts();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "rte-demo: the child failed\n");
		return -1;
	}
	return 0;
}

int main(void)
{
	pthread_t t[WORKERS];
	char path[4096];
	int err, rc = 0;

	if (register_all() < 0 || pthread_barrier_init(&stw, NULL, DOMAINS) != 0)
		return 1;
	err = rte_start();
	if (err != RTE_OK) {
		fprintf(stderr, "rte-demo: rte_start: %s\n", rte_strerror(err));
		return 1;
	}
	if (!getenv("OCAML_RUNTIME_EVENTS_START") && rte_path(path, sizeof path) > 0)
		printf("rte-demo: tracing into %s%s\n", path,
		       getenv("OCAML_RUNTIME_EVENTS_PRESERVE") ? "" :
		       " (removed at exit: set OCAML_RUNTIME_EVENTS_PRESERVE=1 to keep it)");
	for (unsigned i = 0; i < WORKERS; i++)
		if ((err = pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i)) != 0) {
			fprintf(stderr, "rte-demo: pthread_create: %s\n", strerror(err));
			return 1;
		}
	/* domain 0 takes part in every collection; halfway, it forks */
	for (unsigned k = 0; k < COLLECTIONS; k++) {
		if (k == COLLECTIONS / 2)
			rc |= fork_child();
		minor_gc(k, 0, k ? 4096 : 0);
	}
	for (unsigned i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("rte-demo: %d workers ran %d jobs each, one child compacted\n",
	       WORKERS, JOBS);
	return rc ? 1 : 0;
}
