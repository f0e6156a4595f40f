/*
 * crashrep_int.h - the crash recorder's state (crashrep.c), shared with
 * crashrep_last.c only: per file its symboliser and the history of each
 * ring, the crashes with their stacks and snapshots.
 */
#ifndef RD_CRASHREP_INT_H
#define RD_CRASHREP_INT_H

#include <stdint.h>

#include "crashrep.h"

#define NAME_KEEP 40
#define CUSTOM_KEEP 40
#define FRAMES_MAX 1024u

struct last {
	uint64_t ts;
	int kind;
	unsigned id;
	int64_t v;
	char name[NAME_KEEP];
	uint8_t custom[CUSTOM_KEEP];
	uint8_t clen;
};

struct rring {
	struct last ev[RD_CRASH_LAST];
	unsigned n, pos;
	char thread[RD_THREAD_NAME_MAX];
	long tid;
	/* RTE_BACKTRACE=thread: who made this ring's thread */
	char **made_by;
	unsigned nmade;
	int made_ring;
	long made_tid;
};

struct pfile {
	const char *path;
	long pid;
	struct rd_sym *sym;
	/* nrings of them, made on the first event that is not a module's:
	 * NULL in the first pass of a finished file with no crash (there
	 * only rte.* events come here, module events the most), so that a
	 * file of 128 rings costs its symboliser, not 128 histories. */
	struct rring *rings;
	unsigned nrings;
};

struct crash {
	long pid;
	const char *path;
	unsigned ring;
	char thread[RD_THREAD_NAME_MAX];
	long tid;
	uint64_t ts;
	struct rte_crash_rec r;
	char **frames;
	unsigned nframes;
	char **made_by;
	unsigned nmade;
	int made_ring;
	long made_tid;
	unsigned file;        /* index in rd_crash.files */
	struct rring *snap;   /* every ring's history when the crash came */
	unsigned nsnap;
};

struct rd_crash {
	struct pfile *files;
	unsigned nfiles;
	struct crash *crashes;
	unsigned ncrashes;
	unsigned last; /* index of the file of the previous event */
	int oom;
};


/* A malloc'd string, NULL if out of memory (crashrep.c). */
char *rd_crash_xasprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* Keep every ring's history of f as it is when crash cr arrives
 * (crashrep_last.c). */
void rd_crash_snapshot(struct crash *cr, const struct pfile *f,
                       const struct rd_src *src);

#endif
