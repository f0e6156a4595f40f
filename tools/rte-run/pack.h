/*
 * pack.h - a capture packed (doc/FORMAT.md, "16.1 Packed captures";
 * common/format/packed.h): its data extents (SEEK_DATA/SEEK_HOLE) each
 * compressed into one zstd frame. The consumer library opens the result
 * as it opens the ring file. A packer (its compression context and
 * buffers, made once and used for every capture) is used by one thread
 * at a time; no global state.
 */
#ifndef RTE_RUN_PACK_H
#define RTE_RUN_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct packer;

/* A packer, NULL if out of memory; freed by packer_free (NULL: no-op). */
struct packer *packer_new(void);
void packer_free(struct packer *p);

/*
 * Pack the ring file `from` (in directory dfd) into `to` (new, O_EXCL,
 * mode 0600, in dfd) if the packed file takes less than 9/10 of the
 * disk `from` takes; then `to` replaces `from` (rename). Returns 1 if
 * packed, 0 if it does not pay (`from` kept as it is), -1 on failure
 * with the reason in err (`from` kept as it is, `to` removed).
 */
int pack_capture(struct packer *p, int dfd, const char *from, const char *to, char *err, size_t errlen);

/* One piece of a ring file held in memory: its bytes [off, off + len). */
struct pack_piece {
	uint64_t off;
	size_t len;
	const void *data;
};

/*
 * Pack a ring file of total bytes held in memory as n pieces (in
 * increasing order of offset, not overlapping, not empty; every other
 * byte zero) into `to` (new, O_EXCL, mode 0600), pieces less than a page
 * apart one extent (the zeros between them in it), if that takes less
 * than 9/10 of the pages the pieces touch (the disk the plain file would
 * take, in pages of 4 KiB). Returns 1 if written, 0 if it does not pay
 * (nothing made), -1 on failure with the reason in err (not naming `to`;
 * `to` removed if this made it).
 * The capture of a short-lived writer, whose spool never left memory,
 * is packed so without being written plain first (capture.h).
 */
int pack_pieces(struct packer *p, const char *to, uint64_t total, const struct pack_piece *x,
                size_t n, char *err, size_t errlen);

/*
 * The ring file held as the n pieces x (in any order: sorted here)
 * written to `to` (new, O_EXCL, mode 0600): packed where that pays and p
 * can, else plain (sparse, as a capture written by its file is). Returns
 * 0, or -1 with errno set (`to` removed if made). *packed: 1 if packed;
 * 0 if plain, err then holding why packing failed ("" if it did not pay).
 */
int pack_write_pieces(struct packer *p, const char *to, uint64_t total, struct pack_piece *x,
                      size_t n, int *packed, char *err, size_t errlen);

/* n bytes of p written to fd at off, retried on EINTR and short writes.
 * Returns 0, or -1 with errno set (EIO if nothing could be written). */
int pwrite_all(int fd, const void *p, size_t n, off_t off);

#endif
