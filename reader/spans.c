/*
 * spans.c - begin/end matching (see spans.h).
 */
#include <string.h>

#include "spans.h"

void rte_spans_begin(struct rte_spans *st, unsigned id, uint64_t ts,
                     const char *name)
{
	if (st->depth == RTE_SPANS_DEPTH) {
		memmove(st->s, st->s + 1, (RTE_SPANS_DEPTH - 1) * sizeof st->s[0]);
		st->depth--;
		st->dropped++;
	}
	st->s[st->depth].ts = ts;
	st->s[st->depth].id = id;
	st->s[st->depth].name = name;
	st->depth++;
}

int rte_spans_end(struct rte_spans *st, unsigned id, uint64_t *begin_ts,
                  const struct rte_span_open **dropped, unsigned *ndropped)
{
	unsigned i = st->depth;

	/* The common case, the innermost span, costs one comparison. */
	while (i > 0 && st->s[i - 1].id != id)
		i--;
	if (i == 0)
		return 0;
	*begin_ts = st->s[i - 1].ts;
	if (dropped) {
		*dropped = &st->s[i];
		*ndropped = st->depth - i;
	}
	st->dropped += st->depth - i;
	st->depth = i - 1;
	return 1;
}
