/*
 * clean.c - rte-read --clean (see clean.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clean.h"
#include "inputs.h"

enum kind { K_OTHER, K_RING, K_EXEC, K_TMP };

/* Skip 1..max decimal (or lowercase hex) digits; NULL if there is none. */
static const char *digits(const char *s, int hex, int max)
{
	int n = 0;

	while (n < max && (hex ? isxdigit((unsigned char)s[n]) && !isupper((unsigned char)s[n])
	                       : isdigit((unsigned char)s[n])))
		n++;
	return n ? s + n : NULL;
}

/* What the name is, and the pid it starts with. */
static enum kind classify(const char *name, long *pid)
{
	const char *p;

	*pid = atol(name + (name[0] == '.'));
	if (name[0] != '.') { /* <pid>.events or <pid>.exec<N>.events */
		if (!(p = digits(name, 0, 9)))
			return K_OTHER;
		if (!strncmp(p, ".exec", 5) && !(p = digits(p + 5, 0, 9)))
			return K_OTHER;
		return strcmp(p, ".events") ? K_OTHER : K_RING;
	}
	if (!(p = digits(name + 1, 0, 9)))
		return K_OTHER;
	if (!strcmp(p, ".events.exec"))
		return K_EXEC;
	if (*p != '.' || digits(p + 1, 1, 8) != p + 9) /* exactly 8 hex digits */
		return K_OTHER;
	return strcmp(p + 9, ".events.tmp") ? K_OTHER : K_TMP;
}

static uint64_t changed_ns(const struct stat *st)
{
	uint64_t c = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
	uint64_t m = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;

	return c < m ? c : m;
}

/*
 * 1 if the ring file at path is stale (its writer is gone and it has no
 * ring_stop), with its pid in *pid; else 0. The writer is asked first:
 * one that ends normally while the file is read writes ring_stop before
 * it goes, so a writer gone before the read left no ring_stop behind
 * only if it was killed.
 */
static int stale_ring(const char *path, const struct stat *lst, long *pid)
{
	struct rd_writer w;
	rte_cursor *c;
	int stale = 0;

	if (rte_cursor_open(path, &c, NULL, 0) != RTE_OK)
		return 0; /* not a ring file: not ours to remove */
	if (rte_cursor_stat(c)->st_dev == lst->st_dev &&
	    rte_cursor_stat(c)->st_ino == lst->st_ino) {
		*pid = rd_pid_from_ring_start(path);
		if (*pid < 0)
			*pid = rd_pid_from_name(path);
		rd_writer_init(&w, *pid, rte_cursor_stat(c));
		stale = !rd_writer_alive(&w) && rd_file_has_ring_stop(path) == 0;
	}
	rte_cursor_close(c);
	return stale;
}

/* The reason to remove dir/name, or NULL to keep it. */
static const char *why_remove(const char *path, const char *name,
                              const struct stat *st, char *buf, size_t cap)
{
	long pid;

	switch (classify(name, &pid)) {
	case K_RING:
		if (!stale_ring(path, st, &pid))
			return NULL;
		snprintf(buf, cap, "process %ld ended without ring_stop (killed?)", pid);
		return buf;
	case K_EXEC:
		if (!rd_pid_newer_than(pid, changed_ns(st)))
			return NULL;
		snprintf(buf, cap, "pre-exec file of process %ld, which is gone", pid);
		return buf;
	case K_TMP:
		if (!rd_pid_newer_than(pid, changed_ns(st)))
			return NULL;
		snprintf(buf, cap, "unfinished file of process %ld, which is gone", pid);
		return buf;
	default:
		return NULL;
	}
}

/* Clean one entry. Returns 0, or 2 if it could not be removed. */
static int clean_one(const char *dir, const char *name, int dry_run)
{
	char path[4096], buf[128];
	const char *why;
	struct stat st, again;

	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ||
	    lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	why = why_remove(path, name, &st, buf, sizeof buf);
	if (!why)
		return 0;
	if (dry_run) {
		printf("would remove %s: %s\n", path, why);
		return 0;
	}
	/* Still the file that was judged (names are never replaced by the
	 * shim, but someone else may have). */
	if (lstat(path, &again) < 0 || again.st_dev != st.st_dev ||
	    again.st_ino != st.st_ino)
		return 0;
	if (unlink(path) < 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "rte-read: %s: cannot remove: %s\n", path, strerror(errno));
		return 2;
	}
	printf("removed %s: %s\n", path, why);
	return 0;
}

int rd_clean(const char *dir, int dry_run)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "rte-read: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	while ((e = readdir(d)))
		if (clean_one(dir, e->d_name, dry_run) && !rc)
			rc = 2;
	closedir(d);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "rte-read: standard output: write error: %s\n",
			        strerror(errno));
		return errno == EPIPE ? rc : 5;
	}
	return rc;
}
