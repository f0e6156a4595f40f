/*
 * victim.c - the traced program of the fault tests: its stdout, exit
 * status and errno values are compared between a run without the shim and
 * a run under it while something goes wrong.
 *
 *   victim [-g GOFILE] [-r READYFILE] [-k]
 *
 * It writes 10 int events "victim.main" (0..9) from the main thread, then
 * (once GOFILE exists, if given; READYFILE is made, holding "ready", when
 * it starts waiting) starts a thread that writes 10 events "victim.thread" (0..9),
 * forks a child that writes 3 events "victim.child" and exits 5, writes
 * 10 more "victim.main" events (10..19), and exits 3. With -k it creates
 * READYFILE after its events and then waits forever (to be killed).
 *
 * stdout: the errno value seen after each call the shim interposes or
 * does work around (pthread_create, pthread_join, fork, a failing open,
 * exit handlers), the child's status, "done". The errno values are set
 * by the program to odd values first, so a wrapper that changes errno
 * changes the output.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stress_weak.h"

static int g_main = -1, g_thread = -1, g_child = -1;

static void *thread_body(void *arg)
{
	errno = EILSEQ;
	for (int k = 0; k < 10; k++)
		weak_int(g_thread, k);
	*(int *)arg = errno;
	return NULL;
}

/* Create `path` holding "ready" (written before it is renamed into place,
 * so a test that sees the file sees its content). */
static void touch(const char *path)
{
	char tmp[4096];
	int fd;

	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, "ready\n", 6) != 6 || close(fd) != 0 || rename(tmp, path))
		unlink(tmp);
}

/* Wait until `path` exists (at most about 60 s). */
static void await(const char *path)
{
	struct stat st;

	for (int i = 0; i < 60000 && stat(path, &st) != 0; i++)
		usleep(1000);
}

static void threads(void)
{
	pthread_t th;
	int seen = 0, r;

	errno = EDOM;
	r = pthread_create(&th, NULL, thread_body, &seen);
	printf("pthread_create %d errno %d\n", r, errno);
	errno = ERANGE;
	r = pthread_join(th, NULL);
	printf("pthread_join %d errno %d thread errno %d\n", r, errno, seen);
}

static void child(void)
{
	pid_t pid;
	int st = 0, e;

	fflush(stdout);
	errno = ENOTTY;
	pid = fork();
	if (pid == 0) {
		printf("child errno %d\n", errno);
		for (int k = 0; k < 3; k++)
			weak_int(g_child, k);
		fflush(stdout);
		exit(5);
	}
	e = errno;
	/* Printed after the child is gone: parent and child lines must come
	 * out in the same order in every run. */
	waitpid(pid, &st, 0);
	printf("fork %s errno %d\n", pid > 0 ? "ok" : "failed", e);
	printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv)
{
	const char *go = NULL, *ready = NULL;
	int opt, hang = 0;

	while ((opt = getopt(argc, argv, "g:r:k")) != -1) {
		if (opt == 'g')
			go = optarg;
		else if (opt == 'r')
			ready = optarg;
		else if (opt == 'k')
			hang = 1;
		else
			return 2;
	}
	errno = EXDEV;
	g_main = weak_register_int("victim.main");
	g_thread = weak_register_int("victim.thread");
	g_child = weak_register_int("victim.child");
	printf("start errno %d\n", errno);
	for (int k = 0; k < 10; k++)
		weak_int(g_main, k);
	if (hang) {
		touch(ready);
		for (;;)
			pause();
	}
	if (ready)
		touch(ready);
	if (go)
		await(go);
	threads();
	child();
	errno = 0;
	opt = open("/nonexistent/victim", O_RDONLY);
	printf("open %d errno %d\n", opt, errno);
	for (int k = 10; k < 20; k++)
		weak_int(g_main, k);
	printf("done\n");
	errno = EPERM;
	return 3;
}
