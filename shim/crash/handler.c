/*
 * crash/handler.c - the crash flight recorder: when a traced program receives
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
 * Stacks: the handler records on a stack with room. When it runs on a
 * small alternate stack of the program's own, it moves to this thread's
 * stack of ours for the recording (every signal but the crash ones
 * blocked meanwhile). A program handler installed without SA_ONSTACK is
 * called on the interrupted stack, as the kernel would have called it
 * (rte_call_on_stack moves the stack pointer there); while it runs, the
 * alternate stack is registered shortened below our own frames, so that
 * a signal delivered to it meanwhile cannot overwrite them.
 *
 * The loader's lock: in a fork child that may have inherited it held
 * (modules.c), the stack is walked by frame pointers and the modules come
 * from the table the parent recorded; the handler never waits on a lock.
 *
 * Our own mapping: a SIGBUS whose address is in the ring file's mapping
 * (the file was truncated under us) maps anonymous memory over the
 * mapping, disables tracing with one warning, and returns: the faulting
 * store is made again, into that memory, and the program goes on.
 *
 * The signal actions (installed, the program's kept, the terminating
 * signals) are actions.c's; the events and RTE_BACKTRACE stacks.c's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "sys.h"
#include "backtrace.h"
#include "btscan.h"
#include "clock.h"
#include "crash/altstack.h"
#include "crash/crash.h"
#include "crash/recorder.h"
#include "forkvars.h"
#include "proc.h"
#include "rte/crash.h"
#include "rte/rte.h"
#include "tracer.h"

const int rte_crash_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
/* Least stack the recording needs (libunwind's walk, the encoding). */
#define ROOM (32u << 10)
/* The functions that run on the stack the program's handler gets (a small
 * alternate stack of the program's, maybe): no sanitizer instrumentation,
 * whose redzones would double their frames. */

static RTE_FORKVAR unsigned g_mode;          /* RTE_BTM_*, atomic: see rte_crash_mode() */
static int g_id_crash = -1;
int rte_crash_id_bt = -1;
static int g_fatal;              /* atomic: a fatal crash was recorded */
int rte_crash_id_signal = -1;     /* rte.signal */
static int g_ring_lost;          /* atomic: our mapping faulted */
static int g_once_lost;
static size_t g_page = 4096;     /* set at start */

_Static_assert(sizeof(struct rte_crash_rec) == 32, "rte/crash.h layout");
_Static_assert(sizeof(struct rte_backtrace_rec) == 24, "rte/crash.h layout");
_Static_assert(sizeof(struct rte_module_rec) == 32, "rte/crash.h layout");

/* RTE_BACKTRACE's bits, 0 until rte_crash_start() is done with the ids,
 * the stack size and the key. Acquire: pairs with its release store. */
unsigned rte_crash_mode(void)
{
	return __atomic_load_n(&g_mode, __ATOMIC_ACQUIRE);
}

/* ---- running on another stack -------------------------------------------- */

#if defined(__x86_64__)
/* rte_call_on_stack(sp, fn, arg): fn(arg) with the stack pointer at sp
 * (16-aligned), then back. The frame keeps %rbp as the CFA, so unwinders
 * (and frame-pointer walks) go through it to the caller. */
void rte_call_on_stack(void *sp, void (*fn)(void *), void *arg);
__asm__(".text\n"
        ".p2align 4\n"
        ".globl rte_call_on_stack\n"
        ".hidden rte_call_on_stack\n"
        ".type rte_call_on_stack, @function\n"
        "rte_call_on_stack:\n"
        ".cfi_startproc\n"
        "\tpushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "\tmovq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "\tmovq %rdi, %rsp\n"
        "\tmovq %rdx, %rdi\n"
        "\tcallq *%rsi\n"
        "\tmovq %rbp, %rsp\n"
        "\tpopq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "\tret\n"
        ".cfi_endproc\n"
        ".size rte_call_on_stack, .-rte_call_on_stack\n");
#define HAVE_STACK_SWITCH 1
#else
#define HAVE_STACK_SWITCH 0
#endif

/* sigprocmask on the kernel's 64-bit set (8 bytes of stack, not 128). */
static LEAN void kmask(int how, const unsigned long *set, unsigned long *old)
{
	syscall(SYS_rt_sigprocmask, how, set, old, sizeof(unsigned long));
}

static LEAN unsigned long kbit(int sig)
{
	return 1UL << (sig - 1);
}

/* glibc's internal signals (cancellation, setxid) are never blocked. */
#define KMASK_INTERNAL ((1UL << 31) | (1UL << 32))

/* The current alternate stack, by the system call itself (no sanitizer
 * interceptor in between, whose frame would need room too). */
static LEAN int cur_altstack(stack_t *cur)
{
	return (int)syscall(SYS_sigaltstack, NULL, cur);
}

/*
 * Run fn(arg) from a signal handler on a stack with at least ROOM bytes
 * free: in place when the handler runs on the thread's own stack (its
 * room cannot be known, and it was enough before), on our alternate
 * stack, or on an alternate stack of the program's that is big enough;
 * otherwise on our alternate stack of this thread, with every signal but
 * the crash ones blocked (a signal delivered to the registered alternate
 * stack meanwhile would land on the handler's frames). Returns 0 if fn
 * ran, -1 if there was no room for it. Lean: on a small stack of the
 * program's, its own frame is all it uses there.
 */
LEAN int rte_crash_run_with_room(void (*fn)(void *), void *arg)
{
	stack_t cur;
	char *mine = rte_alt_own();
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);

	if (cur_altstack(&cur) < 0 || !(cur.ss_flags & SS_ONSTACK) ||
	    (mine && (char *)cur.ss_sp == mine + g_page) ||
	    here - (uintptr_t)cur.ss_sp >= ROOM) {
		fn(arg);
		return 0;
	}
#if HAVE_STACK_SWITCH
	if (mine) {
		unsigned long block = ~KMASK_INTERNAL, old;

		for (unsigned i = 0; i < NSIGS; i++)
			block &= ~kbit(rte_crash_sigs[i]);
		kmask(SIG_SETMASK, &block, &old);
		rte_call_on_stack(mine + g_page + rte_alt_size(), fn, arg);
		kmask(SIG_SETMASK, &old, NULL);
		return 0;
	}
#endif
	return -1;
}

/* ---- the handler ------------------------------------------------------------ */

/* The signal again, with its default action: pending while we run (it is
 * blocked in its own handler), delivered by the kernel once the handler
 * returns, with the registers of the interrupted code. With its original
 * siginfo (si_code, si_addr; a process may queue any to itself), so that
 * even the core dump's signal information is the one the fault made. */
void rte_crash_resend_default(int sig, siginfo_t *si)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	rte_real_sigaction(sig, &dfl, NULL);
	if (!si || syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig,
	                   si) < 0)
		syscall(SYS_tgkill, getpid(), gettid(), sig);
}

/* A fault inside our own recording of signal `first`: the process ends
 * by `first` at once, as it would have without us. */
static void die_by(int first)
{
	sigset_t one;

	rte_crash_resend_default(first, NULL);
	sigemptyset(&one);
	sigaddset(&one, first);
	rte_real_sigmask(SIG_UNBLOCK, &one, NULL);
}

/* 1 if running on the alternate signal stack, or if the thread has none
 * (then a handler runs on the thread's stack and cannot be told apart). */
static int on_altstack_or_none(void)
{
	stack_t cur;

	return sigaltstack(NULL, &cur) == 0 &&
	       (cur.ss_flags & (SS_ONSTACK | SS_DISABLE));
}

struct rec {
	int sig;
	const siginfo_t *si;
	void *uc;
	uint32_t flags;
};

/* Without libunwind: the scan, or the plain frame-pointer walk when that
 * finds more (a scan misled by a word that only looks like a return
 * address). Fills pcs (RTE_BT_MAX) and returns the count. */
static unsigned scan_or_fp(void *uc, uint64_t *pcs)
{
	uint64_t fp[RTE_BT_MAX];
	unsigned n = rte_bt_capture_signal_scan(uc, pcs, RTE_BT_MAX);
	unsigned m = rte_bt_capture_signal_fp(uc, fp, RTE_BT_MAX);

	if (m > n) {
		memcpy(pcs, fp, (size_t)m * 8);
		n = m;
	}
	return n;
}

static void record(void *arg)
{
	const struct rec *a = arg;
	struct rte_crash_rec *r = (struct rte_crash_rec *)t_bt;
	int loader = rte_modules_loader_ok();
	unsigned n;

	if (a->flags & RTE_CRASH_FATAL)
		rte_modules_resend(); /* the first ones may be overwritten */
	else
		rte_modules_sync(1);
	memset(r, 0, sizeof(*r));
	r->version = RTE_CRASH_VERSION;
	r->signo = a->sig;
	r->code = a->si->si_code;
	r->tid = (int32_t)gettid();
	r->flags = a->flags;
	if (a->si->si_code <= 0)
		r->sender = (int32_t)a->si->si_pid;
	if (a->sig != SIGABRT)
		r->addr = (uint64_t)(uintptr_t)a->si->si_addr;
	/* libunwind reads unwind tables through dl_iterate_phdr: not where
	 * the loader's lock may be held by a thread that is gone. Frame by
	 * frame (primed 0): whether this thread has libunwind's trace cache
	 * is not known here, and making it would call malloc (backtrace.h).
	 * Before libunwind is loaded (see rte_crash_unwind_load()), and if it finds
	 * nothing, the frame-pointer walk with a scan for frames without
	 * one: a handler never loads libunwind (dlopen). */
	n = loader ? rte_bt_capture_signal(a->uc, t_bt + 4, RTE_BT_MAX, 0) : 0;
	if (n == 0)
		n = scan_or_fp(a->uc, t_bt + 4);
	rte_crash_emit_stack(g_id_crash, t_bt, sizeof(*r), n,
	                     (a->flags & RTE_CRASH_FATAL) != 0);
}

/* The program's action, as much of it as calling its handler needs: kept
 * small, because these frames stay on the stack while it runs (on a small
 * alternate stack of the program's, every byte of ours is one it lacks). */
struct pact {
	union {
		void (*h)(int);
		void (*a)(int, siginfo_t *, void *);
	} fn;
	int flags;
	unsigned long mask; /* the kernel's signal set: bit sig - 1 */
};

static LEAN void call_program(int sig, siginfo_t *si, void *uc,
                         const struct pact *p)
{
	if (p->flags & SA_SIGINFO)
		p->fn.a(sig, si, uc);
	else
		p->fn.h(sig);
}

struct call {
	int sig;
	siginfo_t *si;
	void *uc;
	const struct pact *p;
	stack_t alt, shortened; /* the alternate stack, and while it runs */
};

/* On the program's stack: the alternate stack shortened below our
 * frames while the program's handler runs, then given back whole. */
static void call_shortened(void *arg)
{
	const struct call *c = arg;

	sigaltstack(&c->shortened, NULL);
	call_program(c->sig, c->si, c->uc, c->p);
	sigaltstack(&c->alt, NULL);
}

/* A handler without SA_ONSTACK, while we run on an alternate stack: the
 * kernel would have run it on the interrupted stack, below its red zone.
 * Returns 0 if it was called there. */
static __attribute__((noinline)) int
call_on_interrupted(int sig, siginfo_t *si, void *uc, const struct pact *p)
{
#if HAVE_STACK_SWITCH
	struct call c = {.sig = sig, .si = si, .uc = uc, .p = p};
	const ucontext_t *u = uc;
	size_t guard = g_page;
	uintptr_t sp, low = (uintptr_t)__builtin_frame_address(0) - 1024;
	char *mine = rte_alt_own();

	if (!u || sigaltstack(NULL, &c.alt) < 0 ||
	    !(c.alt.ss_flags & SS_ONSTACK))
		return -1;
	c.alt.ss_flags = 0;
	/* A program handler that left ours with siglongjmp left it short:
	 * ours is known whole. */
	if (mine && (char *)c.alt.ss_sp == mine + guard)
		c.alt.ss_size = rte_alt_size();
	c.shortened = c.alt;
	if (low > (uintptr_t)c.alt.ss_sp + (size_t)sysconf(_SC_MINSIGSTKSZ))
		c.shortened.ss_size = low - (uintptr_t)c.alt.ss_sp;
	else
		c.shortened.ss_flags = SS_DISABLE;
	sp = (uintptr_t)u->uc_mcontext.gregs[REG_RSP];
	/* Interrupted on the alternate stack itself (a handler of the
	 * program's running there): the kernel would have stayed on it,
	 * below our frames, which is where we are. */
	if (sp >= (uintptr_t)c.alt.ss_sp &&
	    sp <= (uintptr_t)c.alt.ss_sp + c.alt.ss_size)
		return -1;
	sp = (sp - 128 - 64) & ~(uintptr_t)15;
	t_chain_sp = sp;
	rte_call_on_stack((void *)sp, call_shortened, &c);
	t_chain_sp = 0;
	return 0;
#else
	(void)sig;
	(void)si;
	(void)uc;
	(void)p;
	return -1;
#endif
}

/* SA_RESETHAND: the program's action is SIG_DFL from now on. */
static __attribute__((noinline)) void reset_hand(int sig)
{
	sigset_t o;

	rte_crash_prog_lock(&o);
	rte_crash_prog[sig].sa_handler = SIG_DFL;
	rte_crash_prog[sig].sa_flags &= ~SA_SIGINFO;
	rte_crash_prog_unlock(&o);
}

/* Call the program's handler as the kernel would have: its mask, its
 * flags, its stack. */
static LEAN void chain(int sig, siginfo_t *si, void *uc, const struct pact *p)
{
	unsigned long mask, old;

	if (p->flags & SA_RESETHAND)
		reset_hand(sig);
	mask = p->mask & ~KMASK_INTERNAL;
	if (!(p->flags & SA_NODEFER))
		mask |= kbit(sig);
	kmask(SIG_BLOCK, &mask, &old);
	if (p->flags & SA_NODEFER) {
		/* Our own delivery blocked it; theirs would not have. */
		mask = kbit(sig);
		kmask(SIG_UNBLOCK, &mask, NULL);
	}
	t_chained++;
	if ((p->flags & SA_ONSTACK) || call_on_interrupted(sig, si, uc, p) < 0)
		call_program(sig, si, uc, p);
	t_chained--;
	kmask(SIG_SETMASK, &old, NULL);
}

/* 1 if the fault is a SIGBUS on our own ring mapping (the file was
 * truncated, or its disk space lost): the mapping is replaced by
 * anonymous memory of the same size (once; a thread that faults while
 * another is replacing it faults again until it is done), tracing is
 * disabled, and the caller returns so that the store is made again. */
static int ring_fault(int sig, const siginfo_t *si)
{
	/* Relaxed: the mapping is published before any thread can write
	 * to it; a fault on it implies we see it. */
	char *base = __atomic_load_n(&rte_tracer_file()->base,
	                             __ATOMIC_RELAXED);
	char *a = si->si_addr;
	size_t size = (size_t)rte_tracer_file()->l.total_size;

	if (sig != SIGBUS || si->si_code <= 0 || !base || a < base ||
	    a >= base + size)
		return 0;
	/* Acq_rel: one replacer. */
	if (!__atomic_exchange_n(&g_ring_lost, 1, __ATOMIC_ACQ_REL)) {
		mmap(base, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		     -1, 0);
		rte_tracer_lost();
	}
	return 1;
}

static void warn_lost(void *unused)
{
	(void)unused;
	rte_warn(&g_once_lost, "%s lost its disk blocks under the program "
	         "(truncated?); tracing disabled", rte_tracer_file()->path);
}

struct work {
	int sig;
	siginfo_t *si;
	void *uc;
	int room;     /* on a stack with room to record */
	int call;     /* out: 1 if the program's handler is to be called */
	struct pact pa;
};

/* All of the handler but the call of the program's: returns 1 if that is
 * to be made (*pa filled). Runs on a stack with room when there is one
 * (rte_crash_run_with_room): its frames are gone before the program's handler is
 * called. */
static int crash_work(int sig, siginfo_t *si, void *uc, struct pact *pa,
                      int room)
{
	struct sigaction p;
	sigset_t o;
	int program, async = si->si_code <= 0;
	struct rec r = {.sig = sig, .si = si, .uc = uc};

	if (ring_fault(sig, si)) {
		if (room)
			warn_lost(NULL);
		return 0;
	}
	if (t_recording) {
		die_by(t_first_sig);
		rte_crash_resend_default(sig, si); /* if `first` could not kill us */
		return 0;
	}
	rte_crash_prog_lock(&o);
	p = rte_crash_prog[sig];
	rte_crash_prog_unlock(&o);
	/* sa_handler and sa_sigaction share their storage. */
	program = p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN;
	if (!program && p.sa_handler == SIG_IGN && async)
		return 0; /* sent by someone and ignored: nothing happens */
	/* A vfork child shares our memory (and this thread's ring) but not
	 * our pid: it must neither write nor mark the parent's file. */
	if (room && getpid() == rte_tracer_pid() && (rte_crash_mode() & RTE_BTM_CRASH)) {
		t_recording = 1;
		t_first_sig = sig;
		r.flags = program ? RTE_CRASH_HANDLED : RTE_CRASH_FATAL;
		record(&r);
		if (!program) {
			/* No ring_stop follows: the end is written here. */
			struct rte_exit_rec x;

			rte_proc_note_exit(RTE_EXIT_SIGNAL, sig);
			rte_proc_exit_rec(&x);
			rte_crash_emit(rte_tracer_own_id(RTE_OWN_EXIT), &x,
			               sizeof(x), 1);
		}
		/* A crash record is kept: the sweep must leave it (file.h). */
		rte_file_keep(rte_tracer_file());
		t_recording = 0;
		if (!program)
			/* Release: pairs with the acquire in
			 * rte_crash_keep_file(). */
			__atomic_store_n(&g_fatal, 1, __ATOMIC_RELEASE);
	}
	if (!program) {
		rte_crash_resend_default(sig, si);
		return 0;
	}
	if (p.sa_flags & SA_SIGINFO)
		pa->fn.a = p.sa_sigaction;
	else
		pa->fn.h = p.sa_handler;
	pa->flags = p.sa_flags;
	memcpy(&pa->mask, &p.sa_mask, sizeof(pa->mask));
	return 1;
}

static void crash_cb(void *arg)
{
	struct work *w = arg;

	w->call = crash_work(w->sig, w->si, w->uc, &w->pa, w->room);
}

LEAN void rte_crash_on_crash(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct work w = {.sig = sig, .si = si, .uc = uc, .room = 1};

	if (rte_crash_run_with_room(crash_cb, &w) < 0) {
		/* No room to record: only pass the signal on. */
		w.room = 0;
		crash_cb(&w);
	}
	if (w.call)
		chain(sig, si, uc, &w.pa);
	errno = saved;
}

int rte_crash_keep_file(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);

	/* Acquire: pairs with the release in rte_crash_on_crash(). */
	return __atomic_load_n(&g_fatal, __ATOMIC_ACQUIRE) ||
	       (t_chained > 0 &&
	        (on_altstack_or_none() || (t_chain_sp && here < t_chain_sp)));
}

/* ---- start ---------------------------------------------------------------- */

/* The recorder proper (RTE_BACKTRACE other than off): events, libunwind
 * if fork or thread stacks are asked for, the stack size and the key,
 * then the calling thread's stack. */
static void start_recorder(unsigned m)
{
	g_page = (size_t)sysconf(_SC_PAGESIZE);
	g_id_crash = rte_tracer_register_own("rte.crash", RTE_TYPE_CUSTOM);
	if (m & (RTE_BTM_FORK | RTE_BTM_THREAD))
		rte_crash_id_bt = rte_tracer_register_own("rte.backtrace",
		                               RTE_TYPE_CUSTOM);
	rte_modules_register();
	if (m & (RTE_BTM_FORK | RTE_BTM_THREAD))
		rte_crash_unwind_load();
	rte_alt_init();
	/* Release: publishes the ids and the alternate stacks' size and key
	 * to the hooks of other threads; pairs with rte_crash_mode(). */
	__atomic_store_n(&g_mode, m, __ATOMIC_RELEASE);
	rte_crash_alt_start();
}

void rte_crash_start(void)
{
	unsigned m = rte_config_backtrace();

	rte_crash_id_signal = rte_tracer_register_own("rte.signal", RTE_TYPE_INT);
	if (m)
		start_recorder(m);
	/* The handlers are installed whatever the mode: a truncated file
	 * (SIGBUS) and death by a terminating signal need them. */
	rte_crash_install();
	if (m)
		rte_modules_sync(0);
}

