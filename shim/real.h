/*
 * real.h - the one table of real libc functions behind our wrappers
 * (real.c; a leaf). Every wrapper calls through rte_real; nothing else in
 * shim/ looks a symbol up with RTLD_NEXT.
 *
 * Extension point: a new hook (e.g. hooks/alloc.c's malloc family) adds
 * its fields to struct rte_real and one RESOLVE line to real.c. A hook
 * that can run before the constructor (malloc from ld.so, another
 * library's constructor) calls rte_real_resolve() first, or, where dlsym
 * itself may call the hook (malloc), must provide its own bootstrap.
 */
#ifndef RTE_SHIM_REAL_H
#define RTE_SHIM_REAL_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/types.h>

struct termios;
struct winsize;

#pragma GCC visibility push(hidden)

struct rte_real {
	int (*pthread_create)(pthread_t *, const pthread_attr_t *,
	                      void *(*)(void *), void *);
	int (*pthread_setname_np)(pthread_t, const char *);
	pid_t (*fork)(void);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	void (*exit_)(int);
	void (*quick_exit)(int);
	int (*openpty)(int *, int *, char *, const struct termios *,
	               const struct winsize *);
	int (*login_tty)(int);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
	sighandler_t (*bsd_signal)(int, sighandler_t);
	sighandler_t (*sysv_signal)(int, sighandler_t);
	int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
	int (*sigprocmask)(int, const sigset_t *, sigset_t *);
	void *(*dlopen)(const char *, int);
	int (*dlclose)(void *);
	int (*libc_start_main)(int (*)(int, char **, char **), int, char **,
	                       void (*)(void), void (*)(void), void (*)(void),
	                       void *);
	pid_t (*wait4)(pid_t, int *, int, struct rusage *);
	int (*waitid)(idtype_t, id_t, siginfo_t *, int);
	int (*posix_spawn)(pid_t *, const char *,
	                   const posix_spawn_file_actions_t *,
	                   const posix_spawnattr_t *, char *const[],
	                   char *const[]);
	int (*posix_spawnp)(pid_t *, const char *,
	                    const posix_spawn_file_actions_t *,
	                    const posix_spawnattr_t *, char *const[],
	                    char *const[]);
	FILE *(*popen)(const char *, const char *);
	int (*pclose)(FILE *);
	int (*setuid)(uid_t);
	int (*seteuid)(uid_t);
	int (*setreuid)(uid_t, uid_t);
	int (*setresuid)(uid_t, uid_t, uid_t);
	int (*setgid)(gid_t);
	int (*setegid)(gid_t);
	int (*setregid)(gid_t, gid_t);
	int (*setresgid)(gid_t, gid_t, gid_t);
};

extern struct rte_real rte_real;
/* dlsym() that leaves no error state behind when the symbol is missing. */
void *rte_dlsym(void *handle, const char *name);
/* Resolve every real function (idempotent, cheap after the first call).
 * Called from the constructor and lazily by each wrapper, in case another
 * library's constructor calls a wrapper before ours ran. */
void rte_real_resolve_all(void);
/* Atomic: 1 once every pointer is stored (real.c). */
extern int rte_real_resolved;
/* Resolve once; inline, so that the wrappers a fork child runs (exec,
 * _exit) touch no other page of our text for it. */
static inline void rte_real_resolve(void)
{
	/* Acquire: pairs with the release in rte_real_resolve_all(); a
	 * thread that sees 1 sees every pointer. */
	if (!__atomic_load_n(&rte_real_resolved, __ATOMIC_ACQUIRE))
		rte_real_resolve_all();
}

/* The real sigaction, for the shim's own handlers (the crash recorder's,
 * the CPU profiler's): never our wrapper, which would hide them from
 * themselves. -1 with ENOSYS if libc has none. Async-signal-safe once
 * resolved (the constructor resolves). */
static inline int rte_real_sigaction(int sig, const struct sigaction *act,
                                     struct sigaction *old)
{
	int (*f)(int, const struct sigaction *, struct sigaction *);

	rte_real_resolve();
	/* Relaxed: the pointer is the same whoever stores it, and
	 * rte_real_resolve()'s acquire ordered it before us. */
	f = __atomic_load_n(&rte_real.sigaction, __ATOMIC_RELAXED);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(sig, act, old);
}

/* Our own signal masks (every lock taken with signals blocked): libc's
 * pthread_sigmask, not the program's hooks/masks.c, so that the profiler
 * hears only the program's masks. Returns 0 or an errno value.
 * Async-signal-safe. */
int rte_real_sigmask(int how, const sigset_t *set, sigset_t *old);

#pragma GCC visibility pop

#endif
