/*
 * clean.c - rte-read --clean (see clean.h).
 *
 * Everything happens through one descriptor of the directory, opened once:
 * each entry is examined with fstatat(AT_SYMLINK_NOFOLLOW), opened with
 * openat(O_NOFOLLOW|O_NONBLOCK|O_NOCTTY) and checked to be that same regular
 * file, and removed with unlinkat() only if it is still that file. No path
 * is resolved again between the check and the unlink, so a symlink flipped
 * under us cannot send the unlink to another directory.
 *
 * Whether a writer still maps a file is looked up in one snapshot of every
 * process's writable shared mappings, read from /proc/PID/maps once per
 * run (struct mapped), not once per file; a file with ring_stop is kept
 * before any of that is asked. A file changed after the snapshot was taken
 * may belong to a writer the snapshot missed: it is kept.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "clean.h"
#include "inputs.h"
#include "liveness.h"
#include "stale.h"
#include "vec.h"

enum kind { K_OTHER = RTE_NAME_OTHER, K_RING = RTE_NAME_RING,
            K_EXEC = RTE_NAME_EXEC, K_TMP = RTE_NAME_TMP };

/* What the name is, and the pid it starts with (stale.h). */
static enum kind classify(const char *name, long *pid)
{
	return (enum kind)rte_name_classify(name, pid);
}

static uint64_t realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- one snapshot of what every process maps ------------------------------ */

struct mapped {
	struct rd_maps_id *ids; /* writable shared file mappings, sorted */
	size_t n, cap;
	long *hidden;           /* pids whose maps could not be read */
	size_t nhidden, hcap;
	uint64_t t0;            /* CLOCK_REALTIME ns, before the first read */
	int taken;
};

static int by_id(const void *a, const void *b)
{
	const struct rd_maps_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Add the writable shared mappings of process pid. Returns 0 or -1 (out
 * of memory); a process whose maps cannot be read goes to `hidden`. */
static int snap_pid(struct mapped *m, long pid)
{
	char path[64], line[4096 + 128];
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT || errno == ESRCH)
			return 0;
		if (RD_VEC_ROOM(m->hidden, m->hcap, m->nhidden, 256))
			return -1;
		m->hidden[m->nhidden++] = pid;
		return 0;
	}
	while (rc == 0 && fgets(line, sizeof line, f)) {
		unsigned maj, min;
		unsigned long long ino;
		char perm[8];

		if (sscanf(line, "%*s %7s %*s %x:%x %llu", perm, &maj, &min, &ino) != 4 ||
		    ino == 0 || perm[1] != 'w' || perm[3] != 's')
			continue;
		if (RD_VEC_ROOM(m->ids, m->cap, m->n, 256))
			rc = -1;
		else
			m->ids[m->n++] = (struct rd_maps_id){ makedev(maj, min), (ino_t)ino };
	}
	fclose(f);
	return rc;
}

/* Read every process's maps, once. Returns 0 or -1 (out of memory, or no
 * /proc: then nothing can be judged dead). */
static int snapshot(struct mapped *m)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (m->taken)
		return m->taken > 0 ? 0 : -1;
	m->t0 = realtime_ns();
	d = opendir("/proc");
	if (!d) {
		m->taken = -1;
		return -1;
	}
	while (rc == 0 && (e = readdir(d)))
		if (rd_is_pid(e->d_name))
			rc = snap_pid(m, atol(e->d_name));
	closedir(d);
	if (m->n > 1)
		qsort(m->ids, m->n, sizeof *m->ids, by_id);
	m->taken = rc == 0 ? 1 : -1;
	return rc;
}

/*
 * 1 if the file open on fd may still have a writer: some process mapped it
 * writable when the snapshot was taken, it changed since, or process pid
 * (from the file), whose maps could not be read, may be it. 0 if not.
 */
static int may_be_written(struct mapped *m, int fd, const struct stat *st, long pid)
{
	struct rd_maps_id id = { st->st_dev, st->st_ino };

	if (snapshot(m) < 0 || rte_stat_changed_ns(st) + 20000000 >= m->t0)
		return 1;
	rd_maps_id_of_fd(fd, &id); /* else maps name it as stat() does */
	if (m->n && bsearch(&id, m->ids, m->n, sizeof id, by_id))
		return 1;
	for (size_t i = 0; i < m->nhidden; i++)
		if (m->hidden[i] == pid && !rd_pid_newer_than(pid, rte_stat_changed_ns(st)))
			return 1;
	/* Another user's file while another user's maps are hidden from
	 * us: its writer may be one of them (under another pid, in a pid
	 * namespace). Not ours to judge. */
	if (m->nhidden && geteuid() != 0 && st->st_uid != geteuid())
		return 1;
	return 0;
}

/* ---- judging one entry ----------------------------------------------------- */

/* 1 if some ring of c holds a ring_stop, 0 if none does, -1 if a ring
 * cannot be read to its end. */
static int has_ring_stop(rte_cursor *c, int *crashed)
{
	for (unsigned r = 0; r < rte_cursor_rings(c); r++) {
		struct rte_event ev;
		int got;

		while ((got = rte_cursor_next(c, r, &ev)) == 1) {
			if (ev.kind == RTE_EV_LIFECYCLE && ev.id == RTE_LC_RING_STOP)
				return 1;
			if (ev.kind == RTE_EV_USER_CUSTOM && ev.name &&
			    !strcmp(ev.name, "rte.crash"))
				*crashed = 1;
		}
		if (got < 0)
			return -1;
	}
	return 0;
}

/* The pid of the first ring_start at the start of a used ring, or -1. */
static long ring_start_pid(rte_cursor *c)
{
	for (unsigned r = 0; r < rte_cursor_rings(c); r++) {
		struct rte_event ev;

		if (rte_cursor_ring_used(c, r) && rte_cursor_next(c, r, &ev) == 1 &&
		    ev.kind == RTE_EV_LIFECYCLE && ev.id == RTE_LC_RING_START &&
		    ev.u.data > 0 && ev.u.data < (1L << 30))
			return (long)ev.u.data;
	}
	return -1;
}

/* Open a cursor on the file open on fd (through /proc/self/fd: the same
 * file, whatever its name is now). NULL if it is not a ring file or not
 * the file st describes. */
static rte_cursor *cursor_on(int fd, const struct stat *st)
{
	char path[64];
	rte_cursor *c;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (rte_cursor_open(path, &c, NULL, 0) != RTE_OK)
		return NULL;
	if (rte_cursor_stat(c)->st_dev != st->st_dev ||
	    rte_cursor_stat(c)->st_ino != st->st_ino) {
		rte_cursor_close(c);
		return NULL;
	}
	return c;
}

/*
 * 1 if the ring file open on fd is stale: no ring_stop (the cheap test,
 * first) and no writer; its pid in *pid, and *crashed set if it holds a
 * crash record (rte.crash). A writer still mapping it when the snapshot
 * was taken keeps it; one gone before the snapshot wrote no ring_stop
 * after the test.
 */
static int stale_ring(struct mapped *m, int fd, const struct stat *st,
                      const char *name, long *pid, int *crashed)
{
	rte_cursor *c = cursor_on(fd, st), *c2;
	int stale = 0;

	if (!c)
		return 0; /* not a ring file: not ours to remove */
	if (has_ring_stop(c, crashed) == 0 && (c2 = cursor_on(fd, st))) {
		*pid = ring_start_pid(c2);
		if (*pid < 0)
			*pid = rd_pid_from_name(name);
		rte_cursor_close(c2);
		stale = !may_be_written(m, fd, st, *pid);
	}
	rte_cursor_close(c);
	return stale;
}

/* The reason to remove the entry open on fd, or NULL to keep it; *keep
 * set when the reason is one to keep a stale file (a crash record). */
static const char *why_remove(struct mapped *m, int fd, const char *name,
                              const struct stat *st, char *buf, size_t cap, int *keep)
{
	long pid;
	enum kind k = classify(name, &pid);
	int crashed = 0;

	switch (k) {
	case K_RING:
		if (!stale_ring(m, fd, st, name, &pid, &crashed))
			return NULL;
		*keep = crashed;
		snprintf(buf, cap, crashed
		         ? "process %ld crashed: its crash record (rte.crash) is kept; remove it by hand"
		         : "process %ld ended without ring_stop (killed?)", pid);
		return buf;
	case K_EXEC:
	case K_TMP:
		if (!rd_pid_newer_than(pid, rte_stat_changed_ns(st)) ||
		    may_be_written(m, fd, st, pid))
			return NULL;
		snprintf(buf, cap, k == K_EXEC
		         ? "pre-exec file of process %ld, which is gone"
		         : "unfinished file of process %ld, which is gone", pid);
		return buf;
	default:
		return NULL;
	}
}

/* Clean one entry of the directory open on dfd. Returns 0, or 2 if it
 * could not be removed. */
static int clean_one(struct mapped *m, int dfd, const char *dir,
                     const char *name, int dry_run)
{
	char buf[128];
	const char *why;
	struct stat st, fst, again;
	long pid;
	int fd, rc = 0, keep = 0;

	if (classify(name, &pid) == K_OTHER ||
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode) || fst.st_dev != st.st_dev ||
	    fst.st_ino != st.st_ino ||
	    !(why = why_remove(m, fd, name, &fst, buf, sizeof buf, &keep)))
		goto out;
	if (keep) {
		printf("kept %s/%s: %s\n", dir, name, why);
		goto out;
	}
	if (dry_run) {
		printf("would remove %s/%s: %s\n", dir, name, why);
		goto out;
	}
	/* Still the file that was judged (names are never replaced by the
	 * shim, but someone else may have). */
	if (fstatat(dfd, name, &again, AT_SYMLINK_NOFOLLOW) < 0 ||
	    again.st_dev != st.st_dev || again.st_ino != st.st_ino)
		goto out;
	if (unlinkat(dfd, name, 0) < 0) {
		if (errno != ENOENT) {
			fprintf(stderr, "rte-read: %s/%s: cannot remove: %s\n", dir, name,
			        strerror(errno));
			rc = 2;
		}
		goto out;
	}
	printf("removed %s/%s: %s\n", dir, name, why);
out:
	close(fd);
	return rc;
}

int rd_clean(const char *dir, int dry_run)
{
	struct mapped m = { 0 };
	struct dirent *e;
	int rc = 0, dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), lfd;
	DIR *d;

	if (dfd < 0 || (lfd = dup(dfd)) < 0 || !(d = fdopendir(lfd))) {
		fprintf(stderr, "rte-read: %s: %s\n", dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return 2;
	}
	while ((e = readdir(d)))
		if (clean_one(&m, dfd, dir, e->d_name, dry_run) && !rc)
			rc = 2;
	closedir(d);
	close(dfd);
	free(m.ids);
	free(m.hidden);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "rte-read: standard output: write error: %s\n",
			        strerror(errno));
		return errno == EPIPE ? rc : 5;
	}
	return rc;
}
