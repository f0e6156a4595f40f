/*
 * spans.c - the slow path of begin/end matching (see spans.h).
 */
#include <string.h>

#include "spans.h"

void rd_spans_forget_oldest(struct rd_spans *st)
{
	memmove(st->s, st->s + 1, (RD_SPANS_DEPTH - 1) * sizeof st->s[0]);
	st->depth--;
	st->dropped++;
}
