/*
 * forker.c - forks under the shim.
 *
 *   forker nested D    write "f.level" = depth, fork a child that does the
 *                      same one level deeper, down to depth D; every process
 *                      prints "pid <pid> level <depth>" and waits for its
 *                      child.
 *   forker quiet       fork a child that writes nothing and _exits
 *                      (reaped: no file of its own); prints
 *                      "child <pid>".
 *   forker quietign    the same with SIGCHLD ignored (the kernel reaps
 *                      it: with PRESERVE it makes its file at exit)
 *   forker threaded K  4 threads write events in a loop and 1 thread
 *                      registers new event names in a loop while a non-main
 *                      thread forks K children; each child writes
 *                      "f.child" = its index and _exits. Prints
 *                      "child <pid>".
 *   forker chdir DIR   write "f.level" = 0, chdir(DIR) as a daemon does,
 *                      fork a child that writes "f.child" = 1 and exits;
 *                      prints "child <pid>".
 */
#include <signal.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weak.h"

static int g_level = -1, g_child = -1, g_spin = -1;
static int g_stop;

static int nested(int depth, int max)
{
	pid_t pid;
	int st;

	weak_int(g_level, depth);
	printf("pid %ld level %d\n", (long)getpid(), depth);
	fflush(stdout);
	if (depth == max)
		return 0;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		exit(nested(depth + 1, max));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 1;
	weak_int(g_level, depth);
	return 0;
}

static void *spinner(void *p)
{
	long k = 0;

	(void)p;
	while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
		weak_int(g_spin, k++);
	return NULL;
}

static void *registrar(void *p)
{
	char name[32];
	long k = 0;

	(void)p;
	while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED) && k < 4000) {
		snprintf(name, sizeof(name), "reg.%ld", k++);
		weak_register_int(name);
	}
	return NULL;
}

static void *forking(void *p)
{
	long k = (long)p;

	for (long i = 0; i < k; i++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return (void *)1;
		if (pid == 0) {
			weak_int(g_child, i);
			/* _exit: the parent's threads do not exist here, and a
			 * leak checker run by exit() would warn about them. */
			_exit(0);
		}
		printf("child %ld\n", (long)pid);
		fflush(stdout);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			return (void *)1;
	}
	return NULL;
}

static int threaded(long k)
{
	pthread_t th[6];
	void *r;

	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, spinner, NULL);
	pthread_create(&th[4], NULL, registrar, NULL);
	pthread_create(&th[5], NULL, forking, (void *)k);
	pthread_join(th[5], &r);
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	return r != NULL;
}

static int after_chdir(const char *dir)
{
	pid_t pid;
	int st;

	weak_int(g_level, 0);
	if (chdir(dir) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		weak_int(g_child, 1);
		exit(0);
	}
	printf("child %ld\n", (long)pid);
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	               WEXITSTATUS(st) == 0
	       ? 0
	       : 1;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	g_level = weak_register_int("f.level");
	g_child = weak_register_int("f.child");
	g_spin = weak_register_int("f.spin");
	if (!strcmp(argv[1], "nested"))
		return nested(0, atoi(argv[2]));
	if (!strcmp(argv[1], "quiet")) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		printf("child %ld\n", (long)pid);
		return waitpid(pid, NULL, 0) != pid;
	}
	if (!strcmp(argv[1], "quietign")) {
		pid_t pid;

		signal(SIGCHLD, SIG_IGN);
		if ((pid = fork()) == 0)
			_exit(0);
		printf("child %ld\n", (long)pid);
		fflush(stdout);
		/* waits until the child is gone, then fails */
		return !(waitpid(pid, NULL, 0) < 0 && errno == ECHILD);
	}
	if (!strcmp(argv[1], "chdir"))
		return after_chdir(argv[2]);
	if (!strcmp(argv[1], "threaded"))
		return threaded(atol(argv[2]));
	return 2;
}
