/*
 * forkways.c - children made every way, and what the shim must not do to
 * them (tests/shim/run.sh, the fork_* and host_* tests).
 *
 *   forkways raw WAY [thread]
 *                       make a child with WAY (_Fork, sysfork: the raw
 *                       fork system call, clone: the raw clone system call
 *                       with SIGCHLD), none of which runs atfork handlers;
 *                       the child names its thread "child" (prctl), writes
 *                       "w.child" = 1 and _exits; then the parent writes
 *                       "w.parent" = 2. Prints "child <pid>". With
 *                       "thread" (tests/shim/isolation.sh), the child
 *                       first makes a thread that names itself "childthr"
 *                       (pthread_setname_np) and writes "w.thread" = 1,
 *                       renames it "children" from the first thread and
 *                       joins it.
 *   forkways threads    fork; the child makes 2 threads that each write
 *                       "w.thread" = 1, joins them, then writes "w.main" = 1
 *                       and exits. Prints "child <pid>".
 *   forkways daemon     daemon(0, 1): the parent leaves inside daemon(); the
 *                       child writes "w.daemon" = 1, prints "daemon <pid>
 *                       <cwd>" and exits (stdout stays open: a reader of
 *                       it sees EOF when the child is gone).
 *   forkways pty        forkpty(); the child writes "w.child" = 1 and
 *                       _exits; the parent waits. Prints "child <pid>".
 *   forkways killed     fork a child that reports ready through a pipe and
 *                       waits; the parent kills it with SIGKILL. Prints
 *                       "child <pid>".
 *   forkways sigfork N  a SIGALRM handler forks (the child _exits) while
 *                       the main thread registers an event in a loop, until
 *                       N children were made. Prints "forks N".
 *   forkways room       a thread on a 16 KiB stack of ours (with a guard
 *                       page below it) prints "room R":
 *                       the bytes between its first local and the stack's
 *                       bottom.
 *   forkways use B      a thread on a 16 KiB stack of ours uses B bytes of
 *                       it; prints "used B".
 *
 * Exit status 0 when everything worked, 1 otherwise (with a line on stderr).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "children.h"
#include "weak.h"


static int die(const char *what)
{
	fprintf(stderr, "forkways: %s: %s\n", what, strerror(errno));
	return 1;
}

static int g_thread_id = -1;

static void *child_thread(void *p)
{
	pthread_setname_np(pthread_self(), "childthr");
	weak_int(g_thread_id, 1);
	return p;
}

static int raw(const char *way, int with_thread)
{
	int id_c = weak_register_int("w.child");
	int id_p = weak_register_int("w.parent");
	pid_t pid;

	if (with_thread)
		g_thread_id = weak_register_int("w.thread");
	fflush(stdout);
	pid = raw_child(way);
	if (pid < 0)
		return die(way);
	if (pid == 0) {
		pthread_t t;

		prctl(PR_SET_NAME, "child", 0, 0, 0);
		if (with_thread) {
			if (pthread_create(&t, NULL, child_thread, NULL))
				_exit(2);
			pthread_setname_np(t, "children");
			pthread_join(t, NULL);
		}
		weak_int(id_c, 1);
		_exit(0);
	}
	if (!wait_ok(pid))
		return die("child");
	weak_int(id_p, 2);
	printf("child %ld\n", (long)pid);
	return 0;
}

static void *one_event(void *p)
{
	weak_int(g_thread_id, 1);
	return p;
}

static int threads(void)
{
	int id_main = weak_register_int("w.main");
	pid_t pid;

	g_thread_id = weak_register_int("w.thread");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (pid == 0) {
		pthread_t t[2];

		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, one_event, NULL))
				_exit(2);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		weak_int(id_main, 1);
		exit(0);
	}
	if (!wait_ok(pid))
		return die("child");
	printf("child %ld\n", (long)pid);
	return 0;
}

static int daemonize(void)
{
	int id = weak_register_int("w.daemon");
	char cwd[PATH_MAX];

	fflush(stdout);
	if (daemon(0, 1) < 0)
		return die("daemon");
	weak_int(id, 1);
	if (!getcwd(cwd, sizeof(cwd)))
		return die("getcwd");
	printf("daemon %ld %s\n", (long)getpid(), cwd);
	return 0;
}

static int pty_child(void)
{
	int id = weak_register_int("w.child"), master;
	pid_t pid;

	fflush(stdout);
	pid = forkpty(&master, NULL, NULL, NULL);
	if (pid < 0)
		return die("forkpty");
	if (pid == 0) {
		weak_int(id, 1);
		_exit(0);
	}
	if (!wait_ok(pid))
		return die("child");
	close(master);
	printf("child %ld\n", (long)pid);
	return 0;
}

static int killed(void)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p) < 0)
		return die("pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (pid == 0) {
		close(p[0]);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		return die("read");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("child %ld\n", (long)pid);
	return 0;
}

static volatile sig_atomic_t g_forks, g_bad;

/* One shot, 500 us, re-armed by the handler once its fork is done: a
 * periodic timer firing during a fork slower than its period (a loaded or
 * nested VM) makes the kernel restart the fork for ever (a group signal
 * arriving during fork), with or without the shim. */
static const struct itimerval g_shot = {{0, 0}, {0, 500}};

static void on_alarm(int sig)
{
	int saved = errno;
	pid_t pid = fork();

	(void)sig;
	if (pid == 0)
		_exit(0);
	if (pid < 0 || !wait_ok(pid))
		g_bad = 1;
	g_forks++;
	setitimer(ITIMER_REAL, &g_shot, NULL);
	errno = saved;
}

static int sigfork(int n)
{
	struct itimerval it = g_shot;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (g_forks < n && !g_bad)
		weak_register_int("w.again");
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	if (g_bad)
		return die("fork in a signal handler");
	printf("forks %d\n", n);
	return 0;
}

#define STACK 16384
static long g_use = -1, g_used = -1;

static void *on_small_stack(void *base)
{
	char here;

	if (g_use < 0) {
		printf("room %ld\n", (long)(&here - (char *)base));
	} else {
		/* No call after this (a first call through the PLT would
		 * need the resolver's large frame). */
		volatile char *b = __builtin_alloca((size_t)g_use);

		for (long i = g_use - 1; i >= 0; i--)
			b[i] = 1;
		g_used = g_use + b[g_use / 2] - 1;
	}
	return NULL;
}

static int small_stack(void)
{
	/* A guard page below the stack: running off it is SIGSEGV, as on a
	 * stack pthread_create makes itself. */
	char *m = mmap(NULL, STACK + 4096, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *stack = m + 4096;
	pthread_attr_t a;
	pthread_t t;

	if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) < 0)
		return die("mmap");
	pthread_attr_init(&a);
	if ((errno = pthread_attr_setstack(&a, stack, STACK)) ||
	    (errno = pthread_create(&t, &a, on_small_stack, stack)))
		return die("pthread_create");
	pthread_join(t, NULL);
	if (g_use >= 0)
		printf("used %ld\n", g_used);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int r = 2;

	if (!strcmp(mode, "raw") && argc > 2)
		r = raw(argv[2], argc > 3 && !strcmp(argv[3], "thread"));
	else if (!strcmp(mode, "threads"))
		r = threads();
	else if (!strcmp(mode, "daemon"))
		r = daemonize();
	else if (!strcmp(mode, "pty"))
		r = pty_child();
	else if (!strcmp(mode, "killed"))
		r = killed();
	else if (!strcmp(mode, "sigfork") && argc > 2)
		r = sigfork(atoi(argv[2]));
	else if (!strcmp(mode, "room"))
		r = small_stack();
	else if (!strcmp(mode, "use") && argc > 2) {
		g_use = atol(argv[2]);
		r = small_stack();
	}
	if (r == 2)
		fprintf(stderr, "usage: forkways raw|threads|daemon|pty|killed|"
		        "sigfork N|room|use B\n");
	fflush(stdout);
	return r;
}
