/*
 * metrics.h - ring files turned into Prometheus metrics (issue 17).
 *
 * An rd_prom follows ring files, each read incrementally through its own
 * merge and rd_procs (so spans and phases are matched exactly as the
 * summary formats match them, and a file is never read twice), and keeps
 * per process (pid) the values that the exposition writer renders in the
 * Prometheus text format 0.0.4 or OpenMetrics 1.0.0. Every metric and
 * label is documented in doc/METRICS.md.
 *
 * Series are kept per label set: the executable's base name (`exe`), the
 * user's --label pairs, and the pid only with `per_process`. Every file
 * of a label set adds to the same series, which live as long as the
 * rd_prom: a process that ends leaves its totals in its label set, so
 * counters never go down and every scrape sees the same values (nothing
 * is consumed by a scrape). A file is accounted in a private label set
 * until its executable is known (its first rte.module record, else
 * /proc/PID/exe when it was found), then merged into its own.
 *
 * Memory is bounded by the number of series: label sets past `max_sets`
 * share exe="other" (one warning); per label set, user event names past
 * `max_names` share one `other` series; runtime phases and counters are
 * bounded by the format. A file whose writer is gone and which was read
 * to its end is freed by the next rd_prom_collect().
 *
 * Not thread-safe: the caller serialises every call on one rd_prom (serve.c
 * holds a mutex). Reading a file that another process truncates raises
 * SIGBUS: rd_prom_poll() survives it if rd_prom_catch_sigbus() was called
 * (the file is then counted as an error and no longer read).
 */
#ifndef RD_METRICS_H
#define RD_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rte/consumer.h"

struct rd_prom_opts {
	int per_thread;      /* a `ring` label on every series */
	int per_process;     /* a `pid` label: a label set per process */
	unsigned max_names;  /* distinct user event names per label set */
	unsigned max_sets;   /* label sets (exe, pid): the rest exe="other" */
	int exporter;        /* render the rte_exporter_* health metrics */
	char *const *labels; /* NAME=VALUE pairs on every series (--label) */
	int nlabels;
};

#define RD_PROM_MAX_NAMES_DEFAULT 100u
#define RD_PROM_MAX_SETS_DEFAULT 10000u

typedef struct rd_prom rd_prom;

/* A growable output buffer; `oom` is sticky. */
struct rd_buf {
	char *p;
	size_t n, cap;
	int oom;
};

void rd_buf_mem(struct rd_buf *b, const void *s, size_t n);
void rd_buf_str(struct rd_buf *b, const char *s);
void rd_buf_u64(struct rd_buf *b, uint64_t v);

/* A new rd_prom, or NULL if out of memory. */
rd_prom *rd_prom_new(const struct rd_prom_opts *o);
void rd_prom_free(rd_prom *p);

/* Follow the ring file `path`, opened as cursor c (taken, also on
 * failure). Returns 0, or -1 if out of memory. */
int rd_prom_add_file(rd_prom *p, const char *path, rte_cursor *c);

/* Count one exporter error (a file that cannot be opened or read). */
void rd_prom_error(rd_prom *p);

/*
 * Read what is new in every followed file, at most `budget` events per
 * file (0: no limit). With RD_PROM_ALIVE in `what`, first ask whether
 * each file's writer is still there (rd_src_alive: /proc of each writer),
 * and whether the pid of a process whose files are all finished is gone
 * (it is final then); a file whose writer was gone before it was read to
 * its end is finished (by the poll that reads its end, whether it asks or
 * not: a writer found gone is not asked about again). With `all_done`
 * (files of finished runs: rte-read --push), every file is finished
 * after the read and every process is final. Rings never written to are
 * probed only with RD_PROM_RINGS (or all_done, or for a writer found
 * gone): the other calls read the rings in use, so ask for RD_PROM_RINGS
 * often enough for a new thread's ring (a few times a second). Returns 1
 * if some file hit the budget (call again), else 0.
 */
enum { RD_PROM_RINGS = 1, RD_PROM_ALIVE = 2 };
int rd_prom_poll(rd_prom *p, size_t budget, int what, int all_done);

/* Have rd_prom_poll() call between(ud) between two files (serve.c lets a
 * waiting scrape in there: it holds its lock a file at a time, not a
 * whole poll). NULL: none. */
void rd_prom_between(rd_prom *p, void (*between)(void *), void *ud);

/* Free the files that are finished (their totals stay in their label
 * sets). */
void rd_prom_collect(rd_prom *p);

/*
 * Render every metric into b: OpenMetrics 1.0.0 if `openmetrics` (ends
 * with "# EOF", and every counter and histogram has its `_created`), else
 * the text format 0.0.4. With `mark` (a GET that will be answered), the
 * scrape is counted. Rendering changes nothing else: every scraper sees
 * the same values. Returns 0, or -1 if out of memory.
 */
int rd_prom_render(rd_prom *p, struct rd_buf *b, int openmetrics, int mark);

/* Report the duration of the last scrape (rte_exporter_scrape_duration_seconds). */
void rd_prom_scrape_took(rd_prom *p, uint64_t ns);

/* 1 if the file of device dev and inode ino is still followed: its inode
 * cannot belong to another file. */
int rd_prom_follows(const rd_prom *p, dev_t dev, ino_t ino);

/* Install the SIGBUS handler rd_prom_poll() relies on (process-wide). */
void rd_prom_catch_sigbus(void);

#endif
