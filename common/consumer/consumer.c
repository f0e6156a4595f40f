/*
 * consumer.c - open, validate and read ring files (see rte/consumer.h).
 *
 * Structure: validate_header() is the one place where the header of a file
 * is checked against the real file size; refill() copies a run of messages
 * out of a ring with torn-read detection; decode_message() turns a copied
 * message into an event after checking it is well formed; read_ring() is
 * the one loop of every read (rte_cursor_next, _batch, _peek_words) around
 * them, each taking from the copy its own way. Nothing reads the mapping
 * except through offsets validate_header() accepted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rte/consumer.h"
#include "rte/ocaml.h"
#include "rundir.h"

/*
 * Words are copied out of a ring CHUNK_WORDS at a time (at most), and the
 * copy is checked once for being overwritten while it was made: one fence
 * and one load of head per chunk instead of per message. Messages are then
 * decoded from the copy. A chunk holds the longest message.
 */
#define CHUNK_WORDS 2048u
_Static_assert(CHUNK_WORDS >= RTE_MAX_MSG_WORDS, "a chunk holds any message");

/*
 * Pages of a ring that were copied are given back (MADV_DONTNEED: for a
 * shared file mapping, only our mapping of them goes; touching them again
 * maps the file's pages again) once DROP_BYTES of them are behind the
 * reader: the memory of a reader stays flat however long the file, instead
 * of growing by every page read.
 */
#define DROP_BYTES ((uint64_t)1 << 20)

struct ring_state {
	uint64_t pos;       /* next word counter to read */
	uint64_t base, end; /* buf holds the words [base, end), checked intact */
	uint64_t lost;      /* total lost words reported */
	uint64_t *buf;      /* the copy: own, or the thread's peek buffer */
	uint64_t *own;      /* this ring's copy buffer, CHUNK_WORDS words, lazy */
	uint64_t gen;       /* 0: the copy is in own; else in the peek buffer,
	                       valid while that buffer's gen is still this */
	uint64_t kept;      /* ring index from which pages may be mapped */
	int err;            /* sticky error of this ring, 0 if none */
	char *why;          /* its message, restored when it is returned again */
};

/* A cursor's cache of user event names is a tree of three levels by the
 * 13 bits of the id: NAME_TOP blocks of NAME_MID blocks of NAME_LEAF
 * names, each block made on first use. */
#define NAME_TOP 16u
#define NAME_MID 16u
#define NAME_LEAF 32u
_Static_assert(NAME_TOP * NAME_MID * NAME_LEAF == RTE_MAX_USER_EVENTS &&
               RTE_MAX_USER_EVENTS == 0x1fffu + 1, "ids are 13-bit fields");
#define NAME_T(id) ((id) / (NAME_MID * NAME_LEAF) % NAME_TOP)
#define NAME_M(id) ((id) / NAME_LEAF % NAME_MID)
#define NAME_L(id) ((id) % NAME_LEAF)

struct rte_cursor {
	char *path;
	const unsigned char *base; /* mapping of layout.total_size bytes */
	size_t map_len;
	struct stat st;            /* of the file when it was opened */
	struct rte_layout layout;
	struct ring_state *rings;
	/* cached user event names by id (a 13-bit field: below
	 * RTE_MAX_USER_EVENTS), a tree of blocks made on first use:
	 * librte.so's own events take the top ids, which a flat array would
	 * pay for with 64 KiB a file, a flat array of blocks with 1 KiB; a
	 * file with a few names costs about half a KiB, so memory stays
	 * small with 100,000 files */
	char ***names[NAME_TOP];
	/* the names of phase and counter ids: one OCaml version's table
	 * (rte/ocaml.h), 5.2's unless rte_cursor_use_ocaml() chose another */
	const char *const *phase_names, *const *counter_names;
	unsigned nphases, ncounters;
	char *errmsg; /* ERRMSG_CAP bytes, allocated at the first error: a
	               * cursor of each of 100,000 files stays small */
};

#define ERRMSG_CAP 512

static const char *const kind_names[RTE_EV_KIND_COUNT] = {
	"begin",     "end",      "counter",   "alloc",
	"lifecycle", "lost",     "user_unit", "user_int",
	"user_span", "user_span", "user_custom",
};

const char *rte_event_kind_name(enum rte_event_kind k)
{
	return (unsigned)k < RTE_EV_KIND_COUNT ? kind_names[k] : "unknown";
}

static void fmt(char *buf, size_t len, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, f);
	vsnprintf(buf, len, f, ap);
	va_end(ap);
}

/* ---- header validation -------------------------------------------------- */

static int add_ok(uint64_t a, uint64_t b, uint64_t *r)
{
	return !__builtin_add_overflow(a, b, r);
}

static int mul_ok(uint64_t a, uint64_t b, uint64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/* Extent [off, off + n * each) must end within `limit`; stores the end. */
static int extent_ok(uint64_t off, uint64_t n, uint64_t each, uint64_t limit,
                     uint64_t *end)
{
	uint64_t len;

	return mul_ok(n, each, &len) && add_ok(off, len, end) && *end <= limit;
}

/* Why a file whose first word is not the format version is not a ring
 * file, naming the compressed formats by their magic bytes. */
static void not_a_ring(const uint64_t w[RTE_METADATA_WORDS], char *why, size_t wlen)
{
	const unsigned char *b = (const unsigned char *)w;
	const char *packed = b[0] == 0x1f && b[1] == 0x8b ? "gzip"
	                     : !memcmp(b, "\x28\xb5\x2f\xfd", 4) ? "zstd"
	                     : !memcmp(b, "\xfd" "7zXZ", 5) ? "xz"
	                     : !memcmp(b, "BZh", 3) ? "bzip2" : NULL;

	if (packed)
		fmt(why, wlen, "not a ring file (%s-compressed? decompress it first)", packed);
	else if (w[0] < 65536)
		fmt(why, wlen, "not a ring file (format version %llu, expected %u)",
		    (unsigned long long)w[0], RTE_FORMAT_VERSION);
	else
		fmt(why, wlen, "not a ring file (it does not start with a ring header)");
}

/*
 * Check the eight header words `w` of a file of `size` bytes and fill `l`.
 * Returns RTE_OK or an error with the reason in why.
 */
static int validate_header(const uint64_t w[RTE_METADATA_WORDS], uint64_t size,
                           struct rte_layout *l, char *why, size_t wlen)
{
	uint64_t end;

	l->version = w[0];
	l->max_domains = w[1];
	l->ring_header_size_bytes = w[2];
	l->ring_size_bytes = w[3];
	l->ring_size_elements = w[4];
	l->headers_offset = w[5];
	l->data_offset = w[6];
	l->custom_events_offset = w[7];
	if (l->version != RTE_FORMAT_VERSION) {
		not_a_ring(w, why, wlen);
		return RTE_ENOTRING;
	}
	if (l->max_domains < 1 || l->max_domains > 4096) {
		fmt(why, wlen, "max_domains %llu is out of range 1..4096",
		    (unsigned long long)l->max_domains);
		return RTE_EHEADER;
	}
	if (l->ring_header_size_bytes < 16 || l->ring_header_size_bytes > 4096 ||
	    l->ring_header_size_bytes % 8) {
		fmt(why, wlen, "ring header size %llu is not a multiple of 8 in 16..4096",
		    (unsigned long long)l->ring_header_size_bytes);
		return RTE_EHEADER;
	}
	if (l->ring_size_elements & (l->ring_size_elements - 1)) {
		fmt(why, wlen, "ring size %llu words is not a power of two",
		    (unsigned long long)l->ring_size_elements);
		return RTE_EHEADER;
	}
	if (l->ring_size_elements < 2 || l->ring_size_elements > ((uint64_t)1 << 32)) {
		fmt(why, wlen, "ring size %llu words is out of range 2..2^32",
		    (unsigned long long)l->ring_size_elements);
		return RTE_EHEADER;
	}
	if (l->ring_size_bytes != l->ring_size_elements * 8) {
		fmt(why, wlen, "ring size %llu bytes does not match %llu words",
		    (unsigned long long)l->ring_size_bytes,
		    (unsigned long long)l->ring_size_elements);
		return RTE_EHEADER;
	}
	if (l->headers_offset < RTE_METADATA_BYTES || l->headers_offset % 8 ||
	    l->data_offset % 8 || l->custom_events_offset % 8) {
		fmt(why, wlen, "offsets %llu/%llu/%llu overlap the metadata or are unaligned",
		    (unsigned long long)l->headers_offset,
		    (unsigned long long)l->data_offset,
		    (unsigned long long)l->custom_events_offset);
		return RTE_EHEADER;
	}
	if (!extent_ok(l->headers_offset, l->max_domains,
	               l->ring_header_size_bytes, l->data_offset, &end) ||
	    !extent_ok(l->data_offset, l->max_domains, l->ring_size_bytes,
	               l->custom_events_offset, &end) ||
	    !extent_ok(l->custom_events_offset, RTE_MAX_USER_EVENTS,
	               RTE_NAME_SLOT_BYTES, UINT64_MAX, &end)) {
		fmt(why, wlen, "sections overlap or overflow (headers %llu, data %llu, names %llu)",
		    (unsigned long long)l->headers_offset,
		    (unsigned long long)l->data_offset,
		    (unsigned long long)l->custom_events_offset);
		return RTE_EHEADER;
	}
	l->total_size = end;
	if (end > size) {
		fmt(why, wlen, "file is %llu bytes but its header needs %llu",
		    (unsigned long long)size, (unsigned long long)end);
		return RTE_ETRUNCATED;
	}
	return RTE_OK;
}

/* ---- open / close ------------------------------------------------------ */

static int open_fail(int err, char *errbuf, size_t errlen, const char *path,
                     const char *why)
{
	fmt(errbuf, errlen, "%s: %s", path, why);
	return err;
}

/* A name for the type of a file that is not a regular file. */
static const char *type_name(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/*
 * No read-around for the pages of the file header and the ring headers:
 * a reader polls the headers of rings never written to (holes in a sparse
 * file), and a fault there would otherwise read (zero-fill) a whole window
 * of the file around them, again whenever the kernel let those clean pages
 * go. The ring data keeps the default (read-ahead for files on disk).
 */
static void headers_random(const rte_cursor *c)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	size_t n = (size_t)(c->layout.data_offset & ~(uint64_t)(page - 1));

	if (n)
		madvise((void *)c->base, n, MADV_RANDOM); /* a hint: may fail */
}

static int map_file(int fd, const char *path, rte_cursor *c, char *errbuf,
                    size_t errlen)
{
	struct stat st;
	uint64_t w[RTE_METADATA_WORDS] = { 0 };
	char why[256];
	ssize_t n;
	int err;

	if (fstat(fd, &st) < 0)
		return open_fail(RTE_EIO, errbuf, errlen, path, strerror(errno));
	c->st = st;
	if (!S_ISREG(st.st_mode)) {
		fmt(why, sizeof why, "not a regular file (%s)", type_name(st.st_mode));
		return open_fail(RTE_ENOTRING, errbuf, errlen, path, why);
	}
	if (st.st_size == 0)
		return open_fail(RTE_ENOTRING, errbuf, errlen, path,
		                 "empty file, not a ring file");
	n = pread(fd, w, sizeof w, 0);
	if (n < 0)
		return open_fail(RTE_EIO, errbuf, errlen, path, strerror(errno));
	if ((size_t)n < sizeof w || (uint64_t)st.st_size < sizeof w) {
		not_a_ring(w, why, sizeof why);
		if (!strstr(why, "compressed"))
			fmt(why, sizeof why, "not a ring file (%lld bytes, too small for a ring file header)",
			    (long long)st.st_size);
		return open_fail(RTE_ENOTRING, errbuf, errlen, path, why);
	}
	err = validate_header(w, (uint64_t)st.st_size, &c->layout, why, sizeof why);
	if (err)
		return open_fail(err, errbuf, errlen, path, why);
	if (c->layout.total_size > SIZE_MAX)
		return open_fail(RTE_EHEADER, errbuf, errlen, path,
		                 "file too large to map");
	c->map_len = (size_t)c->layout.total_size;
	c->base = mmap(NULL, c->map_len, PROT_READ, MAP_SHARED, fd, 0);
	if (c->base == MAP_FAILED) {
		c->base = NULL;
		fmt(why, sizeof why, "mmap: %s", strerror(errno));
		return open_fail(errno == ENOMEM ? RTE_ENOMEM : RTE_EIO, errbuf,
		                 errlen, path, why);
	}
	headers_random(c);
	return RTE_OK;
}

static int check_type(const char *path, char *errbuf, size_t errlen)
{
	struct stat st;
	char why[96];

	if (stat(path, &st) < 0 || S_ISREG(st.st_mode))
		return RTE_OK; /* open() says why it cannot be opened */
	fmt(why, sizeof why, "not a regular file (%s)", type_name(st.st_mode));
	return open_fail(RTE_ENOTRING, errbuf, errlen, path, why);
}

int rte_cursor_open(const char *path, rte_cursor **out, char *errbuf,
                    size_t errlen)
{
	rte_cursor *c;
	int fd, err;

	if (!path || !out)
		return open_fail(RTE_EINVAL, errbuf, errlen, path ? path : "(null)",
		                 "invalid argument");
	*out = NULL;
	c = calloc(1, sizeof *c);
	if (!c || !(c->path = strdup(path))) {
		free(c);
		return open_fail(RTE_ENOMEM, errbuf, errlen, path, "out of memory");
	}
	/* The type first: a device or a FIFO is never opened (opening
	 * /dev/ptmx makes a terminal, a FIFO may block). The fstat() in
	 * map_file() checks the file that was opened. */
	err = check_type(path, errbuf, errlen);
	if (err)
		goto fail;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = errno == ENOENT ? RTE_ENOENT : RTE_EIO;
		open_fail(err, errbuf, errlen, path, strerror(errno));
		goto fail;
	}
	err = map_file(fd, path, c, errbuf, errlen);
	close(fd);
	if (err)
		goto fail;
	rte_cursor_use_ocaml(c, rte_ocaml_default());
	c->rings = calloc(c->layout.max_domains, sizeof *c->rings);
	if (!c->rings) {
		err = open_fail(RTE_ENOMEM, errbuf, errlen, path, "out of memory");
		goto fail;
	}
	*out = c;
	return RTE_OK;
fail:
	rte_cursor_close(c);
	return err;
}

static int open_in(const char *dir, pid_t pid, rte_cursor **out,
                   char *errbuf, size_t errlen)
{
	char path[4096];
	int n;

	n = snprintf(path, sizeof path, "%s/%ld.events", dir, (long)pid);
	if (n < 0 || (size_t)n >= sizeof path)
		return open_fail(RTE_EINVAL, errbuf, errlen, dir, "path too long");
	return rte_cursor_open(path, out, errbuf, errlen);
}

int rte_cursor_open_pid(const char *dir, pid_t pid, rte_cursor **out,
                        char *errbuf, size_t errlen)
{
	struct rte_rundir_search s;
	int err = RTE_ENOENT;

	rte_rundir_search(dir, &s); /* common/format/rundir.h */
	for (unsigned i = 0; i < s.n && err == RTE_ENOENT; i++)
		err = open_in(s.dir[i], pid, out, errbuf, errlen);
	return err;
}

void rte_cursor_close(rte_cursor *c)
{
	if (!c)
		return;
	if (c->base)
		munmap((void *)c->base, c->map_len);
	if (c->rings)
		for (uint64_t i = 0; i < c->layout.max_domains; i++) {
			free(c->rings[i].own);
			free(c->rings[i].why);
		}
	for (unsigned t = 0; t < NAME_TOP; t++) {
		for (unsigned m = 0; c->names[t] && m < NAME_MID; m++) {
			for (unsigned i = 0; c->names[t][m] && i < NAME_LEAF; i++)
				free(c->names[t][m][i]);
			free(c->names[t][m]);
		}
		free(c->names[t]);
	}
	free(c->rings);
	free(c->path);
	free(c->errmsg);
	free(c);
}

/* Set the cursor's error message (its buffer allocated at the first
 * error; out of memory, the message is lost). */
static void set_errmsg(rte_cursor *c, const char *f, ...)
	__attribute__((format(printf, 2, 3)));
static void set_errmsg(rte_cursor *c, const char *f, ...)
{
	va_list ap;

	if (!c->errmsg && !(c->errmsg = malloc(ERRMSG_CAP)))
		return;
	va_start(ap, f);
	vsnprintf(c->errmsg, ERRMSG_CAP, f, ap);
	va_end(ap);
}

/* ---- mapping only while reading --------------------------------------------- */

int rte_cursor_release(rte_cursor *c)
{
	if (!c)
		return RTE_EINVAL;
	for (uint64_t i = 0; c->rings && i < c->layout.max_domains; i++) {
		struct ring_state *r = &c->rings[i];

		free(r->own);
		r->buf = r->own = NULL;
		r->gen = 0;
		r->base = r->end = r->pos; /* the next read copies from pos */
		r->kept = 0;
	}
	if (c->base)
		munmap((void *)c->base, c->map_len);
	c->base = NULL;
	return RTE_OK;
}

/* Map the file again after rte_cursor_release(): the same file (device,
 * inode) and still long enough, else an error in errmsg. */
static int remap(rte_cursor *c)
{
	struct stat st;
	void *base;
	int fd;

	fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		set_errmsg(c, "%s: cannot open again: %s",
		         c->path, strerror(errno));
		return RTE_EIO;
	}
	if (fstat(fd, &st) < 0 || st.st_dev != c->st.st_dev || st.st_ino != c->st.st_ino ||
	    !S_ISREG(st.st_mode) || (uint64_t)st.st_size < c->layout.total_size) {
		close(fd);
		set_errmsg(c, "%s: replaced or cut short since it was opened", c->path);
		return RTE_ETRUNCATED;
	}
	base = mmap(NULL, c->map_len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		set_errmsg(c, "%s: mmap: %s", c->path,
		         strerror(errno));
		return errno == ENOMEM ? RTE_ENOMEM : RTE_EIO;
	}
	c->base = base;
	headers_random(c);
	return RTE_OK;
}

/* The cursor's file is mapped (again if it was released): RTE_OK or an
 * error. Cheap when it is. */
static inline int mapped(const rte_cursor *cc)
{
	rte_cursor *c = (rte_cursor *)cc; /* allocated writable by open */

	return __builtin_expect(c->base != NULL, 1) ? RTE_OK : remap(c);
}

const char *rte_cursor_path(const rte_cursor *c) { return c->path; }

void rte_cursor_use_ocaml(rte_cursor *c, const struct rte_ocaml_table *t)
{
	c->phase_names = t->phases;
	c->nphases = t->nphases;
	c->counter_names = t->counters;
	c->ncounters = t->ncounters;
}
const struct stat *rte_cursor_stat(const rte_cursor *c) { return &c->st; }
const struct rte_layout *rte_cursor_layout(const rte_cursor *c) { return &c->layout; }
unsigned rte_cursor_rings(const rte_cursor *c) { return (unsigned)c->layout.max_domains; }
const char *rte_cursor_errmsg(const rte_cursor *c) { return c->errmsg ? c->errmsg : ""; }

/* ---- ring access -------------------------------------------------------- */

static const uint64_t *ring_header(const rte_cursor *c, unsigned ring)
{
	return (const uint64_t *)(c->base + c->layout.headers_offset +
	                          (uint64_t)ring * c->layout.ring_header_size_bytes);
}

static const uint64_t *ring_data(const rte_cursor *c, unsigned ring)
{
	return (const uint64_t *)(c->base + c->layout.data_offset +
	                          (uint64_t)ring * c->layout.ring_size_bytes);
}

/* Acquire: pairs with the producer's release stores of head and tail. */
static uint64_t load_acq(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

int rte_cursor_ring_used(const rte_cursor *c, unsigned ring)
{
	return ring < c->layout.max_domains && mapped(c) == RTE_OK &&
	       load_acq(ring_header(c, ring) + 1) != 0;
}

uint64_t rte_cursor_ring_lost(const rte_cursor *c, unsigned ring)
{
	return ring < c->layout.max_domains ? c->rings[ring].lost : 0;
}

static int ring_fail(rte_cursor *c, unsigned ring, int err, const char *f, ...)
	__attribute__((format(printf, 4, 5)));
static int ring_fail(rte_cursor *c, unsigned ring, int err, const char *f, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, f);
	vsnprintf(why, sizeof why, f, ap);
	va_end(ap);
	set_errmsg(c, "%s: ring %u: %s", c->path, ring, why);
	if (err == RTE_ECORRUPT || err == RTE_ENAME) {
		c->rings[ring].err = err;
		c->rings[ring].why = c->errmsg ? strdup(c->errmsg) : NULL; /* NULL: keep the last */
		c->rings[ring].base = c->rings[ring].end = 0; /* no fast path */
	}
	return err;
}

/*
 * Check head and tail of `ring` against r->pos. Returns the number of words
 * readable at r->pos (> 0), 0 if none, READ_LOST if the producer overwrote
 * r->pos (*head set), or an error.
 */
#define READ_LOST (-100)
static int64_t ring_bounds(rte_cursor *c, unsigned ring, uint64_t *head_out)
{
	struct ring_state *r = &c->rings[ring];
	const uint64_t *hdr = ring_header(c, ring);
	uint64_t size = c->layout.ring_size_elements;
	uint64_t head = load_acq(hdr), tail = load_acq(hdr + 1);

	*head_out = head;
	if (tail < head)
		return ring_fail(c, ring, RTE_ECORRUPT, "head %llu is past tail %llu",
		                 (unsigned long long)head, (unsigned long long)tail);
	if (tail - head > size) {
		/* A producer never holds more than `size` live words, but head
		 * was loaded before tail and may be stale: reload it (acquire;
		 * pairs with the producer's release store of head, made before
		 * its store of this tail). Still too far apart: the ring is
		 * corrupt, and reading it would go round it without end. */
		*head_out = head = load_acq(hdr);
		if (head <= tail && tail - head > size)
			return ring_fail(c, ring, RTE_ECORRUPT,
			                 "tail %llu is more than the ring size past head %llu",
			                 (unsigned long long)tail, (unsigned long long)head);
	}
	if (r->pos < head)
		return READ_LOST;
	if (r->pos > tail)
		return ring_fail(c, ring, RTE_ECORRUPT,
		                 "tail went back from %llu to %llu",
		                 (unsigned long long)r->pos, (unsigned long long)tail);
	return (int64_t)(tail - r->pos);
}

/* The first message at r->pos has a length that is 0 or runs past the end
 * of the ring or past the tail: overwritten under us
 * (READ_LOST, *head set) or garbage (an error). */
static int bad_length(rte_cursor *c, unsigned ring, unsigned len,
                      uint64_t *head_out)
{
	struct ring_state *r = &c->rings[ring];
	uint64_t idx = r->pos & (c->layout.ring_size_elements - 1);

	/* Orders the load of the length before the re-check of head; pairs
	 * with the producer's release fence after it advances head. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*head_out = load_acq(ring_header(c, ring));
	if (*head_out > r->pos)
		return READ_LOST;
	return ring_fail(c, ring, RTE_ECORRUPT,
	                 "message of %u words at word %llu %s", len,
	                 (unsigned long long)r->pos,
	                 len == 0 ? "has length 0"
	                 : idx + len > c->layout.ring_size_elements
	                         ? "runs past the end of the ring"
	                         : "runs past the tail");
}

/* The copy of `ring` ended at ring index `upto` (at most the ring size):
 * give back the whole pages before it if DROP_BYTES of them piled up. */
static void drop_pages(rte_cursor *c, unsigned ring, uint64_t upto)
{
	struct ring_state *r = &c->rings[ring];
	uintptr_t data = (uintptr_t)ring_data(c, ring), page, lo, hi;

	if (upto < r->kept)
		r->kept = 0; /* went round the ring */
	if ((upto - r->kept) * 8 < DROP_BYTES)
		return;
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	lo = (data + r->kept * 8 + page - 1) & ~(page - 1);
	hi = (data + upto * 8) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED); /* a hint: may fail */
	r->kept = upto;
}

/*
 * The copy buffer of the peeks of a thread, shared by every ring of every
 * cursor it peeks at: a peeking reader takes each copy whole before it
 * moves to another ring, and one buffer that stays in the cache costs less
 * than a buffer per ring (100 files: 1.6 MiB of them) that the copy has
 * to bring back each time. A ring's copy there is valid while the
 * buffer's generation is the one the ring got with it; generations are
 * unique in the process, so no other buffer (another thread's) matches.
 * rte_cursor_next() and _batch() copy into the ring's own buffer: they
 * read a few events of one ring, then another's (the merge).
 */
struct peek_buf {
	uint64_t gen;
	uint64_t w[CHUNK_WORDS];
};

static _Thread_local struct peek_buf *tls_peek;
static pthread_key_t peek_key;   /* frees a thread's buffer at its exit */
static pthread_once_t peek_once = PTHREAD_ONCE_INIT;
static int peek_key_ok;
static uint64_t peek_gens;       /* atomic: the last generation given */

static void peek_key_make(void)
{
	peek_key_ok = pthread_key_create(&peek_key, free) == 0;
}

/* The calling thread's peek buffer, NULL if there can be none (out of
 * memory): the ring's own buffer is used then. */
static struct peek_buf *peek_buf(void)
{
	struct peek_buf *b = tls_peek;

	if (b)
		return b;
	pthread_once(&peek_once, peek_key_make);
	if (!peek_key_ok || !(b = malloc(sizeof *b)))
		return NULL;
	if (pthread_setspecific(peek_key, b)) {
		free(b);
		return NULL;
	}
	b->gen = 0;
	return tls_peek = b;
}

/* 1 if the copy of r (r->pos < r->end) is still in its buffer. */
static inline int copy_kept(const struct ring_state *r)
{
	return !r->gen ||
	       (tls_peek && r->buf == tls_peek->w && tls_peek->gen == r->gen);
}

/* rte_cursor_next() and _batch() read from the ring's own buffer: a copy
 * in the peek buffer is dropped (the next read copies from r->pos). */
static inline void own_copy(struct ring_state *r)
{
	if (__builtin_expect(r->gen != 0, 0)) {
		r->gen = 0;
		r->base = r->end = r->pos;
	}
}

/*
 * Copy the words readable at r->pos (up to CHUNK_WORDS, never across the
 * end of the ring) into the ring's own buffer, or with `shared` into the
 * thread's peek buffer, and check they were not overwritten while being
 * copied; the first message must fit. Returns 1 (r->buf, base and end
 * set), 0 if nothing is there, READ_LOST (*head_out set) or an error.
 */
static int refill(rte_cursor *c, unsigned ring, uint64_t *head_out, int shared)
{
	struct ring_state *r = &c->rings[ring];
	const uint64_t *data = ring_data(c, ring);
	uint64_t size = c->layout.ring_size_elements, idx = r->pos & (size - 1);
	int64_t avail = ring_bounds(c, ring, head_out);
	struct peek_buf *pb = NULL;
	uint64_t n, w0, *dst;
	unsigned len;

	if (avail <= 0)
		return (int)avail; /* 0, READ_LOST or an error */
	n = (uint64_t)avail;
	w0 = __atomic_load_n(&data[idx], __ATOMIC_RELAXED);
	len = rte_hdr_len(w0);
	if (len == 0 || idx + len > size || len > n)
		return bad_length(c, ring, len, head_out);
	if (n > size - idx)
		n = size - idx;
	if (n > CHUNK_WORDS)
		n = CHUNK_WORDS;
	if (shared && (pb = peek_buf()) != NULL) {
		/* Relaxed: a unique number; the buffer is this thread's. The
		 * copies of other rings there are gone from now on. */
		pb->gen = __atomic_add_fetch(&peek_gens, 1, __ATOMIC_RELAXED);
		dst = pb->w;
	} else {
		if (!r->own && !(r->own = malloc(CHUNK_WORDS * sizeof(uint64_t))))
			return ring_fail(c, ring, RTE_ENOMEM, "out of memory");
		dst = r->own;
	}
	/* Relaxed: the producer may be writing these words; the check of
	 * head below tells whether any of them were overwritten. */
	for (uint64_t i = 0; i < n; i++)
		dst[i] = __atomic_load_n(&data[idx + i], __ATOMIC_RELAXED);
	/* Orders the copy before the re-check of head; pairs with the
	 * producer's release fence after it advances head. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*head_out = load_acq(ring_header(c, ring));
	if (*head_out > r->pos)
		return READ_LOST; /* next_slow() empties the copy */
	r->buf = dst;
	r->gen = dst == r->own ? 0 : pb->gen;
	r->base = r->pos;
	r->end = r->pos + n;
	drop_pages(c, ring, idx + n);
	return 1;
}

/* ---- decoding ------------------------------------------------------------- */

/* The decoders run per event: inlined into the loops that call them. */
#define HOT static inline __attribute__((always_inline))

/* user_name() the first time: read the slot and cache the name. */
static int user_name_slow(rte_cursor *c, unsigned ring, unsigned id,
                          const char **out)
{
	const char *slot;
	const char *nul;
	char ***mid, **leaf;

	slot = (const char *)c->base + c->layout.custom_events_offset +
	       (uint64_t)id * RTE_NAME_SLOT_BYTES;
	nul = memchr(slot, 0, RTE_NAME_SLOT_BYTES);
	if (!nul)
		return ring_fail(c, ring, RTE_ENAME,
		                 "name slot of user event %u has no NUL terminator", id);
	if (nul == slot) {
		*out = "";
		return 0;
	}
	mid = c->names[NAME_T(id)];
	if (!mid && !(mid = c->names[NAME_T(id)] = calloc(NAME_MID, sizeof *mid)))
		return ring_fail(c, ring, RTE_ENOMEM, "out of memory");
	leaf = mid[NAME_M(id)];
	if (!leaf && !(leaf = mid[NAME_M(id)] = calloc(NAME_LEAF, sizeof *leaf)))
		return ring_fail(c, ring, RTE_ENOMEM, "out of memory");
	if (!(leaf[NAME_L(id)] = strndup(slot, (size_t)(nul - slot))))
		return ring_fail(c, ring, RTE_ENOMEM, "out of memory");
	*out = leaf[NAME_L(id)];
	return 0;
}

/* The registered name of user event `id`, cached once non-empty. */
HOT int user_name(rte_cursor *c, unsigned ring, unsigned id, const char **out)
{
	char ***mid = c->names[NAME_T(id)], **leaf;

	if (mid && (leaf = mid[NAME_M(id)]) && leaf[NAME_L(id)]) {
		*out = leaf[NAME_L(id)];
		return 0;
	}
	return user_name_slow(c, ring, id, out);
}

static int too_short(rte_cursor *c, unsigned ring, const char *what,
                     unsigned len, unsigned need)
{
	return ring_fail(c, ring, RTE_ECORRUPT,
	                 "%s message of %u words at word %llu, needs %u", what, len,
	                 (unsigned long long)(c->rings[ring].pos - len), need);
}

HOT int decode_runtime(rte_cursor *c, unsigned ring, const uint64_t *m,
                          unsigned len, struct rte_event *ev)
{
	unsigned type = rte_hdr_type(m[0]), id = rte_hdr_id(m[0]);

	switch (type) {
	case RTE_MSG_LIFECYCLE:
		ev->kind = RTE_EV_LIFECYCLE;
		ev->name = rte_lifecycle_name(id);
		ev->u.data = len >= 3 ? (int64_t)m[2] : 0;
		return 1;
	case RTE_MSG_BEGIN:
	case RTE_MSG_EXIT:
		ev->kind = type == RTE_MSG_BEGIN ? RTE_EV_BEGIN : RTE_EV_END;
		ev->name = id < c->nphases ? c->phase_names[id] : NULL;
		return 1;
	case RTE_MSG_COUNTER:
		if (len < 3)
			return too_short(c, ring, "counter", len, 3);
		ev->kind = RTE_EV_COUNTER;
		ev->name = id < c->ncounters ? c->counter_names[id] : NULL;
		ev->u.counter = m[2];
		return 1;
	case RTE_MSG_ALLOC:
		if (len < 2 + RTE_ALLOC_BUCKETS)
			return too_short(c, ring, "alloc", len, 2 + RTE_ALLOC_BUCKETS);
		ev->kind = RTE_EV_ALLOC;
		ev->u.buckets = m + 2;
		return 1;
	default: /* flush, and types this version does not know: skip */
		return 0;
	}
}

HOT int decode_user(rte_cursor *c, unsigned ring, const uint64_t *m,
                       unsigned len, struct rte_event *ev)
{
	unsigned type = rte_hdr_type(m[0]);
	int err;

	if (type > RTE_UMSG_CUSTOM)
		return 0; /* a type this version does not know: skip */
	err = user_name(c, ring, ev->id, &ev->name);
	if (err)
		return err;
	switch (type) {
	case RTE_UMSG_UNIT:
		ev->kind = RTE_EV_USER_UNIT;
		return 1;
	case RTE_UMSG_INT:
		if (len < 3)
			return too_short(c, ring, "user int", len, 3);
		ev->kind = RTE_EV_USER_INT;
		ev->u.value = (int64_t)m[2];
		return 1;
	case RTE_UMSG_SPAN_BEGIN:
	case RTE_UMSG_SPAN_END:
		ev->kind = type == RTE_UMSG_SPAN_BEGIN ? RTE_EV_USER_SPAN_BEGIN
		                                       : RTE_EV_USER_SPAN_END;
		return 1;
	default: /* RTE_UMSG_CUSTOM */
		if (len < 3)
			return too_short(c, ring, "user custom", len, 3);
		if (rte_custom_decode(m + 2, len - 2, &ev->u.custom.len) < 0)
			return ring_fail(c, ring, RTE_ECORRUPT,
			                 "custom payload of %u words at word %llu has a bad length byte",
			                 len - 2, (unsigned long long)(c->rings[ring].pos - len));
		ev->kind = RTE_EV_USER_CUSTOM;
		ev->u.custom.bytes = (const uint8_t *)(m + 2);
		return 1;
	}
}

/* Decode the copied message m of len words; returns 1 (event), 0 (skip it)
 * or an error. Every field of *ev is set (no memset: this runs per event). */
HOT int decode_message(rte_cursor *c, unsigned ring, const uint64_t *m,
                          unsigned len, struct rte_event *ev)
{
	uint64_t h = m[0];

	if (!rte_hdr_is_user(h) && rte_hdr_type(h) == RTE_MSG_INTERNAL)
		return 0; /* padding (or an internal message): skip */
	if (len < 2)
		return too_short(c, ring, "one-word", len, 2);
	ev->ring = ring;
	ev->id = rte_hdr_id(h);
	ev->ts = m[1];
	ev->name = NULL;
	ev->u.custom.bytes = NULL; /* the whole union zero */
	ev->u.custom.len = 0;
	if (rte_hdr_is_user(h))
		return decode_user(c, ring, m, len, ev);
	return decode_runtime(c, ring, m, len, ev);
}

/* The file could not be mapped again: the error of this read, sticky
 * for the ring like any failure. */
static int remap_failed(rte_cursor *c, unsigned ring)
{
	int err = remap(c);

	if (err == RTE_OK)
		return RTE_OK; /* cannot happen: mapped() just failed */
	c->rings[ring].err = err;
	c->rings[ring].why = c->errmsg ? strdup(c->errmsg) : NULL;
	return err;
}

/* ---- reading: one loop, three ways to take from the copy ----------------- */

/*
 * The slow path of read_ring(): the copy is used up (or cut, or the ring
 * failed, which empties it). Returns 1 (copy refilled, into the peek
 * buffer if `shared`), 0 (nothing new), an error (the ring's sticky one
 * again), or READ_LOST: the producer overwrote *lost_words unread words,
 * now counted in r->lost and skipped.
 */
static int next_slow(rte_cursor *c, unsigned ring, uint64_t *lost_words,
                     int shared)
{
	struct ring_state *r = &c->rings[ring];
	uint64_t head;
	int got;

	if (r->err) {
		if (r->why) /* errmsg must describe the error just returned */
			set_errmsg(c, "%s", r->why);
		return r->err;
	}
	got = refill(c, ring, &head, shared);
	if (got == READ_LOST) {
		*lost_words = head - r->pos;
		r->lost += head - r->pos;
		r->pos = head;
		r->base = r->end = 0; /* the copy is behind pos now */
	}
	return got;
}

/* What a take function of read_ring() returns when it has no result. */
#define TAKE_AGAIN (-101)  /* a message skipped: look at the copy again */
#define TAKE_REFILL (-102) /* the copy used up, or its next message cut */

typedef int take_fn(rte_cursor *c, unsigned ring, void *arg);

/*
 * The loop of every read of `ring` (rte_cursor_next, _batch, _peek_words).
 * While the copy holds words at r->pos that the producer has not
 * overwritten since (head re-checked on each pass: a loss is reported
 * where it happens, as if each message were read now), take() takes from
 * it into arg and returns the read's result, or TAKE_AGAIN, or
 * TAKE_REFILL; otherwise the copy is made again from the ring (a failed
 * ring has an empty copy). With `shared` (a constant: the peeks) the copy
 * is made into the thread's peek buffer and is used only while it is
 * still there; without, into the ring's own buffer (a copy in the peek
 * buffer is dropped first). Returns take()'s result, 0 (nothing new), an
 * error, or READ_LOST (*lost_words set, as next_slow()). Inlined with its
 * take function into each public read: the fast path runs per message.
 */
HOT int read_ring(rte_cursor *c, unsigned ring, take_fn *take, void *arg,
                  int shared, uint64_t *lost_words)
{
	struct ring_state *r;
	const uint64_t *hdr;

	if (mapped(c) != RTE_OK)
		return remap_failed(c, ring);
	r = &c->rings[ring];
	if (!shared)
		own_copy(r);
	hdr = ring_header(c, ring);
	for (;;) {
		int got;

		if (r->pos < r->end && (!shared || copy_kept(r)) &&
		    load_acq(hdr) <= r->pos) {
			got = take(c, ring, arg);
			if (got == TAKE_AGAIN)
				continue;
			if (got != TAKE_REFILL)
				return got;
		}
		got = next_slow(c, ring, lost_words, shared);
		if (got != 1)
			return got;
	}
}

/* The RTE_EV_LOST event of `words` lost words of `ring` into *ev: 1. */
static int lost_event(struct rte_event *ev, unsigned ring, uint64_t words)
{
	memset(ev, 0, sizeof *ev);
	ev->kind = RTE_EV_LOST;
	ev->ring = ring;
	ev->u.lost_words = words;
	return 1;
}

/* rte_cursor_next()'s take: the next message of the copy, decoded into
 * the struct rte_event at arg. */
HOT int take_event(rte_cursor *c, unsigned ring, void *arg)
{
	struct ring_state *r = &c->rings[ring];
	const uint64_t *m = r->buf + (r->pos - r->base);
	unsigned len = rte_hdr_len(m[0]);
	int got;

	if (!len || len > r->end - r->pos)
		return TAKE_REFILL; /* cut by the end of the copy (or bad):
		                     * refill() copies it again, or says what
		                     * is wrong */
	r->pos += len;
	got = decode_message(c, ring, m, len, arg);
	return got ? got : TAKE_AGAIN;
}

int rte_cursor_next(rte_cursor *c, unsigned ring, struct rte_event *ev)
{
	uint64_t lost = 0;
	int got;

	if (!c || !ev || ring >= c->layout.max_domains)
		return RTE_EINVAL;
	got = read_ring(c, ring, take_event, ev, 0, &lost);
	return got == READ_LOST ? lost_event(ev, ring, lost) : got;
}

/* Decode the messages of the copy of `ring` from r->pos into ev[0..n),
 * stopping at the end of the copy, at a message it cuts, or at an error.
 * Returns the number stored; *err is set to an error if decoding stopped at
 * one (then r->pos is back at its message when events were stored, so the
 * next call meets it again). */
static size_t decode_run(rte_cursor *c, unsigned ring, struct rte_event *ev,
                         size_t n, int *err)
{
	struct ring_state *r = &c->rings[ring];
	/* In registers: stores into ev[] may alias the ring state (both are
	 * uint64_t), and reloading it after each event would chain them. */
	const uint64_t *buf = r->buf;
	uint64_t pos = r->pos, end = r->end, base = r->base;
	size_t k = 0;

	while (k < n && pos < end) {
		const uint64_t *m = buf + (pos - base);
		unsigned len = rte_hdr_len(m[0]);
		int got;

		if (!len || len > end - pos)
			break; /* refill() copies it again, or says what is wrong */
		pos += len;
		r->pos = pos; /* the decoders' messages read it */
		got = decode_message(c, ring, m, len, &ev[k]);
		if (got > 0) {
			k++;
		} else if (got < 0) {
			if (k)
				r->pos = pos - len;
			*err = got;
			break;
		}
	}
	return k;
}

struct batch {
	struct rte_event *ev;
	size_t n;
};

/* rte_cursor_next_batch()'s take: the events of the copy, up to n, into
 * the struct batch at arg, with one check of head for the run: the copy
 * was intact when it was made. */
HOT int take_events(rte_cursor *c, unsigned ring, void *arg)
{
	struct batch *b = arg;
	int err = 0;
	size_t k = decode_run(c, ring, b->ev, b->n, &err);

	if (k)
		return (int)k;
	return err ? err : TAKE_REFILL; /* only skipped messages, or cut */
}

int rte_cursor_next_batch(rte_cursor *c, unsigned ring, struct rte_event *ev,
                          size_t n)
{
	struct batch b = { ev, n };
	uint64_t lost = 0;
	int got;

	if (!c || !ev || !n || ring >= c->layout.max_domains)
		return RTE_EINVAL;
	if (n > INT_MAX)
		b.n = INT_MAX;
	got = read_ring(c, ring, take_events, &b, 0, &lost);
	return got == READ_LOST ? lost_event(ev, ring, lost) : got;
}

/* The whole messages of the copy of `ring` from r->pos: the words up to
 * the end of the copy or to a message it cuts (or whose length is bad). */
static uint64_t whole_messages(const struct ring_state *r)
{
	const uint64_t *buf = r->buf;
	uint64_t pos = r->pos, end = r->end, base = r->base;

	while (pos < end) {
		unsigned len = rte_hdr_len(buf[pos - base]);

		if (!len || len > end - pos)
			break; /* refill() copies it again, or says what is wrong */
		pos += len;
	}
	return pos - r->pos;
}

/* rte_cursor_peek_words()'s take: the copy from r->pos if its first
 * message is whole (the caller walks the others), its start into the
 * const uint64_t * at arg; the word count. */
HOT int take_words(rte_cursor *c, unsigned ring, void *arg)
{
	struct ring_state *r = &c->rings[ring];
	const uint64_t *m = r->buf + (r->pos - r->base);
	uint64_t n = r->end - r->pos;
	unsigned len = rte_hdr_len(m[0]);

	(void)c;
	if (!len || len > n)
		return TAKE_REFILL; /* refill() copies it again, or says what
		                     * is wrong */
	*(const uint64_t **)arg = m;
	return n > INT_MAX ? INT_MAX : (int)n; /* n <= CHUNK_WORDS */
}

int rte_cursor_peek_words(rte_cursor *c, unsigned ring, const uint64_t **words,
                          uint64_t *lost)
{
	int got;

	if (!c || !words || !lost || ring >= c->layout.max_domains)
		return RTE_EINVAL;
	*lost = 0;
	got = read_ring(c, ring, take_words, words, 1, lost);
	return got == READ_LOST ? 0 : got;
}

int rte_cursor_consume_words(rte_cursor *c, unsigned ring, size_t n)
{
	struct ring_state *r;

	if (!c || ring >= c->layout.max_domains)
		return RTE_EINVAL;
	r = &c->rings[ring];
	if (n > r->end - r->pos)
		return RTE_EINVAL;
	r->pos += n;
	return RTE_OK;
}

int rte_cursor_next_words(rte_cursor *c, unsigned ring, const uint64_t **words,
                          uint64_t *lost)
{
	int got = rte_cursor_peek_words(c, ring, words, lost);
	uint64_t n;

	if (got <= 0)
		return got;
	/* only the whole messages (the first one is) */
	n = whole_messages(&c->rings[ring]);
	c->rings[ring].pos += n;
	return (int)n;
}

int rte_cursor_decode(rte_cursor *c, unsigned ring, const uint64_t *m,
                      struct rte_event *ev)
{
	struct ring_state *r;
	unsigned len;
	uint64_t pos;
	int got;

	if (!c || !m || !ev || ring >= c->layout.max_domains)
		return RTE_EINVAL;
	r = &c->rings[ring];
	len = rte_hdr_len(m[0]);
	if (!r->buf || m < r->buf || m >= r->buf + (r->end - r->base))
		return decode_message(c, ring, m, len, ev);
	/* The error messages place a message at r->pos - len (as the other
	 * ways read, past it): m's own place for a while. */
	pos = r->pos;
	r->pos = r->base + (uint64_t)(m - r->buf) + len;
	got = decode_message(c, ring, m, len, ev);
	r->pos = pos;
	return got;
}

/* ---- callbacks ---------------------------------------------------------- */

int rte_event_dispatch(const struct rte_event *ev,
                       const struct rte_callbacks *cb, void *ud)
{
	unsigned r = ev->ring;

	switch (ev->kind) {
	case RTE_EV_BEGIN:
		return cb->runtime_begin ? cb->runtime_begin(ud, r, ev->ts, ev->id) : 0;
	case RTE_EV_END:
		return cb->runtime_end ? cb->runtime_end(ud, r, ev->ts, ev->id) : 0;
	case RTE_EV_COUNTER:
		return cb->runtime_counter
		       ? cb->runtime_counter(ud, r, ev->ts, ev->id, ev->u.counter) : 0;
	case RTE_EV_ALLOC:
		return cb->alloc ? cb->alloc(ud, r, ev->ts, ev->u.buckets) : 0;
	case RTE_EV_LIFECYCLE:
		return cb->lifecycle ? cb->lifecycle(ud, r, ev->ts, ev->id, ev->u.data) : 0;
	case RTE_EV_LOST:
		return cb->lost_events ? cb->lost_events(ud, r, ev->u.lost_words) : 0;
	case RTE_EV_USER_UNIT:
		return cb->user_unit ? cb->user_unit(ud, r, ev->ts, ev->id, ev->name) : 0;
	case RTE_EV_USER_INT:
		return cb->user_int
		       ? cb->user_int(ud, r, ev->ts, ev->id, ev->name, ev->u.value) : 0;
	case RTE_EV_USER_SPAN_BEGIN:
	case RTE_EV_USER_SPAN_END:
		return cb->user_span
		       ? cb->user_span(ud, r, ev->ts, ev->id, ev->name,
		                       ev->kind == RTE_EV_USER_SPAN_BEGIN) : 0;
	case RTE_EV_USER_CUSTOM:
		return cb->user_custom
		       ? cb->user_custom(ud, r, ev->ts, ev->id, ev->name,
		                         ev->u.custom.bytes, ev->u.custom.len) : 0;
	default:
		return 0;
	}
}

int rte_cursor_poll(rte_cursor *c, const struct rte_callbacks *cb, void *ud,
                    size_t max_events, size_t *count)
{
	size_t n = 0;
	int rc = RTE_OK;

	if (!c || !cb)
		return RTE_EINVAL;
	for (unsigned ring = 0; ring < c->layout.max_domains && rc == RTE_OK; ring++) {
		struct rte_event ev;
		int got;

		while ((max_events == 0 || n < max_events) &&
		       (got = rte_cursor_next(c, ring, &ev)) != 0) {
			if (got < 0) {
				rc = got;
				break;
			}
			n++;
			rc = rte_event_dispatch(&ev, cb, ud);
			if (rc)
				break;
		}
	}
	if (count)
		*count = n;
	return rc;
}
