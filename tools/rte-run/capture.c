/*
 * capture.c - the drain's spool and the capture it becomes (capture.h;
 * the format: doc/FORMAT.md, "Captures").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "pack.h"
#include "rte/format.h"

#define BUF_WORDS 131072u      /* 1 MiB of spool buffer, at most */
#define BUF_FIRST 8192u        /* ... 64 KiB at first (doubled as needed) */
#define MAX_RECORD 65536u      /* words of one record (next_words: far fewer) */
#define OUT_WORDS 8192u        /* write-combining buffer of one ring */
#define MAX_LOG2 32u           /* rte's consumer takes rings up to 2^32 words */
#define PAGE 4096u
#define PUNCH_BYTES (64u << 10) /* spool given back every this many bytes */

struct cap_spool {
	int fd;
	char *path;
	unsigned rings;
	uint64_t *words;       /* per ring: words kept */
	uint64_t *lost;        /* per ring: words lost */
	uint64_t *buf;         /* records not yet written */
	size_t bufn, bufcap;   /* words in buf, and its room */
	uint64_t size;         /* bytes in the spool file */
	int open_err;          /* its file could not be made: errno */
	char err[256];
};

static void set_err(struct cap_spool *s, const char *fmt, ...)
{
	va_list ap;

	if (s->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
}

struct cap_spool *cap_open(const char *path, unsigned rings)
{
	struct cap_spool *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	s->rings = rings;
	s->path = strdup(path);
	s->words = calloc(rings, sizeof *s->words);
	s->lost = calloc(rings, sizeof *s->lost);
	s->buf = malloc(BUF_FIRST * sizeof *s->buf);
	s->bufcap = BUF_FIRST;
	s->fd = -1;
	if (!s->path || !s->words || !s->lost || !s->buf) {
		free(s->path);
		free(s->words);
		free(s->lost);
		free(s->buf);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* The buffered records could not be written: their words become lost,
 * and the file goes back to its last whole record. */
static void buffer_lost(struct cap_spool *s)
{
	for (size_t at = 0; at < s->bufn;) {
		unsigned ring = (unsigned)(s->buf[at] >> 32);
		uint64_t n = s->buf[at] & 0xffffffffu;

		s->words[ring] -= n;
		s->lost[ring] += n;
		at += 1 + n;
	}
	s->bufn = 0;
	if (ftruncate(s->fd, (off_t)s->size) < 0)
		set_err(s, "cannot truncate the spool: %s", strerror(errno));
}

static int flush(struct cap_spool *s)
{
	size_t bytes = s->bufn * sizeof *s->buf;

	if (!s->bufn)
		return 0;
	if (s->open_err)
		return -1;
	if (s->fd < 0) {
		s->fd = open(s->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (s->fd < 0) {
			/* The buffer stays as it is, and no capture is made:
			 * the ring file is kept instead (cap_finish). */
			s->open_err = errno ? errno : EIO;
			set_err(s, "cannot make the spool: %s", strerror(s->open_err));
			return -1;
		}
	}
	if (pwrite_all(s->fd, s->buf, bytes, (off_t)s->size) < 0) {
		set_err(s, "%s", errno ? strerror(errno) : "short write");
		buffer_lost(s);
		return -1;
	}
	s->size += bytes;
	s->bufn = 0;
	return 0;
}

int cap_append(struct cap_spool *s, unsigned ring, const uint64_t *w, size_t n)
{
	if (!n || ring >= s->rings)
		return 0;
	if (n >= MAX_RECORD) {
		s->lost[ring] += n;
		set_err(s, "a read of %zu words, more than a record holds", n);
		return -1;
	}
	while (s->bufn + 1 + n > s->bufcap && s->bufcap < BUF_WORDS) {
		uint64_t *b = realloc(s->buf, 2 * s->bufcap * sizeof *b);

		if (!b)
			break; /* flushed instead */
		s->buf = b;
		s->bufcap *= 2;
	}
	if (s->bufn + 1 + n > s->bufcap && flush(s) < 0) {
		s->lost[ring] += n; /* the disk refused the last ones: so these */
		return -1;
	}
	s->buf[s->bufn++] = (uint64_t)ring << 32 | n;
	memcpy(s->buf + s->bufn, w, n * sizeof *w);
	s->bufn += n;
	s->words[ring] += n;
	return 0;
}

int cap_flush(struct cap_spool *s)
{
	/* a spool still all in memory has nothing to lose: it stays there
	 * for cap_finish (most of them: a short-lived writer's) */
	return s->fd < 0 ? 0 : flush(s);
}

void cap_lost(struct cap_spool *s, unsigned ring, uint64_t words)
{
	if (ring < s->rings)
		s->lost[ring] += words;
}

uint64_t cap_words(const struct cap_spool *s)
{
	uint64_t t = 0;

	for (unsigned i = 0; i < s->rings; i++)
		t += s->words[i];
	return t;
}

uint64_t cap_lost_words(const struct cap_spool *s)
{
	uint64_t t = 0;

	for (unsigned i = 0; i < s->rings; i++)
		t += s->lost[i];
	return t;
}

const char *cap_error(const struct cap_spool *s)
{
	return s->err;
}

void cap_discard(struct cap_spool *s)
{
	if (!s)
		return;
	if (s->fd >= 0) {
		close(s->fd);
		unlink(s->path);
	}
	free(s->path);
	free(s->words);
	free(s->lost);
	free(s->buf);
	free(s);
}

/* ---- the capture ------------------------------------------------------- */

/* One ring of the capture being written. */
struct out_ring {
	uint64_t pos;          /* counter of the next word */
	uint64_t start;        /* counter of out[0] */
	size_t n;              /* words in out */
	uint64_t *out;
};

struct out {
	int fd;                /* the capture, or -1 while it is in memory */
	uint64_t size, mask;   /* words per ring */
	uint64_t data_off;
	struct out_ring *r;
	int failed;
	int mem;               /* the capture made in memory, as pieces */
	struct pack_piece *pc; /* ... each its own copy of the bytes */
	size_t npc, cappc;
};

/* n bytes at off of the capture: written, or kept as a piece. */
static void out_write(struct out *o, const void *p, size_t n, uint64_t off)
{
	void *c;

	if (o->failed || !n)
		return;
	if (!o->mem) {
		if (pwrite_all(o->fd, p, n, (off_t)off) < 0)
			o->failed = errno ? errno : EIO;
		return;
	}
	if (o->npc == o->cappc) {
		size_t cap = o->cappc ? 2 * o->cappc : 16;
		struct pack_piece *m = realloc(o->pc, cap * sizeof *m);

		if (!m) {
			o->failed = ENOMEM;
			return;
		}
		o->pc = m;
		o->cappc = cap;
	}
	if (!(c = malloc(n))) {
		o->failed = ENOMEM;
		return;
	}
	memcpy(c, p, n);
	o->pc[o->npc++] = (struct pack_piece){ off, n, c };
}

static void out_flush(struct out *o, unsigned i)
{
	struct out_ring *r = &o->r[i];

	if (r->n)
		out_write(o, r->out, r->n * 8,
		          o->data_off + (uint64_t)i * o->size * 8 + (r->start & o->mask) * 8);
	r->n = 0;
}

/* n words (never across the ring's physical end) at ring i's position. */
static int out_put(struct out *o, unsigned i, const uint64_t *w, size_t n)
{
	struct out_ring *r = &o->r[i];

	if (!r->out && !(r->out = malloc(OUT_WORDS * sizeof *r->out)))
		return -1;
	if (r->n && (r->n + n > OUT_WORDS || (r->pos & o->mask) == 0))
		out_flush(o, i);
	if (!r->n)
		r->start = r->pos;
	memcpy(r->out + r->n, w, n * sizeof *w);
	r->n += n;
	r->pos += n;
	return 0;
}

/* One message of ring i: a padding message first if it would straddle
 * the ring's end (doc/FORMAT.md, section 6). */
static int out_message(struct out *o, unsigned i, const uint64_t *m, size_t len)
{
	uint64_t idx = o->r[i].pos & o->mask;

	if (idx + len > o->size) {
		uint64_t pad = (o->size - idx) << RTE_HDR_LEN_SHIFT;

		if (out_put(o, i, &pad, 1) < 0)
			return -1;
		o->r[i].pos += o->size - idx - 1;
		out_flush(o, i);
	}
	return out_put(o, i, m, len);
}

/* 1 if header word h is a padding message (runtime, type 0, id 0). */
static int is_padding(uint64_t h)
{
	return (h & ~((uint64_t)0x3ff << RTE_HDR_LEN_SHIFT)) == 0;
}

/* The n words b of one record of ring `ring` (at byte `at` of the spool,
 * or of its buffer), message by message, into o. Returns 0, or -1 with
 * the reason in err. */
static int copy_record(struct out *o, unsigned ring, const uint64_t *b, uint64_t n,
                       uint64_t at, char *err, size_t errlen)
{
	for (uint64_t k = 0; k < n;) {
		size_t len = rte_hdr_len(b[k]);

		if (len < 1 || len > n - k)
			return snprintf(err, errlen, "the spool is damaged at byte %llu",
			                (unsigned long long)at), -1;
		if (!is_padding(b[k]) && out_message(o, ring, b + k, len) < 0)
			return snprintf(err, errlen, "out of memory"), -1;
		k += len;
	}
	return 0;
}

/* The records still in memory (after those of the file, if any). */
static int copy_buffer(const struct cap_spool *s, struct out *o, char *err, size_t errlen)
{
	for (size_t at = 0; at < s->bufn;) {
		uint64_t h = s->buf[at], n = h & 0xffffffffu;

		if ((h >> 32) >= s->rings || at + 1 + n > s->bufn)
			return snprintf(err, errlen, "the spool's buffer is damaged"), -1;
		if (copy_record(o, (unsigned)(h >> 32), s->buf + at + 1, n,
		                s->size + at * 8, err, errlen) < 0)
			return -1;
		at += 1 + n;
	}
	return 0;
}

/* The spool's records, message by message, into o: its file's (the spool
 * is in a directory the traced command may write to: every record is
 * checked), then its buffer's. Returns 0, or -1 with the reason in err. */
static int copy_records(struct cap_spool *s, struct out *o, char *err, size_t errlen)
{
	uint64_t *b = s->buf, at = 0, punched = 0;

	while (s->fd >= 0 && at < s->size) {
		uint64_t h, n;

		if (pread(s->fd, &h, 8, (off_t)at) != 8)
			return snprintf(err, errlen, "the spool cannot be read"), -1;
		n = h & 0xffffffffu;
		if ((h >> 32) >= s->rings || n >= MAX_RECORD || n > s->bufcap ||
		    at + 8 + n * 8 > s->size ||
		    pread(s->fd, b, n * 8, (off_t)(at + 8)) != (ssize_t)(n * 8))
			return snprintf(err, errlen, "the spool is damaged at byte %llu",
			                (unsigned long long)at), -1;
		if (copy_record(o, (unsigned)(h >> 32), b, n, at, err, errlen) < 0)
			return -1;
		at += 8 + n * 8;
		/* Give the copied part back as we go: at most PUNCH_BYTES of
		 * spool and capture hold the same words, so that a full disk
		 * needs only that much room (drain.c keeps it in reserve). */
		if (at - punched >= PUNCH_BYTES) {
			uint64_t to = at & ~(uint64_t)(PAGE - 1);

			fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)to);
			punched = to;
		}
	}
	return copy_buffer(s, o, err, errlen);
}

/* The source's name slots into the capture, page by page (the empty
 * pages left as holes). The slots of names never registered are most of
 * the 1 MiB and, in a file of tmpfs or of a disk, holes: lseek(SEEK_DATA)
 * skips them (a file system without holes reports it all as data, and
 * every page is then read; an error other than ENXIO, "no data after",
 * reads on page by page). */
static void copy_names(int src_fd, uint64_t names_off, struct out *o, uint64_t to)
{
	static const char zero[PAGE];
	const uint64_t len = (uint64_t)RTE_MAX_USER_EVENTS * RTE_NAME_SLOT_BYTES;
	char page[PAGE];

	for (uint64_t at = 0; src_fd >= 0 && at < len; at += PAGE) {
		off_t data = lseek(src_fd, (off_t)(names_off + at), SEEK_DATA);
		ssize_t got;

		if (data < 0 && errno == ENXIO)
			break;
		if (data > (off_t)(names_off + at)) {
			/* the page holding the first byte of data */
			at = ((uint64_t)data - names_off) & ~(uint64_t)(PAGE - 1);
			if (at >= len)
				break;
		}
		got = pread(src_fd, page, PAGE, (off_t)(names_off + at));
		if (got <= 0)
			break;
		if (memcmp(page, zero, (size_t)got))
			out_write(o, page, (size_t)got, to + at);
	}
}

/* Rings, ring size and offsets of the capture of s. Returns 0, or -1 if a
 * ring holds more than the format's largest ring. */
static int capture_layout(const struct cap_spool *s, struct rte_layout *l)
{
	unsigned used = 0, log2 = RTE_RING_LOG2_MIN;
	uint64_t most = 0;

	for (unsigned i = 0; i < s->rings; i++) {
		if (s->words[i] || s->lost[i])
			used = i + 1;
		if (s->words[i] > most)
			most = s->words[i];
	}
	/* the words, and one padding message where the ring wraps */
	while (log2 <= MAX_LOG2 && ((uint64_t)1 << log2) < most + RTE_MAX_MSG_WORDS)
		log2++;
	if (log2 > MAX_LOG2)
		return -1;
	memset(l, 0, sizeof *l);
	l->version = RTE_FORMAT_VERSION;
	l->max_domains = used ? used : 1;
	l->ring_header_size_bytes = RTE_RING_HEADER_BYTES;
	l->ring_size_elements = (uint64_t)1 << log2;
	l->ring_size_bytes = l->ring_size_elements * 8;
	l->headers_offset = RTE_METADATA_BYTES;
	l->data_offset = l->headers_offset + l->max_domains * RTE_RING_HEADER_BYTES;
	l->custom_events_offset = l->data_offset + l->max_domains * l->ring_size_bytes;
	l->total_size = l->custom_events_offset +
	                (uint64_t)RTE_MAX_USER_EVENTS * RTE_NAME_SLOT_BYTES;
	return 0;
}

/* Header, ring headers (head = lost words, tail = after the last word). */
static void write_headers(const struct cap_spool *s, struct out *o, const struct rte_layout *l)
{
	uint64_t meta[RTE_METADATA_WORDS];

	for (unsigned i = 0; i < l->max_domains; i++) {
		uint64_t ht[2] = { s->lost[i], o->r[i].pos };

		if (ht[0] || ht[1])
			out_write(o, ht, sizeof ht, l->headers_offset + i * RTE_RING_HEADER_BYTES);
	}
	rte_layout_write_header(l, meta);
	out_write(o, meta, sizeof meta, 0);
}

static void drop_pieces(struct out *o)
{
	for (size_t i = 0; i < o->npc; i++)
		free((void *)o->pc[i].data);
	free(o->pc);
	o->pc = NULL;
	o->npc = o->cappc = 0;
}

/* The capture of s into o (its file, or its pieces): the rings, the
 * name slots, the headers. Returns 0 (o->failed may be set), or -1 with
 * the reason in err (the spool damaged, no memory for a ring's buffer).
 * A spool all in memory may be copied again (a file made after the
 * pieces ran out of memory): its buffer is only read. */
static int fill(struct cap_spool *s, struct out *o, const struct rte_layout *l, int src_fd,
                uint64_t names_off, char *err, size_t errlen)
{
	for (unsigned i = 0; i < l->max_domains; i++) {
		o->r[i].pos = s->lost[i];
		o->r[i].n = 0;
	}
	if (copy_records(s, o, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < l->max_domains; i++)
		out_flush(o, i);
	copy_names(src_fd, names_off, o, l->custom_events_offset);
	write_headers(s, o, l);
	return 0;
}

int cap_finish(struct cap_spool *s, const char *out, int src_fd, uint64_t names_off,
               struct packer *pk, int *packed, char *err, size_t errlen)
{
	struct rte_layout l;
	struct out o = { .fd = -1 };
	int rc = -1, made = 0;

	err[0] = '\0';
	*packed = -1;
	/* A spool with a file: its buffer written there too, a failure
	 * counted as lost (the buffer is then the scratch of the copy);
	 * else it is all in memory, copied from there. */
	if (s->fd >= 0)
		flush(s);
	if (s->open_err) {
		snprintf(err, errlen, "cannot make the spool: %s", strerror(s->open_err));
		goto done;
	}
	if (capture_layout(s, &l) < 0) {
		snprintf(err, errlen, "a ring holds more than 2^32 words");
		goto done;
	}
	o.size = l.ring_size_elements;
	o.mask = o.size - 1;
	o.data_off = l.data_offset;
	o.r = calloc(l.max_domains, sizeof *o.r);
	if (!o.r) {
		snprintf(err, errlen, "%s: %s", out, strerror(ENOMEM));
		goto done;
	}
	/* A spool that never left memory: a small capture, made in memory
	 * and packed from there (no plain file written and read back); if
	 * memory runs out meanwhile, made again as a file. */
	o.mem = pk && s->fd < 0;
	if (o.mem && (fill(s, &o, &l, src_fd, names_off, err, errlen) < 0 || o.failed)) {
		if (o.failed != ENOMEM)
			goto done;
		drop_pieces(&o);
		o.mem = 0;
		o.failed = 0;
		err[0] = '\0';
	}
	if (!o.mem) {
		o.fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (o.fd < 0 || ftruncate(o.fd, (off_t)l.total_size) < 0) {
			made = o.fd >= 0;
			snprintf(err, errlen, "%s: %s", out, strerror(errno));
			goto done;
		}
		made = 1;
		if (fill(s, &o, &l, src_fd, names_off, err, errlen) < 0)
			goto done;
		if (close(o.fd) < 0 && !o.failed)
			o.failed = errno;
		o.fd = -1;
	} else if (pack_write_pieces(pk, out, l.total_size, o.pc, o.npc, packed, err, errlen) < 0) {
		o.failed = errno ? errno : EIO;
	}
	if (o.failed)
		snprintf(err, errlen, "%s: %s", out, strerror(o.failed));
	else
		rc = 0;
done:
	if (o.fd >= 0)
		close(o.fd);
	if (rc < 0 && made)
		unlink(out);
	if (o.r)
		for (unsigned i = 0; i < l.max_domains; i++)
			free(o.r[i].out);
	free(o.r);
	drop_pieces(&o);
	cap_discard(s);
	return rc;
}
