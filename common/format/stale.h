/*
 * stale.h - whether a file in a directory of ring files was left by a
 * process that is gone (internal): the one rule that rte-read --clean
 * (reader/clean.c, reader/liveness.c) and librte.so's sweep at start
 * (shim/sweep.c) both apply.
 *
 * The names the shim makes, and the pid each starts with:
 *   <pid>.events, <pid>.exec<N>.events  ring files       RTE_NAME_RING
 *   .<pid>.events.exec                  pre-exec name    RTE_NAME_EXEC
 *   .<pid>.<8 hex>.events.tmp           being made       RTE_NAME_TMP
 *
 * A pid alone does not name a process for ever: the writer may have been
 * killed and its pid reused. So process pid counts as gone for a file
 * last changed at time T (the earlier of its ctime and mtime: a rename
 * changes the ctime only, the writer's stores the mtime) when there is no
 * such process, it is a zombie, or it started after T (its start time in
 * /proc/PID/stat, with a 20 ms margin). A writer in another pid namespace
 * names a pid that means nothing here: the callers also ask whether any
 * process still maps the file (rte_maps_line).
 *
 * Thread-safety: every function is thread-safe and async-signal-safe
 * (no allocation, no stdio), and keeps no state.
 */
#ifndef RTE_STALE_H
#define RTE_STALE_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

enum rte_name_kind { RTE_NAME_OTHER, RTE_NAME_RING, RTE_NAME_EXEC, RTE_NAME_TMP };

/* What the name is (above), its pid in *pid (0 for RTE_NAME_OTHER). */
enum rte_name_kind rte_name_classify(const char *name, long *pid);

/* The state letter and start time (clock ticks after boot, field 22) of
 * process pid from /proc/PID/stat. Returns 0, or -1 if there is no such
 * process or its stat cannot be parsed. */
int rte_proc_stat(long pid, char *state, unsigned long long *start);

/* 1 for the state of a process that is gone (zombie, dead). */
int rte_proc_dead_state(char state);

/* 1 if a process that started `start` ticks after boot started after the
 * CLOCK_REALTIME time t_ns (with the margin above). 0 if t_ns is 0. */
int rte_proc_started_after(unsigned long long start, uint64_t t_ns);

/* 1 if process pid cannot be the one that made a file last changed at
 * changed_ns (CLOCK_REALTIME ns): gone (above). 0 if it may be. */
int rte_pid_gone_for(long pid, uint64_t changed_ns);

/* The file's last change for the rule above: min(ctime, mtime), ns. */
uint64_t rte_stat_changed_ns(const struct stat *st);

/* One line of /proc/PID/maps: its address range, and the device and
 * inode of the file it maps. Returns 1 for a writable shared mapping of
 * a file (how the shim maps its ring), 0 for another file mapping, -1
 * for anything else. */
struct rte_maps_file {
	dev_t dev;
	ino_t ino;
};
int rte_maps_line(const char *line, unsigned long long *lo,
                  unsigned long long *hi, struct rte_maps_file *id);

#endif
