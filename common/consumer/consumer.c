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
 *
 * The rest of the library's cursor is in the files around this one:
 * cursor.h (the cursor, for those files only), open.c (validate_header(),
 * opening, mapping, closing, names and error messages), bounds.c (the
 * checks of a ring's head and tail before a copy) and poll.c (what is
 * built on the reads: rte_cursor_next_words(), callbacks, polling).
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
#include "cursor.h"

/*
 * Words are copied out of a ring CHUNK_WORDS at a time (at most), and the
 * copy is checked once for being overwritten while it was made: one fence
 * and one load of head per chunk instead of per message. Messages are then
 * decoded from the copy. A chunk holds the longest message.
 */
#define CHUNK_WORDS 2048u
_Static_assert(CHUNK_WORDS >= RTE_MAX_MSG_WORDS, "a chunk holds any message");

/* The cursor's file is mapped (again if it was released): RTE_OK or an
 * error. Cheap when it is. */
static inline int mapped(const rte_cursor *cc)
{
	rte_cursor *c = (rte_cursor *)cc; /* allocated writable by open */

	return __builtin_expect(c->base != NULL, 1) ? RTE_OK : consumer_remap(c);
}

/* ---- ring access -------------------------------------------------------- */

int rte_cursor_ring_used(const rte_cursor *c, unsigned ring)
{
	return ring < c->layout.max_domains && mapped(c) == RTE_OK &&
	       load_acq(ring_header(c, ring) + 1) != 0;
}

uint64_t rte_cursor_ring_lost(const rte_cursor *c, unsigned ring)
{
	return ring < c->layout.max_domains ? c->rings[ring].lost : 0;
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
	int64_t avail = consumer_ring_bounds(c, ring, head_out);
	struct peek_buf *pb = NULL;
	uint64_t n, w0, *dst;
	unsigned len;

	if (avail <= 0)
		return (int)avail; /* 0, READ_LOST or an error */
	n = (uint64_t)avail;
	w0 = __atomic_load_n(&data[idx], __ATOMIC_RELAXED);
	len = rte_hdr_len(w0);
	if (len == 0 || idx + len > size || len > n)
		return consumer_bad_length(c, ring, len, head_out);
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
			return consumer_ring_fail(c, ring, RTE_ENOMEM, "out of memory");
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
	consumer_drop_pages(c, ring, idx + n);
	return 1;
}

/* ---- decoding ------------------------------------------------------------- */

/* The decoders run per event: inlined into the loops that call them. */
#define HOT static inline __attribute__((always_inline))

/* The registered name of user event `id`, cached once non-empty. */
HOT int user_name(rte_cursor *c, unsigned ring, unsigned id, const char **out)
{
	char ***mid = c->names ? c->names[NAME_T(id)] : NULL, **leaf;

	if (mid && (leaf = mid[NAME_M(id)]) && leaf[NAME_L(id)]) {
		*out = leaf[NAME_L(id)];
		return 0;
	}
	return consumer_user_name_slow(c, ring, id, out);
}

static int too_short(rte_cursor *c, unsigned ring, const char *what,
                     unsigned len, unsigned need)
{
	return consumer_ring_fail(c, ring, RTE_ECORRUPT,
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
			return consumer_ring_fail(c, ring, RTE_ECORRUPT,
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
			consumer_set_errmsg(c, "%s", r->why);
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
		return consumer_remap_failed(c, ring);
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

