/*
 * hooks/start.c - the exit status of a process that returns from main or
 * calls exit(), for its rte.exit (rte/proc.h).
 *
 * exit() runs its handlers newest first, and ld.so's destructors (ours,
 * which writes rte.exit and ring_stop) are one of them, registered by
 * __libc_start_main before main runs: a handler that is to see the status
 * first must be registered after that. So __libc_start_main is wrapped to
 * register an on_exit handler (which gets exit's status, also main's
 * return value, which glibc passes to an exit call inside libc, where no
 * wrapper sees it) right before main, which is then entered by a tail
 * call: no frame of ours stays under main (stacks, backtraces). The
 * program's own handlers, registered later, run before it; one of them
 * that calls _exit with another status is noted by the _exit wrapper.
 */
#include <errno.h>
#include <stdlib.h>

#include "hooks.h"
#include "proc.h"
#include "tracer.h"

static int (*g_main)(int, char **, char **);

/* Not in a fork child that keeps no file (stop_needed touches no page
 * of ours there), nor in a vfork child (it shares our memory). */
static void note_exit(int status, void *arg)
{
	int saved = errno;

	(void)arg;
	if (rte_tracer_exit_needed() && rte_tracer_may_write())
		rte_proc_note_exit(RTE_EXIT_STATUS, status);
	errno = saved;
}

static int main_wrap(int argc, char **argv, char **envp)
{
	on_exit(note_exit, NULL);
	return g_main(argc, argv, envp); /* a tail call at -O1 and up */
}

int __libc_start_main(int (*main)(int, char **, char **), int argc,
                      char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end);

RTE_EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc,
                                 char **argv, void (*init)(void),
                                 void (*fini)(void), void (*rtld_fini)(void),
                                 void *stack_end)
{
	rte_real_resolve();
	if (!rte_real.libc_start_main)
		abort(); /* cannot happen: libc is what started us */
	g_main = main;
	return rte_real.libc_start_main(main_wrap, argc, argv, init, fini,
	                                rtld_fini, stack_end);
}
