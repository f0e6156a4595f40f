/*
 * filedir.c - the directory of the ring files (file.c's): resolved once
 * per image from OCAML_RUNTIME_EVENTS_DIR or the per-user default, kept
 * as an absolute path and an identity, opened by its path for each name
 * operation and accepted only if it is still the same directory; why a
 * process of another user may not use it; the relative spelling the
 * environment of an exec carries (rte_file_env_dir).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"
#include "rundir.h"
#include "file.h"
#include "filedir.h"

struct rte_filedir rte_filedir;

int rte_filedir_same_file(const struct stat *st, dev_t dev, ino_t ino)
{
	return st->st_dev == dev && st->st_ino == ino;
}

/* The working directory joined with a relative `dir`. Not inlined: its
 * PATH_MAX buffer stays off the stack of an absolute directory's start. */
__attribute__((noinline)) static int join_cwd(const char *dir,
                                              struct rte_sb *b)
{
	char cwd[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd)))
		return errno;
	while (dir[0] == '.' && dir[1] == '/')
		dir += 2;
	rte_sb_str(b, cwd);
	if (strcmp(dir, ".") && dir[0]) {
		if (strcmp(cwd, "/"))
			rte_sb_str(b, "/");
		rte_sb_str(b, dir);
	}
	return 0;
}

/* Absolute spelling of the configured directory, without resolving
 * symlinks (a user's path stays recognisable). Returns 0 or errno. */
static int absolute_dir(const char *dir, char *out, size_t cap)
{
	struct rte_sb b;
	int e;

	rte_sb_init(&b, out, cap);
	if (dir[0] == '/')
		rte_sb_str(&b, dir);
	else if ((e = join_cwd(dir, &b)))
		return e;
	return rte_sb_over(&b) ? ENAMETOOLONG : 0;
}

/* After a failure with errno e on the directory `dir`: 1 if it is because
 * this process is a descendant that switched user (a child run with
 * another user, a daemon that dropped privileges): e is EACCES or EPERM,
 * the directory is another user's, and either this user cannot even
 * search it (the per-user directory is 0700) or the parent's file is in
 * it. A process the user started so (its parent untraced) is told, and so
 * is any process whose default directory, named for its own user id
 * (/tmp/rte-UID), is another's: that one was planted, not inherited. */
int rte_filedir_denied(int e, const char *dir)
{
	char ppid[PATH_MAX + 32];
	struct stat st;

	if ((e != EACCES && e != EPERM) || stat(dir, &st) < 0 ||
	    st.st_uid == geteuid())
		return 0;
	if (access(dir, X_OK) < 0)
		return 1;
	snprintf(ppid, sizeof(ppid), "%.*s/%ld.events", PATH_MAX, dir,
	         (long)getppid());
	return lstat(ppid, &st) == 0;
}

int rte_filedir_resolve(struct rte_file *f, const struct rte_config *c,
                        struct stat *stp, char *err, size_t errlen)
{
	const char *shown = c->dir;
	struct stat st;
	int fd, e = 0;

	if (c->dir_too_long) {
		e = ENAMETOOLONG;
		goto fail;
	}
	if (c->dir_default)
		fd = rte_rundir_open(c->dir, 1);
	else
		fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (fd = rte_fd_nostd(fd)) < 0) {
		e = errno;
		goto fail;
	}
	e = fstat(fd, &st) < 0 ? errno : 0;
	if (!e)
		e = absolute_dir(c->dir, rte_filedir.path, sizeof(rte_filedir.path));
	if (e) {
		close(fd);
		goto fail;
	}
	rte_filedir.dev = st.st_dev;
	rte_filedir.ino = st.st_ino;
	rte_filedir.relative = !c->dir_default && c->dir[0] != '/';
	rte_filedir.spelled = c->dir;
	rte_filedir.ok = 1;
	*stp = st;
	return fd;
fail:
	f->denied = !c->dir_uid_named && rte_filedir_denied(e, c->dir);
	snprintf(err, errlen, "cannot use %s directory %.*s: %s",
	         c->dir_default ? "the default" : "the", PATH_MAX, shown,
	         strerrordesc_np(e));
	return -1;
}

/* The directory, opened by its path for the caller, who closes it with
 * rte_filedir_close(); its fstat() in *stp if not NULL. Returns the fd,
 * or -1 with errno. Signal-safe. */
int rte_filedir_open_stat(struct stat *stp)
{
	struct stat st;
	int fd;

	if (!rte_filedir.ok) {
		errno = EBADF;
		return -1;
	}
	fd = rte_fd_nostd(open(rte_filedir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !rte_filedir_same_file(&st, rte_filedir.dev, rte_filedir.ino)) {
		close(fd);
		errno = ESTALE; /* the path now names another directory */
		return -1;
	}
	if (stp)
		*stp = st;
	return fd;
}

int rte_filedir_open(void)
{
	return rte_filedir_open_stat(NULL);
}

/* Close a rte_filedir_open() descriptor, errno kept. */
void rte_filedir_close(int dfd)
{
	int saved = errno;

	if (dfd >= 0)
		close(dfd);
	errno = saved;
}

#define DIR_VAR "OCAML_RUNTIME_EVENTS_DIR="

const char *rte_file_dir(void)
{
	return rte_filedir.ok ? rte_filedir.path : NULL;
}

const char *rte_file_env_dir(const char *entry)
{
	size_t n = sizeof(DIR_VAR) - 1;

	if (!rte_filedir.ok || !rte_filedir.relative || strncmp(entry, DIR_VAR, n) ||
	    strcmp(entry + n, rte_filedir.spelled))
		return NULL;
	return rte_filedir.path;
}
