/*
 * inputs.c - arguments to ring files (see inputs.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "inputs.h"
#include "rundir.h"
#include "vec.h"

int rd_is_pid(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!isdigit((unsigned char)s[n]))
			return 0;
	return n > 0 && n < 10;
}

long rd_pid_from_name(const char *path)
{
	const char *b = strrchr(path, '/');
	long pid = 0;
	int digits = 0;

	for (b = b ? b + 1 : path; isdigit((unsigned char)*b) && digits < 9; b++)
		pid = pid * 10 + (*b - '0'), digits++;
	return digits ? pid : -1;
}

long rd_pid_from_ring_start(const char *path)
{
	rte_cursor *c;
	long pid = -1;

	if (rte_cursor_open(path, &c, NULL, 0) != RTE_OK)
		return -1;
	for (unsigned r = 0; r < rte_cursor_rings(c) && pid < 0; r++) {
		struct rte_event ev;

		if (!rte_cursor_ring_used(c, r))
			continue;
		if (rte_cursor_next(c, r, &ev) == 1 &&
		    ev.kind == RTE_EV_LIFECYCLE && ev.id == RTE_LC_RING_START &&
		    ev.u.data > 0 && ev.u.data < (1L << 30))
			pid = (long)ev.u.data;
	}
	rte_cursor_close(c);
	return pid;
}

int rd_file_has_ring_stop(const char *path)
{
	rte_cursor *c;
	int found = 0;

	if (rte_cursor_open(path, &c, NULL, 0) != RTE_OK)
		return -1;
	for (unsigned r = 0; r < rte_cursor_rings(c) && !found; r++) {
		struct rte_event ev;
		int got;

		while ((got = rte_cursor_next(c, r, &ev)) == 1)
			if (ev.kind == RTE_EV_LIFECYCLE && ev.id == RTE_LC_RING_STOP) {
				found = 1;
				break;
			}
		if (got < 0)
			found = -1;
	}
	rte_cursor_close(c);
	return found;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n > m && strcmp(s + n - m, suf) == 0;
}

void rd_free_list(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

int rd_list_dir(const char *dir, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **list = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *path;

		if (!has_suffix(e->d_name, ".events"))
			continue;
		if (RD_VEC_ROOM(list, cap, len, 16) < 0)
			goto nomem;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			goto nomem;
		list[len++] = path;
	}
	closedir(d);
	if (len > 1)
		qsort(list, len, sizeof *list, by_name);
	*out = list;
	*n = len;
	return 0;
nomem:
	err = -ENOMEM;
	closedir(d);
	rd_free_list(list, len);
	return err;
}

int rd_input_resolve(const char *arg, const char *dir, struct rd_input *in)
{
	struct rte_rundir_search s;
	struct stat st;
	size_t len = 0;

	memset(in, 0, sizeof *in);
	in->arg = arg;
	if (!rd_is_pid(arg) || lstat(arg, &st) == 0) {
		in->kind = stat(arg, &st) == 0 && S_ISDIR(st.st_mode) ? RD_IN_DIR
		                                                        : RD_IN_FILE;
		in->npaths = 1;
		return (in->path[0] = strdup(arg)) ? 0 : -1;
	}
	in->kind = RD_IN_PID;
	rte_rundir_search(dir, &s);
	for (unsigned i = 0; i < s.n; i++) {
		if (asprintf(&in->path[i], "%s/%s.events", s.dir[i], arg) < 0) {
			in->path[i] = NULL;
			rd_input_free(in);
			return -1;
		}
		in->npaths++;
		if (len < sizeof in->where)
			len += (size_t)snprintf(in->where + len, sizeof in->where - len,
			                        "%s%s", i ? ", " : "", s.dir[i]);
	}
	return 0;
}

int rd_input_default(const char *dir, struct rd_input *in)
{
	char buf[4096];

	memset(in, 0, sizeof *in);
	in->kind = RD_IN_DIR;
	in->npaths = 1;
	in->path[0] = strdup(rte_rundir_default(dir, buf, sizeof buf));
	in->arg = in->path[0];
	return in->path[0] ? 0 : -1;
}

void rd_input_free(struct rd_input *in)
{
	for (unsigned i = 0; i < in->npaths; i++)
		free(in->path[i]);
	in->npaths = 0;
}

uint64_t rd_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

void rd_sleep_ms(unsigned ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}
