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

/*
 * The other allocation figures, one rule for the summary (profile.c) and
 * the exporter (metrics.c). Calls are the `alloc` events' (rte's profiler
 * and OCaml's write them): the sum of an event's buckets. The amounts are
 * the per-flush rte.alloc.* ints, summed (rte.alloc.calls only repeats
 * the buckets' count and is not used).
 */
enum rd_alloc_fig {
	RD_AF_BYTES, RD_AF_USABLE, RD_AF_FREES, RD_AF_FREED, RD_AF_TEMP,
	RD_AF_PEAK, RD_AF_N
};

/* The figure of an rte.alloc.* int, name the part after "rte.alloc.";
 * -1 for the others (calls, heap, peak_ns). */
int rd_alloc_fig_of(const char *name);

/* The calls of one `alloc` event: its RTE_ALLOC_BUCKETS buckets summed. */
uint64_t rd_alloc_calls(const uint64_t *buckets);

#endif
