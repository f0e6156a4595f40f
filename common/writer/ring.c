/*
 * ring.c - slow paths of the ring writer: padding at the wrap and making
 * room by advancing head. The fast path is inline in ring.h.
 */
#include <string.h>

#include "ring.h"

static void update_limit(struct rte_ring_writer *w)
{
	uint64_t end = (rte_ring_tail(w) | w->mask) + 1; /* physical end */
	uint64_t full = rte_ring_head(w) + w->mask + 1;

	w->limit = end < full ? end : full;
	/* Before the ring's first wrap a counter is its physical index, so
	 * the reserved extent bounds the counters too; past it (tail >=
	 * size with extent < size: a header someone else wrote) the limit
	 * stays below tail and make_room reserves the rest. */
	if (w->extent <= w->mask && w->limit > w->extent)
		w->limit = w->extent;
}

void rte_ring_writer_attach(struct rte_ring_writer *w, void *base,
                            const struct rte_layout *l, unsigned ring)
{
	char *b = base;
	uint64_t *hdr =
		(uint64_t *)(b + l->headers_offset +
		             (uint64_t)ring * l->ring_header_size_bytes);

	w->head_p = hdr;
	w->tail_p = hdr + 1;
	w->data = (uint64_t *)(b + l->data_offset +
	                       (uint64_t)ring * l->ring_size_bytes);
	w->mask = l->ring_size_elements - 1;
	w->mark_shift = 0;
	while ((l->ring_size_elements >> w->mark_shift) > RTE_RING_MARKS)
		w->mark_shift++;
	memset(w->marks, 0xff, sizeof w->marks);
	w->extent = l->ring_size_elements;
	w->grow = NULL;
	w->grow_ctx = NULL;
	w->ring = ring;
	uint64_t head = __atomic_load_n(w->head_p, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(w->tail_p, __ATOMIC_ACQUIRE);
	if (head > tail || tail - head > w->mask + 1)
		rte_ring_writer_reset(w);
	update_limit(w);
}

void rte_ring_writer_set_grow(struct rte_ring_writer *w, uint64_t extent,
                              int (*grow)(struct rte_ring_writer *w,
                                          uint64_t need),
                              const void *ctx)
{
	w->extent = extent < w->mask + 1 && grow ? extent : w->mask + 1;
	w->grow = grow;
	w->grow_ctx = ctx;
	update_limit(w);
}

/* Make sure the blocks under the next `len` words at `tail` are reserved:
 * up to tail + len before the first wrap, the whole ring if the message
 * wraps (its padding runs to the end) or the ring has wrapped already.
 * Returns 0 or -1. */
static int reserve_ahead(struct rte_ring_writer *w, uint64_t tail,
                         unsigned len)
{
	uint64_t size = w->mask + 1;
	uint64_t need = tail >= size || tail + len > size ? size : tail + len;

	if (need <= w->extent)
		return 0;
	if (!w->grow || w->grow(w, need) < 0 || w->extent < need)
		return -1;
	if (w->extent > size)
		w->extent = size;
	return 0;
}

void rte_ring_writer_reset(struct rte_ring_writer *w)
{
	__atomic_store_n(w->head_p, 0, __ATOMIC_RELEASE);
	__atomic_store_n(w->tail_p, 0, __ATOMIC_RELEASE);
	memset(w->marks, 0xff, sizeof w->marks); /* stale boundaries */
	update_limit(w);
}

/*
 * The first recorded message boundary at or after `target` (within a few
 * blocks), or the current head if there is none: the caller then walks.
 */
static uint64_t boundary_from_marks(const struct rte_ring_writer *w,
                                    uint64_t target, uint64_t tail)
{
	uint64_t head = rte_ring_head(w);

	for (uint64_t b = target >> w->mark_shift, k = 0; k < 4; k++, b++) {
		uint64_t m = w->marks[b % RTE_RING_MARKS];

		if ((m >> w->mark_shift) == b && m >= target && m >= head &&
		    m <= tail)
			return m;
	}
	return head;
}

/*
 * Advance head message by message until `end - head` fits the ring. Callers
 * ask for 1/32 of the ring more than the message needs, so that in steady
 * state this slow path runs once every few hundred words instead of on
 * every write; the flight recorder keeps 31/32 of its capacity.
 */
static void advance_head(struct rte_ring_writer *w, uint64_t end)
{
	uint64_t size = w->mask + 1;
	uint64_t head = rte_ring_head(w), tail = rte_ring_tail(w);

	if (end > tail + size)
		end = tail + size; /* never past the tail: head <= tail */
	if (end - head <= size)
		return;
	head = boundary_from_marks(w, end - size, tail);
	while (end - head > size) {
		uint64_t word = __atomic_load_n(&w->data[head & w->mask],
		                                __ATOMIC_RELAXED);
		unsigned l = rte_hdr_len(word);

		if (l == 0 || l > size - (head & w->mask) || head + l > tail) {
			/* Someone scribbled on our ring: never loop on a bad
			 * length; drop everything written so far instead. */
			head = tail;
			break;
		}
		head += l;
	}
	/* Readers that copied the words we are about to overwrite see this
	 * head after their fence and discard the copy. */
	__atomic_store_n(w->head_p, head, __ATOMIC_RELEASE);
	/* Orders the head store before the data stores that follow. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

int rte_ring_make_room(struct rte_ring_writer *w, unsigned len)
{
	uint64_t size = w->mask + 1;
	uint64_t tail = rte_ring_tail(w), idx = tail & w->mask;

	if (len > size || len > RTE_MAX_MSG_WORDS)
		return -1;
	if (rte_ring_head(w) > tail || tail - rte_ring_head(w) > size) {
		/* Another process wrote our ring header: walking from such a
		 * head could take forever. Start the ring afresh. */
		rte_ring_writer_reset(w);
		tail = idx = 0;
	}
	if (w->extent < size && reserve_ahead(w, tail, len) < 0)
		return -1;
	if (idx + len > size) {
		unsigned pad = (unsigned)(size - idx);

		if (tail + pad - rte_ring_head(w) > size)
			advance_head(w, tail + pad + (size >> 5));
		rte_ring_store_word(&w->data[idx],
		                    rte_hdr_make(pad, 0, RTE_MSG_INTERNAL, 0));
		tail += pad;
		w->marks[(tail >> w->mark_shift) % RTE_RING_MARKS] = tail;
		/* The padding is published with the next message's tail;
		 * storing it now keeps head <= tail for advance_head(). */
		__atomic_store_n(w->tail_p, tail, __ATOMIC_RELEASE);
	}
	if (tail + len - rte_ring_head(w) > size)
		advance_head(w, tail + len + (size >> 5));
	update_limit(w);
	return 0;
}
