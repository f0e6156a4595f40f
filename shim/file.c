/*
 * file.c - the ring file's life: the directory, create, reserve, move
 * around exec, remove.
 *
 * The directory is resolved once, by the first rte_file_create() of this
 * image, into a held directory descriptor: OCAML_RUNTIME_EVENTS_DIR as
 * OCaml reads it (relative to the working directory of that moment), or
 * the per-user default of common/format/rundir.h when it is unset or empty. Every
 * later name operation (fork children's files, exec, removal) goes through
 * that descriptor with openat/linkat/renameat/unlinkat, so a chdir() of the
 * program (a daemon's chdir("/")) changes nothing. The absolute path is
 * kept for messages and rte_path().
 *
 * Descriptors: every descriptor we keep (the directory, the ring file) is
 * O_CLOEXEC and moved to RTE_FD_MIN or above, never left on 0, 1 or 2 (a
 * program started with stdin closed would read our file). The program may
 * close them or reuse their numbers (daemons close every fd): each use
 * first checks, with fstat, that the number is still our file; the
 * directory is then re-opened by path and accepted only if it is the same
 * directory (device and inode).
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
 *
 * exec: the new image has our pid and makes <pid>.events again, so the
 * file leaves that name first. With PRESERVE it is renamed to
 * <pid>.exec<N>.events (and renamed back if exec fails). Without, it is
 * unlinked: after a successful exec nothing is left, whatever the new
 * image is (traced or not). Linux cannot give an unlinked inode a name
 * again, so a failed exec rebuilds the file: a fresh file with the same
 * contents (copied from our mapping) is mapped over the old mapping at the
 * same address and published under <pid>.events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "strbuf.h"
#include "clock.h"
#include "rundir.h"
#include "file.h"
#include "log.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

/* ---- the directory ---------------------------------------------------------- */

/* Resolved once per image (first rte_file_create, lock held); a fork child
 * inherits it. fd is replaced (CAS) when the program closed it. */
static struct {
	int fd;              /* held, O_DIRECTORY|O_CLOEXEC, >= RTE_FD_MIN */
	dev_t dev;
	ino_t ino;
	int ok;              /* resolved */
	int relative;        /* from a relative OCAML_RUNTIME_EVENTS_DIR */
	const char *spelled; /* that relative spelling (the config's dir) */
	char path[PATH_MAX]; /* absolute, for messages and re-opening */
} g_dir = {.fd = -1};

static int same_file(const struct stat *st, dev_t dev, ino_t ino)
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

static int dir_resolve(const struct rte_config *c, char *err, size_t errlen)
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
	if ((fd = rte_fd_high(fd)) < 0) {
		e = errno;
		goto fail;
	}
	if (fstat(fd, &st) < 0 || (e = absolute_dir(c->dir, g_dir.path,
	                                            sizeof(g_dir.path)))) {
		e = e ? e : errno;
		close(fd);
		goto fail;
	}
	g_dir.dev = st.st_dev;
	g_dir.ino = st.st_ino;
	g_dir.fd = fd;
	g_dir.relative = !c->dir_default && c->dir[0] != '/';
	g_dir.spelled = c->dir;
	g_dir.ok = 1;
	return 0;
fail:
	snprintf(err, errlen, "cannot use %s directory %.*s: %s",
	         c->dir_default ? "the default" : "the", PATH_MAX, shown,
	         strerrordesc_np(e));
	return -1;
}

/* The held directory descriptor, re-opened by path if the program closed
 * it. Returns the fd, or -1 with errno. Signal-safe. */
static int dir_fd(void)
{
	/* Relaxed: the value is checked with fstat before any use. */
	int fd = __atomic_load_n(&g_dir.fd, __ATOMIC_RELAXED), nfd;
	struct stat st;

	if (!g_dir.ok) {
		errno = EBADF;
		return -1;
	}
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
	    same_file(&st, g_dir.dev, g_dir.ino))
		return fd;
	nfd = rte_fd_high(open(g_dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (nfd < 0)
		return -1;
	if (fstat(nfd, &st) < 0 || !same_file(&st, g_dir.dev, g_dir.ino)) {
		close(nfd);
		errno = ESTALE; /* the path now names another directory */
		return -1;
	}
	/* Relaxed: another thread re-opening at once keeps its own; ours
	 * is then closed. */
	if (!__atomic_compare_exchange_n(&g_dir.fd, &fd, nfd, 0,
	                                 __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		close(nfd);
		return fd;
	}
	return nfd;
}

#define DIR_VAR "OCAML_RUNTIME_EVENTS_DIR="

const char *rte_file_env_dir(const char *entry)
{
	size_t n = sizeof(DIR_VAR) - 1;

	if (!g_dir.ok || !g_dir.relative || strncmp(entry, DIR_VAR, n) ||
	    strcmp(entry + n, g_dir.spelled))
		return NULL;
	return g_dir.path;
}

/* ---- names ------------------------------------------------------------------- */

/* Publish `from` as `to` (both in dfd) without replacing anything.
 * Returns 0 or errno. */
static int link_noreplace(int dfd, const char *from, const char *to)
{
	if (linkat(dfd, from, dfd, to, 0) == 0) {
		unlinkat(dfd, from, 0);
		return 0;
	}
	if (errno == EEXIST)
		return EEXIST;
	if (syscall(SYS_renameat2, dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	return errno;
}

/* Open a fresh temporary file in dfd, its name in tmp. Returns a high fd
 * or -1 with errno. */
static int open_tmp(int dfd, char *tmp, size_t cap, pid_t pid)
{
	for (int i = 0; i < 16; i++) {
		unsigned r = (unsigned)(rte_clock_monotonic_ns() * 2654435761u) ^
		             (unsigned)i;
		struct rte_sb b;
		int fd;

		rte_sb_init(&b, tmp, cap);
		rte_sb_str(&b, ".");
		rte_sb_uint(&b, (unsigned long long)pid, 10, 0);
		rte_sb_str(&b, ".");
		rte_sb_uint(&b, r, 16, 8);
		rte_sb_str(&b, ".events.tmp");
		fd = openat(dfd, tmp,
		            O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		            0600);
		if (fd >= 0) {
			fd = rte_fd_high(fd);
			if (fd < 0)
				unlinkat(dfd, tmp, 0);
			return fd;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

static int fail(char *err, size_t errlen, const char *what, const char *path,
                int e)
{
	snprintf(err, errlen, "cannot %s %s: %s", what, path,
	         strerrordesc_np(e));
	return -1;
}

static int set_identity(struct rte_file *f, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return errno;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	return 0;
}

/* Steps 2 and 3 on an open temporary file. */
static int fill_and_publish(struct rte_file *f, int dfd, const char *tmp,
                            char *err, size_t errlen)
{
	const struct rte_layout *l = &f->l;
	int e;

	if ((e = set_identity(f, f->fd)))
		return fail(err, errlen, "stat", tmp, e);
	if (ftruncate(f->fd, (off_t)l->total_size) < 0)
		return fail(err, errlen, "size", tmp, errno);
	/* The header, the ring headers and ring 0 now, before the file is
	 * published: a file nobody can write ring_start into must never
	 * appear. Other rings when they are claimed, each page of names when
	 * a name is written (tracer.c). */
	if ((e = rte_file_reserve(f, 0, l->data_offset + l->ring_size_bytes)))
		return fail(err, errlen, "allocate", tmp, e);
	f->base = mmap(NULL, l->total_size, PROT_READ | PROT_WRITE, MAP_SHARED,
	               f->fd, 0);
	if (f->base == MAP_FAILED) {
		f->base = NULL;
		return fail(err, errlen, "map", tmp, errno);
	}
	rte_file_advise(f);
	/* What ring_start writes: the header with ring 0's, and the first
	 * page of ring 0. */
	rte_file_prefault(f, 0, l->headers_offset + l->ring_header_size_bytes);
	rte_file_prefault(f, l->data_offset, 8);
	rte_layout_write_header(l, f->base);
	if ((e = link_noreplace(dfd, tmp, f->name)) == EEXIST) {
		snprintf(err, errlen, "%s already exists; not replacing it",
		         f->path);
		return -1;
	}
	return e ? fail(err, errlen, "create", f->path, e) : 0;
}

static int set_names(struct rte_file *f, pid_t pid)
{
	struct rte_sb n, p;

	rte_sb_init(&n, f->name, sizeof(f->name));
	rte_sb_uint(&n, (unsigned long long)pid, 10, 0);
	rte_sb_str(&n, ".events");
	rte_sb_init(&p, f->path, sizeof(f->path));
	rte_sb_str(&p, g_dir.path);
	rte_sb_str(&p, "/");
	rte_sb_str(&p, f->name);
	return rte_sb_over(&n) || rte_sb_over(&p) ? ENAMETOOLONG : 0;
}

int rte_file_create(struct rte_file *f, const struct rte_config *c, pid_t pid,
                    char *err, size_t errlen)
{
	char tmp[64];
	int dfd, e;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (rte_layout_compute(&f->l, c->rings, c->log2_words) < 0) {
		snprintf(err, errlen, "bad ring layout");
		return -1;
	}
	if (!g_dir.ok && dir_resolve(c, err, errlen) < 0)
		return -1;
	if ((e = set_names(f, pid)))
		return fail(err, errlen, "name the ring file in", g_dir.path, e);
	if ((dfd = dir_fd()) < 0)
		return fail(err, errlen, "open the directory", g_dir.path,
		            errno);
	f->fd = open_tmp(dfd, tmp, sizeof(tmp), pid);
	if (f->fd < 0)
		return fail(err, errlen, "create", f->path, errno);
	if (fill_and_publish(f, dfd, tmp, err, errlen) < 0)
		goto unwind;
	return 0;
unwind:
	unlinkat(dfd, tmp, 0);
	rte_file_drop(f);
	return -1;
}

void rte_file_advise(const struct rte_file *f)
{
	/* Each thread touches a page or two of its ring: no read-around of
	 * neighbouring pages into the mapping (RSS of many threads). */
	if (f->base)
		madvise(f->base, f->l.total_size, MADV_RANDOM);
}

static int fd_is_ours(const struct rte_file *f)
{
	struct stat st;

	return f->fd >= 0 && fstat(f->fd, &st) == 0 &&
	       same_file(&st, f->dev, f->ino);
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

void rte_file_prefault(const struct rte_file *f, uint64_t off, uint64_t len)
{
#ifdef MADV_POPULATE_WRITE
	const uint64_t pg = 4096;
	uint64_t start = off & ~(pg - 1);
	int saved = errno;

	if (f->base && len && off + len <= f->l.total_size)
		madvise(f->base + start, off + len - start,
		        MADV_POPULATE_WRITE);
	errno = saved;
#else
	(void)f;
	(void)off;
	(void)len;
#endif
}

/* 1 if `name` in our directory is still our file. Signal-safe. */
static int name_is_ours(const struct rte_file *f, int dfd, const char *name)
{
	struct stat st;

	return dfd >= 0 && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       same_file(&st, f->dev, f->ino);
}

int rte_file_is_ours(const struct rte_file *f)
{
	return f->name[0] && name_is_ours(f, dir_fd(), f->name);
}

void rte_file_remove(const struct rte_file *f)
{
	int dfd = dir_fd();

	if (f->name[0] && name_is_ours(f, dfd, f->name))
		unlinkat(dfd, f->name, 0);
}

/* ---- exec ------------------------------------------------------------------- */

/* <pid>.events -> <pid>.exec<N>.events with the first free N. */
static int move_to_exec_name(struct rte_file *f, int dfd)
{
	for (unsigned i = 1; i < 10000; i++) {
		int e;

		snprintf(f->exec_name, sizeof(f->exec_name),
		         "%.*s.exec%u.events",
		         (int)(strlen(f->name) - strlen(".events")), f->name, i);
		if (linkat(dfd, f->name, dfd, f->exec_name, 0) == 0) {
			if (unlinkat(dfd, f->name, 0) == 0)
				return 0;
			e = errno;
			unlinkat(dfd, f->exec_name, 0);
			return e;
		}
		if (errno == EEXIST)
			continue;
		e = link_noreplace(dfd, f->name, f->exec_name);
		if (e != EEXIST)
			return e;
	}
	return EEXIST;
}

int rte_file_exec_away(struct rte_file *f, int preserve)
{
	int dfd = dir_fd();

	f->exec_name[0] = '\0';
	f->unlinked = 0;
	if (!f->name[0] || !name_is_ours(f, dfd, f->name))
		return ENOENT;
	if (preserve)
		return move_to_exec_name(f, dfd);
	if (unlinkat(dfd, f->name, 0) < 0)
		return errno;
	f->unlinked = 1;
	return 0;
}

/* Write [off, off + len) of our mapping into fd. Returns 0 or errno. */
static int copy_range(const struct rte_file *f, int fd, uint64_t off,
                      uint64_t len)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, f->base + off, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* Copy the data of the old file into fd: the ranges its descriptor reports
 * as data, or, if the program closed it, every page that is not zero. */
static int copy_contents(const struct rte_file *f, int fd)
{
	const uint64_t total = f->l.total_size, pg = 4096;
	static const char zero[4096];
	uint64_t off = 0;
	int e;

	if (fd_is_ours(f)) {
		for (;;) {
			off_t d = lseek(f->fd, (off_t)off, SEEK_DATA), h;

			if (d < 0 || (uint64_t)d >= total)
				return d < 0 && errno != ENXIO ? errno : 0;
			h = lseek(f->fd, d, SEEK_HOLE);
			if (h < 0 || (uint64_t)h > total)
				h = (off_t)total;
			if ((e = copy_range(f, fd, (uint64_t)d,
			                    (uint64_t)(h - d))))
				return e;
			off = (uint64_t)h;
		}
	}
	for (; off < total; off += pg)
		if (memcmp(f->base + off, zero, pg) &&
		    (e = copy_range(f, fd, off, pg)))
			return e;
	return 0;
}

/* The file was unlinked for an exec that failed: publish a copy under
 * <pid>.events and map it where the old one was. Returns 0 or errno. */
static int rebuild(struct rte_file *f, int dfd, pid_t pid)
{
	const struct rte_layout *l = &f->l;
	char tmp[64];
	struct rte_file nf = *f;
	int e;

	nf.fd = open_tmp(dfd, tmp, sizeof(tmp), pid);
	if (nf.fd < 0)
		return errno;
	if ((e = set_identity(&nf, nf.fd)))
		goto fail;
	if (ftruncate(nf.fd, (off_t)l->total_size) < 0 ||
	    (e = rte_file_reserve(&nf, 0,
	                          l->data_offset + l->ring_size_bytes)) ||
	    (e = copy_contents(f, nf.fd))) {
		e = e ? e : errno;
		goto fail;
	}
	/* Same address: every writer's pointers stay valid. */
	if (mmap(f->base, l->total_size, PROT_READ | PROT_WRITE,
	         MAP_SHARED | MAP_FIXED, nf.fd, 0) == MAP_FAILED) {
		e = errno;
		goto fail;
	}
	rte_file_advise(f);
	if ((e = link_noreplace(dfd, tmp, f->name))) {
		/* The copy stays mapped, nameless once tmp goes. */
		unlinkat(dfd, tmp, 0);
		nf.fd = -1;
	}
	if (fd_is_ours(f))
		close(f->fd);
	f->fd = nf.fd;
	f->dev = nf.dev;
	f->ino = nf.ino;
	return e;
fail:
	unlinkat(dfd, tmp, 0);
	close(nf.fd);
	return e;
}

int rte_file_exec_back(struct rte_file *f, pid_t pid)
{
	int dfd = dir_fd();

	if (f->unlinked) {
		f->unlinked = 0;
		return dfd < 0 ? errno : rebuild(f, dfd, pid);
	}
	if (!f->exec_name[0] || !name_is_ours(f, dfd, f->exec_name))
		return ENOENT;
	return link_noreplace(dfd, f->exec_name, f->name);
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
