/*
 * inputs.h - what rte-read asks of an input path: a pid, a file, or a
 * directory of *.events files; find each file's pid. rd_input_resolve()
 * is the one resolver of INPUT arguments, used by every mode (reading,
 * --follow, --serve, --push); where a PID's file is, and the default
 * directory, are common/format/rundir.h's rules.
 */
#ifndef RD_INPUTS_H
#define RD_INPUTS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "rte/consumer.h"

/* An INPUT argument, resolved. */
enum rd_input_kind { RD_IN_PID, RD_IN_FILE, RD_IN_DIR };
struct rd_input {
	enum rd_input_kind kind;
	const char *arg;    /* as given (PID: the number) */
	/* PID: <dir>/<PID>.events for each directory of rte_rundir_search(),
	 * in order; FILE, DIR: the path itself. Malloc'd. */
	char *path[3];
	unsigned npaths;
	char where[4200];   /* PID: "a, b, c": the directories, for messages */
};

/*
 * Resolve arg (-d DIR in dir, or NULL) into *in: a string of digits is a
 * PID unless something of that name exists here; else a DIR if it is a
 * directory now, else a FILE (one that may not exist yet). Returns 0, or
 * -1 if out of memory (*in then needs no rd_input_free).
 */
int rd_input_resolve(const char *arg, const char *dir, struct rd_input *in);

/* No INPUT: the default directory (rte_rundir_default: -d DIR, else
 * $OCAML_RUNTIME_EVENTS_DIR, else librte.so's), as a DIR. 0 or -1. */
int rd_input_default(const char *dir, struct rd_input *in);

void rd_input_free(struct rd_input *in);

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

/* 1 if some ring of the file at path holds a ring_stop, 0 if none does, -1
 * if the file cannot be opened or a ring cannot be read to its end. */
int rd_file_has_ring_stop(const char *path);

/* Monotonic milliseconds, and a sleep that an interrupted call resumes. */
uint64_t rd_now_ms(void);
void rd_sleep_ms(unsigned ms);

#endif
