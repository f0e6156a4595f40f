/*
 * forkthreads.c - a real program for the Chrome tests (tests/reader/
 * views.sh), run under librte.so by rte-run, linked with nothing of
 * ours: threads in waves (so that rings are reused by later threads),
 * forks from the main thread and from a worker thread, and children that
 * start threads of their own.
 *
 *   forkthreads WAVES THREADS FORKS
 *
 * WAVES waves of THREADS threads named "w<wave>.<n>" (each works about
 * 1 ms and ends before the next wave starts); after each wave but the
 * last, the main thread forks a child; besides, the first worker of the
 * first wave forks FORKS children. Each child starts two threads, joins
 * them and _exits 0. Exits 0, 1 if a call failed, 2 on bad usage.
 *
 * The other workers of the first wave are alive while their brother
 * forks, but none is inside malloc or free: they have all started
 * (a barrier) and end only once the forks are done. A child forked
 * while another thread holds an allocator's lock inherits the lock held
 * (glibc's malloc guards itself against that; the allocator of GCC 12's
 * AddressSanitizer does not, and such a child hung in `make check-asan`).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int forks;
static pthread_barrier_t started;  /* the first wave's workers */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int forked;                 /* the first worker's forks are done */

static void work(void)
{
	struct timespec ts = { 0, 1000000 };
	volatile uint64_t x = 1;

	for (unsigned i = 0; i < 100000; i++)
		x = x * 6364136223846793005ull + 1;
	nanosleep(&ts, NULL);
}

static void *child_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "child-t");
	work();
	return NULL;
}

/* Fork a child that starts and joins two threads; 0 or -1. */
static int fork_one(void)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		pthread_t t[2];

		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, child_thread, NULL) != 0)
				_exit(1);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		_exit(0);
	}
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	char name[16];
	intptr_t rc = 0;

	snprintf(name, sizeof name, "w%u.%u", (unsigned)(id >> 8), (unsigned)(id & 255));
	pthread_setname_np(pthread_self(), name);
	if (id >> 8 == 0)
		pthread_barrier_wait(&started);
	work();
	if (id == 0) {
		for (int i = 0; i < forks; i++)
			rc |= fork_one();
		pthread_mutex_lock(&mu);
		forked = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	} else if (id >> 8 == 0) {
		pthread_mutex_lock(&mu);
		while (!forked)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
	}
	return (void *)rc;
}

int main(int argc, char **argv)
{
	int waves, threads, rc = 0;

	if (argc != 4 || (waves = atoi(argv[1])) < 1 || (threads = atoi(argv[2])) < 1 ||
	    threads > 64 || (forks = atoi(argv[3])) < 0) {
		fprintf(stderr, "usage: forkthreads WAVES THREADS FORKS\n");
		return 2;
	}
	if (pthread_barrier_init(&started, NULL, (unsigned)threads) != 0)
		return 1;
	for (int w = 0; w < waves; w++) {
		pthread_t t[64];
		void *r;

		for (int i = 0; i < threads; i++)
			if (pthread_create(&t[i], NULL, worker,
			                   (void *)(uintptr_t)((unsigned)w << 8 | (unsigned)i)) != 0)
				return 1;
		for (int i = 0; i < threads; i++) {
			pthread_join(t[i], &r);
			rc |= r != NULL;
		}
		if (w + 1 < waves)
			rc |= fork_one() != 0;
	}
	return rc ? 1 : 0;
}
