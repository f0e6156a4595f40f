/*
 * prof/profiler.c - the CPU profiler (RTE_PROFILE=HZ): one POSIX CPU-time
 * timer (or perf event) per thread, a signal handler that captures the interrupted stack
 * and writes it as rte.sample (rte/profile.h) on that thread's ring.
 *
 * Timers. Each thread gets a timer on its own CPU clock
 * (CLOCK_THREAD_CPUTIME_ID at creation), delivered to it alone
 * (SIGEV_THREAD_ID): it fires only while the thread runs, every 1/HZ s of
 * its CPU time, so a sleeping thread costs nothing and a blocked call is
 * interrupted only when a sample falls due just as it goes to sleep. The
 * raw system calls are used (no glibc timer bookkeeping): all of this is
 * async-signal-safe. A thread is armed when it gets a ring (its start, or
 * its first event for threads older than tracing), its timer deleted at
 * its end, before exec and at exit; a fork child arms the forking thread.
 *
 * Blocked signal. While a thread blocks the signal its timer is stopped
 * (PT_BLOCKED), so that a program that blocks every signal (a "signal
 * thread" design: sigpending, sigtimedwait, signalfd on all of them) never
 * sees ours: hooks/masks.c reports each pthread_sigmask/sigprocmask of the
 * program (rte_prof_thread_masked), a thread armed with the signal blocked
 * (made by a thread that blocks it, or with pthread_attr_setsigmask_np)
 * starts stopped, and a sample that fell due just before the block is
 * taken back (drain_pending). The thread's CPU time while stopped is not
 * profiled. Masks the kernel sets for a handler (sa_mask) or for the
 * duration of a call (sigsuspend, ppoll, pselect, epoll_pwait) are not
 * seen; the thread sleeps in those calls, and its CPU-time timer with it.
 *
 * Every timer id is also kept in a registry (prof/reg.c), so that one
 * thread can delete them all: at exit, or when the program takes the
 * signal over.
 *
 * The perf clock (RTE_PROFILE_CLOCK=perf, prof/perf.c): the same with a
 * per-thread perf_event cpu-clock descriptor in place of the timer (the
 * rate asked, where the timer is bound to the kernel's tick), its
 * overflows delivered to the thread as the signal with si_code POLL_IN
 * and si_fd the descriptor; stopped and started with
 * PERF_EVENT_IOC_DISABLE/ENABLE, closed where a timer is deleted, and by
 * a fork child for its parent's copies. A thread whose event cannot be
 * opened gets the timer. Tried once at start: if it fails there, or the
 * rate is above 10 kHz, the timer, with one warning.
 *
 * The signal. RTE_PROFILE_SIGNAL (default SIGRTMAX-2: real-time signals
 * are rarely used by programs, glibc keeps the first ones for itself,
 * programs and libraries that use them allocate from SIGRTMIN up, and
 * Valgrind takes SIGRTMAX; SIGPROF is what gprof, gperftools and
 * self-profiling programs use). SA_RESTART. If the program already has a
 * handler (or SIG_IGN) on it when tracing starts, profiling is off with
 * one warning; if it installs one later (sigaction, signal), every timer
 * is deleted, profiling stops with one warning and the program gets the
 * signal.
 *
 * Weights. Each sample carries the thread's CPU time since its previous
 * written sample: a sample dropped because the thread was inside a write
 * (the busy flag: counted in rte.dropped) leaves its time to the next one,
 * so the total weight is the thread's CPU time while profiled.
 *
 * Wall mode (RTE_PROFILE_MODE=wall, prof/wall.c): no clock per thread;
 * each armed thread takes a slot of the wall sampler, which signals it
 * when it runs (the handler below, the sample's weight its wall time) and
 * writes a blocked one's samples itself (wall_blocked). Masks, fork, exec
 * and the program's taking the signal over act on the slot as they do on
 * a timer.
 *
 * Stacks: libunwind with its per-thread cache (backtrace.c; its
 * thread-local storage is allocated when the thread is armed, never in
 * the handler), or the frame-pointer walk (RTE_PROFILE_STACK=fp; always
 * where the loader's lock may belong to a thread that is gone, crash/modules.c,
 * and under ThreadSanitizer). Both end short on code they cannot unwind,
 * never fault.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "clock.h"
#include "fd.h"
#include "forkvars.h"
#include "log.h"
#include "crash/crash.h"
#include "parse.h"
#include "perf.h"
#include "prof/actions.h"
#include "profiler.h"
#include "reg.h"
#include "rte/profile.h"
#include "rte/rte.h"
#include "sys.h"
#include "tracer.h"
#include "btscan.h"
#include "wall.h"

_Static_assert(sizeof(struct rte_sample_rec) == 24, "rte/profile.h layout");
_Static_assert(RTE_PROFILE_MAX_FRAMES <= RTE_BT_MAX, "frames");

static unsigned g_hz;           /* 0: profiling off (set at start) */
int rte_prof_sig;               /* the profiling signal */
static int g_fp;                /* RTE_PROFILE_STACK=fp */
static int g_perf;              /* RTE_PROFILE_CLOCK=perf, and it works */
static uint32_t g_clock;        /* RTE_SAMPLE_* flags of every sample */
static int g_id = -1;           /* rte.sample */
RTE_FORKVAR int rte_prof_on;                /* atomic: our handler is in the kernel */
int rte_prof_stopped;           /* atomic: exit or the program took it */
static int g_once_timer;
static int g_wall;              /* RTE_PROFILE_MODE=wall */

/* ---- per-thread timers ----------------------------------------------------- */

/* PT_BLOCKED: the timer exists but is stopped (the thread blocks the
 * signal). */
enum { PT_NONE = 0, PT_ARMED, PT_DONE, PT_BLOCKED };

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int active(void)
{
	/* Acquire: pairs with the releases in rte_prof_start(). */
	return __atomic_load_n(&rte_prof_on, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&rte_prof_stopped, __ATOMIC_RELAXED);
}

/* Start (on) or stop the calling thread's timer or perf event `id`. */
static int set_timer(int id, int on)
{
	struct rte_thread *t = rte_self_p;
	struct itimerspec its;
	uint64_t ns = on ? 1000000000u / g_hz : 0;

	its.it_interval.tv_sec = (time_t)(ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(ns % 1000000000u);
	its.it_value = its.it_interval;
	if (g_wall && t) {
		rte_wall_mask(t->prof_slot, !on);
		return 0;
	}
	if (t && t->prof_perf && t->prof_timer == id)
		return rte_perf_ours(id, rte_prof_sig, t->prof_perf_id)
		               ? rte_perf_enable(id, on)
		               : -1;
	return (int)syscall(SYS_timer_settime, id, 0, &its, NULL);
}

/* 1 if the calling thread blocks the signal now (no libc call). */
static int sig_blocked(void)
{
	sigset_t cur;

	sigemptyset(&cur);
	if (rte_sys_sigmask(SIG_BLOCK, NULL, &cur) < 0)
		return 0;
	return sigismember(&cur, rte_prof_sig) == 1;
}

static void disarm(struct rte_thread *t);

static void arm(struct rte_thread *t)
{
	struct sigevent ev;
	int id = -1;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = rte_prof_sig;
	ev._sigev_un._tid = gettid(); /* sigev_notify_thread_id */
	t->prof_state = PT_DONE; /* unless all goes well */
	t->prof_perf = 0;
	if (g_wall && (rte_wall_is_sampler() ||
	               !(t->prof_slot = rte_wall_add(sig_blocked())))) {
		if (!rte_wall_is_sampler())
			rte_warn(&g_once_timer, "RTE_PROFILE_MODE=wall: more "
			         "than %u threads at once; thread %d is not "
			         "profiled", RTE_WALL_SLOTS, (int)gettid());
		return;
	}
	if (g_perf) {
		int fd = rte_perf_open(g_hz, rte_prof_sig, gettid(), &t->prof_perf_id);

		if (fd >= 0) {
			t->prof_perf = 1;
			id = fd;
		} else {
			rte_warn(&g_once_timer, "RTE_PROFILE_CLOCK=perf: cannot "
			         "open the perf event of thread %d: %s; that "
			         "thread is profiled by the timer",
			         (int)gettid(), strerrordesc_np(errno));
		}
	}
	if (!g_wall && !t->prof_perf &&
	    syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &id) < 0) {
		rte_warn(&g_once_timer, "RTE_PROFILE: cannot create the "
		         "profiling timer of thread %d: %s; that thread is not "
		         "profiled", (int)gettid(), strerrordesc_np(errno));
		return;
	}
	if (!g_wall)
		t->prof_slot = rte_prof_reg_add(t->prof_perf ? -2 - id : id,
		                                t->prof_perf_id);
	if (!t->prof_slot) {
		rte_prof_reg_kill(t->prof_perf ? -2 - id : id, t->prof_perf_id, rte_prof_sig);
		rte_warn(&g_once_timer, "RTE_PROFILE: more than %u threads "
		         "at once; thread %d is not profiled", RTE_PROF_REG_SLOTS,
		         (int)gettid());
		return;
	}
	/* libunwind keeps its caches in thread-local storage of a library
	 * loaded with dlopen: the first use in each thread allocates it with
	 * malloc, which the signal handler must never do. Here, not there.
	 * Not where libunwind's own locks cannot be trusted (a fork child of
	 * a threaded parent: another thread may have held one at the fork,
	 * and it would wait for ever); such a thread is walked by its frame
	 * pointers, or, if the walk is allowed later, the slow way. */
	t->prof_primed = 0;
	if (!g_fp && rte_modules_loader_ok() && !rte_wall_spawning()) {
		rte_bt_prime();
		t->prof_primed = 1;
	}
	t->prof_timer = id;
	t->prof_last = thread_cpu_ns();
	if (sig_blocked()) {
		t->prof_state = PT_BLOCKED; /* started when unblocked */
		return;
	}
	t->prof_state = PT_ARMED;
	/* Keeps the state stores before the first signal. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (set_timer(id, 1) < 0) {
		t->prof_state = PT_ARMED; /* disarm() frees what it has */
		disarm(t);
	}
}

void rte_prof_thread_arm(void)
{
	struct rte_thread *t = rte_self_p;
	int saved = errno;

	if (!t || t->prof_state != PT_NONE || !active())
		return;
	arm(t);
	errno = saved;
}

static void disarm(struct rte_thread *t)
{
	if (t->prof_state != PT_ARMED && t->prof_state != PT_BLOCKED)
		return;
	t->prof_state = PT_DONE;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (g_wall)
		rte_wall_remove(t->prof_slot);
	else
		rte_prof_reg_delete(t->prof_slot, rte_prof_sig);
}

void rte_prof_thread_end(void)
{
	int saved = errno;

	if (rte_self_p)
		disarm(rte_self_p);
	errno = saved;
}

RTE_FORKTEXT void rte_prof_fork_child(void)
{
	struct rte_thread *t = rte_self_p;
	int saved;

	/* The registry reads zero here (wiped; in perf mode, forgotten
	 * here); so does our state. */
	if (!t || !active())
		return;
	saved = errno;
	rte_prof_reg_forget_all(rte_prof_sig);
	rte_tracer_settle(); /* the child's own state, before we use it */
	t->prof_state = PT_NONE;
	if (g_wall && rte_wall_fork_child() < 0) {
		t->prof_state = PT_DONE;
		errno = saved;
		return;
	}
	arm(t);
	/* The child's file, made now, gets the module events its samples
	 * are symbolised with (a sample's handler cannot write them). Only
	 * tries the module lock: the recorder re-makes it after us. */
	rte_modules_sync(1);
	errno = saved;
}

/* A sample of a deleted timer may still be pending for this thread when
 * the signal is blocked: take it now, so that it never reaches the next
 * image (where its action is the default: termination). */
static void drain_pending(void)
{
	sigset_t pend, one;
	struct timespec zero = {0, 0};

	if (sigpending(&pend) < 0 || !sigismember(&pend, rte_prof_sig))
		return;
	sigemptyset(&one);
	sigaddset(&one, rte_prof_sig);
	while (sigtimedwait(&one, NULL, &zero) == rte_prof_sig)
		;
}

RTE_FORKTEXT void rte_prof_exec_begin(void)
{
	int saved = errno;

	/* Off: nothing armed (and a fork child is not settled for nothing). */
	if (!__atomic_load_n(&rte_prof_on, __ATOMIC_ACQUIRE))
		return;
	/* Not in a vfork child: the state and the timer are its parent's. */
	if (getpid() != rte_tracer_pid()) {
		errno = saved;
		return;
	}
	if (rte_self_p && (rte_self_p->prof_state == PT_ARMED ||
	                   rte_self_p->prof_state == PT_BLOCKED)) {
		disarm(rte_self_p);
		drain_pending();
		rte_self_p->prof_state = PT_NONE;
	}
	errno = saved;
}

RTE_FORKTEXT void rte_prof_exec_failed(void)
{
	/* Acquire: as in rte_prof_exec_begin(). */
	if (__atomic_load_n(&rte_prof_on, __ATOMIC_ACQUIRE) &&
	    getpid() == rte_tracer_pid()) /* not in a vfork child */
		rte_prof_thread_arm();
}

int rte_prof_mask_signal(void)
{
	return active() ? rte_prof_sig : 0;
}

void rte_prof_thread_masked(int blocked)
{
	struct rte_thread *t = rte_self_p;
	int saved = errno;

	/* Nothing to change (the common case), or in a vfork child (the
	 * state and the timer are its parent's thread's). */
	if (!t || !active() ||
	    t->prof_state != (blocked ? PT_ARMED : PT_BLOCKED) ||
	    rte_tracer_vforked())
		return;
	if (blocked) {
		/* Samples from here on are ignored (rte_prof_on_sample), then none
		 * falls due, then the one that may have is taken back. */
		t->prof_state = PT_BLOCKED;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		set_timer(t->prof_timer, 0);
		drain_pending();
	} else {
		t->prof_last = thread_cpu_ns(); /* the stopped time is not ours */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->prof_state = PT_ARMED;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (set_timer(t->prof_timer, 1) < 0)
			disarm(t);
	}
	errno = saved;
}

void rte_prof_thread_check(void)
{
	if (active() && rte_self_p && rte_self_p->prof_state != PT_NONE &&
	    rte_self_p->prof_state != PT_DONE)
		rte_prof_thread_masked(sig_blocked());
}

void rte_prof_stop(void)
{
	int saved = errno;

	if (!__atomic_load_n(&rte_prof_on, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&rte_prof_stopped, 1, __ATOMIC_RELAXED);
	rte_prof_reg_delete_all(rte_prof_sig);
	if (g_wall)
		rte_wall_stop();
	errno = saved;
}

/* ---- the handler ------------------------------------------------------------- */

static uint64_t sample_hdr(void)
{
	return rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, (unsigned)g_id);
}

void rte_prof_on_sample(int sig, siginfo_t *si, void *uc)
{
	struct rte_thread *t = rte_self_p;
	struct rte_ring_writer *w;
	struct rte_sample_rec *r;
	uint64_t now, wall_ns = 0;
	unsigned n;
	int saved = errno;

	(void)sig;
	/* Only our own timer's signals: a kill() from elsewhere, or a late
	 * one of a deleted timer, is ignored. */
	if (!t || t->prof_state != PT_ARMED ||
	    (g_wall ? !rte_wall_ours(si, &wall_ns)
	     : t->prof_perf ? si->si_code != POLL_IN || si->si_fd != t->prof_timer
	                    : si->si_code != SI_TIMER ||
	                              si->si_timerid != t->prof_timer))
		goto out;
	if (!active()) {
		disarm(t);
		goto out;
	}
	if (!(w = rte_enter())) {
		/* Busy (a write of this thread was interrupted: dropped and
		 * counted by rte_enter, its time goes to the next sample),
		 * or not writing (paused): that time is not profiled. */
		if (!t->busy)
			t->prof_last = thread_cpu_ns();
		goto out;
	}
	now = thread_cpu_ns();
	r = (struct rte_sample_rec *)t->prof_rec;
	n = !g_fp && rte_modules_loader_ok()
	            ? rte_bt_capture_signal(uc, t->prof_rec + 3,
	                                    RTE_PROFILE_MAX_FRAMES, t->prof_primed)
	            : rte_bt_capture_signal_fp(uc, t->prof_rec + 3,
	                                       RTE_PROFILE_MAX_FRAMES);
	r->version = RTE_SAMPLE_VERSION;
	r->nframes = (uint16_t)n;
	r->flags = (n >= RTE_PROFILE_MAX_FRAMES ? RTE_STACK_TRUNCATED : 0) |
	           (t->prof_perf ? RTE_SAMPLE_PERF
	                         : g_clock & ~(uint32_t)RTE_SAMPLE_PERF);
	r->cpu_ns = g_wall ? wall_ns : now - t->prof_last;
	if (g_wall)
		r->flags = (r->flags & RTE_STACK_TRUNCATED) | RTE_SAMPLE_WALL;
	r->tid = (int32_t)gettid();
	r->hz = g_hz;
	t->prof_last = now;
	rte_tracer_write_custom(w, sample_hdr(), t->prof_rec,
	                        sizeof(*r) + (size_t)n * 8);
	rte_leave_w(w);
out:
	errno = saved;
}

/* Wall mode: the sampler's sample of a thread blocked in system call nr
 * (wall.h), its stack scanned from its stack pointer (btscan.c: the
 * return addresses there, then its frame-pointer chain), on the
 * sampler's own ring. */
static uint64_t g_wall_rec[3 + RTE_BT_MAX];

static void wall_blocked(pid_t tid, uint64_t ns, int nr, uint64_t sp,
                         uint64_t pc)
{
	struct rte_sample_rec *r = (struct rte_sample_rec *)g_wall_rec;
	struct rte_ring_writer *w;
	ucontext_t uc;
	unsigned n;

	if (!active() || !(w = rte_enter()))
		return;
	memset(&uc, 0, sizeof uc);
#if defined(__x86_64__)
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	n = rte_bt_capture_signal_scan(&uc, g_wall_rec + 3, RTE_PROFILE_MAX_FRAMES);
#else
	(void)sp;
	g_wall_rec[3] = pc;
	n = 1;
#endif
	r->version = RTE_SAMPLE_VERSION;
	r->nframes = (uint16_t)n;
	r->flags = RTE_SAMPLE_WALL | RTE_SAMPLE_BLOCKED |
	           (n >= RTE_PROFILE_MAX_FRAMES ? RTE_STACK_TRUNCATED : 0) |
	           (uint32_t)((nr + 1) & 0xffff) << RTE_SAMPLE_SYSCALL_SHIFT;
	r->cpu_ns = ns;
	r->tid = (int32_t)tid;
	r->hz = g_hz;
	rte_tracer_write_custom(w, sample_hdr(), g_wall_rec,
	                        sizeof(*r) + (size_t)n * 8);
	rte_leave_w(w);
}

/* RTE_PROFILE_MODE: cpu (default) or wall. */
static int parse_mode(const char *m)
{
	if (!m || !*m || !strcmp(m, "cpu"))
		return 0;
	if (!strcmp(m, "wall"))
		return 1;
	rte_warn(NULL, "RTE_PROFILE_MODE: ignoring '%.32s' (cpu or wall); "
	         "profiling CPU time", m);
	return 0;
}

/* ---- start ------------------------------------------------------------------- */

void rte_prof_start(void)
{
	struct sigaction cur, sa;
	unsigned hz = rte_prof_parse_hz(secure_getenv("RTE_PROFILE"));
	const char *s = secure_getenv("RTE_PROFILE_SIGNAL");
	const char *stack = secure_getenv("RTE_PROFILE_STACK");
	const char *clk = secure_getenv("RTE_PROFILE_CLOCK");

	if (!hz || __atomic_load_n(&rte_prof_on, __ATOMIC_RELAXED))
		return;
	if (!(rte_prof_sig = rte_prof_parse_sig(s))) {
		rte_warn(NULL, "RTE_PROFILE_SIGNAL: '%.32s' is not a real-time "
		         "signal (RTMIN+N, RTMAX-N or a number), PROF, VTALRM, "
		         "USR1 or USR2; profiling is off", s);
		return;
	}
	g_fp = stack && !strcmp(stack, "fp");
	if (stack && *stack && !g_fp && strcmp(stack, "unwind"))
		rte_warn(NULL, "RTE_PROFILE_STACK: ignoring '%.32s' (unwind or "
		         "fp)", stack);
	/* ThreadSanitizer runs a handler late, at its next interceptor, with
	 * a copy of the context of the signal's arrival: libunwind would walk
	 * a stack that has moved on (and may fault); the frame-pointer walk
	 * reads through rte_bt_peek and never faults. */
	if (rte_dlsym(RTLD_DEFAULT, "__tsan_init"))
		g_fp = 1;
	/* What the program sees (crash.c's view for the signals it keeps). */
	if (rte_crash_sigaction(rte_prof_sig, NULL, &cur) < 0 || cur.sa_handler != SIG_DFL) {
		rte_warn(NULL, "RTE_PROFILE: the program already handles signal "
		         "%d; profiling is off (RTE_PROFILE_SIGNAL chooses "
		         "another signal)", rte_prof_sig);
		return;
	}
	rte_prof_prog = cur;
	g_hz = hz;
	g_wall = parse_mode(secure_getenv("RTE_PROFILE_MODE"));
	if (g_wall && clk && *clk && strcmp(clk, "timer"))
		rte_warn(NULL, "RTE_PROFILE_CLOCK: ignored in wall mode "
		         "(RTE_PROFILE_MODE=wall samples by wall time)");
	if (!g_wall)
		g_clock = rte_prof_choose_clock(clk, g_hz, rte_prof_sig, &g_perf);
	else if (rte_log_to_file())
		rte_warn(NULL, "RTE_PROFILE: %u Hz of wall time (RTE_PROFILE_MODE="
		         "wall; one sampler thread, rte-wall)", g_hz);
	g_id = rte_tracer_register_own(RTE_SAMPLE_EV, RTE_TYPE_CUSTOM);
	rte_modules_register(); /* symbols of the stacks (same ids if set) */
	rte_bt_init(1, rte_real.dlopen, rte_real.dlclose);
	rte_modules_sync(0);
	if (!g_wall)
		rte_prof_reg_map(g_perf);
	if (g_id < 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = rte_prof_on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (rte_real_sigaction(rte_prof_sig, &sa, NULL) < 0)
		return;
	if (g_wall && rte_wall_start(g_hz, rte_prof_sig, wall_blocked,
	                             rte_prof_thread_end) < 0) {
		rte_warn(NULL, "RTE_PROFILE_MODE=wall: cannot start the sampler "
		         "thread: %s; profiling is off", strerrordesc_np(errno));
		rte_real_sigaction(rte_prof_sig, &rte_prof_prog, NULL);
		return;
	}
	/* Release: publishes the settings to every thread's hooks. */
	__atomic_store_n(&rte_prof_on, 1, __ATOMIC_RELEASE);
	rte_prof_thread_arm();
}
