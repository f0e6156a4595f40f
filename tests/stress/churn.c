/*
 * churn.c - thread churn: TOTAL threads (argv[1]) created and joined with
 * ALIVE (argv[2]) alive at a time: thread i writes one int event
 * "churn.i" = i, waits until main is about to join it (so that ALIVE
 * threads hold rings at once), and ends by returning (even i) or
 * pthread_exit (odd i).
 *
 * Leak probe: after the first tenth of the threads, and again at the end,
 * every thread is joined and the process's open descriptors and its
 * anonymous resident size (RssAnon: heap and stacks, not the mapped ring
 * file, whose pages count as they are first written) are measured; stdout gets
 *   churn: threads <n> fds <before> <after> anon_kb <before> <after>
 * (the test compares them). Exit 0, or 2 on a usage or thread error.
 */
#include <dirent.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress_weak.h"

#define MAX_ALIVE 64

static int g_id = -1;
static int g_alive;
static sem_t g_go[MAX_ALIVE]; /* posted by main just before it joins */

static void *work(void *arg)
{
	long i = (long)arg;

	weak_int(g_id, i);
	while (sem_wait(&g_go[i % g_alive]) != 0)
		;
	if (i % 2)
		pthread_exit(NULL);
	return NULL;
}

/* Open descriptors of this process (the directory's own one excluded). */
static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Let the thread of slot s end and join it, if there is one. */
static int join_slot(pthread_t *th, int *live, int s)
{
	if (!live[s])
		return 0;
	live[s] = 0;
	sem_post(&g_go[s]);
	return pthread_join(th[s], NULL) == 0 ? 0 : -1;
}

static int join_all(pthread_t *th, int *live, int alive)
{
	for (int s = 0; s < alive; s++)
		if (join_slot(th, live, s) < 0)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_ALIVE];
	int live[MAX_ALIVE] = { 0 };
	long total = argc > 2 ? atol(argv[1]) : 0, warm = total / 10;
	int alive = argc > 2 ? atoi(argv[2]) : 0;
	long fds0 = 0, rss0 = 0;

	if (total < 10 || alive < 1 || alive > MAX_ALIVE) {
		fprintf(stderr, "usage: churn TOTAL(>=10) ALIVE(1..%d)\n", MAX_ALIVE);
		return 2;
	}
	g_alive = alive;
	for (int s = 0; s < alive; s++)
		sem_init(&g_go[s], 0, 0);
	g_id = weak_register_int("churn.i");
	for (long i = 0; i < total; i++) {
		int s = (int)(i % alive);

		if (i == warm) {
			if (join_all(th, live, alive) < 0)
				return 2;
			fds0 = count_fds();
			rss0 = rss_kb();
		}
		if (join_slot(th, live, s) < 0)
			return 2;
		if (pthread_create(&th[s], NULL, work, (void *)i) != 0) {
			fprintf(stderr, "churn: pthread_create failed at %ld\n", i);
			return 2;
		}
		live[s] = 1;
	}
	if (join_all(th, live, alive) < 0)
		return 2;
	printf("churn: threads %ld fds %ld %ld anon_kb %ld %ld\n", total, fds0,
	       count_fds(), rss0, rss_kb());
	return 0;
}
