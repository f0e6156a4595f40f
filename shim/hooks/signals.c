/*
 * hooks/signals.c - the program's sigaction(), signal(), bsd_signal() and
 * sysv_signal(). The crash recorder (crash/actions.c) keeps the handler table: for
 * the signals it has installed handlers for (the crash signals, and the
 * terminating signals left at SIG_DFL) the program's actions are kept
 * there and chained from ours; the profiler (prof/actions.c) decides
 * first for its own signal; every other call goes to libc's through
 * real.h. The program never sees our handlers.
 *
 * In a vfork child every call goes to libc's alone: the child's table of
 * actions is its own, but our tables are its parent's memory (a child
 * resetting its handlers before exec, as CPython's subprocess does, would
 * reset the parent's). An action of ours the kernel returns there is
 * reported as the program's (rte_crash_hide_*, rte_prof_hide*).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "crash/crash.h"
#include "prof/profiler.h"
#include "tracer.h"

static int vforked_sigaction(int sig, const struct sigaction *act,
                             struct sigaction *old)
{
	int (*f)(int, const struct sigaction *, struct sigaction *);
	int r;

	rte_real_resolve();
	/* Relaxed: the pointer is the same whoever stores it. */
	f = __atomic_load_n(&rte_real.sigaction, __ATOMIC_RELAXED);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	r = f(sig, act, old);
	if (r == 0 && old) {
		rte_crash_hide_action(sig, old);
		rte_prof_hide_action(old);
	}
	return r;
}

RTE_EXPORT int sigaction(int sig, const struct sigaction *act,
                         struct sigaction *old)
{
	if (rte_tracer_vforked())
		return vforked_sigaction(sig, act, old);
	if (rte_prof_owns(sig)) /* prof/: the profiling signal */
		return rte_prof_sigaction(sig, act, old);
	return rte_crash_sigaction(sig, act, old);
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

/* Call the real signal-family function *slot (of struct rte_real). */
static sighandler_t real_signal(sighandler_t (**slot)(int, sighandler_t),
                                int sig, sighandler_t h)
{
	sighandler_t (*f)(int, sighandler_t);

	rte_real_resolve();
	/* Relaxed: the pointer is the same whoever stores it. */
	f = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (!f) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return f(sig, h);
}

static sighandler_t vforked_signal(sighandler_t (**slot)(int, sighandler_t),
                                  int sig, sighandler_t h)
{
	return rte_prof_hide(
		rte_crash_hide_handler(sig, real_signal(slot, sig, h)));
}

/* signal() and bsd_signal(): BSD semantics, as glibc's. Signals the
 * recorder does not keep go to libc's (which also honours
 * siginterrupt()), their previous handler reported as sigaction() would. */
RTE_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	sighandler_t prev;

	if (rte_tracer_vforked())
		return vforked_signal(&rte_real.signal, sig, h);
	if (rte_prof_signal(sig, h, &prev)) /* prof/: the profiling signal */
		return prev;
	if (!rte_crash_signal_ours(sig, h))
		return rte_prof_hide(rte_crash_signal_prev(
			real_signal(&rte_real.signal, sig, h)));
	return set_handler(sig, h, SA_RESTART);
}

sighandler_t bsd_signal(int sig, sighandler_t h); /* glibc declares none */
RTE_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	sighandler_t prev;

	if (rte_tracer_vforked())
		return vforked_signal(&rte_real.bsd_signal, sig, h);
	if (rte_prof_signal(sig, h, &prev)) /* prof/: the profiling signal */
		return prev;
	if (!rte_crash_signal_ours(sig, h))
		return rte_prof_hide(rte_crash_signal_prev(
			real_signal(&rte_real.bsd_signal, sig, h)));
	return set_handler(sig, h, SA_RESTART);
}

/* sysv_signal(): one-shot, not blocked in its handler, as glibc's. */
RTE_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	sighandler_t prev;

	if (rte_tracer_vforked())
		return vforked_signal(&rte_real.sysv_signal, sig, h);
	if (rte_prof_signal(sig, h, &prev)) /* prof/: the profiling signal */
		return prev;
	if (!rte_crash_signal_ours(sig, h))
		return rte_prof_hide(rte_crash_signal_prev(
			real_signal(&rte_real.sysv_signal, sig, h)));
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}
