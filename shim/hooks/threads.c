/*
 * hooks/threads.c - threads: pthread_create (domain_spawn at start; the ring is
 * given back by a pthread key destructor, see tracer/attach.c), and thread names
 * (pthread_setname_np, prctl(PR_SET_NAME)) recorded as rte.thread.name /
 * rte.thread.name_of events.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks.h"
#include "tracer.h"

struct start {
	void *(*fn)(void *);
	void *arg;
	void *ctx[RTE_HOOK_OBSERVERS_MAX]; /* each observer's, in order */
	/* Under AddressSanitizer (see trampoline), and the stack size the
	 * new thread asked for (0: unknown). */
	void (*unpoison)(const volatile void *, size_t);
	size_t stack;
};

/*
 * The (fn, arg) pair travels to the new thread in a slot of a small static
 * pool rather than a malloc'd block: a thread that frees memory makes libc
 * set up its per-thread allocator cache, a cost the traced program would
 * not otherwise pay on every thread. malloc is the fallback when every slot
 * is in flight.
 */
#define POOL_SLOTS 64
static struct start g_pool[POOL_SLOTS];
static uint8_t g_pool_used[POOL_SLOTS]; /* atomic */

static struct start *start_alloc(void)
{
	for (unsigned i = 0; i < POOL_SLOTS; i++) {
		uint8_t free_ = 0;

		/* Acquire: pairs with the release in start_free(): the
		 * previous thread has finished reading the slot. */
		if (!__atomic_load_n(&g_pool_used[i], __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&g_pool_used[i], &free_, 1, 0,
		                                __ATOMIC_ACQUIRE,
		                                __ATOMIC_RELAXED))
			return &g_pool[i];
	}
	return malloc(sizeof(struct start));
}

static void start_free(struct start *s)
{
	if (s >= g_pool && s < g_pool + POOL_SLOTS)
		__atomic_store_n(&g_pool_used[s - g_pool], 0, __ATOMIC_RELEASE);
	else
		free(s);
}

/* The first code of every thread created while tracing runs: claim a ring
 * now (writing domain_spawn, tid and name) rather than at its first event,
 * so every thread shows up, as every OCaml domain does. */
static __attribute__((noinline)) void *thread_begin(struct start *p)
{
	struct start s = *p;
	struct rte_ring_writer *w;

	start_free(p);
	w = rte_enter();
	if (w)
		rte_leave();
	for (unsigned i = 0; rte_hook_observers[i]; i++)
		if (rte_hook_observers[i]->thread_start)
			rte_hook_observers[i]->thread_start(s.ctx[i]);
	return s.fn(s.arg);
}

/*
 * Under AddressSanitizer its pthread_create interceptor comes first (its
 * runtime is preloaded before us) and hands its own start routine to our
 * wrapper: our code then runs on the new thread before the sanitizer's
 * start routine has made the thread known (T-1 in its reports) and
 * cleaned the shadow of its stack. glibc gives a new thread the stack of
 * a finished one of the same size; in a fork child, that of one of the
 * parent's other threads, stopped mid-call by the fork, whose shadow still
 * marks those calls' redzones and out-of-scope variables (the wall
 * sampler a fork child starts gets its parent's sampler's stack, and its
 * first locals were reported as stack-use-after-scope). So this first
 * function is not instrumented, and cleans the shadow of the stack below
 * its frame before any instrumented code runs there (the sanitizer's
 * start cleans the whole stack later). Without a libc call: glibc's
 * pthread_getattr_np allocates, and an allocation of a thread the
 * sanitizer does not know yet takes its one global fallback lock, which
 * a fork at that moment leaves held in the child for ever. Half the size
 * asked for, from the frame down: within the stack (glibc gives at least
 * that size below its thread descriptor and static TLS), far more than
 * our code before the sanitizer's start uses.
 */
static __attribute__((no_sanitize_address)) void *trampoline(void *p)
{
	struct start *s = p;

	if (s->unpoison && s->stack) {
		char *top = __builtin_frame_address(0);

		s->unpoison(top - s->stack / 2, s->stack / 2);
	}
	return thread_begin(s);
}

/* The stack size a thread made with attr gets (0: unknown). */
static size_t stack_size(const pthread_attr_t *attr)
{
	pthread_attr_t d;
	size_t n = 0;

	if (attr)
		return pthread_attr_getstacksize(attr, &n) ? 0 : n;
	if (pthread_getattr_default_np(&d))
		return 0;
	if (pthread_attr_getstacksize(&d, &n))
		n = 0;
	pthread_attr_destroy(&d);
	return n;
}

/* Ask each observer for its context. Always inlined: an observer may
 * count the frames above it (this wrapper's caller is the program). */
static inline __attribute__((always_inline)) void created(struct start *s)
{
	for (unsigned i = 0; i < RTE_HOOK_OBSERVERS_MAX; i++)
		s->ctx[i] = NULL;
	for (unsigned i = 0; rte_hook_observers[i]; i++)
		if (rte_hook_observers[i]->thread_create)
			s->ctx[i] = rte_hook_observers[i]->thread_create();
}

/* AddressSanitizer's __asan_unpoison_memory_region, NULL without it
 * (looked up once: (void *)1 until then). */
static void *g_asan_unpoison = (void *)1; /* atomic */

static void (*asan_unpoison(void))(const volatile void *, size_t)
{
	void (*fn)(const volatile void *, size_t);
	/* Relaxed: any thread that looks it up stores the same value. */
	void *p = __atomic_load_n(&g_asan_unpoison, __ATOMIC_RELAXED);

	if (p == (void *)1) {
		int saved = errno; /* the program's, whatever dlsym does */

		p = rte_dlsym(RTLD_DEFAULT, "__asan_unpoison_memory_region");
		__atomic_store_n(&g_asan_unpoison, p, __ATOMIC_RELAXED);
		errno = saved;
	}
	memcpy(&fn, &p, sizeof p);
	return fn;
}

RTE_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                              void *(*fn)(void *), void *arg)
{
	int saved = errno, r;
	struct start *s;

	rte_real_resolve();
	if (!rte_real.pthread_create)
		return ENOSYS;
	/* Only wrap while tracing runs and is not paused: otherwise a thread
	 * costs nothing extra, and still gets a ring on its first event. */
	if (!__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) ||
	    rte_tracer_vforked())
		return rte_real.pthread_create(th, attr, fn, arg);
	/* A fork child settles while it still has one thread (the states
	 * of the parent's threads are then freed). */
	rte_tracer_settle();
	if (!__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) ||
	    rte_self.guard)
		return rte_real.pthread_create(th, attr, fn, arg);
	s = start_alloc();
	errno = saved;
	if (!s)
		return rte_real.pthread_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->unpoison = asan_unpoison();
	s->stack = s->unpoison ? stack_size(attr) : 0;
	created(s); /* e.g. RTE_BACKTRACE=thread records our stack */
	r = rte_real.pthread_create(th, attr, trampoline, s);
	if (r) {
		for (unsigned i = 0; rte_hook_observers[i]; i++)
			if (rte_hook_observers[i]->thread_create_failed)
				rte_hook_observers[i]->thread_create_failed(
					s->ctx[i]);
		start_free(s);
	}
	errno = saved;
	return r;
}

RTE_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	int saved, r;

	rte_real_resolve();
	if (!rte_real.pthread_setname_np)
		return ENOSYS;
	r = rte_real.pthread_setname_np(th, name);
	/* Relaxed: only decides whether to record the name. */
	if (r || !__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED))
		return r;
	saved = errno;
	if (rte_tracer_vforked()) {
		errno = saved;
		return r;
	}
	if (pthread_equal(th, pthread_self()))
		rte_tracer_write_thread_name();
	else
		rte_tracer_write_name_of(th, name);
	errno = saved;
	return r;
}

/*
 * prctl is variadic; every option takes at most four more unsigned long
 * arguments, passed in registers on every Linux ABI, so forwarding four
 * is exactly what libc's own wrapper does.
 */
RTE_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	long r;
	int saved;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	r = syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
	/* Relaxed: only decides whether to record the name. */
	if (r == 0 && option == PR_SET_NAME &&
	    __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED)) {
		saved = errno;
		if (!rte_tracer_vforked())
			rte_tracer_write_thread_name();
		errno = saved;
	}
	return (int)r;
}
