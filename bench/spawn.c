/*
 * spawn.c - cost of pthread_create+join and of fork+waitpid, the calls the
 * shim hooks. bench/run.py runs it with and without LD_PRELOAD=librte.so
 * (tracing started) and compares. Prints {"name":..., "ns":[...]} lines.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void *nothing(void *arg)
{
	return arg;
}

static double thread_loop(int n)
{
	double t0 = now_ns();

	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL) != 0)
			return -1;
		pthread_join(t, NULL);
	}
	return (now_ns() - t0) / n;
}

static double fork_loop(int n)
{
	double t0 = now_ns();

	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return -1;
		if (p == 0)
			_exit(0);
		waitpid(p, NULL, 0);
	}
	return (now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	const char *label = argc > 3 ? argv[3] : "";

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: %s threads|fork [N [LABEL]]\n", argv[0]);
		return 1;
	}
	double ns = strcmp(argv[1], "fork") == 0 ? fork_loop(n) : thread_loop(n);
	printf("{\"name\":\"%s%s\",\"ns\":[%.1f]}\n", argv[1], label, ns);
	return ns < 0;
}
