/*
 * liveness.h - is the process that writes a ring file still there? Asked of
 * /proc (the pid, its start time, the files it maps), never by signalling.
 * Used by --follow (procs.c, follow.c), --clean (clean.c) and --serve.
 * Not thread-safe (an rd_writer belongs to one thread); no state of its own.
 */
#ifndef RD_LIVENESS_H
#define RD_LIVENESS_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * 1 if process pid is alive, 0 if it is gone or a zombie. A process we may
 * not signal (EPERM) counts as alive. Says nothing about whether it is the
 * process that wrote a file: see rd_writer_alive().
 */
int rd_pid_alive(long pid);

/*
 * Is the writer of a ring file still there? A pid alone cannot tell: the
 * writer may have been killed and its pid reused, or it may have been pid 1
 * of its own pid namespace (its file then names a pid that is alive here).
 * The shim keeps its file mapped until the process ends, so the writer is
 * there only while a process maps the file (shared and writable, the
 * file as rd_maps_id_of_fd() names it in /proc/PID/maps): first the file's pid is asked, then, for a writer in
 * another pid namespace, every process whose maps can be read. A process
 * whose maps cannot be read (another user's) is not the writer if it
 * started after the file last changed (its start time in /proc/PID/stat
 * against the file's ctime and mtime); if nobody visible maps the file and
 * the writer could be such a process, it counts as alive and is asked
 * again a second later.
 *
 * Once a process was seen mapping the file, later calls only check that
 * the same process (pid and start time) still runs, which is cheap.
 */
/* A file as /proc/PID/maps names it (see rd_maps_id_of_fd). */
struct rd_maps_id {
	dev_t dev;
	ino_t ino;
};

/*
 * The device and inode that /proc/PID/maps shows for the regular file open
 * on fd: found by mapping its first page and reading /proc/self/maps.
 * They differ from fstat()'s on btrfs (the file system's device instead of
 * the subvolume's) and overlayfs (the file of the layer below). Returns 0,
 * or -1 if it cannot be told (no /proc, the file cannot be mapped).
 */
int rd_maps_id_of_fd(int fd, struct rd_maps_id *id);

struct rd_writer {
	long pid;             /* from the file; <= 0: unknown, never alive */
	dev_t dev;            /* of the file */
	ino_t ino;
	struct rd_maps_id maps; /* the file as maps names it */
	uid_t uid;            /* its owner */
	uint64_t changed_ns;  /* CLOCK_REALTIME ns: min(ctime, mtime) at open */
	long seen_pid;        /* the process seen mapping the file, 0 if none */
	unsigned long long start; /* its start time (ticks after boot) */
	uint64_t retry_ms;    /* could not tell: ask again at this time */
	int gone;             /* sticky: a writer does not come back */
};

/* Set up w for the file whose fstat() is st, written by pid. */
void rd_writer_init(struct rd_writer *w, long pid, const struct stat *st);

/* Learn how /proc/PID/maps names the file at path (rd_maps_id_of_fd),
 * if path is still the file w was set up for. Without this call, maps are
 * taken to name it as stat() does, which fails on btrfs and overlayfs.
 * Returns 0, or -1 (w unchanged). */
int rd_writer_locate(struct rd_writer *w, const char *path);

/* 1 if the writer may still write to the file, 0 if it is gone. */
int rd_writer_alive(struct rd_writer *w);

/*
 * Like rd_writer_alive(), but asks the maps again even of a process seen
 * mapping the file: it may have let the file go while it runs on (an
 * exec). Costs a read of /proc/PID/maps: for the short time between a
 * ring_stop and the end of its writer.
 */
int rd_writer_maps_now(struct rd_writer *w);

/*
 * 1 if process pid cannot be the one that made a file last changed at
 * changed_ns (CLOCK_REALTIME ns): there is no such process, it is a zombie,
 * or it started after that time. 0 if it may be.
 */
int rd_pid_newer_than(long pid, uint64_t changed_ns);

#endif
