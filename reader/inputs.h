/*
 * inputs.h - turn rte-read's arguments into ring files: a pid, a file, or a
 * directory of *.events files; find each file's pid.
 */
#ifndef RD_INPUTS_H
#define RD_INPUTS_H

#include <stddef.h>

#include "rte/consumer.h"

/* 1 if s is a non-empty string of decimal digits that fits a pid. */
int rd_is_pid(const char *s);

/* The leading decimal digits of the base name of path ("123.exec1.events"
 * gives 123), or -1. */
long rd_pid_from_name(const char *path);

/*
 * The pid recorded in the file: the data of the first ring_start event
 * found at the start of a used ring, read through a second cursor so `c`
 * is not advanced. -1 if none is there (e.g. the ring wrapped).
 */
long rd_pid_from_ring_start(const char *path);

/*
 * The *.events files of directory `dir`, as "dir/name" paths sorted by
 * name, in a malloc'd array of malloc'd strings (*out, *n). Returns 0, or
 * -errno if the directory cannot be read.
 */
int rd_list_dir(const char *dir, char ***out, size_t *n);

void rd_free_list(char **list, size_t n);

/* Monotonic milliseconds, and a sleep that an interrupted call resumes. */
uint64_t rd_now_ms(void);
void rd_sleep_ms(unsigned ms);

/*
 * 1 if process pid is alive, 0 if it is gone or a zombie (it will write no
 * more). A process we may not signal (EPERM) counts as alive.
 */
int rd_pid_alive(long pid);

#endif
