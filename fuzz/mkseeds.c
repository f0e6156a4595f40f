/*
 * mkseeds.c - write the seed corpus of the consumer fuzz target.
 *
 *   rte-fuzz-mkseeds OUTDIR [RINGFILE...]
 *
 * Writes into OUTDIR one input per scenario below, in the format of
 * fuzz_input.h: every message kind, rings that wrap while a live cursor
 * follows, many tiny rings, odd ring header sizes, and each documented way
 * a file can be broken (bad header words, sizes that overflow when
 * multiplied, a truncated file, a name without NUL, a length-0 message, a
 * tail beyond the ring). Each RINGFILE (a real ring file, e.g. an OCaml
 * 5.2 fixture) is converted into an input that rebuilds it exactly: its
 * layout, then one PATCH op per non-zero stretch of ring headers, ring data
 * and name slots. Exit status: 0, 1 if a RINGFILE has a layout the target
 * cannot build (it is skipped), 2 on a usage or I/O error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rte/format.h"
#include "fuzz_input.h"

/* ---- an input under construction --------------------------------------- */

struct seed {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct seed *s, uint64_t v, unsigned bytes)
{
	if (s->n + bytes > s->cap) {
		s->cap = (s->cap + bytes) * 2;
		s->p = realloc(s->p, s->cap);
		if (!s->p) {
			perror("rte-fuzz-mkseeds");
			exit(2);
		}
	}
	for (unsigned i = 0; i < bytes; i++)
		s->p[s->n++] = (uint8_t)(v >> (8 * i));
}

static void put_bytes(struct seed *s, const void *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(s, ((const uint8_t *)b)[i], 1);
}

static void prelude(struct seed *s, unsigned log2, unsigned domains,
                    unsigned flags, unsigned trim, unsigned batch, unsigned stop)
{
	s->n = 0;
	put(s, log2 - RTE_RING_LOG2_MIN, 1);
	put(s, domains - 1, 2);
	put(s, flags, 1);
	put(s, trim, 2);
	put(s, batch, 1);
	put(s, stop, 1);
}

/* The op byte for `ring`, with the u16 extension for rings >= 15. */
static void op(struct seed *s, enum fz_op kind, unsigned ring)
{
	put(s, fz_op_byte(kind, ring < FZ_RING_EXT ? ring : FZ_RING_EXT), 1);
	if (ring >= FZ_RING_EXT)
		put(s, ring, 2);
}

static void ev_id(struct seed *s, enum fz_op kind, unsigned ring, unsigned id)
{
	op(s, kind, ring);
	put(s, id, 2);
}

static void ev_val(struct seed *s, enum fz_op kind, unsigned ring, unsigned id,
                   uint64_t v)
{
	ev_id(s, kind, ring, id);
	put(s, v, 8);
}

static void custom(struct seed *s, unsigned ring, unsigned id, size_t n)
{
	ev_id(s, FZ_OP_CUSTOM, ring, id);
	put(s, n, 2);
	for (size_t i = 0; i < n; i++)
		put(s, (i * 37 + n) & 0xff, 1);
}

static void name(struct seed *s, unsigned id, const char *nm, size_t n)
{
	op(s, FZ_OP_NAME, 0);
	put(s, id, 2);
	put(s, n, 1);
	put_bytes(s, nm, n);
}

static void patch(struct seed *s, enum fz_region r, unsigned idx, uint32_t off,
                  const void *b, size_t n)
{
	op(s, FZ_OP_PATCH, 0);
	put(s, r, 1);
	put(s, idx, 2);
	put(s, off, 4);
	put(s, n, 2);
	put_bytes(s, b, n);
}

static void patch64(struct seed *s, enum fz_region r, unsigned idx,
                    uint32_t off, uint64_t v)
{
	patch(s, r, idx, off, &v, 8);
}

static void burst(struct seed *s, unsigned ring, unsigned n)
{
	op(s, FZ_OP_BURST, ring);
	put(s, n, 1);
}

static void sync_(struct seed *s)
{
	op(s, FZ_OP_SYNC, 0);
}

static const char *outdir;

static void save(const struct seed *s, const char *fname)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", outdir, fname);
	fp = fopen(path, "wb");
	if (!fp || fwrite(s->p, 1, s->n, fp) != s->n || fclose(fp) != 0) {
		fprintf(stderr, "rte-fuzz-mkseeds: %s: cannot write\n", path);
		exit(2);
	}
}

/* ---- well-formed streams ------------------------------------------------ */

static void names(struct seed *s)
{
	static const char odd[] = "we\"ird\\\x01\x7f\xc3\xa9";

	name(s, 0, "app.tick", 8);
	name(s, 1, "app.count", 9);
	name(s, 2, "app.work", 8);
	name(s, 3, "app.msg", 7);
	name(s, 4, odd, sizeof odd - 1);
	name(s, 8191, "rte.last_id", 11);
}

/* One of each message on `ring`, valid and unknown ids alike. */
static void every_kind(struct seed *s, unsigned ring)
{
	ev_val(s, FZ_OP_LIFECYCLE, ring, RTE_LC_RING_START, 4242);
	ev_val(s, FZ_OP_LIFECYCLE, ring, RTE_LC_DOMAIN_SPAWN, 4242);
	ev_id(s, FZ_OP_BEGIN, ring, RTE_P_MINOR);
	ev_val(s, FZ_OP_COUNTER, ring, RTE_C_MINOR_ALLOCATED, 123456);
	op(s, FZ_OP_ALLOC, ring);
	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		put(s, i * 3, 1);
	ev_id(s, FZ_OP_EXIT, ring, RTE_P_MINOR);
	op(s, FZ_OP_FLUSH, ring);
	ev_id(s, FZ_OP_UNIT, ring, 0);
	ev_val(s, FZ_OP_INT, ring, 1, (uint64_t)-77);
	ev_id(s, FZ_OP_SPAN_BEGIN, ring, 2);
	ev_id(s, FZ_OP_SPAN_END, ring, 2);
	custom(s, ring, 3, 0);
	custom(s, ring, 3, 5);
	custom(s, ring, 3, 8);
	custom(s, ring, 4, 1000);
	ev_id(s, FZ_OP_UNIT, ring, 8191);
	ev_id(s, FZ_OP_UNIT, ring, 77); /* never named */
	ev_id(s, FZ_OP_BEGIN, ring, 200); /* unknown phase */
	ev_val(s, FZ_OP_COUNTER, ring, 99, 1);
	ev_val(s, FZ_OP_LIFECYCLE, ring, 50, 1);
	ev_id(s, FZ_OP_LIFECYCLE, ring, RTE_LC_RING_STOP | FZ_LC_NO_PAYLOAD);
	put(s, 0, 8);
	op(s, FZ_OP_RAW, ring); /* unknown runtime type 9: skipped */
	put(s, rte_hdr_make(0, 0, 9, 1), 8);
	put(s, 1, 1);
	put(s, 5, 8);
	op(s, FZ_OP_RAW, ring); /* unknown user type 7: skipped */
	put(s, rte_hdr_make(0, 1, 7, 1), 8);
	put(s, 0, 1);
}

static void seeds_streams(struct seed *s)
{
	prelude(s, 10, 2, 0, 0, 3, 5);
	names(s);
	every_kind(s, 0);
	sync_(s);
	every_kind(s, 1);
	save(s, "every-kind");

	prelude(s, 6, 1, 0, 0, 0, 0); /* 64 words: wraps, pads, loses */
	names(s);
	burst(s, 0, 10);
	custom(s, 0, 3, 200);
	every_kind(s, 0);
	burst(s, 0, 3);
	save(s, "wrap");

	prelude(s, 5, 3, 0, 0, 1, 0); /* a live reader falls behind */
	names(s);
	for (unsigned i = 0; i < 6; i++) {
		burst(s, i % 3, 1 + 3 * i);
		custom(s, i % 3, 3, 40 + 30 * i);
		sync_(s);
	}
	save(s, "live-wrap");

	prelude(s, 4, 128, 0, 0, 7, 3); /* OCaml's 128 rings, tiny */
	names(s);
	for (unsigned r = 0; r < 128; r += 9) {
		every_kind(s, r);
		burst(s, r, 2);
	}
	sync_(s);
	ev_id(s, FZ_OP_UNIT, 127, 1);
	save(s, "many-tiny-rings");

	prelude(s, 4, 4096, 0, 0, 0, 0);
	ev_id(s, FZ_OP_UNIT, 4095, 1);
	ev_id(s, FZ_OP_UNIT, 2048, 1);
	save(s, "max-domains");

	for (unsigned h = 1; h < 4; h++) { /* ring header sizes 16, 24, 256 */
		char fname[32];

		prelude(s, 7, 3, h, 0, 2, 0);
		names(s);
		every_kind(s, 0);
		every_kind(s, 2);
		snprintf(fname, sizeof fname, "header-size-%u", fz_header_size(h));
		save(s, fname);
	}
}

/* ---- broken files ---------------------------------------------------------- */

/* A small valid file whose header word `w` is then replaced by v. */
static void bad_word(struct seed *s, unsigned w, uint64_t v, const char *fname)
{
	prelude(s, 6, 2, 0, 0, 0, 0);
	names(s);
	every_kind(s, 0);
	patch64(s, FZ_REG_FILE, 0, w * 8, v);
	save(s, fname);
}

static void seeds_headers(struct seed *s)
{
	bad_word(s, 0, 2, "hdr-version-2");
	bad_word(s, 1, 0, "hdr-no-domains");
	bad_word(s, 1, (uint64_t)1 << 62, "hdr-domains-overflow");
	bad_word(s, 2, 12, "hdr-ring-header-unaligned");
	bad_word(s, 3, 8 * 48, "hdr-ring-bytes-mismatch");
	bad_word(s, 4, 48, "hdr-ring-words-not-pow2");
	bad_word(s, 4, (uint64_t)1 << 61, "hdr-ring-words-overflow");
	bad_word(s, 5, 8, "hdr-headers-overlap-metadata");
	bad_word(s, 6, 64, "hdr-data-overlaps-headers");
	bad_word(s, 7, UINT64_MAX - 4095, "hdr-names-offset-overflow");
	bad_word(s, 7, 1 << 20, "hdr-names-inside-data");

	/* Sizes that overflow only when multiplied: 2^32-word rings times
	 * 2^31 domains would pass each range check alone. */
	prelude(s, 6, 2, 0, 0, 0, 0);
	patch64(s, FZ_REG_FILE, 0, 8, 4096);
	patch64(s, FZ_REG_FILE, 0, 24, (uint64_t)8 << 32);
	patch64(s, FZ_REG_FILE, 0, 32, (uint64_t)1 << 32);
	patch64(s, FZ_REG_FILE, 0, 48, 64 + 4096 * 80);
	patch64(s, FZ_REG_FILE, 0, 56, 64 + 4096 * 80 + ((uint64_t)4096 << 35));
	save(s, "hdr-product-overflow");

	prelude(s, 6, 2, FZ_FLAG_TRIM, 1, 0, 0);
	every_kind(s, 0);
	save(s, "truncated-by-1");
	prelude(s, 6, 2, FZ_FLAG_TRIM, FZ_TRIM_ABSOLUTE, 0, 0);
	save(s, "truncated-to-empty");
	prelude(s, 6, 2, FZ_FLAG_TRIM, FZ_TRIM_ABSOLUTE + 63, 0, 0);
	save(s, "truncated-to-63-bytes");
	prelude(s, 6, 2, FZ_FLAG_TRIM, FZ_TRIM_ABSOLUTE + 4096, 0, 0);
	every_kind(s, 0);
	save(s, "truncated-to-4096-bytes");
	/* A header that claims less than the file: the rest is ignored. */
	prelude(s, 6, 2, FZ_FLAG_TRIM, 4096, 0, 0);
	every_kind(s, 0);
	patch64(s, FZ_REG_FILE, 0, 56, 64 + 2 * 80 + 2 * 512 - 4096);
	save(s, "truncated-header-shrunk");
}

static void seeds_streams_broken(struct seed *s)
{
	uint64_t one = rte_hdr_make(1, 1, RTE_UMSG_UNIT, 0);

	prelude(s, 6, 2, 0, 0, 0, 0);
	names(s);
	name(s, 5, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	           "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	     128);
	every_kind(s, 1);
	ev_id(s, FZ_OP_UNIT, 0, 5);
	save(s, "name-without-nul");

	prelude(s, 6, 2, 0, 0, 0, 0);
	every_kind(s, 0);
	every_kind(s, 1);
	patch64(s, FZ_REG_RING_DATA, 0, 8 * 5, 0);
	save(s, "message-length-0");

	prelude(s, 6, 1, 0, 0, 0, 0);
	patch64(s, FZ_REG_RING_DATA, 0, 8 * 60, rte_hdr_make(9, 1, 0, 0));
	patch64(s, FZ_REG_RING_HEADER, 0, 0, 60);
	patch64(s, FZ_REG_RING_HEADER, 0, 8, 69);
	save(s, "message-past-ring-end");

	prelude(s, 6, 1, 0, 0, 0, 0);
	patch64(s, FZ_REG_RING_DATA, 0, 0, one);
	patch64(s, FZ_REG_RING_HEADER, 0, 8, 1);
	save(s, "one-word-message");

	prelude(s, 6, 1, 0, 0, 0, 0);
	patch64(s, FZ_REG_RING_DATA, 0, 0, rte_hdr_make(3, 0, RTE_MSG_ALLOC, 0));
	patch64(s, FZ_REG_RING_HEADER, 0, 8, 3);
	save(s, "alloc-too-short");

	prelude(s, 6, 1, 0, 0, 0, 0);
	op(s, FZ_OP_RAW, 0); /* a counter without its value word */
	put(s, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 5), 8);
	put(s, 0, 1);
	save(s, "counter-too-short");

	prelude(s, 6, 1, 0, 0, 0, 0);
	op(s, FZ_OP_RAW, 0); /* a user int without its value word */
	put(s, rte_hdr_make(0, 1, RTE_UMSG_INT, 1), 8);
	put(s, 0, 1);
	save(s, "user-int-too-short");

	prelude(s, 6, 1, 0, 0, 0, 0);
	custom(s, 0, 3, 16);
	patch64(s, FZ_REG_RING_DATA, 0, 8 * 4, (uint64_t)0xff << 56);
	save(s, "custom-bad-length-byte");

	prelude(s, 6, 2, 0, 0, 0, 0);
	every_kind(s, 0);
	sync_(s);
	patch64(s, FZ_REG_RING_HEADER, 0, 0, 1000);
	sync_(s);
	every_kind(s, 1);
	save(s, "head-past-tail");

	prelude(s, 6, 2, 0, 0, 0, 0);
	every_kind(s, 0);
	sync_(s);
	patch64(s, FZ_REG_RING_HEADER, 0, 8, 0);
	patch64(s, FZ_REG_RING_HEADER, 0, 0, 0);
	sync_(s);
	save(s, "tail-went-back");

	/* tail far beyond head + ring size: the ring claims more words than
	 * it has; a reader must not go round it forever. */
	prelude(s, 4, 1, 0, 0, 0, 0);
	burst(s, 0, 2);
	patch64(s, FZ_REG_RING_HEADER, 0, 8, (uint64_t)1 << 40);
	save(s, "tail-beyond-ring");
}

/* ---- real ring files ---------------------------------------------------------- */

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!fp || fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 ||
	    fseek(fp, 0, SEEK_SET) || !(buf = malloc((size_t)n + 1)) ||
	    fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		fprintf(stderr, "rte-fuzz-mkseeds: %s: cannot read\n", path);
		exit(2);
	}
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

/* One PATCH per non-zero stretch of [b, b + n), gaps under 4 words merged. */
static void patch_nonzero(struct seed *s, enum fz_region r, unsigned idx,
                          const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t start, end, zeros = 0;

		while (i < n && !b[i])
			i++;
		if (i == n)
			break;
		start = end = i;
		while (i < n && zeros < 32 && i - start < 0xffff) {
			zeros = b[i] ? 0 : zeros + 1;
			if (b[i])
				end = i + 1;
			i++;
		}
		patch(s, r, idx, (uint32_t)start, b + start, end - start);
	}
}

/* Returns the log2 of a layout the target builds identically, or -1. */
static int buildable(const uint64_t *w, size_t len)
{
	struct rte_layout l;
	unsigned log2 = 0, h;

	while (log2 < 63 && ((uint64_t)1 << log2) < w[4])
		log2++;
	for (h = 0; h < 4 && fz_header_size(h) != w[2]; h++)
		;
	if (w[0] != RTE_FORMAT_VERSION || h == 4 || w[1] < 1 || w[1] > 4096 ||
	    log2 < RTE_RING_LOG2_MIN || log2 > RTE_RING_LOG2_MIN + 12)
		return -1;
	fz_layout(&l, log2, (unsigned)w[1], (unsigned)w[2]);
	if (l.ring_size_elements != w[4] || l.ring_size_bytes != w[3] ||
	    l.headers_offset != w[5] || l.data_offset != w[6] ||
	    l.custom_events_offset != w[7] || l.total_size > len)
		return -1;
	return (int)log2;
}

static int seed_from_ring_file(struct seed *s, const char *path,
                               const char *fname)
{
	size_t len;
	uint8_t *b = read_all(path, &len);
	const uint64_t *w = (const uint64_t *)b;
	int log2 = len >= RTE_METADATA_BYTES ? buildable(w, len) : -1;
	unsigned h;

	if (log2 < 0) {
		fprintf(stderr, "rte-fuzz-mkseeds: %s: layout not buildable, skipped\n",
		        path);
		free(b);
		return 1;
	}
	for (h = 0; fz_header_size(h) != w[2]; h++)
		;
	prelude(s, (unsigned)log2, (unsigned)w[1], h, 0, 16, 0);
	for (unsigned r = 0; r < w[1]; r++) {
		patch_nonzero(s, FZ_REG_RING_HEADER, r, b + w[5] + r * w[2], 16);
		patch_nonzero(s, FZ_REG_RING_DATA, r, b + w[6] + r * w[3], w[3]);
	}
	for (unsigned k = 0; k < RTE_MAX_USER_EVENTS; k++)
		patch_nonzero(s, FZ_REG_NAME, k, b + w[7] + k * RTE_NAME_SLOT_BYTES,
		              RTE_NAME_SLOT_BYTES);
	save(s, fname);
	free(b);
	return 0;
}

/* "ring-DIR-BASE" for DIR/BASE.events[.x]: the fixture's scenario and pid. */
static const char *seed_name(const char *path)
{
	static char fname[160];
	char tmp[4096], *base, *dir, *dot;

	snprintf(tmp, sizeof tmp, "%s", path);
	base = strrchr(tmp, '/');
	if (!base) {
		base = tmp;
		dir = "";
	} else {
		*base++ = '\0';
		dir = strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp;
	}
	if ((dot = strchr(base, '.')))
		*dot = '\0';
	snprintf(fname, sizeof fname, "ring-%.64s-%.64s", dir, base);
	return fname;
}

int main(int argc, char **argv)
{
	struct seed s = { 0 };
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: rte-fuzz-mkseeds OUTDIR [RINGFILE...]\n");
		return 2;
	}
	outdir = argv[1];
	seeds_streams(&s);
	seeds_headers(&s);
	seeds_streams_broken(&s);
	for (int i = 2; i < argc; i++)
		rc |= seed_from_ring_file(&s, argv[i], seed_name(argv[i]));
	free(s.p);
	return rc;
}
