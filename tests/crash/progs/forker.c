/* forker: for RTE_BACKTRACE=all: fork from fork_site(), create a thread
 * from spawn_site(); the thread then crashes in victim(). */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int *volatile g_null;

void fork_site(void);
void spawn_site(void);
void victim(void);

void victim(void)
{
	*g_null = 1;
}

static void *worker(void *arg)
{
	(void)arg;
	victim();
	return NULL;
}

void fork_site(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

void spawn_site(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL) == 0)
		pthread_join(t, NULL);
}

int main(void)
{
	printf("forking\n");
	fflush(stdout);
	fork_site();
	spawn_site();
	return 0;
}
