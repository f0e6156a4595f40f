/*
 * pack.c - a capture packed (pack.h): the extents of data listed with
 * SEEK_DATA/SEEK_HOLE, each compressed as one zstd frame (streamed in
 * CHUNK pieces), the frames written after the room for the header and
 * records, which are written last; the file is kept only if it pays.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "pack.h"
#include "packed.h"

#define CHUNK (1u << 20)
#define PAGE 4096u
#define LEVEL 1 /* as small as level 3 for events (1.8 B a span event), faster */

struct ext { uint64_t off, len, zlen; };

/* The data extents of fd (size bytes), at most RTE_PACK_MAX_EXTENTS.
 * Returns their number, or -1 (errno set; E2BIG: too many). */
static long extents(int fd, uint64_t size, struct ext **out)
{
	struct ext *e = NULL;
	size_t n = 0, cap = 0;
	off_t at = 0;

	while ((uint64_t)at < size) {
		off_t d = lseek(fd, at, SEEK_DATA), h;

		if (d < 0 && errno == ENXIO)
			break;
		if (d < 0 || (h = lseek(fd, d, SEEK_HOLE)) < 0)
			return free(e), -1;
		if (n == cap) {
			struct ext *m;

			cap = cap ? 2 * cap : 64;
			if (cap > RTE_PACK_MAX_EXTENTS || !(m = realloc(e, cap * sizeof *e)))
				return free(e), errno = cap > RTE_PACK_MAX_EXTENTS ? E2BIG : ENOMEM, -1;
			e = m;
		}
		e[n++] = (struct ext){ (uint64_t)d, (uint64_t)(h - d), 0 };
		at = h;
	}
	*out = e;
	return (long)n;
}

int pwrite_all(int fd, const void *p, size_t n, off_t off)
{
	const char *c = p;

	while (n) {
		ssize_t w = pwrite(fd, c, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return errno = w < 0 ? errno : EIO, -1;
		c += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

static int write_all(int fd, const void *b, size_t n)
{
	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return errno = w < 0 ? errno : EIO, -1;
		b = (const char *)b + w;
		n -= (size_t)w;
	}
	return 0;
}

/* Extent x of src compressed into dst at its current offset. */
static int pack_extent(ZSTD_CCtx *cc, int src, int dst, struct ext *x, char *in, char *out,
                       size_t outcap)
{
	uint64_t done = 0;

	ZSTD_CCtx_reset(cc, ZSTD_reset_session_only);
	ZSTD_CCtx_setPledgedSrcSize(cc, x->len);
	x->zlen = 0;
	for (;;) {
		size_t n = x->len - done < CHUNK ? (size_t)(x->len - done) : CHUNK, left;
		ssize_t r = n ? pread(src, in, n, (off_t)(x->off + done)) : 0;
		ZSTD_inBuffer ib = { in, n, 0 };
		int last;

		if (r < 0 || (size_t)r != n)
			return errno = r < 0 ? errno : EIO, -1;
		done += n;
		last = done == x->len;
		do {
			ZSTD_outBuffer ob = { out, outcap, 0 };

			left = ZSTD_compressStream2(cc, &ob, &ib, last ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left))
				return errno = EIO, -1;
			if (write_all(dst, out, ob.pos) < 0)
				return -1;
			x->zlen += ob.pos;
		} while (last ? left != 0 : ib.pos < ib.size);
		if (last)
			return 0;
	}
}

struct packer {
	ZSTD_CCtx *cc;
	char *in, *out;
	size_t outcap;
};

struct packer *packer_new(void)
{
	struct packer *p = calloc(1, sizeof *p);

	if (!p)
		return NULL;
	p->outcap = ZSTD_CStreamOutSize();
	p->cc = ZSTD_createCCtx();
	p->in = malloc(CHUNK);
	p->out = malloc(p->outcap);
	if (!p->cc || !p->in || !p->out) {
		packer_free(p);
		return NULL;
	}
	ZSTD_CCtx_setParameter(p->cc, ZSTD_c_compressionLevel, LEVEL);
	ZSTD_CCtx_setParameter(p->cc, ZSTD_c_checksumFlag, 1);
	return p;
}

void packer_free(struct packer *p)
{
	if (!p)
		return;
	ZSTD_freeCCtx(p->cc);
	free(p->in);
	free(p->out);
	free(p);
}

int pack_capture(struct packer *p, int dfd, const char *from, const char *to, char *err,
                 size_t errlen)
{
	int src = -1, dst = -1, rc = -1;
	struct ext *e = NULL;
	struct stat st, zst;
	long n;

	src = openat(dfd, from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) < 0) {
		snprintf(err, errlen, "%s: %s", from, strerror(errno));
		goto done;
	}
	n = extents(src, (uint64_t)st.st_size, &e);
	if (n < 0) {
		snprintf(err, errlen, "%s: listing its extents: %s", from, strerror(errno));
		goto done;
	}
	if (!p || n == 0) {
		snprintf(err, errlen, "%s", n ? "out of memory" : "no data");
		goto done;
	}
	dst = openat(dfd, to, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (dst < 0) {
		snprintf(err, errlen, "%s: %s", to, strerror(errno));
		goto done;
	}
	{
		uint64_t head = (RTE_PACK_HEADER_WORDS + RTE_PACK_RECORD_WORDS * (uint64_t)n) * 8;
		uint64_t h[RTE_PACK_HEADER_WORDS] = { 0, (uint64_t)st.st_size, (uint64_t)n, 0 };
		uint64_t *rec = calloc((size_t)n, RTE_PACK_RECORD_WORDS * 8);

		if (!rec || lseek(dst, (off_t)head, SEEK_SET) < 0) {
			snprintf(err, errlen, "%s: %s", to, rec ? strerror(errno) : "out of memory");
			free(rec);
			goto done;
		}
		for (long i = 0; i < n; i++)
			if (pack_extent(p->cc, src, dst, &e[i], p->in, p->out, p->outcap) < 0) {
				snprintf(err, errlen, "%s: %s", to, strerror(errno));
				free(rec);
				goto done;
			}
		memcpy(h, RTE_PACK_MAGIC, 8);
		for (long i = 0; i < n; i++) {
			rec[3 * i] = e[i].off;
			rec[3 * i + 1] = e[i].len;
			rec[3 * i + 2] = e[i].zlen;
		}
		if (pwrite(dst, h, sizeof h, 0) != (ssize_t)sizeof h ||
		    pwrite(dst, rec, (size_t)n * RTE_PACK_RECORD_WORDS * 8, sizeof h) !=
		            (ssize_t)((size_t)n * RTE_PACK_RECORD_WORDS * 8)) {
			snprintf(err, errlen, "%s: %s", to, strerror(errno ? errno : EIO));
			free(rec);
			goto done;
		}
		free(rec);
	}
	if (fstat(dst, &zst) < 0 || close(dst) < 0) {
		dst = -1;
		snprintf(err, errlen, "%s: %s", to, strerror(errno));
		goto done;
	}
	dst = -1;
	if ((uint64_t)zst.st_blocks * 10 >= (uint64_t)st.st_blocks * 9) {
		rc = 0; /* it does not pay */
		goto done;
	}
	if (renameat(dfd, to, dfd, from) < 0) {
		snprintf(err, errlen, "%s: %s", to, strerror(errno));
		goto done;
	}
	rc = 1;
done:
	if (dst >= 0)
		close(dst);
	if (rc != 1)
		unlinkat(dfd, to, 0);
	if (src >= 0)
		close(src);
	free(e);
	return rc;
}

/* Pages of the pieces x[0..n) (sorted): the blocks a plain file holding
 * them takes; 0 if they are not sorted or overlap. */
static uint64_t piece_pages(const struct pack_piece *x, size_t n, uint64_t total)
{
	uint64_t pages = 0, next = 0; /* the first page not yet counted */

	for (size_t i = 0; i < n; i++) {
		uint64_t lo = x[i].off / PAGE, hi = (x[i].off + x[i].len + PAGE - 1) / PAGE;

		if (!x[i].len || (i && x[i].off < x[i - 1].off + x[i - 1].len) ||
		    x[i].off + x[i].len > total)
			return 0;
		if (lo < next)
			lo = next;
		if (hi > lo)
			pages += hi - lo;
		if (hi > next)
			next = hi;
	}
	return pages;
}

/* The end of the extent that starts at piece i: the first piece j > i
 * a page or more after piece j - 1 (n if none). Pieces closer than a page
 * share an extent, the zeros between them in it, as SEEK_DATA's would. */
static size_t run_end(const struct pack_piece *x, size_t n, size_t i)
{
	size_t j = i + 1;

	while (j < n && x[j].off - (x[j - 1].off + x[j - 1].len) < PAGE)
		j++;
	return j;
}

/* n bytes of data streamed into the frame being made at buf + *at (of
 * cap bytes; *at advanced), the frame ended if last. Returns 0, or -1 if
 * zstd fails or the room runs out. */
static int stream(ZSTD_CCtx *cc, const void *data, size_t n, int last, char *buf,
                  size_t cap, size_t *at)
{
	ZSTD_inBuffer ib = { data, n, 0 };
	ZSTD_EndDirective end = last ? ZSTD_e_end : ZSTD_e_continue;
	size_t left;

	do {
		ZSTD_outBuffer ob = { buf + *at, cap - *at, 0 };

		left = ZSTD_compressStream2(cc, &ob, &ib, end);
		*at += ob.pos;
		if (ZSTD_isError(left) || (left && *at == cap))
			return -1;
	} while (last ? left != 0 : ib.pos < ib.size);
	return 0;
}

int pack_pieces(struct packer *p, const char *to, uint64_t total, const struct pack_piece *x,
                size_t n, char *err, size_t errlen)
{
	static const char zero[PAGE];
	uint64_t pages = piece_pages(x, n, total), *h;
	size_t runs = 0, cap = 0, at, r = 0;
	char *buf = NULL;
	int fd, rc = -1;

	if (!p || !n || !pages)
		return snprintf(err, errlen, "%s", !p ? "out of memory"
		                : n ? "pieces out of order, overlapping or empty" : "no data"), -1;
	for (size_t i = 0, j; i < n; i = j) {
		j = run_end(x, n, i);
		runs++;
		cap += ZSTD_compressBound(x[j - 1].off + x[j - 1].len - x[i].off) + 64;
	}
	if (runs > RTE_PACK_MAX_EXTENTS)
		return snprintf(err, errlen, "too many extents"), -1;
	at = (RTE_PACK_HEADER_WORDS + RTE_PACK_RECORD_WORDS * runs) * 8;
	cap += at;
	if (!(buf = calloc(1, cap)))
		return snprintf(err, errlen, "out of memory"), -1;
	h = (uint64_t *)(void *)buf;
	memcpy(h, RTE_PACK_MAGIC, 8);
	h[1] = total;
	h[2] = runs;
	for (size_t i = 0, j; i < n; i = j) {
		size_t zstart = at;
		uint64_t len;

		j = run_end(x, n, i);
		len = x[j - 1].off + x[j - 1].len - x[i].off;
		ZSTD_CCtx_reset(p->cc, ZSTD_reset_session_only);
		ZSTD_CCtx_setPledgedSrcSize(p->cc, len);
		for (size_t k = i; k < j; k++) {
			size_t gap = k > i ? (size_t)(x[k].off - x[k - 1].off - x[k - 1].len) : 0;

			if ((gap && stream(p->cc, zero, gap, 0, buf, cap, &at) < 0) ||
			    stream(p->cc, x[k].data, x[k].len, k + 1 == j, buf, cap, &at) < 0) {
				snprintf(err, errlen, "compression failed");
				goto done;
			}
		}
		h[RTE_PACK_HEADER_WORDS + 3 * r] = x[i].off;
		h[RTE_PACK_HEADER_WORDS + 3 * r + 1] = len;
		h[RTE_PACK_HEADER_WORDS + 3 * r + 2] = at - zstart;
		r++;
	}
	/* the old rule, packed blocks against plain ones, in pages */
	if (((uint64_t)at + PAGE - 1) / PAGE * 10 >= pages * 9) {
		rc = 0; /* it does not pay */
		goto done;
	}
	fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		goto done;
	}
	{
		int w = write_all(fd, buf, at), e = errno;

		if (close(fd) < 0 && w == 0) {
			w = -1;
			e = errno;
		}
		if (w < 0) {
			snprintf(err, errlen, "%s", strerror(e));
			unlink(to);
			goto done;
		}
	}
	rc = 1;
done:
	free(buf);
	return rc;
}

static int piece_cmp(const void *a, const void *b)
{
	const struct pack_piece *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

int pack_write_pieces(struct packer *p, const char *to, uint64_t total, struct pack_piece *x,
                      size_t n, int *packed, char *err, size_t errlen)
{
	int fd, e = 0;

	qsort(x, n, sizeof *x, piece_cmp);
	*packed = pack_pieces(p, to, total, x, n, err, errlen);
	if (*packed == 1)
		return 0;
	if (*packed < 0)
		*packed = 0; /* err says why; written plain */
	else
		err[0] = '\0';
	fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)total) < 0)
		e = errno;
	for (size_t i = 0; !e && i < n; i++)
		if (pwrite_all(fd, x[i].data, x[i].len, (off_t)x[i].off) < 0)
			e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (e) {
		unlink(to);
		errno = e;
		return -1;
	}
	return 0;
}
