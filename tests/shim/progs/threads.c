/*
 * threads.c - N threads in waves of at most C at a time, each writing
 * EVENTS int events "t.value" = its index; thread i ends by returning
 * (i % 3 == 0), pthread_exit (1) or cancellation (2), and names itself
 * "w<i>" with pthread_setname_np (even i) or prctl(PR_SET_NAME) (odd i).
 * Main renames each thread it will cancel to "c<i>" while it waits.
 * Usage: threads N C [closefds | reuse2 FILE]
 *   closefds     close every descriptor above 2 first, as daemons do,
 *                including the shim's own
 *   reuse2 FILE  close fd 2 and open FILE for writing, which gets fd 2 (a
 *                data file of the program's own, not its stderr)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "weak.h"

#define EVENTS 10

static int g_id = -1;
static pthread_barrier_t g_started;

static void *worker(void *p)
{
	long i = (long)p;
	char name[16];

	snprintf(name, sizeof(name), "w%ld", i);
	if (i % 2 == 0)
		pthread_setname_np(pthread_self(), name);
	else
		prctl(PR_SET_NAME, name, 0, 0, 0);
	for (int k = 0; k < EVENTS; k++)
		weak_int(g_id, i);
	if (i % 3 == 1)
		pthread_exit(NULL);
	if (i % 3 == 2) {
		pthread_barrier_wait(&g_started);
		for (;;)
			pause(); /* a cancellation point */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[1]) : 100;
	long c = argc > 2 ? atol(argv[2]) : 10;
	pthread_t th[64];

	if (c < 1 || c > 64)
		return 2;
	if (argc > 3 && !strcmp(argv[3], "closefds"))
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	if (argc > 4 && !strcmp(argv[3], "reuse2")) {
		close(2);
		if (open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644) != 2)
			return 4;
	}
	g_id = weak_register_int("t.value");
	weak_int(g_id, -1);
	for (long base = 0; base < n; base += c) {
		long m = n - base < c ? n - base : c, cancelled = 0;

		for (long j = 0; j < m; j++)
			cancelled += (base + j) % 3 == 2;
		pthread_barrier_init(&g_started, NULL, (unsigned)cancelled + 1);
		for (long j = 0; j < m; j++)
			if (pthread_create(&th[j], NULL, worker,
			                   (void *)(base + j)))
				return 3;
		pthread_barrier_wait(&g_started);
		for (long j = 0; j < m; j++) {
			char name[16];

			if ((base + j) % 3 != 2)
				continue;
			snprintf(name, sizeof(name), "c%d",
			         (int)((base + j) % 1000000));
			pthread_setname_np(th[j], name);
		}
		for (long j = 0; j < m; j++) {
			if ((base + j) % 3 == 2)
				pthread_cancel(th[j]);
			pthread_join(th[j], NULL);
		}
		pthread_barrier_destroy(&g_started);
	}
	printf("threads done %ld\n", n);
	return 0;
}
