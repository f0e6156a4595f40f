/*
 * proc.h - the process records (proc.c; a leaf): the payloads of rte.proc,
 * rte.exit, rte.reap and rte.spawn_failed (rte/proc.h) built from what
 * the process knows of itself. The tracer writes them; the hooks note how
 * the process ends.
 *
 * Every function is async-signal-safe and allocates nothing; none writes
 * anything but proc.c's own globals (and the caller's buffer), so none may
 * be called in a vfork child: callers check that they own the process
 * first.
 */
#ifndef RTE_SHIM_PROC_H
#define RTE_SHIM_PROC_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "rte/proc.h"

#pragma GCC visibility push(hidden)

/* The room a start payload needs. */
#define RTE_PROC_PAYLOAD_MAX (sizeof(struct rte_proc_rec) + RTE_PROC_ARGV_MAX)

/* Note the argument vector given to the constructor (the one the image
 * started with; its strings are read again at each file's start). */
void rte_proc_load(int argc, char **argv);
/* Fill buf (RTE_PROC_PAYLOAD_MAX bytes) with the rte.proc payload of the
 * calling process; returns its length. fork_child: made by fork, ppid the
 * forking process; preserve: RTE_PROC_PRESERVE (its file-less fork
 * children are told by its rte.reap). */
size_t rte_proc_start_payload(void *buf, int fork_child, pid_t ppid,
                              int preserve);
/* Fill buf (RTE_PROC_PAYLOAD_MAX bytes) with the rte.spawn_failed
 * payload of a spawn of argv that failed with err; returns its length. */
size_t rte_proc_spawn_fail_payload(void *buf, int err, char *const argv[]);
/* 1 if the argv is what the last rte.proc written said (a fork child: its
 * parent's, whose memory it copied; a program may rewrite its argv in
 * place). Reads only this process's memory; async-signal-safe. */
int rte_proc_argv_as_written(void);
/* How the process is ending: RTE_EXIT_STATUS with the status (the low 8
 * bits are kept) or RTE_EXIT_SIGNAL with the signal. The last note wins. */
void rte_proc_note_exit(int how, int value);
/* The rte.exit record of the calling process: the noted end, its pid and
 * getrusage(RUSAGE_SELF). */
void rte_proc_exit_rec(struct rte_exit_rec *r);
/* The rte.reap record of a child that a wait reaped: its pid, its wait
 * status, its usage (NULL: unknown). */
void rte_proc_reap_rec(struct rte_exit_rec *r, pid_t pid, int status,
                       const struct rusage *ru);

#pragma GCC visibility pop

#endif
