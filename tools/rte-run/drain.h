/*
 * drain.h - rte-run's live drain: a thread that follows every ring file
 * of the traced tree as it appears in LIVE (inotify), reads each ring
 * while its writer runs (librteconsumer's cursors, as rte-read --follow
 * does), appends what it read to the file's spool (capture.h), and once
 * the writer is gone and its file read to the end, writes the capture
 * into OUT under the ring file's own name and removes the ring file: the
 * tree's trace then takes the captures' size on disk, and nothing is
 * overwritten before it is read unless a writer outruns the drain (those
 * words are counted, exactly, as the capture's lost words).
 *
 * The writer of a file is gone when no process of the file's pid (its
 * name) maps it writable any more (/proc/PID/maps): the shim keeps its
 * file mapped until the process ends, and an exec'd image, a fork child
 * and a dead process do not map it.
 *
 * drain_start() and drain_stop() are called by one thread (rte-run-exec's
 * main thread); the drain thread blocks every signal, so that the
 * forwarding handlers run in the caller's thread. Not async-signal-safe.
 */
#ifndef RTE_RUN_DRAIN_H
#define RTE_RUN_DRAIN_H

#include <stddef.h>
#include <stdint.h>

struct drain;

/* Start draining LIVE into OUT (both existing directories); pack: pack
 * the captures where it pays (pack.h). Returns NULL with the reason in
 * err on failure (nothing started). */
struct drain *drain_start(const char *out, const char *live, int pack, char *err,
                          size_t errlen);

/* What the drain did, for drain_stop()'s caller. */
struct drain_stats {
	uint64_t files;        /* captures written */
	uint64_t words;        /* words kept in them */
	uint64_t lost;         /* words the drain missed */
	uint64_t bytes;        /* disk the captures take */
	uint64_t packed;       /* captures packed */
	uint64_t errors;       /* files that could not be captured */
};

/*
 * Read what is left in every file, write every capture (also of writers
 * still running: a process that outlives the command is captured up to
 * now), move any file that could not be read into OUT as it is (rte-read
 * then names it), remove LIVE if it is empty, join the thread and free.
 * Stores the totals in *st if not NULL.
 */
void drain_stop(struct drain *d, struct drain_stats *st);

#endif
