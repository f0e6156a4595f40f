/*
 * execer.c - exec under the shim. Writes "x.step" = <n> at each step.
 *
 *   execer execve    step 1, then execve(self, "after")
 *   execer execvp    step 2, then execvp("execer", "after") (PATH search)
 *   execer execl     step 6, then execl(self, "after")
 *   execer execlp    step 9, then execlp("execer", "after") (PATH search)
 *   execer execle    step 10, then execle(self, "after", environ)
 *   execer vfork     step 7, vfork a child that execs self "after", wait
 *                    for it, step 8
 *   execer spawn     step 7, posix_spawn self "after", wait, step 8
 *   execer after     step 3, exit 0
 *   execer fail      step 4, then execs that fail (ENOENT, EACCES, ENOENT
 *                    via PATH, EACCES, ENOENT via PATH, EACCES): prints
 *                    each return value and errno; step 5
 *                    after them, exit 0.
 *   execer fail keep  the same, then hard-links its own file (rte_path) to
 *                    "<file>.kept", so that its contents can be checked
 *                    after the shim removes <pid>.events at exit.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include "weak.h"

extern char **environ;

static void report(const char *what, int r)
{
	int e = errno;

	printf("%s=%d errno=%d (%s)\n", what, r, e, strerror(e));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int id = weak_register_int("x.step");
	char *after[] = {argv[0], "after", NULL};
	char *bad[] = {"nope", NULL};

	if (argc < 2)
		return 2;
	fflush(stdout);
	if (!strcmp(argv[1], "execve")) {
		weak_int(id, 1);
		execve("/proc/self/exe", after, environ);
		return 1;
	}
	if (!strcmp(argv[1], "execvp")) {
		weak_int(id, 2);
		char *a[] = {"execer", "after", NULL};
		execvp("execer", a);
		return 1;
	}
	if (!strcmp(argv[1], "execl")) {
		weak_int(id, 6);
		execl("/proc/self/exe", argv[0], "after", (char *)NULL);
		return 1;
	}
	if (!strcmp(argv[1], "execlp")) {
		weak_int(id, 9);
		execlp("execer", "execer", "after", (char *)NULL);
		return 1;
	}
	if (!strcmp(argv[1], "execle")) {
		weak_int(id, 10);
		execle("/proc/self/exe", argv[0], "after", (char *)NULL, environ);
		return 1;
	}
	if (!strcmp(argv[1], "vfork") || !strcmp(argv[1], "spawn")) {
		pid_t pid;

		weak_int(id, 7);
		if (argv[1][0] == 'v') {
			pid = vfork();
			if (pid == 0) {
				execve("/proc/self/exe", after, environ);
				_exit(127);
			}
		} else if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL,
		                       after, environ)) {
			return 1;
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
		printf("child %ld\n", (long)pid);
		weak_int(id, 8);
		return 0;
	}
	if (!strcmp(argv[1], "after")) {
		weak_int(id, 3);
		printf("after\n");
		return 0;
	}
	if (!strcmp(argv[1], "fail")) {
		weak_int(id, 4);
		errno = 0;
		report("execve", execve("/nonexistent/prog", bad, environ));
		errno = 0;
		report("execv", execv("/", bad));
		errno = 0;
		report("execvp", execvp("no-such-program-rte", bad));
		errno = 0;
		report("execl", execl("/etc/passwd", "x", (char *)NULL));
		errno = 0;
		report("execlp", execlp("no-such-program-rte", "x", (char *)NULL));
		errno = 0;
		report("execle", execle("/etc/passwd", "x", (char *)NULL, environ));
		weak_int(id, 5);
		if (argc > 2 && !strcmp(argv[2], "keep") && RTE_LOADED()) {
			char path[4096], kept[4200];

			if (rte_path(path, sizeof(path)) < 0)
				return 3;
			snprintf(kept, sizeof(kept), "%s.kept", path);
			if (link(path, kept) < 0)
				return 4;
		}
		return 0;
	}
	return 2;
}
