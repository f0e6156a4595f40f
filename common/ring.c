/*
 * ring.c - slow paths of the ring writer: padding at the wrap and making
 * room by advancing head. The fast path is inline in ring.h.
 */
#include "ring.h"

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
	w->head = __atomic_load_n(w->head_p, __ATOMIC_ACQUIRE);
	w->tail = __atomic_load_n(w->tail_p, __ATOMIC_ACQUIRE);
	if (w->head > w->tail || w->tail - w->head > w->mask + 1)
		rte_ring_writer_reset(w);
}

void rte_ring_writer_reset(struct rte_ring_writer *w)
{
	w->head = w->tail = 0;
	__atomic_store_n(w->head_p, 0, __ATOMIC_RELEASE);
	__atomic_store_n(w->tail_p, 0, __ATOMIC_RELEASE);
}

/* Advance head message by message until `end - head` fits the ring. */
static void advance_head(struct rte_ring_writer *w, uint64_t end)
{
	uint64_t size = w->mask + 1;
	uint64_t head = w->head;

	while (end - head > size) {
		uint64_t word = __atomic_load_n(&w->data[head & w->mask],
		                                __ATOMIC_RELAXED);
		unsigned l = rte_hdr_len(word);

		if (l == 0 || l > size - (head & w->mask) || head + l > w->tail) {
			/* Someone scribbled on our ring: never loop on a bad
			 * length; drop everything written so far instead. */
			head = w->tail;
			break;
		}
		head += l;
	}
	w->head = head;
	/* Readers that copied the words we are about to overwrite see this
	 * head after their fence and discard the copy. */
	__atomic_store_n(w->head_p, head, __ATOMIC_RELEASE);
	/* Orders the head store before the data stores that follow. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

int rte_ring_make_room(struct rte_ring_writer *w, unsigned len)
{
	uint64_t size = w->mask + 1;
	uint64_t idx = w->tail & w->mask;

	if (len > size || len > RTE_MAX_MSG_WORDS)
		return -1;
	if (idx + len > size) {
		unsigned pad = (unsigned)(size - idx);

		if (w->tail + pad - w->head > size)
			advance_head(w, w->tail + pad);
		rte_ring_store_word(&w->data[idx],
		                    rte_hdr_make(pad, 0, RTE_MSG_INTERNAL, 0));
		w->tail += pad;
	}
	if (w->tail + len - w->head > size)
		advance_head(w, w->tail + len);
	return 0;
}
