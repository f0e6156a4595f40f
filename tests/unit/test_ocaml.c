/*
 * test_ocaml.c - rte/ocaml.h and common/consumer/ocaml.c: one name table per OCaml
 * version, the choice of a table from a file's phase nesting, and a
 * cursor naming ids with the chosen table.
 */
#include <stdio.h>
#include <string.h>

#include "rte/ocaml.h"
#include "rte_test.h"

static const char *phase(const char *v, unsigned id)
{
	const struct rte_ocaml_table *t = rte_ocaml_table(v);

	assert_non_null(t);
	return id < t->nphases ? t->phases[id] : NULL;
}

static void tables_follow_each_release(void **state)
{
	const struct rte_ocaml_table *t;

	(void)state;
	/* 5.3 inserted major_memprof_roots at 9: later ids moved by one */
	assert_string_equal(phase("5.2", 9), "major_mark");
	assert_string_equal(phase("5.3", 9), "major_memprof_roots");
	assert_string_equal(phase("5.3", 10), "major_mark");
	assert_string_equal(phase("5.2", 10), "minor");
	assert_string_equal(phase("5.3", 11), "minor");
	assert_string_equal(phase("5.2", 40), "compaction");
	assert_null(phase("5.1", 40));
	assert_string_equal(phase("5.4dev", 48), "empty_minor");
	assert_null(phase("5.3", 48));
	t = rte_ocaml_table("5.0");
	assert_int_equal(t->nphases, 40);
	assert_int_equal(t->ncounters, 11);
	assert_string_equal(rte_ocaml_table("5.3")->counters[18], "major_allocated_words");
	assert_int_equal(rte_ocaml_table("5.1")->ncounters, 17);
	/* the same prefix names alike in every version */
	for (unsigned i = 0; i < 9; i++)
		assert_string_equal(phase("5.0", i), phase("5.4dev", i));
}

static void versions_are_looked_up_by_minor_version(void **state)
{
	(void)state;
	assert_string_equal(rte_ocaml_table("5.1.1")->version, "5.1");
	assert_string_equal(rte_ocaml_table("5.4")->version, "5.4dev");
	assert_string_equal(rte_ocaml_table("5.4dev")->version, "5.4dev");
	assert_null(rte_ocaml_table("5.10"));
	assert_null(rte_ocaml_table("6.0"));
	assert_null(rte_ocaml_table(""));
	assert_null(rte_ocaml_table(NULL));
	assert_string_equal(rte_ocaml_default()->version, "5.2");
}

/* A ring of `n` minor collections with the ids of table t: stw_leader >
 * minor > minor_local_roots > minor_local_roots_promote. */
static void write_minors(const char *name, char *path, size_t cap,
                         const struct rte_ocaml_table *t, unsigned n)
{
	static const char *const nest[] = {
		"stw_leader", "minor", "minor_local_roots", "minor_local_roots_promote",
	};
	struct rte_ring_writer w;
	struct t_file f;
	unsigned id[4];
	uint64_t ts = 1000;

	for (unsigned k = 0; k < 4; k++) {
		id[k] = 0;
		while (strcmp(t->phases[id[k]], nest[k]))
			id[k]++;
	}
	t_ring_file_create(&f, name, 2, 14);
	t_writer(&f, 0, &w);
	for (unsigned i = 0; i < n; i++) {
		for (unsigned k = 0; k < 4; k++)
			assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, id[k]), ts++), 0);
		for (unsigned k = 4; k-- > 0;)
			assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_EXIT, id[k]), ts++), 0);
	}
	snprintf(path, cap, "%s", f.path);
	t_ring_file_unmap(&f);
}

static void the_nesting_picks_the_table(void **state)
{
	struct rte_ocaml_choice ch;
	char path[PATH_MAX];

	(void)state;
	write_minors("v53.events", path, sizeof path, rte_ocaml_table("5.3"), 20);
	assert_int_equal(rte_ocaml_detect(path, &ch), RTE_OK);
	assert_int_equal(ch.sure, RTE_OCAML_SURE);
	/* 5.3 and 5.4dev name these ids alike; a tie goes to the newer */
	assert_string_equal(ch.table->version, "5.4dev");
	assert_string_equal(ch.same_from, "5.3");
	assert_string_equal(ch.same_to, "5.4dev");
	assert_int_equal(ch.nestings, 80);
	assert_int_equal(ch.explained, 80);

	write_minors("v52.events", path, sizeof path, rte_ocaml_table("5.2"), 20);
	assert_int_equal(rte_ocaml_detect(path, &ch), RTE_OK);
	assert_string_equal(ch.table->version, "5.2");
	assert_int_equal(ch.sure, RTE_OCAML_SURE);
	assert_string_equal(ch.same_from, "5.0");
}

/* Thousands of phases begun at top level whose ids every table names
 * alike (major, id 6) tell no table apart: they must not end the scan
 * before the nestings that do (5.3's stw_leader > minor > ...). */
static void top_level_phases_do_not_end_the_scan(void **state)
{
	const struct rte_ocaml_table *t53 = rte_ocaml_table("5.3");
	struct rte_ring_writer w;
	struct rte_ocaml_choice ch;
	struct t_file f;
	uint64_t ts = 1000;
	static const char *const nest[] = {
		"stw_leader", "minor", "minor_local_roots", "minor_local_roots_promote",
	};
	unsigned id[4];

	(void)state;
	for (unsigned k = 0; k < 4; k++)
		for (id[k] = 0; strcmp(t53->phases[id[k]], nest[k]); id[k]++)
			;
	t_ring_file_create(&f, "top.events", 2, 16);
	t_writer(&f, 0, &w);
	for (unsigned i = 0; i < 5000; i++) {
		assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, 6), ts++), 0);
		assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_EXIT, 6), ts++), 0);
	}
	for (unsigned i = 0; i < 20; i++) {
		for (unsigned k = 0; k < 4; k++)
			assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_BEGIN, id[k]), ts++), 0);
		for (unsigned k = 4; k-- > 0;)
			assert_int_equal(rte_ring_write0(&w, rte_hdr_make(0, 0, RTE_MSG_EXIT, id[k]), ts++), 0);
	}
	t_ring_file_unmap(&f);
	assert_int_equal(rte_ocaml_detect(f.path, &ch), RTE_OK);
	assert_string_equal(ch.same_from, "5.3");
	assert_string_equal(ch.same_to, "5.4dev");
	assert_string_equal(ch.table->phases[id[0]], "stw_leader"); /* 5.2: minor_remembered_set */
	assert_int_equal(ch.nestings, 5000 + 80);
	assert_int_equal(ch.explained, 5000 + 80);
	assert_int_equal(ch.best_other, 5000); /* 5.2: the top-level majors only */
}

static void no_phases_is_a_guess_of_52(void **state)
{
	struct rte_ocaml_choice ch;
	struct t_file f;

	(void)state;
	t_ring_file_create(&f, "empty.events", 2, 12);
	t_ring_file_unmap(&f);
	assert_int_equal(rte_ocaml_detect(f.path, &ch), RTE_OK);
	assert_string_equal(ch.table->version, "5.2");
	assert_int_equal(ch.sure, RTE_OCAML_GUESS);
	assert_int_equal(rte_ocaml_detect("/nonexistent/x.events", &ch), RTE_ENOENT);
	assert_string_equal(ch.table->version, "5.2");
}

static void a_54dev_fixture_is_named_by_54dev(void **state)
{
	struct rte_ocaml_choice ch;
	struct rte_event ev;
	char gz[PATH_MAX], out[PATH_MAX];
	rte_cursor *c;
	int found = 0;

	(void)state;
	snprintf(gz, sizeof gz, "%s/../ocaml-5.4dev/basic/20796.events.gz", t_fixtures_dir());
	t_path(out, sizeof out, "20796.events");
	t_gunzip(gz, out);
	assert_int_equal(rte_ocaml_detect(out, &ch), RTE_OK);
	assert_string_equal(ch.table->version, "5.4dev");
	assert_int_equal(ch.sure, RTE_OCAML_SURE);
	c = t_open(out);
	rte_cursor_use_ocaml(c, ch.table);
	while (rte_cursor_next(c, 0, &ev) == 1)
		if (ev.kind == RTE_EV_BEGIN && ev.id == 11) {
			assert_string_equal(ev.name, "minor"); /* 5.2 says major_mark */
			found = 1;
		}
	rte_cursor_close(c);
	assert_true(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables_follow_each_release),
		cmocka_unit_test(versions_are_looked_up_by_minor_version),
		cmocka_unit_test(the_nesting_picks_the_table),
		cmocka_unit_test(top_level_phases_do_not_end_the_scan),
		cmocka_unit_test(no_phases_is_a_guess_of_52),
		cmocka_unit_test(a_54dev_fixture_is_named_by_54dev),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
