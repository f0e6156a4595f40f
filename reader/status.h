/*
 * status.h - rte-read's exit codes, its exit status (the first failure's)
 * and its one-line messages on stderr. Not thread-safe: the reading
 * thread's (--serve keeps its own status).
 */
#ifndef RD_STATUS_H
#define RD_STATUS_H

/* Exit codes: documented in --help, rte-read(1) and doc/USAGE.md. */
enum {
	RD_EX_OK = 0,
	RD_EX_USAGE = 1,     /* bad option or argument */
	RD_EX_NOINPUT = 2,   /* not found, cannot be opened, no ring files, --wait timed out */
	RD_EX_BADFILE = 3,   /* not a ring file, bad header, truncated (also under us) */
	RD_EX_CORRUPT = 4,   /* a ring's message stream is corrupt */
	RD_EX_OUTPUT = 5,    /* cannot write the output */
	RD_EX_KILLED = 6,    /* --follow: the process ended without ring_stop */
	RD_EX_NOMEM = 7,     /* out of memory */
};

/* Record `code` as the exit status unless a failure was recorded before. */
void rd_status_set(int code);

/* The exit status: the first failure's code, or RD_EX_OK. */
int rd_status(void);

/* "rte-read: <message>" on stderr, and rd_status_set(code). */
void rd_fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The exit code of a consumer library error (rte/error.h). */
int rd_exit_of(int err);

#endif
