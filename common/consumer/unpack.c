/*
 * unpack.c - a packed capture (packed.h, doc/FORMAT.md "16.1") opened as
 * the ring file it holds: an anonymous private mapping of the ring
 * file's size (its pages cost nothing until written), each extent
 * decompressed into place; the rest of the library then reads the
 * mapping as it reads a mapped ring file. Every field is checked before
 * it is used: the file is hostile input like any other. total_size is
 * checked against the ring file's own header, decompressed from the
 * first frame alone, before a mapping of that size is asked for: a word
 * set wrong is a corrupt file, never a failure to allocate.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "cursor.h"
#include "packed.h"

int consumer_is_packed(const void *first8)
{
	return !memcmp(first8, RTE_PACK_MAGIC, 8);
}

/* Exactly n bytes at off, or -1. */
static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

#define BAD(...) (snprintf(why, wlen, __VA_ARGS__), RTE_EHEADER)

/* The first 64 bytes frame z (zl bytes) decompresses to, into w: the
 * ring file's header. Streamed into 64 bytes, so a frame that claims
 * gigabytes costs nothing here. 0, or -1 if the frame is bad or shorter. */
static int peek_header(ZSTD_DCtx *dc, const void *z, size_t zl,
                       uint64_t w[RTE_METADATA_WORDS])
{
	ZSTD_inBuffer in = { z, zl, 0 };
	ZSTD_outBuffer out = { w, RTE_METADATA_BYTES, 0 };
	int rc = 0;

	while (out.pos < out.size) {
		size_t ip = in.pos, op = out.pos, r = ZSTD_decompressStream(dc, &out, &in);

		if (ZSTD_isError(r) || (out.pos < out.size &&
		                        (r == 0 || (in.pos == ip && out.pos == op)))) {
			rc = -1; /* an error, the frame's end, or no progress */
			break;
		}
	}
	ZSTD_DCtx_reset(dc, ZSTD_reset_session_only); /* for the frames after */
	return rc;
}

/* The ring file's header from extent 0 (its frame read into z), checked
 * as a ring file's is and against the total the packing says, into *l. */
static int check_header(ZSTD_DCtx *dc, const void *z, size_t zl, uint64_t total,
                        struct rte_layout *l, char *why, size_t wlen)
{
	uint64_t w[RTE_METADATA_WORDS];
	char inner[200];
	int err;

	if (peek_header(dc, z, zl, w) < 0)
		return BAD("packed capture: extent 0 does not decompress to a ring file header");
	err = consumer_validate_header(w, total, l, inner, sizeof inner);
	if (err) {
		snprintf(why, wlen, "packed capture of %llu bytes: its ring file: %s",
		         (unsigned long long)total, inner);
		return err;
	}
	if (l->total_size != total)
		return BAD("packed capture of %llu bytes holds a ring file of %llu",
		           (unsigned long long)total, (unsigned long long)l->total_size);
	return RTE_OK;
}

int consumer_unpack(int fd, uint64_t file_size, const unsigned char **base,
                    uint64_t *size, struct rte_layout *l, char *why, size_t wlen)
{
	uint64_t h[RTE_PACK_HEADER_WORDS], *rec = NULL, at, total;
	unsigned char *map = MAP_FAILED, *z = NULL;
	size_t zcap = 0;
	ZSTD_DCtx *dc = NULL;
	int err = RTE_OK;

	*base = NULL;
	if (file_size < sizeof h || read_at(fd, h, sizeof h, 0) < 0)
		return BAD("packed capture: header cut short");
	total = h[1];
	if (h[2] < 1 || h[2] > RTE_PACK_MAX_EXTENTS || h[3] != 0 || total == 0 ||
	    total > (uint64_t)SIZE_MAX / 2)
		return BAD("packed capture: bad header (%llu extents, %llu bytes)",
		           (unsigned long long)h[2], (unsigned long long)total);
	if (total > RTE_PACK_MAX_TOTAL)
		return BAD("packed capture: total_size %llu bytes, more than a capture can be (%llu)",
		           (unsigned long long)total, (unsigned long long)RTE_PACK_MAX_TOTAL);
	at = sizeof h + h[2] * RTE_PACK_RECORD_WORDS * 8;
	if (at > file_size)
		return BAD("packed capture: %llu extents do not fit in %llu bytes",
		           (unsigned long long)h[2], (unsigned long long)file_size);
	rec = malloc(h[2] * RTE_PACK_RECORD_WORDS * 8);
	dc = ZSTD_createDCtx();
	if (!rec || !dc) {
		err = RTE_ENOMEM;
		snprintf(why, wlen, "out of memory");
		goto done;
	}
	if (read_at(fd, rec, h[2] * RTE_PACK_RECORD_WORDS * 8, sizeof h) < 0) {
		err = BAD("packed capture: extents cut short");
		goto done;
	}
	/* Extent 0 holds the ring file's header: its frame read (once: the
	 * loop below decompresses it from z) and the header checked. */
	if (rec[0] != 0 || rec[1] < RTE_METADATA_BYTES || rec[1] > total || rec[2] == 0 ||
	    rec[2] > file_size - at) {
		err = BAD("packed capture: extent 0 does not hold the ring file's header");
		goto done;
	}
	zcap = (size_t)rec[2];
	if (!(z = malloc(zcap))) {
		err = RTE_ENOMEM;
		snprintf(why, wlen, "out of memory");
		goto done;
	}
	if (read_at(fd, z, zcap, at) < 0) {
		err = BAD("packed capture: extent 0 cut short");
		goto done;
	}
	if ((err = check_header(dc, z, zcap, total, l, why, wlen)))
		goto done;
	map = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE,
	           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED) {
		err = errno == ENOMEM ? RTE_ENOMEM : RTE_EIO;
		snprintf(why, wlen, "packed capture: mmap of %llu bytes: %s",
		         (unsigned long long)total, strerror(errno));
		goto done;
	}
	for (uint64_t i = 0, end = 0; i < h[2]; i++) {
		uint64_t off = rec[3 * i], len = rec[3 * i + 1], zl = rec[3 * i + 2];
		size_t got;

		if (len == 0 || zl == 0 || off < end || off > total || len > total - off ||
		    zl > file_size - at) {
			err = BAD("packed capture: extent %llu out of bounds", (unsigned long long)i);
			goto done;
		}
		end = off + len;
		if (zl > zcap) {
			free(z);
			zcap = (size_t)zl;
			if (!(z = malloc(zcap))) {
				err = RTE_ENOMEM;
				snprintf(why, wlen, "out of memory");
				goto done;
			}
		}
		if (i > 0 && read_at(fd, z, (size_t)zl, at) < 0) {
			err = BAD("packed capture: extent %llu cut short", (unsigned long long)i);
			goto done;
		}
		got = ZSTD_decompressDCtx(dc, map + off, (size_t)len, z, (size_t)zl);
		if (ZSTD_isError(got) || got != len) {
			err = BAD("packed capture: extent %llu: %s", (unsigned long long)i,
			          ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong length");
			goto done;
		}
		at += zl;
	}
	if (at != file_size) {
		err = BAD("packed capture: %llu bytes after the last extent",
		          (unsigned long long)(file_size - at));
		goto done;
	}
	mprotect(map, (size_t)total, PROT_READ); /* read-only from here: a hint */
	*base = map;
	*size = total;
	map = MAP_FAILED;
done:
	if (map != MAP_FAILED)
		munmap(map, (size_t)total);
	ZSTD_freeDCtx(dc);
	free(rec);
	free(z);
	return err;
}
