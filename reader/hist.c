/*
 * hist.c - log-linear histogram (see hist.h).
 */
#include <math.h>
#include <stdlib.h>

#include "hist.h"

struct rd_hist *rd_hist_new(void)
{
	return calloc(1, sizeof(struct rd_hist));
}

void rd_hist_bucket_range(unsigned i, uint64_t *lo, uint64_t *width)
{
	unsigned shift;

	if (i < (2u << RD_HIST_SUB_BITS)) {
		*lo = i;
		*width = 1;
		return;
	}
	shift = (i >> RD_HIST_SUB_BITS) - 1u;
	*lo = (uint64_t)((i & ((1u << RD_HIST_SUB_BITS) - 1u)) |
	                 (1u << RD_HIST_SUB_BITS)) << shift;
	*width = (uint64_t)1 << shift;
}

uint64_t rd_hist_quantile(const struct rd_hist *h, double q)
{
	uint64_t rank, seen = 0, lo, width, mid;
	double r;

	if (h->count == 0)
		return 0;
	r = ceil(q * (double)h->count);
	rank = r < 1 ? 1 : r > (double)h->count ? h->count : (uint64_t)r;
	for (unsigned i = 0; i < RD_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen < rank)
			continue;
		rd_hist_bucket_range(i, &lo, &width);
		mid = lo + (width - 1) / 2;
		if (mid < h->min)
			return h->min;
		return mid > h->max ? h->max : mid;
	}
	return h->max;
}

uint64_t rd_hist_mean(const struct rd_hist *h)
{
	return h->count ? h->sum / h->count : 0;
}

void rd_hist_merge(struct rd_hist *into, const struct rd_hist *h)
{
	if (!h->count)
		return;
	if (!into->count || h->min < into->min)
		into->min = h->min;
	if (h->max > into->max)
		into->max = h->max;
	into->count += h->count;
	rd_dur_sum_add(&into->sum, h->sum);
	for (unsigned i = 0; i < RD_HIST_BUCKETS; i++)
		into->b[i] += h->b[i];
}
