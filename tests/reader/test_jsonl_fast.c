/*
 * test_jsonl_fast.c - rd_jsonl_event() writes exactly the bytes of the
 * consumer library's rte_event_jsonl(): for events of every kind with edge
 * values built here, and for every event of the ring files named on the
 * command line (run.sh passes the OCaml 5.2 fixtures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../reader/jsonl_fast.h"

static char fast[RTE_JSONL_MAX], ref[RTE_JSONL_MAX];
static char **files;
static int nfiles;

static void same(const struct rte_event *ev, long pid)
{
	size_t n = rd_jsonl_event(fast, ev, pid);
	size_t m = rte_event_jsonl(ref, sizeof ref, ev, pid);

	fast[n] = '\0';
	assert_string_equal(fast, ref);
	assert_int_equal(n, m);
}

static void every_kind_with_edge_values(void **state)
{
	static const char *const names[] = {
		"app.x", "", "q\"uote\\back", "ctl\x01\x1f\x7f", "hi\xc3\xa9\xff", NULL,
	};
	static const int64_t ints[] = { 0, -1, INT64_MIN, INT64_MAX, 42 };
	uint64_t buckets[RTE_ALLOC_BUCKETS];
	uint8_t bytes[256];
	struct rte_event ev;

	(void)state;
	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		buckets[i] = i ? UINT64_MAX / i : 0;
	for (unsigned i = 0; i < 256; i++)
		bytes[i] = (uint8_t)i;
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
					ev.u.custom.len = vi * 60;
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
