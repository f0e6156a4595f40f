/*
 * test_strbuf.c - common/format/strbuf.h: the printf-free string builder of
 * the shim's start, against snprintf of the same pieces.
 */
#include <stdio.h>
#include <string.h>

#include "rte_test.h"
#include "strbuf.h"

static void test_pieces(void **state)
{
	char buf[64], want[64];
	struct rte_sb b;
	unsigned long long vals[] = {0, 7, 10, 255, 4096, 123456789ull,
	                             18446744073709551615ull};

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		rte_sb_init(&b, buf, sizeof(buf));
		rte_sb_str(&b, ".");
		rte_sb_uint(&b, vals[i], 10, 0);
		rte_sb_str(&b, ".");
		rte_sb_uint(&b, vals[i] & 0xffffffffu, 16, 8);
		rte_sb_str(&b, ".events.tmp");
		snprintf(want, sizeof(want), ".%llu.%08llx.events.tmp", vals[i],
		         vals[i] & 0xffffffffu);
		assert_false(rte_sb_over(&b));
		assert_string_equal(buf, want);
		assert_int_equal(b.len, strlen(want));
	}
}

/* Exactly full (cap - 1 characters) fits; one more does not, and leaves
 * an empty string, as a caller that reports ENAMETOOLONG expects. */
static void test_overflow(void **state)
{
	char buf[8];
	struct rte_sb b;

	(void)state;
	rte_sb_init(&b, buf, sizeof(buf));
	rte_sb_str(&b, "abc");
	rte_sb_str(&b, "defg");
	assert_false(rte_sb_over(&b));
	assert_string_equal(buf, "abcdefg");
	rte_sb_str(&b, "h");
	assert_true(rte_sb_over(&b));
	assert_string_equal(buf, "");
	rte_sb_str(&b, "");
	assert_true(rte_sb_over(&b));

	rte_sb_init(&b, buf, sizeof(buf));
	rte_sb_uint(&b, 12345678, 10, 0);
	assert_true(rte_sb_over(&b));
	assert_string_equal(buf, "");

	rte_sb_init(&b, buf, 0);
	assert_true(rte_sb_over(&b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_overflow),
	};

	return cmocka_run_group_tests_name("strbuf", tests, NULL, NULL);
}
