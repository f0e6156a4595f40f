/*
 * test_shim_config.c - shim/config.c alone (with log.c and fd.c): every
 * environment variable librte.so reads, good and malformed values. A
 * malformed value must give its default and exactly one warning line,
 * which RTE_LOG sends to a file in the test's directory, read back here.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rte_test.h"

#include "../../shim/config.h"
#include "../../shim/log.h"

static char g_log[PATH_MAX];

static const char *const k_vars[] = {
	"OCAMLRUNPARAM", "CAMLRUNPARAM", "RTE_RINGS", "RTE_CLOCK",
	"OCAML_RUNTIME_EVENTS_DIR", "OCAML_RUNTIME_EVENTS_PRESERVE",
	"RTE_TRACE_OCAML", "OCAML_RUNTIME_EVENTS_START", "RTE_BACKTRACE",
};

/* Number of warning lines logged since the last call (the log emptied). */
static int warnings(void)
{
	char buf[4096];
	int fd = open(g_log, O_RDONLY), n = 0;
	ssize_t r;

	if (fd < 0)
		return 0;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < r; i++)
			n += buf[i] == '\n';
	close(fd);
	unlink(g_log);
	return n;
}

static int setup(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(k_vars) / sizeof(k_vars[0]); i++)
		unsetenv(k_vars[i]);
	warnings();
	return 0;
}

static void read_cfg(struct rte_config *c)
{
	rte_config_read(c);
}

static unsigned get_log2(const struct rte_config *c)
{
	return c->log2_words;
}

static unsigned get_rings(const struct rte_config *c)
{
	return c->rings;
}

/* var=val gives want (as get reads it), with no warning. */
static void expect(const char *var, const char *val,
                   unsigned (*get)(const struct rte_config *), unsigned want)
{
	struct rte_config c;

	setenv(var, val, 1);
	read_cfg(&c);
	assert_int_equal(get(&c), want);
	assert_int_equal(warnings(), 0);
}

/* Every value of bad[] in var gives def (as get reads it) and exactly one
 * warning line. */
static void expect_bad(const char *var, const char *const *bad, size_t n,
                       unsigned (*get)(const struct rte_config *),
                       unsigned def)
{
	struct rte_config c;

	for (size_t i = 0; i < n; i++) {
		setenv(var, bad[i], 1);
		read_cfg(&c);
		assert_int_equal(get(&c), def);
		assert_int_equal(warnings(), 1);
	}
	unsetenv(var);
}

static void test_defaults(void **state)
{
	struct rte_config c;

	(void)state;
	read_cfg(&c);
	assert_int_equal(c.log2_words, RTE_RING_LOG2_DEFAULT);
	assert_int_equal(c.rings, RTE_MAX_DOMAINS_DEFAULT);
	assert_false(c.preserve);
	assert_false(c.trace_ocaml);
	assert_false(c.force_monotonic);
	assert_true(c.dir_default);
	assert_false(rte_config_start_at_load());
	assert_int_equal(rte_config_backtrace(), RTE_BTM_CRASH);
	assert_int_equal(warnings(), 0);
}

static void test_flags(void **state)
{
	struct rte_config c;

	(void)state;
	setenv("OCAML_RUNTIME_EVENTS_PRESERVE", "", 1);
	setenv("RTE_TRACE_OCAML", "1", 1);
	setenv("OCAML_RUNTIME_EVENTS_START", "1", 1);
	read_cfg(&c);
	assert_true(c.preserve);
	assert_true(c.trace_ocaml);
	assert_true(rte_config_start_at_load());
	assert_int_equal(warnings(), 0);
}

static void test_runparam(void **state)
{
	(void)state;
	expect("OCAMLRUNPARAM", "s=4M,e=20,v=0x400", get_log2, 20);
	/* CAMLRUNPARAM only when OCAMLRUNPARAM is unset, as OCaml. */
	expect("CAMLRUNPARAM", "e=5", get_log2, 20);
	unsetenv("OCAMLRUNPARAM");
	expect("CAMLRUNPARAM", "e=5", get_log2, 5);
	unsetenv("CAMLRUNPARAM");
	static const char *const bad[] = {"e=", "e=3", "e=25", "e=1k", "e=-4",
	                                  "e=16x", "e=99999999999"};
	expect_bad("OCAMLRUNPARAM", bad, sizeof(bad) / sizeof(bad[0]),
	           get_log2, RTE_RING_LOG2_DEFAULT);
	/* The bounds are valid. */
	expect("OCAMLRUNPARAM", "e=4", get_log2, RTE_RING_LOG2_MIN);
	expect("OCAMLRUNPARAM", "e=24", get_log2, RTE_RING_LOG2_MAX);
}

static void test_rings(void **state)
{
	(void)state;
	expect("RTE_RINGS", "1", get_rings, 1);
	expect("RTE_RINGS", "4096", get_rings, RTE_RINGS_MAX);
	static const char *const bad[] = {"", "0", "4097", "+3", "8 ", "x"};
	expect_bad("RTE_RINGS", bad, sizeof(bad) / sizeof(bad[0]), get_rings,
	           RTE_MAX_DOMAINS_DEFAULT);
}

static void test_clock(void **state)
{
	struct rte_config c;

	(void)state;
	setenv("RTE_CLOCK", "monotonic", 1);
	read_cfg(&c);
	assert_true(c.force_monotonic);
	static const char *const ok[] = {"", "auto", "tsc"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		setenv("RTE_CLOCK", ok[i], 1);
		read_cfg(&c);
		assert_false(c.force_monotonic);
	}
	assert_int_equal(warnings(), 0);
	setenv("RTE_CLOCK", "Monotonic", 1);
	read_cfg(&c);
	assert_false(c.force_monotonic);
	assert_int_equal(warnings(), 1);
}

static void test_dir(void **state)
{
	struct rte_config c;
	char *long_dir = malloc(PATH_MAX + 10);

	(void)state;
	setenv("OCAML_RUNTIME_EVENTS_DIR", "rel/dir", 1);
	read_cfg(&c);
	assert_false(c.dir_default);
	assert_false(c.dir_too_long);
	assert_string_equal(c.dir, "rel/dir");
	setenv("OCAML_RUNTIME_EVENTS_DIR", "", 1); /* empty: the default */
	read_cfg(&c);
	assert_true(c.dir_default);
	assert_non_null(long_dir);
	memset(long_dir, 'd', PATH_MAX + 9);
	long_dir[PATH_MAX + 9] = '\0';
	setenv("OCAML_RUNTIME_EVENTS_DIR", long_dir, 1);
	read_cfg(&c);
	assert_true(c.dir_too_long); /* reported when the file is made */
	assert_int_equal(strlen(c.dir), PATH_MAX - 1);
	free(long_dir);
}

static void test_backtrace(void **state)
{
	static const struct {
		const char *s;
		unsigned mode;
		int warns;
	} cases[] = {
		{NULL, RTE_BTM_CRASH, 0},
		{"", RTE_BTM_CRASH, 0},
		{"0", RTE_BTM_CRASH, 0},
		{"crash", RTE_BTM_CRASH, 0},
		{"off", 0, 0},
		{"none", 0, 0},
		{"fork", RTE_BTM_CRASH | RTE_BTM_FORK, 0},
		{"thread", RTE_BTM_CRASH | RTE_BTM_THREAD, 0},
		{"fork,thread", RTE_BTM_CRASH | RTE_BTM_FORK | RTE_BTM_THREAD, 0},
		{"all", RTE_BTM_CRASH | RTE_BTM_FORK | RTE_BTM_THREAD, 0},
		{"crash,fork", RTE_BTM_CRASH | RTE_BTM_FORK, 0},
		{"forks", RTE_BTM_CRASH, 1},
		{"fork,bogus,thread", RTE_BTM_CRASH | RTE_BTM_FORK |
		                              RTE_BTM_THREAD, 1},
		{"a,b", RTE_BTM_CRASH, 2},
		{",", RTE_BTM_CRASH, 1}, /* one empty word */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(rte_config_backtrace_parse(cases[i].s),
		                 cases[i].mode);
		assert_int_equal(warnings(), cases[i].warns);
	}
	setenv("RTE_BACKTRACE", "thread", 1);
	assert_int_equal(rte_config_backtrace(),
	                 RTE_BTM_CRASH | RTE_BTM_THREAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, setup),
		cmocka_unit_test_setup(test_flags, setup),
		cmocka_unit_test_setup(test_runparam, setup),
		cmocka_unit_test_setup(test_rings, setup),
		cmocka_unit_test_setup(test_clock, setup),
		cmocka_unit_test_setup(test_dir, setup),
		cmocka_unit_test_setup(test_backtrace, setup),
	};

	t_path(g_log, sizeof(g_log), "config.log");
	setenv("RTE_LOG", g_log, 1);
	rte_log_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
