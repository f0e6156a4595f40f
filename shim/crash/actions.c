/*
 * crash/actions.c - the signal actions of the crash recorder (handler.c):
 * our handlers installed, the program's own actions kept behind them
 * (its sigaction() and signal(), hooks/signals.c; what a vfork child
 * reads), the lock of those actions around fork, and our handler of the
 * terminating signals.
 *
 * Death by another signal (doc/DESIGN.md "Signals"): for
 * the signals whose default action ends the process (g_term), while their
 * disposition is SIG_DFL, our handler is in the kernel instead: it writes
 * rte.signal, stops as exit does (ring_stop, the file removed unless
 * PRESERVE), sets SIG_DFL and sends the signal again, which ends the
 * process with the same status. The program never sees it: sigaction()
 * reads SIG_DFL, a handler or SIG_IGN it sets goes to the kernel at once
 * (replacing ours), SIG_DFL brings ours back. A signal ignored when
 * tracing starts stays ignored in the kernel (and across exec); a handler
 * of ours is reset to SIG_DFL by exec, as SIG_DFL itself would be.
 *
 * Locks: g_prog_lock is taken with every signal blocked (no handler of
 * this thread can need it meanwhile) and around fork (atfork handlers),
 * so that no child inherits it held or rte_crash_prog half-written.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/single_threaded.h>
#include <unistd.h>

#include "clock.h"
#include "crash/crash.h"
#include "crash/recorder.h"
#include "forkvars.h"
#include "proc.h"
#include "rte/rte.h"
#include "tracer.h"

/* Signals whose default action ends the process (some with a core dump)
 * without being a crash of the code. SIGTRAP and SIGSYS are left to
 * debuggers and seccomp; real-time signals are not handled. */
static const int g_term[] = {SIGHUP,  SIGINT,    SIGQUIT,   SIGPIPE,
                             SIGALRM, SIGTERM,   SIGUSR1,   SIGUSR2,
                             SIGXCPU, SIGXFSZ,   SIGVTALRM, SIGPROF,
                             SIGIO,   SIGPWR,    SIGSTKFLT};
#define NTERM (sizeof(g_term) / sizeof(g_term[0]))

static int g_installed[SIGMAX];  /* atomic: our handler is in the kernel */
struct sigaction rte_crash_prog[SIGMAX]; /* the program's action */
static RTE_FORKVAR int g_prog_lock;          /* spin lock of rte_crash_prog, signals blocked */
static uint8_t g_is_term[SIGMAX]; /* atomic: one of g_term, managed */
static RTE_FORKVAR int g_fork_threaded;      /* the parent had threads (lock held) */


static int installed(int sig)
{
	/* Acquire: pairs with the release in rte_crash_install(): rte_crash_prog[sig] holds
	 * the program's action from then on. */
	return sig > 0 && sig < SIGMAX &&
	       __atomic_load_n(&g_installed[sig], __ATOMIC_ACQUIRE);
}

/* rte_crash_prog is changed by sigaction() calls of any thread, or of a signal
 * handler: a spin lock taken with every signal blocked. */
void rte_crash_prog_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	rte_real_sigmask(SIG_SETMASK, &all, old);
	/* Acquire: pairs with the release in rte_crash_prog_unlock(). */
	while (__atomic_exchange_n(&g_prog_lock, 1, __ATOMIC_ACQUIRE))
		;
}

void rte_crash_prog_unlock(const sigset_t *old)
{
	/* Release: our rte_crash_prog stores happen before the next holder's. */
	__atomic_store_n(&g_prog_lock, 0, __ATOMIC_RELEASE);
	rte_real_sigmask(SIG_SETMASK, old, NULL);
}

/* ---- death by a terminating signal ------------------------------------------- */

static void term_record(void *arg)
{
	int sig = *(const int *)arg;
	struct rte_ring_writer *w;

	/* A fork child that never wrote has no file, and keeps none without
	 * PRESERVE: nothing to do (as at its exit). Acquire: pairs with
	 * the tracer's release stores of the state. */
	if (rte_tracer_state() == ST_FORKED &&
	    !rte_tracer_config()->preserve)
		return;
	/* Forced as a fatal crash: also while paused, and over a write of
	 * this thread that the signal interrupted (it never resumes). */
	if (rte_crash_id_signal >= 0 && (w = rte_crash_enter_forced())) {
		rte_ring_write1(w, rte_hdr_make(0, 1, RTE_UMSG_INT,
		                                (unsigned)rte_crash_id_signal),
		                rte_clock_ns(), (uint64_t)sig);
		rte_leave();
	}
	rte_proc_note_exit(RTE_EXIT_SIGNAL, sig); /* for rte.exit */
	rte_tracer_stop(); /* ring_stop; the file removed unless PRESERVE */
}

/* Our handler of a g_term signal (its disposition is SIG_DFL for the
 * program): record, stop, and die by the same signal. */
static void on_term(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)uc;
	/* Not in a vfork child (it shares our memory, not our pid), nor
	 * inside our own recording (then: just die). */
	if (getpid() == rte_tracer_pid() && !t_recording) {
		t_recording = 1;
		t_first_sig = sig;
		rte_crash_run_with_room(term_record, &sig);
		t_recording = 0;
	}
	rte_crash_resend_default(sig, si);
	errno = saved;
}

static void our_action(struct sigaction *sa, int term)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = term ? on_term : rte_crash_on_crash;
	sa->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa->sa_mask);
}

/* The lock is taken once for all of them (two sigprocmask calls, not
 * forty: a short process feels each system call of its start). */
void rte_crash_install(void)
{
	struct sigaction sa, cur;
	sigset_t o;

	rte_crash_prog_lock(&o);
	our_action(&sa, 0);
	for (unsigned i = 0; i < NSIGS; i++) {
		int sig = rte_crash_sigs[i];

		if (rte_real_sigaction(sig, &sa, &rte_crash_prog[sig]) == 0)
			/* Release: pairs with installed(). */
			__atomic_store_n(&g_installed[sig], 1,
			                 __ATOMIC_RELEASE);
	}
	/* A terminating signal gets ours only while its disposition is the
	 * default; one the program ignores or handles stays as it is. */
	our_action(&sa, 1);
	for (unsigned i = 0; i < NTERM; i++) {
		int sig = g_term[i];

		/* Ours, then the program's back if it was not SIG_DFL: one
		 * call in the usual case. Every signal is blocked meanwhile:
		 * none can arrive to find ours in place of the program's. */
		if (rte_real_sigaction(sig, &sa, &cur) == 0) {
			if (cur.sa_handler == SIG_DFL)
				rte_crash_prog[sig] = cur;
			else
				rte_real_sigaction(sig, &cur, NULL);
		}
		/* Release: pairs with term_managed(); rte_crash_prog is set. */
		__atomic_store_n(&g_is_term[sig], 1, __ATOMIC_RELEASE);
	}
	rte_crash_prog_unlock(&o);
}

static int term_managed(int sig)
{
	/* Acquire: pairs with the release in rte_crash_install(). */
	return sig > 0 && sig < SIGMAX &&
	       __atomic_load_n(&g_is_term[sig], __ATOMIC_ACQUIRE);
}

/* sigaction() of a g_term signal: the kernel holds either ours (the
 * program's action is then SIG_DFL, kept in rte_crash_prog) or the program's. */
static int term_sigaction(int sig, const struct sigaction *act,
                          struct sigaction *old)
{
	struct sigaction a, cur, prev, ours;
	sigset_t o;
	int r = 0;

	if (act)
		a = *act; /* a bad pointer faults here, not under the lock */
	our_action(&ours, 1);
	rte_crash_prog_lock(&o);
	r = rte_real_sigaction(sig, NULL, &cur);
	if (r == 0) {
		int mine = (cur.sa_flags & SA_SIGINFO) &&
		           cur.sa_sigaction == on_term;

		prev = mine ? rte_crash_prog[sig] : cur;
		if (act && a.sa_handler == SIG_DFL) {
			rte_crash_prog[sig] = a;
			if (!mine)
				r = rte_real_sigaction(sig, &ours, NULL);
		} else if (act) {
			r = rte_real_sigaction(sig, &a, NULL);
		}
	}
	rte_crash_prog_unlock(&o);
	if (r == 0 && old)
		*old = prev;
	return r;
}

/* ---- the program's sigaction/signal (hooks/signals.c) ------------------------- */

int rte_crash_sigaction(int sig, const struct sigaction *act,
                        struct sigaction *old)
{
	struct sigaction a, prev;
	sigset_t o;

	if (term_managed(sig))
		return term_sigaction(sig, act, old);
	if (!installed(sig))
		return rte_real_sigaction(sig, act, old);
	if (act)
		a = *act; /* a bad pointer faults here, not under the lock */
	rte_crash_prog_lock(&o);
	prev = rte_crash_prog[sig];
	if (act)
		rte_crash_prog[sig] = a;
	rte_crash_prog_unlock(&o);
	if (old)
		*old = prev;
	return 0;
}

int rte_crash_signal_ours(int sig, sighandler_t h)
{
	return h != SIG_ERR &&
	       (installed(sig) || (h == SIG_DFL && term_managed(sig)));
}

sighandler_t rte_crash_signal_prev(sighandler_t r)
{
	struct sigaction ours;

	our_action(&ours, 1); /* the union: sa_handler is on_term's address */
	return r == ours.sa_handler ? SIG_DFL : r;
}

/* A vfork child's sigaction() and signal() go to the kernel alone (its
 * table is its own, our memory its parent's): an action of ours they
 * return is reported as the program's one we keep. */
static int ours(sighandler_t h)
{
	struct sigaction a, b;

	our_action(&a, 0);
	our_action(&b, 1); /* the union: sa_handler is the handler's address */
	return h == a.sa_handler || h == b.sa_handler;
}

void rte_crash_hide_action(int sig, struct sigaction *sa)
{
	sigset_t o;

	if (sig <= 0 || sig >= SIGMAX || !(sa->sa_flags & SA_SIGINFO) ||
	    !ours(sa->sa_handler))
		return;
	rte_crash_prog_lock(&o);
	*sa = rte_crash_prog[sig];
	rte_crash_prog_unlock(&o);
}

sighandler_t rte_crash_hide_handler(int sig, sighandler_t h)
{
	struct sigaction sa;

	if (h == SIG_ERR || !ours(h))
		return h;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = SA_SIGINFO;
	rte_crash_hide_action(sig, &sa);
	return sa.sa_handler;
}


/* ---- fork ------------------------------------------------------------------ */

/* Around fork (hooks/process.c's handlers, every signal blocked):
 * g_prog_lock is held, so the child never inherits it held by a thread
 * that does not exist there. */
void rte_crash_fork_lock(void)
{
	/* Acquire: pairs with the release in rte_crash_prog_unlock(). */
	while (__atomic_exchange_n(&g_prog_lock, 1, __ATOMIC_ACQUIRE))
		;
	/* Whether another thread could hold the loader's lock at fork. */
	g_fork_threaded = !__libc_single_threaded;
}

void rte_crash_fork_unlock_parent(void)
{
	/* Release: as in rte_crash_prog_unlock(). */
	__atomic_store_n(&g_prog_lock, 0, __ATOMIC_RELEASE);
}

/* No libc call here (see sys.h): errno is left alone. */
RTE_FORKTEXT void rte_crash_fork_unlock_child(void)
{
	rte_modules_fork_child(g_fork_threaded);
	/* Release: as in rte_crash_prog_unlock(). */
	__atomic_store_n(&g_prog_lock, 0, __ATOMIC_RELEASE);
}
