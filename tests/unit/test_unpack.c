/*
 * test_unpack.c - packed captures (common/format/packed.h, doc/FORMAT.md
 * 16.1) opened by the consumer (common/consumer/unpack.c): a packed file
 * made here with libzstd from a real ring file reads event for event as
 * that file, also after rte_cursor_release(); and every field of a
 * packed header made wrong is refused with RTE_EHEADER (or RTE_ENOTRING,
 * RTE_ETRUNCATED) and a message "PATH: packed capture: ...", never a
 * crash, a read outside what the file holds or RTE_ENOMEM (a total_size
 * too big to map is corrupt). And what rte-run's drain packs from
 * memory (tools/rte-run/pack.c, pack_pieces) reads as the ring file too;
 * where packing does not pay, or the pieces are wrong, nothing is made;
 * a spool that never left memory (tools/rte-run/capture.c) becomes a
 * capture packed where that pays and plain where it does not, its words
 * read back as they were drained either way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rte_test.h"
#include "capture.h"
#include "packed.h"
#include "pack.h"

#define MAXZ 65536

/* Without a sanitizer (whose allocator would not take glibc's blocks), a
 * malloc that fails once, at its g_fail_nth call from when g_calls was
 * reset: how a capture made in memory meets memory running out. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define MALLOC_FAILS 1
extern void *__libc_malloc(size_t n);
static unsigned g_fail_nth, g_calls;

void *malloc(size_t n)
{
	if (g_fail_nth && ++g_calls == g_fail_nth)
		return NULL;
	return __libc_malloc(n);
}
#endif

/* The packed form of f, its data given as extents {off, len} (nx of
 * them, at most 4): stored in *out (malloc'd), its length returned. */
static size_t pack(const struct t_file *f, const uint64_t (*x)[2], unsigned nx,
                   unsigned char **out)
{
	size_t head = (RTE_PACK_HEADER_WORDS + RTE_PACK_RECORD_WORDS * nx) * 8, at = head;
	unsigned char *b = malloc(head + nx * (size_t)MAXZ);
	uint64_t h[RTE_PACK_HEADER_WORDS] = { 0, f->len, nx, 0 };

	assert_non_null(b);
	memcpy(h, RTE_PACK_MAGIC, 8);
	memcpy(b, h, sizeof h);
	for (unsigned i = 0; i < nx; i++) {
		size_t z = ZSTD_compress(b + at, MAXZ, f->base + x[i][0], x[i][1], 1);
		uint64_t r[3] = { x[i][0], x[i][1], z };

		assert_false(ZSTD_isError(z));
		memcpy(b + sizeof h + i * sizeof r, r, sizeof r);
		at += z;
	}
	*out = b;
	return at;
}

/* A 2-ring file of 2^log2 words with ring 1 written past its end (if
 * log2 is 6: it wrapped, lost words) and ring 0 a few events. */
static void make_ring_file_of(struct t_file *f, const char *name, unsigned log2)
{
	struct rte_ring_writer w;

	t_ring_file_create(f, name, 2, log2);
	t_writer(f, 0, &w);
	for (int i = 0; i < 5; i++)
		rte_ring_write1(&w, rte_hdr_make(0, 1, RTE_UMSG_INT, 3), 100 + (uint64_t)i,
		                (uint64_t)i);
	t_writer(f, 1, &w);
	for (int i = 0; i < 100; i++)
		rte_ring_write1(&w, rte_hdr_make(0, 1, RTE_UMSG_INT, 4), 1000 + (uint64_t)i,
		                (uint64_t)i * 7);
	t_set_name(f, 3, "three");
	t_set_name(f, 4, "four");
}

static void make_ring_file(struct t_file *f, const char *name)
{
	make_ring_file_of(f, name, 6);
}

/* Every event of both rings of a and b, compared. */
static void same_events(rte_cursor *a, rte_cursor *b)
{
	for (unsigned r = 0; r < 2; r++) {
		struct rte_event ea, eb;
		int na, nb, n = 0;

		do {
			na = rte_cursor_next(a, r, &ea);
			nb = rte_cursor_next(b, r, &eb);
			assert_int_equal(na, nb);
			if (na > 0) {
				assert_int_equal(ea.kind, eb.kind);
				assert_int_equal(ea.ts, eb.ts);
				assert_int_equal(ea.u.value, eb.u.value);
				if (ea.name || eb.name)
					assert_string_equal(ea.name, eb.name);
				n++;
			}
		} while (na > 0);
		assert_true(n > 0);
	}
}

static void a_packed_file_reads_as_its_ring_file(void **state)
{
	struct t_file f;
	char path[PATH_MAX];
	unsigned char *p;
	size_t n;
	uint64_t whole[1][2], parts[3][2];
	rte_cursor *a, *b;

	(void)state;
	make_ring_file(&f, "src.events");
	whole[0][0] = 0;
	whole[0][1] = f.len;
	n = pack(&f, whole, 1, &p);
	t_write_file(path, sizeof path, "whole.events", p, n);
	free(p);
	a = t_open(f.path);
	b = t_open(path);
	same_events(a, b);
	rte_cursor_close(a);
	rte_cursor_close(b);
	/* Extents with holes between them (the headers, the rings, the names):
	 * what lies outside reads as zeros, as in a sparse file. */
	parts[0][0] = 0;
	parts[0][1] = f.l.data_offset;
	parts[1][0] = f.l.data_offset;
	parts[1][1] = f.l.custom_events_offset - f.l.data_offset;
	parts[2][0] = f.l.custom_events_offset;
	parts[2][1] = 5 * RTE_NAME_SLOT_BYTES;
	n = pack(&f, (const uint64_t (*)[2])parts, 3, &p);
	t_write_file(path, sizeof path, "parts.events", p, n);
	free(p);
	a = t_open(f.path);
	b = t_open(path);
	/* Released and mapped again: unpacked again. */
	assert_int_equal(rte_cursor_release(b), RTE_OK);
	same_events(a, b);
	rte_cursor_close(a);
	rte_cursor_close(b);
	t_ring_file_unmap(&f);
}

/* The packed file p (n bytes) with word i set to v must be refused. */
static void refused(const char *name, const unsigned char *p, size_t n, unsigned i, uint64_t v)
{
	char path[PATH_MAX], err[512];
	unsigned char *q = malloc(n);
	rte_cursor *c = NULL;
	int rc;

	assert_non_null(q);
	memcpy(q, p, n);
	if (i != ~0u)
		memcpy(q + 8 * i, &v, 8);
	t_write_file(path, sizeof path, name, q, n);
	rc = rte_cursor_open(path, &c, err, sizeof err);
	if (rc != RTE_EHEADER && rc != RTE_ENOTRING && rc != RTE_ETRUNCATED)
		fail_msg("%s: rte_cursor_open = %d (%s)", name, rc, err);
	assert_null(c);
	assert_non_null(strstr(err, ": packed capture"));
	print_message("    %s: %s\n", name, strstr(err, ": packed") + 2);
	free(q);
}

static void every_bad_field_is_refused(void **state)
{
	struct t_file f;
	unsigned char *p;
	size_t n;
	uint64_t x[2][2];

	(void)state;
	make_ring_file(&f, "src2.events");
	x[0][0] = 0;
	x[0][1] = f.l.data_offset;
	x[1][0] = f.l.data_offset;
	x[1][1] = f.l.custom_events_offset - f.l.data_offset;
	n = pack(&f, (const uint64_t (*)[2])x, 2, &p);
	refused("no-extents.events", p, n, 2, 0);
	refused("many-extents.events", p, n, 2, RTE_PACK_MAX_EXTENTS + 1);
	refused("extents-past-end.events", p, n, 2, 3);
	refused("reserved.events", p, n, 3, 1);
	refused("total-zero.events", p, n, 1, 0);
	refused("total-huge.events", p, n, 1, UINT64_MAX);
	/* past what a capture can be, or not the ring file's: were ENOMEM */
	refused("total-2^63.events", p, n, 1, INT64_MAX);
	refused("total-6e16.events", p, n, 1, 60000000000000000ull);
	refused("total-1.4e15.events", p, n, 1, 1402145149304832ull);
	refused("total-max.events", p, n, 1, RTE_PACK_MAX_TOTAL);
	refused("total-under-header.events", p, n, 1, f.len - 8);
	refused("ext0-not-at-0.events", p, n, 4, 8);
	refused("ext0-short.events", p, n, 5, RTE_METADATA_BYTES - 8);
	refused("total-not-header.events", p, n, 1, f.len + 4096);
	refused("total-small.events", p, n, 1, 32);
	refused("ext-past-total.events", p, n, 4, f.len);
	refused("ext-len-wraps.events", p, n, 5, UINT64_MAX - 10);
	refused("ext-empty.events", p, n, 5, 0);
	refused("ext-overlap.events", p, n, 7, 8);
	/* extent 0 (the header) is checked first: the same on extent 1 */
	refused("ext1-past-total.events", p, n, 7, f.len);
	refused("ext1-len-wraps.events", p, n, 8, UINT64_MAX - 10);
	refused("ext1-empty.events", p, n, 8, 0);
	refused("zlen1-zero.events", p, n, 9, 0);
	refused("zlen1-past-file.events", p, n, 9, n);
	refused("zlen-zero.events", p, n, 6, 0);
	refused("zlen-past-file.events", p, n, 6, n);
	refused("zlen-short.events", p, n, 6, 5);
	refused("len-not-frame.events", p, n, 5, x[0][1] - 8);
	/* cut short, one byte more than the frames */
	refused("cut.events", p, n - 1, ~0u, 0);
	{
		unsigned char *q = calloc(1, n + 1);

		memcpy(q, p, n);
		refused("trailing.events", q, n + 1, ~0u, 0);
		free(q);
	}
	refused("header-only.events", p, 24, ~0u, 0);
	free(p);
	t_ring_file_unmap(&f);
}

/* f's pages that are not all zero, each a piece, the first one cut in
 * two (pieces of one extent); *np set. */
static struct pack_piece *pieces_of(const struct t_file *f, size_t *np)
{
	static const unsigned char zero[4096];
	struct pack_piece *x = calloc(f->len / 4096 + 2, sizeof *x);
	size_t n = 0;

	assert_non_null(x);
	for (size_t at = 0; at < f->len; at += 4096) {
		size_t len = f->len - at < 4096 ? f->len - at : 4096;

		if (!memcmp(f->base + at, zero, len))
			continue;
		if (at == 0) {
			x[n++] = (struct pack_piece){ 0, 100, f->base };
			x[n++] = (struct pack_piece){ 100, len - 100, f->base + 100 };
		} else {
			x[n++] = (struct pack_piece){ at, len, f->base + at };
		}
	}
	*np = n;
	return x;
}

static void drain_pieces_read_as_their_ring_file(void **state)
{
	struct packer *pk = packer_new();
	struct t_file f;
	char path[PATH_MAX], err[512];
	struct pack_piece *x;
	uint64_t h[RTE_PACK_HEADER_WORDS], runs = 0;
	size_t n;
	rte_cursor *a, *b;
	FILE *in;

	(void)state;
	assert_non_null(pk);
	/* rings of 2^10 words: headers, rings and names on pages of their
	 * own, as in a capture (one page of data never pays) */
	make_ring_file_of(&f, "pieces-src.events", 10);
	x = pieces_of(&f, &n);
	for (size_t i = 0; i < n; i++)
		runs += !i || x[i].off != x[i - 1].off + x[i - 1].len;
	assert_true(n > runs); /* the cut page is one extent */
	t_path(path, sizeof path, "pieces.events");
	assert_int_equal(pack_pieces(pk, path, f.len, x, n, err, sizeof err), 1);
	in = fopen(path, "rb");
	assert_non_null(in);
	assert_int_equal(fread(h, 8, RTE_PACK_HEADER_WORDS, in), RTE_PACK_HEADER_WORDS);
	fclose(in);
	assert_memory_equal(h, RTE_PACK_MAGIC, 8);
	assert_int_equal(h[1], f.len);
	assert_int_equal(h[2], runs);
	a = t_open(f.path);
	b = t_open(path);
	same_events(a, b);
	rte_cursor_close(a);
	rte_cursor_close(b);
	/* The file exists: O_EXCL refuses it, and it is left as it was. */
	{
		struct stat st0, st1;

		assert_int_equal(stat(path, &st0), 0);
		assert_int_equal(pack_pieces(pk, path, f.len, x, n, err, sizeof err), -1);
		assert_int_equal(stat(path, &st1), 0);
		assert_int_equal(st0.st_size, st1.st_size);
		assert_int_equal(st0.st_ino, st1.st_ino);
		assert_int_equal(st0.st_mtim.tv_nsec, st1.st_mtim.tv_nsec);
	}
	a = t_open(f.path);
	b = t_open(path);
	same_events(a, b);
	rte_cursor_close(a);
	rte_cursor_close(b);
	free(x);
	t_ring_file_unmap(&f);
	packer_free(pk);
}

/* Pieces less than a page apart: one extent, the zeros between them in
 * its frame; one a page or more away: an extent of its own. */
static void drain_pieces_near_each_other_are_one_extent(void **state)
{
	struct packer *pk = packer_new();
	char path[PATH_MAX], err[512], a[64], b[16], c[100], d[100];
	struct pack_piece x[4];
	unsigned char *f, *want = calloc(1, 300), *got = malloc(300);
	uint64_t h[RTE_PACK_HEADER_WORDS + 2 * RTE_PACK_RECORD_WORDS];
	size_t len;
	FILE *in;

	(void)state;
	assert_non_null(pk);
	assert_non_null(want);
	assert_non_null(got);
	memset(a, 'a', sizeof a);
	memset(b, 'b', sizeof b);
	memset(c, 'c', sizeof c);
	memset(d, 'd', sizeof d);
	x[0] = (struct pack_piece){ 0, sizeof a, a };
	x[1] = (struct pack_piece){ 80, sizeof b, b };
	x[2] = (struct pack_piece){ 200, sizeof c, c };
	x[3] = (struct pack_piece){ 200 + 4096 + 100, sizeof d, d };
	memcpy(want, a, sizeof a);
	memcpy(want + 80, b, sizeof b);
	memcpy(want + 200, c, sizeof c);
	t_path(path, sizeof path, "near.events");
	assert_int_equal(pack_pieces(pk, path, 1 << 20, x, 4, err, sizeof err), 1);
	in = fopen(path, "rb");
	assert_non_null(in);
	f = malloc(65536);
	assert_non_null(f);
	len = fread(f, 1, 65536, in);
	fclose(in);
	memcpy(h, f, sizeof h);
	assert_int_equal(h[2], 2);
	assert_int_equal(h[4], 0);
	assert_int_equal(h[5], 300);
	assert_int_equal(h[7], 200 + 4096 + 100);
	assert_int_equal(h[8], sizeof d);
	assert_true(sizeof h + h[6] + h[9] == len);
	assert_int_equal(ZSTD_decompress(got, 300, f + sizeof h, h[6]), 300);
	assert_memory_equal(got, want, 300);
	assert_int_equal(ZSTD_decompress(got, 300, f + sizeof h + h[6], h[9]), sizeof d);
	assert_memory_equal(got, d, sizeof d);
	free(f);
	free(want);
	free(got);
	packer_free(pk);
}

static void drain_pieces_that_do_not_pay_or_are_wrong_make_nothing(void **state)
{
	struct packer *pk = packer_new();
	char path[PATH_MAX], err[512];
	unsigned char *noise = malloc(65536);
	uint64_t seed = 42;
	struct pack_piece x[2];

	(void)state;
	assert_non_null(pk);
	assert_non_null(noise);
	for (size_t i = 0; i < 65536; i += 8) {
		uint64_t r = t_rand(&seed);

		memcpy(noise + i, &r, 8);
	}
	t_path(path, sizeof path, "noise.events");
	x[0] = (struct pack_piece){ 0, 65536, noise };
	assert_int_equal(pack_pieces(pk, path, 1 << 20, x, 1, err, sizeof err), 0);
	assert_int_equal(access(path, F_OK), -1);
	/* overlapping, out of order, empty, past the end: refused */
	x[0] = (struct pack_piece){ 0, 4096, noise };
	x[1] = (struct pack_piece){ 4000, 100, noise };
	assert_int_equal(pack_pieces(pk, path, 1 << 20, x, 2, err, sizeof err), -1);
	x[0] = (struct pack_piece){ 8192, 100, noise };
	x[1] = (struct pack_piece){ 0, 100, noise };
	assert_int_equal(pack_pieces(pk, path, 1 << 20, x, 2, err, sizeof err), -1);
	x[0] = (struct pack_piece){ 0, 4096, noise };
	x[1] = (struct pack_piece){ 8192, 0, noise };
	assert_int_equal(pack_pieces(pk, path, 1 << 20, x, 2, err, sizeof err), -1);
	x[1] = (struct pack_piece){ (1 << 20) - 10, 100, noise };
	assert_int_equal(pack_pieces(pk, path, 1 << 20, x, 2, err, sizeof err), -1);
	assert_int_equal(access(path, F_OK), -1);
	free(noise);
	packer_free(pk);
}

/* The words of ring 0 of the file at path, in order, into w (cap
 * words); their count. */
static size_t ring0_words(const char *path, uint64_t *w, size_t cap)
{
	rte_cursor *c = t_open(path);
	const uint64_t *got;
	uint64_t lost;
	size_t n = 0;
	int k;

	while ((k = rte_cursor_next_words(c, 0, &got, &lost)) > 0) {
		assert_true(n + (size_t)k <= cap);
		memcpy(w + n, got, (size_t)k * 8);
		n += (size_t)k;
	}
	assert_int_equal(k, 0);
	assert_int_equal(lost, 0);
	rte_cursor_close(c);
	return n;
}

/* A spool of one ring given `msgs` messages of `len` words (INT events if
 * len is 3, else custom ones of random payload), finished with a packer:
 * *packed as expected, and its words read back as appended. */
static void spool_capture(const char *name, unsigned msgs, unsigned len, int expect)
{
	struct packer *pk = packer_new();
	struct t_file f;
	struct cap_spool *sp;
	char path[PATH_MAX], spath[PATH_MAX], err[512], head[8];
	size_t total = (size_t)msgs * len, n;
	uint64_t *w = malloc(total * 8), *back = malloc(total * 8), seed = 7;
	int fd, packed;
	FILE *in;

	assert_non_null(pk);
	assert_non_null(w);
	assert_non_null(back);
	t_ring_file_create(&f, "spool-src.events", 1, 12);
	t_set_name(&f, 5, "blob");
	for (unsigned m = 0; m < msgs; m++) {
		uint64_t *msg = w + (size_t)m * len;

		msg[0] = rte_hdr_make(len, 1, len == 3 ? RTE_UMSG_INT : RTE_UMSG_CUSTOM, 5);
		msg[1] = 1000 + m;
		for (unsigned i = 2; i < len; i++)
			msg[i] = len == 3 ? m : t_rand(&seed);
	}
	t_path(spath, sizeof spath, "test.spool");
	sp = cap_open(spath, 1);
	assert_non_null(sp);
	for (unsigned m = 0; m < msgs; m++)
		assert_int_equal(cap_append(sp, 0, w + (size_t)m * len, len), 0);
	assert_int_equal(cap_flush(sp), 0);
	assert_int_equal(access(spath, F_OK), -1); /* all in memory */
	fd = open(f.path, O_RDONLY);
	assert_true(fd >= 0);
	t_path(path, sizeof path, name);
	assert_int_equal(cap_finish(sp, path, fd, f.l.custom_events_offset, pk, &packed, err,
	                            sizeof err), 0);
	close(fd);
	assert_int_equal(packed, expect);
	assert_string_equal(err, "");
	in = fopen(path, "rb");
	assert_non_null(in);
	assert_int_equal(fread(head, 1, 8, in), 8);
	fclose(in);
	assert_int_equal(!memcmp(head, RTE_PACK_MAGIC, 8), expect);
	n = ring0_words(path, back, total);
	assert_int_equal(n, total);
	assert_memory_equal(back, w, total * 8);
	{
		rte_cursor *c = t_open(path);
		struct rte_event e;

		assert_true(rte_cursor_next(c, 0, &e) > 0);
		assert_string_equal(e.name, "blob"); /* the name slots copied */
		rte_cursor_close(c);
	}
	t_ring_file_unmap(&f);
	unlink(f.path);
	free(w);
	free(back);
	packer_free(pk);
}

#ifdef MALLOC_FAILS
/* A spool of one ring holding `msgs` INT events (their words in w), all
 * in memory. */
static struct cap_spool *int_spool(uint64_t *w, unsigned msgs)
{
	char spath[PATH_MAX];
	struct cap_spool *sp;

	for (unsigned m = 0; m < msgs; m++) {
		w[3 * m] = rte_hdr_make(3, 1, RTE_UMSG_INT, 5);
		w[3 * m + 1] = 1000 + m;
		w[3 * m + 2] = m;
	}
	t_path(spath, sizeof spath, "oom.spool");
	sp = cap_open(spath, 1);
	assert_non_null(sp);
	for (unsigned m = 0; m < msgs; m++)
		assert_int_equal(cap_append(sp, 0, w + 3 * m, 3), 0);
	assert_int_equal(cap_flush(sp), 0);
	return sp;
}
#endif

/* Each allocation of cap_finish made to fail in turn: a capture whose
 * pieces cannot be had is made as a file instead (plain, *packed -1),
 * every other outcome is a readable capture or a clear failure with no
 * file left. */
static void a_capture_out_of_memory_is_made_as_a_file(void **state)
{
#ifdef MALLOC_FAILS
	struct packer *pk = packer_new();
	struct t_file f;
	char path[PATH_MAX], err[512];
	uint64_t w[3 * 500], back[3 * 500];
	int fd, packed, rc, fell_back = 0, whole = 0;

	(void)state;
	assert_non_null(pk);
	t_ring_file_create(&f, "oom-src.events", 1, 12);
	t_set_name(&f, 5, "blob");
	fd = open(f.path, O_RDONLY);
	assert_true(fd >= 0);
	t_path(path, sizeof path, "oom.events");
	for (unsigned nth = 1; nth <= 40; nth++) {
		struct cap_spool *sp = int_spool(w, 500);

		unlink(path);
		g_calls = 0;
		g_fail_nth = nth;
		rc = cap_finish(sp, path, fd, f.l.custom_events_offset, pk, &packed, err,
		                sizeof err);
		g_fail_nth = 0;
		if (rc < 0) {
			assert_true(err[0] != '\0');
			assert_int_equal(access(path, F_OK), -1);
			continue;
		}
		assert_int_equal(ring0_words(path, back, 3 * 500), 3 * 500);
		assert_memory_equal(back, w, sizeof w);
		fell_back += packed == -1;
		whole += packed == 1;
		if (packed == -1)
			assert_string_equal(err, "");
	}
	assert_true(fell_back > 0); /* the pieces failed: made as a file */
	assert_true(whole > 0);     /* no allocation of it failed: packed */
	close(fd);
	t_ring_file_unmap(&f);
	unlink(f.path);
	packer_free(pk);
#else
	(void)state;
	skip(); /* a sanitizer's allocator: no failing malloc of ours */
#endif
}

static void a_spool_in_memory_becomes_a_packed_capture(void **state)
{
	(void)state;
	spool_capture("spool-packed.events", 2000, 3, 1);
}

static void a_spool_of_noise_becomes_a_plain_capture(void **state)
{
	(void)state;
	/* 60 messages of 1000 random words: packed is no smaller */
	spool_capture("spool-plain.events", 60, 1000, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_packed_file_reads_as_its_ring_file),
		cmocka_unit_test(every_bad_field_is_refused),
		cmocka_unit_test(drain_pieces_read_as_their_ring_file),
		cmocka_unit_test(drain_pieces_near_each_other_are_one_extent),
		cmocka_unit_test(drain_pieces_that_do_not_pay_or_are_wrong_make_nothing),
		cmocka_unit_test(a_spool_in_memory_becomes_a_packed_capture),
		cmocka_unit_test(a_spool_of_noise_becomes_a_plain_capture),
		cmocka_unit_test(a_capture_out_of_memory_is_made_as_a_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
