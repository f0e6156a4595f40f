/*
 * test_concurrent.c - the ring writer and the consumer at the same time: a
 * reader thread reads a ring while the writer fills it with numbered
 * messages (timestamp = sequence number, payload derived from it), going
 * round small rings thousands of times.
 *
 * Checked: every event the reader gets is intact (its payload matches its
 * number) and in order; every loss the reader reports ends exactly on a
 * message boundary the writer wrote, and the next event is the first
 * message after it; at the end, delivered + lost + skipped padding words
 * add up exactly to what the writer wrote. `make check-loop` reruns this
 * file many times to flush out rare interleavings.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rte_test.h"

#define USER_ID 3

/* ---- messages as a function of their number ---------------------------- */

static unsigned char pattern_byte(uint64_t seq, size_t i)
{
	return (unsigned char)(seq * 131 + i * 7 + (i >> 8));
}

static uint64_t mix(uint64_t s)
{
	s ^= s >> 33;
	s *= 0xff51afd7ed558ccdull;
	s ^= s >> 33;
	return s;
}

/* Length in words of message `seq` in a ring of `size` words. */
static unsigned msg_len(uint64_t seq, uint64_t size)
{
	uint64_t h = mix(seq);
	unsigned maxlen = size < RTE_MAX_MSG_WORDS ? (unsigned)size
	                                          : RTE_MAX_MSG_WORDS;

	switch (h % 8) {
	case 0: case 1: return 2; /* span begin */
	case 2: case 3: return 3; /* user int */
	case 4: return 3;         /* counter */
	case 5: if (maxlen >= 22) return 22; /* alloc */ return 2;
	default: return 4 + (unsigned)((h >> 8) % (maxlen - 3)); /* custom */
	}
}

static size_t custom_len(unsigned len, uint64_t seq)
{
	return 8 * (size_t)(len - 3) + seq % 8; /* exactly len - 2 words */
}

static void write_msg(struct rte_ring_writer *w, uint64_t seq, uint64_t size)
{
	unsigned len = msg_len(seq, size);
	uint64_t p[RTE_MAX_MSG_WORDS];
	unsigned char b[RTE_CUSTOM_MAX_BYTES];
	int rc;

	if (len == 2)
		rc = rte_ring_write0(w, rte_hdr_make(0, 1, RTE_UMSG_SPAN_BEGIN, USER_ID),
		                     seq);
	else if (len == 3 && mix(seq) % 8 == 4)
		rc = rte_ring_write1(w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 4), seq,
		                     ~seq);
	else if (len == 3)
		rc = rte_ring_write1(w, rte_hdr_make(0, 1, RTE_UMSG_INT, USER_ID), seq,
		                     seq * 3);
	else if (len == 22 && mix(seq) % 8 == 5) {
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			p[i] = seq + i;
		rc = rte_ring_write(w, rte_hdr_make(0, 0, RTE_MSG_ALLOC, 0), seq, p,
		                    RTE_ALLOC_BUCKETS);
	} else {
		size_t n = custom_len(len, seq);

		for (size_t i = 0; i < n; i++)
			b[i] = pattern_byte(seq, i);
		rte_custom_encode(b, n, p);
		rc = rte_ring_write(w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, USER_ID),
		                    seq, p, len - 2);
	}
	if (rc != 0)
		abort(); /* cannot happen: every length fits the ring */
}

/* NULL if the event is exactly message ev->ts, else what is wrong. */
static const char *check_event(const struct rte_event *ev, uint64_t size)
{
	uint64_t seq = ev->ts;
	unsigned len = msg_len(seq, size);
	int alloc = len == 22 && mix(seq) % 8 == 5;

	if (len == 2)
		return ev->kind == RTE_EV_USER_SPAN_BEGIN ? NULL : "kind (span)";
	if (len == 3 && mix(seq) % 8 == 4)
		return ev->kind != RTE_EV_COUNTER ? "kind (counter)"
		       : ev->u.counter != ~seq   ? "counter value" : NULL;
	if (len == 3)
		return ev->kind != RTE_EV_USER_INT           ? "kind (int)"
		       : (uint64_t)ev->u.value != seq * 3 ? "int value" : NULL;
	if (alloc) {
		if (ev->kind != RTE_EV_ALLOC)
			return "kind (alloc)";
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			if (ev->u.buckets[i] != seq + i)
				return "alloc bucket";
		return NULL;
	}
	if (ev->kind != RTE_EV_USER_CUSTOM)
		return "kind (custom)";
	if (ev->u.custom.len != custom_len(len, seq))
		return "custom length";
	for (size_t i = 0; i < ev->u.custom.len; i++)
		if (ev->u.custom.bytes[i] != pattern_byte(seq, i))
			return "custom byte";
	if (strcmp(ev->name, "conc.test") != 0)
		return "name";
	return NULL;
}

/* ---- the two sides ----------------------------------------------------- */

struct wrec {
	uint64_t start;
	uint64_t seq; /* 0 for padding */
	unsigned len;
};

struct ritem {
	uint64_t v; /* sequence number, or lost words */
	int lost;
};

struct run {
	rte_cursor *c;
	uint64_t size;
	int done; /* atomic: the writer has finished */
	/* reader results: written by the reader thread only */
	struct ritem *items;
	size_t n, cap;
	char fail[256];
	uint64_t empty_polls;
};

static void *reader_main(void *arg)
{
	struct run *r = arg;
	struct rte_event ev;

	for (;;) {
		/* Acquire: pairs with the writer's release store of done,
		 * after its last tail store. */
		int done = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
		int got = rte_cursor_next(r->c, 0, &ev);
		const char *bad;

		if (got < 0) {
			snprintf(r->fail, sizeof r->fail, "error %d: %s", got,
			         rte_cursor_errmsg(r->c));
			return NULL;
		}
		if (got == 0) {
			if (done)
				return NULL;
			if (++r->empty_polls % 64 == 0)
				sched_yield();
			continue;
		}
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 4096;
			r->items = realloc(r->items, r->cap * sizeof *r->items);
			if (!r->items)
				abort();
		}
		if (ev.kind == RTE_EV_LOST) {
			r->items[r->n++] = (struct ritem){ ev.u.lost_words, 1 };
			continue;
		}
		bad = check_event(&ev, r->size);
		if (bad) {
			snprintf(r->fail, sizeof r->fail, "torn or wrong event %llu: %s",
			         (unsigned long long)ev.ts, bad);
			return NULL;
		}
		r->items[r->n++] = (struct ritem){ ev.ts, 0 };
	}
}

struct wlog {
	struct wrec *r;
	size_t n, cap;
};

static void wlog_add(struct wlog *l, uint64_t start, unsigned len,
                     uint64_t seq)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1 << 16;
		l->r = realloc(l->r, l->cap * sizeof *l->r);
		assert_non_null(l->r);
	}
	l->r[l->n++] = (struct wrec){ start, seq, len };
}

/* Index of the record starting at `start`, or l->n if none. */
static size_t wlog_find(const struct wlog *l, uint64_t start)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->r[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && l->r[lo].start == start ? lo : l->n;
}

/* ---- checking the reader's story against the writer's log ------------- */

struct tally {
	uint64_t delivered, lost, skipped, events, losses;
};

/* Skip the padding records at ri. */
static void skip_pads(const struct wlog *l, uint64_t *pos, size_t *ri,
                      uint64_t *skipped)
{
	while (*ri < l->n && l->r[*ri].seq == 0) {
		*skipped += l->r[*ri].len;
		*pos += l->r[(*ri)++].len;
	}
}

/*
 * A loss of `v` words seen at `pos`: the reader may first have skipped
 * padding, so the loss started at pos or after one of the padding records
 * that follow it, and must end on a message boundary (or at the tail).
 * Candidate `k` skips k padding records. Returns 0 when there is no
 * candidate k; else stores where the loss ended.
 */
static int loss_candidate(const struct wlog *l, uint64_t tail, uint64_t pos,
                          size_t ri, uint64_t v, unsigned k, uint64_t *end,
                          size_t *to, uint64_t *skipped)
{
	*skipped = 0;
	for (unsigned j = 0; j < k; j++) {
		if (ri == l->n || l->r[ri].seq != 0 || l->r[ri].start != pos)
			return 0;
		*skipped += l->r[ri].len;
		pos += l->r[ri++].len;
	}
	*end = pos + v;
	*to = wlog_find(l, *end);
	return *to < l->n || *end == tail;
}

/* Are items[i..] consistent up to and including the next delivered event
 * (or the end)? Losses with several candidates are tried in turn. */
static int consistent(const struct run *r, const struct wlog *l, uint64_t tail,
                      size_t i, uint64_t pos, size_t ri)
{
	uint64_t skipped = 0, end;
	size_t to;

	if (i == r->n) {
		skip_pads(l, &pos, &ri, &skipped);
		return pos == tail;
	}
	if (!r->items[i].lost) {
		skip_pads(l, &pos, &ri, &skipped);
		return ri < l->n && l->r[ri].seq == r->items[i].v &&
		       l->r[ri].start == pos;
	}
	for (unsigned k = 0; k <= 4; k++)
		if (loss_candidate(l, tail, pos, ri, r->items[i].v, k, &end, &to,
		                   &skipped) &&
		    consistent(r, l, tail, i + 1, end, to))
			return 1;
	return 0;
}

static void replay(const struct run *r, const struct wlog *l, uint64_t tail,
                   struct tally *t)
{
	uint64_t pos = 0;
	size_t ri = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct ritem *it = &r->items[i];
		uint64_t end, skipped;
		size_t to;
		unsigned k;

		if (it->lost) {
			assert_true(it->v > 0);
			for (k = 0; k <= 4; k++)
				if (loss_candidate(l, tail, pos, ri, it->v, k, &end, &to,
				                   &skipped) &&
				    consistent(r, l, tail, i + 1, end, to))
					break;
			if (k > 4)
				fail_msg("loss of %llu words at word %llu does not end on "
				         "a message boundary followed by the next event",
				         (unsigned long long)it->v,
				         (unsigned long long)pos);
			t->skipped += skipped;
			t->lost += it->v;
			t->losses++;
			pos = end;
			ri = to;
			continue;
		}
		skip_pads(l, &pos, &ri, &t->skipped);
		if (ri == l->n || l->r[ri].seq != it->v || l->r[ri].start != pos)
			fail_msg("event %llu delivered at word %llu, expected %llu",
			         (unsigned long long)it->v, (unsigned long long)pos,
			         ri < l->n ? (unsigned long long)l->r[ri].seq : 0ull);
		t->delivered += l->r[ri].len;
		t->events++;
		pos += l->r[ri++].len;
	}
	skip_pads(l, &pos, &ri, &t->skipped);
	assert_int_equal(ri, l->n);
	assert_int_equal(pos, tail);
}

static void spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

/* Each ring size runs at least MIN_NS and `min_wraps` times round, at most
 * MAX_NS: under 5 s for the whole file even under ASan on a busy machine. */
#define MIN_NS 250000000ull
#define MAX_NS 800000000ull

static struct tally run_one(unsigned log2, uint64_t min_wraps)
{
	static const unsigned pace[4] = { 0, 50, 300, 1500 };
	struct t_file f;
	struct rte_ring_writer w;
	struct run r = { 0 };
	struct wlog l = { 0 };
	struct tally t = { 0 };
	pthread_t th;
	uint64_t *tailp, size = (uint64_t)1 << log2, seq = 0, t0;
	char name[64];

	snprintf(name, sizeof name, "conc-%u.events", log2);
	t_ring_file_create(&f, name, 1, log2);
	t_set_name(&f, USER_ID, "conc.test");
	t_writer(&f, 0, &w);
	tailp = t_ring_head(&f, 0) + 1; /* the tail the writer publishes */
	r.c = t_open(f.path);
	r.size = size;
	assert_int_equal(pthread_create(&th, NULL, reader_main, &r), 0);
	t0 = t_now_ns();
	for (;;) {
		uint64_t before = *tailp, el;
		unsigned len = msg_len(++seq, size);

		write_msg(&w, seq, size);
		if (*tailp - before != len)
			wlog_add(&l, before, (unsigned)(*tailp - before - len), 0);
		wlog_add(&l, *tailp - len, len, seq);
		/* Vary the pace, 512 messages at a time, so that the reader
		 * both keeps up and falls behind. */
		spin(pace[(seq >> 9) % 4]);
		if (seq % 1024)
			continue;
		el = t_now_ns() - t0;
		if ((*tailp >= min_wraps * size && el >= MIN_NS) || el >= MAX_NS)
			break;
	}
	/* Release: everything written before is visible to a reader that
	 * sees done (its next read then drains the ring). */
	__atomic_store_n(&r.done, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	if (r.fail[0])
		fail_msg("2^%u-word ring: %s", log2, r.fail);
	replay(&r, &l, *tailp, &t);
	assert_int_equal(t.delivered + t.lost + t.skipped, *tailp);
	assert_int_equal(rte_cursor_ring_lost(r.c, 0), t.lost);
	assert_true(t.events > 0);
	/* thousands of times round (fewer only if the machine is crawling) */
	if (*tailp < min_wraps * size)
		print_message("slow machine: only %llu wraps\n",
		              (unsigned long long)(*tailp / size));
	print_message("2^%u words: %llu wraps, %llu messages, %llu delivered, "
	              "%llu losses (%llu words), %llu padding words skipped\n",
	              log2, (unsigned long long)(*tailp / size),
	              (unsigned long long)seq, (unsigned long long)t.events,
	              (unsigned long long)t.losses, (unsigned long long)t.lost,
	              (unsigned long long)t.skipped);
	rte_cursor_close(r.c);
	free(r.items);
	free(l.r);
	t_ring_file_unmap(&f);
	return t;
}

static void reader_thread_gets_every_event_intact_or_counted_lost(void **state)
{
	uint64_t losses = 0;

	(void)state;
	losses += run_one(4, 5000).losses;
	losses += run_one(6, 4000).losses;
	losses += run_one(8, 3000).losses;
	losses += run_one(10, 2000).losses;
	losses += run_one(12, 500).losses;
	/* the writer outpaces the reader on rings this small */
	assert_true(losses > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reader_thread_gets_every_event_intact_or_counted_lost),
	};

	return cmocka_run_group_tests_name("concurrent", tests, NULL, NULL);
}
