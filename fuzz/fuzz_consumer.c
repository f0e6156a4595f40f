/*
 * fuzz_consumer.c - the libFuzzer target of the consumer library.
 *
 * Each input is a small program (see fuzz_input.h) that builds a ring file
 * in a memfd with the real ring writer, corrupts it where told to, and reads
 * it with the public API, also while it is being written. Beyond "no crash,
 * no hang, no sanitizer report", the target checks what the API promises:
 *
 *   - open fails with one of the documented codes and a NUL-terminated
 *     "PATH: problem" message, even into a tiny buffer;
 *   - a ring without new writes yields a bounded number of events (no more
 *     than its size in words), and its lost-word total matches the losses
 *     reported; errors are sticky and their message names file and ring;
 *   - every event is well formed and rte_event_jsonl prints it as one valid
 *     JSON object, and truncates it into any smaller buffer as a prefix;
 *   - rte_cursor_poll, in batches and stopped by a callback, and the raw
 *     way (rte_cursor_peek_words, a walk, rte_cursor_decode) deliver
 *     exactly the events rte_cursor_next delivers, up to the first error;
 *   - rte_custom_decode agrees with doc/FORMAT.md and inverts
 *     rte_custom_encode.
 *
 * A broken promise aborts with a message naming it: libFuzzer reports that
 * as a crash and keeps the input.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rte/consumer.h"
#include "ring.h"
#include "fuzz_input.h"
#include "json_check.h"

#define FZ_MAX_MESSAGES 4096u     /* messages written per input */
#define FZ_MAX_SYNCS 32u           /* live reads per input */
#define FZ_MAX_RECORD (1u << 20)   /* events compared between next and poll */
#define FZ_STOP 7                  /* what the stopping callback returns */
#define FZ_BATCH_MAX 64u           /* rte_cursor_next_batch size, at most */
/* Recorded in place of an event where a ring fails with error e. */
#define FZ_ERR_MARK(e) (0x4552520000000000u ^ (uint64_t)-(int64_t)(e))

/* ---- failure -------------------------------------------------------------- */

static void fz_fail(const char *file, int line, const char *cond,
                    const char *f, ...)
	__attribute__((noreturn, format(printf, 4, 5)));
static void fz_fail(const char *file, int line, const char *cond,
                    const char *f, ...)
{
	va_list ap;

	fprintf(stderr, "rte-fuzz: %s:%d: broken promise (%s): ", file, line, cond);
	va_start(ap, f);
	vfprintf(stderr, f, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#define FZ_CHECK(cond, ...)                                                  \
	do {                                                                  \
		if (!(cond))                                                  \
			fz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);      \
	} while (0)

/* ---- input ---------------------------------------------------------------- */

struct fz_in {
	const uint8_t *p;
	size_t n;
};

/* The next `bytes` (<= 8) bytes as a little-endian integer; 0 past the end. */
static uint64_t take(struct fz_in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
		v |= (uint64_t)in->p[0] << (8 * i);
	return v;
}

/* Up to *n bytes; *n is clipped to what is left. */
static const uint8_t *take_bytes(struct fz_in *in, size_t *n)
{
	const uint8_t *p = in->p;

	if (*n > in->n)
		*n = in->n;
	in->p += *n;
	in->n -= *n;
	return p;
}

/* ---- one run ---------------------------------------------------------------- */

struct fz {
	struct fz_in in;
	int fd;
	char path[64];
	unsigned char *map; /* the whole file, read-write, shared */
	size_t map_len;
	struct rte_layout l;
	unsigned trim, do_trim, poll_batch, poll_stop;
	uint64_t ts;
	unsigned messages, syncs;
	int frozen; /* the file was trimmed: nothing more is written */
	unsigned formatted[RTE_EV_KIND_COUNT]; /* events formatted, per kind */
	rte_cursor *live;
	uint64_t *live_lost;         /* per ring of the live cursor, lost words */
	struct rte_ring_writer **w;  /* per ring, allocated on first write */
	uint8_t *attached;           /* per ring: w[ring] is attached */
};

struct fz_rec {
	uint64_t *h;     /* digest of each event (fz_event_hash), in order */
	size_t n, cap;
	int overflow;
	int have_err, first_err;
	size_t stop_n;   /* events recorded before the first error */
};

static int fz_memfd(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = memfd_create("rte-fuzz", MFD_CLOEXEC);
	FZ_CHECK(fd >= 0, "memfd_create failed");
	return fd;
}

/* rte_layout_compute must give OCaml's layout, the one built here. */
static void fz_check_layout(const struct rte_layout *l)
{
	struct rte_layout ref;
	unsigned log2 = (unsigned)__builtin_ctzll(l->ring_size_elements);

	FZ_CHECK(rte_layout_compute(&ref, 0, log2) == -1 &&
	         rte_layout_compute(&ref, 4097, log2) == -1 &&
	         rte_layout_compute(&ref, 1, RTE_RING_LOG2_MAX + 1) == -1,
	         "rte_layout_compute accepted bad arguments");
	if (l->ring_header_size_bytes != RTE_RING_HEADER_BYTES)
		return;
	FZ_CHECK(rte_layout_compute(&ref, (unsigned)l->max_domains, log2) == 0 &&
	         !memcmp(&ref, l, sizeof ref), "rte_layout_compute(%u, %u)",
	         (unsigned)l->max_domains, log2);
}

/* Read the prelude, size the memfd and map it; writes the header words. */
static void fz_setup(struct fz *f, const uint8_t *data, size_t size)
{
	unsigned log2, domains, flags;
	uint64_t *hdr;

	memset(f, 0, sizeof *f);
	f->in = (struct fz_in){ data, size };
	log2 = RTE_RING_LOG2_MIN + (unsigned)(take(&f->in, 1) % 13);
	domains = 1 + (unsigned)(take(&f->in, 2) % 4096);
	flags = (unsigned)take(&f->in, 1);
	f->trim = (unsigned)take(&f->in, 2);
	f->do_trim = (flags & FZ_FLAG_TRIM) != 0;
	f->poll_batch = (unsigned)take(&f->in, 1);
	f->poll_stop = (unsigned)take(&f->in, 1);
	fz_layout(&f->l, log2, domains, fz_header_size(flags));
	fz_check_layout(&f->l);
	f->fd = fz_memfd();
	snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
	f->map_len = (size_t)f->l.total_size;
	FZ_CHECK(ftruncate(f->fd, 0) == 0 &&
	         ftruncate(f->fd, (off_t)f->map_len) == 0, "ftruncate");
	f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
	              f->fd, 0);
	FZ_CHECK(f->map != MAP_FAILED, "mmap %zu bytes", f->map_len);
	hdr = (uint64_t *)f->map;
	hdr[0] = f->l.version;
	hdr[1] = f->l.max_domains;
	hdr[2] = f->l.ring_header_size_bytes;
	hdr[3] = f->l.ring_size_bytes;
	hdr[4] = f->l.ring_size_elements;
	hdr[5] = f->l.headers_offset;
	hdr[6] = f->l.data_offset;
	hdr[7] = f->l.custom_events_offset;
	f->w = calloc(domains, sizeof *f->w);
	f->attached = calloc(domains, 1);
	FZ_CHECK(f->w && f->attached, "out of memory");
}

/* ---- checks on what the consumer returns ------------------------------------ */

static int fz_is_user(enum rte_event_kind k)
{
	return k >= RTE_EV_USER_UNIT && k < RTE_EV_KIND_COUNT;
}

/* Names come from the cursor's OCaml version table (rte/ocaml.h; 5.2's by
 * default): equal to rte/format.h's, not the same pointers. */
static int same_name(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The fields of one event, as the header documents them. */
static void fz_check_fields(const struct rte_event *ev, unsigned ring)
{
	FZ_CHECK(ev->ring == ring, "event of ring %u returned for ring %u",
	         ev->ring, ring);
	FZ_CHECK((unsigned)ev->kind < RTE_EV_KIND_COUNT, "kind %d", (int)ev->kind);
	FZ_CHECK(ev->id <= 0x1fff, "id %u wider than 13 bits", ev->id);
	switch (ev->kind) {
	case RTE_EV_LOST:
		FZ_CHECK(ev->u.lost_words > 0 && ev->ts == 0 && !ev->name,
		         "lost event of %llu words",
		         (unsigned long long)ev->u.lost_words);
		break;
	case RTE_EV_BEGIN:
	case RTE_EV_END:
		FZ_CHECK(same_name(ev->name, rte_phase_name(ev->id)), "phase name");
		break;
	case RTE_EV_COUNTER:
		FZ_CHECK(same_name(ev->name, rte_counter_name(ev->id)), "counter name");
		break;
	case RTE_EV_LIFECYCLE:
		FZ_CHECK(ev->name == rte_lifecycle_name(ev->id), "lifecycle name");
		break;
	case RTE_EV_ALLOC:
		FZ_CHECK(ev->u.buckets != NULL, "alloc without buckets");
		break;
	default:
		FZ_CHECK(fz_is_user(ev->kind) && ev->name &&
		         strlen(ev->name) <= RTE_NAME_MAX, "user event name");
		break;
	}
	if (ev->kind == RTE_EV_USER_CUSTOM) {
		unsigned sum = 0;

		FZ_CHECK(ev->u.custom.len <= RTE_CUSTOM_MAX_BYTES,
		         "custom payload of %zu bytes", ev->u.custom.len);
		for (size_t i = 0; i < ev->u.custom.len; i++) /* ASan: in bounds */
			sum += ev->u.custom.bytes[i];
		(void)sum;
	}
}

static uint64_t fz_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3u;
	return h;
}

/* A digest of every field the kind defines (what poll must reproduce; an
 * alloc callback gets no id, as in OCaml's API). */
static uint64_t fz_event_hash(const struct rte_event *ev)
{
	uint64_t w[4] = { (uint64_t)ev->kind, ev->ring,
	                  ev->kind == RTE_EV_ALLOC ? 0 : ev->id, ev->ts };
	uint64_t h = fz_mix(0xcbf29ce484222325u, w, sizeof w);

	h = ev->name ? fz_mix(h, ev->name, strlen(ev->name) + 1) : ~h;
	switch (ev->kind) {
	case RTE_EV_COUNTER:
	case RTE_EV_LIFECYCLE:
	case RTE_EV_LOST:
	case RTE_EV_USER_INT:
		return fz_mix(h, &ev->u.counter, sizeof ev->u.counter);
	case RTE_EV_ALLOC:
		return fz_mix(h, ev->u.buckets, RTE_ALLOC_BUCKETS * sizeof(uint64_t));
	case RTE_EV_USER_CUSTOM:
		h = fz_mix(h, &ev->u.custom.len, sizeof ev->u.custom.len);
		return fz_mix(h, ev->u.custom.bytes, ev->u.custom.len);
	default:
		return h;
	}
}

/* Formatting is most of a run's cost: format the first events of each
 * kind in every input, then one in sixteen. */
static int fz_thorough(struct fz *f, const struct rte_event *ev, uint64_t h)
{
	return f->formatted[ev->kind]++ < 8 || h % 16 == 0;
}

/*
 * rte_event_jsonl: one valid JSON object, never truncated at RTE_JSONL_MAX;
 * into a smaller buffer it is a NUL-terminated prefix; cap 0 writes
 * nothing; a pid goes first.
 */
static void fz_check_jsonl(const struct rte_event *ev, uint64_t h)
{
	static char full[RTE_JSONL_MAX], part[RTE_JSONL_MAX], name[8];
	size_t n = rte_event_jsonl(full, sizeof full, ev, -1), m, cap;
	char canary = 'x';

	FZ_CHECK(n < sizeof full && full[n] == '\0' && strlen(full) == n,
	         "jsonl length %zu", n);
	FZ_CHECK(fz_json_object_ok(full, n), "invalid JSON: %s", full);
	cap = 1 + (size_t)(h % (n + 1));
	m = rte_event_jsonl(part, cap, ev, -1);
	FZ_CHECK(m == (n < cap ? n : cap - 1) && part[m] == '\0' &&
	         memcmp(part, full, m) == 0, "truncated jsonl at cap %zu", cap);
	FZ_CHECK(rte_event_jsonl(&canary, 0, ev, -1) == 0 && canary == 'x',
	         "jsonl with cap 0 wrote");
	m = rte_event_jsonl(part, sizeof part, ev, 4242);
	FZ_CHECK(fz_json_object_ok(part, m) && !strncmp(part, "{\"pid\":4242,", 12),
	         "jsonl with pid: %s", part);
	if (!ev->name) {
		const char *s = rte_event_name(ev, name, sizeof name);

		FZ_CHECK(s == name && strlen(name) < sizeof name, "event name");
	}
}

/* RTE_FUZZ_DUMP set: print the events the final read of each input sees,
 * one JSON line each (to check that a seed rebuilds what it should). */
static void fz_dump(const struct rte_event *ev)
{
	static int on = -1;
	static char line[RTE_JSONL_MAX];

	if (on < 0)
		on = getenv("RTE_FUZZ_DUMP") != NULL;
	if (!on)
		return;
	rte_event_jsonl(line, sizeof line, ev, -1);
	puts(line);
}

static void fz_record(struct fz_rec *rec, uint64_t h)
{
	if (!rec || rec->overflow)
		return;
	if (rec->n == rec->cap) {
		size_t cap = rec->cap ? rec->cap * 2 : 256;
		uint64_t *p;

		if (cap > FZ_MAX_RECORD) {
			rec->overflow = 1;
			return;
		}
		p = realloc(rec->h, cap * sizeof *p);
		FZ_CHECK(p != NULL, "out of memory");
		rec->h = p;
		rec->cap = cap;
	}
	rec->h[rec->n++] = h;
}

/* A ring error: documented code, sticky, message naming file and ring. */
static void fz_check_ring_error(struct fz *f, rte_cursor *c, unsigned ring,
                                int err, struct fz_rec *rec)
{
	char want[96], first[512];
	const char *msg = rte_cursor_errmsg(c);
	struct rte_event ev;

	FZ_CHECK(err == RTE_ECORRUPT || err == RTE_ENAME || err == RTE_ENOMEM,
	         "rte_cursor_next returned %d", err);
	snprintf(want, sizeof want, "%s: ring %u: ", f->path, ring);
	FZ_CHECK(!strncmp(msg, want, strlen(want)) && strlen(msg) > strlen(want),
	         "error message \"%s\"", msg);
	snprintf(first, sizeof first, "%s", msg);
	if (err != RTE_ENOMEM)
		FZ_CHECK(rte_cursor_next(c, ring, &ev) == err &&
		         !strcmp(first, rte_cursor_errmsg(c)),
		         "error not sticky, or its message changed");
	if (rec && !rec->have_err) {
		rec->have_err = 1;
		rec->first_err = err;
		rec->stop_n = rec->n;
	}
}

/* Read one ring to its current end. With no writes in between, a ring
 * can hold at most ring_size_elements words of events. */
static void fz_drain_ring(struct fz *f, rte_cursor *c, unsigned ring,
                          struct fz_rec *rec, uint64_t *lost)
{
	uint64_t bound = rte_cursor_layout(c)->ring_size_elements + 2, n = 0, h;
	struct rte_event ev;
	int got;

	while ((got = rte_cursor_next(c, ring, &ev)) > 0) {
		FZ_CHECK(got == 1, "rte_cursor_next returned %d", got);
		FZ_CHECK(++n <= bound,
		         "ring %u yields more than %llu events without new writes",
		         ring, (unsigned long long)bound);
		fz_check_fields(&ev, ring);
		if (ev.kind == RTE_EV_LOST)
			*lost += ev.u.lost_words;
		h = fz_event_hash(&ev);
		if (fz_thorough(f, &ev, h))
			fz_check_jsonl(&ev, h);
		fz_record(rec, h);
		if (rec)
			fz_dump(&ev);
	}
	if (got < 0) {
		fz_check_ring_error(f, c, ring, got, rec);
		fz_record(rec, FZ_ERR_MARK(got));
	}
	FZ_CHECK(rte_cursor_ring_lost(c, ring) == *lost,
	         "ring %u: ring_lost %llu, events said %llu", ring,
	         (unsigned long long)rte_cursor_ring_lost(c, ring),
	         (unsigned long long)*lost);
}

static void fz_drain(struct fz *f, rte_cursor *c, struct fz_rec *rec,
                     uint64_t *lost)
{
	unsigned rings = rte_cursor_rings(c);
	struct rte_event ev;

	for (unsigned r = 0; r < rings; r++) {
		uint64_t tmp = 0;

		fz_drain_ring(f, c, r, rec, lost ? &lost[r] : &tmp);
		(void)rte_cursor_ring_used(c, r);
	}
	FZ_CHECK(rte_cursor_next(c, rings, &ev) == RTE_EINVAL &&
	         rte_cursor_ring_lost(c, rings) == 0 &&
	         !rte_cursor_ring_used(c, rings), "ring %u out of range", rings);
}

/* ---- opening ------------------------------------------------------------------ */

/* Cut the file short, once, before the first cursor maps it. */
static void fz_freeze(struct fz *f)
{
	size_t len;

	if (!f->do_trim || f->frozen)
		return;
	f->frozen = 1;
	if (f->trim >= FZ_TRIM_ABSOLUTE)
		len = f->trim - FZ_TRIM_ABSOLUTE;
	else
		len = f->map_len - f->trim; /* the file is >= 1 MiB */
	FZ_CHECK(ftruncate(f->fd, (off_t)len) == 0, "ftruncate");
}

static void fz_check_opened(struct fz *f, rte_cursor *c)
{
	const struct rte_layout *l = rte_cursor_layout(c);
	struct stat st;

	FZ_CHECK(fstat(f->fd, &st) == 0, "fstat");
	FZ_CHECK(!strcmp(rte_cursor_path(c), f->path), "cursor path");
	FZ_CHECK(l->max_domains >= 1 && l->max_domains <= 4096 &&
	         rte_cursor_rings(c) == l->max_domains, "max_domains");
	FZ_CHECK(l->custom_events_offset + RTE_MAX_USER_EVENTS * RTE_NAME_SLOT_BYTES
	                 == l->total_size &&
	         l->total_size <= (uint64_t)st.st_size,
	         "layout of %llu bytes accepted for a file of %lld",
	         (unsigned long long)l->total_size, (long long)st.st_size);
}

static void fz_check_open_error(struct fz *f, int err, const char *errbuf,
                                size_t errlen)
{
	size_t plen = strlen(f->path);
	char tiny[6];
	rte_cursor *c = NULL;

	FZ_CHECK(err == RTE_ENOTRING || err == RTE_EHEADER ||
	         err == RTE_ETRUNCATED || err == RTE_ENOMEM,
	         "rte_cursor_open returned %d", err);
	FZ_CHECK(memchr(errbuf, 0, errlen) && !strncmp(errbuf, f->path, plen) &&
	         !strncmp(errbuf + plen, ": ", 2) && strlen(errbuf) > plen + 2,
	         "open error message \"%.*s\"", (int)errlen, errbuf);
	FZ_CHECK(*rte_strerror(err), "rte_strerror(%d) is empty", err);
	memset(tiny, 'x', sizeof tiny);
	FZ_CHECK(rte_cursor_open(f->path, &c, tiny, sizeof tiny) == err && !c &&
	         memchr(tiny, 0, sizeof tiny), "open into a tiny error buffer");
}

/* Open a cursor on the file; NULL (after checking the error) if it fails. */
static rte_cursor *fz_open(struct fz *f)
{
	char errbuf[512];
	rte_cursor *c = NULL;
	int err;

	fz_freeze(f);
	memset(errbuf, 'x', sizeof errbuf);
	err = rte_cursor_open(f->path, &c, errbuf, sizeof errbuf);
	if (err == RTE_OK) {
		FZ_CHECK(c != NULL, "open succeeded without a cursor");
		fz_check_opened(f, c);
		return c;
	}
	FZ_CHECK(c == NULL, "failed open left a cursor");
	fz_check_open_error(f, err, errbuf, sizeof errbuf);
	return NULL;
}

/* ---- poll versus next ------------------------------------------------------- */

struct fz_poll {
	const struct fz_rec *rec;
	size_t idx, stop_at;
	int stopped;
};

static int fz_polled(void *ud, const struct rte_event *ev)
{
	struct fz_poll *p = ud;
	uint64_t h = fz_event_hash(ev);

	FZ_CHECK(p->idx < p->rec->n, "poll delivered more than next (%zu)",
	         p->rec->n);
	FZ_CHECK(p->rec->h[p->idx] == h, "poll and next differ at event %zu",
	         p->idx);
	p->idx++;
	if (p->stop_at && p->idx == p->stop_at && !p->stopped) {
		p->stopped = 1;
		return FZ_STOP;
	}
	return 0;
}

#define FZ_EV(...) (&(struct rte_event){ __VA_ARGS__ })

static int cb_begin(void *ud, unsigned r, uint64_t ts, unsigned id)
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_BEGIN, .ring = r, .ts = ts,
	                           .id = id, .name = rte_phase_name(id)));
}

static int cb_end(void *ud, unsigned r, uint64_t ts, unsigned id)
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_END, .ring = r, .ts = ts,
	                           .id = id, .name = rte_phase_name(id)));
}

static int cb_counter(void *ud, unsigned r, uint64_t ts, unsigned id,
                      uint64_t v)
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_COUNTER, .ring = r, .ts = ts,
	                           .id = id, .name = rte_counter_name(id),
	                           .u.counter = v));
}

static int cb_alloc(void *ud, unsigned r, uint64_t ts,
                    const uint64_t b[RTE_ALLOC_BUCKETS])
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_ALLOC, .ring = r, .ts = ts,
	                           .u.buckets = b));
}

static int cb_lifecycle(void *ud, unsigned r, uint64_t ts, unsigned id,
                        int64_t data)
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_LIFECYCLE, .ring = r, .ts = ts,
	                           .id = id, .name = rte_lifecycle_name(id),
	                           .u.data = data));
}

static int cb_lost(void *ud, unsigned r, uint64_t words)
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_LOST, .ring = r,
	                           .u.lost_words = words));
}

static int cb_unit(void *ud, unsigned r, uint64_t ts, unsigned id,
                   const char *name)
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_USER_UNIT, .ring = r, .ts = ts,
	                           .id = id, .name = name));
}

static int cb_int(void *ud, unsigned r, uint64_t ts, unsigned id,
                  const char *name, int64_t v)
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_USER_INT, .ring = r, .ts = ts,
	                           .id = id, .name = name, .u.value = v));
}

static int cb_span(void *ud, unsigned r, uint64_t ts, unsigned id,
                   const char *name, int is_begin)
{
	return fz_polled(ud, FZ_EV(.kind = is_begin ? RTE_EV_USER_SPAN_BEGIN
	                                            : RTE_EV_USER_SPAN_END,
	                           .ring = r, .ts = ts, .id = id, .name = name));
}

static int cb_custom(void *ud, unsigned r, uint64_t ts, unsigned id,
                     const char *name, const uint8_t *bytes, size_t len)
{
	return fz_polled(ud, FZ_EV(.kind = RTE_EV_USER_CUSTOM, .ring = r,
	                           .ts = ts, .id = id, .name = name,
	                           .u.custom = { bytes, len }));
}

static const struct rte_callbacks fz_callbacks = {
	cb_begin, cb_end,  cb_counter, cb_alloc, cb_lifecycle,
	cb_lost,  cb_unit, cb_int,     cb_span,  cb_custom,
};

/* Poll a fresh cursor in batches; it must deliver what next delivered. */
static void fz_poll_compare(struct fz *f, rte_cursor *c,
                            const struct fz_rec *rec)
{
	struct fz_poll p = { rec, 0, f->poll_stop, 0 };
	size_t expect = rec->have_err ? rec->stop_n : rec->n, k = f->poll_batch;
	int rc = RTE_OK;

	for (size_t iter = 0; iter <= expect + 2; iter++) {
		size_t count = (size_t)-1;

		rc = rte_cursor_poll(c, &fz_callbacks, &p, k, &count);
		FZ_CHECK(count != (size_t)-1 && (k == 0 || count <= k),
		         "poll count %zu for batch %zu", count, k);
		if (rc == FZ_STOP)
			continue;
		if (rc != RTE_OK || count == 0 || k == 0 || count < k)
			break;
	}
	FZ_CHECK(p.idx == expect, "poll delivered %zu events, next %zu", p.idx,
	         expect);
	FZ_CHECK(rc == (rec->have_err ? rec->first_err : RTE_OK),
	         "poll returned %d", rc);
}

/* Poll with no callbacks at all: every event is consumed and counted. */
static void fz_poll_silent(rte_cursor *c, const struct fz_rec *rec)
{
	static const struct rte_callbacks none;
	size_t count = 0;
	int rc = rte_cursor_poll(c, &none, NULL, 0, &count);

	FZ_CHECK(count == (rec->have_err ? rec->stop_n : rec->n) &&
	         rc == (rec->have_err ? rec->first_err : RTE_OK),
	         "silent poll: %d, %zu events", rc, count);
}

/* ---- writing -------------------------------------------------------------------- */

static unsigned fz_ring(struct fz *f, unsigned nibble)
{
	uint64_t r = nibble == FZ_RING_EXT ? take(&f->in, 2) : nibble;

	return (unsigned)(r % f->l.max_domains);
}

static void fz_emit(struct fz *f, unsigned ring, uint64_t hdr,
                    const uint64_t *payload, unsigned n)
{
	if (f->frozen || f->messages >= FZ_MAX_MESSAGES)
		return;
	f->messages++;
	if (!f->w[ring])
		FZ_CHECK((f->w[ring] = malloc(sizeof *f->w[ring])), "out of memory");
	if (!f->attached[ring]) {
		rte_ring_writer_attach(f->w[ring], f->map, &f->l, ring);
		f->attached[ring] = 1;
	}
	(void)rte_ring_write(f->w[ring], hdr, ++f->ts, payload, n);
}

static unsigned fz_id(struct fz *f)
{
	return (unsigned)take(&f->in, 2) & 0x1fffu;
}

static void op_runtime(struct fz *f, enum fz_op op, unsigned ring)
{
	uint64_t pl[RTE_ALLOC_BUCKETS];
	unsigned raw, type = op == FZ_OP_BEGIN ? RTE_MSG_BEGIN : RTE_MSG_EXIT;

	switch (op) {
	case FZ_OP_LIFECYCLE:
		raw = (unsigned)take(&f->in, 2);
		pl[0] = take(&f->in, 8);
		fz_emit(f, ring, rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, raw & 0x1fff),
		        pl, raw & FZ_LC_NO_PAYLOAD ? 0 : 1);
		break;
	case FZ_OP_BEGIN:
	case FZ_OP_EXIT:
		fz_emit(f, ring, rte_hdr_make(0, 0, type, fz_id(f)), NULL, 0);
		break;
	case FZ_OP_COUNTER:
		raw = fz_id(f);
		pl[0] = take(&f->in, 8);
		fz_emit(f, ring, rte_hdr_make(0, 0, RTE_MSG_COUNTER, raw), pl, 1);
		break;
	case FZ_OP_ALLOC:
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			pl[i] = take(&f->in, 1);
		fz_emit(f, ring, rte_hdr_make(0, 0, RTE_MSG_ALLOC, 0), pl,
		        RTE_ALLOC_BUCKETS);
		break;
	default: /* FZ_OP_FLUSH */
		fz_emit(f, ring, rte_hdr_make(0, 0, RTE_MSG_FLUSH, 0), NULL, 0);
		break;
	}
}

static void op_custom(struct fz *f, unsigned ring)
{
	static uint64_t words[RTE_MAX_MSG_WORDS];
	unsigned id = fz_id(f);
	size_t n = (size_t)(take(&f->in, 2) % (RTE_CUSTOM_MAX_BYTES + 1));
	const uint8_t *bytes = take_bytes(&f->in, &n);
	size_t w = rte_custom_encode(bytes, n, words);

	fz_emit(f, ring, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, id), words,
	        (unsigned)w);
}

static void op_user(struct fz *f, enum fz_op op, unsigned ring)
{
	unsigned id = fz_id(f);
	uint64_t v;

	switch (op) {
	case FZ_OP_UNIT:
		fz_emit(f, ring, rte_hdr_make(0, 1, RTE_UMSG_UNIT, id), NULL, 0);
		break;
	case FZ_OP_INT:
		v = take(&f->in, 8);
		fz_emit(f, ring, rte_hdr_make(0, 1, RTE_UMSG_INT, id), &v, 1);
		break;
	default: /* spans */
		fz_emit(f, ring,
		        rte_hdr_make(0, 1, op == FZ_OP_SPAN_BEGIN
		                           ? RTE_UMSG_SPAN_BEGIN : RTE_UMSG_SPAN_END,
		                     id), NULL, 0);
		break;
	}
}

static void op_raw(struct fz *f, unsigned ring)
{
	uint64_t pl[255], hdr = take(&f->in, 8);
	unsigned n = (unsigned)take(&f->in, 1);

	for (unsigned i = 0; i < n; i++)
		pl[i] = take(&f->in, 8);
	fz_emit(f, ring, hdr, pl, n);
}

static void op_name(struct fz *f)
{
	unsigned id = fz_id(f);
	size_t n = (size_t)(take(&f->in, 1) % (RTE_NAME_SLOT_BYTES + 1));
	const uint8_t *bytes = take_bytes(&f->in, &n);
	unsigned char *slot = f->map + f->l.custom_events_offset +
	                      (size_t)id * RTE_NAME_SLOT_BYTES;

	if (f->frozen)
		return;
	memset(slot, 0, RTE_NAME_SLOT_BYTES);
	memcpy(slot, bytes, n);
}

/*
 * The writer keeps head and tail only in the shared ring header and trusts
 * them (it is their only writer). After a patch over ring headers, the
 * rings concerned are attached afresh before their next write, which resets
 * an inconsistent header; the reader sees the damage until then.
 */
static void fz_detach(struct fz *f, uint64_t base, size_t n)
{
	uint64_t lo = f->l.headers_offset, hi = f->l.data_offset;
	uint64_t end = base + n, first, last;

	if (n == 0 || end <= lo || base >= hi)
		return;
	first = ((base > lo ? base : lo) - lo) / f->l.ring_header_size_bytes;
	last = ((end < hi ? end : hi) - 1 - lo) / f->l.ring_header_size_bytes;
	for (uint64_t r = first; r <= last && r < f->l.max_domains; r++)
		f->attached[r] = 0;
}

static void op_patch(struct fz *f)
{
	unsigned region = (unsigned)take(&f->in, 1) % 4;
	uint64_t idx = take(&f->in, 2), off = take(&f->in, 4), base = 0;
	size_t n = (size_t)take(&f->in, 2);
	const uint8_t *bytes = take_bytes(&f->in, &n);

	if (region == FZ_REG_RING_HEADER)
		base = f->l.headers_offset +
		       idx % f->l.max_domains * f->l.ring_header_size_bytes;
	else if (region == FZ_REG_RING_DATA)
		base = f->l.data_offset + idx % f->l.max_domains * f->l.ring_size_bytes;
	else if (region == FZ_REG_NAME)
		base = f->l.custom_events_offset +
		       idx % RTE_MAX_USER_EVENTS * RTE_NAME_SLOT_BYTES;
	base += off;
	if (f->frozen || base >= f->map_len)
		return;
	if (n > f->map_len - base)
		n = (size_t)(f->map_len - base);
	memcpy(f->map + base, bytes, n);
	fz_detach(f, base, n);
}

static void op_sync(struct fz *f)
{
	if (f->syncs >= FZ_MAX_SYNCS)
		return;
	f->syncs++;
	if (!f->live && (f->live = fz_open(f))) {
		/* Its header may have been patched: size by what it says. */
		f->live_lost = calloc(rte_cursor_rings(f->live), sizeof *f->live_lost);
		FZ_CHECK(f->live_lost != NULL, "out of memory");
	}
	if (f->live)
		fz_drain(f, f->live, NULL, f->live_lost);
}

static void op_burst(struct fz *f, unsigned ring)
{
	unsigned n = 4 * (unsigned)take(&f->in, 1);

	for (uint64_t v = 0; v < n; v++)
		fz_emit(f, ring, rte_hdr_make(0, 1, RTE_UMSG_INT, 0), &v, 1);
}

static void fz_run_op(struct fz *f)
{
	unsigned byte = (unsigned)take(&f->in, 1);
	enum fz_op op = (enum fz_op)(byte >> 4);
	unsigned ring = op <= FZ_OP_RAW || op == FZ_OP_BURST
	                ? fz_ring(f, byte & 15) : 0;

	if (op <= FZ_OP_FLUSH)
		op_runtime(f, op, ring);
	else if (op <= FZ_OP_SPAN_END)
		op_user(f, op, ring);
	else if (op == FZ_OP_CUSTOM)
		op_custom(f, ring);
	else if (op == FZ_OP_RAW)
		op_raw(f, ring);
	else if (op == FZ_OP_NAME)
		op_name(f);
	else if (op == FZ_OP_PATCH)
		op_patch(f);
	else if (op == FZ_OP_SYNC)
		op_sync(f);
	else
		op_burst(f, ring);
}

/* ---- custom payload coding ------------------------------------------------------ */

/* rte_custom_decode against doc/FORMAT.md, and encode/decode round trips. */
static void fz_custom(const uint8_t *data, size_t size)
{
	static uint64_t in[RTE_MAX_MSG_WORDS], out[RTE_MAX_MSG_WORDS];
	size_t words = size / 8 > RTE_MAX_MSG_WORDS - 2 ? RTE_MAX_MSG_WORDS - 2
	                                                : size / 8;
	size_t m = size > RTE_CUSTOM_MAX_BYTES ? RTE_CUSTOM_MAX_BYTES : size, n;

	memcpy(in, data, words * 8);
	FZ_CHECK(rte_custom_decode(in, 0, &n) == -1, "decode of 0 words");
	for (size_t w = 1; w <= words; w = w < 4 ? w + 1 : words + (w == words)) {
		unsigned last = ((const uint8_t *)in)[w * 8 - 1];
		int rc = rte_custom_decode(in, w, &n);

		FZ_CHECK(last <= w * 8 - 1 ? rc == 0 && n == w * 8 - 1 - last
		                           : rc == -1,
		         "decode of %zu words, last byte %u: %d", w, last, rc);
	}
	n = rte_custom_encode(data, m, out);
	FZ_CHECK(n == rte_custom_words(m) && n == (m + 8) / 8, "encode words");
	FZ_CHECK(rte_custom_decode(out, n, &n) == 0 && n == m &&
	         (m == 0 || !memcmp(out, data, m)), "round trip of %zu bytes", m);
}

/* ---- the entry point ---------------------------------------------------------------- */

/* Read one ring with rte_cursor_next_batch, recording as fz_drain_ring. */
static void fz_batch_ring(struct fz *f, rte_cursor *c, unsigned ring,
                          struct fz_rec *rec, unsigned k)
{
	static struct rte_event ev[FZ_BATCH_MAX];
	uint64_t bound = rte_cursor_layout(c)->ring_size_elements + 2, n = 0;
	int got;

	while ((got = rte_cursor_next_batch(c, ring, ev, k)) > 0) {
		FZ_CHECK((unsigned)got <= k, "batch of %d events for %u", got, k);
		for (int i = 0; i < got; i++) {
			FZ_CHECK(++n <= bound, "ring %u yields more than %llu events",
			         ring, (unsigned long long)bound);
			FZ_CHECK(ev[i].kind != RTE_EV_LOST || got == 1,
			         "a loss not returned alone");
			fz_check_fields(&ev[i], ring);
			fz_record(rec, fz_event_hash(&ev[i]));
		}
	}
	if (got < 0) {
		fz_check_ring_error(f, c, ring, got, NULL);
		fz_record(rec, FZ_ERR_MARK(got));
	}
}

/* rte_cursor_next_batch delivers what rte_cursor_next delivered, errors
 * included, whatever the batch size. */
static void fz_batch_compare(struct fz *f, rte_cursor *c,
                             const struct fz_rec *rec)
{
	struct fz_rec got = { 0 };
	unsigned k = 1 + f->poll_batch % FZ_BATCH_MAX;

	for (unsigned r = 0; r < rte_cursor_rings(c); r++)
		fz_batch_ring(f, c, r, &got, k);
	if (!got.overflow)
		FZ_CHECK(got.n == rec->n &&
		         (got.n == 0 || !memcmp(got.h, rec->h, got.n * sizeof *got.h)),
		         "next_batch (%u) delivered %zu events, next %zu", k, got.n,
		         rec->n);
	free(got.h);
}

/* Read one ring the raw way of a caller that walks the words itself (the
 * exporter): rte_cursor_peek_words, a walk that checks each length and
 * stops at the first that is 0 or runs past the words, rte_cursor_decode
 * of each message, rte_cursor_consume_words of the words walked;
 * recording as fz_drain_ring. */
static void fz_peek_ring(struct fz *f, rte_cursor *c, unsigned ring,
                         struct fz_rec *rec)
{
	uint64_t bound = rte_cursor_layout(c)->ring_size_elements + 2, n = 0, lost;
	const uint64_t *w;
	struct rte_event ev;
	int got;

	while ((got = rte_cursor_peek_words(c, ring, &w, &lost)) >= 0) {
		size_t i = 0;

		if (got == 0 && !lost)
			break;
		if (got == 0) { /* the loss rte_cursor_next reports as an event */
			FZ_CHECK(++n <= bound, "ring %u yields more than %llu events",
			         ring, (unsigned long long)bound);
			memset(&ev, 0, sizeof ev);
			ev.kind = RTE_EV_LOST;
			ev.ring = ring;
			ev.u.lost_words = lost;
			fz_record(rec, fz_event_hash(&ev));
			continue;
		}
		FZ_CHECK(rte_hdr_len(w[0]) >= 1 && rte_hdr_len(w[0]) <= (unsigned)got,
		         "peek: a first message of %u words in %d",
		         rte_hdr_len(w[0]), got);
		while (i < (size_t)got) {
			unsigned len = rte_hdr_len(w[i]);
			int d;

			if (len == 0 || len > (size_t)got - i)
				break;
			d = rte_cursor_decode(c, ring, w + i, &ev);
			i += len;
			if (d < 0) {
				got = d;
				goto failed;
			}
			if (d == 0)
				continue;
			FZ_CHECK(++n <= bound, "ring %u yields more than %llu events",
			         ring, (unsigned long long)bound);
			fz_check_fields(&ev, ring);
			fz_record(rec, fz_event_hash(&ev));
		}
		FZ_CHECK(i > 0 && rte_cursor_consume_words(c, ring, i) == RTE_OK,
		         "peek: %zu words of %d walked", i, got);
	}
failed:
	if (got < 0) {
		fz_check_ring_error(f, c, ring, got, NULL);
		fz_record(rec, FZ_ERR_MARK(got));
	}
}

/* The raw way delivers what rte_cursor_next delivered, errors included. */
static void fz_peek_compare(struct fz *f, rte_cursor *c,
                            const struct fz_rec *rec)
{
	struct fz_rec got = { 0 };

	for (unsigned r = 0; r < rte_cursor_rings(c); r++)
		fz_peek_ring(f, c, r, &got);
	if (!got.overflow)
		FZ_CHECK(got.n == rec->n &&
		         (got.n == 0 || !memcmp(got.h, rec->h, got.n * sizeof *got.h)),
		         "peek_words delivered %zu events, next %zu", got.n, rec->n);
	free(got.h);
}

/* Fresh cursors read the finished file: next, then poll, must agree. */
static void fz_final_reads(struct fz *f)
{
	struct fz_rec rec = { 0 };
	rte_cursor *a = fz_open(f), *b, *c, *d, *e;

	if (!a)
		return;
	fz_drain(f, a, &rec, NULL);
	b = fz_open(f);
	c = fz_open(f);
	d = fz_open(f);
	e = fz_open(f);
	FZ_CHECK(b && c && d && e, "second open of the same file failed");
	if (!rec.overflow) {
		fz_poll_compare(f, b, &rec);
		fz_poll_silent(c, &rec);
		fz_batch_compare(f, d, &rec);
		fz_peek_compare(f, e, &rec);
	}
	rte_cursor_close(e);
	rte_cursor_close(d);
	rte_cursor_close(c);
	rte_cursor_close(b);
	rte_cursor_close(a);
	free(rec.h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f;

	fz_custom(data, size);
	fz_setup(&f, data, size);
	while (f.in.n)
		fz_run_op(&f);
	if (f.live)
		fz_drain(&f, f.live, NULL, f.live_lost);
	fz_final_reads(&f);
	rte_cursor_close(f.live);
	munmap(f.map, f.map_len);
	for (uint64_t r = 0; r < f.l.max_domains; r++)
		free(f.w[r]);
	free(f.w);
	free(f.attached);
	free(f.live_lost);
	return 0;
}
