/*
 * dlfork PLUGIN [N]: one thread loops on dlopen(PLUGIN)/dlclose while the
 * main thread forks N children (default 200), each of which stores
 * through NULL at once. Core dumps are turned off. A child still alive
 * 5 s after it was made is counted as hung and killed, and no more are
 * made. Prints
 * "children N segv S hung H"; exits 0 if every child died by SIGSEGV.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int g_stop;
static volatile int *volatile g_null;
static const char *g_plugin;

static void *loader(void *arg)
{
	(void)arg;
	while (!g_stop) {
		void *h = dlopen(g_plugin, RTLD_NOW | RTLD_LOCAL);

		if (h)
			dlclose(h);
	}
	return NULL;
}

/* Wait for pid at most 5 s: 1 if it died by SIGSEGV, 0 otherwise, -1
 * if it had to be killed. */
static int reap(pid_t pid)
{
	struct timespec nap = {0, 1000000};
	int st;

	for (int i = 0; i < 5000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int main(int argc, char **argv)
{
	struct rlimit no_core = {0, 0};
	int n = argc > 2 ? atoi(argv[2]) : 200, segv = 0, hung = 0;
	pthread_t t;

	if (argc < 2)
		return 2;
	g_plugin = argv[1];
	setrlimit(RLIMIT_CORE, &no_core);
	if (pthread_create(&t, NULL, loader, NULL))
		return 2;
	for (int i = 0; i < n && !hung; i++) {
		pid_t pid = fork();
		int r;

		if (pid < 0)
			return 2;
		if (pid == 0) {
			*g_null = 1;
			_exit(0);
		}
		r = reap(pid);
		segv += r == 1;
		hung += r < 0;
	}
	g_stop = 1;
	pthread_join(t, NULL);
	printf("children %d segv %d hung %d\n", n, segv, hung);
	return segv != n;
}
