/*
 * rundir.c - the default directory of ring files (see rundir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "rundir.h"
#include "strbuf.h"

/* 1 if path is on a tmpfs (no disk: a file made and removed costs no
 * block allocation, journal or writeback). */
static int on_tmpfs(const char *path)
{
	struct statfs fs;

	return statfs(path, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

const char *rte_rundir_root(void)
{
	if (!on_tmpfs("/tmp") && on_tmpfs("/dev/shm") &&
	    access("/dev/shm", W_OK | X_OK) == 0)
		return "/dev/shm";
	return "/tmp";
}

int rte_rundir_path(const char *xdg, uid_t uid, char *out, size_t cap)
{
	struct rte_sb b;

	rte_sb_init(&b, out, cap);
	if (xdg && xdg[0] == '/') {
		rte_sb_str(&b, xdg);
		rte_sb_str(&b, "/rte");
	} else {
		rte_sb_str(&b, rte_rundir_root());
		rte_sb_str(&b, "/rte-");
		rte_sb_uint(&b, uid, 10, 0);
	}
	return rte_sb_over(&b) ? ENAMETOOLONG : 0;
}

const char *rte_rundir_default(const char *dir, char *buf, size_t cap)
{
	if (dir)
		return dir;
	dir = getenv("OCAML_RUNTIME_EVENTS_DIR");
	if (dir && *dir)
		return dir;
	if (rte_rundir_path(getenv("XDG_RUNTIME_DIR"), geteuid(), buf, cap) == 0)
		return buf;
	return ".";
}

void rte_rundir_search(const char *dir, struct rte_rundir_search *s)
{
	const char *env = getenv("OCAML_RUNTIME_EVENTS_DIR");

	s->n = 0;
	if (dir) {
		s->dir[s->n++] = dir;
		return;
	}
	if (env && *env)
		s->dir[s->n++] = env;
	if (rte_rundir_path(getenv("XDG_RUNTIME_DIR"), geteuid(), s->buf,
	                    sizeof s->buf) == 0 &&
	    (!s->n || strcmp(s->buf, s->dir[0])))
		s->dir[s->n++] = s->buf;
	for (unsigned i = 0; i < s->n; i++)
		if (!strcmp(s->dir[i], "."))
			return;
	s->dir[s->n++] = ".";
}

int rte_rundir_open(const char *path, int must_be_private)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW;
	struct stat st;
	int fd = open(path, flags);

	if (fd < 0 && errno == ENOENT) {
		/* EEXIST: another process made it first; check theirs. */
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -1;
		fd = open(path, flags);
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		goto fail;
	}
	if (must_be_private &&
	    (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
		errno = EPERM;
		goto fail;
	}
	return fd;
fail:
	{
		int e = errno;

		close(fd);
		errno = e;
	}
	return -1;
}
