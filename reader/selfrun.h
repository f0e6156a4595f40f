/*
 * selfrun.h - rte-read running itself: a command (diff, flamediff) that
 * needs another output of rte-read on an input runs /proc/self/exe with
 * that output's options and reads what it prints, so that the figures
 * are the ones that output computes, not a second computation of them.
 * Not thread-safe (fork); not for signal handlers.
 */
#ifndef RD_SELFRUN_H
#define RD_SELFRUN_H

#include <stddef.h>

/* All of fd, NUL-terminated (not counted in *len), at most max bytes;
 * NULL if there is more, on a read error or out of memory. */
char *rd_read_fd(int fd, size_t max, size_t *len);

/* What `rte-read argv[1]...` prints on stdout (argv[0] is its name, the
 * list ends with NULL), as rd_read_fd; NULL if it could not be run or it
 * failed (it said why on stderr, which is ours). */
char *rd_self_run(char *const argv[], size_t max, size_t *len);

#endif
