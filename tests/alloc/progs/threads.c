/*
 * threads.c - threads created before tracing starts (the program starts it
 * itself with rte_start, found with dlsym: the shim is preloaded, not
 * linked), frees of memory allocated before tracing started, and a fork
 * from a thread while the others allocate.
 *
 * NTHREADS threads each allocate and free ALLOCS blocks of 56 bytes (7
 * words: bucket 7) after the start, then a fork from thread 0 makes a
 * child that allocates and frees CHILD blocks of 40 bytes (bucket 5) and
 * exits; meanwhile the other threads keep allocating 24-byte blocks.
 * Prints nothing; exits 0 if everything went as planned.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREADS 4
#define ALLOCS 100000
#define CHILD 5000
#define EARLY 1000

static pthread_barrier_t started, counted;
static int stop; /* atomic */
static void *early[NTHREADS][EARLY];

static void *run(void *arg)
{
	long me = (long)arg;

	for (int i = 0; i < EARLY; i++)
		early[me][i] = malloc(100);
	pthread_barrier_wait(&started); /* main starts tracing */
	pthread_barrier_wait(&started);
	for (int i = 0; i < EARLY; i++)
		free(early[me][i]);
	for (int i = 0; i < ALLOCS; i++)
		free(malloc(56));
	pthread_barrier_wait(&counted);
	if (me == 0) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			for (int i = 0; i < CHILD; i++)
				free(malloc(40));
			exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			exit(5);
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	} else {
		while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
			free(malloc(24));
	}
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	int (*start)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "rte_start");

	pthread_barrier_init(&started, NULL, NTHREADS + 1);
	pthread_barrier_init(&counted, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, run, (void *)i))
			return 1;
	pthread_barrier_wait(&started);
	/* Without the shim (the test's plain run) there is nothing to start. */
	if (start && start() != 0)
		return 2;
	pthread_barrier_wait(&started);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	return 0;
}
