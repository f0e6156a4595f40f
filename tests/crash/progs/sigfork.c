/*
 * sigfork: one thread loops on sigaction(SIGSEGV) while the main thread
 * forks N children (default 2000), each of which calls
 * signal(SIGSEGV, SIG_DFL) and exits 0. A child that has not exited 5 s
 * after it was made is counted as hung and killed, and no more are made.
 * Prints "children N hung H" and exits 0 if no child hung, 1 otherwise.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int g_stop;

static void on_segv(int sig)
{
	(void)sig;
}

static void *flipper(void *arg)
{
	struct sigaction sa = {0};

	(void)arg;
	sigemptyset(&sa.sa_mask);
	while (!g_stop) {
		sa.sa_handler = on_segv;
		sigaction(SIGSEGV, &sa, NULL);
		sa.sa_handler = SIG_DFL;
		sigaction(SIGSEGV, &sa, NULL);
	}
	return NULL;
}

/* Wait for pid at most 5 s; returns 1 if it had to be killed. */
static int reap(pid_t pid)
{
	struct timespec nap = {0, 1000000};

	for (int i = 0; i < 5000; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 0;
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000, hung = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, flipper, NULL))
		return 2;
	for (int i = 0; i < n && !hung; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (pid == 0) {
			signal(SIGSEGV, SIG_DFL);
			_exit(0);
		}
		hung += reap(pid);
	}
	g_stop = 1;
	pthread_join(t, NULL);
	printf("children %d hung %d\n", n, hung);
	return hung != 0;
}
