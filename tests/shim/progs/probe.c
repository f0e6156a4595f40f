/*
 * probe.c - an ordinary program whose observable behaviour (stdout, exit
 * status, errno values) must be identical with and without the shim, even
 * when the shim cannot trace: it prints what it does, including errno after
 * failing calls, starts threads, forks, and exits with status 3.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weak.h"

static int g_id = -1;

static void *worker(void *p)
{
	for (int i = 0; i < 1000; i++)
		weak_int(g_id, (long)p);
	return p;
}

int main(void)
{
	pthread_t th[8];
	void *r;
	int st;
	pid_t pid;

	g_id = weak_register_int("p.value");
	errno = 0;
	st = open("/nonexistent/x", O_RDONLY);
	printf("open: %d errno=%d\n", st, errno);
	errno = EDOM;
	weak_int(g_id, 0);
	printf("errno kept: %d\n", errno);
	for (long i = 0; i < 8; i++)
		printf("create %ld: %d\n", i,
		       pthread_create(&th[i], NULL, worker, (void *)i));
	for (long i = 0; i < 8; i++) {
		pthread_join(th[i], &r);
		printf("join %ld: %ld\n", i, (long)r);
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		weak_int(g_id, 99);
		printf("child\n");
		_exit(5);
	}
	waitpid(pid, &st, 0);
	printf("child status %d\n", WEXITSTATUS(st));
	errno = 0;
	st = execl("/nonexistent/y", "y", (char *)NULL);
	printf("execl: %d errno=%d\n", st, errno);
	return 3;
}
