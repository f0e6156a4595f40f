/*
 * fmt/text.h - what fmt/text.c takes from fmt/text_proc.c.
 */
#ifndef RD_FMT_TEXT_H
#define RD_FMT_TEXT_H

#include "rte/consumer.h"
#include "out.h"

/* The VALUE column of one of rte's process events (rte.proc, rte.exit,
 * rte.reap, rte.spawn_failed); 0, writing nothing, if ev is none of them
 * or its payload is malformed. */
int rd_text_proc_value(struct rd_out *o, const struct rte_event *ev);

#endif
