/*
 * file.c - the ring file's life: the directory (filedir.c), create,
 * reserve, move around exec, remove.
 *
 * The directory is resolved once, by the first rte_file_create() of this
 * image: OCAML_RUNTIME_EVENTS_DIR as OCaml reads it (relative to the
 * working directory of that moment), or the per-user default of
 * common/format/rundir.h when it is unset or empty, kept as an absolute
 * path and an identity (device and inode). So a chdir() of the program (a
 * daemon's chdir("/")) changes nothing.
 *
 * Descriptors: none is held while the program runs (CPython's
 * test_subprocess lists /proc/self/fd; a daemon closes every descriptor
 * and reuses the numbers). Creation and the moves around exec open the
 * directory by its path for the moment they need it, accept it only if
 * it is the same directory, work with openat/renameat2/linkat/unlinkat
 * and close it (the first creation uses the descriptor that resolved
 * the directory). The removal at the end and the crash recorder's keep
 * go by the file's absolute path, checked against the file's own
 * identity (device and inode: while we map the file no other file can
 * have its inode): two system calls, not five, at every process's end.
 * Someone who may rename a directory above ours could swap the path
 * between the check and the unlink, to another <pid>.events this process
 * may remove: the default directory (0700, in a sticky /dev/shm or /tmp)
 * leaves nobody that room; an OCAML_RUNTIME_EVENTS_DIR under a directory
 * writable by others (not sticky) would. The ring file's descriptor
 * lives from its creation until it is mapped; later reservations go
 * through the mapping (rte_file_reserve).
 * Such a moment's descriptor is O_CLOEXEC and never left on 0, 1 or 2 (a
 * program started with stdin closed, whose other thread reads fd 0,
 * would read our file).
 *
 * Creation never exposes a half-made file and never follows or replaces
 * anything already in the directory:
 *
 *   1. open ".<pid>.<random>.events.tmp" with O_CREAT|O_EXCL|O_NOFOLLOW,
 *      mode 0600 (a planted symlink or file makes it fail, never followed);
 *   2. size it (sparse), reserve the blocks of the header and name areas,
 *      map it and write the header;
 *   3. rename it to "<pid>.events" with renameat2(RENAME_NOREPLACE),
 *      which fails if that name exists (even as a dangling symlink);
 *      where the file system has no such rename, link() it there (which
 *      fails the same way) and unlink the temporary name.
 *
 * A ring's first data pages (RTE_FILE_RING_FIRST bytes) are reserved
 * (fallocate) when a thread first claims the ring, and the rest as the
 * ring is written (slots.c), so a full disk shows up as a failed claim or
 * a dropped message, never as SIGBUS on a store into the mapping; and a
 * process that writes little holds few blocks (the file is sparse).
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
#include "filedir.h"
#include "log.h"
#include "sweep.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

/* ---- names ------------------------------------------------------------------- */

/* Publish `from` as `to` (both in dfd) without replacing anything.
 * Returns 0 or errno. */
static int link_noreplace(int dfd, const char *from, const char *to)
{
	/* One system call where the file system can (tmpfs, ext4, xfs,
	 * btrfs: Linux 3.15 and later); link and unlink elsewhere. */
	if (syscall(SYS_renameat2, dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EEXIST)
		return EEXIST;
	if (linkat(dfd, from, dfd, to, 0) == 0) {
		unlinkat(dfd, from, 0);
		return 0;
	}
	return errno;
}

/* Open a fresh temporary file in dfd, its name in tmp, with mode 0600
 * and, without PRESERVE, the sticky bit (RTE_FILE_MARK). Returns a high
 * fd or -1 with errno. */
static int open_tmp(int dfd, char *tmp, size_t cap, pid_t pid, int preserve)
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
		            preserve ? 0600 : 0600 | RTE_FILE_MARK);
		if (fd >= 0) {
			fd = rte_fd_nostd(fd);
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
	f->uid = st.st_uid;
	return 0;
}

/* Allocate [off, off + len) of the file open on fd. Returns 0 or errno. */
static int reserve_fd(int fd, uint64_t off, uint64_t len)
{
	return fallocate(fd, 0, (off_t)off, (off_t)len) == 0 ? 0 : errno;
}

/* Bytes from the start reserved by creation: the headers and the first
 * part of ring 0 (slots.c's rte_slots_reset() counts on it). */
static uint64_t first_reserved(const struct rte_layout *l)
{
	return l->data_offset + (l->ring_size_bytes < RTE_FILE_RING_FIRST
	                                 ? l->ring_size_bytes
	                                 : RTE_FILE_RING_FIRST);
}

/* Steps 2 and 3 on an open temporary file. */
static int fill_and_publish(struct rte_file *f, int fd, int dfd,
                            const char *tmp, char *err, size_t errlen)
{
	const struct rte_layout *l = &f->l;
	int e;

	if ((e = set_identity(f, fd)))
		return fail(err, errlen, "stat", tmp, e);
	if (ftruncate(fd, (off_t)l->total_size) < 0)
		return fail(err, errlen, "size", tmp, errno);
	/* The header, the ring headers and ring 0's first part now, before
	 * the file is published: a file nobody can write ring_start into
	 * must never appear. The rest of ring 0 and other rings as they are
	 * written (slots.c), each page of names when a name is written. */
	if ((e = reserve_fd(fd, 0, first_reserved(l))))
		return fail(err, errlen, "allocate", tmp, e);
	f->base = mmap(NULL, l->total_size, PROT_READ | PROT_WRITE, MAP_SHARED,
	               fd, 0);
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
	rte_sb_str(&p, rte_filedir.path);
	rte_sb_str(&p, "/");
	rte_sb_str(&p, f->name);
	return rte_sb_over(&n) || rte_sb_over(&p) ? ENAMETOOLONG : 0;
}

int rte_file_create(struct rte_file *f, const struct rte_config *c, pid_t pid,
                    char *err, size_t errlen)
{
	char tmp[64];
	struct stat dst;
	int dfd, fd, e;

	memset(f, 0, sizeof(*f));
	if (rte_layout_compute(&f->l, c->rings, c->log2_words) < 0) {
		snprintf(err, errlen, "bad ring layout");
		return -1;
	}
	if (!rte_filedir.ok) {
		if ((dfd = rte_filedir_resolve(f, c, &dst, err, errlen)) < 0)
			return -1;
	} else if ((dfd = rte_filedir_open_stat(&dst)) < 0) {
		e = errno;
		f->denied = rte_filedir_denied(e, rte_filedir.path);
		return fail(err, errlen, "open the directory", rte_filedir.path, e);
	}
	if ((e = set_names(f, pid))) {
		rte_filedir_close(dfd);
		return fail(err, errlen, "name the ring file in", rte_filedir.path, e);
	}
	fd = open_tmp(dfd, tmp, sizeof(tmp), pid, c->preserve);
	if (fd < 0) {
		e = errno;
		rte_filedir_close(dfd);
		f->denied = rte_filedir_denied(e, rte_filedir.path);
		return fail(err, errlen, "create", f->path, e);
	}
	e = fill_and_publish(f, fd, dfd, tmp, err, errlen);
	if (e == 0)
		rte_sweep(dfd, &dst, f->uid, pid); /* see sweep.h */
	close(fd); /* the mapping needs none */
	if (e < 0) {
		unlinkat(dfd, tmp, 0);
		rte_file_drop(f);
	}
	rte_filedir_close(dfd);
	return e < 0 ? -1 : 0;
}

void rte_file_advise(const struct rte_file *f)
{
	/* Each thread touches a page or two of its ring: no read-around of
	 * neighbouring pages into the mapping (RSS of many threads). */
	if (f->base)
		madvise(f->base, f->l.total_size, MADV_RANDOM);
}

/* Without MADV_POPULATE_WRITE (before Linux 5.14): the file opened by its
 * name for the moment, if that name is still ours. */
static int reserve_by_name(const struct rte_file *f, uint64_t off,
                           uint64_t len)
{
	int dfd = rte_filedir_open(), fd, e;
	struct stat st;

	if (dfd < 0)
		return errno;
	fd = rte_fd_nostd(openat(dfd, f->name,
	                         O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
	e = fd < 0 ? errno : 0;
	if (!e && (fstat(fd, &st) < 0 || !rte_filedir_same_file(&st, f->dev, f->ino)))
		e = ESTALE;
	if (!e)
		e = reserve_fd(fd, off, len);
	if (fd >= 0)
		close(fd);
	rte_filedir_close(dfd);
	return e;
}

int rte_file_reserve(const struct rte_file *f, uint64_t off, uint64_t len)
{
	int e = EBADF;

	if (!f->base || !len)
		return f->base ? 0 : EBADF;
#ifdef MADV_POPULATE_WRITE
	{
		/* Fault the pages in from the kernel: it allocates them (the
		 * file system reports what would have been SIGBUS), then
		 * drops them from our page tables again (their contents stay
		 * in the file), so that a ring nobody writes yet costs no
		 * resident memory. No descriptor needed. */
		uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
		uint64_t start = off & ~(pg - 1);
		size_t n = (size_t)(len + (off - start));

		if (madvise(f->base + start, n, MADV_POPULATE_WRITE) == 0) {
			if (n > 4 * pg)
				madvise(f->base + start, n, MADV_DONTNEED);
			return 0;
		}
		e = errno;
		/* EFAULT: a store would have raised SIGBUS, the file system
		 * has no room for the pages. */
		if (e == EFAULT)
			return ENOSPC;
		if (e != EINVAL)
			return e;
	}
#endif
	return reserve_by_name(f, off, len);
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

/* 1 if `name` in our directory (dfd; AT_FDCWD for an absolute name) is
 * still our file. Signal-safe. */
static int name_is_ours(const struct rte_file *f, int dfd, const char *name)
{
	struct stat st;

	return (dfd >= 0 || dfd == AT_FDCWD) &&
	       fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       rte_filedir_same_file(&st, f->dev, f->ino);
}

/* 1 if our file's absolute path still names our file (see the top of
 * this file). Signal-safe. */
static int path_is_ours(const struct rte_file *f)
{
	return f->name[0] && name_is_ours(f, AT_FDCWD, f->path);
}

void rte_file_remove(const struct rte_file *f)
{
	int saved = errno;

	if (path_is_ours(f))
		unlinkat(AT_FDCWD, f->path, 0);
	errno = saved;
}

void rte_file_keep(const struct rte_file *f)
{
	int saved = errno;

	if (path_is_ours(f))
		fchmodat(AT_FDCWD, f->path, 0600, 0);
	errno = saved;
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

static int exec_away(struct rte_file *f, int dfd, int preserve)
{
	if (!f->name[0] || !name_is_ours(f, dfd, f->name))
		return ENOENT;
	if (preserve)
		return move_to_exec_name(f, dfd);
	if (unlinkat(dfd, f->name, 0) < 0)
		return errno;
	f->unlinked = 1;
	return 0;
}

int rte_file_exec_away(struct rte_file *f, int preserve)
{
	int dfd = rte_filedir_open(), e;

	f->exec_name[0] = '\0';
	f->unlinked = 0;
	e = exec_away(f, dfd, preserve);
	rte_filedir_close(dfd);
	f->denied = e && rte_filedir_denied(e, rte_filedir.path);
	return e;
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

/* Copy the data of the old file into fd: every page of the mapping that
 * is in memory (mincore: a hole is not, and reading it would allocate it)
 * and not zero. */
static int copy_contents(const struct rte_file *f, int fd)
{
	const uint64_t total = f->l.total_size, pg = 4096;
	static const char zero[4096];
	unsigned char in[256];
	int e;

	for (uint64_t off = 0; off < total; off += sizeof(in) * pg) {
		uint64_t n = (total - off + pg - 1) / pg;

		if (n > sizeof(in))
			n = sizeof(in);
		if (mincore(f->base + off, n * pg, in) < 0)
			memset(in, 1, sizeof(in));
		for (uint64_t i = 0; i < n; i++) {
			uint64_t at = off + i * pg;
			uint64_t len = total - at < pg ? total - at : pg;

			if ((in[i] & 1) && memcmp(f->base + at, zero, len) &&
			    (e = copy_range(f, fd, at, len)))
				return e;
		}
	}
	return 0;
}

/* The file was unlinked for an exec that failed: publish a copy under
 * <pid>.events and map it where the old one was. Returns 0 or errno. */
static int rebuild(struct rte_file *f, int dfd, pid_t pid)
{
	const struct rte_layout *l = &f->l;
	char tmp[64];
	struct rte_file nf = *f;
	int fd, e;

	fd = open_tmp(dfd, tmp, sizeof(tmp), pid, 0); /* not preserved */
	if (fd < 0)
		return errno;
	if ((e = set_identity(&nf, fd)))
		goto fail;
	if (ftruncate(fd, (off_t)l->total_size) < 0 ||
	    (e = reserve_fd(fd, 0, first_reserved(l))) ||
	    (e = copy_contents(f, fd))) {
		e = e ? e : errno;
		goto fail;
	}
	/* Same address: every writer's pointers stay valid. */
	if (mmap(f->base, l->total_size, PROT_READ | PROT_WRITE,
	         MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		e = errno;
		goto fail;
	}
	close(fd);
	rte_file_advise(f);
	if ((e = link_noreplace(dfd, tmp, f->name)))
		/* The copy stays mapped, nameless once tmp goes. */
		unlinkat(dfd, tmp, 0);
	f->dev = nf.dev;
	f->ino = nf.ino;
	return e;
fail:
	unlinkat(dfd, tmp, 0);
	close(fd);
	return e;
}

static int exec_back(struct rte_file *f, int dfd, pid_t pid)
{
	if (f->unlinked) {
		f->unlinked = 0;
		return dfd < 0 ? errno : rebuild(f, dfd, pid);
	}
	if (!f->exec_name[0] || !name_is_ours(f, dfd, f->exec_name))
		return ENOENT;
	return link_noreplace(dfd, f->exec_name, f->name);
}

int rte_file_exec_back(struct rte_file *f, pid_t pid)
{
	int dfd = rte_filedir_open(), e;

	e = exec_back(f, dfd, pid);
	rte_filedir_close(dfd);
	return e;
}

void rte_file_drop(struct rte_file *f)
{
	if (f->base)
		munmap(f->base, f->l.total_size);
	f->base = NULL;
}
