/*
 * children.h - what the test programs that make children share
 * (forkways.c, isolate.c): waiting for a child that must exit with 0, and
 * making one without running any atfork handler.
 */
#ifndef RTE_TEST_CHILDREN_H
#define RTE_TEST_CHILDREN_H

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t _Fork(void) __attribute__((weak));

/* 1 if child pid exited with status 0. */
static inline int wait_ok(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0;
}

/* A child made with WAY, none of which runs atfork handlers: "_Fork",
 * "sysfork" (the raw fork system call) or "clone" (the raw clone system
 * call with SIGCHLD). As fork(): the pid, 0 in the child, -1 with errno
 * (ENOSYS: no _Fork in this libc, EINVAL: no such way). */
static inline pid_t raw_child(const char *way)
{
	if (!strcmp(way, "_Fork")) {
		if (!_Fork) {
			errno = ENOSYS;
			return -1;
		}
		return _Fork();
	}
	if (!strcmp(way, "sysfork"))
		return (pid_t)syscall(SYS_fork);
	if (!strcmp(way, "clone"))
		return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	errno = EINVAL;
	return -1;
}

#endif
