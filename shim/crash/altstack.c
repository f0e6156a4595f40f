/*
 * crash/altstack.c - the alternate signal stacks the crash recorder gives
 * each thread (crash/altstack.h): a stack overflow is then recorded too.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crash/altstack.h"
#include "log.h"

static pthread_key_t g_alt_key;
static int g_alt_key_ok;
static size_t g_alt_size;
static int g_once_alt;

/*
 * Alternate stacks of ended threads, kept for the next threads to start: a
 * thread start then costs no mmap and mprotect, a thread end no munmap
 * (the pool measured a third of the shim's cost of pthread_create+join).
 * A slot holds a stack's base or NULL.
 */
#define ALT_POOL 64
static void *g_alt_pool[ALT_POOL];

static void *alt_get(void)
{
	for (unsigned i = 0; i < ALT_POOL; i++)
		/* Relaxed: skips empty slots cheaply. The acquire exchange
		 * pairs with the release CAS in alt_put(). */
		if (__atomic_load_n(&g_alt_pool[i], __ATOMIC_RELAXED)) {
			void *p = __atomic_exchange_n(&g_alt_pool[i], NULL,
			                              __ATOMIC_ACQUIRE);
			if (p)
				return p;
		}
	return NULL;
}

static int alt_put(void *p)
{
	for (unsigned i = 0; i < ALT_POOL; i++) {
		void *empty = NULL;

		/* Release: the stack is no longer ours once another thread
		 * can take it; pairs with the acquire in alt_get(). */
		if (__atomic_compare_exchange_n(&g_alt_pool[i], &empty, p, 0,
		                                __ATOMIC_RELEASE,
		                                __ATOMIC_RELAXED))
			return 1;
	}
	return 0;
}

static void alt_free(void *p)
{
	stack_t cur, off = {.ss_flags = SS_DISABLE};
	char *base = p;
	size_t guard = (size_t)sysconf(_SC_PAGESIZE);

	if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == base + guard) {
		if (cur.ss_flags & SS_ONSTACK)
			return; /* ending inside a handler: leave it be */
		sigaltstack(&off, NULL);
	}
	/* Disabled above: no signal of this thread can run on it now. */
	if (!alt_put(base))
		munmap(base, g_alt_size + guard);
}

void rte_alt_init(void)
{
	long min = sysconf(_SC_MINSIGSTKSZ);

	/* 64 KiB: libunwind's walk plus a program handler chained from ours
	 * (mapped lazily: untouched pages cost nothing). */
	g_alt_size = 64u << 10;
	if (min > 0 && (size_t)min * 4 > g_alt_size)
		g_alt_size = (size_t)min * 4;
	g_alt_key_ok = pthread_key_create(&g_alt_key, alt_free) == 0;
}

size_t rte_alt_size(void)
{
	return g_alt_size;
}

void rte_alt_thread_start(void)
{
	size_t guard = (size_t)sysconf(_SC_PAGESIZE);
	stack_t cur, ss;
	char *base;
	int saved = errno;

	/* A thread that has one already (the program's) keeps it. */
	if (sigaltstack(NULL, &cur) < 0 || !(cur.ss_flags & SS_DISABLE))
		goto out;
	base = alt_get();
	if (!base) {
		base = mmap(NULL, g_alt_size + guard, PROT_READ | PROT_WRITE,
		            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED) {
			rte_warn(&g_once_alt, "cannot map an alternate signal "
			         "stack (%s); a stack overflow in such threads "
			         "is not recorded", strerrordesc_np(errno));
			goto out;
		}
		/* The lowest page stays inaccessible: an overflow of the
		 * handler's own stack faults rather than writing into other
		 * memory. */
		mprotect(base, guard, PROT_NONE);
	}
	ss.ss_sp = base + guard;
	ss.ss_size = g_alt_size;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) < 0) {
		if (!alt_put(base))
			munmap(base, g_alt_size + guard);
		goto out;
	}
	if (g_alt_key_ok)
		pthread_setspecific(g_alt_key, base);
out:
	errno = saved;
}

/* This thread's alternate stack of ours (its base, below the guard page),
 * or NULL. pthread_getspecific only reads the thread's own table. */
LEAN char *rte_alt_own(void)
{
	return g_alt_key_ok ? pthread_getspecific(g_alt_key) : NULL;
}
