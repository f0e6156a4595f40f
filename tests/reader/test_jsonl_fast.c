/*
 * test_jsonl_fast.c - the consumer library's printf-free rte_event_jsonl()
 * writes exactly the bytes of its first, printf-based implementation
 * (jsonl_ref.h), also when the buffer is too small (the same prefix, the
 * same length): for events of every kind with edge values built here, and
 * for every event of the ring files named on the command line (run.sh
 * passes the OCaml 5.2 fixtures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rte/consumer.h"
#include "jsonl_ref.h"

static char fast[RTE_JSONL_MAX], ref[RTE_JSONL_MAX];
static char longname[RTE_NAME_SLOT_BYTES]; /* 127 bytes 0x01, each \u0001 */
static char **files;
static int nfiles;

static void same(const struct rte_event *ev, long pid)
{
	size_t m = ref_event_jsonl(ref, sizeof ref, ev, pid);
	size_t n = rte_event_jsonl(fast, sizeof fast, ev, pid);
	static const size_t caps[] = { 1, 2, 17, 64 };

	assert_string_equal(fast, ref);
	assert_int_equal(n, m);
	/* Too small: the same prefix, NUL-terminated, its length returned. */
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		size_t cap = caps[i] < m ? caps[i] : m;

		memset(fast, 'x', cap + 1);
		n = rte_event_jsonl(fast, cap, ev, pid);
		assert_int_equal(n, ref_event_jsonl(ref, cap, ev, pid));
		assert_int_equal(n, cap - 1);
		assert_memory_equal(fast, ref, cap);
		assert_int_equal(fast[cap], 'x');
	}
	fast[0] = 'y';
	assert_int_equal(rte_event_jsonl(fast, 0, ev, pid), 0);
	assert_int_equal(fast[0], 'y'); /* cap 0: nothing written */
}

static void every_kind_with_edge_values(void **state)
{
	static const char *const names[] = {
		"app.x", "", "q\"uote\\back", "ctl\x01\x1f\x7f", "hi\xc3\xa9\xff", NULL,
		longname,
		/* UTF-8 of 2, 3 and 4 bytes, the first and last of each length */
		"\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xef\xbf\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf",
		/* not UTF-8: overlongs, surrogates, past U+10FFFF, leads cut
		 * short (also by the end), lone continuation bytes */
		"\xc0\xaf \xc1\xbf \xe0\x9f\xbf \xf0\x8f\xbf\xbf \xed\xa0\x80 \xed\xbf\xbf",
		"\xf4\x90\x80\x80 \xf5\x80\x80\x80 \xff \xe2\x82 \xf0\x9f\x98 \x80\xbf \xe2\x82",
	};
	static const int64_t ints[] = { 0, -1, INT64_MIN, INT64_MAX, 42 };
	uint64_t buckets[RTE_ALLOC_BUCKETS];
	static uint8_t bytes[RTE_CUSTOM_MAX_BYTES];
	struct rte_event ev;

	(void)state;
	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		buckets[i] = i ? UINT64_MAX / i : 0;
	for (unsigned i = 0; i < sizeof bytes; i++)
		bytes[i] = (uint8_t)i;
	memset(longname, 0x01, sizeof longname - 1);
	for (int k = 0; k < RTE_EV_KIND_COUNT; k++)
		for (size_t ni = 0; ni < sizeof names / sizeof names[0]; ni++)
			for (size_t vi = 0; vi < sizeof ints / sizeof ints[0]; vi++) {
				memset(&ev, 0, sizeof ev);
				ev.kind = (enum rte_event_kind)k;
				ev.ring = (unsigned)vi * 37;
				ev.id = vi == 2 ? 8191 : (unsigned)vi * 3;
				ev.ts = (uint64_t)ints[vi];
				ev.name = names[ni];
				if (k == RTE_EV_ALLOC)
					ev.u.buckets = buckets;
				else if (k == RTE_EV_USER_CUSTOM) {
					ev.u.custom.bytes = bytes;
					/* up to the longest payload a message holds */
					ev.u.custom.len = vi == 4 ? sizeof bytes : vi * 60;
				} else
					ev.u.value = ints[vi];
				same(&ev, -1);
				same(&ev, 12345);
			}
}

static void every_event_of_the_given_files(void **state)
{
	(void)state;
	for (int f = 0; f < nfiles; f++) {
		rte_cursor *c;
		struct rte_event ev;
		unsigned long n = 0;

		assert_int_equal(rte_cursor_open(files[f], &c, NULL, 0), RTE_OK);
		for (unsigned r = 0; r < rte_cursor_rings(c); r++)
			while (rte_cursor_next(c, r, &ev) == 1) {
				same(&ev, 777);
				n++;
			}
		assert_true(n > 0);
		rte_cursor_close(c);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_kind_with_edge_values),
		cmocka_unit_test(every_event_of_the_given_files),
	};

	files = argv + 1;
	nfiles = argc - 1;
	return cmocka_run_group_tests_name("reader/jsonl_fast", tests, NULL, NULL);
}
