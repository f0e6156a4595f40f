/*
 * bad.c - the malloc family's odd calls, each pair freed at once (so a
 * temporary): realloc to 0, free(NULL), memalign, posix_memalign,
 * aligned_alloc, valloc, pvalloc, malloc_usable_size, allocations in a
 * signal handler and in fork's handlers, and a fork whose child
 * allocates. Prints "temps N", the
 * temporaries it made in the parent's main thread (heaptrack's
 * definition, by address).
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* fork's handlers allocate too (the child's and the parent's: each a
 * temporary of its own process; prepare's one, the parent's). */
static void at_fork(void)
{
	free(malloc(300));
}

static void on_usr1(int sig)
{
	void *p = malloc(200); /* glibc's malloc in a handler: not safe in
	                          general, fine here (raised synchronously) */

	(void)sig;
	free(p);
}

int main(void)
{
	int temps = 0;
	void *p;

	for (int i = 0; i < 10; i++)
		free(NULL);                     /* nothing */
	p = malloc(100);
	if (realloc(p, 0) == NULL)              /* glibc: frees p */
		temps++;
	p = memalign(64, 1000);
	free(p), temps++;
	if (posix_memalign(&p, 256, 3000) == 0)
		free(p), temps++;
	p = aligned_alloc(128, 512);
	free(p), temps++;
	p = valloc(5000);
	free(p), temps++;
	p = pvalloc(100);
	free(p), temps++;
	p = malloc(77);
	if (malloc_usable_size(p) < 77)
		return 1;
	free(p), temps++;
	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < 100; i++) {
		raise(SIGUSR1);                 /* one temporary each */
		temps++;
	}
	fflush(stdout);
	pthread_atfork(at_fork, at_fork, at_fork);
	temps += 2; /* prepare and parent */
	pid_t c = fork();
	if (c == 0) {
		void *q = malloc(1 << 20);
		memset(q, 1, 1 << 20);
		free(q);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return 2;
	printf("temps %d\n", temps);
	return 0;
}
