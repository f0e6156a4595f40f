/*
 * liveness.c - is the writer of a ring file still there: /proc/PID/stat and
 * /proc/PID/maps (see liveness.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "inputs.h"
#include "liveness.h"
#include "maps.h"
#include "stale.h"

int rd_pid_alive(long pid)
{
	char st;
	unsigned long long start;

	if (pid <= 0)
		return 0;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0;
	return rte_proc_stat(pid, &st, &start) < 0 || !rte_proc_dead_state(st);
}

/*
 * 1 if the mapping [lo, hi) of process pid is the file (dev, ino) as
 * stat() sees it, 0 if it is another file, -1 if that cannot be told
 * (map_files needs privileges): the device and inode of maps alone are
 * then taken as the answer.
 */
static int map_files_is(long pid, unsigned long long lo, unsigned long long hi,
                        dev_t dev, ino_t ino)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof path, "/proc/%ld/map_files/%llx-%llx", pid, lo, hi);
	if (stat(path, &st) < 0)
		return -1;
	return st.st_dev == dev && st.st_ino == ino;
}

/*
 * 1 if /proc/PID/maps maps the file w writable and shared, 0 if not (also:
 * no such process, or a zombie, whose maps are empty), -1 if it cannot be
 * read. Maps name a file by the device and inode the kernel's mapping
 * holds, which are not always stat()'s (btrfs gives maps the file
 * system's device and stat() the subvolume's; overlayfs maps the file of
 * the layer below): w->maps holds the pair as maps shows it for this file
 * (rd_writer_locate), and map_files, where it may be read, settles the
 * rare case of two files showing the same pair.
 */
/* The writer's file: a writable shared mapping of w->maps that map_files
 * does not name as another file. */
struct ring_of {
	long pid;
	const struct rd_writer *w;
};

static int maps_ring(void *arg, int kind, unsigned long long lo,
                     unsigned long long hi, const struct rte_maps_file *id)
{
	const struct ring_of *r = arg;

	return kind == 1 && id->dev == r->w->maps.dev && id->ino == r->w->maps.ino &&
	       map_files_is(r->pid, lo, hi, r->w->dev, r->w->ino) != 0;
}

static int maps_file(long pid, const struct rd_writer *w)
{
	struct ring_of r = { pid, w };
	int found = rte_maps_scan(pid, maps_ring, &r);

	if (found == RTE_MAPS_NOFILE)
		return errno == ENOENT || errno == ESRCH ? 0 : -1;
	return found == RTE_MAPS_IOERR ? -1 : found;
}

int rd_maps_id_of_fd(int fd, struct rd_maps_id *id)
{
	struct rte_maps_file f;

	if (rte_maps_id_of_fd(fd, &f) < 0)
		return -1;
	id->dev = f.dev;
	id->ino = f.ino;
	return 0;
}

int rd_writer_locate(struct rd_writer *w, const char *path)
{
	struct rd_maps_id id;
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == w->dev &&
	    st.st_ino == w->ino && rd_maps_id_of_fd(fd, &id) == 0) {
		w->maps = id;
		rc = 0;
	}
	close(fd);
	return rc;
}

int rd_pid_newer_than(long pid, uint64_t changed_ns)
{
	return rte_pid_gone_for(pid, changed_ns);
}

void rd_writer_init(struct rd_writer *w, long pid, const struct stat *st)
{
	memset(w, 0, sizeof *w);
	w->pid = pid;
	w->dev = st->st_dev;
	w->ino = st->st_ino;
	w->uid = st->st_uid;
	w->changed_ns = rte_stat_changed_ns(st);
	w->maps.dev = st->st_dev; /* until rd_writer_locate() knows better */
	w->maps.ino = st->st_ino;
}

/* Look through every process whose maps can be read for one that maps the
 * file: the writer under another pid (it ran in a pid namespace). Stores
 * its pid and start time. Returns 1 if found, else 0. */
static int find_mapper(struct rd_writer *w)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		long pid = rd_is_pid(e->d_name) ? atol(e->d_name) : 0;
		unsigned long long start;
		char state;

		if (pid <= 0 || rte_proc_stat(pid, &state, &start) < 0 || rte_proc_dead_state(state) ||
		    maps_file(pid, w) != 1)
			continue;
		w->seen_pid = pid;
		w->start = start;
		found = 1;
	}
	closedir(d);
	return found;
}

/* The process seen mapping the file is still the same and running. */
static int same_process(const struct rd_writer *w)
{
	unsigned long long start;
	char state;

	return rte_proc_stat(w->seen_pid, &state, &start) == 0 && !rte_proc_dead_state(state) &&
	       start == w->start;
}

#define RESCAN_MS 1000 /* when nothing could tell, ask again this often */

int rd_writer_alive(struct rd_writer *w)
{
	unsigned long long start = 0;
	char state;
	int m = 0, exists;

	if (w->gone || w->pid <= 0)
		return !(w->gone = 1);
	if (w->seen_pid) /* seen mapping it: alive while it runs */
		return same_process(w) || !(w->gone = 1);
	if (w->retry_ms && rd_now_ms() < w->retry_ms)
		return 1;
	exists = rte_proc_stat(w->pid, &state, &start) == 0 && !rte_proc_dead_state(state);
	if (exists && (m = maps_file(w->pid, w)) == 1) {
		w->seen_pid = w->pid;
		w->start = start;
		return 1;
	}
	if (m < 0 && rte_proc_started_after(start, w->changed_ns))
		return !(w->gone = 1); /* not the writer: born after the file */
	if (find_mapper(w))
		return 1;
	/* Nobody we can see maps it. If the writer could be a process whose
	 * maps we may not read (another user's, and we are not root), we
	 * cannot tell: keep it alive and ask again later. */
	if (m < 0 && geteuid() != 0 && geteuid() != w->uid) {
		w->retry_ms = rd_now_ms() + RESCAN_MS;
		return 1;
	}
	return !(w->gone = 1);
}

int rd_writer_maps_now(struct rd_writer *w)
{
	if (w->gone || w->pid <= 0)
		return 0;
	if (w->seen_pid)
		return same_process(w) && maps_file(w->seen_pid, w) != 0;
	return rd_writer_alive(w);
}
