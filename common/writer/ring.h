/*
 * ring.h - the producer side of one ring (internal to rte).
 *
 * One writer per ring, any number of readers in any process, no locks.
 * head and tail live only in the shared ring header (no private copies:
 * this writer is their only writer, so it reads them back relaxed); the
 * writer publishes them as follows:
 *
 *   - head is advanced, message by message, before the words it covered are
 *     overwritten; each advance is a release store followed by a release
 *     fence, so a reader that copied old words and then (after its own
 *     fence) sees the old head knows the copy was not torn;
 *   - tail is stored with release after the whole message is written, so a
 *     reader that loads tail with acquire sees every word before it.
 *
 * Data words are written with relaxed atomic stores: plain moves on x86-64,
 * and free of data races in the C11 model (readers load them relaxed).
 *
 * A message never straddles the physical end: a padding message (runtime
 * type 0, id 0) fills the rest of the ring first.
 *
 * Lazy reservation: a ring file is sparse, and a store into a page whose
 * blocks the file system cannot allocate raises SIGBUS. A writer may
 * therefore be told that only the first `extent` words of its ring's data
 * have their blocks reserved (rte_ring_writer_set_grow); before its first
 * store beyond them, the slow path calls `grow` to reserve more, and drops
 * the message if that fails. So a process that writes a few events holds
 * a few pages of its ring, not the whole ring. Once the ring has been
 * reserved whole (extent == size), the fast path pays nothing: the bound
 * is folded into `limit`.
 *
 * Thread-safety: one thread at a time per writer (the shim gives each
 * thread its own ring). rte_ring_write() is async-signal-safe as long as a
 * signal handler never writes to the ring its interrupted thread is writing.
 */
#ifndef RTE_RING_H
#define RTE_RING_H

#include <stddef.h>
#include <stdint.h>

#include "rte/format.h"

struct rte_ring_writer {
	uint64_t *head_p; /* shared ring header word 0 */
	uint64_t *tail_p; /* shared ring header word 1 */
	uint64_t *data;   /* ring_size_elements words */
	uint64_t mask;    /* ring_size_elements - 1 */
	/* First word counter the fast path may not write: the smaller of
	 * head + size (older data would be overwritten) and the physical end
	 * of the ring (a message would straddle it). */
	uint64_t limit;
	/* Message boundaries, to advance head without walking every message:
	 * marks[b % RTE_RING_MARKS] is the first message boundary the writer
	 * crossed into block b (blocks are 2^mark_shift words, 1/256 of the
	 * ring). A mark is trusted only if it lies in its block and between
	 * head and tail; otherwise the slow path walks message by message. */
	unsigned mark_shift;
	/* Words of the data area, from its start, whose blocks are reserved
	 * (the whole ring unless set_grow said otherwise), and the call that
	 * reserves more: it returns 0 with extent >= `need` (at most the
	 * ring), or -1. Both NULL/size for a writer that never grows. */
	uint64_t extent;
	int (*grow)(struct rte_ring_writer *w, uint64_t need);
	const void *grow_ctx; /* for grow */
	unsigned ring;        /* index given to attach, for grow */
	uint64_t marks[256];
};
#define RTE_RING_MARKS 256u

/* head and tail live only in the shared header: this writer is their only
 * writer, so it reads them back with relaxed loads (its own stores). Keeping
 * no private copies saves a store per event on the fast path. */
static inline uint64_t rte_ring_tail(const struct rte_ring_writer *w)
{
	return __atomic_load_n(w->tail_p, __ATOMIC_RELAXED);
}

static inline uint64_t rte_ring_head(const struct rte_ring_writer *w)
{
	return __atomic_load_n(w->head_p, __ATOMIC_RELAXED);
}

/*
 * Attach a writer to ring `ring` of a mapped file with layout `l`, picking up
 * head and tail from the ring header (0 for a fresh ring). The caller
 * guarantees `ring < l->max_domains` and that the mapping covers the file.
 */
void rte_ring_writer_attach(struct rte_ring_writer *w, void *base,
                            const struct rte_layout *l, unsigned ring);

/* Only the first `extent` words of the ring's data are reserved; `grow`
 * reserves more (see "Lazy reservation" above). Call after attach. */
void rte_ring_writer_set_grow(struct rte_ring_writer *w, uint64_t extent,
                              int (*grow)(struct rte_ring_writer *w,
                                          uint64_t need),
                              const void *ctx);

/* Reset a ring to empty (head = tail = 0), e.g. before handing it to a new
 * owner in a fresh file. */
void rte_ring_writer_reset(struct rte_ring_writer *w);

/* Slow path: reserve more of the ring's blocks (grow), write padding up to
 * the end and/or advance head so that `len` words fit at the tail.
 * Returns 0, or -1 if a message of `len` words can never fit this ring or
 * its blocks could not be reserved. Out of line; see ring.c. */
int rte_ring_make_room(struct rte_ring_writer *w, unsigned len);

static inline void rte_ring_store_word(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/*
 * Reserve a message of `len` words at the tail: returns where its first word
 * goes and stores the tail counter in *tail, or returns NULL (nothing
 * reserved) if the message is longer than the ring or than the 10-bit
 * length field allows. Fill the words, then call rte_ring_commit().
 */
static inline uint64_t *rte_ring_reserve(struct rte_ring_writer *w,
                                         unsigned len, uint64_t *tail)
{
	uint64_t t = rte_ring_tail(w);

	/* len > RTE_MAX_MSG_WORDS would not fit the 10-bit length field:
	 * make_room refuses it (folded away for a constant len). */
	if (__builtin_expect(t + len > w->limit || len > RTE_MAX_MSG_WORDS, 0)) {
		if (rte_ring_make_room(w, len) < 0)
			return NULL;
		t = rte_ring_tail(w);
	}
	*tail = t;
	return w->data + (t & w->mask);
}

/* Publish the message reserved at `tail`; tail_p is w->tail_p, read by
 * a caller before its data stores (the compiler must otherwise read it
 * again after them: they might alias w). */
static inline void rte_ring_commit_at(struct rte_ring_writer *w,
                                      uint64_t *tail_p, uint64_t tail,
                                      unsigned len)
{
	if ((tail ^ (tail + len)) >> w->mark_shift)
		w->marks[((tail + len) >> w->mark_shift) % RTE_RING_MARKS] =
			tail + len;
	/* Publishes the message's words; pairs with the reader's acquire load
	 * of tail before it copies a message. */
	__atomic_store_n(tail_p, tail + len, __ATOMIC_RELEASE);
}

static inline void rte_ring_commit(struct rte_ring_writer *w, uint64_t tail,
                                   unsigned len)
{
	rte_ring_commit_at(w, w->tail_p, tail, len);
}

/*
 * Write one message of 2 + npayload words (npayload <= 1021): header word
 * (its length field is filled in here), timestamp, payload. Returns 0, or -1
 * (nothing written) if the message is longer than the ring.
 */
static inline int rte_ring_write(struct rte_ring_writer *w, uint64_t hdr,
                                  uint64_t ts, const uint64_t *payload,
                                  unsigned npayload)
{
	unsigned len = 2 + npayload;
	uint64_t tail, *dst = rte_ring_reserve(w, len, &tail);

	if (!dst)
		return -1;
	rte_ring_store_word(dst, hdr | ((uint64_t)len << RTE_HDR_LEN_SHIFT));
	rte_ring_store_word(dst + 1, ts);
	for (unsigned i = 0; i < npayload; i++)
		rte_ring_store_word(dst + 2 + i, payload[i]);
	rte_ring_commit(w, tail, len);
	return 0;
}

/*
 * Write a user custom message carrying the n bytes at `bytes`, encoded as
 * doc/FORMAT.md says (rte_custom_encode), straight into the ring. Returns 0, or
 * -1 (nothing written) if it does not fit the ring or a message.
 */
static inline int rte_ring_write_bytes(struct rte_ring_writer *w, uint64_t hdr,
                                       uint64_t ts, const void *bytes, size_t n)
{
	const unsigned char *p = (const unsigned char *)bytes;
	size_t full = n / 8, words = full + 1; /* == rte_custom_words(n) */
	unsigned char last[8] = { 0 };
	uint64_t tail, v, *dst;

	if (words > RTE_MAX_MSG_WORDS - 2)
		return -1;
	dst = rte_ring_reserve(w, (unsigned)(2 + words), &tail);
	if (!dst)
		return -1;
	rte_ring_store_word(dst, hdr | ((uint64_t)(2 + words) << RTE_HDR_LEN_SHIFT));
	rte_ring_store_word(dst + 1, ts);
	for (size_t i = 0; i < full; i++) {
		__builtin_memcpy(&v, p + 8 * i, 8);
		rte_ring_store_word(dst + 2 + i, v);
	}
	for (size_t i = 0; i < n - 8 * full; i++)
		last[i] = p[8 * full + i];
	last[7] = (unsigned char)(7 - (n - 8 * full)); /* 8w - 1 - n */
	__builtin_memcpy(&v, last, 8);
	rte_ring_store_word(dst + 2 + full, v);
	rte_ring_commit(w, tail, (unsigned)(2 + words));
	return 0;
}

/* The two hottest shapes, spelled out so the compiler keeps them tight. */
static inline int rte_ring_write0(struct rte_ring_writer *w, uint64_t hdr,
                                  uint64_t ts)
{
	return rte_ring_write(w, hdr, ts, NULL, 0);
}

static inline int rte_ring_write1(struct rte_ring_writer *w, uint64_t hdr,
                                  uint64_t ts, uint64_t v)
{
	return rte_ring_write(w, hdr, ts, &v, 1);
}

#endif
