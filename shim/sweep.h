/*
 * sweep.h - what processes killed before their end (SIGKILL, the OOM
 * killer) left in the directory, removed at a later traced start
 * (sweep.c). A leaf beside file.c: depends on common/format/stale.h.
 */
#ifndef RTE_SHIM_SWEEP_H
#define RTE_SHIM_SWEEP_H

#include <sys/stat.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* The mode bit of a file that its writer removes at its end (made
 * without PRESERVE): the sweep removes such a file once its writer is
 * gone, and only such a file. */
#define RTE_FILE_MARK S_ISVTX

/* Seconds between two sweeps of one directory (at most one per period). */
#define RTE_SWEEP_PERIOD_S 2

/*
 * Called by rte_file_create() once the new file of process self (owner
 * uid) is published, with the directory open on dfd and its fstat() in
 * *dir (taken anyway to check the directory). Returns at once, without a
 * system call, unless uid owns the directory and its last sweep is
 * RTE_SWEEP_PERIOD_S or more ago (the directory's access time, set to a
 * time with a mark in its nanoseconds by each sweep). Then it stamps the
 * directory and removes, among the files of owner uid:
 *   <pid>.events, <pid>.exec<N>.events  with RTE_FILE_MARK (made without
 *                                       PRESERVE, not kept for a crash)
 *   .<pid>.<8 hex>.events.tmp           a file never finished
 * whose writer is gone by stale.h's rule (as rte-read --clean decides)
 * and that no process maps writable (a writer in another pid namespace).
 * Never a preserved file, a live writer's, another user's or another
 * name. RTE_LOG notes how many were removed. Moves dfd's offset. errno
 * is kept. Signal-safe (no allocation but an anonymous mapping).
 */
void rte_sweep(int dfd, const struct stat *dir, uid_t uid, pid_t self);

#pragma GCC visibility pop

#endif
