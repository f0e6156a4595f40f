/*
 * log.h - the warning lines of librte.so (a leaf: depends only on fd.h).
 */
#ifndef RTE_SHIM_LOG_H
#define RTE_SHIM_LOG_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

/* Read RTE_LOG and remember the identity (device, inode) of fd 2: the
 * first thing the constructor does (init.c). Idempotent. Not signal-safe. */
void rte_log_load(void);

/* Print "rte: <message>\n" where RTE_LOG says: stderr (only while fd 2 is
 * still the file it was when the log was first used: device and inode),
 * none, or appended to a file. Async-signal-safe. */
void rte_log_line(const char *line, size_t n);

/* 1 if RTE_LOG names a file (lines there are never the program's
 * output: notes that are not warnings go only there). */
int rte_log_to_file(void);

/* Print "rte: <message>" as one line, at most once per *once flag (NULL:
 * always). Async-signal-safe (vsnprintf on a stack buffer + write).
 * Preserves errno. */
void rte_warn(int *once, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* As rte_warn(NULL, ...), but never on stderr: only into the file RTE_LOG
 * names (a descendant that cannot trace stands aside without a word on
 * the program's stderr). Async-signal-safe. Preserves errno. */
void rte_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#pragma GCC visibility pop

#endif
