/*
 * rundir.c - the default directory of ring files (see rundir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
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
