/*
 * forkstorm.c - FORKS forks (argv[1]) made by two forker threads at once
 * while WRITERS threads (argv[2]) write int events "storm.w" as fast as
 * they can. Child number i (0 .. FORKS-1) writes 1 + i % 4 int events
 * "storm.child" = i * 8 + k, k = 0, 1, ..., and ends with exit(0) (even i)
 * or _exit(0) (odd i); an alarm kills a child that hangs (a deadlock then
 * shows as a failed child instead of a hung test). Meanwhile a spawner
 * thread creates and joins SPAWNS short threads, one at a time, each
 * writing "storm.spawned" = its number: thread start and end (which take
 * the shim's registry) race the forks too.
 *
 * stdout: "child <i> <pid>" per fork, then "forks <n> failed <m>" and
 * "spawned <n>".
 * Exit 0 if every fork worked and every child exited 0, else 1 (2: usage).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stress_weak.h"

#define MAX_WRITERS 16
#define CHILD_ALARM_S 30
#define SPAWNS 1000

static int g_w = -1, g_child = -1, g_spawned = -1;
static long g_forks;
static int g_stop;
static int g_ready; /* writers that hold their ring */
static int g_failed;
static pthread_mutex_t g_out = PTHREAD_MUTEX_INITIALIZER;

static void *writer(void *arg)
{
	int64_t tag = (int64_t)(long)arg << 40;

	/* Our ring is claimed at thread start: say so. Otherwise a short
	 * thread could end first and leave its ring to this writer, whose
	 * flood would overwrite its events (lost, as rings are, but then
	 * the exact check of storm.spawned below could not hold). */
	__atomic_fetch_add(&g_ready, 1, __ATOMIC_RELEASE);
	/* Relaxed: a stop request; nothing is published with it. */
	for (int64_t k = 0; !__atomic_load_n(&g_stop, __ATOMIC_RELAXED); k++)
		weak_int(g_w, tag | k);
	return NULL;
}

static void *short_thread(void *arg)
{
	weak_int(g_spawned, (long)arg);
	return NULL;
}

/* Create and join SPAWNS threads, one at a time, while the forks run. */
static void *spawner(void *arg)
{
	long *n = arg;
	pthread_t t;

	for (*n = 0; *n < SPAWNS; ++*n) {
		int r = pthread_create(&t, NULL, short_thread, (void *)*n);

		if (r == 0 && (r = pthread_join(t, NULL)) != 0)
			fprintf(stderr, "pthread_join %ld: error %d\n", *n, r);
		else if (r)
			fprintf(stderr, "pthread_create %ld: error %d\n", *n, r);
		if (r)
			break;
	}
	return NULL;
}

static void child(long i)
{
	alarm(CHILD_ALARM_S);
	for (long k = 0; k <= i % 4; k++)
		weak_int(g_child, i * 8 + k);
	if (i % 2)
		_exit(0);
	exit(0);
}

/* Fork children first .. first + n - 1, one at a time, and reap each. */
static void *forker(void *arg)
{
	long first = (long)arg, n = g_forks / 2 + (first ? g_forks % 2 : 0);

	for (long i = first; i < first + n; i++) {
		int st = 0;
		pid_t pid = fork();

		if (pid == 0)
			child(i);
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "forkstorm: child %ld (pid %ld) failed, "
			        "status 0x%x\n", i, (long)pid, st);
			__atomic_fetch_add(&g_failed, 1, __ATOMIC_RELAXED);
		}
		pthread_mutex_lock(&g_out);
		printf("child %ld %ld\n", i, (long)pid);
		pthread_mutex_unlock(&g_out);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w[MAX_WRITERS], f[2], sp;
	long nw = argc > 2 ? atol(argv[2]) : 0, spawned = 0;

	g_forks = argc > 2 ? atol(argv[1]) : 0;
	if (g_forks < 2 || nw < 1 || nw > MAX_WRITERS) {
		fprintf(stderr, "usage: forkstorm FORKS(>=2) WRITERS(1..%d)\n",
		        MAX_WRITERS);
		return 2;
	}
	/* Unbuffered: a child's exit() must not flush a copy of our buffer. */
	setvbuf(stdout, NULL, _IONBF, 0);
	g_w = weak_register_int("storm.w");
	g_child = weak_register_int("storm.child");
	g_spawned = weak_register_int("storm.spawned");
	for (long t = 0; t < nw; t++)
		if (pthread_create(&w[t], NULL, writer, (void *)t) != 0)
			return 2;
	/* Acquire: pairs with each writer's increment. */
	while (__atomic_load_n(&g_ready, __ATOMIC_ACQUIRE) < nw)
		sched_yield();
	if (pthread_create(&sp, NULL, spawner, &spawned) != 0 ||
	    pthread_create(&f[0], NULL, forker, (void *)0L) != 0 ||
	    pthread_create(&f[1], NULL, forker, (void *)(g_forks / 2)) != 0)
		return 2;
	pthread_join(f[0], NULL);
	pthread_join(f[1], NULL);
	pthread_join(sp, NULL);
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
	for (long t = 0; t < nw; t++)
		pthread_join(w[t], NULL);
	printf("forks %ld failed %d\nspawned %ld\n", g_forks, g_failed, spawned);
	return g_failed || spawned != SPAWNS ? 1 : 0;
}
