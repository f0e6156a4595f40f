/*
 * clean.h - rte-read --clean: remove what killed processes left in a
 * directory of ring files.
 *
 * Removed, and only these names:
 *   <pid>.events, <pid>.exec<N>.events  a ring file without ring_stop whose
 *                                       writer is gone (rd_writer_alive)
 *   .<pid>.events.exec                  the shim's hidden pre-exec name,
 *                                       once process pid is gone
 *   .<pid>.<8 hex>.events.tmp           a file the shim was still making,
 *                                       once process pid is gone
 * Never removed: any other name, anything but a regular file, a file that
 * does not open as a ring file, a ring file with ring_stop (finished,
 * preserved), a ring file whose writer is alive or a ring we cannot read
 * to the end. "Gone" for a pid also covers a pid now used by a process
 * that started after the file last changed: common/format/stale.h's rule,
 * which librte.so's sweep at start (shim/sweep.h) applies too.
 */
#ifndef RD_CLEAN_H
#define RD_CLEAN_H

/*
 * Clean directory `dir`; with dry_run only list. Prints one line per file
 * removed ("removed PATH: why"; "would remove" with dry_run) on standard
 * output and one line per failure on stderr. Returns 0, 2 if the directory
 * cannot be read or a file cannot be removed, 5 if standard output cannot
 * be written (rte-read's exit codes).
 */
int rd_clean(const char *dir, int dry_run);

#endif
