/*
 * test_consumer.c - common/consumer/consumer.c on well-formed files: every kind of
 * message, every runtime id and user name, signed values, custom payloads
 * of every length, written by the real ring writer into a real file and
 * read back through rte_cursor_next() and rte_cursor_poll().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rte_test.h"
#include "rundir.h"

/* ---- what was written --------------------------------------------------- */

struct exp {
	enum rte_event_kind kind;
	unsigned ring, id;
	uint64_t ts;
	const char *name; /* NULL: expect NULL */
	uint64_t u;       /* counter, data, value or lost words */
	uint64_t buckets[RTE_ALLOC_BUCKETS];
	const unsigned char *bytes;
	size_t len;
};

struct explist {
	struct exp *e;
	size_t n, cap;
};

static struct exp *exp_add(struct explist *l, enum rte_event_kind k,
                           unsigned ring, unsigned id, uint64_t ts,
                           const char *name)
{
	struct exp *e;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->e = realloc(l->e, l->cap * sizeof *l->e);
		assert_non_null(l->e);
	}
	e = &l->e[l->n++];
	memset(e, 0, sizeof *e);
	e->kind = k;
	e->ring = ring;
	e->id = id;
	e->ts = ts;
	e->name = name;
	return e;
}

static void check_event(const struct rte_event *ev, const struct exp *e)
{
	assert_int_equal(ev->kind, e->kind);
	assert_int_equal(ev->ring, e->ring);
	if (e->kind == RTE_EV_LOST) {
		assert_int_equal(ev->u.lost_words, e->u);
		return;
	}
	assert_int_equal(ev->id, e->id);
	assert_int_equal(ev->ts, e->ts);
	if (e->name)
		assert_string_equal(ev->name, e->name);
	else
		assert_null(ev->name);
	switch (e->kind) {
	case RTE_EV_COUNTER:
		assert_true(ev->u.counter == e->u);
		break;
	case RTE_EV_LIFECYCLE:
		assert_true(ev->u.data == (int64_t)e->u);
		break;
	case RTE_EV_USER_INT:
		assert_true(ev->u.value == (int64_t)e->u);
		break;
	case RTE_EV_ALLOC:
		assert_memory_equal(ev->u.buckets, e->buckets, sizeof e->buckets);
		break;
	case RTE_EV_USER_CUSTOM:
		assert_int_equal(ev->u.custom.len, e->len);
		if (e->len)
			assert_memory_equal(ev->u.custom.bytes, e->bytes, e->len);
		break;
	default:
		break;
	}
}

/* Set: read_and_check() reads through rte_cursor_next_words() (1) or
 * rte_cursor_peek_words() (2) and rte_cursor_decode() instead of
 * rte_cursor_next(). */
static int g_words;

static int next_via_words(rte_cursor *c, unsigned ring, struct rte_event *ev);

/* rte_cursor_next() the way of a peeking caller: walk the words peeked,
 * each whole message taken (consumed) and decoded, up to the first one
 * the words cut; then peek again. */
static int next_via_peek(rte_cursor *c, unsigned ring, struct rte_event *ev)
{
	static const uint64_t *w;
	static size_t n;
	uint64_t lost;
	int got;

	for (;;) {
		while (n > 0) {
			unsigned len = rte_hdr_len(w[0]);
			const uint64_t *m = w;

			if (len == 0 || len > n) {
				n = 0; /* cut: the next peek copies it again */
				break;
			}
			assert_int_equal(rte_cursor_consume_words(c, ring, len), RTE_OK);
			w += len;
			n -= len;
			got = rte_cursor_decode(c, ring, m, ev);
			if (got != 0)
				return got;
		}
		got = rte_cursor_peek_words(c, ring, &w, &lost);
		if (got == 0 && lost) {
			memset(ev, 0, sizeof *ev);
			ev->kind = RTE_EV_LOST;
			ev->ring = ring;
			ev->u.lost_words = lost;
			return 1;
		}
		if (got <= 0)
			return got;
		assert_true(rte_hdr_len(w[0]) >= 1 && rte_hdr_len(w[0]) <= (unsigned)got);
		n = (size_t)got;
	}
}

static int next_via(rte_cursor *c, unsigned ring, struct rte_event *ev)
{
	return g_words == 2 ? next_via_peek(c, ring, ev)
	       : g_words ? next_via_words(c, ring, ev) : rte_cursor_next(c, ring, ev);
}

/* rte_cursor_next() the raw way: the messages of the last words read, one
 * by one, decoded; a loss as the RTE_EV_LOST event. */
static int next_via_words(rte_cursor *c, unsigned ring, struct rte_event *ev)
{
	static const uint64_t *w;
	static int n;
	uint64_t lost;

	for (;;) {
		while (n > 0) {
			unsigned len = rte_hdr_len(w[0]);
			const uint64_t *m = w;
			int got;

			assert_true(len >= 1 && (int)len <= n);
			w += len;
			n -= (int)len;
			got = rte_cursor_decode(c, ring, m, ev);
			if (got != 0)
				return got;
		}
		n = rte_cursor_next_words(c, ring, &w, &lost);
		if (n == 0 && lost) {
			memset(ev, 0, sizeof *ev);
			ev->kind = RTE_EV_LOST;
			ev->ring = ring;
			ev->u.lost_words = lost;
			return 1;
		}
		if (n <= 0)
			return n;
	}
}

/* Read ring `ring` to its end and compare with every expected event of
 * that ring, in order. */
static void read_and_check(rte_cursor *c, unsigned ring,
                           const struct explist *l)
{
	struct rte_event ev;

	for (size_t i = 0; i < l->n; i++) {
		int got;

		if (l->e[i].ring != ring)
			continue;
		got = next_via(c, ring, &ev);
		if (got != 1)
			fail_msg("event %zu of ring %u: rte_cursor_next = %d (%s)", i,
			         ring, got, rte_cursor_errmsg(c));
		check_event(&ev, &l->e[i]);
	}
	assert_int_equal(next_via(c, ring, &ev), 0);
	assert_int_equal(rte_cursor_ring_lost(c, ring), 0);
}

static const int64_t signed_values[] = {
	INT64_MIN, INT64_MIN + 1, -4294967296ll, -1, 0, 1, 42, 4294967296ll,
	INT64_MAX - 1, INT64_MAX,
};
#define NSIGNED (sizeof signed_values / sizeof signed_values[0])

/* ---- writers of each message shape ------------------------------------ */

static uint64_t g_ts = 1000;

static void w_lifecycle(struct rte_ring_writer *w, struct explist *l,
                        unsigned ring, unsigned id, int64_t data)
{
	uint64_t ts = g_ts++;

	assert_int_equal(rte_ring_write1(w, rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, id),
	                                 ts, (uint64_t)data), 0);
	exp_add(l, RTE_EV_LIFECYCLE, ring, id, ts, rte_lifecycle_name(id))->u =
		(uint64_t)data;
}

static void w_phase(struct rte_ring_writer *w, struct explist *l,
                    unsigned ring, unsigned id, int begin)
{
	uint64_t ts = g_ts++;

	assert_int_equal(rte_ring_write0(w, rte_hdr_make(0, 0, begin ? RTE_MSG_BEGIN
	                                                            : RTE_MSG_EXIT,
	                                                 id), ts), 0);
	exp_add(l, begin ? RTE_EV_BEGIN : RTE_EV_END, ring, id, ts,
	        rte_phase_name(id));
}

static void w_counter(struct rte_ring_writer *w, struct explist *l,
                      unsigned ring, unsigned id, uint64_t v)
{
	uint64_t ts = g_ts++;

	assert_int_equal(rte_ring_write1(w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, id),
	                                 ts, v), 0);
	exp_add(l, RTE_EV_COUNTER, ring, id, ts, rte_counter_name(id))->u = v;
}

static void w_alloc(struct rte_ring_writer *w, struct explist *l,
                    unsigned ring, uint64_t seed)
{
	uint64_t ts = g_ts++;
	struct exp *e = exp_add(l, RTE_EV_ALLOC, ring, 0, ts, NULL);

	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		e->buckets[i] = seed * (i + 1) + i;
	e->buckets[RTE_ALLOC_BUCKETS - 1] = UINT64_MAX - seed;
	assert_int_equal(rte_ring_write(w, rte_hdr_make(0, 0, RTE_MSG_ALLOC, 0),
	                                ts, e->buckets, RTE_ALLOC_BUCKETS), 0);
}

static void w_user(struct rte_ring_writer *w, struct explist *l,
                   unsigned ring, enum rte_user_msg type, unsigned id,
                   const char *name, int64_t v)
{
	static const enum rte_event_kind kinds[] = {
		RTE_EV_USER_UNIT, RTE_EV_USER_INT, RTE_EV_USER_SPAN_BEGIN,
		RTE_EV_USER_SPAN_END,
	};
	uint64_t ts = g_ts++, hdr = rte_hdr_make(0, 1, type, id);

	if (type == RTE_UMSG_INT)
		assert_int_equal(rte_ring_write1(w, hdr, ts, (uint64_t)v), 0);
	else
		assert_int_equal(rte_ring_write0(w, hdr, ts), 0);
	exp_add(l, kinds[type], ring, id, ts, name)->u = (uint64_t)v;
}

static void w_custom(struct rte_ring_writer *w, struct explist *l,
                     unsigned ring, unsigned id, const char *name,
                     const unsigned char *bytes, size_t n)
{
	uint64_t p[RTE_MAX_MSG_WORDS], ts = g_ts++;
	size_t words = rte_custom_encode(bytes, n, p);
	struct exp *e;

	assert_int_equal(rte_ring_write(w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, id),
	                                ts, p, (unsigned)words), 0);
	e = exp_add(l, RTE_EV_USER_CUSTOM, ring, id, ts, name);
	e->bytes = bytes;
	e->len = n;
}

/* ---- tests ------------------------------------------------------------ */

static void every_runtime_event_and_id_round_trips(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	struct explist l = { 0 };
	rte_cursor *c;

	(void)state;
	t_ring_file_create(&f, "runtime.events", 1, 14);
	t_writer(&f, 0, &w);
	for (unsigned id = 0; id < RTE_LC_COUNT; id++)
		for (size_t i = 0; i < NSIGNED; i++)
			w_lifecycle(&w, &l, 0, id, signed_values[i]);
	for (unsigned id = 0; id < RTE_P_COUNT; id++) {
		w_phase(&w, &l, 0, id, 1);
		w_phase(&w, &l, 0, id, 0);
	}
	for (unsigned id = 0; id < RTE_C_COUNT; id++) {
		w_counter(&w, &l, 0, id, 0);
		w_counter(&w, &l, 0, id, id * 1000003ull);
		w_counter(&w, &l, 0, id, (uint64_t)1 << 63);
		w_counter(&w, &l, 0, id, UINT64_MAX);
	}
	for (uint64_t s = 0; s < 5; s++)
		w_alloc(&w, &l, 0, s * 977);
	/* ids this version does not know: decoded, with no name */
	w_phase(&w, &l, 0, RTE_P_COUNT, 1);
	w_phase(&w, &l, 0, 8191, 0);
	w_counter(&w, &l, 0, RTE_C_COUNT, 7);
	w_lifecycle(&w, &l, 0, RTE_LC_COUNT, -7);
	c = t_open(f.path);
	read_and_check(c, 0, &l);
	rte_cursor_close(c);
	free(l.e);
	t_ring_file_unmap(&f);
}

static void messages_without_events_are_skipped(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	struct explist l = { 0 };
	uint64_t p[3] = { 1, 2, 3 };
	rte_cursor *c;

	(void)state;
	t_ring_file_create(&f, "skip.events", 1, 10);
	t_writer(&f, 0, &w);
	w_phase(&w, &l, 0, RTE_P_MINOR, 1);
	/* flush, unknown runtime types, unknown user types, an internal
	 * message with a payload: all consumed, none delivered */
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_FLUSH, 0), 5), 0);
	for (unsigned t = RTE_MSG_FLUSH + 1; t < 16; t++)
		assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 0, t, 1), 5, p, 3), 0);
	for (unsigned t = RTE_UMSG_CUSTOM + 1; t < 16; t++)
		assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 1, t, 1), 5, p, 2), 0);
	assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 0, RTE_MSG_INTERNAL, 3),
	                                5, p, 3), 0);
	w_phase(&w, &l, 0, RTE_P_MINOR, 0);
	/* ring_stop as OCaml 5.2 writes it, without a payload: data 0 */
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE,
	                                                  RTE_LC_RING_STOP), 77), 0);
	exp_add(&l, RTE_EV_LIFECYCLE, 0, RTE_LC_RING_STOP, 77, "ring_stop")->u = 0;
	c = t_open(f.path);
	read_and_check(c, 0, &l);
	rte_cursor_close(c);
	free(l.e);
	t_ring_file_unmap(&f);
}

static void every_user_event_round_trips_with_its_name(void **state)
{
	static const unsigned ids[] = { 0, 1, 2, 3, 100, 8191 };
	char longest[RTE_NAME_MAX + 1];
	const char *names[6];
	static const unsigned char bytes[] = "custom \"payload\"\n\0\xff";
	struct t_file f;
	struct rte_ring_writer w;
	struct explist l = { 0 };
	rte_cursor *c;

	(void)state;
	memset(longest, 'n', RTE_NAME_MAX);
	longest[RTE_NAME_MAX] = '\0';
	names[0] = "a";
	names[1] = longest;
	names[2] = "app.tick";
	names[3] = "quote\" back\\ ctl\x01 del\x7f utf8\xc3\xa9";
	names[4] = ""; /* slot never written */
	names[5] = "the.last.slot";
	t_ring_file_create(&f, "user.events", 1, 14);
	for (unsigned i = 0; i < 6; i++)
		if (*names[i])
			t_set_name(&f, ids[i], names[i]);
	t_writer(&f, 0, &w);
	for (unsigned i = 0; i < 6; i++) {
		w_user(&w, &l, 0, RTE_UMSG_UNIT, ids[i], names[i], 0);
		for (size_t k = 0; k < NSIGNED; k++)
			w_user(&w, &l, 0, RTE_UMSG_INT, ids[i], names[i],
			       signed_values[k]);
		w_user(&w, &l, 0, RTE_UMSG_SPAN_BEGIN, ids[i], names[i], 0);
		w_user(&w, &l, 0, RTE_UMSG_SPAN_END, ids[i], names[i], 0);
		w_custom(&w, &l, 0, ids[i], names[i], bytes, sizeof bytes);
	}
	c = t_open(f.path);
	read_and_check(c, 0, &l);
	/* a name registered after the first read is picked up */
	t_set_name(&f, 100, "late.name");
	l.n = 0;
	w_user(&w, &l, 0, RTE_UMSG_UNIT, 100, "late.name", 0);
	read_and_check(c, 0, &l);
	rte_cursor_close(c);
	free(l.e);
	t_ring_file_unmap(&f);
}

static unsigned char *pattern(size_t n)
{
	unsigned char *b = malloc(n ? n : 1);

	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 37 + n);
	return b;
}

/* rte_cursor_stat() names the file opened, also once it is renamed and
 * removed (how rte-read finds the file in /proc/PID/maps). */
static void cursor_stat_identifies_the_file_after_rename_and_unlink(void **state)
{
	struct t_file f;
	struct stat st;
	char moved[PATH_MAX + 8];
	rte_cursor *c;

	(void)state;
	t_ring_file_create(&f, "stat.events", 1, 10);
	assert_int_equal(stat(f.path, &st), 0);
	c = t_open(f.path);
	snprintf(moved, sizeof moved, "%s.moved", f.path);
	assert_int_equal(rename(f.path, moved), 0);
	assert_int_equal(unlink(moved), 0);
	assert_true(rte_cursor_stat(c)->st_dev == st.st_dev);
	assert_true(rte_cursor_stat(c)->st_ino == st.st_ino);
	assert_true(S_ISREG(rte_cursor_stat(c)->st_mode));
	assert_int_equal(rte_cursor_stat(c)->st_size, st.st_size);
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

static void custom_payloads_of_every_length_round_trip(void **state)
{
	enum { NLEN = 1002 };
	unsigned char *bufs[NLEN];
	size_t lens[NLEN];
	struct t_file f;
	struct rte_ring_writer w;
	struct explist l = { 0 };
	rte_cursor *c;

	(void)state;
	for (size_t i = 0; i <= 1000; i++)
		lens[i] = i;
	lens[1001] = RTE_CUSTOM_MAX_BYTES;
	for (size_t i = 0; i < NLEN; i++)
		bufs[i] = pattern(lens[i]);
	/* all at once, in a ring large enough to lose nothing */
	t_ring_file_create(&f, "custom.events", 2, 17);
	t_set_name(&f, 9, "app.msg");
	t_writer(&f, 0, &w);
	for (size_t i = 0; i < NLEN; i++)
		w_custom(&w, &l, 0, 9, "app.msg", bufs[i], lens[i]);
	c = t_open(f.path);
	read_and_check(c, 0, &l);
	/* one at a time through a 2^10-word ring that wraps many times */
	{
		struct t_file small;
		rte_cursor *cs;

		t_ring_file_create(&small, "custom-small.events", 1, 10);
		t_set_name(&small, 9, "app.msg");
		t_writer(&small, 0, &w);
		cs = t_open(small.path);
		for (size_t i = 0; i < NLEN; i++) {
			struct rte_event ev;

			l.n = 0;
			w_custom(&w, &l, 0, 9, "app.msg", bufs[i], lens[i]);
			/* a reader that is up to date still loses the padding
			 * the writer overwrote to make room */
			assert_int_equal(rte_cursor_next(cs, 0, &ev), 1);
			if (ev.kind == RTE_EV_LOST)
				assert_int_equal(rte_cursor_next(cs, 0, &ev), 1);
			check_event(&ev, &l.e[0]);
			assert_int_equal(rte_cursor_next(cs, 0, &ev), 0);
		}
		rte_cursor_close(cs);
		t_ring_file_unmap(&small);
	}
	for (size_t i = 0; i < NLEN; i++)
		free(bufs[i]);
	rte_cursor_close(c);
	free(l.e);
	t_ring_file_unmap(&f);
}

/* rte_ring_write_bytes (encoding straight into the ring) must lay out
 * exactly the words rte_custom_encode + rte_ring_write do. */
static void write_bytes_matches_encode_then_write(void **state)
{
	static uint64_t enc[RTE_MAX_MSG_WORDS];
	struct t_file a, b;
	struct rte_ring_writer wa, wb;
	uint64_t hdr = rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 9);

	(void)state;
	t_ring_file_create(&a, "bytes-a.events", 1, 12);
	t_ring_file_create(&b, "bytes-b.events", 1, 12);
	t_writer(&a, 0, &wa);
	t_writer(&b, 0, &wb);
	for (size_t n = 0; n <= RTE_CUSTOM_MAX_BYTES; n += n < 1000 ? 1 : 1000) {
		unsigned char *p = pattern(n);
		size_t words = rte_custom_encode(p, n, enc);

		assert_int_equal(rte_ring_write(&wa, hdr, n, enc, (unsigned)words), 0);
		assert_int_equal(rte_ring_write_bytes(&wb, hdr, n, p, n), 0);
		free(p);
		assert_int_equal(*t_ring_head(&a, 0), *t_ring_head(&b, 0));
		assert_int_equal(t_ring_head(&a, 0)[1], t_ring_head(&b, 0)[1]);
	}
	assert_memory_equal(t_ring_data(&a, 0), t_ring_data(&b, 0),
	                    a.l.ring_size_bytes);
	/* too long for one message: refused, nothing written */
	{
		unsigned char *p = pattern(RTE_CUSTOM_MAX_BYTES + 1);
		uint64_t tail = t_ring_head(&b, 0)[1];

		assert_int_equal(rte_ring_write_bytes(&wb, hdr, 1, p,
		                                      RTE_CUSTOM_MAX_BYTES + 1), -1);
		assert_int_equal(t_ring_head(&b, 0)[1], tail);
		free(p);
	}
	t_ring_file_unmap(&a);
	t_ring_file_unmap(&b);
}

static void rings_are_read_independently(void **state)
{
	struct t_file f;
	struct rte_ring_writer w[8];
	struct explist l = { 0 };
	struct rte_event ev;
	rte_cursor *c;

	(void)state;
	t_ring_file_create(&f, "rings.events", 8, 6);
	for (unsigned r = 0; r < 8; r++)
		t_writer(&f, r, &w[r]);
	for (int k = 0; k < 10; k++)
		for (unsigned r = 0; r < 8; r += 3)
			w_counter(&w[r], &l, r, RTE_C_MINOR_PROMOTED, r * 100 + k);
	c = t_open(f.path);
	assert_int_equal(rte_cursor_rings(c), 8);
	assert_string_equal(rte_cursor_path(c), f.path);
	assert_int_equal(rte_cursor_layout(c)->ring_size_elements, 64);
	assert_int_equal(rte_cursor_layout(c)->total_size, f.l.total_size);
	for (unsigned r = 0; r < 8; r++) {
		assert_int_equal(rte_cursor_ring_used(c, r), r % 3 == 0);
		read_and_check(c, r, &l);
	}
	assert_int_equal(rte_cursor_ring_used(c, 8), 0);
	assert_int_equal(rte_cursor_next(c, 8, &ev), RTE_EINVAL);
	assert_int_equal(rte_cursor_next(c, UINT32_MAX, &ev), RTE_EINVAL);
	assert_int_equal(rte_cursor_next(c, 0, NULL), RTE_EINVAL);
	assert_int_equal(rte_cursor_next(NULL, 0, &ev), RTE_EINVAL);
	/* a reader sees what is written after it opened */
	l.n = 0;
	w_counter(&w[7], &l, 7, 1, 5);
	assert_int_equal(rte_cursor_ring_used(c, 7), 1);
	read_and_check(c, 7, &l);
	rte_cursor_close(c);
	rte_cursor_close(NULL);
	free(l.e);
	t_ring_file_unmap(&f);
}

/* ---- rte_cursor_poll --------------------------------------------------- */

struct plog {
	struct rte_event ev[4096];
	uint64_t buckets[64][RTE_ALLOC_BUCKETS];
	unsigned char bytes[64][64];
	char names[4096][32]; /* copies: the cursor's names die with it */
	size_t n, nb, nc;
	size_t stop_at; /* return 99 from the callback of event #stop_at */
};

static int plog_add(struct plog *p, enum rte_event_kind k, unsigned ring,
                    uint64_t ts, unsigned id, const char *name)
{
	struct rte_event *e = &p->ev[p->n++];

	assert_true(p->n <= 4096);
	memset(e, 0, sizeof *e);
	e->kind = k;
	e->ring = ring;
	e->ts = ts;
	e->id = id;
	if (name) {
		assert_true(strlen(name) < sizeof p->names[0]);
		strcpy(p->names[p->n - 1], name);
		e->name = p->names[p->n - 1];
	}
	return p->stop_at && p->n == p->stop_at ? 99 : 0;
}

static struct rte_event *plog_last(struct plog *p)
{
	return &p->ev[p->n - 1];
}

static int cb_begin(void *ud, unsigned r, uint64_t ts, unsigned id)
{
	return plog_add(ud, RTE_EV_BEGIN, r, ts, id, rte_phase_name(id));
}

static int cb_end(void *ud, unsigned r, uint64_t ts, unsigned id)
{
	return plog_add(ud, RTE_EV_END, r, ts, id, rte_phase_name(id));
}

static int cb_counter(void *ud, unsigned r, uint64_t ts, unsigned id,
                      uint64_t v)
{
	int rc = plog_add(ud, RTE_EV_COUNTER, r, ts, id, rte_counter_name(id));

	plog_last(ud)->u.counter = v;
	return rc;
}

static int cb_alloc(void *ud, unsigned r, uint64_t ts,
                    const uint64_t b[RTE_ALLOC_BUCKETS])
{
	struct plog *p = ud;
	int rc = plog_add(p, RTE_EV_ALLOC, r, ts, 0, NULL);

	memcpy(p->buckets[p->nb], b, sizeof p->buckets[0]);
	plog_last(p)->u.buckets = p->buckets[p->nb++];
	return rc;
}

static int cb_lifecycle(void *ud, unsigned r, uint64_t ts, unsigned id,
                        int64_t data)
{
	int rc = plog_add(ud, RTE_EV_LIFECYCLE, r, ts, id, rte_lifecycle_name(id));

	plog_last(ud)->u.data = data;
	return rc;
}

static int cb_lost(void *ud, unsigned r, uint64_t words)
{
	int rc = plog_add(ud, RTE_EV_LOST, r, 0, 0, NULL);

	plog_last(ud)->u.lost_words = words;
	return rc;
}

static int cb_unit(void *ud, unsigned r, uint64_t ts, unsigned id,
                   const char *name)
{
	return plog_add(ud, RTE_EV_USER_UNIT, r, ts, id, name);
}

static int cb_int(void *ud, unsigned r, uint64_t ts, unsigned id,
                  const char *name, int64_t v)
{
	int rc = plog_add(ud, RTE_EV_USER_INT, r, ts, id, name);

	plog_last(ud)->u.value = v;
	return rc;
}

static int cb_span(void *ud, unsigned r, uint64_t ts, unsigned id,
                   const char *name, int begin)
{
	return plog_add(ud, begin ? RTE_EV_USER_SPAN_BEGIN : RTE_EV_USER_SPAN_END,
	                r, ts, id, name);
}

static int cb_custom(void *ud, unsigned r, uint64_t ts, unsigned id,
                     const char *name, const uint8_t *bytes, size_t len)
{
	struct plog *p = ud;
	int rc = plog_add(p, RTE_EV_USER_CUSTOM, r, ts, id, name);

	assert_true(len <= sizeof p->bytes[0]);
	memcpy(p->bytes[p->nc], bytes, len);
	plog_last(p)->u.custom.bytes = p->bytes[p->nc++];
	plog_last(p)->u.custom.len = len;
	return rc;
}

static const struct rte_callbacks all_cbs = {
	cb_begin, cb_end,  cb_counter, cb_alloc, cb_lifecycle,
	cb_lost,  cb_unit, cb_int,     cb_span,  cb_custom,
};

/* Two rings with one of everything; ring 1 has wrapped (one loss). */
static void write_mixed(struct t_file *f, struct explist *l)
{
	static const unsigned char msg[] = "hello";
	struct rte_ring_writer w0, w1;

	t_ring_file_create(f, "poll.events", 3, 6);
	t_set_name(f, 4, "app.x");
	t_writer(f, 0, &w0);
	t_writer(f, 1, &w1);
	w_lifecycle(&w0, l, 0, RTE_LC_RING_START, 1234);
	w_phase(&w0, l, 0, RTE_P_MAJOR, 1);
	w_counter(&w0, l, 0, RTE_C_MINOR_ALLOCATED, 99);
	w_alloc(&w0, l, 0, 3);
	w_phase(&w0, l, 0, RTE_P_MAJOR, 0);
	w_user(&w0, l, 0, RTE_UMSG_UNIT, 4, "app.x", 0);
	w_user(&w0, l, 0, RTE_UMSG_INT, 4, "app.x", INT64_MIN);
	w_user(&w0, l, 0, RTE_UMSG_SPAN_BEGIN, 4, "app.x", 0);
	w_user(&w0, l, 0, RTE_UMSG_SPAN_END, 4, "app.x", 0);
	w_custom(&w0, l, 0, 4, "app.x", msg, 5);
	/* 40 three-word counters in 64 words: ring 1 loses its oldest */
	for (uint64_t i = 0; i < 40; i++)
		w_counter(&w1, l, 1, 4, i);
}

static void check_against_log(const struct plog *p, size_t from,
                              const struct rte_event *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct rte_event *a = &p->ev[from + i], *b = &want[i];

		assert_int_equal(a->kind, b->kind);
		assert_int_equal(a->ring, b->ring);
		assert_int_equal(a->ts, b->ts);
		assert_int_equal(a->id, b->id);
		if (b->name)
			assert_string_equal(a->name, b->name);
		if (a->kind == RTE_EV_ALLOC)
			assert_memory_equal(a->u.buckets, b->u.buckets,
			                    RTE_ALLOC_BUCKETS * 8);
		else if (a->kind == RTE_EV_USER_CUSTOM) {
			assert_int_equal(a->u.custom.len, b->u.custom.len);
			assert_memory_equal(a->u.custom.bytes, b->u.custom.bytes,
			                    a->u.custom.len);
		} else
			assert_true(a->u.counter == b->u.counter);
	}
}

/* What rte_cursor_next gives, deep-copied into a plog. */
static void read_all_next(const char *path, struct plog *want)
{
	rte_cursor *c = t_open(path);
	struct rte_event ev;

	for (unsigned r = 0; r < rte_cursor_rings(c); r++)
		while (rte_cursor_next(c, r, &ev) == 1)
			assert_int_equal(rte_event_dispatch(&ev, &all_cbs, want), 0);
	rte_cursor_close(c);
}

static void poll_calls_the_callback_of_every_event(void **state)
{
	static struct plog p, want;
	struct t_file f;
	struct explist l = { 0 };
	rte_cursor *c;
	size_t count = 0;

	(void)state;
	memset(&p, 0, sizeof p);
	memset(&want, 0, sizeof want);
	write_mixed(&f, &l);
	c = t_open(f.path);
	assert_int_equal(rte_cursor_poll(c, &all_cbs, &p, 0, &count), RTE_OK);
	read_all_next(f.path, &want);
	assert_int_equal(count, p.n);
	assert_int_equal(p.n, want.n);
	/* ring 0 exactly as written, then ring 1: a loss, then the rest */
	for (size_t i = 0; i < 10; i++) {
		struct rte_event ev = p.ev[i];

		if (ev.kind == RTE_EV_USER_CUSTOM) {
			assert_int_equal(ev.u.custom.len, 5);
			assert_memory_equal(ev.u.custom.bytes, "hello", 5);
			ev.u.custom.bytes = NULL;
		}
		assert_int_equal(ev.kind, l.e[i].kind);
		assert_int_equal(ev.ts, l.e[i].ts);
	}
	assert_int_equal(p.ev[10].kind, RTE_EV_LOST);
	assert_int_equal(p.ev[10].ring, 1);
	assert_int_equal(p.ev[10].u.lost_words, t_ring_head(&f, 1)[0]);
	check_against_log(&p, 0, want.ev, want.n);
	assert_int_equal(plog_last(&p)->u.counter, 39);
	/* nothing new: 0 events */
	assert_int_equal(rte_cursor_poll(c, &all_cbs, &p, 0, &count), RTE_OK);
	assert_int_equal(count, 0);
	rte_cursor_close(c);
	free(l.e);
	t_ring_file_unmap(&f);
}

static void poll_stops_at_max_events_and_at_a_callback_stop(void **state)
{
	static struct plog p, want;
	struct t_file f;
	struct explist l = { 0 };
	const struct rte_callbacks none = { 0 };
	rte_cursor *c;
	size_t count = 0, total;

	(void)state;
	memset(&p, 0, sizeof p);
	memset(&want, 0, sizeof want);
	write_mixed(&f, &l);
	read_all_next(f.path, &want);
	total = want.n;
	c = t_open(f.path);
	assert_int_equal(rte_cursor_poll(c, &all_cbs, &p, 3, &count), RTE_OK);
	assert_int_equal(count, 3);
	p.stop_at = 6;
	assert_int_equal(rte_cursor_poll(c, &all_cbs, &p, 0, &count), 99);
	assert_int_equal(count, 3);
	p.stop_at = 0;
	assert_int_equal(rte_cursor_poll(c, &all_cbs, &p, 0, &count), RTE_OK);
	assert_int_equal(p.n, total);
	check_against_log(&p, 0, want.ev, want.n);
	rte_cursor_close(c);
	/* NULL callbacks consume and ignore */
	c = t_open(f.path);
	assert_int_equal(rte_cursor_poll(c, &none, NULL, 0, &count), RTE_OK);
	assert_int_equal(count, total);
	assert_int_equal(rte_cursor_poll(c, NULL, NULL, 0, &count), RTE_EINVAL);
	assert_int_equal(rte_cursor_poll(NULL, &none, NULL, 0, NULL), RTE_EINVAL);
	rte_cursor_close(c);
	free(l.e);
	t_ring_file_unmap(&f);
}

/* rte_cursor_release() gives back the mapping; the next read maps the
 * same file again and goes on where it was, events written meanwhile
 * included. */
/* The raw way (rte_cursor_next_words + rte_cursor_decode) delivers what
 * rte_cursor_next() does: every kind and name, and losses. */
static void words_round_trip_every_runtime_event(void **state)
{
	g_words = 1;
	every_runtime_event_and_id_round_trips(state);
	messages_without_events_are_skipped(state);
	every_user_event_round_trips_with_its_name(state);
	g_words = 0;
}

/* The same through rte_cursor_peek_words() and a caller's own walk. */
static void peek_round_trip_every_runtime_event(void **state)
{
	g_words = 2;
	every_runtime_event_and_id_round_trips(state);
	messages_without_events_are_skipped(state);
	every_user_event_round_trips_with_its_name(state);
	g_words = 0;
}

/* A peek may cut its last message (the copy is a chunk of the ring): the
 * first message is whole, nothing is read before rte_cursor_consume_words(),
 * and after the whole ones the next peek starts with the cut one, whole. */
static void peek_leaves_a_cut_message_to_the_next_peek(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	struct explist l = { 0 };
	const uint64_t *p, *q;
	uint64_t lost;
	size_t i = 0, events = 0;
	rte_cursor *c;
	int n, k;

	(void)state;
	t_ring_file_create(&f, "peek-cut.events", 1, 14);
	t_writer(&f, 0, &w);
	for (int j = 0; j < 3000; j++) /* 3 words each */
		w_counter(&w, &l, 0, RTE_C_FORCE_MINOR_ALLOC_SMALL, (uint64_t)j);
	c = t_open(f.path);
	n = rte_cursor_peek_words(c, 0, &p, &lost);
	assert_true(n > 0 && n < 9000 && n % 3 != 0); /* a chunk that cuts */
	assert_int_equal(rte_cursor_peek_words(c, 0, &q, &lost), n);
	assert_ptr_equal(p, q);
	while (i < (size_t)n && rte_hdr_len(p[i]) <= (size_t)n - i) {
		assert_int_equal(rte_hdr_len(p[i]), 3);
		i += 3;
	}
	assert_int_equal(rte_cursor_consume_words(c, 0, (size_t)n + 1), RTE_EINVAL);
	assert_int_equal(rte_cursor_consume_words(c, 0, i), RTE_OK);
	for (;;) {
		struct rte_event ev;

		k = rte_cursor_peek_words(c, 0, &q, &lost);
		if (k <= 0)
			break;
		assert_int_equal(rte_hdr_len(q[0]), 3);
		assert_int_equal(rte_cursor_decode(c, 0, q, &ev), 1);
		check_event(&ev, &l.e[i / 3 + events]);
		assert_int_equal(rte_cursor_consume_words(c, 0, 3), RTE_OK);
		events++;
	}
	assert_int_equal(k, 0);
	assert_int_equal(lost, 0);
	assert_int_equal(i / 3 + events, 3000);
	rte_cursor_close(c);
	free(l.e);
	t_ring_file_unmap(&f);
}

/* Peeks at two rings of two files, interleaved, a message taken at a time
 * from each (the copies share one buffer per thread): each ring reads its
 * own events in order, whole, and a ring read by rte_cursor_next() after
 * a peek reads on where the peek left it. */
static void interleaved_peeks_read_each_ring_whole(void **state)
{
	struct t_file f[2];
	struct rte_ring_writer w[2];
	struct explist l[2] = { { 0 }, { 0 } };
	rte_cursor *c[2];
	size_t got[2] = { 0, 0 };
	int more = 1;

	(void)state;
	t_ring_file_create(&f[0], "peek-a.events", 2, 12);
	t_ring_file_create(&f[1], "peek-b.events", 2, 12);
	for (int k = 0; k < 2; k++) {
		t_writer(&f[k], 1, &w[k]);
		for (int j = 0; j < 1200; j++) /* 3600 words of 4096 */
			w_counter(&w[k], &l[k], 1, (unsigned)(k + 1), (uint64_t)(j * 2 + k));
		c[k] = t_open(f[k].path);
	}
	while (more) {
		more = 0;
		for (int k = 0; k < 2; k++) {
			const uint64_t *q;
			uint64_t lost;
			struct rte_event ev;
			int n = rte_cursor_peek_words(c[k], 1, &q, &lost);

			assert_int_equal(lost, 0);
			if (n <= 0) {
				assert_int_equal(n, 0);
				continue;
			}
			more = 1;
			assert_int_equal(rte_cursor_decode(c[k], 1, q, &ev), 1);
			check_event(&ev, &l[k].e[got[k]++]);
			assert_int_equal(rte_cursor_consume_words(c[k], 1, rte_hdr_len(q[0])),
			                 RTE_OK);
			if (k == 1 && got[k] == 700) { /* then the other ways */
				assert_int_equal(rte_cursor_next(c[k], 1, &ev), 1);
				check_event(&ev, &l[k].e[got[k]++]);
			}
		}
	}
	for (int k = 0; k < 2; k++) {
		assert_int_equal(got[k], 1200);
		rte_cursor_close(c[k]);
		free(l[k].e);
		t_ring_file_unmap(&f[k]);
	}
}

static void words_report_the_loss_next_reports(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	struct explist l = { 0 };
	struct rte_event a, b;
	rte_cursor *ca, *cb;
	size_t n = 0;
	int got;

	(void)state;
	t_ring_file_create(&f, "words-lost.events", 1, 10);
	t_writer(&f, 0, &w);
	ca = t_open(f.path);
	cb = t_open(f.path);
	/* 3 rounds of 3000 words into a ring of 1024: each read loses some */
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 1500; i++)
			w_phase(&w, &l, 0, RTE_P_MINOR, i % 2 == 0);
		while ((got = rte_cursor_next(ca, 0, &a)) == 1) {
			g_words = 1;
			assert_int_equal(next_via_words(cb, 0, &b), 1);
			g_words = 0;
			assert_int_equal(a.kind, b.kind);
			if (a.kind == RTE_EV_LOST)
				assert_int_equal(a.u.lost_words, b.u.lost_words);
			else
				assert_true(a.ts == b.ts && a.id == b.id);
			n++;
		}
		assert_int_equal(got, 0);
		assert_int_equal(next_via_words(cb, 0, &b), 0);
	}
	assert_true(rte_cursor_ring_lost(ca, 0) > 0);
	assert_true(rte_cursor_ring_lost(ca, 0) == rte_cursor_ring_lost(cb, 0));
	assert_true(n > 1000);
	rte_cursor_close(ca);
	rte_cursor_close(cb);
	free(l.e);
	t_ring_file_unmap(&f);
}

static void a_released_cursor_reads_on_where_it_was(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	struct rte_event ev;
	rte_cursor *c;

	(void)state;
	t_ring_file_create(&f, "release.events", 1, 6);
	t_writer(&f, 0, &w);
	for (uint64_t i = 0; i < 3; i++)
		assert_int_equal(rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 1),
		                                 100 + i, i), 0);
	c = t_open(f.path);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	assert_int_equal(ev.ts, 100);
	assert_int_equal(rte_cursor_release(c), RTE_OK);
	assert_int_equal(rte_cursor_release(c), RTE_OK); /* twice is fine */
	assert_int_equal(rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 1),
	                                 103, 3), 0);
	for (uint64_t i = 1; i < 4; i++) {
		assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
		assert_int_equal(ev.ts, 100 + i);
		assert_int_equal(ev.u.counter, i);
	}
	assert_int_equal(rte_cursor_next(c, 0, &ev), 0);
	assert_int_equal(rte_cursor_ring_used(c, 0), 1);
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

/* A file replaced under its name while released is not read as if it
 * were the same file: the read fails. */
static void a_released_cursor_refuses_a_replaced_file(void **state)
{
	struct t_file f, g;
	struct rte_event ev;
	char moved[4096];
	rte_cursor *c;

	(void)state;
	t_ring_file_create(&f, "replaced.events", 1, 6);
	c = t_open(f.path);
	assert_int_equal(rte_cursor_release(c), RTE_OK);
	t_path(moved, sizeof moved, "replaced.old");
	assert_int_equal(rename(f.path, moved), 0);
	t_ring_file_create(&g, "replaced.events", 1, 6);
	assert_true(rte_cursor_next(c, 0, &ev) < 0);
	assert_non_null(strstr(rte_cursor_errmsg(c), "replaced"));
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
	t_ring_file_unmap(&g);
}

static void open_pid_finds_the_file_in_the_events_dir(void **state)
{
	struct t_file f;
	rte_cursor *c = NULL;
	char err[256], name[64];
	pid_t pid = getpid() + 100000;

	(void)state;
	snprintf(name, sizeof name, "%ld.events", (long)pid);
	t_ring_file_create(&f, name, 1, 4);
	assert_int_equal(rte_cursor_open_pid(t_tmpdir(), pid, &c, err, sizeof err),
	                 RTE_OK);
	assert_string_equal(rte_cursor_path(c), f.path);
	rte_cursor_close(c);
	setenv("OCAML_RUNTIME_EVENTS_DIR", t_tmpdir(), 1);
	assert_int_equal(rte_cursor_open_pid(NULL, pid, &c, err, sizeof err), RTE_OK);
	rte_cursor_close(c);
	assert_int_equal(rte_cursor_open_pid(NULL, pid + 1, &c, err, sizeof err),
	                 RTE_ENOENT);
	assert_null(c);
	unsetenv("OCAML_RUNTIME_EVENTS_DIR");
	t_ring_file_unmap(&f);
}

/* The one rule of common/format/rundir.h: with OCAML_RUNTIME_EVENTS_DIR
 * set to a directory without the file, librte.so's default directory
 * ($XDG_RUNTIME_DIR/rte) is looked in next, as rte-read does in every
 * mode. */
static void open_pid_looks_in_the_default_dir_after_the_env_dir(void **state)
{
	char xdg[4096], rte[4200], path[4300], err[256];
	struct rte_rundir_search s;
	struct t_file f;
	rte_cursor *c = NULL;
	pid_t pid = getpid() + 200000;

	(void)state;
	snprintf(xdg, sizeof xdg, "%s/xdg", t_tmpdir());
	snprintf(rte, sizeof rte, "%s/rte", xdg);
	assert_int_equal(mkdir(xdg, 0700), 0);
	assert_int_equal(mkdir(rte, 0700), 0);
	snprintf(path, sizeof path, "%ld.events", (long)pid);
	t_ring_file_create(&f, path, 1, 4);
	snprintf(path, sizeof path, "%s/%ld.events", rte, (long)pid);
	assert_int_equal(rename(f.path, path), 0);
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	setenv("OCAML_RUNTIME_EVENTS_DIR", t_tmpdir(), 1);
	rte_rundir_search(NULL, &s);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.dir[0], t_tmpdir());
	assert_string_equal(s.dir[1], rte);
	assert_string_equal(s.dir[2], ".");
	assert_int_equal(rte_cursor_open_pid(NULL, pid, &c, err, sizeof err), RTE_OK);
	assert_string_equal(rte_cursor_path(c), path);
	rte_cursor_close(c);
	rte_rundir_search("given", &s);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.dir[0], "given");
	unsetenv("OCAML_RUNTIME_EVENTS_DIR");
	assert_string_equal(rte_rundir_default(NULL, path, sizeof path), rte);
	unsetenv("XDG_RUNTIME_DIR");
	t_ring_file_unmap(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_runtime_event_and_id_round_trips),
		cmocka_unit_test(messages_without_events_are_skipped),
		cmocka_unit_test(every_user_event_round_trips_with_its_name),
		cmocka_unit_test(custom_payloads_of_every_length_round_trip),
		cmocka_unit_test(cursor_stat_identifies_the_file_after_rename_and_unlink),
		cmocka_unit_test(write_bytes_matches_encode_then_write),
		cmocka_unit_test(rings_are_read_independently),
		cmocka_unit_test(poll_calls_the_callback_of_every_event),
		cmocka_unit_test(poll_stops_at_max_events_and_at_a_callback_stop),
		cmocka_unit_test(words_round_trip_every_runtime_event),
		cmocka_unit_test(words_report_the_loss_next_reports),
		cmocka_unit_test(peek_round_trip_every_runtime_event),
		cmocka_unit_test(peek_leaves_a_cut_message_to_the_next_peek),
		cmocka_unit_test(interleaved_peeks_read_each_ring_whole),
		cmocka_unit_test(a_released_cursor_reads_on_where_it_was),
		cmocka_unit_test(a_released_cursor_refuses_a_replaced_file),
		cmocka_unit_test(open_pid_finds_the_file_in_the_events_dir),
		cmocka_unit_test(open_pid_looks_in_the_default_dir_after_the_env_dir),
	};

	return cmocka_run_group_tests_name("consumer", tests, NULL, NULL);
}
