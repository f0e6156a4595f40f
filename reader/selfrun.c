/*
 * selfrun.c - rte-read running itself (selfrun.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selfrun.h"

char *rd_read_fd(int fd, size_t max, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	ssize_t r;

	while (b) {
		if (n + 1 >= cap) {
			char *nb = cap >= max ? NULL : realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return NULL;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (!b)
		return NULL;
	b[n] = '\0';
	if (len)
		*len = n;
	return b;
}

char *rd_self_run(char *const argv[], size_t max, size_t *len)
{
	int fd[2], status;
	char *out;
	pid_t pid;

	if (pipe(fd))
		return NULL;
	if ((pid = fork()) < 0) {
		close(fd[0]);
		close(fd[1]);
		return NULL;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(fd[1]);
	out = rd_read_fd(fd[0], max, len);
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(out);
		return NULL;
	}
	return out;
}
