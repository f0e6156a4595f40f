/*
 * open.c - the cursor's file (see rte/consumer.h, cursor.h): its header
 * validated against the real file size (validate_header(), the one place
 * it is checked), opening by path or pid, mapping it again after
 * rte_cursor_release(), closing; the cursor's accessors, the names of
 * event kinds and the cached names of user events; the error messages of
 * a cursor and of a ring. The reads are in consumer.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "cursor.h"

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
 * Returns RTE_OK or an error with the reason in why. unpack.c calls it
 * too (consumer_validate_header): a packed capture's ring file is checked
 * by the same rules before its mapping is made.
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

int consumer_validate_header(const uint64_t w[RTE_METADATA_WORDS], uint64_t size,
                             struct rte_layout *l, char *why, size_t wlen)
{
	return validate_header(w, size, l, why, wlen);
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

/* A packed capture: unpacked into memory, the ring file's header
 * validated by consumer_unpack before the mapping is made. */
static int map_packed(int fd, const char *path, rte_cursor *c, char *errbuf,
                      size_t errlen)
{
	uint64_t size = 0;
	const unsigned char *base;
	char why[256];
	int err;

	err = consumer_unpack(fd, (uint64_t)c->st.st_size, &base, &size, &c->layout,
	                      why, sizeof why);
	if (err)
		return open_fail(err, errbuf, errlen, path, why);
	c->base = base;
	c->map_len = (size_t)size;
	c->packed = 1;
	return RTE_OK;
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
	if (n >= 8 && consumer_is_packed(w))
		return map_packed(fd, path, c, errbuf, errlen);
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
	for (unsigned t = 0; c->names && t < NAME_TOP; t++) {
		for (unsigned m = 0; c->names[t] && m < NAME_MID; m++) {
			for (unsigned i = 0; c->names[t][m] && i < NAME_LEAF; i++)
				free(c->names[t][m][i]);
			free(c->names[t][m]);
		}
		free(c->names[t]);
	}
	free(c->names);
	free(c->rings);
	free(c->path);
	free(c->errmsg);
	free(c);
}

/* Set the cursor's error message (its buffer allocated at the first
 * error; out of memory, the message is lost). */
void consumer_set_errmsg(rte_cursor *c, const char *f, ...)
	__attribute__((format(printf, 2, 3)));
void consumer_set_errmsg(rte_cursor *c, const char *f, ...)
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
int consumer_remap(rte_cursor *c)
{
	struct stat st;
	void *base;
	int fd;

	fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		consumer_set_errmsg(c, "%s: cannot open again: %s",
		         c->path, strerror(errno));
		return RTE_EIO;
	}
	if (fstat(fd, &st) < 0 || st.st_dev != c->st.st_dev || st.st_ino != c->st.st_ino ||
	    !S_ISREG(st.st_mode) || (!c->packed && (uint64_t)st.st_size < c->layout.total_size)) {
		close(fd);
		consumer_set_errmsg(c, "%s: replaced or cut short since it was opened", c->path);
		return RTE_ETRUNCATED;
	}
	if (c->packed) {
		uint64_t size = 0;
		struct rte_layout l;
		char why[256];
		int err = consumer_unpack(fd, (uint64_t)st.st_size, &c->base, &size, &l,
		                          why, sizeof why);

		close(fd);
		if (!err && size != c->map_len) {
			munmap((void *)c->base, (size_t)size);
			err = RTE_ETRUNCATED;
			snprintf(why, sizeof why, "changed since it was opened");
		}
		if (err) {
			c->base = NULL;
			consumer_set_errmsg(c, "%s: %s", c->path, why);
		}
		return err;
	}
	base = mmap(NULL, c->map_len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		consumer_set_errmsg(c, "%s: mmap: %s", c->path,
		         strerror(errno));
		return errno == ENOMEM ? RTE_ENOMEM : RTE_EIO;
	}
	c->base = base;
	headers_random(c);
	return RTE_OK;
}

/* The file could not be mapped again: the error of this read, sticky
 * for the ring like any failure. */
int consumer_remap_failed(rte_cursor *c, unsigned ring)
{
	int err = consumer_remap(c);

	if (err == RTE_OK)
		return RTE_OK; /* cannot happen: mapped() just failed */
	c->rings[ring].err = err;
	c->rings[ring].why = c->errmsg ? strdup(c->errmsg) : NULL;
	return err;
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

int consumer_ring_fail(rte_cursor *c, unsigned ring, int err, const char *f, ...)
	__attribute__((format(printf, 4, 5)));
int consumer_ring_fail(rte_cursor *c, unsigned ring, int err, const char *f, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, f);
	vsnprintf(why, sizeof why, f, ap);
	va_end(ap);
	consumer_set_errmsg(c, "%s: ring %u: %s", c->path, ring, why);
	if (err == RTE_ECORRUPT || err == RTE_ENAME) {
		c->rings[ring].err = err;
		c->rings[ring].why = c->errmsg ? strdup(c->errmsg) : NULL; /* NULL: keep the last */
		c->rings[ring].base = c->rings[ring].end = 0; /* no fast path */
	}
	return err;
}

/* user_name() the first time: read the slot and cache the name. */
int consumer_user_name_slow(rte_cursor *c, unsigned ring, unsigned id,
                          const char **out)
{
	const char *slot;
	const char *nul;
	char ***mid, **leaf;

	slot = (const char *)c->base + c->layout.custom_events_offset +
	       (uint64_t)id * RTE_NAME_SLOT_BYTES;
	nul = memchr(slot, 0, RTE_NAME_SLOT_BYTES);
	if (!nul)
		return consumer_ring_fail(c, ring, RTE_ENAME,
		                 "name slot of user event %u has no NUL terminator", id);
	if (nul == slot) {
		*out = "";
		return 0;
	}
	if (!c->names && !(c->names = calloc(NAME_TOP, sizeof *c->names)))
		return consumer_ring_fail(c, ring, RTE_ENOMEM, "out of memory");
	mid = c->names[NAME_T(id)];
	if (!mid && !(mid = c->names[NAME_T(id)] = calloc(NAME_MID, sizeof *mid)))
		return consumer_ring_fail(c, ring, RTE_ENOMEM, "out of memory");
	leaf = mid[NAME_M(id)];
	if (!leaf && !(leaf = mid[NAME_M(id)] = calloc(NAME_LEAF, sizeof *leaf)))
		return consumer_ring_fail(c, ring, RTE_ENOMEM, "out of memory");
	if (!(leaf[NAME_L(id)] = strndup(slot, (size_t)(nul - slot))))
		return consumer_ring_fail(c, ring, RTE_ENOMEM, "out of memory");
	*out = leaf[NAME_L(id)];
	return 0;
}
