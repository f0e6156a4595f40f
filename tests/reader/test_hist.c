/*
 * test_hist.c - the log-linear histogram of reader/hist.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../reader/hist.h"

static void small_values_are_exact(void **state)
{
	struct rd_hist *h = rd_hist_new();

	(void)state;
	for (uint64_t v = 1; v <= 100; v++)
		rd_hist_add(h, v);
	assert_int_equal(rd_hist_quantile(h, 0.5), 50);
	assert_int_equal(rd_hist_quantile(h, 0.9), 90);
	assert_int_equal(rd_hist_quantile(h, 0.99), 99);
	assert_int_equal(rd_hist_quantile(h, 1.0), 100);
	assert_int_equal(h->min, 1);
	assert_int_equal(h->max, 100);
	assert_int_equal(h->sum, 5050);
	assert_int_equal(rd_hist_mean(h), 50);
	free(h);
}

static void every_bucket_holds_its_values_within_one_percent(void **state)
{
	uint64_t lo, width;
	unsigned last = 0;

	(void)state;
	for (uint64_t v = 1; v < ((uint64_t)1 << RD_HIST_MAX_BITS); v += v / 97 + 1) {
		unsigned i = rd_hist_index(v);

		assert_true(i < RD_HIST_BUCKETS);
		assert_true(i >= last); /* monotonic */
		last = i;
		rd_hist_bucket_range(i, &lo, &width);
		assert_true(lo <= v && v - lo < width);
		assert_true(width == 1 || width * 128 <= lo);
	}
}

static void huge_values_share_the_last_bucket_and_max_stays_exact(void **state)
{
	struct rd_hist *h = rd_hist_new();

	(void)state;
	rd_hist_add(h, UINT64_MAX - 1);
	rd_hist_add(h, UINT64_MAX - 1);
	assert_int_equal(rd_hist_index(UINT64_MAX), RD_HIST_BUCKETS - 1);
	assert_int_equal(h->max, UINT64_MAX - 1);
	assert_int_equal(h->sum, UINT64_MAX); /* saturated */
	assert_int_equal(rd_hist_quantile(h, 0.5), UINT64_MAX - 1); /* clamped */
	free(h);
}

static void percentiles_of_a_uniform_spread_are_within_one_percent(void **state)
{
	struct rd_hist *h = rd_hist_new();

	(void)state;
	for (uint64_t us = 1; us <= 1000; us++)
		rd_hist_add(h, us * 1000);
	for (int k = 0; k < 4; k++) {
		static const double q[] = { 0.5, 0.9, 0.99, 0.999 };
		static const uint64_t exact[] = { 500000, 900000, 990000, 999000 };
		uint64_t got = rd_hist_quantile(h, q[k]);
		uint64_t diff = got > exact[k] ? got - exact[k] : exact[k] - got;

		assert_true(diff * 100 <= exact[k]);
	}
	free(h);
}

static void empty_histogram_gives_zero(void **state)
{
	struct rd_hist *h = rd_hist_new();

	(void)state;
	assert_int_equal(rd_hist_quantile(h, 0.5), 0);
	assert_int_equal(rd_hist_mean(h), 0);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_values_are_exact),
		cmocka_unit_test(every_bucket_holds_its_values_within_one_percent),
		cmocka_unit_test(huge_values_share_the_last_bucket_and_max_stays_exact),
		cmocka_unit_test(percentiles_of_a_uniform_spread_are_within_one_percent),
		cmocka_unit_test(empty_histogram_gives_zero),
	};

	return cmocka_run_group_tests_name("reader/hist", tests, NULL, NULL);
}
