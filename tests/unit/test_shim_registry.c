/*
 * test_shim_registry.c - shim/registry.c alone: name validation, ids
 * from the bottom for the program and from the top for rte.* events,
 * re-registration, type clashes, the sink that writes new names, and a
 * full id space.
 */
#include <stdio.h>
#include <string.h>

#include "rte_test.h"

#include "../../shim/registry.h"

static unsigned g_sunk;
static char g_last[RTE_NAME_SLOT_BYTES];
static unsigned g_last_id;

static void sink(unsigned id, const char *name)
{
	/* The id is not visible to writers before its name is written. */
	assert_int_equal(rte_registry_type((int)id), 0);
	g_sunk++;
	g_last_id = id;
	snprintf(g_last, sizeof(g_last), "%s", name);
}

static int add(const char *name, enum rte_type t, int top)
{
	return rte_registry_add(name, strlen(name), t, top, sink);
}

static void test_name_len(void **state)
{
	char longest[RTE_NAME_MAX + 2];

	(void)state;
	assert_int_equal(rte_registry_name_len("a"), 1);
	assert_int_equal(rte_registry_name_len(NULL), -1);
	assert_int_equal(rte_registry_name_len(""), -1);
	assert_int_equal(rte_registry_name_len("tab\there"), -1);
	assert_int_equal(rte_registry_name_len("caf\xc3\xa9"), -1);
	memset(longest, 'n', RTE_NAME_MAX);
	longest[RTE_NAME_MAX] = '\0';
	assert_int_equal(rte_registry_name_len(longest), (int)RTE_NAME_MAX);
	longest[RTE_NAME_MAX] = 'n';
	longest[RTE_NAME_MAX + 1] = '\0';
	assert_int_equal(rte_registry_name_len(longest), -1);
}

static void test_ids(void **state)
{
	int a, b, own;

	(void)state;
	g_sunk = 0;
	a = add("app.a", RTE_TYPE_INT, 0);
	assert_int_equal(a, 0);
	assert_int_equal(g_sunk, 1);
	assert_string_equal(g_last, "app.a");
	assert_int_equal(rte_registry_type(a), RTE_TYPE_INT + 1);
	b = add("app.b", RTE_TYPE_SPAN, 0);
	assert_int_equal(b, 1);
	own = add("rte.x", RTE_TYPE_CUSTOM, 1);
	assert_int_equal(own, (int)RTE_MAX_USER_EVENTS - 1);
	assert_int_equal(g_last_id, RTE_MAX_USER_EVENTS - 1);
	assert_string_equal(rte_registry_name((unsigned)own), "rte.x");
	/* Same name and type: same id, no second write. */
	assert_int_equal(add("app.a", RTE_TYPE_INT, 0), a);
	assert_int_equal(g_sunk, 3);
	/* Same name, other type. */
	assert_int_equal(add("app.a", RTE_TYPE_UNIT, 0), RTE_ETYPE);
	/* A name registered from the top (kept apart from the hash) is
	 * found again, and never given a second id. */
	assert_int_equal(add("rte.x", RTE_TYPE_CUSTOM, 1), own);
	assert_int_equal(add("rte.x", RTE_TYPE_INT, 1), RTE_ETYPE);
	assert_int_equal(g_sunk, 3);
	assert_null(rte_registry_name(2));
	assert_null(rte_registry_name(RTE_MAX_USER_EVENTS));
}

static void test_full(void **state)
{
	char name[32];
	int id = 0;
	unsigned n = 0;

	(void)state;
	for (;;) {
		snprintf(name, sizeof(name), "fill.%u", n++);
		id = rte_registry_add(name, strlen(name), RTE_TYPE_UNIT, 0,
		                      NULL);
		if (id < 0)
			break;
		assert_int_equal(rte_registry_type(id), RTE_TYPE_UNIT + 1);
	}
	assert_int_equal(id, RTE_ETOOMANY);
	/* Every id is taken once: the two of test_ids, its rte.* one, and
	 * the fills. */
	assert_int_equal(n - 1, RTE_MAX_USER_EVENTS - 3);
	assert_int_equal(add("rte.y", RTE_TYPE_INT, 1), RTE_ETOOMANY);
	/* Known names still resolve. */
	assert_int_equal(add("app.b", RTE_TYPE_SPAN, 0), 1);
	assert_int_equal(add("rte.x", RTE_TYPE_CUSTOM, 1),
	                 (int)RTE_MAX_USER_EVENTS - 1);
	assert_int_equal(add("fill.7", RTE_TYPE_UNIT, 0), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_len),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
