/*
 * hooks/signals.c - the program's sigaction(), signal(), bsd_signal() and
 * sysv_signal(). The crash recorder (crash/handler.c) keeps the handler table: for
 * the signals it has installed handlers for (the crash signals, and the
 * terminating signals left at SIG_DFL) the program's actions are kept
 * there and chained from ours; every other call goes to libc's through
 * real.h. The program never sees our handlers.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "crash/crash.h"
#include "tracer.h"

RTE_EXPORT int sigaction(int sig, const struct sigaction *act,
                         struct sigaction *old)
{
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

/* signal() and bsd_signal(): BSD semantics, as glibc's. Signals the
 * recorder does not keep go to libc's (which also honours
 * siginterrupt()), their previous handler reported as sigaction() would. */
RTE_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	if (!rte_crash_signal_ours(sig, h))
		return rte_crash_signal_prev(
			real_signal(&rte_real.signal, sig, h));
	return set_handler(sig, h, SA_RESTART);
}

sighandler_t bsd_signal(int sig, sighandler_t h); /* glibc declares none */
RTE_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	if (!rte_crash_signal_ours(sig, h))
		return rte_crash_signal_prev(
			real_signal(&rte_real.bsd_signal, sig, h));
	return set_handler(sig, h, SA_RESTART);
}

/* sysv_signal(): one-shot, not blocked in its handler, as glibc's. */
RTE_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	if (!rte_crash_signal_ours(sig, h))
		return rte_crash_signal_prev(
			real_signal(&rte_real.sysv_signal, sig, h));
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}
