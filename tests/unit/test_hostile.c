/*
 * test_hostile.c - common/consumer/consumer.c on files crafted to be wrong: every
 * header inconsistency, every malformed message, truncated and odd files.
 * Each must give the documented error code (rte/error.h) and one message
 * naming the file, never a crash, a hang or a read outside the file.
 *
 * ASan cannot see reads past a mapped file inside its last page, so the
 * name slots are also tested in a file whose size is a multiple of the page
 * size, mapped with an inaccessible page right after it: an overread there
 * faults.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rte_test.h"

/* Open must fail with `code` and a message "PATH: problem". */
static void expect_open_fails(const char *path, int code)
{
	char err[512];
	rte_cursor *c = (rte_cursor *)&err; /* must be reset to NULL */
	size_t plen = strlen(path);
	int rc;

	memset(err, 'z', sizeof err);
	rc = rte_cursor_open(path, &c, err, sizeof err);
	if (rc != code)
		fail_msg("%s: rte_cursor_open = %d (%s), expected %d", path, rc, err,
		         code);
	assert_null(c);
	assert_true(strlen(err) > plen + 2);
	assert_memory_equal(err, path, plen);
	assert_memory_equal(err + plen, ": ", 2);
	print_message("    %s\n", err + plen + 2);
}

/* A valid 2-ring file of 2^4 words; the caller breaks it. */
static void base_file(struct t_file *f, const char *name)
{
	t_ring_file_create(f, name, 2, 4);
}

/* Rewrite header word `i` and expect open to fail with `code`. */
static void header_case(const char *name, unsigned i, uint64_t v, int code)
{
	struct t_file f;

	base_file(&f, name);
	*t_meta(&f, i) = v;
	expect_open_fails(f.path, code);
	t_ring_file_unmap(&f);
}

static void missing_empty_tiny_and_special_files_are_refused(void **state)
{
	char path[PATH_MAX];
	char ten[10] = "0123456789";
	uint64_t hdr[8] = { 1, 1, 80, 128, 16, 64, 144, 272 };

	(void)state;
	t_path(path, sizeof path, "does-not-exist.events");
	expect_open_fails(path, RTE_ENOENT);
	t_write_file(path, sizeof path, "empty.events", "", 0);
	expect_open_fails(path, RTE_ENOTRING);
	t_write_file(path, sizeof path, "ten.events", ten, sizeof ten);
	expect_open_fails(path, RTE_ENOTRING);
	t_write_file(path, sizeof path, "63.events", hdr, 63);
	expect_open_fails(path, RTE_ENOTRING);
	/* a whole valid header, nothing else */
	t_write_file(path, sizeof path, "64.events", hdr, 64);
	expect_open_fails(path, RTE_ETRUNCATED);
	expect_open_fails(t_tmpdir(), RTE_ENOTRING);
	expect_open_fails("/dev/null", RTE_ENOTRING);
	/* a FIFO with no writer: refused at once, never blocks */
	t_path(path, sizeof path, "fifo.events");
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_open_fails(path, RTE_ENOTRING);
}

static void bad_arguments_are_refused(void **state)
{
	rte_cursor *c;
	char err[64];

	(void)state;
	assert_int_equal(rte_cursor_open(NULL, &c, err, sizeof err), RTE_EINVAL);
	assert_int_equal(rte_cursor_open("x", NULL, NULL, 0), RTE_EINVAL);
	/* a tiny error buffer is still NUL-terminated */
	assert_int_equal(rte_cursor_open("/nonexistent/x.events", &c, err, 5),
	                 RTE_ENOENT);
	assert_int_equal(strlen(err), 4);
}

static void wrong_version_is_not_a_ring_file(void **state)
{
	(void)state;
	header_case("v0.events", 0, 0, RTE_ENOTRING);
	header_case("v2.events", 0, 2, RTE_ENOTRING);
	header_case("vmax.events", 0, UINT64_MAX, RTE_ENOTRING);
	header_case("vswap.events", 0, (uint64_t)1 << 56, RTE_ENOTRING);
}

static void absurd_max_domains_is_a_bad_header(void **state)
{
	(void)state;
	header_case("md0.events", 1, 0, RTE_EHEADER);
	header_case("md4097.events", 1, 4097, RTE_EHEADER);
	header_case("md2e40.events", 1, (uint64_t)1 << 40, RTE_EHEADER);
	header_case("mdmax.events", 1, UINT64_MAX, RTE_EHEADER);
	/* more rings than the file holds: the sections overlap */
	header_case("md3.events", 1, 3, RTE_EHEADER);
}

static void bad_ring_sizes_are_a_bad_header(void **state)
{
	struct t_file f;

	(void)state;
	/* not a power of two (bytes kept consistent) */
	base_file(&f, "pow2.events");
	*t_meta(&f, 3) = 8 * 12;
	*t_meta(&f, 4) = 12;
	expect_open_fails(f.path, RTE_EHEADER);
	t_ring_file_unmap(&f);
	header_case("elem0.events", 4, 0, RTE_EHEADER);
	header_case("elem1.events", 4, 1, RTE_EHEADER);
	/* ring_size_bytes != 8 * ring_size_elements */
	header_case("bytes.events", 3, 8 * 16 + 8, RTE_EHEADER);
	header_case("bytes0.events", 3, 0, RTE_EHEADER);
	/* 2^61 words of 8 bytes: 2^64 wraps to 0 in a naive check */
	base_file(&f, "wrapmul.events");
	*t_meta(&f, 3) = 0;
	*t_meta(&f, 4) = (uint64_t)1 << 61;
	expect_open_fails(f.path, RTE_EHEADER);
	t_ring_file_unmap(&f);
	/* 2^32 words per ring, 4096 rings: 2^47 bytes, far beyond the file */
	base_file(&f, "huge.events");
	*t_meta(&f, 1) = 4096;
	*t_meta(&f, 3) = (uint64_t)8 << 32;
	*t_meta(&f, 4) = (uint64_t)1 << 32;
	expect_open_fails(f.path, RTE_EHEADER);
	t_ring_file_unmap(&f);
	/* ring header size: too small, unaligned, absurd */
	header_case("rh8.events", 2, 8, RTE_EHEADER);
	header_case("rh81.events", 2, 81, RTE_EHEADER);
	header_case("rhmax.events", 2, UINT64_MAX, RTE_EHEADER);
}

static void offsets_beyond_the_file_are_refused(void **state)
{
	struct t_file f;

	(void)state;
	header_case("ho0.events", 5, 0, RTE_EHEADER);      /* over metadata */
	header_case("ho65.events", 5, 65, RTE_EHEADER);    /* unaligned */
	header_case("do-small.events", 6, 64, RTE_EHEADER); /* over headers */
	header_case("do-max.events", 6, UINT64_MAX - 7, RTE_EHEADER);
	header_case("ceo-max.events", 7, UINT64_MAX - 7, RTE_EHEADER);
	header_case("ceo-high.events", 7, (uint64_t)1 << 62,
	            RTE_ETRUNCATED);
	/* names section just past the end of the file */
	base_file(&f, "ceo-far.events");
	*t_meta(&f, 7) += 8;
	expect_open_fails(f.path, RTE_ETRUNCATED);
	t_ring_file_unmap(&f);
	/* everything consistent but shifted past the end */
	base_file(&f, "shift.events");
	*t_meta(&f, 6) += 1 << 20;
	*t_meta(&f, 7) += 1 << 20;
	expect_open_fails(f.path, RTE_ETRUNCATED);
	t_ring_file_unmap(&f);
}

static void truncated_file_is_refused(void **state)
{
	struct rte_layout l;
	struct t_file f;

	(void)state;
	assert_int_equal(rte_layout_compute(&l, 2, 4), 0);
	t_ring_file_create_layout(&f, "trunc1.events", &l, l.total_size - 1);
	expect_open_fails(f.path, RTE_ETRUNCATED);
	t_ring_file_unmap(&f);
	t_ring_file_create_layout(&f, "trunc-half.events", &l, l.total_size / 2);
	expect_open_fails(f.path, RTE_ETRUNCATED);
	t_ring_file_unmap(&f);
	/* larger than needed is fine: the header rules */
	t_ring_file_create_layout(&f, "longer.events", &l, l.total_size + 4096);
	rte_cursor_close(t_open(f.path));
	t_ring_file_unmap(&f);
}

/* ---- malformed rings --------------------------------------------------- */

/*
 * Read ring `ring` until it fails; expect `code`, an error message naming
 * the file and the ring, the error again on the next call (sticky), and
 * ring `other` still readable (it holds one begin event).
 */
static void expect_ring_fails(struct t_file *f, unsigned ring, int code,
                              unsigned other)
{
	rte_cursor *c = t_open(f->path);
	struct rte_event ev;
	char want[PATH_MAX + 32];
	int got, n = 0;

	while ((got = rte_cursor_next(c, ring, &ev)) == 1)
		assert_true(++n < 100);
	if (got != code)
		fail_msg("%s ring %u: got %d (%s), expected %d", f->path, ring, got,
		         rte_cursor_errmsg(c), code);
	snprintf(want, sizeof want, "%s: ring %u: ", f->path, ring);
	assert_memory_equal(rte_cursor_errmsg(c), want, strlen(want));
	assert_true(strlen(rte_cursor_errmsg(c)) > strlen(want));
	print_message("    %s\n", rte_cursor_errmsg(c) + strlen(f->path) + 2);
	assert_int_equal(rte_cursor_next(c, ring, &ev), code);
	assert_int_equal(rte_cursor_next(c, other, &ev), 1);
	assert_int_equal(ev.kind, RTE_EV_BEGIN);
	assert_int_equal(rte_cursor_next(c, other, &ev), 0);
	rte_cursor_close(c);
}

/* A 2-ring file, ring 1 with one good event; ring 0 gets `words` words
 * at physical index `at`, head = `head`, tail = `tail`. */
static void ring_case(const char *name, const uint64_t *words, unsigned n,
                      unsigned at, uint64_t head, uint64_t tail, int code)
{
	struct t_file f;
	struct rte_ring_writer w;
	uint64_t *hp, *data;

	base_file(&f, name);
	t_writer(&f, 1, &w);
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), 1), 0);
	hp = t_ring_head(&f, 0);
	data = t_ring_data(&f, 0);
	for (unsigned i = 0; i < n; i++)
		data[(at + i) % 16] = words[i];
	hp[0] = head;
	hp[1] = tail;
	expect_ring_fails(&f, 0, code, 1);
	t_ring_file_unmap(&f);
}

static uint64_t H(unsigned len, int user, unsigned type, unsigned id)
{
	return rte_hdr_make(len, user, type, id);
}

static void malformed_messages_are_corrupt(void **state)
{
	uint64_t m[16] = { 0 };

	(void)state;
	m[0] = H(0, 0, RTE_MSG_BEGIN, 1);
	ring_case("len0.events", m, 2, 0, 0, 2, RTE_ECORRUPT);
	m[0] = H(0, 0, RTE_MSG_INTERNAL, 0); /* a padding of length 0 too */
	ring_case("pad0.events", m, 2, 0, 0, 2, RTE_ECORRUPT);
	/* runs past the physical end: 4 words at index 14 of 16 */
	m[0] = H(4, 0, RTE_MSG_BEGIN, 1);
	ring_case("pastend.events", m, 1, 14, 14, 18, RTE_ECORRUPT);
	/* runs past the tail */
	m[0] = H(5, 0, RTE_MSG_COUNTER, 1);
	ring_case("pasttail.events", m, 1, 0, 0, 3, RTE_ECORRUPT);
	/* the longest length at the last word of the ring */
	m[0] = H(1023, 1, RTE_UMSG_CUSTOM, 1);
	ring_case("maxlen.events", m, 1, 15, 15, 1038, RTE_ECORRUPT);
	/* a counter, a user int, a lifecycle-less alloc, a custom: too short */
	m[0] = H(2, 0, RTE_MSG_COUNTER, 1);
	ring_case("counter2.events", m, 2, 0, 0, 2, RTE_ECORRUPT);
	m[0] = H(2, 1, RTE_UMSG_INT, 1);
	ring_case("int2.events", m, 2, 0, 0, 2, RTE_ECORRUPT);
	m[0] = H(10, 0, RTE_MSG_ALLOC, 0);
	ring_case("alloc10.events", m, 10, 0, 0, 10, RTE_ECORRUPT);
	m[0] = H(2, 1, RTE_UMSG_CUSTOM, 1);
	ring_case("custom2.events", m, 2, 0, 0, 2, RTE_ECORRUPT);
	/* one word that is not padding */
	m[0] = H(1, 0, RTE_MSG_BEGIN, 1);
	ring_case("oneword.events", m, 1, 0, 0, 1, RTE_ECORRUPT);
	m[0] = H(1, 1, RTE_UMSG_UNIT, 1);
	ring_case("oneuser.events", m, 1, 0, 0, 1, RTE_ECORRUPT);
}

/* One read of ring 0 the way `way` names (0 rte_cursor_next, 1 _batch,
 * 2 _words), past a loss (the words before head). */
static int read_way(rte_cursor *c, int way)
{
	struct rte_event ev[4];
	const uint64_t *w;
	uint64_t lost = 0;
	int got;

	do {
		if (way == 0)
			got = rte_cursor_next(c, 0, ev);
		else if (way == 1)
			got = rte_cursor_next_batch(c, 0, ev, 4);
		else
			got = rte_cursor_next_words(c, 0, &w, &lost);
	} while ((way < 2 && got == 1 && ev[0].kind == RTE_EV_LOST) ||
	         (way == 2 && got == 0 && lost));
	return got;
}

/* rte_cursor_next, _batch and _words run one loop over the copy of a
 * ring: each fails a ring whose framing is wrong (lengths, head and tail)
 * with the same error and message, and again on the next call. */
static void every_read_way_fails_a_bad_frame_alike(void **state)
{
	static const struct {
		const char *name;
		unsigned len, type, at;
		uint64_t head, tail;
	} cases[] = {
		{ "way-len0.events", 0, RTE_MSG_BEGIN, 0, 0, 2 },
		{ "way-pastend.events", 4, RTE_MSG_BEGIN, 14, 14, 18 },
		{ "way-pasttail.events", 5, RTE_MSG_COUNTER, 0, 0, 3 },
		{ "way-headtail.events", 2, RTE_MSG_BEGIN, 0, 5, 4 },
		{ "way-toofar.events", 2, RTE_MSG_BEGIN, 0, 0, 17 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct t_file f;
		char first[512] = "";

		base_file(&f, cases[i].name);
		t_ring_data(&f, 0)[cases[i].at] = H(cases[i].len, 0, cases[i].type, 1);
		t_ring_head(&f, 0)[0] = cases[i].head;
		t_ring_head(&f, 0)[1] = cases[i].tail;
		for (int way = 0; way < 3; way++) {
			rte_cursor *c = t_open(f.path);

			for (int again = 0; again < 2; again++) {
				int got = read_way(c, way);

				if (got != RTE_ECORRUPT)
					fail_msg("%s way %d call %d: got %d (%s)", f.path, way,
					         again, got, rte_cursor_errmsg(c));
			}
			if (way == 0)
				snprintf(first, sizeof first, "%s", rte_cursor_errmsg(c));
			assert_string_equal(rte_cursor_errmsg(c), first);
			rte_cursor_close(c);
		}
		print_message("    %s\n", first + strlen(f.path) + 2);
		t_ring_file_unmap(&f);
	}
}

static void custom_length_byte_past_the_payload_is_corrupt(void **state)
{
	uint64_t m[4] = { H(3, 1, RTE_UMSG_CUSTOM, 1), 7, 0, 0 };
	unsigned char *b = (unsigned char *)&m[2];

	(void)state;
	b[7] = 8; /* 1 payload word holds at most 7 bytes + the count */
	ring_case("custom8.events", m, 3, 0, 0, 3, RTE_ECORRUPT);
	b[7] = 255;
	ring_case("custom255.events", m, 3, 0, 0, 3, RTE_ECORRUPT);
	m[0] = H(4, 1, RTE_UMSG_CUSTOM, 1);
	b[15] = 16;
	ring_case("custom16.events", m, 4, 0, 0, 4, RTE_ECORRUPT);
}

static void head_past_tail_and_tail_going_back_are_corrupt(void **state)
{
	uint64_t m[4] = { H(2, 0, RTE_MSG_BEGIN, 1), 1, H(2, 0, RTE_MSG_BEGIN, 1), 2 };
	struct t_file f;
	rte_cursor *c;
	struct rte_event ev;

	(void)state;
	ring_case("headtail.events", m, 4, 0, 5, 4, RTE_ECORRUPT);
	ring_case("headmax.events", m, 4, 0, UINT64_MAX, 4, RTE_ECORRUPT);
	/* tail goes back under a reader */
	base_file(&f, "tailback.events");
	memcpy(t_ring_data(&f, 0), m, sizeof m);
	t_ring_head(&f, 0)[1] = 4;
	c = t_open(f.path);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	t_ring_head(&f, 0)[1] = 2;
	assert_int_equal(rte_cursor_next(c, 0, &ev), RTE_ECORRUPT);
	assert_non_null(strstr(rte_cursor_errmsg(c), f.path));
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

static void name_slot_without_nul_is_a_bad_name(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	char *slot;

	(void)state;
	base_file(&f, "name.events");
	t_writer(&f, 1, &w);
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), 1), 0);
	t_writer(&f, 0, &w);
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 1, RTE_UMSG_UNIT, 77), 1), 0);
	slot = (char *)f.base + f.l.custom_events_offset + 77 * RTE_NAME_SLOT_BYTES;
	memset(slot, 'x', RTE_NAME_SLOT_BYTES);
	expect_ring_fails(&f, 0, RTE_ENAME, 1);
	t_ring_file_unmap(&f);
}

static int count_cb(void *ud, unsigned ring, uint64_t ts, unsigned phase)
{
	(void)ring;
	(void)ts;
	(void)phase;
	++*(int *)ud;
	return 0;
}

static void poll_returns_the_error_of_a_corrupt_ring(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	struct rte_callbacks cb = { 0 };
	rte_cursor *c;
	size_t count = 99;
	int seen = 0;

	(void)state;
	cb.runtime_begin = count_cb;
	base_file(&f, "pollbad.events");
	t_writer(&f, 0, &w);
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), 1), 0);
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), 2), 0);
	t_ring_data(&f, 0)[2] = 0; /* second message: length 0 */
	c = t_open(f.path);
	assert_int_equal(rte_cursor_poll(c, &cb, &seen, 0, &count), RTE_ECORRUPT);
	assert_int_equal(count, 1);
	assert_int_equal(seen, 1);
	assert_non_null(strstr(rte_cursor_errmsg(c), f.path));
	assert_non_null(strstr(rte_cursor_errmsg(c), "ring 0"));
	/* sticky, and nothing is delivered twice */
	assert_int_equal(rte_cursor_poll(c, &cb, &seen, 0, &count), RTE_ECORRUPT);
	assert_int_equal(count, 0);
	assert_int_equal(seen, 1);
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

/* ---- a file that ends at a page end, with nothing readable after ------- */

/* Does a read-only mapping of `path` end at `end` (/proc/self/maps)? */
static int mapping_ends_at(const char *path, uintptr_t end)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	int found = 0;

	assert_non_null(m);
	while (fgets(line, sizeof line, m)) {
		unsigned long a, b;
		char perms[8];
		char *p = strchr(line, '/');

		if (p && sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3 &&
		    strncmp(p, path, strlen(path)) == 0 && p[strlen(path)] == '\n' &&
		    perms[0] == 'r' && perms[1] == '-' && b == end)
			found = 1;
	}
	fclose(m);
	return found;
}

/*
 * Open `path` so that the page after its mapping is inaccessible, by
 * leaving a PROT_NONE page after a hole of exactly the mapping's size
 * (mmap fills the highest hole that fits). Returns 1 if the mapping did
 * land there; the guard page is stored in *guard for the caller to unmap.
 */
static int open_guarded(const char *path, size_t len, rte_cursor **c,
                        void **guard)
{
	char *r = mmap(NULL, len + 4096, PROT_NONE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(r != MAP_FAILED);
	assert_int_equal(munmap(r, len), 0);
	*guard = r + len;
	*c = t_open(path);
	return mapping_ends_at(path, (uintptr_t)(r + len));
}

static void names_at_the_very_end_of_the_file_are_read_in_bounds(void **state)
{
	struct rte_layout l = {
		.version = 1, .max_domains = 1, .ring_header_size_bytes = 80,
		.ring_size_bytes = 4096, .ring_size_elements = 512,
		.headers_offset = 64, .data_offset = 4096,
		.custom_events_offset = 8192,
	};
	struct t_file f;
	struct rte_ring_writer w;
	struct rte_event ev;
	rte_cursor *c;
	void *guard;
	char *last;
	int guarded;

	(void)state;
	l.total_size = l.custom_events_offset + RTE_MAX_USER_EVENTS * RTE_NAME_SLOT_BYTES;
	assert_int_equal(l.total_size % 4096, 0);
	t_ring_file_create_layout(&f, "pageend.events", &l, 0);
	t_writer(&f, 0, &w);
	last = (char *)f.base + f.len - RTE_NAME_SLOT_BYTES;
	/* the longest name, its NUL the last byte of the file */
	memset(last, 'n', RTE_NAME_SLOT_BYTES - 1);
	last[RTE_NAME_SLOT_BYTES - 1] = '\0';
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 1, RTE_UMSG_UNIT, 8191), 1), 0);
	guarded = open_guarded(f.path, f.len, &c, &guard);
	print_message("    guard page after the mapping: %s\n",
	              guarded ? "yes" : "no (overreads would go unnoticed)");
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	assert_int_equal(strlen(ev.name), RTE_NAME_MAX);
	rte_cursor_close(c);
	munmap(guard, 4096);
	/* no NUL at all in the last slot */
	last[RTE_NAME_SLOT_BYTES - 1] = 'n';
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 1, RTE_UMSG_UNIT, 8191), 2), 0);
	guarded = open_guarded(f.path, f.len, &c, &guard);
	print_message("    guard page after the mapping: %s\n",
	              guarded ? "yes" : "no (overreads would go unnoticed)");
	assert_int_equal(rte_cursor_next(c, 0, &ev), RTE_ENAME);
	assert_non_null(strstr(rte_cursor_errmsg(c), f.path));
	rte_cursor_close(c);
	munmap(guard, 4096);
	t_ring_file_unmap(&f);
}

/* ---- random garbage ---------------------------------------------------- */

static void random_rings_never_crash_or_hang(void **state)
{
	struct t_file f;
	uint64_t rng = 12345, *data, *hp;

	(void)state;
	base_file(&f, "random.events");
	data = t_ring_data(&f, 0);
	hp = t_ring_head(&f, 0);
	for (int iter = 0; iter < 3000; iter++) {
		rte_cursor *c;
		struct rte_event ev;
		int got, n = 0;

		for (unsigned i = 0; i < 16; i++) {
			uint64_t r = t_rand(&rng);

			/* mostly plausible headers, sometimes anything */
			data[i] = r % 4 ? rte_hdr_make((unsigned)(r >> 8) % 24,
			                               (int)(r >> 16) & 1,
			                               (unsigned)(r >> 20) % 8,
			                               (unsigned)(r >> 24) % 8192)
			                : r;
		}
		hp[0] = t_rand(&rng) % 40;
		hp[1] = hp[0] + t_rand(&rng) % 40;
		if (iter % 7 == 0)
			hp[0] = t_rand(&rng);
		c = t_open(f.path);
		while ((got = rte_cursor_next(c, 0, &ev)) == 1) {
			char line[RTE_JSONL_MAX];

			rte_event_jsonl(line, sizeof line, &ev, -1);
			assert_true(++n <= 64);
		}
		assert_true(got == 0 || got == RTE_ECORRUPT || got == RTE_ENAME);
		rte_cursor_close(c);
	}
	t_ring_file_unmap(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_empty_tiny_and_special_files_are_refused),
		cmocka_unit_test(bad_arguments_are_refused),
		cmocka_unit_test(wrong_version_is_not_a_ring_file),
		cmocka_unit_test(absurd_max_domains_is_a_bad_header),
		cmocka_unit_test(bad_ring_sizes_are_a_bad_header),
		cmocka_unit_test(offsets_beyond_the_file_are_refused),
		cmocka_unit_test(truncated_file_is_refused),
		cmocka_unit_test(malformed_messages_are_corrupt),
		cmocka_unit_test(every_read_way_fails_a_bad_frame_alike),
		cmocka_unit_test(custom_length_byte_past_the_payload_is_corrupt),
		cmocka_unit_test(head_past_tail_and_tail_going_back_are_corrupt),
		cmocka_unit_test(name_slot_without_nul_is_a_bad_name),
		cmocka_unit_test(poll_returns_the_error_of_a_corrupt_ring),
		cmocka_unit_test(names_at_the_very_end_of_the_file_are_read_in_bounds),
		cmocka_unit_test(random_rings_never_crash_or_hang),
	};

	return cmocka_run_group_tests_name("hostile", tests, NULL, NULL);
}
