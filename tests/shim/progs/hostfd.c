/*
 * hostfd.c - what a traced program sees of descriptors and identity
 * (tests/shim/host.sh).
 *
 *   hostfd list
 *       start a thread (libunwind is loaded by the first pthread_create
 *       and the profilers), then print the descriptors /proc/self/fd
 *       lists (but the one reading it) and the number open() returns:
 *       the same traced and plain.
 *   hostfd daemon
 *       a daemon-style program: start a thread, close every descriptor
 *       above 2, make a pipe and a log file (they take 3, 4 and 5), put
 *       "hello" in the pipe, spin in code without unwind information (so
 *       that the profiler's unwinder validates addresses) with a second
 *       thread doing the same, then read the pipe back and write the log.
 *       Prints "pipe hello log ok" when nothing of ours touched them.
 *   hostfd churn N
 *       the daemon's race, N times over: a thread is started (so the
 *       wall-clock sampler opens a descriptor for a new thread) while the
 *       main thread closes every descriptor above 2 and makes a pipe,
 *       then checks that the pipe is still its own. Prints "churn ok"
 *       or the round its pipe was lost in.
 *   hostfd setuid UID CMD ARG...
 *       fork a child that sets its uid to UID (as a root daemon that
 *       drops privileges does), spins a little, then execs CMD; waits.
 *   hostfd vsetuid UID CMD ARG...
 *       the same from a vfork child (no spin); then the parent starts a
 *       thread (an event of its own) and prints "parent ok".
 *   hostfd killed N
 *       fork N children that each spin until SIGKILLed by the parent.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *idle(void *arg)
{
	return arg;
}

static void one_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, idle, NULL) || pthread_join(t, NULL)) {
		perror("pthread_create");
		exit(2);
	}
}

static int list(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self, fd;

	if (!d) {
		perror("opendir");
		return 2;
	}
	self = dirfd(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != self)
			printf("fd %s\n", e->d_name);
	closedir(d);
	fd = open("/dev/null", O_RDONLY);
	printf("open %d\n", fd);
	return 0;
}

/* Built without unwind tables (see tests/shim mk rules): libunwind finds
 * no DWARF for these frames and walks them by frame pointers, validating
 * each address it reads. */
__attribute__((noinline, optimize("no-omit-frame-pointer")))
static unsigned long spin_leaf(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i;
	return x;
}

__attribute__((noinline, optimize("no-omit-frame-pointer")))
static unsigned long spin(unsigned long n)
{
	return spin_leaf(n) + 1;
}

static void *spinner(void *arg)
{
	spin(400000000ul);
	return arg;
}

static int daemon_like(void)
{
	char buf[16] = {0};
	int p[2], log;
	pthread_t t;
	ssize_t n;

	one_thread();
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	if (pipe(p) < 0 ||
	    (log = open("/dev/null", O_WRONLY)) < 0) {
		perror("pipe");
		return 2;
	}
	if (write(p[1], "hello", 5) != 5) {
		perror("write pipe");
		return 2;
	}
	if (pthread_create(&t, NULL, spinner, NULL)) {
		perror("pthread_create");
		return 2;
	}
	spin(400000000ul);
	pthread_join(t, NULL);
	n = read(p[0], buf, sizeof(buf) - 1);
	if (n != 5 || memcmp(buf, "hello", 5)) {
		printf("pipe gave %zd bytes:", n);
		for (ssize_t i = 0; i < n; i++)
			printf(" %02x", (unsigned char)buf[i]);
		printf("\n");
		return 1;
	}
	if (write(log, "log\n", 4) != 4) {
		printf("log write: %s\n", strerror(errno));
		return 1;
	}
	printf("pipe hello log ok\n");
	return 0;
}

static void *sleeper(void *arg)
{
	struct timespec ts = {0, 200000};

	nanosleep(&ts, NULL);
	return arg;
}

static int churn(int n)
{
	for (int i = 0; i < n; i++) {
		struct timespec ts = {0, 0};
		int p[2];
		pthread_t t;
		char c = 0;

		if (pthread_create(&t, NULL, sleeper, NULL))
			return 2;
		/* Close everything while the sampler may be opening the new
		 * thread's /proc file, then take the lowest numbers. */
		for (long k = 0; k < 200; k++) {
			ts.tv_nsec = 5000;
			for (int fd = 3; fd < 16; fd++)
				close(fd);
			if (pipe(p) < 0)
				return 2;
			if (write(p[1], "y", 1) != 1 || read(p[0], &c, 1) != 1 ||
			    c != 'y') {
				printf("churn: pipe lost in round %d: %s\n", i,
				       strerror(errno));
				return 1;
			}
			close(p[0]);
			close(p[1]);
		}
		pthread_join(t, NULL);
		nanosleep(&ts, NULL);
	}
	printf("churn ok\n");
	return 0;
}

static int drop_and_exec(char **argv)
{
	uid_t uid = (uid_t)atoi(argv[0]);
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (setgid(uid) < 0 || setuid(uid) < 0)
			_exit(3);
		spin(20000000ul);
		execv(argv[1], argv + 1);
		_exit(4);
	}
	if (waitpid(pid, &st, 0) < 0)
		return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int vfork_drop_and_exec(char **argv)
{
	uid_t uid = (uid_t)atoi(argv[0]);
	pthread_t t;
	pid_t pid = vfork();
	int st;

	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (setgid(uid) < 0 || setuid(uid) < 0)
			_exit(3);
		execv(argv[1], argv + 1);
		_exit(4);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 2;
	pthread_create(&t, NULL, idle, NULL);
	pthread_join(t, NULL);
	printf("parent ok\n");
	return 0;
}

static int killed(int n)
{
	for (int i = 0; i < n; i++) {
		int go[2], st;
		char c;
		pid_t pid;

		if (pipe(go) < 0)
			return 2;
		pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			/* An event of its own first: the child makes its file. */
			pthread_t t;

			pthread_create(&t, NULL, idle, NULL);
			pthread_join(t, NULL);
			if (write(go[1], "x", 1) != 1)
				_exit(2);
			for (;;)
				spin(1000000ul);
		}
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			return 2;
		close(go[0]);
		kill(pid, SIGKILL);
		if (waitpid(pid, &st, 0) < 0 || !WIFSIGNALED(st))
			return 2;
	}
	printf("killed %d\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "list")) {
		one_thread();
		return list();
	}
	if (argc >= 2 && !strcmp(argv[1], "daemon"))
		return daemon_like();
	if (argc >= 3 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "setuid"))
		return drop_and_exec(argv + 2);
	if (argc >= 4 && !strcmp(argv[1], "vsetuid"))
		return vfork_drop_and_exec(argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "killed"))
		return killed(atoi(argv[2]));
	fprintf(stderr, "usage: hostfd list|daemon|churn N|setuid UID CMD...|killed N\n");
	return 2;
}
