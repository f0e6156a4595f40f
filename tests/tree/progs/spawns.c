/*
 * spawns - every way a C program makes a child, each child's end known
 * (tests/tree/run.sh compares this tree under strace -f and under rte):
 *
 *   spawns all     posix_spawnp (exit 4), vfork+execlp (exit 5), system()
 *                  (exit 6), fork (exit 3), a child killed by SIGKILL
 *                  while it sleeps (sh -c 'exec "$0" sleeper': the
 *                  image that says it sleeps is already traced, so the
 *                  kill never comes before its start), a daemon()
 *                  double fork whose grandchild execs (exit 9; reaped
 *                  here, a subreaper); exits 2
 *   spawns argv    re-executes itself with an argv of a newline, non-UTF-8
 *                  bytes, an empty argument, a quote and UTF-8; that image
 *                  rewrites its argv[1] in place, forks (the child exits
 *                  7), exits 0
 *   spawns many N  execs /bin/true with N arguments
 *   spawns vforkfail  a vfork child whose exec fails _exits 42; the
 *                  parent exits 2: its own end must stay its own (exit()
 *                  in a vfork child is not tried: it runs the parent's
 *                  exit handlers, also without the shim)
 *   spawns spawnfail  posix_spawnp of a program nowhere on PATH
 *                  (ENOENT), posix_spawn of /dev/null (EACCES), then one
 *                  that runs (exit 4); exits 2 if the two failed as said
 *   spawns popen   popen(3) twice: reads "hi" from `echo hi; exit 8`
 *                  (pclose: exit 8), writes to `cat >/dev/null; exit 9`
 *                  (exit 9); exits 2
 *   spawns reuse   two children with the same pid (ns_last_pid; needs
 *                  root), each execs sh -c 'exit K'; prints "reused PID"
 *                  or "not reused"
 *   spawns quiet   fork children that never write and only exit, their
 *                  ends told by this process in every way it can fail
 *                  to: forked and reaped while tracing is paused (exit
 *                  11, 12), SIGCHLD ignored at the fork and the child
 *                  setting it back (exit 13: the kernel reaps it), one
 *                  reaped after this process re-executes itself (exit 14;
 *                  `spawns waiter`), one that exec's /bin/true; exits 0
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void reap(pid_t p)
{
	int st;

	while (waitpid(p, &st, 0) < 0)
		;
}

static int all(const char *self)
{
	char *av[] = {"sh", "-c", "exit 4", NULL};
	int fds[2], st;
	char c;
	pid_t p;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (posix_spawnp(&p, "sh", NULL, NULL, av, environ))
		return 1;
	reap(p);
	p = vfork();
	if (p == 0) {
		execlp("sh", "sh", "-c", "exit 5", (char *)NULL);
		_exit(127);
	}
	reap(p);
	st = system("exit 6");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 6)
		return 1;
	p = fork();
	if (p == 0)
		exit(3);
	reap(p);
	/* SIGKILL once the child has started its sleep. */
	if (pipe(fds))
		return 1;
	p = fork();
	if (p == 0) {
		dup2(fds[1], 1);
		execlp("sh", "sh", "-c", "exec \"$0\" sleeper", self, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		return 1;
	kill(p, SIGKILL);
	reap(p);
	/* daemon(): its grandchild is ours to reap (subreaper). */
	if (pipe(fds))
		return 1;
	p = fork();
	if (p == 0) {
		close(fds[0]);
		if (daemon(1, 1) < 0)
			_exit(1);
		execlp("sh", "sh", "-c", "exit 9", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	reap(p);
	/* The grandchild holds the pipe open until its exec's exit. */
	while (read(fds[0], &c, 1) > 0)
		;
	while (wait(&st) > 0)
		;
	return 2;
}

static int argv_mode(int argc, char **argv)
{
	pid_t p;

	if (argc > 2) { /* the re-executed image */
		memset(argv[2], 'Z', strlen(argv[2]));
		p = fork();
		if (p == 0)
			_exit(7);
		reap(p);
		return 0;
	}
	execl("/proc/self/exe", argv[0], "argv", "line one\nline two",
	      "\xff\xfe bytes \xc3", "", "a \"quote\" and \\",
	      "\xc3\xbc-file.c \xe2\x82\xac \xf0\x9d\x84\x9e", (char *)NULL);
	return 127;
}

static int many(int n)
{
	char **av = calloc((size_t)n + 2, sizeof(*av));

	if (!av)
		return 1;
	av[0] = "true";
	for (int i = 1; i <= n; i++)
		av[i] = "arg";
	execv("/bin/true", av);
	return 127;
}

static int reuse(void)
{
	pid_t first, p;
	int fd;
	char buf[32];

	first = fork();
	if (first == 0) {
		execlp("sh", "sh", "-c", "exit 11", (char *)NULL);
		_exit(127);
	}
	reap(first);
	for (int i = 0; i < 20; i++) {
		fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
		if (fd < 0)
			break;
		snprintf(buf, sizeof buf, "%d", first - 1);
		if (write(fd, buf, strlen(buf)) < 0) {
			close(fd);
			break;
		}
		close(fd);
		p = fork();
		if (p == 0) {
			execlp("sh", "sh", "-c", "exit 12", (char *)NULL);
			_exit(127);
		}
		reap(p);
		if (p == first) {
			printf("reused %d\n", p);
			return 0;
		}
	}
	printf("not reused\n");
	return 0;
}

static int vforkfail(void)
{
	pid_t p = vfork();

	if (p == 0) {
		execlp("/nonexistent/rte-test", "x", (char *)NULL);
		_exit(42);
	}
	reap(p);
	return 2;
}

/* popen's children: glibc makes them with its internal posix_spawn,
 * which no interposed symbol sees. */
static int popen_mode(void)
{
	char buf[16] = "";
	FILE *f = popen("echo hi; exit 8", "r");
	int st;

	if (!f || !fgets(buf, sizeof(buf), f))
		return 1;
	st = pclose(f);
	if (strcmp(buf, "hi\n") || !WIFEXITED(st) || WEXITSTATUS(st) != 8)
		return 1;
	f = popen("cat >/dev/null; exit 9", "w");
	if (!f || fputs("data\n", f) < 0)
		return 1;
	st = pclose(f);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 9)
		return 1;
	return 2;
}

void rte_pause(void) __attribute__((weak));
void rte_resume(void) __attribute__((weak));

static void nap(void)
{
	struct timespec t = { 0, 100000000 };

	nanosleep(&t, NULL);
}

static int quiet(const char *self)
{
	pid_t p;
	int st;

	if (rte_pause)
		rte_pause();
	if ((p = fork()) == 0)
		_exit(11);
	reap(p);
	if (rte_resume)
		rte_resume();
	if ((p = fork()) == 0) {
		nap();
		_exit(12);
	}
	if (rte_pause)
		rte_pause();
	reap(p);
	if (rte_resume)
		rte_resume();
	signal(SIGCHLD, SIG_IGN);
	if ((p = fork()) == 0) {
		signal(SIGCHLD, SIG_DFL);
		_exit(13);
	}
	nap();
	if (waitpid(p, &st, 0) != -1) /* reaped by the kernel */
		return 1;
	signal(SIGCHLD, SIG_DFL);
	if ((p = fork()) == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	reap(p);
	if ((p = fork()) == 0) {
		nap();
		_exit(14);
	}
	execl(self, self, "waiter", (char *)NULL);
	return 1;
}

static int spawnfail(void)
{
	char *miss[] = {"rte-no-such-program", "an arg", NULL};
	char *noexec[] = {"/dev/null", "x", NULL};
	char *ok[] = {"sh", "-c", "exit 4", NULL};
	pid_t p = 0;

	if (posix_spawnp(&p, miss[0], NULL, NULL, miss, environ) != ENOENT ||
	    posix_spawn(&p, noexec[0], NULL, NULL, noexec, environ) != EACCES ||
	    posix_spawnp(&p, "sh", NULL, NULL, ok, environ))
		return 1;
	reap(p);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "quiet"))
		return quiet(argv[0]);
	if (argc > 1 && !strcmp(argv[1], "waiter")) {
		int st;

		return wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 14 ? 0 : 1;
	}
	if (argc > 1 && !strcmp(argv[1], "all"))
		return all(argv[0]);
	if (argc > 1 && !strcmp(argv[1], "sleeper")) {
		/* main runs after every constructor: our start is written */
		if (write(1, "x", 1) != 1)
			return 1;
		sleep(30);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "argv"))
		return argv_mode(argc, argv);
	if (argc > 2 && !strcmp(argv[1], "many"))
		return many(atoi(argv[2]));
	if (argc > 1 && !strcmp(argv[1], "vforkfail"))
		return vforkfail();
	if (argc > 1 && !strcmp(argv[1], "reuse"))
		return reuse();
	if (argc > 1 && !strcmp(argv[1], "popen"))
		return popen_mode();
	if (argc > 1 && !strcmp(argv[1], "spawnfail"))
		return spawnfail();
	fprintf(stderr, "usage: spawns all|sleeper|argv|many N|vforkfail|spawnfail|popen|reuse|quiet\n");
	return 64;
}
