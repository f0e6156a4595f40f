/*
 * capture.h - what rte-run's drain read from one ring file, kept on disk
 * while the file's writer runs (a spool), then written out as a capture:
 * a ring file of the same format (doc/FORMAT.md, "Captures") whose rings
 * are big enough to hold every word drained, so that rte-read, OCaml's
 * consumer and every tool that reads ring files read it unchanged.
 *
 * The spool is a buffer in memory, and once that is full (1 MiB) a
 * hidden file of records, appended in the order the words were read (a
 * short-lived writer's spool never needs the file):
 *
 *   +----------------------+----------------------------------+
 *   | ring << 32 | nwords  | nwords words: whole messages     |  ... repeated
 *   +----------------------+----------------------------------+
 *
 * cap_finish() then lays each ring's messages out in a fresh file with
 * rings of 2^k words, k the smallest that holds the ring's drained words
 * plus one padding message (written sparse: the unused part of every
 * ring costs no disk), head = the words the drain lost on that ring (a
 * consumer starting at 0 reports exactly those as lost, at the ring's
 * start), and the source file's name slots; it punches each spool record
 * out as it is copied, so the two together never take much more than the
 * capture's size.
 *
 * Not thread-safe: a spool belongs to one thread (the drain's).
 */
#ifndef RTE_RUN_CAPTURE_H
#define RTE_RUN_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

struct cap_spool;

/* A new spool for a source of `rings` rings, its file at path (created
 * O_EXCL, mode 0600, when the buffer first fills). Returns NULL (errno
 * set) on failure. */
struct cap_spool *cap_open(const char *path, unsigned rings);

/*
 * Append n words of `ring` (whole messages, as rte_cursor_next_words()
 * returns them). Buffered. If the spool cannot take them (a full disk),
 * they are counted as lost on that ring and the first error is kept
 * (cap_error). Returns 0, or -1 if they were lost.
 */
int cap_append(struct cap_spool *s, unsigned ring, const uint64_t *w, size_t n);

/* Write what is buffered if the spool has its file (a failure: those
 * words counted as lost, the error kept); a spool all in memory stays
 * there. Returns 0 or -1. */
int cap_flush(struct cap_spool *s);

/* Count words lost on `ring` (the source's producer overwrote them
 * before the drain read them). */
void cap_lost(struct cap_spool *s, unsigned ring, uint64_t words);

/* Totals so far: words kept, words lost (over every ring). */
uint64_t cap_words(const struct cap_spool *s);
uint64_t cap_lost_words(const struct cap_spool *s);

/* The first write error met ("" if none). */
const char *cap_error(const struct cap_spool *s);

/*
 * Write the capture to out (a new file, O_EXCL, mode 0600), the name
 * slots copied from the source file open on src_fd (its custom events
 * offset names_off, as its header says). The spool's file is removed in
 * every case. Returns 0, or -1 with the reason in err (also when the
 * spool's file could not be made: the caller keeps the ring file).
 *
 * pk: a packer (pack.h), or NULL. With one, a spool that never needed
 * its file (a short-lived writer's, the common case) becomes a capture
 * in memory, written packed where that pays (pack_pieces) and plain
 * where it does not: the plain file is never written and read back.
 * *packed says which: 1 packed; 0 plain, packing tried (on a failure to
 * pack, the capture is plain and err holds why, though 0 is returned);
 * -1 plain, not tried (no packer, or a spool with its file: the caller
 * may pack_capture() it).
 */
struct packer;
int cap_finish(struct cap_spool *s, const char *out, int src_fd, uint64_t names_off,
               struct packer *pk, int *packed, char *err, size_t errlen);

/* Close and remove the spool without writing a capture. NULL is allowed. */
void cap_discard(struct cap_spool *s);

#endif
