/*
 * poll.c - what is built on the reads of consumer.c: rte_cursor_next_words()
 * and _consume_words() over rte_cursor_peek_words(), the callbacks of an
 * event (rte_event_dispatch()) and rte_cursor_poll().
 */
#include <stddef.h>
#include <stdint.h>

#include "rte/consumer.h"
#include "cursor.h"

/* The whole messages of the copy of `ring` from r->pos: the words up to
 * the end of the copy or to a message it cuts (or whose length is bad). */
static uint64_t whole_messages(const struct ring_state *r)
{
	const uint64_t *buf = r->buf;
	uint64_t pos = r->pos, end = r->end, base = r->base;

	while (pos < end) {
		unsigned len = rte_hdr_len(buf[pos - base]);

		if (!len || len > end - pos)
			break; /* refill() copies it again, or says what is wrong */
		pos += len;
	}
	return pos - r->pos;
}

int rte_cursor_consume_words(rte_cursor *c, unsigned ring, size_t n)
{
	struct ring_state *r;

	if (!c || ring >= c->layout.max_domains)
		return RTE_EINVAL;
	r = &c->rings[ring];
	if (n > r->end - r->pos)
		return RTE_EINVAL;
	r->pos += n;
	return RTE_OK;
}

int rte_cursor_next_words(rte_cursor *c, unsigned ring, const uint64_t **words,
                          uint64_t *lost)
{
	int got = rte_cursor_peek_words(c, ring, words, lost);
	uint64_t n;

	if (got <= 0)
		return got;
	/* only the whole messages (the first one is) */
	n = whole_messages(&c->rings[ring]);
	c->rings[ring].pos += n;
	return (int)n;
}

/* ---- callbacks ---------------------------------------------------------- */

int rte_event_dispatch(const struct rte_event *ev,
                       const struct rte_callbacks *cb, void *ud)
{
	unsigned r = ev->ring;

	switch (ev->kind) {
	case RTE_EV_BEGIN:
		return cb->runtime_begin ? cb->runtime_begin(ud, r, ev->ts, ev->id) : 0;
	case RTE_EV_END:
		return cb->runtime_end ? cb->runtime_end(ud, r, ev->ts, ev->id) : 0;
	case RTE_EV_COUNTER:
		return cb->runtime_counter
		       ? cb->runtime_counter(ud, r, ev->ts, ev->id, ev->u.counter) : 0;
	case RTE_EV_ALLOC:
		return cb->alloc ? cb->alloc(ud, r, ev->ts, ev->u.buckets) : 0;
	case RTE_EV_LIFECYCLE:
		return cb->lifecycle ? cb->lifecycle(ud, r, ev->ts, ev->id, ev->u.data) : 0;
	case RTE_EV_LOST:
		return cb->lost_events ? cb->lost_events(ud, r, ev->u.lost_words) : 0;
	case RTE_EV_USER_UNIT:
		return cb->user_unit ? cb->user_unit(ud, r, ev->ts, ev->id, ev->name) : 0;
	case RTE_EV_USER_INT:
		return cb->user_int
		       ? cb->user_int(ud, r, ev->ts, ev->id, ev->name, ev->u.value) : 0;
	case RTE_EV_USER_SPAN_BEGIN:
	case RTE_EV_USER_SPAN_END:
		return cb->user_span
		       ? cb->user_span(ud, r, ev->ts, ev->id, ev->name,
		                       ev->kind == RTE_EV_USER_SPAN_BEGIN) : 0;
	case RTE_EV_USER_CUSTOM:
		return cb->user_custom
		       ? cb->user_custom(ud, r, ev->ts, ev->id, ev->name,
		                         ev->u.custom.bytes, ev->u.custom.len) : 0;
	default:
		return 0;
	}
}

int rte_cursor_poll(rte_cursor *c, const struct rte_callbacks *cb, void *ud,
                    size_t max_events, size_t *count)
{
	size_t n = 0;
	int rc = RTE_OK;

	if (!c || !cb)
		return RTE_EINVAL;
	for (unsigned ring = 0; ring < c->layout.max_domains && rc == RTE_OK; ring++) {
		struct rte_event ev;
		int got;

		while ((max_events == 0 || n < max_events) &&
		       (got = rte_cursor_next(c, ring, &ev)) != 0) {
			if (got < 0) {
				rc = got;
				break;
			}
			n++;
			rc = rte_event_dispatch(&ev, cb, ud);
			if (rc)
				break;
		}
	}
	if (count)
		*count = n;
	return rc;
}
