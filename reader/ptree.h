/*
 * ptree.h - the process tree of a run (issue 24): one place that knows,
 * for every process of a trace, its parent, command line, end (exit
 * status or signal), CPU, peak RSS, wall time and lost words, and its
 * children however they were made.
 *
 * Collected from the events rd_procs_update() sees (before any filter):
 * per file, its rte.proc (parent, argv), rte.exit (its own end and
 * usage), rte.reap (a child it reaped: the child's end and usage, the
 * only record of a SIGKILLed or untraced child), rte.spawn and
 * fork_parent (a child's pid), rte.spawn_failed (a spawn that made no
 * process the program could see: a node of pid 0, its parent the file's
 * process), ring_start/ring_stop (times), and whether
 * it wrote events of its own (user events, not rte.*; runtime phases;
 * rte.sample, rte.alloc.*, rte.crash*). rd_ptree_build() then
 * makes the processes: the files of one pid in time order, a new process
 * when a pid comes back after an end (a reused pid) or a fork child file
 * follows; each process's parent is the process of its ppid alive when
 * it began (so a reused pid never gets the wrong parent); a reaped child
 * no file speaks of is a process of its own ("reaped only").
 *
 * Renderers (fmt/summary*.c, fmt/chrome*.c) read the built tree and
 * count nothing. Not thread-safe. Every payload is hostile input: argv
 * is kept as bytes (NUL-separated, at most RTE_PROC_ARGV_MAX) and escaped
 * when shown.
 */
#ifndef RD_PTREE_H
#define RD_PTREE_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

struct rd_procs;
struct rd_item;

/* One process of the tree. */
struct rd_ptnode {
	long pid, ppid;          /* ppid -1: unknown */
	int parent;              /* index of its parent node, -1: a root */
	int first_child, next_sibling; /* -1: none */
	char *argv;              /* NUL-separated bytes of the last image's
	                            argv, NULL if unknown */
	uint32_t argv_len, argc;
	int argv_cut;            /* the vector was cut (RTE_PROC_ARGV_CUT) */
	int how;                 /* enum rte_exit_how: 0 unknown */
	int value;               /* exit status or signal */
	int core;                /* a core was dumped (from a reap) */
	int usage;               /* the CPU and RSS figures are known */
	uint64_t utime_ns, stime_ns, maxrss_kib;
	uint64_t start_ts, end_ts; /* 0: unknown */
	uint64_t lost_words;
	int user_events;         /* it wrote events of its own (not rte.*),
	                            runtime phases, profile samples, allocation
	                            records or a crash: its detail block shows */
	int reaped_only;         /* no file of its own: known from its
	                            parent's rte.reap */
	int forked_only;         /* no file of its own: a fork child its
	                            parent's file forked (argv: the parent
	                            image's; start: the fork) */
	int reaped;              /* an rte.reap of its parent named it */
	int failed;              /* exit status != 0, or a signal but SIGPIPE */
	int spawn_err;           /* a posix_spawn (or system()) of this argv
	                            that failed with this error number: no
	                            pid (0), no file, no end of its own; its
	                            parent's rte.spawn_failed (failed 1) */
	int crashed;             /* killed by a signal whose default action
	                            dumps core (SIGSEGV, SIGABRT, ...) or by
	                            SIGKILL (the OOM killer, a timeout) */
	unsigned nsrc;           /* its files */
	unsigned first_src;      /* the first of them (source index) */
};

struct rd_ptree {
	struct rd_ptnode *n;      /* by pid then start; the reaped-only ones */
	unsigned nn, nfile;       /* after the first nfile (with files) */
	unsigned nspawn;          /* of the nn, spawns that failed (no process) */
	size_t cap;
	int built;
	int oom;
	/* collection, per source (ptree.c) */
	struct pt_file *f;
	unsigned nf;
	size_t fcap;
};

/* What --by exe asks of the summary (options.c sets it; --all, every
 * process's detail block instead of the tree, is rd_filter.all). */
struct rd_ptree_opts {
	int by_exe; /* --by exe: a table per executable */
};
extern struct rd_ptree_opts rd_ptree_opts;

/* The tree of P, created on first use (NULL if out of memory). */
struct rd_ptree *rd_ptree_of(struct rd_procs *P);
/* Note one event (from rd_procs_update(), every event). */
void rd_ptree_note(struct rd_procs *P, const struct rd_item *it);
/* Build (once; later calls return the same tree) after the events. */
struct rd_ptree *rd_ptree_build(struct rd_procs *P);
void rd_ptree_free(struct rd_ptree *T);

/* The node index of pid's last process, or -1. */
int rd_ptree_find(const struct rd_ptree *T, long pid);
/* Wall time of node x (0 if unknown). */
uint64_t rd_ptree_wall(const struct rd_ptnode *x);
/* "SIGKILL", or "SIG34" for an unknown number (into buf). */
const char *rd_ptree_signame(int sig, char *buf, unsigned len);
/* "ENOENT", or "E1234" for an unknown number (into buf). */
const char *rd_ptree_errname(int err, char *buf, unsigned len);
/* The basename of argv[0] into buf, escaped ("?" if unknown). */
const char *rd_ptree_exe(const struct rd_ptnode *x, char *buf, unsigned len);
/* The command line of x, escaped (control and non-UTF-8 bytes as \xNN,
 * arguments with spaces quoted), at most `width` bytes, "…" when cut
 * (or argv_cut). Into buf of len > width + 8. */
const char *rd_ptree_cmdline(const struct rd_ptnode *x, char *buf,
                             unsigned len, unsigned width);
/* JSON fields of x: "pid":.. (null for a failed spawn),"ppid":..,
 * "argv":[..],"argv_cut":..,"exit":{..},"cpu_user_ns":..,"cpu_sys_ns":..,
 * "max_rss_kib":.. (null when unknown), ...,"spawn_failed":{"errno":..,
 * "error":".."} or null. */
void rd_ptree_json_fields(struct rd_out *o, const struct rd_ptnode *x);

#endif
