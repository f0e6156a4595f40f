/*
 * spawn.c - cost of the calls the shim hooks and of a traced process's
 * life. bench/run.py runs it with and without LD_PRELOAD=librte.so
 * (tracing started) and compares. Prints {"name":..., "ns":[...]} lines.
 *
 *   spawn threads N   pthread_create+join, ns per pair
 *   spawn fork N      fork+_exit+waitpid, ns per child
 *   spawn forkw N     the same, each child writing one event first (with
 *                     PRESERVE it then keeps a file of its own; a child
 *                     that writes nothing and is reaped makes none)
 *   spawn exec N      fork+execv(/bin/true)+waitpid, ns per child (the
 *                     child image loads the shim too when it is preloaded)
 *   fork and exec also print "<kind>_cpu": CPU time per child, of this
 *                     process and its children (getrusage), which a
 *                     machine shared with other work disturbs less than
 *                     the wall time
 *   spawn rss N       N threads alive at once, each writes one event if
 *                     the shim is loaded; prints VmRSS in KiB while they
 *                     all live (not ru_maxrss: it survives exec, and would
 *                     report the launcher's size)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RTE_WEAK
#include "rte/rte.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* CPU time of this process and of its waited-for children, in ns. */
static double cpu_ns(void)
{
	struct rusage self, kids;
	double t = 0;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	t += (double)self.ru_utime.tv_sec * 1e9 + self.ru_utime.tv_usec * 1e3;
	t += (double)self.ru_stime.tv_sec * 1e9 + self.ru_stime.tv_usec * 1e3;
	t += (double)kids.ru_utime.tv_sec * 1e9 + kids.ru_utime.tv_usec * 1e3;
	t += (double)kids.ru_stime.tv_sec * 1e9 + kids.ru_stime.tv_usec * 1e3;
	return t;
}

static int g_id = -1;
static double g_cpu; /* CPU ns per child of the last fork or exec loop */

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

static double fork_loop(int n, int write)
{
	double c0 = cpu_ns(), t0 = now_ns();

	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return -1;
		if (p == 0) {
			if (write && rte_int && g_id >= 0)
				rte_int(g_id, 1);
			_exit(0);
		}
		waitpid(p, NULL, 0);
	}
	t0 = (now_ns() - t0) / n;
	g_cpu = (cpu_ns() - c0) / n;
	return t0;
}

static double exec_loop(int n)
{
	double c0 = cpu_ns(), t0 = now_ns();
	char *argv[] = {"true", NULL};

	for (int i = 0; i < n; i++) {
		int st;
		pid_t p = fork();

		if (p < 0)
			return -1;
		if (p == 0) {
			execv("/bin/true", argv);
			_exit(127);
		}
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return -1;
	}
	t0 = (now_ns() - t0) / n;
	g_cpu = (cpu_ns() - c0) / n;
	return t0;
}

static pthread_barrier_t g_all;

static void *alive(void *arg)
{
	if (rte_int && g_id >= 0)
		rte_int(g_id, 1);
	pthread_barrier_wait(&g_all); /* all alive at once */
	pthread_barrier_wait(&g_all); /* main measured */
	return arg;
}

/* VmRSS of this process in KiB, or -1. */
static double vm_rss(void)
{
	char line[256];
	double kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atof(line + 6);
	fclose(f);
	return kib;
}

static double rss_threads(int n)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	double kib;

	if (!t)
		return -1;
	if (rte_register)
		g_id = rte_register("bench.alive", RTE_TYPE_INT);
	pthread_barrier_init(&g_all, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, alive, NULL))
			return -1;
	pthread_barrier_wait(&g_all);
	kib = vm_rss();
	pthread_barrier_wait(&g_all);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	return kib;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	const char *label = argc > 3 ? argv[3] : "";
	double ns;

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: %s threads|fork|forkw|exec|rss [N [LABEL]]\n",
		        argv[0]);
		return 1;
	}
	if (!strcmp(argv[1], "fork"))
		ns = fork_loop(n, 0);
	else if (!strcmp(argv[1], "forkw")) {
		if (rte_register)
			g_id = rte_register("bench.child", RTE_TYPE_INT);
		ns = fork_loop(n, 1);
	}
	else if (!strcmp(argv[1], "exec"))
		ns = exec_loop(n);
	else if (!strcmp(argv[1], "rss"))
		ns = rss_threads(n);
	else
		ns = thread_loop(n);
	printf("{\"name\":\"%s%s\",\"ns\":[%.1f]}\n", argv[1], label, ns);
	if (g_cpu > 0)
		printf("{\"name\":\"%s_cpu%s\",\"ns\":[%.1f]}\n", argv[1], label,
		       g_cpu);
	return ns < 0;
}
