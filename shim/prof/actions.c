/*
 * prof/actions.c - the CPU profiler's signal as the program sees it
 * (profiler.c installs our handler on it): the program's own action kept
 * behind ours, its sigaction() and signal() (hooks/signals.c), what a
 * vfork child reads, and the profiler's retreat when the program installs
 * its own handler.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

#include "log.h"
#include "prof/actions.h"
#include "profiler.h"
#include "reg.h"
#include "wall.h"
#include "tracer.h"

struct sigaction rte_prof_prog; /* the program's view of the signal */
static int g_prog_lock;         /* spin lock of rte_prof_prog, signals blocked */
static int g_once_yield;

/* ---- the program's calls on the signal ----------------------------------------- */

static void prog_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	rte_real_sigmask(SIG_SETMASK, &all, old);
	/* Acquire: pairs with the release in prog_unlock(). */
	while (__atomic_exchange_n(&g_prog_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void prog_unlock(const sigset_t *old)
{
	__atomic_store_n(&g_prog_lock, 0, __ATOMIC_RELEASE);
	rte_real_sigmask(SIG_SETMASK, old, NULL);
}

int rte_prof_owns(int sig)
{
	/* Acquire: pairs with the release in rte_prof_start(), which
	 * publishes rte_prof_sig. */
	return sig > 0 && __atomic_load_n(&rte_prof_on, __ATOMIC_ACQUIRE) == 1 &&
	       sig == rte_prof_sig;
}

/* The program takes the signal: no timer of ours may fire any more. */
static void yield(int sig)
{
	/* Relaxed: one thread does the work; a racing caller's own real
	 * call comes after ours or replaces it, both being the program's. */
	if (__atomic_exchange_n(&rte_prof_on, 2, __ATOMIC_ACQ_REL) != 1)
		return;
	__atomic_store_n(&rte_prof_stopped, 1, __ATOMIC_RELAXED);
	rte_prof_reg_delete_all(rte_prof_sig);
	rte_wall_stop(); /* wall mode: no signal of ours on its way */
	rte_warn(&g_once_yield, "RTE_PROFILE: the program installed its own "
	         "handler of signal %d; profiling stopped "
	         "(RTE_PROFILE_SIGNAL chooses another signal)", sig);
}

int rte_prof_sigaction(int sig, const struct sigaction *act,
                       struct sigaction *old)
{
	struct sigaction a, prev;
	sigset_t o;

	if (act)
		a = *act; /* a bad pointer faults here, not under the lock */
	prog_lock(&o);
	prev = rte_prof_prog;
	if (act && a.sa_handler == SIG_DFL)
		rte_prof_prog = a;
	prog_unlock(&o);
	if (act && a.sa_handler != SIG_DFL) {
		yield(sig);
		if (rte_real_sigaction(sig, &a, NULL) < 0)
			return -1;
	}
	if (old)
		*old = prev;
	return 0;
}

int rte_prof_signal(int sig, sighandler_t h, sighandler_t *prev)
{
	sigset_t o;

	if (h == SIG_ERR || !rte_prof_owns(sig))
		return 0;
	if (h != SIG_DFL) {
		yield(sig);
		return 0;
	}
	prog_lock(&o);
	*prev = rte_prof_prog.sa_handler;
	memset(&rte_prof_prog, 0, sizeof(rte_prof_prog));
	rte_prof_prog.sa_handler = SIG_DFL;
	prog_unlock(&o);
	return 1;
}

sighandler_t rte_prof_hide(sighandler_t h)
{
	struct sigaction ours;

	ours.sa_sigaction = rte_prof_on_sample; /* the union: as sa_handler */
	return h == ours.sa_handler ? SIG_DFL : h;
}

void rte_prof_hide_action(struct sigaction *sa)
{
	sigset_t o;

	if (!(sa->sa_flags & SA_SIGINFO) || sa->sa_sigaction != rte_prof_on_sample)
		return;
	prog_lock(&o);
	*sa = rte_prof_prog;
	prog_unlock(&o);
}
