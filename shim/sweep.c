/*
 * sweep.c - remove what killed processes left in the directory (see
 * sweep.h).
 *
 * A file whose writer was SIGKILLed keeps its name for ever: no code of
 * the writer ran to remove it (test suites kill children all the time; a
 * CI directory fills up). So a traced start in the directory looks, at
 * most once per RTE_SWEEP_PERIOD_S, for such files. The gate costs
 * nothing on the common path (fork+exec, a short process): the time is
 * the vDSO's and the directory's status is the fstat() that file.c takes
 * to recognise the directory anyway; its access time is the stamp. A
 * sweep sets it to (now, RTE_STAMP_NS): an access time with other
 * nanoseconds (a reader listing the directory) or older than the period
 * lets the next start sweep. Only the directory's owner sweeps (setting
 * the time needs it), so a shared directory is swept by its owner's
 * starts.
 *
 * The rule is --clean's (common/format/stale.h): the pid the name gives
 * is gone, a zombie, or started after the file last changed; and, read
 * once per sweep and only if some file is a candidate, no process maps
 * the file writable and shared (the writer may be in a pid namespace of
 * its own, where its pid names another process here). Where --clean reads
 * the rings for a ring_stop, the sweep reads the mode: only a file made
 * without PRESERVE carries RTE_FILE_MARK (sweep.h), and a preserved or
 * crash-kept file never does, whatever its rings hold.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fd.h"
#include "log.h"
#include "stale.h"
#include "strbuf.h"
#include "sweep.h"

#define RTE_STAMP_NS 271828182L /* a sweep's mark in the access time */
#define MAX_CAND 1024           /* per sweep; the rest at the next one */

struct cand {
	dev_t dev;               /* as stat() names it */
	ino_t ino;
	struct rte_maps_file id; /* as /proc/PID/maps names it */
	void *page;              /* its first page, mapped to learn id */
	int mapped;
	char name[44];
};

struct scratch {
	struct cand c[MAX_CAND];
	char dents[8192];
	char maps[16384];
};

/* 1 if the stamp says a sweep ran less than a period ago. */
static int swept_lately(const struct stat *dir, const struct timespec *now)
{
	time_t d = now->tv_sec - dir->st_atim.tv_sec;

	return dir->st_atim.tv_nsec == RTE_STAMP_NS && d >= 0 &&
	       d < RTE_SWEEP_PERIOD_S;
}

/* Map the first page of candidate c (read-only), so that our own maps
 * show how /proc/PID/maps names it: not always as stat() does (btrfs
 * gives maps the file system's device, overlayfs the file of the layer
 * below), as reader/liveness.c's rd_maps_id_of_fd() says. */
static void map_page(int dfd, struct cand *c)
{
	struct stat st;
	int fd = rte_fd_nostd(openat(dfd, c->name, O_RDONLY | O_NOFOLLOW |
	                             O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
	void *m;

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino &&
	    (m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0)) != MAP_FAILED)
		c->page = m;
	close(fd);
}

/* A candidate: a file of uid the rule says is stale by its pid. */
static int candidate(int dfd, const char *name, uid_t uid, pid_t self,
                     uint64_t t0, struct cand *c)
{
	struct stat st;
	long pid;
	enum rte_name_kind k = rte_name_classify(name, &pid);
	uint64_t changed;

	if ((k != RTE_NAME_RING && k != RTE_NAME_TMP) || pid == (long)self ||
	    strlen(name) >= sizeof(c->name) ||
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_uid != uid)
		return 0;
	if (k == RTE_NAME_RING && !(st.st_mode & RTE_FILE_MARK))
		return 0; /* preserved, or kept for a crash record */
	changed = rte_stat_changed_ns(&st);
	/* Changed while we look: a writer the maps below could miss. */
	if (changed + 20000000 >= t0 || !rte_pid_gone_for(pid, changed))
		return 0;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->id.dev = st.st_dev; /* until learn_ids() knows better */
	c->id.ino = st.st_ino;
	c->page = NULL;
	c->mapped = 0;
	memcpy(c->name, name, strlen(name) + 1);
	map_page(dfd, c);
	return 1;
}

/* One line of maps: with self, learn the id of the candidate whose page
 * it maps; else mark the candidates it maps writable. */
static void maps_one(const char *line, struct scratch *s, size_t n, int self)
{
	unsigned long long lo, hi;
	struct rte_maps_file id;
	int w = rte_maps_line(line, &lo, &hi, &id);

	for (size_t i = 0; i < n; i++) {
		struct cand *c = &s->c[i];

		if (self && w >= 0 && c->page && lo == (uintptr_t)c->page)
			c->id = id;
		else if (!self && w == 1 && c->id.dev == id.dev &&
		         c->id.ino == id.ino)
			c->mapped = 1;
	}
}

/* Go through the maps read on fd (see maps_one). */
static void read_maps(int fd, struct scratch *s, size_t n, int self)
{
	size_t have = 0;

	for (;;) {
		ssize_t r = read(fd, s->maps + have, sizeof(s->maps) - 1 - have);
		char *line = s->maps, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		have += (size_t)r;
		s->maps[have] = '\0';
		while ((nl = memchr(line, '\n', have - (size_t)(line - s->maps)))) {
			*nl = '\0';
			maps_one(line, s, n, self);
			line = nl + 1;
		}
		have -= (size_t)(line - s->maps);
		memmove(s->maps, line, have);
		if (have >= sizeof(s->maps) - 1)
			have = 0; /* a line too long to be a file mapping we
			           * care about: dropped */
	}
}

/* Every process's maps, once: a writer in another pid namespace. */
static void find_mappers(struct scratch *s, size_t n)
{
	int pfd = rte_fd_nostd(open("/proc", O_RDONLY | O_DIRECTORY |
	                                     O_CLOEXEC));
	long got;

	if (pfd < 0) {
		for (size_t i = 0; i < n; i++)
			s->c[i].mapped = 1; /* cannot tell: keep them all */
		return;
	}
	while ((got = syscall(SYS_getdents64, pfd, s->dents,
	                      sizeof(s->dents))) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (void *)(s->dents + off);
			char path[64];
			struct rte_sb b;
			int fd;

			off += d->d_reclen;
			if (d->d_name[0] < '1' || d->d_name[0] > '9')
				continue;
			rte_sb_init(&b, path, sizeof(path));
			rte_sb_str(&b, "/proc/");
			rte_sb_str(&b, d->d_name);
			rte_sb_str(&b, "/maps");
			if (rte_sb_over(&b) ||
			    (fd = rte_fd_nostd(open(path, O_RDONLY |
			                                     O_CLOEXEC))) < 0)
				continue;
			read_maps(fd, s, n, 0);
			close(fd);
		}
	}
	close(pfd);
}

static size_t collect(int dfd, struct scratch *s, uid_t uid, pid_t self,
                      uint64_t t0)
{
	size_t n = 0;
	long got;

	while (n < MAX_CAND && (got = syscall(SYS_getdents64, dfd, s->dents,
	                                      sizeof(s->dents))) > 0)
		for (long off = 0; off < got && n < MAX_CAND;) {
			struct dirent64 *d = (void *)(s->dents + off);

			off += d->d_reclen;
			n += (size_t)candidate(dfd, d->d_name, uid, self, t0,
			                       &s->c[n]);
		}
	return n;
}

void rte_sweep(int dfd, const struct stat *dir, uid_t uid, pid_t self)
{
	struct timespec now, ts[2];
	struct scratch *s;
	unsigned removed = 0;
	int saved = errno;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &now); /* the vDSO: no system call */
	if (dir->st_uid != uid || swept_lately(dir, &now))
		return;
	ts[0].tv_sec = now.tv_sec;
	ts[0].tv_nsec = RTE_STAMP_NS;
	ts[1].tv_sec = 0;
	ts[1].tv_nsec = UTIME_OMIT;
	if (futimens(dfd, ts) < 0) /* no stamp, no sweep: stays bounded */
		goto out;
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		goto out;
	n = collect(dfd, s, uid, self,
	            (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	/* Our own listing set the access time to the real time (relatime
	 * updates it when it is older than the change time, which the first
	 * stamp just set to now): stamped again, or every start would sweep
	 * (the first stamp keeps the starts made during the listing out). */
	futimens(dfd, ts);
	if (n) {
		int fd = rte_fd_nostd(open("/proc/self/maps",
		                           O_RDONLY | O_CLOEXEC));

		if (fd >= 0) {
			read_maps(fd, s, n, 1);
			close(fd);
		}
		for (size_t i = 0; i < n; i++)
			if (s->c[i].page)
				munmap(s->c[i].page, 4096);
		find_mappers(s, n);
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		/* Still the file judged: names are never replaced by the
		 * shim, but someone else may have. */
		if (s->c[i].mapped ||
		    fstatat(dfd, s->c[i].name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_dev != s->c[i].dev || st.st_ino != s->c[i].ino)
			continue;
		removed += unlinkat(dfd, s->c[i].name, 0) == 0;
	}
	munmap(s, sizeof(*s));
	if (removed)
		rte_note("removed %u file(s) of processes gone without "
		         "removing them", removed);
out:
	errno = saved;
}
