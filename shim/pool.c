/*
 * pool.c - the per-thread state pool (see pool.h): states in chunks
 * mapped with MADV_WIPEONFORK, taken with a CAS on a thread's first use,
 * given back at its end through a pthread key, and reached through the one
 * initial-exec TLS pointer rte_self_p.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "pool.h"
#include "forkvars.h"

__thread struct rte_thread *rte_self_p RTE_TLS;
static RTE_FORKVAR pthread_key_t g_key;
static RTE_FORKVAR int g_key_ok;

/*
 * The pool of per-thread states: up to POOL_CHUNKS chunks of POOL_CHUNK
 * states, each chunk mapped on first need with MADV_WIPEONFORK. g_used
 * (ordinary memory, copied by fork) says which are taken; a thread gives
 * its state back at its end (the pthread key destructor, whose value is
 * the state's index + 1).
 */
#define POOL_CHUNK 64u
#define POOL_CHUNKS 1024u
#define POOL_MAX (POOL_CHUNK * POOL_CHUNKS)

static struct rte_thread *g_chunks[POOL_CHUNKS]; /* atomic */
static RTE_BIGVAR uint8_t g_used[POOL_MAX];                 /* atomic */
RTE_HOTPAGE(pool_used, &g_used[0]);
/* Atomic: at or below the lowest free index (give or take a race that
 * only costs compactness), so states are reused and memory stays flat. */
static RTE_FORKVAR unsigned g_hint;
static RTE_FORKVAR unsigned g_top; /* atomic: above every index ever taken */
/* The state of threads that could get none: never writes (busy). */
static struct rte_thread g_nothread = {.ring = -1, .busy = 1};

void *rte_pool_map_wiped(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, len, MADV_WIPEONFORK) < 0) {
		munmap(p, len);
		return NULL;
	}
#ifdef MADV_POPULATE_WRITE
	/* Its first page is written at once (the process page, the first
	 * state of a chunk): mapped in now, for less than a page fault. */
	madvise(p, 4096, MADV_POPULATE_WRITE);
#endif
	return p;
}

static struct rte_thread *chunk(unsigned c)
{
	size_t len = POOL_CHUNK * sizeof(struct rte_thread);
	/* Acquire: pairs with the CAS below (the mapping is complete). */
	struct rte_thread *p = __atomic_load_n(&g_chunks[c], __ATOMIC_ACQUIRE);
	struct rte_thread *none = NULL;

	if (p)
		return p;
	if (!(p = rte_pool_map_wiped(len)))
		return NULL;
	/* Acq_rel: publishes our mapping, or sees the winner's. */
	if (!__atomic_compare_exchange_n(&g_chunks[c], &none, p, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(p, len);
		p = none;
	}
	return p;
}

struct rte_thread *rte_thread_new(void)
{
	int saved = errno;
	/* Relaxed: only a place to start looking. */
	unsigned h = __atomic_load_n(&g_hint, __ATOMIC_RELAXED);
	struct rte_thread *t = &g_nothread, *c;

	for (unsigned n = 0; n < POOL_MAX; n++) {
		unsigned i = (h + n) % POOL_MAX;
		uint8_t free_ = 0;

		/* Relaxed peek, then acquire: pairs with the release in
		 * rte_pool_put() (the previous owner is done with it). */
		if (__atomic_load_n(&g_used[i], __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&g_used[i], &free_, 1, 0,
		                                 __ATOMIC_ACQUIRE,
		                                 __ATOMIC_RELAXED))
			continue;
		if (!(c = chunk(i / POOL_CHUNK))) {
			__atomic_store_n(&g_used[i], 0, __ATOMIC_RELEASE);
			break;
		}
		t = &c[i % POOL_CHUNK];
		/* A state never used before is fresh (zero) memory: clearing
		 * it would touch both its pages (a page fault each) where a
		 * thread may only ever use the first. Relaxed: g_top only
		 * grows, and the CAS above made index i ours. */
		if (i < __atomic_load_n(&g_top, __ATOMIC_RELAXED))
			memset(t, 0, sizeof(*t));
		t->ring = -1;
		/* Relaxed (both): a place to start looking (unless a state
		 * was freed meanwhile), and how much of g_used a fork child
		 * clears. */
		__atomic_compare_exchange_n(&g_hint, &h, i + 1, 0,
		                            __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		for (unsigned top = __atomic_load_n(&g_top, __ATOMIC_RELAXED);
		     top < i + 1 &&
		     !__atomic_compare_exchange_n(&g_top, &top, i + 1, 1,
		                                  __ATOMIC_RELAXED,
		                                  __ATOMIC_RELAXED);)
			;
		/* Below PTHREAD_KEY_2NDLEVEL_SIZE: no allocation. */
		if (g_key_ok)
			pthread_setspecific(g_key, (void *)(uintptr_t)(i + 1));
		break;
	}
	rte_self_p = t;
	errno = saved;
	return t;
}

/* Pool index of the calling thread's state, or -1. */
static long self_index(void)
{
	return g_key_ok ? (long)(uintptr_t)pthread_getspecific(g_key) - 1 : -1;
}

/* Fork child (one thread): only our state is in use now. */
void rte_pool_fork_child(void)
{
	long i = self_index();

	/* Only the part ever used: each page written here is a copy. */
	memset(g_used, 0, g_top);
	if (i >= 0)
		g_used[i] = 1;
	if (rte_self_p && rte_self_p != &g_nothread) {
		/* Wiped: make it a fresh state. */
		memset(rte_self_p, 0, sizeof(*rte_self_p));
		rte_self_p->ring = -1;
	}
}

int rte_pool_is_none(const struct rte_thread *t)
{
	return t == &g_nothread;
}

/* The thread's ring is given back by then (the tracer's key destructor, tracer/attach.c). */
void rte_pool_put(void *v)
{
	uintptr_t i = (uintptr_t)v - 1;

	rte_self_p = NULL;
	/* Release: our last use of the state happens before its next owner
	 * takes it (pairs with the CAS in rte_thread_new()). */
	if (i < POOL_MAX) {
		unsigned h = __atomic_load_n(&g_hint, __ATOMIC_RELAXED);

		__atomic_store_n(&g_used[i], 0, __ATOMIC_RELEASE);
		/* Relaxed: the next search starts here or lower. */
		while (i < h && !__atomic_compare_exchange_n(
		                        &g_hint, &h, (unsigned)i, 1,
		                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
}

int rte_pool_load(void (*thread_end)(void *))
{
	g_key_ok = pthread_key_create(&g_key, thread_end) == 0;
	return g_key_ok ? 0 : -1;
}
