/*
 * heap.h - the peak of a process's heap, folded from the allocation
 * profiler's rte.alloc.peak and rte.alloc.peak_ns int events
 * (include/rte/profile.h): the one rule for every part of the reader that
 * reports it (summary and summary-json through heap.c, the Prometheus
 * exporter), so that they agree.
 *
 * The shim writes rte.alloc.peak (the highest usable bytes live in the
 * process so far, never 0) with a heap point or a flush when it rose,
 * rte.alloc.peak_ns (when it was reached, the rings' clock) right after
 * it on the same ring. The peak is the highest rte.alloc.peak seen (a
 * lost peak_ns loses its time, not the bytes); its time is the peak_ns
 * that follows that value. Any order of events, any values: nothing is
 * trusted. Pure, no allocation; thread-compatible (one struct per thread).
 */
#ifndef RD_HEAP_H
#define RD_HEAP_H

#include <stdint.h>

struct rd_heap_peak {
	int has;          /* an rte.alloc.peak was seen */
	uint64_t bytes;   /* the peak: the highest rte.alloc.peak */
	uint64_t ns;      /* its time: its rte.alloc.peak_ns (0: unknown) */
	uint64_t pending; /* the last rte.alloc.peak, waiting for its
	                     peak_ns (0: none) */
};

/* Fold one rte.alloc.* int event of one process, name the part after
 * "rte.alloc." ("peak", "peak_ns"), v its value (0 if negative): 1 if it
 * was one of the two (folded into h), else 0 (h untouched). h starts
 * zeroed. */
int rd_heap_peak_fold(struct rd_heap_peak *h, const char *name, uint64_t v);

#endif
