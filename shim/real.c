/*
 * real.c - the libc functions our wrappers stand in front of.
 *
 * dlsym(RTLD_NEXT, ...) finds the next definition after librte.so in the
 * lookup order: libc's, or a sanitizer's interceptor that itself calls
 * libc. Resolution happens in the constructor and again lazily in every
 * wrapper, because another library's constructor may create a thread or
 * fork before ours has run. Where dlsym finds nothing (a static libc
 * stripped of a symbol, a libc too old for execveat), the wrappers fall back
 * to the raw system call or report ENOSYS; see proc.c and thread.c.
 *
 * This is the only place that looks up a symbol with RTLD_NEXT: a new
 * wrapper adds its field to struct rte_real and one RESOLVE line here.
 * (openpty and login_tty are libc's since glibc 2.34; with an older glibc
 * they are found if libutil was loaded before librte.so's constructor.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "real.h"

struct rte_real rte_real;

int rte_real_resolved; /* atomic: 1 once every pointer is stored */

void *rte_dlsym(void *handle, const char *name)
{
	void *p = dlsym(handle, name);

	if (!p) {
		/* A failed lookup leaves a per-thread error buffer behind
		 * (reported as a leak by LeakSanitizer when the thread is
		 * the main one); the second dlerror() call frees it. */
		dlerror();
		dlerror();
	}
	return p;
}

/* dlsym returns void *; casting it to a function pointer is how POSIX says
 * to use it. The pointers are stored relaxed: a racing second resolution
 * stores the same values. */
#define RESOLVE(field, name)                                                  \
	do {                                                                  \
		void *p_ = rte_dlsym(RTLD_NEXT, name);                        \
		__atomic_store_n((void **)&rte_real.field, p_,                \
		                 __ATOMIC_RELAXED);                           \
	} while (0)

void rte_real_resolve_all(void)
{
	/* Acquire pairs with the release below: a thread that sees 1 sees
	 * every pointer. */
	if (__atomic_load_n(&rte_real_resolved, __ATOMIC_ACQUIRE))
		return;
	RESOLVE(pthread_create, "pthread_create");
	RESOLVE(pthread_setname_np, "pthread_setname_np");
	RESOLVE(fork, "fork");
	RESOLVE(execve, "execve");
	RESOLVE(execvp, "execvp");
	RESOLVE(execvpe, "execvpe");
	RESOLVE(fexecve, "fexecve");
	RESOLVE(execveat, "execveat");
	RESOLVE(exit_, "_exit");
	RESOLVE(quick_exit, "quick_exit");
	RESOLVE(openpty, "openpty");
	RESOLVE(login_tty, "login_tty");
	RESOLVE(sigaction, "sigaction");
	RESOLVE(signal, "signal");
	RESOLVE(bsd_signal, "bsd_signal");
	RESOLVE(sysv_signal, "sysv_signal");
	RESOLVE(pthread_sigmask, "pthread_sigmask");
	RESOLVE(sigprocmask, "sigprocmask");
	RESOLVE(dlopen, "dlopen");
	RESOLVE(dlclose, "dlclose");
	RESOLVE(libc_start_main, "__libc_start_main");
	RESOLVE(wait4, "wait4");
	RESOLVE(waitid, "waitid");
	RESOLVE(posix_spawn, "posix_spawn");
	RESOLVE(posix_spawnp, "posix_spawnp");
	RESOLVE(popen, "popen");
	RESOLVE(pclose, "pclose");
	RESOLVE(setuid, "setuid");
	RESOLVE(seteuid, "seteuid");
	RESOLVE(setreuid, "setreuid");
	RESOLVE(setresuid, "setresuid");
	RESOLVE(setgid, "setgid");
	RESOLVE(setegid, "setegid");
	RESOLVE(setregid, "setregid");
	RESOLVE(setresgid, "setresgid");
	__atomic_store_n(&rte_real_resolved, 1, __ATOMIC_RELEASE);
}

int rte_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	int (*f)(int, const sigset_t *, sigset_t *);

	rte_real_resolve();
	/* Relaxed: the pointer is the same whoever stores it. */
	f = __atomic_load_n(&rte_real.pthread_sigmask, __ATOMIC_RELAXED);
	if (f)
		return f(how, set, old);
	/* The kernel's set is 8 bytes on every Linux ABI we build for. */
	return syscall(SYS_rt_sigprocmask, how, set, old, 8) < 0 ? errno : 0;
}
