/*
 * crash.c - the crash flight recorder: when a traced program receives
 * SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, write rte.crash (signal,
 * si_code, fault address, the stack) on the crashing thread's ring, keep
 * the file, then let the signal do exactly what it would without us.
 *
 * The handler runs on an alternate signal stack (one per thread: the
 * thread that starts tracing, and every thread made by pthread_create
 * while tracing runs), so a stack overflow is caught too. The stacks are
 * mmap'd at thread start, never in the handler, and unmapped by a pthread
 * key destructor when the thread ends.
 *
 * Chaining: the program's own sigaction()/signal() calls for these five
 * signals are interposed once our handler is installed. Its handler is
 * kept here and called by ours after the event is written, with its own
 * flags (SA_SIGINFO, SA_RESETHAND) and mask; the kernel never sees it, so
 * it keeps working unchanged (even one that leaves with siglongjmp). When
 * the disposition is the default, the handler sets SIG_DFL and sends the
 * signal again to the thread; it stays pending until the handler returns,
 * and the kernel then ends the process with the original registers: the
 * same exit status and the same core dump as without the shim.
 *
 * RTE_BACKTRACE adds rte.backtrace events at fork and thread creation.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backtrace.h"
#include "clock.h"
#include "crash.h"
#include "rte/crash.h"
#include "rte/rte.h"
#include "shim.h"

/* Implemented in api.c: register an rte.* event (registry lock held). */
int rte_api_register_own(const char *name, enum rte_type type);

static const int g_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NSIGS (sizeof(g_sigs) / sizeof(g_sigs[0]))
#define SIGMAX 65

static unsigned g_mode;          /* RTE_BTM_*, atomic: see mode() */
static int g_id_crash = -1, g_id_bt = -1;
static int g_installed[SIGMAX];  /* atomic: our handler is in the kernel */
static struct sigaction g_prog[SIGMAX]; /* the program's action */
static int g_prog_lock;          /* spin lock of g_prog, signals blocked */
static int g_fatal;              /* atomic: a fatal crash was recorded */
static int (*g_real_sigaction)(int, const struct sigaction *,
                               struct sigaction *);
static pthread_key_t g_alt_key;
static int g_alt_key_ok;
static size_t g_alt_size;
static int g_once_alt;

/* Per-thread state, kept in struct rte_thread (shim.h), not in TLS. */
#define t_recording (rte_self.crash_recording) /* inside our own work */
#define t_first_sig (rte_self.crash_first_sig) /* signal being recorded */
#define t_chained (rte_self.crash_chained) /* inside the program's handler */
#define t_bt (rte_self.crash_bt)               /* record buffer */
_Static_assert(sizeof(struct rte_crash_rec) == 32, "rte/crash.h layout");
_Static_assert(sizeof(struct rte_backtrace_rec) == 24, "rte/crash.h layout");
_Static_assert(sizeof(struct rte_module_rec) == 32, "rte/crash.h layout");

/* RTE_BACKTRACE's bits, 0 until rte_crash_start() is done with the ids,
 * the stack size and the key. Acquire: pairs with its release store. */
static unsigned mode(void)
{
	return __atomic_load_n(&g_mode, __ATOMIC_ACQUIRE);
}

/* ---- the real sigaction --------------------------------------------------- */

static int real_sigaction(int sig, const struct sigaction *act,
                          struct sigaction *old)
{
	int (*f)(int, const struct sigaction *, struct sigaction *);

	/* Relaxed: the pointer is the same whoever stores it. */
	f = __atomic_load_n(&g_real_sigaction, __ATOMIC_RELAXED);
	if (!f) {
		*(void **)&f = rte_dlsym(RTLD_NEXT, "sigaction");
		if (!f) {
			errno = ENOSYS;
			return -1;
		}
		/* Relaxed: as the load above. */
		__atomic_store_n(&g_real_sigaction, f, __ATOMIC_RELAXED);
	}
	return f(sig, act, old);
}

static int installed(int sig)
{
	/* Acquire: pairs with the release in install(): g_prog[sig] holds
	 * the program's action from then on. */
	return sig > 0 && sig < SIGMAX &&
	       __atomic_load_n(&g_installed[sig], __ATOMIC_ACQUIRE);
}

/* g_prog is changed by sigaction() calls of any thread, or of a signal
 * handler: a spin lock taken with every signal blocked. */
static void prog_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
	/* Acquire: pairs with the release in prog_unlock(). */
	while (__atomic_exchange_n(&g_prog_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void prog_unlock(const sigset_t *old)
{
	/* Release: our g_prog stores happen before the next holder's. */
	__atomic_store_n(&g_prog_lock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* ---- events ----------------------------------------------------------------- */

static uint64_t custom_hdr(int id)
{
	return rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, (unsigned)id);
}

static struct rte_ring_writer *enter_forced(void)
{
	struct rte_ring_writer *w;

	/* Acquire: pairs with the release stores of rte_g_state. */
	if (__atomic_load_n(&rte_g_state, __ATOMIC_ACQUIRE) == ST_FORKED)
		rte_core_materialize();
	if (__atomic_load_n(&rte_g_state, __ATOMIC_ACQUIRE) != ST_RUNNING)
		return NULL;
	/* The interrupted write (if any) never resumes: take the ring. */
	rte_self.busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	w = rte_core_attach(0);
	if (!w)
		rte_leave();
	return w;
}

int rte_crash_emit(int id, const void *bytes, size_t n, int force)
{
	struct rte_ring_writer *w;
	int r;

	if (id < 0)
		return -1;
	w = force ? enter_forced() : rte_enter();
	if (!w)
		return -1;
	r = rte_core_write_custom(w, custom_hdr(id), bytes, n);
	rte_leave();
	return r;
}

/* Encoding buffer of stack records (used only inside a write of this
 * thread, like core.c's own). */
#define t_enc (rte_self.crash_enc)

/*
 * Write a stack record (rte.crash or rte.backtrace: `head` bytes of fixed
 * part whose bytes 2-3 are the frame count, then 8 bytes a frame). In a
 * ring too small for all of it, frames are dropped from the end and the
 * count fixed, so the record stays well-formed. Stamped when written,
 * like every event (a ring's timestamps never go back): after the module
 * events a crash writes first.
 */
static int emit_stack(int id, uint64_t *rec, size_t head, unsigned frames,
                      int force)
{
	struct rte_ring_writer *w;
	size_t max, n, words;
	uint16_t nf;
	int r;

	if (id < 0)
		return -1;
	w = force ? enter_forced() : rte_enter();
	if (!w)
		return -1;
	max = (size_t)(w->mask + 1 - 2) * 8 - 1;
	if (max > RTE_CUSTOM_MAX_BYTES)
		max = RTE_CUSTOM_MAX_BYTES;
	r = -1;
	if (max >= head) {
		if (head + (size_t)frames * 8 > max)
			frames = (unsigned)((max - head) / 8);
		nf = (uint16_t)frames;
		memcpy((char *)rec + 2, &nf, 2);
		n = head + (size_t)frames * 8;
		words = rte_custom_encode(rec, n, t_enc);
		r = rte_ring_write(w, custom_hdr(id), rte_clock_ns(), t_enc,
		                   (unsigned)words);
	}
	rte_leave();
	return r;
}

/* ---- alternate signal stacks ---------------------------------------------- */

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

void rte_crash_thread_start(void)
{
	size_t guard = (size_t)sysconf(_SC_PAGESIZE);
	stack_t cur, ss;
	char *base;
	int saved = errno;

	if (!(mode() & RTE_BTM_CRASH))
		return;
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

/* ---- the handler ------------------------------------------------------------ */

/* The signal again, with its default action: pending while we run (it is
 * blocked in its own handler), delivered by the kernel once the handler
 * returns, with the registers of the interrupted code. With its original
 * siginfo (si_code, si_addr; a process may queue any to itself), so that
 * even the core dump's signal information is the one the fault made. */
static void resend_default(int sig, siginfo_t *si)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	real_sigaction(sig, &dfl, NULL);
	if (!si || syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig,
	                   si) < 0)
		syscall(SYS_tgkill, getpid(), gettid(), sig);
}

/* A fault inside our own recording of signal `first`: the process ends
 * by `first` at once, as it would have without us. */
static void die_by(int first)
{
	sigset_t one;

	resend_default(first, NULL);
	sigemptyset(&one);
	sigaddset(&one, first);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

/* 1 if running on the alternate signal stack, or if the thread has none
 * (then a handler runs on the thread's stack and cannot be told apart). */
static int on_altstack_or_none(void)
{
	stack_t cur;

	return sigaltstack(NULL, &cur) == 0 &&
	       (cur.ss_flags & (SS_ONSTACK | SS_DISABLE));
}

static void record(int sig, const siginfo_t *si, void *uc, uint32_t flags)
{
	struct rte_crash_rec *r = (struct rte_crash_rec *)t_bt;
	unsigned n;

	if (flags & RTE_CRASH_FATAL)
		rte_modules_resend(); /* the first ones may be overwritten */
	else
		rte_modules_sync(1);
	memset(r, 0, sizeof(*r));
	r->version = RTE_CRASH_VERSION;
	r->signo = sig;
	r->code = si->si_code;
	r->tid = (int32_t)gettid();
	r->flags = flags;
	if (si->si_code <= 0)
		r->sender = (int32_t)si->si_pid;
	if (sig != SIGABRT)
		r->addr = (uint64_t)(uintptr_t)si->si_addr;
	n = rte_bt_capture_signal(uc, t_bt + 4, RTE_BT_MAX);
	emit_stack(g_id_crash, t_bt, sizeof(*r), n,
	           (flags & RTE_CRASH_FATAL) != 0);
}

/* Call the program's handler as the kernel would have. */
static void chain(int sig, siginfo_t *si, void *uc, struct sigaction *p)
{
	sigset_t mask, old;

	if (p->sa_flags & SA_RESETHAND) {
		sigset_t o;

		prog_lock(&o);
		g_prog[sig].sa_handler = SIG_DFL;
		g_prog[sig].sa_flags &= ~SA_SIGINFO;
		prog_unlock(&o);
	}
	mask = p->sa_mask;
	if (!(p->sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	if (p->sa_flags & SA_NODEFER) {
		/* Our own delivery blocked it; theirs would not have. */
		sigemptyset(&mask);
		sigaddset(&mask, sig);
		pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
	}
	t_chained++;
	if (p->sa_flags & SA_SIGINFO)
		p->sa_sigaction(sig, si, uc);
	else
		p->sa_handler(sig);
	t_chained--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction p;
	sigset_t o;
	int program, async = si->si_code <= 0;

	if (t_recording) {
		die_by(t_first_sig);
		resend_default(sig, si); /* if `first` could not kill us */
		goto out;
	}
	prog_lock(&o);
	p = g_prog[sig];
	prog_unlock(&o);
	/* sa_handler and sa_sigaction share their storage. */
	program = p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN;
	if (!program && p.sa_handler == SIG_IGN && async)
		goto out; /* sent by someone and ignored: nothing happens */
	/* A vfork child shares our memory (and this thread's ring) but not
	 * our pid: it must neither write nor mark the parent's file. */
	if (getpid() != rte_g_pid)
		goto pass;
	t_recording = 1;
	t_first_sig = sig;
	record(sig, si, uc, program ? RTE_CRASH_HANDLED : RTE_CRASH_FATAL);
	t_recording = 0;
	if (!program)
		/* Release: pairs with the acquire in rte_crash_keep_file(). */
		__atomic_store_n(&g_fatal, 1, __ATOMIC_RELEASE);
pass:
	if (program)
		chain(sig, si, uc, &p);
	else
		resend_default(sig, si);
out:
	errno = saved;
}

int rte_crash_keep_file(void)
{
	/* Acquire: pairs with the release in on_crash(). */
	return __atomic_load_n(&g_fatal, __ATOMIC_ACQUIRE) ||
	       (t_chained > 0 && on_altstack_or_none());
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < NSIGS; i++) {
		int sig = g_sigs[i];
		sigset_t o;

		prog_lock(&o);
		if (real_sigaction(sig, &sa, &g_prog[sig]) == 0)
			/* Release: pairs with installed(). */
			__atomic_store_n(&g_installed[sig], 1,
			                 __ATOMIC_RELEASE);
		prog_unlock(&o);
	}
}

/* ---- the program's sigaction/signal ---------------------------------------- */

RTE_EXPORT int sigaction(int sig, const struct sigaction *act,
                         struct sigaction *old)
{
	struct sigaction a, prev;
	sigset_t o;

	if (!installed(sig))
		return real_sigaction(sig, act, old);
	if (act)
		a = *act; /* a bad pointer faults here, not under the lock */
	prog_lock(&o);
	prev = g_prog[sig];
	if (act)
		g_prog[sig] = a;
	prog_unlock(&o);
	if (old)
		*old = prev;
	return 0;
}

static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

static sighandler_t real_signal(const char *name, int sig, sighandler_t h)
{
	sighandler_t (*f)(int, sighandler_t);

	*(void **)&f = rte_dlsym(RTLD_NEXT, name);
	if (!f) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return f(sig, h);
}

/* signal() and bsd_signal(): BSD semantics, as glibc's. Other signals
 * than ours go to libc's (which also honours siginterrupt()). */
RTE_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	if (!installed(sig) || h == SIG_ERR)
		return real_signal("signal", sig, h);
	return set_handler(sig, h, SA_RESTART);
}

sighandler_t bsd_signal(int sig, sighandler_t h);
RTE_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	if (!installed(sig) || h == SIG_ERR)
		return real_signal("bsd_signal", sig, h);
	return set_handler(sig, h, SA_RESTART);
}

/* sysv_signal(): one-shot, not blocked in its handler, as glibc's. */
RTE_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	if (!installed(sig) || h == SIG_ERR)
		return real_signal("sysv_signal", sig, h);
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

/* ---- RTE_BACKTRACE ----------------------------------------------------------- */

static unsigned parse_mode(const char *s)
{
	unsigned m = RTE_BTM_CRASH;

	if (!s || !*s || !strcmp(s, "0") || !strcmp(s, "crash"))
		return m;
	if (!strcmp(s, "off") || !strcmp(s, "none"))
		return 0;
	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == 3 && !strncmp(s, "all", 3))
			m |= RTE_BTM_FORK | RTE_BTM_THREAD;
		else if (n == 4 && !strncmp(s, "fork", 4))
			m |= RTE_BTM_FORK;
		else if (n == 6 && !strncmp(s, "thread", 6))
			m |= RTE_BTM_THREAD;
		else if (!(n == 5 && !strncmp(s, "crash", 5)))
			rte_warn(NULL, "RTE_BACKTRACE: ignoring '%.*s' (crash, "
			         "fork, thread, all or off)",
			         (int)(n > 32 ? 32 : n), s);
		s += n;
		if (*s == ',')
			s++;
	}
	return m;
}

static void write_bt(uint32_t kind, int64_t data, int32_t tid,
                     const uint64_t *pcs, unsigned n)
{
	struct rte_backtrace_rec r;

	if (g_id_bt < 0 || rte_self.busy)
		return;
	rte_modules_sync(0);
	memset(&r, 0, sizeof(r));
	r.version = RTE_BACKTRACE_VERSION;
	r.nframes = (uint16_t)n;
	r.kind = kind;
	r.data = data;
	r.tid = tid;
	/* t_bt is free here: only a crash handler of this thread uses it
	 * too, and it would never return into this write. */
	memcpy(t_bt, &r, sizeof(r));
	memcpy((char *)t_bt + sizeof(r), pcs, (size_t)n * 8);
	emit_stack(g_id_bt, t_bt, sizeof(r), n, 0);
}

void rte_crash_fork_parent(pid_t child)
{
	uint64_t pcs[RTE_BT_MAX];
	unsigned n;
	int saved = errno;

	if (!(mode() & RTE_BTM_FORK))
		return;
	/* Skip this hook and the fork() wrapper: the program's frames. */
	n = rte_bt_capture_here(pcs, RTE_BT_MAX, 2);
	write_bt(RTE_BT_FORK, child, (int32_t)gettid(), pcs, n);
	errno = saved;
}

/* The creator's stack travels to the new thread in a slot of a static
 * pool (no malloc at thread creation); when all slots are in flight the
 * thread simply starts without it. */
#define BT_SLOTS 32
struct bt_start {
	void *(*fn)(void *);
	void *arg;
	int ring;
	int32_t tid;
	unsigned n;
	uint64_t pcs[RTE_BT_MAX];
};
static struct bt_start g_bt_pool[BT_SLOTS];
static uint8_t g_bt_used[BT_SLOTS]; /* atomic */

static void *bt_trampoline(void *p)
{
	struct bt_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	write_bt(RTE_BT_THREAD, s->ring, s->tid, s->pcs, s->n);
	/* Release: we are done reading the slot; pairs with the acquire
	 * CAS in rte_crash_thread_wrap(). */
	__atomic_store_n(&g_bt_used[s - g_bt_pool], 0, __ATOMIC_RELEASE);
	return fn(arg);
}

void rte_crash_thread_wrap(void *(**fn)(void *), void **arg)
{
	int saved = errno;

	if (!(mode() & RTE_BTM_THREAD))
		return;
	for (unsigned i = 0; i < BT_SLOTS; i++) {
		uint8_t free_ = 0;
		struct bt_start *s = &g_bt_pool[i];

		/* Acquire: pairs with the release in bt_trampoline(). */
		if (!__atomic_compare_exchange_n(&g_bt_used[i], &free_, 1, 0,
		                                 __ATOMIC_ACQUIRE,
		                                 __ATOMIC_RELAXED))
			continue;
		s->fn = *fn;
		s->arg = *arg;
		s->ring = rte_self.ring;
		s->tid = (int32_t)gettid();
		/* Skip this hook and the pthread_create wrapper. */
		s->n = rte_bt_capture_here(s->pcs, RTE_BT_MAX, 2);
		*fn = bt_trampoline;
		*arg = s;
		break;
	}
	errno = saved;
}

void rte_crash_thread_unwrap(void *(*fn)(void *), void *arg)
{
	struct bt_start *s = arg;

	if (fn == bt_trampoline)
		/* Release: as in bt_trampoline(). */
		__atomic_store_n(&g_bt_used[s - g_bt_pool], 0,
		                 __ATOMIC_RELEASE);
}

/* ---- start ---------------------------------------------------------------- */

void rte_crash_start(void)
{
	long min = sysconf(_SC_MINSIGSTKSZ);

	unsigned m = parse_mode(secure_getenv("RTE_BACKTRACE"));

	if (!m)
		return;
	g_id_crash = rte_api_register_own("rte.crash", RTE_TYPE_CUSTOM);
	if (m & (RTE_BTM_FORK | RTE_BTM_THREAD))
		g_id_bt = rte_api_register_own("rte.backtrace",
		                               RTE_TYPE_CUSTOM);
	rte_modules_register();
	if (rte_bt_init(1) < 0)
		rte_warn(NULL, "libunwind.so.8 cannot be loaded: crashes are "
		         "recorded without their stack");
	/* 64 KiB: libunwind's walk plus a program handler chained from ours
	 * (mapped lazily: untouched pages cost nothing). */
	g_alt_size = 64u << 10;
	if (min > 0 && (size_t)min * 4 > g_alt_size)
		g_alt_size = (size_t)min * 4;
	g_alt_key_ok = pthread_key_create(&g_alt_key, alt_free) == 0;
	/* Release: publishes the ids, g_alt_size and the key to the hooks of
	 * other threads; pairs with mode(). */
	__atomic_store_n(&g_mode, m, __ATOMIC_RELEASE);
	rte_crash_thread_start();
	install();
	rte_modules_sync(0);
}

/* Resolve the real sigaction early: a program may call sigaction from a
 * signal handler before tracing ever starts. */
__attribute__((constructor)) static void crash_init(void)
{
	int saved = errno;

	real_sigaction(SIGSEGV, NULL, NULL);
	errno = saved;
}
