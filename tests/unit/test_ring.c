/*
 * test_ring.c - common/writer/ring.{h,c}, the ring writer, read back through the
 * consumer: wrap-around, padding, head advance and exact loss accounting,
 * checked against an independent model of the ring discipline of
 * doc/FORMAT.md (the model never looks at the writer's state).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rte_test.h"

/* ---- an independent model of one ring --------------------------------- */

/*
 * doc/FORMAT.md: before writing, the producer advances head message by message
 * until the new message fits. Our writer frees more than that in one go so
 * that its slow path stays rare (ring.c: 1/32 of the ring more, found
 * through boundary marks that may overshoot by up to 4 blocks of
 * size / RTE_RING_MARKS words), but never past the tail. The model
 * therefore computes the lowest and the highest head these rules allow,
 * and the test checks that the head the writer published is a message
 * boundary between the two; losses are then checked exactly against it.
 */
#define RING_BLOCK(size) ((size) / RTE_RING_MARKS ? (size) / RTE_RING_MARKS : 1)
#define RING_SLACK(size) ((size) / 32 + 4 * RING_BLOCK(size))

struct rec {
	uint64_t start; /* word counter of the header word */
	unsigned len;
	int pad;
	uint64_t seq;
};

struct model {
	uint64_t size, head, tail;
	struct rec *r;
	size_t n, cap;
	size_t first; /* index of the record at head */
	uint64_t pads;
	uint64_t extra_dropped; /* words dropped beyond the minimum */
};

static void model_init(struct model *m, uint64_t size)
{
	memset(m, 0, sizeof *m);
	m->size = size;
}

static void model_free(struct model *m)
{
	free(m->r);
}

static void model_push(struct model *m, unsigned len, int pad, uint64_t seq)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 1024;
		m->r = realloc(m->r, m->cap * sizeof *m->r);
		assert_non_null(m->r);
	}
	m->r[m->n++] = (struct rec){ m->tail, len, pad, seq };
	m->tail += len;
	m->pads += pad;
}

/* The head after advancing message by message from m->head until `end`
 * fits; stores the index of its record in *first. */
static uint64_t model_head_for(const struct model *m, uint64_t end,
                               size_t *first)
{
	uint64_t head = m->head;
	size_t i = m->first;

	while (end - head > m->size) {
		assert_true(i < m->n);
		head += m->r[i++].len;
	}
	*first = i;
	return head;
}

/*
 * Add message `seq` of `len` words (after padding if it would straddle the
 * end). Stores the lowest and highest legal head in *lo and *hi. Returns
 * the padding written first (0 if none).
 */
static unsigned model_write(struct model *m, unsigned len, uint64_t seq,
                            uint64_t *lo, uint64_t *hi)
{
	uint64_t idx = m->tail & (m->size - 1), end, far;
	unsigned pad = 0;
	size_t i;

	if (idx + len > m->size) {
		pad = (unsigned)(m->size - idx);
		model_push(m, pad, 1, 0);
	}
	end = m->tail + len;
	far = end + RING_SLACK(m->size);
	if (far > m->tail + m->size)
		far = m->tail + m->size;
	*lo = model_head_for(m, end, &i);
	*hi = end - m->head > m->size ? model_head_for(m, far, &i) : m->head;
	model_push(m, len, 0, seq);
	return pad;
}

/* Adopt the head the writer published, after checking it is legal. */
static void model_set_head(struct model *m, uint64_t head, uint64_t lo,
                           uint64_t hi)
{
	if (head < lo || head > hi)
		fail_msg("writer head %llu outside the legal range %llu..%llu",
		         (unsigned long long)head, (unsigned long long)lo,
		         (unsigned long long)hi);
	while (m->head < head) {
		assert_true(m->first < m->n);
		m->head += m->r[m->first++].len;
	}
	if (m->head != head)
		fail_msg("writer head %llu is not a message boundary",
		         (unsigned long long)head);
	m->extra_dropped += head - lo;
}

/* ---- messages whose content is a function of their sequence number ---- */

#define USER_ID 5

/* Custom payload bytes of message `seq`: the number, then a pattern. */
static unsigned char pattern_byte(uint64_t seq, size_t i)
{
	return i < 8 ? (unsigned char)(seq >> (8 * i))
	             : (unsigned char)(seq * 7 + i * 13);
}

static size_t custom_len_for(unsigned len, uint64_t seq)
{
	/* (n + 8) / 8 == len - 2 for every n in 8(len-3) .. 8(len-3)+7 */
	return 8 * (size_t)(len - 3) + seq % 8;
}

/* Write message `seq` of exactly `len` words (2..1023). */
static int write_msg(struct rte_ring_writer *w, unsigned len, uint64_t seq)
{
	uint64_t p[RTE_MAX_MSG_WORDS];
	unsigned char b[RTE_CUSTOM_MAX_BYTES];
	size_t n;

	if (len == 2)
		return rte_ring_write0(
			w, rte_hdr_make(0, 1, RTE_UMSG_SPAN_BEGIN, USER_ID), seq);
	if (len == 3)
		return rte_ring_write1(w, rte_hdr_make(0, 1, RTE_UMSG_INT, USER_ID),
		                       seq, ~seq);
	n = custom_len_for(len, seq);
	for (size_t i = 0; i < n; i++)
		b[i] = pattern_byte(seq, i);
	assert_int_equal(rte_custom_encode(b, n, p), len - 2);
	return rte_ring_write(w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, USER_ID),
	                      seq, p, len - 2);
}

static void check_msg(const struct rte_event *ev, unsigned len, uint64_t seq)
{
	assert_int_equal(ev->ts, seq);
	assert_int_equal(ev->id, USER_ID);
	assert_string_equal(ev->name, "wrap.test");
	if (len == 2) {
		assert_int_equal(ev->kind, RTE_EV_USER_SPAN_BEGIN);
	} else if (len == 3) {
		assert_int_equal(ev->kind, RTE_EV_USER_INT);
		assert_true((uint64_t)ev->u.value == ~seq);
	} else {
		size_t n = custom_len_for(len, seq);

		assert_int_equal(ev->kind, RTE_EV_USER_CUSTOM);
		assert_int_equal(ev->u.custom.len, n);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(ev->u.custom.bytes[i], pattern_byte(seq, i));
	}
}

/* ---- the reader side, checked against the model ----------------------- */

struct reader {
	rte_cursor *c;
	uint64_t pos;   /* expected position of the real reader */
	size_t ri;      /* model record at pos */
	uint64_t delivered_words, lost_words, skipped_pad_words, events, losses;
};

/* Read one event and check it is exactly what the model predicts.
 * Returns 1 if an event (or a loss) was read, 0 if the ring is drained. */
static int reader_step(struct reader *rd, const struct model *m)
{
	struct rte_event ev;
	int got = rte_cursor_next(rd->c, 0, &ev);

	if (got < 0)
		fail_msg("rte_cursor_next: %d %s", got, rte_cursor_errmsg(rd->c));
	if (rd->pos < m->head) {
		assert_int_equal(got, 1);
		assert_int_equal(ev.kind, RTE_EV_LOST);
		assert_int_equal(ev.u.lost_words, m->head - rd->pos);
		assert_int_equal(ev.ts, 0);
		assert_null(ev.name);
		rd->lost_words += m->head - rd->pos;
		rd->losses++;
		rd->pos = m->head;
		rd->ri = m->first;
		return 1;
	}
	while (rd->ri < m->n && m->r[rd->ri].pad) {
		rd->skipped_pad_words += m->r[rd->ri].len;
		rd->pos += m->r[rd->ri++].len;
	}
	if (rd->ri == m->n) {
		assert_int_equal(got, 0);
		return 0;
	}
	assert_int_equal(got, 1);
	assert_int_equal(m->r[rd->ri].start, rd->pos);
	check_msg(&ev, m->r[rd->ri].len, m->r[rd->ri].seq);
	rd->delivered_words += m->r[rd->ri].len;
	rd->pos += m->r[rd->ri++].len;
	rd->events++;
	return 1;
}

static unsigned pick_len(uint64_t *rng, unsigned maxlen)
{
	uint64_t r = t_rand(rng) % 100;

	if (r < 30)
		return 2;
	if (r < 55)
		return 3;
	if (r < 60)
		return maxlen; /* as long as the ring allows */
	return 4 + (unsigned)(t_rand(rng) % (maxlen - 3));
}

/* Write `wraps` rings' worth of messages, reading with a random lag. */
static void run_wrap(unsigned log2, unsigned wraps, uint64_t seed)
{
	struct t_file f;
	struct rte_ring_writer w;
	struct model m;
	struct reader rd = { 0 };
	uint64_t size = (uint64_t)1 << log2, rng = seed, seq = 0;
	unsigned maxlen = size < RTE_MAX_MSG_WORDS ? (unsigned)size
	                                          : RTE_MAX_MSG_WORDS;
	uint64_t *data, *hp;
	char name[64];

	snprintf(name, sizeof name, "wrap-%u.events", log2);
	t_ring_file_create(&f, name, 2, log2);
	t_set_name(&f, USER_ID, "wrap.test");
	t_writer(&f, 0, &w);
	data = t_ring_data(&f, 0);
	hp = t_ring_head(&f, 0);
	model_init(&m, size);
	rd.c = t_open(f.path);
	while (m.tail < wraps * size) {
		unsigned len = pick_len(&rng, maxlen);
		uint64_t before = m.tail;
		uint64_t r, lo, hi;
		unsigned pad = model_write(&m, len, ++seq, &lo, &hi);

		assert_int_equal(write_msg(&w, len, seq), 0);
		/* the writer published the model's tail and a legal head */
		assert_int_equal(hp[1], m.tail);
		model_set_head(&m, hp[0], lo, hi);
		if (pad && before >= m.head)
			assert_true(data[before & (size - 1)] ==
			            rte_hdr_make(pad, 0, RTE_MSG_INTERNAL, 0));
		r = t_rand(&rng) % 100;
		if (r < 20)
			for (uint64_t k = t_rand(&rng) % 4; k > 0; k--)
				reader_step(&rd, &m);
		else if (r < 23)
			while (reader_step(&rd, &m))
				;
	}
	while (reader_step(&rd, &m))
		;
	assert_int_equal(rd.pos, m.tail);
	/* every word the writer wrote was delivered, reported lost or was
	 * padding the reader skipped */
	assert_int_equal(rd.delivered_words + rd.lost_words + rd.skipped_pad_words,
	                 m.tail);
	assert_int_equal(rte_cursor_ring_lost(rd.c, 0), rd.lost_words);
	assert_true(m.pads > 0);
	assert_true(rd.skipped_pad_words > 0);
	assert_true(rd.losses > 0);
	assert_true(rd.events > 0);
	print_message("2^%u words: %llu wraps, %llu events read, %llu losses "
	              "(%llu words, %llu beyond the minimum), %llu padding "
	              "records\n", log2,
	              (unsigned long long)(m.tail / size),
	              (unsigned long long)rd.events,
	              (unsigned long long)rd.losses,
	              (unsigned long long)rd.lost_words,
	              (unsigned long long)m.extra_dropped,
	              (unsigned long long)m.pads);
	rte_cursor_close(rd.c);
	model_free(&m);
	t_ring_file_unmap(&f);
}

static void wrapping_small_rings_reports_exact_losses(void **state)
{
	(void)state;
	for (unsigned log2 = 4; log2 <= 10; log2++)
		run_wrap(log2, 400, 0x9E3779B97F4A7C15ull + log2);
}

/* ---- single shapes ------------------------------------------------------ */

static void message_longer_than_the_ring_is_refused(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	uint64_t p[RTE_MAX_MSG_WORDS] = { 0 }, *hp;
	rte_cursor *c;
	struct rte_event ev;

	(void)state;
	t_ring_file_create(&f, "refuse.events", 1, 4);
	t_writer(&f, 0, &w);
	hp = t_ring_head(&f, 0);
	assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 0, RTE_MSG_ALLOC, 0),
	                                1, p, 15), -1);
	assert_int_equal(hp[0], 0);
	assert_int_equal(hp[1], 0);
	assert_int_equal(t_ring_data(&f, 0)[0], 0);
	/* a whole-ring message fits */
	assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 0, RTE_MSG_ALLOC, 0),
	                                1, p, 14), 0);
	assert_int_equal(hp[1], 16);
	/* refused again mid-ring: nothing moves */
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), 2), 0);
	assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 0, RTE_MSG_ALLOC, 0),
	                                3, p, 15), -1);
	assert_int_equal(hp[0], 16);
	assert_int_equal(hp[1], 18);
	c = t_open(f.path);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	assert_int_equal(ev.kind, RTE_EV_LOST);
	assert_int_equal(ev.u.lost_words, 16);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	assert_int_equal(ev.kind, RTE_EV_BEGIN);
	assert_int_equal(ev.ts, 2);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 0);
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

static void message_longer_than_the_length_field_is_refused(void **state)
{
	static uint64_t p[2048];
	struct t_file f;
	struct rte_ring_writer w;
	uint64_t *hp;

	(void)state;
	t_ring_file_create(&f, "refuse-big.events", 1, 12);
	t_writer(&f, 0, &w);
	hp = t_ring_head(&f, 0);
	/* 1024 words would fit the ring but not the 10-bit length field */
	assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 1),
	                                1, p, RTE_MAX_MSG_WORDS - 1), -1);
	assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 1),
	                                1, p, 2000), -1);
	assert_int_equal(hp[1], 0);
	assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 1),
	                                1, p, RTE_MAX_MSG_WORDS - 2), 0);
	assert_int_equal(hp[1], RTE_MAX_MSG_WORDS);
	assert_int_equal(rte_hdr_len(t_ring_data(&f, 0)[0]), RTE_MAX_MSG_WORDS);
	t_ring_file_unmap(&f);
}

static void one_word_padding_is_written_and_skipped(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	uint64_t p[13] = { 0 }, *data;
	rte_cursor *c;
	struct rte_event ev;

	(void)state;
	t_ring_file_create(&f, "pad1.events", 1, 4);
	t_set_name(&f, 1, "x");
	t_writer(&f, 0, &w);
	data = t_ring_data(&f, 0);
	c = t_open(f.path);
	/* 15 words, then a 2-word message: 1 word of padding, wrap to 0 */
	assert_int_equal(rte_ring_write(&w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 1),
	                                1, p, 13), 0);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	assert_int_equal(ev.ts, 1);
	assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_EXIT, 3), 2), 0);
	assert_true(data[15] == rte_hdr_make(1, 0, RTE_MSG_INTERNAL, 0));
	assert_int_equal(rte_hdr_len(data[0]), 2);
	assert_int_equal(t_ring_head(&f, 0)[0], 15);
	assert_int_equal(t_ring_head(&f, 0)[1], 18);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	assert_int_equal(ev.kind, RTE_EV_END);
	assert_int_equal(ev.id, 3);
	assert_int_equal(ev.ts, 2);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 0);
	assert_int_equal(rte_cursor_ring_lost(c, 0), 0);
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

static void reader_starting_on_a_wrapped_ring_reports_head_lost(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	rte_cursor *c;
	struct rte_event ev;
	uint64_t head;

	(void)state;
	t_ring_file_create(&f, "late.events", 1, 4);
	t_writer(&f, 0, &w);
	for (uint64_t i = 1; i <= 20; i++)
		assert_int_equal(rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 4),
		                                 i, i), 0);
	/* 20 three-word messages in 16 words: the model says where head is */
	head = t_ring_head(&f, 0)[0];
	assert_int_equal(t_ring_head(&f, 0)[1], 63); /* 20 x 3 + 3 pads */
	c = t_open(f.path);
	assert_int_equal(rte_cursor_next(c, 0, &ev), 1);
	assert_int_equal(ev.kind, RTE_EV_LOST);
	assert_int_equal(ev.u.lost_words, head);
	for (;;) {
		int got = rte_cursor_next(c, 0, &ev);

		assert_true(got >= 0);
		if (!got)
			break;
		assert_int_equal(ev.kind, RTE_EV_COUNTER);
		assert_int_equal(ev.u.counter, ev.ts);
		assert_true(ev.ts >= 16);
	}
	assert_int_equal(ev.ts, 20);
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

static void attach_continues_a_ring_and_resets_a_bad_one(void **state)
{
	struct t_file f;
	struct rte_ring_writer w, w2;
	uint64_t *hp;

	(void)state;
	t_ring_file_create(&f, "attach.events", 2, 5);
	hp = t_ring_head(&f, 1);
	t_writer(&f, 1, &w);
	for (int i = 0; i < 30; i++)
		assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), 1), 0);
	t_writer(&f, 1, &w2);
	/* 30 two-word messages in 32 words: head on a boundary, >= 28 */
	assert_true(hp[0] >= 28 && hp[0] <= 60 && hp[0] % 2 == 0);
	assert_int_equal(hp[1], 60);
	assert_int_equal(rte_ring_write0(&w2, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), 1), 0);
	assert_int_equal(hp[1], 62);
	/* ring 0 untouched */
	assert_int_equal(t_ring_head(&f, 0)[1], 0);
	/* head past tail, or more than a ring between them: start afresh */
	hp[0] = 100;
	hp[1] = 50;
	t_writer(&f, 1, &w2);
	assert_int_equal(hp[0], 0);
	assert_int_equal(hp[1], 0);
	hp[0] = 0;
	hp[1] = 33;
	t_writer(&f, 1, &w2);
	assert_int_equal(hp[0], 0);
	assert_int_equal(hp[1], 0);
	hp[0] = 7;
	hp[1] = 39;
	t_writer(&f, 1, &w2);
	assert_int_equal(hp[0], 7);
	assert_int_equal(hp[1], 39);
	assert_int_equal(rte_ring_write0(&w2, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 1), 1), 0);
	assert_int_equal(hp[1], 41);
	rte_ring_writer_reset(&w2);
	assert_int_equal(hp[0], 0);
	assert_int_equal(hp[1], 0);
	t_ring_file_unmap(&f);
}

/* Another process moves our tail far past head (found by the fuzzer): the
 * writer must neither walk ~2^40 words nor write outside the ring. */
static void writer_survives_a_scribbled_tail(void **state)
{
	uint64_t hdr = rte_hdr_make(0, 0, RTE_MSG_COUNTER, 1);
	uint64_t scribbles[] = { (uint64_t)1 << 40, 3, UINT64_MAX / 2 };
	struct t_file f;
	struct rte_ring_writer w;
	uint64_t *hp;
	rte_cursor *c;
	struct rte_event ev;
	int got;

	(void)state;
	t_ring_file_create(&f, "scribble-tail.events", 2, 6);
	t_writer(&f, 0, &w);
	hp = t_ring_head(&f, 0);
	for (size_t k = 0; k < sizeof scribbles / sizeof scribbles[0]; k++) {
		for (int i = 0; i < 100; i++)
			assert_int_equal(rte_ring_write1(&w, hdr, 1, 1), 0);
		hp[1] += scribbles[k]; /* tail far ahead of head */
		for (int i = 0; i < 100; i++)
			assert_int_equal(rte_ring_write1(&w, hdr, 2, 2), 0);
		assert_true(hp[0] <= hp[1] && hp[1] - hp[0] <= 64);
	}
	/* ring 1 untouched, ring 0 readable to its end */
	assert_int_equal(t_ring_head(&f, 1)[1], 0);
	c = t_open(f.path);
	while ((got = rte_cursor_next(c, 0, &ev)) == 1)
		;
	assert_int_equal(got, 0);
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

static void writer_survives_a_scribbled_ring(void **state)
{
	struct t_file f;
	struct rte_ring_writer w;
	uint64_t *data, *hp;
	rte_cursor *c;
	struct rte_event ev;
	int got, n = 0;

	(void)state;
	t_ring_file_create(&f, "scribble.events", 1, 4);
	t_writer(&f, 0, &w);
	data = t_ring_data(&f, 0);
	hp = t_ring_head(&f, 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 1),
		                                 1, 1), 0);
	data[0] = 0; /* a length of 0 at head: the writer must not loop */
	assert_int_equal(rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 1),
	                                 2, 2), 0);
	assert_true(hp[0] <= hp[1] && hp[1] - hp[0] <= 16);
	/* whatever survived is readable, and the new message is last */
	c = t_open(f.path);
	while ((got = rte_cursor_next(c, 0, &ev)) == 1)
		if (ev.kind != RTE_EV_LOST)
			n++;
	assert_int_equal(got, 0);
	assert_true(n >= 1);
	assert_int_equal(ev.ts, 2);
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wrapping_small_rings_reports_exact_losses),
		cmocka_unit_test(message_longer_than_the_ring_is_refused),
		cmocka_unit_test(message_longer_than_the_length_field_is_refused),
		cmocka_unit_test(one_word_padding_is_written_and_skipped),
		cmocka_unit_test(reader_starting_on_a_wrapped_ring_reports_head_lost),
		cmocka_unit_test(attach_continues_a_ring_and_resets_a_bad_one),
		cmocka_unit_test(writer_survives_a_scribbled_ring),
		cmocka_unit_test(writer_survives_a_scribbled_tail),
	};

	return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
