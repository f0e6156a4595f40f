/*
 * drain_int.h - the live drain's state (drain.c), shared with
 * drain_files.c only: a followed file, the drain, and the functions of
 * drain_files.c that drain.c calls.
 */
#ifndef RTE_RUN_DRAIN_INT_H
#define RTE_RUN_DRAIN_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

#include "drain.h"
#include "rte/consumer.h"

struct tfile {
	char name[256];        /* its name in LIVE, as last seen */
	int fd;                /* O_RDONLY, kept: the names at the end */
	dev_t dev;
	ino_t ino;
	dev_t mdev;            /* as /proc/PID/maps names it */
	ino_t mino;
	long pid;              /* from the name; <= 0: unknown */
	rte_cursor *c;         /* NULL: not a ring file (yet) */
	struct cap_spool *sp;
	unsigned rings;
	char *failed;          /* per ring: its error was reported */
	unsigned prefix;       /* rings 0 .. prefix-1 are known to be used */
	unsigned hi;           /* 1 + the highest ring seen used */
	unsigned rounds;       /* reads of it (every FULL_EVERY-th: all rings) */
	uint64_t next_check;
	unsigned checks;       /* liveness checks so far (their spacing) */
	int no_liveness;       /* grew after its writer seemed gone */
	int truncated;         /* reading it raised SIGBUS: read no more */
	char err[512];         /* why it cannot be opened, if it cannot */
};

struct drain {
	char *out, *live;
	int out_fd, live_fd, ino_fd;
	pthread_t thread;
	atomic_int stop;
	int final;             /* the last round: no reserve any more */
	int pack;              /* pack the captures (pack.h) */
	struct packer *packer; /* its context, made once (NULL: none) */
	int reserved;          /* the reserve is in place */
	struct tfile **f;
	size_t nf, capf;
	char **later;          /* captures in OUT to pack at the end (big ones) */
	size_t nlater, caplater;
	struct drain_stats st;
};

/* drain.c: a line on stderr, "rte-run: drain: " then fmt with a and b */
void drain_say(const char *fmt, const char *a, const char *b);

/* drain_read.c: read what t's rings hold now into its spool (every ring
 * with `all`, else the rings used so far and the next), guarded against
 * SIGBUS (a file truncated under us: read no more of it, said once);
 * the words read. drain_on_sigbus: the drain thread's SIGBUS handler. */
uint64_t drain_safe(struct tfile *t, int all);
void drain_on_sigbus(int sig);

/* drain_files.c */
int drain_ring_name(const char *n);
void drain_try_open(struct drain *d, struct tfile *t);
void drain_scan(struct drain *d);
void drain_take_events(struct drain *d);

#endif
