/*
 * follow.h - --follow: read live rings until their writers end.
 *
 * Each round samples every source's liveness, refills the merge, drains it
 * through the caller's drain(), flushes the output, sleeps a little when
 * nothing came (1 to 10 ms) and rescans the DIR inputs every 100 ms. A
 * source that ends without ring_stop is said (RD_EX_KILLED). Ends when no
 * writer is left (after a grace second for a process that may exec), on
 * an output error, or on SIGINT/SIGTERM. Not thread-safe.
 */
#ifndef RD_FOLLOW_H
#define RD_FOLLOW_H

#include <stdint.h>

#include "discover.h"
#include "out.h"

struct rd_follow {
	rd_merge *merge;
	struct rd_procs *procs;
	struct rd_discover *disc;   /* its DIR inputs are rescanned */
	struct rd_out *out;
	uint64_t (*drain)(void *arg); /* deliver what is there; returns how many */
	void *arg;
	uint64_t last_stop_ms;      /* when a source last ended (0 at first) */
};

void rd_follow(struct rd_follow *f);

#endif
