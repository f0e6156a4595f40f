/*
 * top.h - the --top N output (top.c): the N longest runtime phases and
 * user spans, as text or JSON.
 */
#ifndef RD_TOP_H
#define RD_TOP_H

#include "sinks.h"

/* NULL if out of memory. */
struct rd_sink *rd_sink_top(unsigned n, int json);

#endif
