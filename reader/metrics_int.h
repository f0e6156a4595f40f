/*
 * metrics_int.h - the state of the Prometheus exporter (metrics.c,
 * metrics_series.c, metrics_files.c, metrics_out.c): its families, series,
 * processes and files, and what those files call of each other. Internal
 * to the exporter: metrics.h is the interface.
 */
#ifndef RD_METRICS_INT_H
#define RD_METRICS_INT_H

#include <stdint.h>

#include "heap.h"
#include "metrics.h"
#include "procs.h"

/* ---- families ------------------------------------------------------------ */

enum fam {
	PF_EVENTS, PF_LOST, PF_PHASE, PF_PAUSE, PF_PHASE_TIME, PF_SPAN,
	PF_COUNTER, PF_COUNTER_ACC, PF_INT, PF_USER, PF_LIFECYCLE,
	PF_ALLOC_CALLS, PF_ALLOC_BYTES, PF_ALLOC_USABLE, PF_ALLOC_FREES,
	PF_ALLOC_FREED, PF_ALLOC_TEMP, PF_ALLOC_PEAK, PF_CRASHES, PF_N,
	PF_NAMESET = PF_N /* the set of a process's user names, not rendered */
};

/* Histogram buckets: metrics.c's bound_ns, metrics_out.c's le_txt. */
#define NB 22

/* ---- data ---------------------------------------------------------------- */

struct series {
	int fam, rk;       /* key: family, ring (-1: aggregated) */
	unsigned id;       /* key: kind or runtime id */
	char *name;        /* key: name (NULL for unnamed families) */
	char *labels;      /* rendered: ",name=\"x\"..." after pid and exe */
	size_t nlabels;    /* its length */
	uint64_t v;        /* counter, or gauge (u64 bits) */
	int64_t last;      /* PF_INT */
	uint64_t count, sum_ns;
	uint64_t *b;       /* PF_PHASE, PF_PAUSE, PF_SPAN: NB + 1 buckets */
	uint64_t created_ms; /* wall clock when it was made: OpenMetrics' _created */
};

struct vec {
	struct series **v;
	size_t n, cap;
};

/* A label set (exe, the --label pairs, pid with --per-process) and its
 * series; or a file's private one until its exe is known (`pending`). */
struct proc {
	long pid;                    /* -1 unless --per-process */
	char *exe;                   /* the key: the exe label's value */
	char *labels;                /* k="v",...,exe="x"[,pid="1"] */
	size_t nlabels;              /* its length */
	struct series **tab;         /* open addressing, power of two */
	size_t tabcap, nser;
	struct vec fam[PF_N];
	unsigned nnames;
	int limited;                 /* some name went to "other" */
	int oom, pending;
	uint64_t nlive;              /* its files still read */
	uint64_t started, ended;     /* its files taken up, finished */
	uint64_t created_ms;
};

#define CACHE 512
#define RECENT 256 /* exes of files freed, for their fork children */

/* What fast_run() adds to for user event id: the span histogram, the int
 * gauge, and the PF_USER counter of the id's kind. */
struct fast_user {
	const char *name; /* the cursor's, for rd_spans_begin() */
	struct series *span, *ival, *count;
};

/* Per ring of a file. */
struct ring {
	uint64_t last_ts;  /* of its last event: where a loss is placed */
	int dead;          /* failed: not read again */
	int used;          /* written to once: read on every poll */
	uint64_t lost_done; /* its thread's lost_words (procs.c) already
	                       added to rte_lost_words_total (--per-thread) */
};

struct centry {
	int fam, rk;
	unsigned id;
	struct series *s;
};

struct file {
	char *path;
	rte_cursor *c;
	struct ring *rings;
	struct rd_procs procs;
	struct proc *proc;   /* its label set, or its own pending one */
	long pid;
	char *exe;           /* the executable: rte.module's, else /proc's */
	int exe_known;       /* `exe` came from rte.module (or the parent's) */
	long fork_ppid;      /* a fork child's parent (its rte.proc), else 0 */
	int resolved;        /* proc is the label set's, not pending */
	int read_any;        /* some event (or loss) was read */
	int done, failed;
	int gone;            /* its writer was found gone (for good): every
	                      * ring is read, and the file is finished once
	                      * read to its end, not at the next liveness
	                      * check */
	unsigned next_ring; /* where the pass the budget stopped goes on */
	struct series *by_kind[RTE_EV_KIND_COUNT]; /* rte_events_total, no ring */
	struct centry cache[CACHE];
	/* The fast path's series (fast_run), aggregated ones only: set by
	 * account() when the general path has found them, NULL until then. */
	struct fast_user *fu;  /* by user event id, grown to the highest */
	size_t nfu;            /* id seen + 1 */
	struct series *phase[RTE_P_COUNT], *pause, *phase_time;
	struct series *ctr[RTE_C_COUNT], *ctr_acc[RTE_C_COUNT];
	const char *phase_name[RTE_P_COUNT]; /* as decoded (may be NULL) */
	unsigned char phase_seen[RTE_P_COUNT]; /* phase_name is known */
	/* Figures the summary shows too, taken from the one rule that
	 * computes them for both (issue 23): the lost words are procs.c's
	 * (rd_proc.lost_words, of which lost_done were added to the label
	 * set), the heap's peak heap.h's rd_heap_peak_fold(). */
	uint64_t lost_done;
	struct rd_heap_peak peak;
};

struct rd_prom {
	struct rd_prom_opts o;
	struct file **f;
	size_t nf, fcap;
	struct proc **p;
	size_t np, pcap;
	uint64_t events_read, bytes_read, errors, scrapes, scrape_ns;
	uint64_t files_total;
	int sets_warned;            /* the max_sets warning was given */
	struct { long pid; char exe[64]; } recent[RECENT]; /* of freed files */
	unsigned nrecent;
	char *ulabels;              /* the --label pairs, rendered, with a ',' */
	size_t last_len;            /* of the last exposition: room made at once */
	unsigned char first_ge[64]; /* bucket_of()'s table */
	void (*between)(void *);    /* rd_prom_between() */
	void *between_ud;
};
/* ---- between the files ---------------------------------------------------- */

/* metrics_out.c: the output buffer's label values and signed integers. */
void rd_buf_i64(struct rd_buf *b, int64_t v);
void rd_buf_label(struct rd_buf *b, const char *s);

/* metrics_series.c: series by key, and the names of user events. */
void rd_prom_series_free(struct series *s);
struct series *rd_prom_series_get(struct proc *P, int fam, int rk, unsigned id,
                                  const char *name);
const char *rd_prom_user_name(struct rd_prom *p, struct proc *P, const char *name);

/* metrics_series.c: what src's series add to dst's (a file's pending
 * label set merged into its own). */
void rd_prom_merge(struct rd_prom *p, struct proc *dst, const struct proc *src);
uint64_t rd_prom_now_ms(void);

/* metrics_files.c: a file's exe from its process's first rte.module, or
 * its fork parent's (rte.proc): custom event ev while it is not known. */
void rd_prom_exe_from(struct file *f, const struct rte_event *ev);

/* metrics.c: the accounting and the reading of a file's rings. */
void rd_prom_bucket_table(unsigned char first_ge[64]);
/* metrics_series.c: ring words of an event's message (for
 * rte_exporter_read_bytes_total); the family of an rte.alloc.* int
 * (heap.h's rule), -1 for the others. */
uint64_t rd_prom_event_words(const struct rte_event *ev);
int rd_prom_alloc_fam(const char *name);
int rd_prom_read_file(struct rd_prom *p, struct file *f, size_t budget,
                      int all_rings);

#endif
