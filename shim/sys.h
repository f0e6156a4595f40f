/*
 * sys.h - the few system calls a fork child's atfork handlers make, made
 * inline (a leaf: depends on nothing else in shim/).
 *
 * Why not libc's wrappers: right after fork, the child has no page table
 * entries for the text of the libraries (they are file mappings, not
 * copied by fork), so the first call into each 64 KiB of libc's text is
 * a page fault; so is errno (through __errno_location) and the PLT of
 * librte.so. On the VMs this project runs on a fault costs about 12 us,
 * as much as ten system calls, and a fork+_exit of a traced program took
 * a third more time than untraced mostly in such faults. These calls go
 * straight to the kernel, leave errno alone and return -errno on failure.
 * Async-signal-safe. The start of a traced process uses them too (its
 * pid, the identity of its stderr): there, a libc function no other part
 * of a small program calls costs a page fault of libc's text as well.
 */
#ifndef RTE_SHIM_SYS_H
#define RTE_SHIM_SYS_H

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
static inline long rte_sys3(long nr, long a, long b, long c)
{
	long r;
	register long r10 __asm__("r10") = 0;

	__asm__ volatile("syscall"
	                 : "=a"(r)
	                 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
	                 : "rcx", "r11", "memory");
	return r;
}

static inline long rte_sys4(long nr, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;

	__asm__ volatile("syscall"
	                 : "=a"(r)
	                 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
	                 : "rcx", "r11", "memory");
	return r;
}
#elif defined(__aarch64__)
static inline long rte_sys4(long nr, long a, long b, long c, long d)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;

	__asm__ volatile("svc 0"
	                 : "+r"(x0)
	                 : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
	                 : "memory");
	return x0;
}

static inline long rte_sys3(long nr, long a, long b, long c)
{
	return rte_sys4(nr, a, b, c, 0);
}
#else
#include <errno.h>
/* Elsewhere libc's syscall(): correct, only without the savings. */
static inline long rte_sys4(long nr, long a, long b, long c, long d)
{
	int saved = errno;
	long r = syscall(nr, a, b, c, d);

	if (r < 0) {
		r = -errno;
		errno = saved;
	}
	return r;
}

static inline long rte_sys3(long nr, long a, long b, long c)
{
	return rte_sys4(nr, a, b, c, 0);
}
#endif

/* The kernel's signal set is 8 bytes (_NSIG / 8), not glibc's 128. */
static inline long rte_sys_sigmask(int how, const sigset_t *set,
                                   sigset_t *old)
{
	return rte_sys4(SYS_rt_sigprocmask, how, (long)set, (long)old, 8);
}

static inline pid_t rte_sys_getpid(void)
{
	return (pid_t)rte_sys3(SYS_getpid, 0, 0, 0);
}

static inline pid_t rte_sys_getppid(void)
{
	return (pid_t)rte_sys3(SYS_getppid, 0, 0, 0);
}

/* fstat(fd): 0, or -errno. */
static inline long rte_sys_fstat(int fd, struct stat *st)
{
	return rte_sys4(SYS_newfstatat, fd, (long)"", (long)st, AT_EMPTY_PATH);
}

#endif
