/*
 * maps.h - reading /proc/PID/maps line by line with stale.h's rule of one
 * line (rte_maps_line): the one loop that rte-read (reader/liveness.c)
 * and rte-run-exec (tools/rte-run/alive.c) use to find a ring file's
 * mapping. Uses stdio, so not for librte.so (stale.c is what it links).
 *
 * Thread-safety: thread-safe, keeps no state.
 */
#ifndef RTE_MAPS_H
#define RTE_MAPS_H

#include "stale.h"

/* Called for each line of a maps file that rte_maps_line parses (kind is
 * its answer, 0 or 1); a nonzero return stops the scan with that value. */
typedef int (*rte_maps_fn)(void *arg, int kind, unsigned long long lo,
                           unsigned long long hi, const struct rte_maps_file *id);

/* Scan /proc/PID/maps (pid 0: /proc/self/maps), calling fn on each line.
 * Returns the value that stopped it, 0 if none did, RTE_MAPS_NOFILE if
 * the file cannot be opened (errno says why), RTE_MAPS_IOERR if reading
 * failed before fn stopped it. fn must not return those two values. */
#define RTE_MAPS_NOFILE (-1000)
#define RTE_MAPS_IOERR  (-1001)
int rte_maps_scan(long pid, rte_maps_fn fn, void *arg);

/* The device and inode that maps shows for the file open as fd (maps and
 * stat() may differ: liveness.h), found by mapping its first page here
 * for a moment. Returns 0, or -1 if the file cannot be mapped or its
 * mapping is not found (*id then unchanged). */
int rte_maps_id_of_fd(int fd, struct rte_maps_file *id);

#endif
