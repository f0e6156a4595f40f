/*
 * hist.h - fixed-size log-linear histogram of durations (or any u64).
 *
 * Values below 2^RD_HIST_SUB_BITS are counted exactly; above, each power of
 * two is split into 2^RD_HIST_SUB_BITS equal buckets, so a bucket is at most
 * 1/128 of its values wide and a percentile read from it (the bucket's
 * midpoint, clamped to the exact min and max) is within 0.4% of a value
 * that was recorded. Values of 2^RD_HIST_MAX_BITS ns (about 78 hours) and
 * more share the last bucket (max stays exact). The size never depends on
 * the number of values: about 43 KiB a histogram.
 *
 * Library candidate: depends on nothing but libc. Not thread-safe; pure
 * otherwise (no allocation after rd_hist_new()).
 */
#ifndef RD_HIST_H
#define RD_HIST_H

#include <stdint.h>

#include "spans.h" /* rd_dur_sum_add: the one rule of a total */

#define RD_HIST_SUB_BITS 7u
#define RD_HIST_MAX_BITS 48u
#define RD_HIST_BUCKETS \
	((RD_HIST_MAX_BITS - RD_HIST_SUB_BITS + 1u) << RD_HIST_SUB_BITS)

struct rd_hist {
	uint64_t count, sum, min, max;
	uint64_t b[RD_HIST_BUCKETS];
};

/* A zeroed histogram, or NULL if out of memory. Free with free(). */
struct rd_hist *rd_hist_new(void);

static inline unsigned rd_hist_index(uint64_t v)
{
	unsigned msb, shift;

	if (v < (1u << RD_HIST_SUB_BITS))
		return (unsigned)v;
	if (v >= (uint64_t)1 << RD_HIST_MAX_BITS)
		return RD_HIST_BUCKETS - 1;
	msb = 63u - (unsigned)__builtin_clzll(v);
	shift = msb - RD_HIST_SUB_BITS;
	return (shift << RD_HIST_SUB_BITS) + (unsigned)(v >> shift);
}

/* Record one value. The sum saturates at UINT64_MAX. */
static inline void rd_hist_add(struct rd_hist *h, uint64_t v)
{
	if (h->count == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	rd_dur_sum_add(&h->sum, v);
	h->b[rd_hist_index(v)]++;
}

/* The lowest value and the width of bucket i. */
void rd_hist_bucket_range(unsigned i, uint64_t *lo, uint64_t *width);

/*
 * The q-quantile (0 < q <= 1) of the recorded values: the smallest bucket
 * holding the ceil(q * count)-th value, as its midpoint clamped to
 * [min, max]. 0 if the histogram is empty.
 */
uint64_t rd_hist_quantile(const struct rd_hist *h, double q);

/* Add every value of h to into (a run's histogram from its processes'):
 * the same as recording them there, the total by rd_dur_sum_add. */
void rd_hist_merge(struct rd_hist *into, const struct rd_hist *h);

/* The mean, rounded down; 0 if empty. */
uint64_t rd_hist_mean(const struct rd_hist *h);

#endif
