/*
 * hooks/process.c - processes: fork, the exec family, _exit/_Exit/quick_exit.
 *
 * fork: pthread_atfork handlers do the work, so that forks made inside
 * libc (daemon(), ...) are covered too. prepare blocks every signal and
 * takes the registry lock, so the child never inherits it held by a
 * thread that does not exist there; the child re-initialises the lock and
 * switches to a fresh <childpid>.events (tracer/fork.c). Our fork() wrapper only
 * adds fork_parent(child pid) in the parent, which the handlers cannot
 * know.
 *
 * daemon() and forkpty() are ours (below): glibc's fork inside libc
 * (the parent would get no fork_parent) and daemon's parent leaves by an
 * internal _exit. A child made without atfork handlers (_Fork, a raw fork or clone
 * system call) is recognised by tracer/fork.c's MADV_WIPEONFORK page instead.
 *
 * vfork and posix_spawn are not interposed: their child shares our memory
 * (or runs no code of ours) until it execs, so it must not touch our state.
 * Every wrapper here therefore checks rte_tracer_vforked() before it does
 * anything of ours (off the untraced fast paths: a getpid system call); in
 * a vfork child it only calls the real function. A fork made in a vfork
 * child runs no handler of ours (t_vfork_fork): its child is then one no
 * atfork handler saw, adopted as such.
 *
 * exec: ring_stop is written and the file moved out of the way first
 * (<pid>.exec<N>.events with PRESERVE, else removed), because the new image
 * has our pid and makes <pid>.events again. If the exec fails, the file gets
 * its name back and tracing goes on; errno is the real exec's. A relative
 * OCAML_RUNTIME_EVENTS_DIR in the new image's environment is passed as the
 * absolute directory it was resolved to when tracing started, so that a
 * chdir() before exec does not move the new image's file (or lose it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "clock.h"
#include "execenv.h"
#include "hooks.h"
#include "forkvars.h"
#include "prof/profiler.h"
#include "proc.h"
#include "sys.h"
#include "tracer.h"

extern char **environ;


/* ---- fork ------------------------------------------------------------------ */

/* The forking thread's signal mask, saved by prepare while it holds the
 * lock (so one fork at a time uses it); not per-thread state, which the
 * child sees wiped. */
static RTE_FORKVAR sigset_t g_fork_mask;

/* 1 between prepare and the parent or child handler of a fork made in a
 * vfork child: neither does anything. Thread-local, not in our per-thread
 * state (a pool the grandchild sees wiped): the vfork child runs on its
 * parent thread's, which is suspended until the child execs or exits,
 * and it is 0 again by then. */
static __thread int t_vfork_fork RTE_TLS;

/*
 * The handlers, in this order: every signal blocked (one mask change for
 * every module), the observers' locks (the crash recorder's), the
 * registry lock. Undone in the reverse order in the parent; in the child,
 * the observers' locks re-made first (the crash recorder then knows
 * whether the loader's lock is sound here, which the profilers' fork_child
 * asks), then the tracer's handler.
 */
static void fork_prepare(void)
{
	sigset_t all, old;

	if (rte_tracer_vforked()) {
		t_vfork_fork = 1;
		return;
	}
	rte_tracer_fork_early();
	for (unsigned i = 0; rte_hook_observers[i]; i++)
		if (rte_hook_observers[i]->fork_prepare)
			rte_hook_observers[i]->fork_prepare();
	sigfillset(&all);
	rte_real_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned i = 0; rte_hook_observers[i]; i++)
		if (rte_hook_observers[i]->fork_lock)
			rte_hook_observers[i]->fork_lock();
	rte_lock_blocked();
	g_fork_mask = old; /* under the locks: one fork at a time */
	rte_tracer_atfork_prepare();
}

static void fork_parent(void)
{
	sigset_t old = g_fork_mask;
	unsigned n = 0;

	if (t_vfork_fork) {
		t_vfork_fork = 0;
		return;
	}
	rte_unlock_blocked();
	while (rte_hook_observers[n])
		n++;
	while (n--)
		if (rte_hook_observers[n]->fork_unlock_parent)
			rte_hook_observers[n]->fork_unlock_parent();
	rte_real_sigmask(SIG_SETMASK, &old, NULL);
}

/* No libc call here (see sys.h): errno is left alone. */
RTE_FORKTEXT static void fork_child(void)
{
	int sig;

	if (t_vfork_fork) {
		t_vfork_fork = 0;
		return;
	}
	for (unsigned i = 0; rte_hook_observers[i]; i++)
		if (rte_hook_observers[i]->fork_unlock_child)
			rte_hook_observers[i]->fork_unlock_child();
	rte_tracer_atfork_child();
	rte_sys_sigmask(SIG_SETMASK, &g_fork_mask, NULL);
	/* prof/ armed the forking thread with every signal blocked: its
	 * timer runs only if the mask now given back lets its signal in. */
	if ((sig = rte_prof_mask_signal()))
		rte_prof_thread_masked(sigismember(&g_fork_mask, sig) == 1);
}

void rte_hooks_process_init(void)
{
	rte_execenv_init();
	rte_execimage_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

RTE_EXPORT RTE_FORKTEXT pid_t fork(void)
{
	uint64_t ts;
	pid_t pid;
	int saved, wrapped;

	rte_real_resolve();
	if (!rte_real.fork) {
		errno = ENOSYS;
		return -1;
	}
	/* fork_parent's time, taken before the fork: the child's fork_child
	 * is stamped in the prepare handler, later, so the arrow from parent
	 * to child never points back in time. What the observers' prepare
	 * writes on this thread's ring (the allocation counts) is written
	 * first, so that the ring's times still only grow (their second call,
	 * in the handler, then has nothing to write). Relaxed: only decides
	 * whether to read the clock. */
	ts = 0;
	if (__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED)) {
		for (unsigned i = 0; rte_hook_observers[i]; i++)
			if (rte_hook_observers[i]->fork_prepare)
				rte_hook_observers[i]->fork_prepare();
		ts = rte_clock_ns();
	}
	/* Not in a vfork child: the variable is its parent's. */
	wrapped = ts && !rte_tracer_vforked_fast();
	/* Relaxed (both): threads forking at once only tell less. */
	if (wrapped)
		__atomic_store_n(&rte_tr_fork_wrapper, pthread_self(),
		                 __ATOMIC_RELAXED);
	pid = rte_real.fork();
	if (wrapped && pid != 0) /* the child's is cleared by its handler */
		__atomic_store_n(&rte_tr_fork_wrapper, (pthread_t)0,
		                 __ATOMIC_RELAXED);
	/* Relaxed: only decides whether to write (not while paused, as
	 * OCaml). */
	if (pid > 0 && __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) &&
	    !rte_tracer_vforked()) {
		saved = errno;
		/* tracing started during the fork: the time it returned,
		 * peeked (the clock's anchor is on a copy-on-write page) */
		rte_tracer_fork_parent(pid, ts ? ts : rte_clock_peek_ns());
		/* Inline loop: an observer may count frames (the program's
		 * start above this wrapper). */
		for (unsigned i = 0; rte_hook_observers[i]; i++)
			if (rte_hook_observers[i]->fork_parent)
				rte_hook_observers[i]->fork_parent(pid);
		/* Written only if changed: after fork the page of errno is
		 * copy-on-write, and a store a page fault. */
		if (errno != saved)
			errno = saved;
	}
	return pid;
}

/*
 * daemon(3), made of our own fork() and _exit(): glibc's daemon forks and
 * leaves the parent by an _exit inside libc, where no wrapper of ours sees
 * it (the parent would get no fork_parent, no ring_stop, no cleanup). This
 * does what glibc's does: fork; the parent _exits 0; the child calls
 * setsid, chdir("/") unless nochdir, and unless noclose points 0, 1 and 2
 * at /dev/null (checked to be the null device). The child's file is made
 * before the chdir, next to the others.
 */
RTE_EXPORT int daemon(int nochdir, int noclose)
{
	struct stat st;
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -1;
	if (pid > 0)
		_exit(0);
	rte_tracer_materialize();
	if (setsid() < 0)
		return -1;
	if (!nochdir && chdir("/") < 0) {
		/* glibc ignores it too */
	}
	if (noclose)
		return 0;
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
	    st.st_rdev != makedev(1, 3)) {
		close(fd);
		errno = ENODEV;
		return -1;
	}
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > 2)
		close(fd);
	return 0;
}

/*
 * forkpty(3), made of openpty, our own fork() and login_tty (looked up at
 * the first call): glibc's forks inside libc, where the parent's
 * fork_parent would be missed. Same steps and results as glibc's.
 */
RTE_EXPORT pid_t forkpty(int *amaster, char *name, const struct termios *tp,
                         const struct winsize *wp)
{
	int master, slave;
	pid_t pid;

	rte_real_resolve();
	if (!rte_real.openpty || !rte_real.login_tty) {
		errno = ENOSYS;
		return -1;
	}
	if (rte_real.openpty(&master, &slave, name, tp, wp) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(master);
		close(slave);
		return -1;
	}
	if (pid == 0) {
		close(master);
		if (rte_real.login_tty(slave) < 0)
			_exit(1);
		return 0;
	}
	*amaster = master;
	close(slave);
	return pid;
}

/* ---- exec ------------------------------------------------------------------ */

/* What exec_before() did: nothing, the file stopped, or nothing for a
 * fork child that needs no file (EXEC_FILELESS). */
enum { EXEC_NOTHING, EXEC_STOPPED, EXEC_FILELESS };

/* 1 if the fork child that execs needs no file of its own: it has none
 * yet (with PRESERVE), and the image at `path` (NULL: not known, a PATH
 * search or a descriptor) traces itself into our directory, its
 * environment being envp (see execimage.c). */
RTE_FORKTEXT static int exec_fileless(const char *path, char *const envp[])
{
	return path && rte_tracer_file_pending() &&
	       rte_env_traces_here(envp, rte_file_dir()) &&
	       rte_exec_image_traced(path);
}

/* The file stopped for an exec of prog (rte.exec, ring_stop, moved out of
 * the way), in our guard, the profiler disarmed first if `prof`:
 * EXEC_STOPPED, or EXEC_NOTHING if it was not. */
RTE_FORKTEXT static int stop_for_exec(const char *prog, int prof)
{
	int r;

	rte_self.guard = 1;
	if (prof)
		rte_prof_exec_begin(); /* prof/: no sample may reach the new image */
	r = rte_tracer_exec_begin(prog) ? EXEC_STOPPED : EXEC_NOTHING;
	rte_self.guard = 0;
	return r;
}

/* Around every exec of prog (rte.exec's name for it): one of the above.
 * path and envp: as exec_fileless() takes them. */
RTE_FORKTEXT static int exec_before(const char *prog, const char *path,
                                    char *const envp[])
{
	int saved = errno, r;

	rte_real_resolve();
	/* A fork child that made no file (fork+exec): nothing to stop, and
	 * no per-thread page of ours is touched. */
	if (!rte_tracer_stop_needed()) {
		rte_prof_exec_begin();
		return EXEC_NOTHING;
	}
	if (rte_tracer_vforked() || rte_self.guard)
		return EXEC_NOTHING;
	if (exec_fileless(path, envp)) {
		rte_tracer_hush();
		rte_prof_exec_begin();
		return EXEC_FILELESS;
	}
	r = stop_for_exec(prog, 1);
	errno = saved;
	return r;
}

/* After an exec of prog that returned (failed): restore, keep the exec's
 * errno. A fork child that made no file for it makes it now, with the
 * exec and its failure, as if it had been made before. */
RTE_FORKTEXT static int exec_after(int token, int r, const char *prog)
{
	int saved = errno;

	if (token == EXEC_FILELESS) {
		rte_tracer_unhush();
		token = stop_for_exec(prog, 0); /* the profiler: disarmed */
	}
	if (token == EXEC_STOPPED)
		rte_tracer_exec_failed(saved);
	rte_prof_exec_failed(); /* prof/: armed again (no-op if off) */
	errno = saved;
	return r;
}

static int sys_execveat(int dirfd, const char *path, char *const argv[],
                        char *const envp[], int flags)
{
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

RTE_FORKTEXT static int do_execve(const char *path, char *const argv[],
                     char *const envp0[])
{
	FIXED_ENV(envp, envp0);
	int t = exec_before(path, path, envp);
	int r = rte_real.execve
	                ? rte_real.execve(path, argv, envp)
	                : sys_execveat(AT_FDCWD, path, argv, envp, 0);

	return exec_after(t, r, path);
}

RTE_FORKTEXT static int do_execvpe(const char *file, char *const argv[],
                      char *const envp0[])
{
	FIXED_ENV(envp, envp0);
	/* a name without a '/' is searched for in PATH: not known here */
	int t = exec_before(file, file && strchr(file, '/') ? file : NULL, envp), r;

	if (envp == environ && rte_real.execvp)
		r = rte_real.execvp(file, argv);
	else if (rte_real.execvpe)
		r = rte_real.execvpe(file, argv, envp);
	else {
		errno = ENOSYS;
		r = -1;
	}
	return exec_after(t, r, file);
}

RTE_EXPORT RTE_FORKTEXT int execve(const char *path, char *const argv[],
                      char *const envp[])
{
	rte_real_resolve();
	return do_execve(path, argv, envp);
}

/* Our own execve's address, not the one the dynamic linker binds. */
static int own_execve(const char *path, char *const argv[],
                      char *const envp[])
	__attribute__((alias("execve"), nonnull(1, 2), nothrow));

int rte_hooks_interposed(void)
{
	/* No sanitizer runtime defines execve: with one preloaded before
	 * us, the program's calls still come here. */
	return rte_dlsym(RTLD_DEFAULT, "execve") == (void *)own_execve;
}

RTE_EXPORT RTE_FORKTEXT int execv(const char *path, char *const argv[])
{
	rte_real_resolve();
	return do_execve(path, argv, environ);
}

RTE_EXPORT RTE_FORKTEXT int execvp(const char *file, char *const argv[])
{
	rte_real_resolve();
	return do_execvpe(file, argv, environ);
}

RTE_EXPORT RTE_FORKTEXT int execvpe(const char *file, char *const argv[],
                       char *const envp[])
{
	rte_real_resolve();
	return do_execvpe(file, argv, envp);
}

RTE_EXPORT int fexecve(int fd, char *const argv[], char *const envp0[])
{
	int t, r;

	rte_real_resolve();
	FIXED_ENV(envp, envp0);
	t = exec_before(NULL, NULL, envp);
	r = rte_real.fexecve ? rte_real.fexecve(fd, argv, envp)
	                     : sys_execveat(fd, "", argv, envp, AT_EMPTY_PATH);
	return exec_after(t, r, NULL);
}

RTE_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
                        char *const envp0[], int flags)
{
	int t, r;

	rte_real_resolve();
	FIXED_ENV(envp, envp0);
	/* relative to dirfd, or flags: not looked at */
	t = exec_before(path, dirfd == AT_FDCWD && !flags ? path : NULL, envp);
	r = rte_real.execveat ? rte_real.execveat(dirfd, path, argv, envp, flags)
	                      : sys_execveat(dirfd, path, argv, envp, flags);
	return exec_after(t, r, path);
}

/*
 * The execl family: collect the variadic arguments into an argv array on
 * the stack (exec must not allocate: it may run in a vfork child or a
 * signal handler), then go through the execve/execvpe paths above. `ap`
 * holds the arguments after arg0 up to their NULL, then (with_env, execle
 * only) the envp.
 */
RTE_FORKTEXT static int exec_list(const char *file, const char *arg0,
                                  va_list ap, int search, int with_env)
{
	va_list count;
	size_t n = 1;
	char **envp = environ;

	va_copy(count, ap);
	while (va_arg(count, const char *))
		n++;
	va_end(count);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg0;
		for (size_t i = 1; i <= n; i++) /* argv[n]: the NULL */
			argv[i] = va_arg(ap, char *);
		if (with_env)
			envp = va_arg(ap, char **);
		rte_real_resolve();
		return search ? do_execvpe(file, argv, envp)
		              : do_execve(file, argv, envp);
	}
}

/* execl, execlp, execle: the same but for the path search and envp. */
#define EXEC_LIST(name, search, with_env)                                      \
	RTE_EXPORT RTE_FORKTEXT int name(const char *file, const char *arg,    \
	                                 ...)                                  \
	{                                                                      \
		va_list ap;                                                    \
		int r;                                                         \
                                                                               \
		va_start(ap, arg);                                             \
		r = exec_list(file, arg, ap, search, with_env);                \
		va_end(ap);                                                    \
		return r;                                                      \
	}

EXEC_LIST(execl, 0, 0)
EXEC_LIST(execlp, 1, 0)
EXEC_LIST(execle, 0, 1)

/* ---- exit ------------------------------------------------------------------ */

/* Stop for an exit with this status (noted for rte.exit). */
RTE_FORKTEXT static void exit_stop(int status)
{
	int saved;

	/* Not tracing, or a fork child that made no file (see exec). */
	if (!rte_tracer_exit_needed() || rte_tracer_vforked())
		return;
	saved = errno;
	/* Not in a vfork child: it shares our memory (stop then does
	 * nothing either). */
	if (rte_tracer_may_write())
		rte_proc_note_exit(RTE_EXIT_STATUS, status);
	if (!rte_self.guard) {
		rte_self.guard = 1;
		rte_tracer_stop();
		rte_self.guard = 0;
	}
	errno = saved;
}

RTE_EXPORT RTE_FORKTEXT void _exit(int status)
{
	rte_real_resolve();
	exit_stop(status);
	if (rte_real.exit_)
		rte_real.exit_(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

RTE_EXPORT RTE_FORKTEXT void _Exit(int status)
{
	_exit(status);
}

RTE_EXPORT void quick_exit(int status)
{
	rte_real_resolve();
	/* quick_exit runs the at_quick_exit handlers, then _exit inside libc
	 * where we cannot see it: stop first. */
	exit_stop(status);
	if (rte_real.quick_exit)
		rte_real.quick_exit(status);
	_exit(status);
}
