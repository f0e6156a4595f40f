/* thread: a thread named "worker" crashes in thread_one -> thread_two ->
 * thread_three while the main thread waits for it. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile int *volatile g_null;

void thread_three(int x);
void thread_two(int x);
void thread_one(int x);

void thread_three(int x)
{
	*g_null = x;
}

void thread_two(int x)
{
	thread_three(x + 1);
	printf("not reached %d\n", x);
}

void thread_one(int x)
{
	thread_two(x + 1);
	printf("not reached %d\n", x);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker");
	thread_one(1);
	return NULL;
}

int main(void)
{
	pthread_t t;

	printf("starting the worker\n");
	fflush(stdout);
	if (pthread_create(&t, NULL, worker, NULL))
		return 2;
	pthread_join(t, NULL);
	printf("not reached\n");
	return 0;
}
