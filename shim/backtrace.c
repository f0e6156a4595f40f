/*
 * backtrace.c - stack capture with libunwind (local unwinding), for the
 * crash recorder and RTE_BACKTRACE (crash/stacks.c).
 *
 * libunwind is loaded privately with dlopen(RTLD_LOCAL) rather than linked:
 * libunwind.so.8 also defines the _Unwind_* functions of the C++ exception
 * ABI, and as a dependency of a preloaded library it would take them over
 * from libgcc_s in every traced program that loads C++ code later. Kept
 * local, its symbols are seen by nobody but us. If it cannot be loaded,
 * captures return no frames and everything else works.
 *
 * libunwind's per-thread cache (UNW_CACHE_PER_THREAD) keeps the unwind
 * information it parsed, so a second capture through the same code costs a
 * fraction of the first (bench/backtrace.c measures both). The cache is
 * flushed when a module is unloaded (modules.c).
 *
 * Descriptors: libunwind validates the addresses it reads off a frame it
 * has no unwind information for by writing a byte of them into a pipe of
 * its own, made at its first use and re-made whenever a read of it fails.
 * That pipe would hold two descriptors the program sees (the lowest free
 * ones), and a program that closes every descriptor and reuses the
 * numbers (a daemon) would have its own read, written and closed by
 * libunwind. So, once loaded, libunwind's calls to pipe2() and syscall()
 * are redirected (its GOT slots, which belong to nobody else: it is
 * loaded RTLD_LOCAL): pipe2() fails, so its pipe stays {-1, -1}, and its
 * validating write, syscall(SYS_write, -1, addr, 1), is answered by
 * reading that byte with process_vm_readv (rte_bt_peek): the same answer,
 * no descriptor. Its read(-1) then fails with EBADF and touches nothing.
 * Where the redirection cannot be made, libunwind is not used.
 *
 * This file uses nothing else of the shim, so the benchmark links it alone.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"

#define STR_(x) #x
#define STR(x) STR_(x) /* the real symbol name behind a libunwind macro */

static struct {
	int (*getcontext)(unw_context_t *);
	__typeof__(unw_init_local2) *init_local2;
	__typeof__(unw_step) *step;
	__typeof__(unw_get_reg) *get_reg;
	__typeof__(unw_set_caching_policy) *set_caching_policy;
	__typeof__(unw_flush_cache) *flush_cache;
	unw_addr_space_t *local_as;
	int (*backtrace)(void **, int); /* fast path, may be NULL */
} g_uw;
static int g_ready; /* atomic: 1 once g_uw is complete */
static int g_loading; /* atomic: 0 never tried, 1 loading or loaded, 2 failed */
static int g_no_fast; /* benchmark: always walk with unw_step */

/* dlsym, leaving no dlerror state behind on failure. */
static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		dlerror();
	return p;
}

/*
 * dlopen opens libunwind.so.8 and liblzma for a moment. In a program
 * started with fd 0, 1 or 2 closed, that would take the free standard
 * descriptor (another thread's read of stdin would read the library):
 * while we load them, every closed standard descriptor is held by
 * /dev/null, and released after. (libunwind's own pipe is never made: see
 * the top of this file.)
 */
static void plug_std(int plugged[3])
{
	for (int fd = 0; fd < 3; fd++) {
		plugged[fd] = 0;
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int p = open("/dev/null", O_RDONLY | O_CLOEXEC);

			if (p == fd)
				plugged[fd] = 1;
			else if (p >= 0)
				close(p);
		}
	}
}

static void unplug_std(const int plugged[3])
{
	for (int fd = 0; fd < 3; fd++)
		if (plugged[fd])
			close(fd);
}

static int init_plugged(int cached, void *(*open)(const char *, int),
                        int (*close)(void *));

/* ---- libunwind's address validation, without a descriptor ----------------- */

/* libunwind's pipe2(): no pipe, so that it never holds a descriptor. */
static int uw_pipe2(int fds[2], int flags)
{
	(void)fds;
	(void)flags;
	errno = EMFILE;
	return -1;
}

/* libunwind's syscall(): its validating write into the pipe it does not
 * have, write(-1, addr, 1), answered by reading that byte; every other
 * system call passed on. Async-signal-safe. */
static long uw_syscall(long nr, long a, long b, long c, long d, long e,
                       long f)
{
	char byte;

	/* The int arguments of a variadic call fill only the low half of
	 * each register. */
	if (nr == SYS_write && (int)a == -1 && (int)c == 1) {
		if (rte_bt_peek(&byte, (const void *)(uintptr_t)b, 1) == 1)
			return 1;
		errno = EFAULT;
		return -1;
	}
	return syscall(nr, a, b, c, d, e, f);
}

/* An address of the dynamic section: glibc has made most absolute. */
static uintptr_t dyn_addr(const struct link_map *lm, ElfW(Addr) p)
{
	return p < lm->l_addr ? lm->l_addr + p : p;
}

/* Store fn into the GOT slot at `slot`, inside lm's RELRO range or not. */
static int set_slot(const struct link_map *lm, void **slot, void *fn)
{
	const ElfW(Ehdr) *eh = (const void *)lm->l_addr;
	const ElfW(Phdr) *ph = (const void *)(lm->l_addr + eh->e_phoff);
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)slot & ~(pg - 1);

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uintptr_t lo = lm->l_addr + ph[i].p_vaddr;

		if (ph[i].p_type != PT_GNU_RELRO || (uintptr_t)slot < lo ||
		    (uintptr_t)slot >= lo + ph[i].p_memsz)
			continue;
		if (mprotect((void *)a, pg, PROT_READ | PROT_WRITE) < 0)
			return -1;
		__atomic_store_n(slot, fn, __ATOMIC_RELAXED);
		return mprotect((void *)a, pg, PROT_READ);
	}
	/* Relaxed: nothing of libunwind runs yet (it is being loaded). */
	__atomic_store_n(slot, fn, __ATOMIC_RELAXED);
	return 0;
}

/* Redirect lm's relocations `rel` (n of them) against pipe2 and syscall.
 * Returns the number redirected, or -1. */
static int redirect_rels(const struct link_map *lm, const ElfW(Rela) *rel,
                         size_t n, const ElfW(Sym) *sy, const char *str)
{
	int done = 0;

	for (size_t i = 0; i < n; i++) {
		const char *name = str + sy[ELF64_R_SYM(rel[i].r_info)].st_name;
		void *fn = !strcmp(name, "pipe2")     ? (void *)uw_pipe2
		           : !strcmp(name, "syscall") ? (void *)uw_syscall
		                                      : NULL;

		if (!fn || ELF64_R_SYM(rel[i].r_info) == 0)
			continue;
		if (set_slot(lm, (void **)(lm->l_addr + rel[i].r_offset), fn) < 0)
			return -1;
		done++;
	}
	return done;
}

/* Point libunwind's pipe2 and syscall at ours. Returns 0 when both are. */
static int redirect(void *h)
{
	const ElfW(Rela) *jmp = NULL, *rela = NULL;
	size_t njmp = 0, nrela = 0;
	const ElfW(Sym) *sy = NULL;
	const char *str = NULL;
	struct link_map *lm = NULL;
	int a, b;

	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) < 0 || !lm || !lm->l_addr)
		return -1;
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		uintptr_t p = dyn_addr(lm, d->d_un.d_ptr);

		if (d->d_tag == DT_SYMTAB)
			sy = (const void *)p;
		else if (d->d_tag == DT_STRTAB)
			str = (const void *)p;
		else if (d->d_tag == DT_JMPREL)
			jmp = (const void *)p;
		else if (d->d_tag == DT_PLTRELSZ)
			njmp = d->d_un.d_val / sizeof(ElfW(Rela));
		else if (d->d_tag == DT_RELA)
			rela = (const void *)p;
		else if (d->d_tag == DT_RELASZ)
			nrela = d->d_un.d_val / sizeof(ElfW(Rela));
	}
	if (!sy || !str)
		return -1;
	a = jmp ? redirect_rels(lm, jmp, njmp, sy, str) : 0;
	b = rela ? redirect_rels(lm, rela, nrela, sy, str) : 0;
	return a < 0 || b < 0 || a + b < 2 ? -1 : 0;
}

static int ready(void)
{
	/* Acquire: pairs with the release in init_plugged(). */
	return __atomic_load_n(&g_ready, __ATOMIC_ACQUIRE);
}

int rte_bt_loaded(void)
{
	return ready();
}

int rte_bt_init(int cached, void *(*open)(const char *, int),
                int (*close)(void *))
{
	int plugged[3], saved = errno, r;

	int none = 0;

	/* Acquire: pairs with the release in init_plugged(). */
	if (__atomic_load_n(&g_ready, __ATOMIC_ACQUIRE))
		return 0;
	/* One loader, and nobody waits for it: a thread that finds the load
	 * under way (or a fork child of a parent caught loading) goes on
	 * without libunwind. Acquire/relaxed: only the winner reads g_uw. */
	if (!__atomic_compare_exchange_n(&g_loading, &none, 1, 0,
	                                 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return ready() ? 0 : none == 2 ? -1 : 1;
	plug_std(plugged);
	r = open && close ? init_plugged(cached, open, close) : -1;
	unplug_std(plugged);
	if (r < 0)
		/* Relaxed: only tells later callers not to try again. */
		__atomic_store_n(&g_loading, 2, __ATOMIC_RELAXED);
	errno = saved;
	return r;
}

static int init_plugged(int cached, void *(*open)(const char *, int),
                        int (*close)(void *))
{
	void *h = open("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		dlerror();
		return -1;
	}
	if (redirect(h) < 0) {
		close(h);
		return -1;
	}
	*(void **)&g_uw.getcontext = sym(h, STR(unw_tdep_getcontext));
	*(void **)&g_uw.init_local2 = sym(h, STR(unw_init_local2));
	*(void **)&g_uw.step = sym(h, STR(unw_step));
	*(void **)&g_uw.get_reg = sym(h, STR(unw_get_reg));
	*(void **)&g_uw.set_caching_policy = sym(h, STR(unw_set_caching_policy));
	*(void **)&g_uw.flush_cache = sym(h, STR(unw_flush_cache));
	g_uw.local_as = sym(h, STR(unw_local_addr_space));
	*(void **)&g_uw.backtrace = sym(h, "unw_backtrace");
	if (!g_uw.getcontext || !g_uw.init_local2 || !g_uw.step ||
	    !g_uw.get_reg || !g_uw.set_caching_policy || !g_uw.flush_cache ||
	    !g_uw.local_as) {
		memset(&g_uw, 0, sizeof(g_uw));
		close(h);
		return -1;
	}
	rte_bt_set_cached(cached);
	/* Release: publishes g_uw; pairs with the acquire loads. */
	__atomic_store_n(&g_ready, 1, __ATOMIC_RELEASE);
	return 0;
}

void rte_bt_set_cached(int cached)
{
	if (g_uw.set_caching_policy)
		g_uw.set_caching_policy(*g_uw.local_as,
		                        cached ? UNW_CACHE_PER_THREAD
		                               : UNW_CACHE_NONE);
}

void rte_bt_set_fast(int fast)
{
	g_no_fast = !fast;
}

void rte_bt_flush(void)
{
	if (ready())
		g_uw.flush_cache(*g_uw.local_as, 0, 0);
}

/* Walk from an initialised cursor: the IP of each frame, at most max. */
static unsigned walk(unw_cursor_t *c, uint64_t *pcs, unsigned max,
                     unsigned skip)
{
	unsigned n = 0;
	unw_word_t ip;

	do {
		if (g_uw.get_reg(c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		if (skip) {
			skip--;
			continue;
		}
		pcs[n++] = (uint64_t)ip;
	} while (n < max && g_uw.step(c) > 0);
	return n;
}

/*
 * unw_backtrace() walks with libunwind's per-thread trace cache (frame
 * shapes keyed by address): after the first walk through some code, a
 * frame costs a hash lookup instead of a DWARF parse and the signal-mask
 * system calls libunwind makes around each parse. It starts from its
 * caller, so the frames before `from` (ours, and in a signal handler those
 * up to the signal frame) are dropped. Returns the number kept, or -1 if
 * `from` is not on the trace (the caller then walks the slow way).
 */
static __attribute__((noinline)) int fast(uint64_t from, unsigned skip,
                                          uint64_t *pcs, unsigned max)
{
	void *buf[RTE_BT_MAX + 32];
	int n, i = 0;
	unsigned k = 0;

	if (!g_uw.backtrace || g_no_fast)
		return -1;
	n = g_uw.backtrace(buf, (int)(sizeof(buf) / sizeof(buf[0])));
	if (from) {
		while (i < n && (uint64_t)(uintptr_t)buf[i] != from)
			i++;
		if (i == n)
			return -1;
	} else {
		/* buf[0] is in fast(), buf[1] in rte_bt_capture_here() */
		i = (int)skip + 2;
	}
	for (; i < n && k < max; i++)
		pcs[k++] = (uint64_t)(uintptr_t)buf[i];
	return (int)k;
}

int rte_bt_signal_regs(const void *uc, struct rte_bt_start_regs *r)
{
#if defined(__x86_64__)
	const ucontext_t *u = uc;

	r->pc = (uint64_t)u->uc_mcontext.gregs[REG_RIP];
	r->sp = (uint64_t)u->uc_mcontext.gregs[REG_RSP];
	r->fp = (uint64_t)u->uc_mcontext.gregs[REG_RBP];
	return 1;
#else
	(void)uc;
	(void)r;
	return 0;
#endif
}

unsigned rte_bt_capture_signal(void *uc, uint64_t *pcs, unsigned max,
                               int primed)
{
	struct rte_bt_start_regs r;
	unw_cursor_t c;

	if (!ready() || !uc || max == 0)
		return 0;
	if (primed && rte_bt_signal_regs(uc, &r)) {
		int n = r.pc && max + 32 <= RTE_BT_MAX + 32 ? fast(r.pc, 0, pcs, max)
		                                            : -1;

		/* A trace that stops right at the interrupted code tells
		 * nothing: walk the slow way from the signal frame. */
		if (n > 1)
			return (unsigned)n;
	}
	/* On x86-64 (and most Linux targets) unw_context_t is the kernel's
	 * ucontext_t: the signal frame's context starts the walk at the
	 * interrupted instruction, not in this handler. */
	if (g_uw.init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	return walk(&c, pcs, max, 0);
}

__attribute__((noinline)) unsigned rte_bt_capture_here(uint64_t *pcs,
                                                      unsigned max,
                                                      unsigned skip)
{
	unw_context_t uc;
	unw_cursor_t c;
	int n;

	if (!ready() || max == 0)
		return 0;
	if (max <= RTE_BT_MAX && skip < 16 && (n = fast(0, skip, pcs, max)) >= 0)
		return (unsigned)n;
	if (g_uw.getcontext(&uc) < 0 || g_uw.init_local2(&c, &uc, 0) < 0)
		return 0;
	/* Frame 0 is this function. */
	return walk(&c, pcs, max, skip + 1);
}

void rte_bt_prime(void)
{
	uint64_t pcs[4];

	rte_bt_capture_here(pcs, 4, 0);
}

size_t rte_bt_peek(void *dst, const void *src, size_t n)
{
	struct iovec l = {.iov_base = dst, .iov_len = n};
	struct iovec r = {.iov_base = (void *)(uintptr_t)src, .iov_len = n};
	long got;

	if (n == 0)
		return 0;
	/* A partial read stops at the first page that cannot be read. */
	got = syscall(SYS_process_vm_readv, getpid(), &l, 1UL, &r, 1UL, 0UL);
	return got > 0 ? (size_t)got : 0;
}

unsigned rte_bt_capture_signal_fp(void *uc, uint64_t *pcs, unsigned max)
{
	struct rte_bt_start_regs r;
	uint64_t fp, sp;
	unsigned n = 0;

	if (!uc || max == 0 || !rte_bt_signal_regs(uc, &r))
		return 0;
	pcs[n++] = r.pc;
	fp = r.fp;
	sp = r.sp;
	/* A frame is {saved rbp, return address}, above the stack pointer,
	 * 8-aligned, and each one above the last. */
	while (n < max && fp >= sp && !(fp & 7) &&
	       fp - sp < RTE_BT_FRAME_SPAN) {
		uint64_t fr[2];

		if (rte_bt_peek(fr, (const void *)(uintptr_t)fp,
		                sizeof(fr)) != sizeof(fr) ||
		    fr[1] == 0)
			break;
		pcs[n++] = fr[1];
		if (fr[0] <= fp)
			break;
		sp = fp + 16;
		fp = fr[0];
	}
	return n;
}
