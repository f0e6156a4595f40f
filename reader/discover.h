/*
 * discover.h - rte-read's inputs (PID, FILE, DIR) turned into sources of a
 * merge, each also added to rd_procs and to the filter's trace start.
 *
 * A file is told apart by device and inode, not by name: one named twice
 * (X and ./X, PID and PID.events) is read once, and a file an exec renamed
 * is not taken for a new one. Failures are said (status.h) and the
 * readable inputs are still added. Not thread-safe.
 */
#ifndef RD_DISCOVER_H
#define RD_DISCOVER_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "filter.h"
#include "merge.h"
#include "procs.h"

struct rd_discover {
	/* Set by the caller before the first call. */
	rd_merge *merge;
	struct rd_procs *procs;
	struct rd_filter *filter;
	const char *dir;    /* -d DIR: where PID inputs are, NULL: the defaults */
	int wait, follow;   /* --wait, --follow */
	double wait_secs;   /* --wait's limit, < 0: forever */
	/* Owned. */
	char **dirs;        /* DIR inputs, rescanned with --follow */
	size_t ndirs;
	char **paths;       /* every path added */
	size_t npaths, pathcap;
	/* Every file seen, an open-addressing hash set (idcap a power of two,
	 * at most half full; an empty slot has ino 0): a directory of
	 * 100,000 files is not checked in quadratic time. */
	struct rd_file_id { dev_t dev; ino_t ino; } *ids;
	size_t nids, idcap;
};

/* Add inputs[0..n) (each a PID, a FILE or a DIR), waiting with d->wait. */
void rd_discover_inputs(struct rd_discover *d, char **inputs, int n);

/* Add the files of DIR not added yet. With `retry`, a file not complete
 * yet is left for the next scan. Returns how many were added, or -1 if
 * DIR cannot be read (said unless quiet). */
int rd_discover_scan_dir(struct rd_discover *d, const char *dir, int quiet,
                         int retry);

/* A followed file whose name now belongs to a new file (the process
 * exec'd and traces again): add the new one. Returns how many. */
int rd_discover_reopen_replaced(struct rd_discover *d);

/* 1 if st is the file or the directory of an input. */
int rd_discover_is_input(struct rd_discover *d, const struct stat *st);

/* Free what d owns (not the merge, procs or filter). */
void rd_discover_fini(struct rd_discover *d);

#endif
