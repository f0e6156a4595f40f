/*
 * signals.h - rte-read's signal handling.
 *
 * SIGBUS (a mapped ring file was cut short while being read): the buffered
 * output is written, "rte-read: FILE: file was truncated while being read
 * (SIGBUS)" is said, and the process exits RD_EX_BADFILE. FILE is the one
 * named by rd_signals_peek(), else the current file of the merge named by
 * rd_signals_reading().
 *
 * Not thread-safe: set up and used by the reading thread only; the
 * handlers themselves are async-signal-safe.
 */
#ifndef RD_SIGNALS_H
#define RD_SIGNALS_H

#include "merge.h"
#include "out.h"

/* Ignore SIGPIPE, catch SIGBUS (flushing `o`, may be NULL), and with
 * catch_stop catch SIGINT and SIGTERM (rd_signals_stop() then says). */
void rd_signals_setup(struct rd_out *o, int catch_stop);

/* The file being peeked outside any merge (NULL when done). */
void rd_signals_peek(const char *path);

/* The merge being read (NULL: none). */
void rd_signals_reading(rd_merge *m);

/* The SIGINT or SIGTERM that asked us to stop, 0 if none. */
int rd_signals_stop(void);

/* --wait was ended by a signal before `what` appeared: say so and end by
 * the same signal, as a shell expects of an interrupted command. */
void rd_die_of_stop(const char *what) __attribute__((noreturn));

#endif
