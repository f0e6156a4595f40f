/*
 * bounds.c - a ring's head and tail checked before refill() copies from it
 * (consumer.c): the words readable at the reader's place, a first message
 * whose length is bad (overwritten under the reader, or garbage), and the
 * pages behind the reader given back.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rte/consumer.h"
#include "cursor.h"

/*
 * Pages of a ring that were copied are given back (MADV_DONTNEED: for a
 * shared file mapping, only our mapping of them goes; touching them again
 * maps the file's pages again) once DROP_BYTES of them are behind the
 * reader: the memory of a reader stays flat however long the file, instead
 * of growing by every page read. Not in a packed capture (unpack.c): its
 * mapping is anonymous, and a page given back there would read again as
 * zeros (a ring that wraps is read up to the page the reader is in again).
 */
#define DROP_BYTES ((uint64_t)1 << 20)

/*
 * Check head and tail of `ring` against r->pos. Returns the number of words
 * readable at r->pos (> 0), 0 if none, READ_LOST if the producer overwrote
 * r->pos (*head set), or an error.
 */
int64_t consumer_ring_bounds(rte_cursor *c, unsigned ring, uint64_t *head_out)
{
	struct ring_state *r = &c->rings[ring];
	const uint64_t *hdr = ring_header(c, ring);
	uint64_t size = c->layout.ring_size_elements;
	uint64_t head = load_acq(hdr), tail = load_acq(hdr + 1);

	*head_out = head;
	if (tail < head)
		return consumer_ring_fail(c, ring, RTE_ECORRUPT, "head %llu is past tail %llu",
		                 (unsigned long long)head, (unsigned long long)tail);
	if (tail - head > size) {
		/* A producer never holds more than `size` live words, but head
		 * was loaded before tail and may be stale: reload it (acquire;
		 * pairs with the producer's release store of head, made before
		 * its store of this tail). Still too far apart: the ring is
		 * corrupt, and reading it would go round it without end. */
		*head_out = head = load_acq(hdr);
		if (head <= tail && tail - head > size)
			return consumer_ring_fail(c, ring, RTE_ECORRUPT,
			                 "tail %llu is more than the ring size past head %llu",
			                 (unsigned long long)tail, (unsigned long long)head);
	}
	if (r->pos < head)
		return READ_LOST;
	if (r->pos > tail)
		return consumer_ring_fail(c, ring, RTE_ECORRUPT,
		                 "tail went back from %llu to %llu",
		                 (unsigned long long)r->pos, (unsigned long long)tail);
	return (int64_t)(tail - r->pos);
}

/* The first message at r->pos has a length that is 0 or runs past the end
 * of the ring or past the tail: overwritten under us
 * (READ_LOST, *head set) or garbage (an error). */
int consumer_bad_length(rte_cursor *c, unsigned ring, unsigned len,
                      uint64_t *head_out)
{
	struct ring_state *r = &c->rings[ring];
	uint64_t idx = r->pos & (c->layout.ring_size_elements - 1);

	/* Orders the load of the length before the re-check of head; pairs
	 * with the producer's release fence after it advances head. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*head_out = load_acq(ring_header(c, ring));
	if (*head_out > r->pos)
		return READ_LOST;
	return consumer_ring_fail(c, ring, RTE_ECORRUPT,
	                 "message of %u words at word %llu %s", len,
	                 (unsigned long long)r->pos,
	                 len == 0 ? "has length 0"
	                 : idx + len > c->layout.ring_size_elements
	                         ? "runs past the end of the ring"
	                         : "runs past the tail");
}

/* The copy of `ring` ended at ring index `upto` (at most the ring size):
 * give back the whole pages before it if DROP_BYTES of them piled up. */
void consumer_drop_pages(rte_cursor *c, unsigned ring, uint64_t upto)
{
	struct ring_state *r = &c->rings[ring];
	uintptr_t data = (uintptr_t)ring_data(c, ring), page, lo, hi;

	if (c->packed)
		return;
	if (upto < r->kept)
		r->kept = 0; /* went round the ring */
	if ((upto - r->kept) * 8 < DROP_BYTES)
		return;
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	lo = (data + r->kept * 8 + page - 1) & ~(page - 1);
	hi = (data + upto * 8) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED); /* a hint: may fail */
	r->kept = upto;
}
