/*
 * hooks/alloc.c - the interposed malloc family (RTE_ALLOC).
 *
 * Every wrapper starts with one load and one predictable branch: while
 * profiling is off (RTE_ALLOC unset, the default) and nothing else needs
 * care, the call is a tail call into the real function. The real functions
 * are the next definitions after librte.so (dlsym RTLD_NEXT): glibc's, or
 * an allocator preloaded after us or linked into the program (jemalloc,
 * tcmalloc): we wrap whatever comes next. An allocator that comes before
 * us (preloaded first, or a sanitizer's interceptors) takes the calls
 * itself: we see none, and say so once when tracing starts.
 *
 * Before the real functions are known (an allocation before our
 * constructor ran, or made by dlsym while we resolve them) memory comes
 * from a bootstrap arena in our own data (alloc/arena.c): never reused, never given to the
 * real free or realloc. If the arena was used, free and realloc check for
 * its pointers (a second compare); otherwise they do not need to.
 *
 * malloc_usable_size and mmap are not interposed: malloc_usable_size works
 * as before (on the real allocator's pointers), and memory a program maps
 * itself is out of scope.
 *
 * Thread-safety: all wrappers are thread-safe and as async-signal-safe as
 * the real functions; profiling state is per-thread (alloc/sample.c) with
 * a guard against recursion from our own code (libunwind, dlsym).
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forkvars.h"
#include "alloc/alloc.h"
#include "alloc/arena.h"
#include "hooks/hooks.h"
#include "tracer.h"


static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable)(void *);
} g_real;

/* ---- resolution and the mode ---------------------------------------------- */

/* real.c's rte_dlsym, here again: this file is never instrumented by a
 * sanitizer (mk/shim.mk), real.c is, and a sanitizer's own start-up
 * calls malloc (through dlsym) before its runtime can run instrumented
 * code. */
static void *next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		dlerror(); /* frees the error buffer (see real.c) */
		dlerror();
	}
	return p;
}

/* Not real.c's table: these are resolved under the mode's CAS, with the
 * arena serving dlsym's own allocations (see real.h). */
#define RESOLVE(field, name) (*(void **)&g_real.field = next(name))

/* Resolve the real functions once (the first call of any wrapper, or the
 * constructor). A call made meanwhile (by dlsym itself, or another thread)
 * is served by the arena. */
static void resolve(void)
{
	int m = MODE_UNINIT;

	if (!__atomic_compare_exchange_n(&rte_alloc_g_mode, &m, MODE_RESOLVING, 0,
	                                 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		return;
	RESOLVE(malloc, "malloc");
	RESOLVE(calloc, "calloc");
	RESOLVE(realloc, "realloc");
	RESOLVE(reallocarray, "reallocarray");
	RESOLVE(free, "free");
	RESOLVE(posix_memalign, "posix_memalign");
	RESOLVE(aligned_alloc, "aligned_alloc");
	RESOLVE(memalign, "memalign");
	RESOLVE(valloc, "valloc");
	RESOLVE(pvalloc, "pvalloc");
	RESOLVE(usable, "malloc_usable_size");
	m = g_real.malloc && g_real.calloc && g_real.realloc && g_real.free &&
	                    g_real.posix_memalign && g_real.aligned_alloc &&
	                    g_real.memalign && g_real.valloc &&
	                    g_real.pvalloc && g_real.usable
	            ? MODE_EARLY
	            : MODE_BROKEN;
	/* Release: the pointers before the mode that lets them be used. */
	__atomic_store_n(&rte_alloc_g_mode, m, __ATOMIC_RELEASE);
}

static void *own_malloc(size_t n)
	__attribute__((malloc, alloc_size(1), nothrow));

static inline int mode(void)
{
	return rte_alloc_mode();
}

void rte_alloc_init(void)
{
	const char *s = secure_getenv("RTE_ALLOC");
	void *first;
	int m;

	resolve();
	m = mode();
	if (m != MODE_EARLY)
		return;
	rte_alloc_g_wanted = s && *s && strcmp(s, "0") != 0;
	/* Is our malloc the one the program calls? Not if an allocator or a
	 * sanitizer comes before us in the lookup order. Only asked when
	 * profiling is: both answers matter to the profiling paths alone,
	 * and dladdr walks libc's whole symbol table (a third of the
	 * instructions of a traced /bin/true's start, by callgrind). */
	if (rte_alloc_g_wanted) {
		first = rte_alloc_first_malloc();
		rte_alloc_g_ours = first == (void *)own_malloc;
		rte_alloc_g_glibc = rte_alloc_is_glibc((void *)g_real.free) &&
		                    rte_alloc_is_glibc((void *)g_real.usable);
	}
	/* Profiling waits for rte_alloc_on(): our own start-up is not
	 * counted. */
	if (!(rte_alloc_g_wanted && rte_alloc_g_ours) &&
	    !__atomic_load_n(&rte_alloc_g_arena_used, __ATOMIC_RELAXED))
		m = MODE_PASS;
	else
		m = MODE_CHECK;
	__atomic_store_n(&rte_alloc_g_mode, m, __ATOMIC_RELEASE);
}

/* ---- the profiling path ------------------------------------------------------ */

/* Counted whether or not tracing is active at the moment (MODE_ON and
 * MODE_FAST mean it was started): a flush while it is paused or stopped
 * drops the counts, which is cheaper than a look at it per call. Our own
 * slow work is not counted: alloc/alloc.h's slow paths see the guard. */

static inline int is_on(int m)
{
	return m >= MODE_ON;
}

/* The calling thread's profiler state (allocated on its first call). */
static inline struct rte_alloc_thread *self_alloc(void)
{
	return &rte_self_get()->alloc;
}

/* 1 if this mode must not call the real functions (yet). */
static inline int arena_only(int m)
{
	return m == MODE_UNINIT || m == MODE_RESOLVING || m == MODE_BROKEN;
}

/* The mode, after resolving if nothing was yet. */
static int mode_slow(void)
{
	int m = mode();

	if (m == MODE_UNINIT) {
		resolve();
		m = mode();
	}
	return m;
}

/*
 * malloc_usable_size(p) + 8 of a block the program is freeing, from glibc:
 * its own function also reads the next chunk's header (a cache miss the
 * free itself does not take, from its per-thread cache); for a block in
 * use its answer is the block's own size field: the chunk size less the
 * 8-byte header, or less 16 for a block of its own mmap (glibc's
 * memsize()). The chunk size less 8 for a mmapped block is what is
 * counted (alloc/state.h's freed8); the flush takes 8 per free off.
 */
static inline uint64_t glibc_usable8(const void *p)
{
	size_t h;

	memcpy(&h, (const char *)p - sizeof(h), sizeof(h));
	return (h & ~(size_t)7) - ((h & 2) << 2);
}

/* The same from any allocator: its malloc_usable_size. */
static inline uint64_t usable8(void *p)
{
	return rte_alloc_g_glibc ? glibc_usable8(p) : g_real.usable(p) + 8;
}

/* The usable bytes of a block just allocated (0: none), counted as the
 * allocated bytes, so that allocated and freed bytes are the same
 * measure (the bytes asked for are counted too: rte.alloc.bytes). */
static inline uint64_t got_usable(void *p)
{
	return p ? usable8(p) - 8 : 0;
}

/* A free of p (not NULL, not the arena's) about to happen: counted, and
 * written if p was sampled. Before the real call: p may be reused at once
 * by another thread. */
static inline void freeing(struct rte_alloc_thread *a, void *p)
{
	rte_alloc_count_free(a, p, usable8(p));
	if (__builtin_expect(rte_alloc_maybe_sampled(p), 0))
		rte_alloc_note_free(p);
}

/* ---- the wrappers ---------------------------------------------------------- */

/*
 * Each wrapper: MODE_PASS, a tail call; counted (MODE_ON, MODE_FAST):
 * malloc and free count inline and tail-call the real function unless the
 * slow path is due (alloc/alloc.h), the others through their _other
 * helper; anything else, the _other helper (the arena while nothing is
 * resolved, a check for arena pointers, a pass-through). Every path ends
 * in a tail call where it can, so the fast paths need no stack frame
 * (the _other helpers are never inlined: the registers they use would be
 * saved on every call, in MODE_PASS too). The relaxed load of the mode
 * suffices on the fast path: the pointers were stored before the mode
 * that lets them be used was (release).
 */
static inline int mode_fast(void)
{
	return __atomic_load_n(&rte_alloc_g_mode, __ATOMIC_RELAXED);
}

/* The counted call of an allocating function: `call` returns the block
 * (or NULL), n is the size asked for, fn the enum rte_alloc_fn. */
#define COUNTED(call, n, fn)                                                  \
	do {                                                                  \
		struct rte_alloc_thread *a_ = self_alloc();                   \
		void *p_ = g_real.call;                                       \
		rte_alloc_count(a_, p_, n, got_usable(p_), fn);               \
		return p_;                                                    \
	} while (0)

/* A counted malloc that the inline fast path did not take: counted before
 * the call, its block's usable size after it, and the sample if due. */
__attribute__((noinline)) static void *malloc_on(size_t n)
{
	struct rte_alloc_thread *a = self_alloc();
	void *p;
	int due = 0;

	if (!rte_alloc_fast(a, n)) {
		due = rte_alloc_slow(a, n, n);
		if (!rte_alloc_counted(a)) /* our own slow work */
			return g_real.malloc(n);
	}
	p = g_real.malloc(n);
	rte_alloc_got(a, p, got_usable(p));
	if (due)
		rte_alloc_after(a, p, n, n, RTE_ALLOC_MALLOC);
	return p;
}

__attribute__((noinline)) static void *malloc_other(size_t n)
{
	int m = mode_slow();

	if (is_on(m))
		return malloc_on(n);
	if (arena_only(m))
		return rte_alloc_arena_alloc(n, 16);
	return g_real.malloc(n);
}

RTE_EXPORT void *malloc(size_t n)
{
	int m = mode_fast();
	struct rte_thread *t;

	if (__builtin_expect(m == MODE_PASS, 1))
		return g_real.malloc(n);
	if (__builtin_expect(m == MODE_FAST, 1)) {
		t = rte_self_p;
		if (__builtin_expect(t != NULL, 1) &&
		    __builtin_expect(rte_alloc_fast(&t->alloc, n), 1)) {
			void *p = g_real.malloc(n);

			/* glibc's: the chunk header, hot from the call */
			if (__builtin_expect(p != NULL, 1))
				rte_alloc_got(&t->alloc, p,
				              glibc_usable8(p) - 8);
			return p;
		}
		return malloc_on(n);
	}
	if (is_on(m))
		return malloc_on(n);
	return malloc_other(n);
}

/* Our own malloc's address, not the one the dynamic linker binds. */
static void *own_malloc(size_t n)
	__attribute__((alias("malloc"), malloc, alloc_size(1), nothrow));

static void *calloc_other(size_t k, size_t n)
{
	int m = mode_slow();
	size_t total;

	if (__builtin_mul_overflow(k, n, &total))
		total = SIZE_MAX; /* the real calloc fails: counted as 0 */
	if (is_on(m))
		COUNTED(calloc(k, n), total == SIZE_MAX ? 0 : total,
		        RTE_ALLOC_CALLOC);
	if (arena_only(m))
		return rte_alloc_arena_alloc(total, 16); /* zero: never reused */
	return g_real.calloc(k, n);
}

RTE_EXPORT void *calloc(size_t k, size_t n)
{
	if (__builtin_expect(mode_fast() == MODE_PASS, 1))
		return g_real.calloc(k, n);
	return calloc_other(k, n);
}

/* realloc of an arena block: a new block from the real allocator (through
 * our own malloc, so that it is counted), the old one left in place. */
static void *arena_realloc(void *p, size_t n)
{
	size_t old = rte_alloc_arena_size(p);
	void *q;

	if (n == 0)
		return NULL; /* as glibc: freed (arena blocks stay) */
	q = malloc(n);
	if (q)
		memcpy(q, p, old < n ? old : n);
	return q;
}

/* realloc(p, n) counted: a free of p (if not NULL) and, unless it only
 * frees (n == 0), an allocation of n. */
static void *realloc_on(void *p, size_t n, unsigned fn)
{
	struct rte_alloc_thread *a = self_alloc();
	uint64_t old = 0;
	void *q;

	/* p's size and its sampled free before the call (p may be reused
	 * at once by another thread); its free is counted after it, and
	 * only if p was released: a failed realloc keeps it. */
	if (p) {
		old = usable8(p);
		if (__builtin_expect(rte_alloc_maybe_sampled(p), 0))
			rte_alloc_note_free(p);
	}
	q = g_real.realloc(p, n);
	if (p && (q || !n))
		rte_alloc_count_free(a, p, old);
	if (n || !p)
		rte_alloc_count_c(a, q, n,
		                  rte_alloc_realloc_clock(n, p ? old - 8 : 0),
		                  got_usable(q), fn);
	return q;
}

__attribute__((noinline)) static void *realloc_other(void *p, size_t n)
{
	int m = mode_slow();

	if (rte_alloc_in_arena(p))
		return arena_realloc(p, n);
	if (arena_only(m))
		return p ? NULL : rte_alloc_arena_alloc(n, 16); /* p cannot be real yet */
	if (!is_on(m))
		return g_real.realloc(p, n);
	return realloc_on(p, n, RTE_ALLOC_REALLOC);
}

/* realloc_on() in MODE_FAST (glibc's allocator, the arena unused) for a
 * block p and a size n, neither 0, on a thread with its state: the
 * sizes from the chunk headers, no look at the mode or the arena. */
__attribute__((noinline)) static void *realloc_fast(struct rte_alloc_thread *a,
                                                    void *p, size_t n)
{
	uint64_t old = glibc_usable8(p);
	uint64_t c = rte_alloc_realloc_clock(n, old - 8);
	void *q;

	if (__builtin_expect(rte_alloc_maybe_sampled(p), 0))
		rte_alloc_note_free(p);
	q = g_real.realloc(p, n);
	if (__builtin_expect(q != NULL, 1)) {
		rte_alloc_count_free(a, p, old);
		rte_alloc_count_c(a, q, n, c, glibc_usable8(q) - 8,
		                  RTE_ALLOC_REALLOC);
	} else {
		rte_alloc_count_c(a, q, n, c, 0, RTE_ALLOC_REALLOC);
	}
	return q;
}

RTE_EXPORT void *realloc(void *p, size_t n)
{
	int m = mode_fast();
	struct rte_thread *t;

	if (__builtin_expect(m == MODE_PASS, 1))
		return g_real.realloc(p, n);
	if (__builtin_expect(m == MODE_FAST, 1) && p && n &&
	    __builtin_expect((t = rte_self_p) != NULL, 1))
		return realloc_fast(&t->alloc, p, n);
	return realloc_other(p, n);
}

__attribute__((noinline)) static void *reallocarray_other(void *p, size_t k, size_t n)
{
	int m = mode_slow();
	size_t total;

	if (__builtin_mul_overflow(k, n, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (rte_alloc_in_arena(p))
		return arena_realloc(p, total);
	if (arena_only(m))
		return p ? NULL : rte_alloc_arena_alloc(total, 16);
	if (!is_on(m))
		return g_real.reallocarray ? g_real.reallocarray(p, k, n)
		                           : g_real.realloc(p, total);
	return realloc_on(p, total, RTE_ALLOC_REALLOCARRAY);
}

RTE_EXPORT void *reallocarray(void *p, size_t k, size_t n)
{
	/* glibc has had reallocarray since 2.26: never NULL here in PASS. */
	if (__builtin_expect(mode_fast() == MODE_PASS && g_real.reallocarray,
	                     1))
		return g_real.reallocarray(p, k, n);
	return reallocarray_other(p, k, n);
}

/* The end of a counted free of a block that may have been sampled. */
__attribute__((noinline)) static void free_sampled(void *p)
{
	rte_alloc_note_free(p);
	g_real.free(p);
}

/* A counted free that the inline fast path did not take. */
__attribute__((noinline)) static void free_on(void *p)
{
	freeing(self_alloc(), p);
	g_real.free(p); /* a tail call: everything is done before */
}

__attribute__((noinline)) static void free_other(void *p)
{
	int m = mode_slow();

	if (!p || rte_alloc_in_arena(p) || arena_only(m))
		return; /* arena blocks are never reused */
	if (is_on(m))
		free_on(p);
	else
		g_real.free(p);
}

RTE_EXPORT void free(void *p)
{
	int m = mode_fast();
	struct rte_thread *t;

	if (__builtin_expect(m == MODE_PASS, 1)) {
		g_real.free(p);
		return;
	}
	if (__builtin_expect(m == MODE_FAST, 1) &&
	    __builtin_expect(p != NULL, 1)) {
		t = rte_self_p;
		if (__builtin_expect(t != NULL, 1) &&
		    __builtin_expect(rte_alloc_free_fast(&t->alloc, p,
		                                         glibc_usable8(p)),
		                     1)) {
			if (__builtin_expect(rte_alloc_maybe_sampled(p), 0))
				free_sampled(p);
			else
				g_real.free(p);
			return;
		}
	}
	free_other(p);
}

/* The aligned family: `call` is the real call, size n, function fn. */
#define ALIGNED_OTHER(align, n, fn, call)                                     \
	do {                                                                  \
		int m_ = mode_slow();                                         \
		if (is_on(m_))                                                \
			COUNTED(call, n, fn);                                 \
		if (arena_only(m_))                                           \
			return rte_alloc_arena_alloc(n, align);                         \
		return g_real.call;                                           \
	} while (0)

__attribute__((noinline)) static void *aligned_alloc_other(size_t al, size_t n)
{
	ALIGNED_OTHER(al, n, RTE_ALLOC_ALIGNED_ALLOC, aligned_alloc(al, n));
}

RTE_EXPORT void *aligned_alloc(size_t al, size_t n)
{
	if (__builtin_expect(mode_fast() == MODE_PASS, 1))
		return g_real.aligned_alloc(al, n);
	return aligned_alloc_other(al, n);
}

__attribute__((noinline)) static void *memalign_other(size_t al, size_t n)
{
	ALIGNED_OTHER(al, n, RTE_ALLOC_MEMALIGN, memalign(al, n));
}

RTE_EXPORT void *memalign(size_t al, size_t n)
{
	if (__builtin_expect(mode_fast() == MODE_PASS, 1))
		return g_real.memalign(al, n);
	return memalign_other(al, n);
}

__attribute__((noinline)) static void *valloc_other(size_t n)
{
	ALIGNED_OTHER(4096, n, RTE_ALLOC_VALLOC, valloc(n));
}

RTE_EXPORT void *valloc(size_t n)
{
	if (__builtin_expect(mode_fast() == MODE_PASS, 1))
		return g_real.valloc(n);
	return valloc_other(n);
}

__attribute__((noinline)) static void *pvalloc_other(size_t n)
{
	ALIGNED_OTHER(4096, n, RTE_ALLOC_PVALLOC, pvalloc(n));
}

RTE_EXPORT void *pvalloc(size_t n)
{
	if (__builtin_expect(mode_fast() == MODE_PASS, 1))
		return g_real.pvalloc(n);
	return pvalloc_other(n);
}

__attribute__((noinline)) static int posix_memalign_other(void **pp, size_t al, size_t n)
{
	int m = mode_slow(), r;
	struct rte_alloc_thread *a;

	if (arena_only(m)) {
		int saved = errno;
		void *p;

		if (al < sizeof(void *) || (al & (al - 1)))
			return EINVAL;
		p = rte_alloc_arena_alloc(n, al);
		errno = saved; /* posix_memalign never sets errno */
		if (!p)
			return ENOMEM;
		*pp = p;
		return 0;
	}
	if (!is_on(m))
		return g_real.posix_memalign(pp, al, n);
	a = self_alloc();
	r = g_real.posix_memalign(pp, al, n);
	rte_alloc_count(a, r ? NULL : *pp, n, r ? 0 : got_usable(*pp),
	                RTE_ALLOC_POSIX_MEMALIGN);
	return r;
}

RTE_EXPORT int posix_memalign(void **pp, size_t al, size_t n)
{
	if (__builtin_expect(mode_fast() == MODE_PASS, 1))
		return g_real.posix_memalign(pp, al, n);
	return posix_memalign_other(pp, al, n);
}
