/*
 * hooks/masks.c - the program's pthread_sigmask() and sigprocmask(): the
 * CPU profiler stops a thread's timer while that thread blocks the
 * profiling signal, and starts it again when it unblocks it
 * (prof/profiler.c, "Blocked signal"). The call itself is libc's, its
 * result and errno unchanged; with profiling off it is a tail call.
 *
 * Our own code blocks signals through rte_real_sigmask() (real.h), never
 * through these: a lock taken with every signal blocked does not stop
 * any timer. What the libraries we call make (libunwind blocks every
 * signal around its locks, in our sample handler too) is not the
 * program's either: ignored inside our own work (a write, a crash
 * record, an allocation sample). Masks changed behind libc's back (the
 * raw system call) are not seen.
 */
#include <errno.h>
#include <signal.h>

#include "prof/profiler.h"
#include "real.h"
#include "tracer.h"

/* 1 if the mask made by (how, set) from old blocks sig. `in`: sig is in
 * set. */
static int blocks(int how, int in, const sigset_t *old, int sig)
{
	int was = sigismember(old, sig) == 1;

	switch (how) {
	case SIG_BLOCK:
		return was || in;
	case SIG_UNBLOCK:
		return was && !in;
	case SIG_SETMASK:
		return in;
	default:
		return was;
	}
}

/* The profiling signal, if this call's mask matters: profiling runs and
 * the caller is the program, not our own work. */
static int watched(const sigset_t *set)
{
	struct rte_thread *t;
	int sig;

	if (!set || !(sig = rte_prof_mask_signal()))
		return 0;
	t = rte_self_p;
	if (t && (t->busy || t->crash_recording || t->alloc.guard))
		return 0;
	return sig;
}

RTE_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	int sig = watched(set), in, r;
	sigset_t o;

	rte_real_resolve();
	if (!rte_real.pthread_sigmask)
		return ENOSYS;
	if (!sig)
		return rte_real.pthread_sigmask(how, set, old);
	in = sigismember(set, sig) == 1; /* before: old may be set */
	r = rte_real.pthread_sigmask(how, set, &o);
	if (r == 0) {
		rte_prof_thread_masked(blocks(how, in, &o, sig));
		if (old)
			*old = o;
	}
	return r;
}

RTE_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int sig = watched(set), in, r, saved;
	sigset_t o;

	rte_real_resolve();
	if (!rte_real.sigprocmask) {
		errno = ENOSYS;
		return -1;
	}
	if (!sig)
		return rte_real.sigprocmask(how, set, old);
	in = sigismember(set, sig) == 1;
	r = rte_real.sigprocmask(how, set, &o);
	if (r == 0) {
		saved = errno;
		rte_prof_thread_masked(blocks(how, in, &o, sig));
		errno = saved;
		if (old)
			*old = o;
	}
	return r;
}
