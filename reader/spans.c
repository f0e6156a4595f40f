/*
 * spans.c - the slow path of begin/end matching (see spans.h).
 */
#include <stdlib.h>
#include <string.h>

#include "spans.h"

int rd_spans_make_room(struct rd_spans *st)
{
	if (st->cap < RD_SPANS_DEPTH) {
		unsigned cap = st->cap ? 2 * st->cap : 4;
		struct rd_span_open *n;

		if (cap > RD_SPANS_DEPTH)
			cap = RD_SPANS_DEPTH;
		n = realloc(st->s, cap * sizeof *n);
		if (n) {
			st->s = n;
			st->cap = cap;
			return 0;
		}
	}
	if (st->depth == 0) { /* out of memory, nothing to forget */
		st->dropped++;
		return -1;
	}
	memmove(st->s, st->s + 1, (st->depth - 1) * sizeof st->s[0]);
	st->depth--;
	st->dropped++;
	return 0;
}

void rd_spans_free(struct rd_spans *st)
{
	free(st->s);
	st->s = NULL;
	st->depth = st->cap = 0;
}
