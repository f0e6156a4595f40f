/*
 * test_shim_tracer.c - the tracer's state machine (shim/tracer/), linked with the
 * leaves only (no hooks, no crash recorder: this test is the layer above
 * and defines the observer list itself). Real files in a private
 * directory; each transition of the diagram in tracer/state.c is made and its
 * effect on the state, rte_g_active and the file checked, and the
 * illegal ones are checked to change nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rte_test.h"

#include "../../shim/tracer.h"

static int g_started, g_keep;

static void obs_started(void)
{
	g_started++;
}

static int obs_keep(void)
{
	return g_keep;
}

static const struct rte_tracer_observer g_obs = {
	.started = obs_started,
	.keep_file = obs_keep,
};
const struct rte_tracer_observer *const rte_tracer_observers[] = {&g_obs,
                                                                  NULL};

static int start(void)
{
	sigset_t o;
	int r;

	rte_lock(&o);
	r = rte_tracer_start_locked();
	rte_unlock(&o);
	return r;
}

static void pause_(void)
{
	sigset_t o;

	rte_lock(&o);
	rte_tracer_pause_locked();
	rte_unlock(&o);
}

static void resume(void)
{
	sigset_t o;

	rte_lock(&o);
	rte_tracer_resume_locked();
	rte_unlock(&o);
}

static uint32_t active(void)
{
	return __atomic_load_n(&rte_g_active, __ATOMIC_RELAXED);
}

static int file_of(pid_t pid)
{
	char name[64], path[PATH_MAX];
	struct stat st;

	snprintf(name, sizeof(name), "%d.events", (int)pid);
	t_path(path, sizeof(path), name);
	return stat(path, &st) == 0;
}

static void test_off(void **state)
{
	(void)state;
	assert_int_equal(rte_tracer_state(), ST_OFF);
	/* Illegal while off: nothing changes. */
	pause_();
	assert_int_equal(rte_tracer_state(), ST_OFF);
	assert_int_equal(rte_tracer_paused(), 0);
	resume();
	assert_int_equal(active(), 0);
	assert_int_equal(g_started, 0);
}

static void test_running(void **state)
{
	uint32_t gen;

	(void)state;
	assert_int_equal(start(), RTE_OK);
	assert_int_equal(rte_tracer_state(), ST_RUNNING);
	assert_int_equal(g_started, 1);
	gen = rte_tracer_gen();
	assert_int_not_equal(gen, 0);
	assert_int_equal(active(), gen);
	assert_true(file_of(getpid()));
	/* start while running: RTE_OK, no second file, no second start. */
	assert_int_equal(start(), RTE_OK);
	assert_int_equal(rte_tracer_gen(), gen);
	assert_int_equal(g_started, 1);
	/* pause, twice; resume, twice. */
	pause_();
	assert_int_equal(active(), 0);
	assert_int_equal(rte_tracer_paused(), 1);
	pause_();
	assert_int_equal(active(), 0);
	resume();
	assert_int_equal(active(), gen);
	assert_int_equal(rte_tracer_paused(), 0);
	resume();
	assert_int_equal(active(), gen);
	assert_int_equal(rte_tracer_state(), ST_RUNNING);
}

/* fork child: FORKED with the pending generation, then its own file. */
static void test_fork_child(void **state)
{
	uint32_t gen = rte_tracer_gen();
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* No cmocka here: the exit status is the first failed step. */
		rte_tracer_atfork_child();
		if (rte_tracer_state() != ST_FORKED)
			_exit(1);
		if (active() != RTE_GEN_PENDING)
			_exit(2);
		if (file_of(getpid())) /* made lazily: not yet */
			_exit(3);
		rte_tracer_materialize();
		if (rte_tracer_state() != ST_RUNNING || rte_tracer_pid() != getpid())
			_exit(4);
		if (rte_tracer_gen() == gen || active() != rte_tracer_gen())
			_exit(5);
		if (!file_of(getpid()))
			_exit(6);
		rte_tracer_stop();
		if (rte_tracer_state() != ST_STOPPED)
			_exit(7);
		if (file_of(getpid()) && !g_keep) /* removed: no PRESERVE */
			_exit(8);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The parent's tracing is untouched. */
	assert_int_equal(rte_tracer_state(), ST_RUNNING);
	assert_int_equal(active(), gen);
	assert_true(file_of(getpid()));
}

static void test_stop(void **state)
{
	(void)state;
	g_keep = 1; /* an observer keeps the file (a recorded crash) */
	rte_tracer_stop();
	assert_int_equal(rte_tracer_state(), ST_STOPPED);
	assert_int_equal(active(), 0);
	assert_true(file_of(getpid()));
	/* Illegal after stop: no restart, no resume; a second stop is a
	 * no-op. */
	assert_int_equal(start(), RTE_ESTATE);
	resume();
	assert_int_equal(active(), 0);
	rte_tracer_stop();
	assert_int_equal(rte_tracer_state(), ST_STOPPED);
	assert_int_equal(g_started, 1);
}

static void test_disable(void **state)
{
	(void)state;
	rte_tracer_disable("unit test");
	assert_int_equal(rte_tracer_state(), ST_DISABLED);
	assert_int_equal(active(), 0);
	assert_int_equal(start(), RTE_ESTATE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_running),
		cmocka_unit_test(test_fork_child),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_disable),
	};

	setenv("OCAML_RUNTIME_EVENTS_DIR", t_tmpdir(), 1);
	setenv("OCAMLRUNPARAM", "e=10", 1);
	setenv("RTE_RINGS", "4", 1);
	setenv("RTE_LOG", "none", 1);
	unsetenv("OCAML_RUNTIME_EVENTS_PRESERVE");
	rte_log_load();
	rte_real_resolve();
	rte_tracer_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
