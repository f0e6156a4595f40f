/*
 * file.c - the ring file's life: create, reserve, rename around exec,
 * remove.
 *
 * Creation never exposes a half-made file and never follows or replaces
 * anything already in the directory:
 *
 *   1. open ".<pid>.<random>.events.tmp" with O_CREAT|O_EXCL|O_NOFOLLOW,
 *      mode 0600 (a planted symlink or file makes it fail, never followed);
 *   2. size it (sparse), reserve the blocks of the header and name areas,
 *      map it and write the header;
 *   3. link() it to "<pid>.events", which fails if that name exists (even
 *      as a dangling symlink), then unlink the temporary name. Where hard
 *      links are not supported, renameat2(RENAME_NOREPLACE) does the same.
 *
 * A ring's data pages are reserved (fallocate) when a thread first claims
 * the ring, so a full disk shows up as a failed claim, never as SIGBUS on a
 * store into the mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "shim.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

/* Publish `from` as `to` without replacing anything. Returns 0 or errno. */
static int link_noreplace(const char *from, const char *to)
{
	if (link(from, to) == 0) {
		unlink(from);
		return 0;
	}
	if (errno == EEXIST)
		return EEXIST;
	if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to,
	            RENAME_NOREPLACE) == 0)
		return 0;
	return errno;
}

static int build_path(char *out, size_t cap, const struct rte_config *c,
                      const char *fmt, pid_t pid, unsigned extra)
{
	char cwd[PATH_MAX];
	const char *dir = c->dir;
	int n;

	if (c->dir_too_long)
		return ENAMETOOLONG;
	if (!*dir) {
		if (!getcwd(cwd, sizeof(cwd)))
			return errno;
		dir = cwd;
	}
	n = snprintf(out, cap, fmt, dir, (long)pid, extra);
	if (n < 0 || (size_t)n >= cap)
		return ENAMETOOLONG;
	return 0;
}

/* Open a fresh temporary file next to the final name. Returns fd or -1. */
static int open_tmp(char *tmp, size_t cap, const struct rte_config *c,
                    pid_t pid)
{
	for (int i = 0; i < 16; i++) {
		unsigned r = (unsigned)(rte_clock_monotonic_ns() * 2654435761u) ^
		             (unsigned)i;
		int fd, e = build_path(tmp, cap, c, "%s/.%ld.%08x.events.tmp",
		                       pid, r);

		if (e) {
			errno = e;
			return -1;
		}
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		          0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

static int hidden_exec_name(const struct rte_file *f, char *out, size_t cap);

static int fail(char *err, size_t errlen, const char *what, const char *path,
                int e)
{
	snprintf(err, errlen, "cannot %s %s: %s", what, path,
	         strerrordesc_np(e));
	return -1;
}

/* Steps 2 and 3 on an open temporary file. */
static int fill_and_publish(struct rte_file *f, const char *tmp, char *err,
                            size_t errlen)
{
	const struct rte_layout *l = &f->l;
	struct stat st;
	int e;

	if (fstat(f->fd, &st) < 0)
		return fail(err, errlen, "stat", tmp, errno);
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if (ftruncate(f->fd, (off_t)l->total_size) < 0)
		return fail(err, errlen, "size", tmp, errno);
	/* The header, the ring headers and ring 0 now, before the file is
	 * published: a file nobody can write ring_start into must never
	 * appear. Other rings when they are claimed, each page of names when
	 * a name is written (core.c). */
	if ((e = rte_file_reserve(f, 0, l->data_offset + l->ring_size_bytes)))
		return fail(err, errlen, "allocate", tmp, e);
	f->base = mmap(NULL, l->total_size, PROT_READ | PROT_WRITE, MAP_SHARED,
	               f->fd, 0);
	if (f->base == MAP_FAILED) {
		f->base = NULL;
		return fail(err, errlen, "map", tmp, errno);
	}
	rte_layout_write_header(l, f->base);
	if ((e = link_noreplace(tmp, f->path)) == EEXIST) {
		snprintf(err, errlen, "%s already exists; not replacing it",
		         f->path);
		return -1;
	}
	return e ? fail(err, errlen, "create", f->path, e) : 0;
}

int rte_file_create(struct rte_file *f, const struct rte_config *c, pid_t pid,
                    char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	int e;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (rte_layout_compute(&f->l, c->rings, c->log2_words) < 0) {
		snprintf(err, errlen, "bad ring layout");
		return -1;
	}
	e = build_path(f->path, sizeof(f->path), c, "%s/%ld.events", pid, 0);
	if (e)
		return fail(err, errlen, "name the ring file in",
		            c->dir[0] ? c->dir : "the working directory", e);
	f->fd = open_tmp(tmp, sizeof(tmp), c, pid);
	if (f->fd < 0)
		return fail(err, errlen, "create", f->path, errno);
	if (fill_and_publish(f, tmp, err, errlen) < 0)
		goto unwind;
	/* The previous image of this process (same pid) may have left its
	 * file under the hidden exec name: see move_to_hidden_name(). */
	if (hidden_exec_name(f, tmp, sizeof(tmp)) == 0)
		unlink(tmp);
	return 0;
unwind:
	unlink(tmp);
	rte_file_drop(f);
	return -1;
}

static int fd_is_ours(const struct rte_file *f)
{
	struct stat st;

	return f->fd >= 0 && fstat(f->fd, &st) == 0 && st.st_dev == f->dev &&
	       st.st_ino == f->ino;
}

int rte_file_reserve(const struct rte_file *f, uint64_t off, uint64_t len)
{
	int e = EBADF;

	/* The program may have closed our descriptor (daemons close every
	 * fd) and even reused its number: only trust it if it is our file. */
	if (fd_is_ours(f)) {
		if (fallocate(f->fd, 0, (off_t)off, (off_t)len) == 0)
			return 0;
		e = errno;
		if (e != EOPNOTSUPP && e != EBADF)
			return e;
	}
#ifdef MADV_POPULATE_WRITE
	/* No usable descriptor, or a file system without fallocate: fault
	 * the pages in; the kernel reports what would have been SIGBUS. */
	if (f->base) {
		uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
		uint64_t start = off & ~(pg - 1);

		if (madvise(f->base + start, len + (off - start),
		            MADV_POPULATE_WRITE) == 0)
			return 0;
		e = errno;
	}
#endif
	return e;
}

int rte_file_is_ours(const struct rte_file *f, const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && st.st_dev == f->dev &&
	       st.st_ino == f->ino;
}

void rte_file_remove(const struct rte_file *f)
{
	if (rte_file_is_ours(f, f->path))
		unlink(f->path);
}

/* <dir>/<pid>.events -> <dir>/<pid>.exec<N>.events with the first free N. */
static int move_to_exec_name(struct rte_file *f)
{
	size_t n = strlen(f->path) - strlen(".events");

	for (unsigned i = 1; i < 10000; i++) {
		int r = snprintf(f->exec_path, sizeof(f->exec_path),
		                 "%.*s.exec%u.events", (int)n, f->path, i);
		int e;

		if (r < 0 || (size_t)r >= sizeof(f->exec_path))
			return ENAMETOOLONG;
		if (link(f->path, f->exec_path) == 0)
			return unlink(f->path) == 0 ? 0 : errno;
		if (errno == EEXIST)
			continue;
		e = link_noreplace(f->path, f->exec_path);
		if (e != EEXIST)
			return e;
	}
	return EEXIST;
}

/* <dir>/<pid>.events -> <dir>/.<pid>.events.exec (hidden, and not a name
 * "*.events" readers pick up). */
static int hidden_exec_name(const struct rte_file *f, char *out, size_t cap)
{
	const char *base = strrchr(f->path, '/');
	int n;

	if (!base)
		return ENOENT;
	n = snprintf(out, cap, "%.*s/.%s.exec", (int)(base - f->path), f->path,
	             base + 1);
	return n < 0 || (size_t)n >= cap ? ENAMETOOLONG : 0;
}

/*
 * Without PRESERVE the file must leave <pid>.events before exec but come
 * back if exec fails. An unlinked file cannot be linked again (Linux
 * refuses to link an inode whose link count is 0), so it moves to a hidden
 * name instead; the next image removes that name when it starts tracing
 * (rte_file_create), so nothing is left behind unless the new image is not
 * traced at all.
 */
static int move_to_hidden_name(struct rte_file *f)
{
	int e = hidden_exec_name(f, f->exec_path, sizeof(f->exec_path));

	if (e)
		return e;
	e = link_noreplace(f->path, f->exec_path);
	if (e == EEXIST) { /* a leftover of an earlier image: garbage */
		unlink(f->exec_path);
		e = link_noreplace(f->path, f->exec_path);
	}
	return e;
}

int rte_file_exec_away(struct rte_file *f, int preserve)
{
	f->exec_path[0] = '\0';
	if (!rte_file_is_ours(f, f->path))
		return ENOENT;
	return preserve ? move_to_exec_name(f) : move_to_hidden_name(f);
}

int rte_file_exec_back(struct rte_file *f, int preserve)
{
	(void)preserve;
	if (!f->exec_path[0] || !rte_file_is_ours(f, f->exec_path))
		return ENOENT;
	return link_noreplace(f->exec_path, f->path);
}

void rte_file_drop(struct rte_file *f)
{
	if (f->base)
		munmap(f->base, f->l.total_size);
	if (f->fd >= 0 && fd_is_ours(f))
		close(f->fd);
	f->base = NULL;
	f->fd = -1;
}
