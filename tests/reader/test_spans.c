/*
 * test_spans.c - begin/end matching of reader/spans.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../reader/spans.h"

static void nested_spans_match_innermost_first(void **state)
{
	struct rd_spans st;
	uint64_t b;

	(void)state;
	memset(&st, 0, sizeof st);
	rd_spans_begin(&st, 1, 100, "outer");
	rd_spans_begin(&st, 2, 110, "inner");
	rd_spans_begin(&st, 1, 120, "outer again");
	assert_int_equal(rd_spans_end(&st, 1, &b, NULL, NULL), 1);
	assert_int_equal(b, 120);
	assert_int_equal(rd_spans_end(&st, 2, &b, NULL, NULL), 1);
	assert_int_equal(b, 110);
	assert_int_equal(rd_spans_end(&st, 1, &b, NULL, NULL), 1);
	assert_int_equal(b, 100);
	assert_int_equal(rd_spans_depth(&st), 0);
	assert_int_equal(st.dropped, 0);
	rd_spans_free(&st);
}

/* User spans: A begin, B begin, A end, B end (fibers) complete both, and
 * only the same name nests. */
static void end_one_leaves_other_names_open(void **state)
{
	struct rd_spans st;
	uint64_t b;

	(void)state;
	memset(&st, 0, sizeof st);
	rd_spans_begin(&st, 1, 100, "A");
	rd_spans_begin(&st, 2, 110, "B");
	rd_spans_begin(&st, 1, 120, "A nested");
	assert_int_equal(rd_spans_end_one(&st, 1, &b), 1);
	assert_int_equal(b, 120);
	assert_int_equal(rd_spans_end_one(&st, 1, &b), 1);
	assert_int_equal(b, 100);
	assert_int_equal(rd_spans_depth(&st), 1);
	assert_int_equal(st.s[0].id, 2);
	assert_int_equal(rd_spans_end_one(&st, 2, &b), 1);
	assert_int_equal(b, 110);
	assert_int_equal(rd_spans_end_one(&st, 2, &b), 0);
	assert_int_equal(rd_spans_depth(&st), 0);
	assert_int_equal(st.dropped, 0);
	rd_spans_free(&st);
}

static void end_without_begin_is_unmatched_and_changes_nothing(void **state)
{
	struct rd_spans st;
	uint64_t b = 7;

	(void)state;
	memset(&st, 0, sizeof st);
	rd_spans_begin(&st, 1, 100, NULL);
	assert_int_equal(rd_spans_end(&st, 3, &b, NULL, NULL), 0);
	assert_int_equal(b, 7);
	assert_int_equal(rd_spans_depth(&st), 1);
	rd_spans_free(&st);
}

static void closing_an_outer_span_drops_the_inner_ones(void **state)
{
	struct rd_spans st;
	const struct rd_span_open *d = NULL;
	unsigned nd;
	uint64_t b;

	(void)state;
	memset(&st, 0, sizeof st);
	rd_spans_begin(&st, 1, 100, "a");
	rd_spans_begin(&st, 2, 110, "b");
	rd_spans_begin(&st, 3, 120, "c");
	assert_int_equal(rd_spans_end(&st, 1, &b, &d, &nd), 1);
	assert_int_equal(b, 100);
	assert_int_equal(nd, 2);
	assert_int_equal(d[0].id, 2);
	assert_string_equal(d[1].name, "c");
	assert_int_equal(st.dropped, 2);
	assert_int_equal(rd_spans_depth(&st), 0);
	rd_spans_free(&st);
}

static void depth_is_bounded(void **state)
{
	struct rd_spans st;
	uint64_t b;

	(void)state;
	memset(&st, 0, sizeof st);
	for (unsigned i = 0; i < 10 * RD_SPANS_DEPTH; i++)
		rd_spans_begin(&st, i, i, NULL);
	assert_int_equal(rd_spans_depth(&st), RD_SPANS_DEPTH);
	assert_int_equal(st.dropped, 9 * RD_SPANS_DEPTH);
	assert_int_equal(rd_spans_end(&st, 10 * RD_SPANS_DEPTH - 1, &b, NULL, NULL), 1);
	assert_int_equal(rd_spans_end(&st, 0, &b, NULL, NULL), 0); /* forgotten */
	rd_spans_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nested_spans_match_innermost_first),
		cmocka_unit_test(end_one_leaves_other_names_open),
		cmocka_unit_test(end_without_begin_is_unmatched_and_changes_nothing),
		cmocka_unit_test(closing_an_outer_span_drops_the_inner_ones),
		cmocka_unit_test(depth_is_bounded),
	};

	return cmocka_run_group_tests_name("reader/spans", tests, NULL, NULL);
}
