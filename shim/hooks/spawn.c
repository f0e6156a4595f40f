/*
 * hooks/spawn.c - children made without fork, and children reaped: the
 * records that link a process tree (rte/proc.h, doc/FORMAT.md 11.7).
 *
 * The wait family (wait, waitpid, wait3, wait4, waitid): a child the
 * program reaps is written as rte.reap (its pid, status, rusage) on the
 * reaper's ring, so that a child that could not write its own end (SIGKILL,
 * an untraced or static image, a raw exit_group) still has one. The
 * wrappers call the real wait4 (or waitid) once with the program's
 * arguments, passing buffers of ours only where the program passed NULL
 * (which changes nothing the kernel does): the return value, errno, EINTR
 * and cancellation are the real call's. Nothing is reaped that the
 * program would not reap. waitid gives no rusage (glibc's has none).
 *
 * posix_spawn, posix_spawnp, vfork, system: their child runs no code of
 * ours before it execs (or shares our memory), so the parent names it:
 * rte.spawn with the child's pid, after the call returns in the parent.
 * A posix_spawn (or system) that fails writes rte.spawn_failed with its
 * error and argv instead: glibc's child that could not exec was reaped
 * inside the call, its pid never given.
 *
 * vfork (x86-64 only; elsewhere libc's, unlinked): written in assembly,
 * as libc's is, because a C wrapper's frame would be reused by the child
 * and then returned through by the parent. The return address is kept in
 * a register across the system call; the child returns at once, touching
 * nothing; the parent calls vfork_parent().
 *
 * system(): glibc's spawns its shell with an internal posix_spawn and
 * reaps it with an internal waitpid, neither interposable, so this is our
 * own, step for step glibc's (sysdeps/posix/system.c, 2.36): SIGINT and
 * SIGQUIT ignored (by the first of concurrent callers) and SIGCHLD blocked
 * meanwhile; the shell spawned with those restored to default (unless
 * they were ignored) and the caller's mask; "/bin/sh -c -- LINE"; waitpid
 * retried on EINTR; 127 << 8 if the shell could not be spawned (errno set);
 * a cancelled caller's child killed and reaped; NULL asks for a shell.
 *
 * popen(), pclose(): glibc's popen spawns its shell with its internal
 * posix_spawn too, and pclose reaps it with its internal waitpid. Both
 * stay glibc's (the stream, its close hook that fclose also runs, the
 * other popen streams closed in the child); around them we read the
 * child's pid from the stream (glibc's struct _IO_proc_file: the FILE,
 * its jump table pointer, then the pid, unchanged since glibc 2.1), and
 * trust it only if the kernel says it is our child (waitid with WNOHANG
 * and WNOWAIT: neither waits nor reaps). popen writes rte.spawn, pclose
 * rte.reap (its status, no rusage). Other C libraries: no record.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "execenv.h"
#include "hooks.h"
#include "proc.h"
#include "tracer.h"

extern char **environ;

/* ---- records ----------------------------------------------------------- */

/* 1 if a record may be written now: tracing runs in this process (a
 * relaxed look first: no system call when it does not). */
static int may_write(void)
{
	/* Relaxed: only decides whether to write. */
	return __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) &&
	       rte_tracer_may_write();
}

static void reaped(pid_t pid, int status, const struct rusage *ru)
{
	struct rte_exit_rec r;
	int saved = errno;

	/* A stopped or continued child is not reaped. Written while paused
	 * too: a fork child that never wrote has only this for its end
	 * (tracer/fork.c, rte_tr_fileless_end). */
	if (pid <= 0 || WIFSTOPPED(status) || WIFCONTINUED(status) ||
	    !(__atomic_load_n(&rte_g_active, __ATOMIC_RELAXED) ||
	      rte_tracer_running()) ||
	    !rte_tracer_may_write())
		return;
	rte_proc_reap_rec(&r, pid, status, ru);
	rte_tracer_own_custom_always(RTE_OWN_REAP, &r, sizeof(r));
	errno = saved;
}

static void spawned(pid_t pid)
{
	int saved = errno;

	if (pid > 0 && may_write())
		rte_tracer_own_int(RTE_OWN_SPAWN, pid);
	errno = saved;
}

/* A posix_spawn of argv that returned err: its child, if the kernel made
 * one, could not exec; libc reaped it and gave no pid. */
static void spawn_failed(int err, char *const argv[])
{
	char buf[RTE_PROC_PAYLOAD_MAX];
	int saved = errno;

	if (may_write())
		rte_tracer_own_custom(RTE_OWN_SPAWN_FAIL, buf,
		                      rte_proc_spawn_fail_payload(buf, err, argv));
	errno = saved;
}

/* ---- the wait family ------------------------------------------------------ */

RTE_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	struct rusage own;
	int st = 0;
	pid_t r;

	rte_real_resolve();
	if (!rte_real.wait4) {
		errno = ENOSYS;
		return -1;
	}
	r = rte_real.wait4(pid, status ? status : &st, options, ru ? ru : &own);
	if (r > 0)
		reaped(r, status ? *status : st, ru ? ru : &own);
	return r;
}

RTE_EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
	return wait4(-1, status, options, ru);
}

RTE_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	return wait4(pid, status, options, NULL);
}

RTE_EXPORT pid_t wait(int *status)
{
	return wait4(-1, status, 0, NULL);
}

/* The wait status a waitid result stands for (0 if it reaped nothing). */
static int status_of(const siginfo_t *si)
{
	switch (si->si_code) {
	case CLD_EXITED:
		return (si->si_status & 0xff) << 8;
	case CLD_KILLED:
		return si->si_status & 0x7f;
	case CLD_DUMPED:
		return (si->si_status & 0x7f) | 0x80;
	default:
		return -1;
	}
}

RTE_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	siginfo_t own;
	siginfo_t *si = info ? info : &own;
	int r, st;

	rte_real_resolve();
	if (!rte_real.waitid) {
		errno = ENOSYS;
		return -1;
	}
	if (!info)
		memset(&own, 0, sizeof(own));
	r = rte_real.waitid(idtype, id, si, options);
	/* WNOWAIT leaves the child waitable: not reaped yet. */
	if (r == 0 && !(options & WNOWAIT) && si->si_pid > 0 &&
	    (st = status_of(si)) >= 0)
		reaped(si->si_pid, st, NULL);
	return r;
}

/* ---- posix_spawn, vfork ---------------------------------------------------- */

/* The real posix_spawn or posix_spawnp (real, after rte_real_resolve):
 * the child is reported as spawned when it starts. */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

static int spawn_with(spawn_fn real, pid_t *pid, const char *path,
                      const posix_spawn_file_actions_t *fa,
                      const posix_spawnattr_t *attr, char *const argv[],
                      char *const envp[])
{
	pid_t child = 0;
	int r;

	if (!real)
		return ENOSYS;
	{
		/* The new image's environment, as exec's (execenv.h). */
		FIXED_ENV(env, envp);

		r = real(&child, path, fa, attr, argv, env);
	}
	if (r == 0) {
		if (pid)
			*pid = child;
		spawned(child);
	} else {
		spawn_failed(r, argv);
	}
	return r;
}

RTE_EXPORT int posix_spawn(pid_t *pid, const char *path,
                           const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *attr, char *const argv[],
                           char *const envp[])
{
	rte_real_resolve();
	return spawn_with(rte_real.posix_spawn, pid, path, fa, attr, argv, envp);
}

RTE_EXPORT int posix_spawnp(pid_t *pid, const char *file,
                            const posix_spawn_file_actions_t *fa,
                            const posix_spawnattr_t *attr, char *const argv[],
                            char *const envp[])
{
	rte_real_resolve();
	return spawn_with(rte_real.posix_spawnp, pid, file, fa, attr, argv, envp);
}

#if defined(__x86_64__)
#define RTE_STR_(x) #x
#define RTE_STR(x) RTE_STR_(x)

/* Called by vfork in the parent, once the child has exec'd or exited. */
__attribute__((used)) static void vfork_parent(pid_t child)
{
	spawned(child);
}

__attribute__((used)) static void vfork_failed(int err)
{
	errno = err;
}

/*
 * The return address is popped into %rdi (kept by the kernel for the
 * parent, as every register) since the child's calls overwrite its stack
 * slot; pushed back before ret. Stack alignment: 16 at each call below.
 * rte_vfork_depth is raised before the system call and taken down in the
 * parent when it returns (the child has exec'd or exited by then, or the
 * call failed): the child runs only while it is above 0 (the sampling
 * paths' cheap look, rte_tracer_vforked_fast). The flags: testq sets
 * them for the child test, lock decl changes only flags the cmpq after
 * it sets again.
 */
__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork, @function\n"
        "vfork:\n"
        "	.cfi_startproc\n"
        "	popq %rdi\n"
        "	.cfi_adjust_cfa_offset -8\n"
        "	.cfi_register %rip, %rdi\n"
        "	lock incl rte_vfork_depth(%rip)\n"
        "	movl $" RTE_STR(SYS_vfork) ", %eax\n"
        "	syscall\n"
        "	pushq %rdi\n"
        "	.cfi_adjust_cfa_offset 8\n"
        "	.cfi_rel_offset %rip, 0\n"
        "	testq %rax, %rax\n"
        "	jz 1f\n"
        "	lock decl rte_vfork_depth(%rip)\n"
        "	cmpq $-4095, %rax\n"
        "	jae 2f\n"
        "	pushq %rax\n"
        "	.cfi_adjust_cfa_offset 8\n"
        "	movl %eax, %edi\n"
        "	call vfork_parent\n"
        "	popq %rax\n"
        "	.cfi_adjust_cfa_offset -8\n"
        "1:	ret\n"
        "2:	subq $8, %rsp\n"
        "	.cfi_adjust_cfa_offset 8\n"
        "	negl %eax\n"
        "	movl %eax, %edi\n"
        "	call vfork_failed\n"
        "	addq $8, %rsp\n"
        "	.cfi_adjust_cfa_offset -8\n"
        "	movq $-1, %rax\n"
        "	ret\n"
        "	.cfi_endproc\n"
        ".size vfork, .-vfork\n");
#endif

/* ---- popen, pclose --------------------------------------------------------- */

#if defined(__GLIBC__)
/* The streams our popen returned that are not closed yet: pclose reads
 * the pid only from one of those (any other FILE may be smaller). A
 * stream beyond the table's room just has no rte.reap. */
#define POPEN_MAX 64
static FILE *g_popen[POPEN_MAX];
static pthread_mutex_t g_popen_lock = PTHREAD_MUTEX_INITIALIZER;

/* Swap `from` for `to` in the table; 1 if found. */
static int popen_swap(FILE *from, FILE *to)
{
	int found = 0;

	pthread_mutex_lock(&g_popen_lock);
	for (int i = 0; i < POPEN_MAX && !found; i++)
		if (g_popen[i] == from) {
			g_popen[i] = to;
			found = 1;
		}
	pthread_mutex_unlock(&g_popen_lock);
	return found;
}

/* The pid glibc keeps in a popen stream (see the top of this file), if
 * it is a child of ours not reaped yet, else 0. */
static pid_t popen_child(FILE *f)
{
	pid_t pid;
	siginfo_t si;

	memcpy(&pid, (const char *)f + sizeof(FILE) + sizeof(void *),
	       sizeof(pid));
	memset(&si, 0, sizeof(si));
	if (pid <= 0 || syscall(SYS_waitid, P_PID, (id_t)pid, &si,
	                        WEXITED | WNOHANG | WNOWAIT, NULL) != 0)
		return 0;
	return pid;
}
#endif

RTE_EXPORT FILE *popen(const char *command, const char *mode)
{
	FILE *f;

	rte_real_resolve();
	if (!rte_real.popen) {
		errno = ENOSYS;
		return NULL;
	}
	f = rte_real.popen(command, mode);
#if defined(__GLIBC__)
	if (f && may_write()) {
		int saved = errno;

		spawned(popen_child(f));
		popen_swap(NULL, f);
		errno = saved;
	}
#endif
	return f;
}

RTE_EXPORT int pclose(FILE *f)
{
	pid_t pid = 0;
	int status;

	rte_real_resolve();
	if (!rte_real.pclose) {
		errno = ENOSYS;
		return -1;
	}
#if defined(__GLIBC__)
	if (f && popen_swap(f, NULL) && may_write()) {
		int saved = errno;

		pid = popen_child(f);
		errno = saved;
	}
#endif
	status = rte_real.pclose(f);
	if (pid > 0 && status != -1)
		reaped(pid, status, NULL);
	return status;
}

/* ---- system ------------------------------------------------------------- */

/* SIGINT and SIGQUIT as they were before the first of concurrent
 * system() calls, restored by the last (as glibc). */
static pthread_mutex_t g_sys_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_sys_refs;
static struct sigaction g_sys_intr, g_sys_quit;

struct sys_cancel {
	pid_t pid;
};

/* A cancelled caller: its shell is killed and reaped, the actions back. */
static void sys_cancelled(void *arg)
{
	const struct sys_cancel *c = arg;

	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR) {
	}
	pthread_mutex_lock(&g_sys_lock);
	if (--g_sys_refs == 0) {
		sigaction(SIGINT, &g_sys_intr, NULL);
		sigaction(SIGQUIT, &g_sys_quit, NULL);
	}
	pthread_mutex_unlock(&g_sys_lock);
}

static int sys_run(const char *line)
{
	struct sigaction ign = {.sa_handler = SIG_IGN};
	sigset_t chld, omask, reset;
	posix_spawnattr_t attr;
	struct sys_cancel c;
	int status = -1, ret;
	pid_t pid;

	sigemptyset(&ign.sa_mask);
	pthread_mutex_lock(&g_sys_lock);
	if (g_sys_refs++ == 0) {
		sigaction(SIGINT, &ign, &g_sys_intr);
		sigaction(SIGQUIT, &ign, &g_sys_quit);
	}
	pthread_mutex_unlock(&g_sys_lock);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, &omask) < 0) {
		pthread_mutex_lock(&g_sys_lock);
		if (--g_sys_refs == 0) {
			sigaction(SIGINT, &g_sys_intr, NULL);
			sigaction(SIGQUIT, &g_sys_quit, NULL);
		}
		pthread_mutex_unlock(&g_sys_lock);
		return -1;
	}
	sigemptyset(&reset);
	if (g_sys_intr.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGINT);
	if (g_sys_quit.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGQUIT);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setflags(&attr,
	                         POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	ret = spawn_with(rte_real.posix_spawn, &pid, "/bin/sh", NULL, &attr,
	                 (char *const[]){"sh", "-c", "--", (char *)line, NULL},
	                 environ);
	posix_spawnattr_destroy(&attr); /* spawn_with wrote rte.spawn */
	if (ret == 0) {
		c.pid = pid;
		pthread_cleanup_push(sys_cancelled, &c);
		while ((ret = (int)waitpid(pid, &status, 0)) < 0 &&
		       errno == EINTR) {
		}
		if (ret != pid)
			status = -1;
		pthread_cleanup_pop(0);
		ret = 0;
	} else {
		status = 127 << 8; /* as if the shell had done _exit(127) */
	}
	pthread_mutex_lock(&g_sys_lock);
	if (--g_sys_refs == 0 &&
	    (sigaction(SIGINT, &g_sys_intr, NULL) != 0 ||
	     sigaction(SIGQUIT, &g_sys_quit, NULL) != 0))
		status = -1;
	pthread_mutex_unlock(&g_sys_lock);
	if (sigprocmask(SIG_SETMASK, &omask, NULL) != 0)
		status = -1;
	if (ret != 0)
		errno = ret;
	return status;
}

RTE_EXPORT int system(const char *line)
{
	rte_real_resolve();
	if (!line)
		return sys_run("exit 0") == 0;
	return sys_run(line);
}
