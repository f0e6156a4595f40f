/*
 * test_clock.c - common/writer/clock.{h,c}: rte_clock_ns() against
 * clock_gettime(CLOCK_MONOTONIC).
 *
 * Every sample is bracketed by two clock_gettime() reads, lo and hi. The
 * tests check properties of the clock, never how long anything took (a
 * loaded machine preempts the test anywhere, so a wide bracket only makes
 * the check looser, never wrong):
 *   - per thread, values never decrease;
 *   - every value lies within [lo - BOUND_NS, hi + BOUND_NS]: the clock is
 *     re-anchored to CLOCK_MONOTONIC every millisecond of its own time and
 *     never extrapolates past one period, so even a badly calibrated rate
 *     cannot take it further than about a period away.
 * How close it stays (the 1 us goal of clock.h) is measured, not asserted:
 * the worst distance over tight brackets (at most BRACKET_NS wide) is
 * printed with each group of samples.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rte_test.h"

#define BRACKET_NS 2000u     /* a tight bracket: its sample measures precision */
#define BOUND_NS 2000000u    /* asserted: two re-anchor periods */
#define MIN_SAMPLES 4096u    /* sample_for() takes at least this many */

static int g_parent_initialised;

struct stats {
	uint64_t kept, skipped, worst_ahead, worst_behind; /* tight brackets */
	uint64_t violations, first_bad_ns, first_bad_lo, first_bad_hi;
	uint64_t back; /* values lower than the one before */
};

/* One bracketed sample; returns the clock value. No cmocka calls here:
 * forked children use it too. */
static uint64_t sample(struct stats *s, uint64_t *last)
{
	uint64_t lo = t_now_ns(), v = rte_clock_ns(), hi = t_now_ns();

	s->back += v < *last;
	*last = v;
	if (v + BOUND_NS < lo || v > hi + BOUND_NS) {
		if (!s->violations++) {
			s->first_bad_ns = v;
			s->first_bad_lo = lo;
			s->first_bad_hi = hi;
		}
	}
	if (hi - lo > BRACKET_NS) {
		s->skipped++;
		return v;
	}
	s->kept++;
	if (v > hi && v - hi > s->worst_ahead)
		s->worst_ahead = v - hi;
	if (v < lo && lo - v > s->worst_behind)
		s->worst_behind = lo - v;
	return v;
}

/* Samples for about ns of CLOCK_MONOTONIC (to span re-anchor periods),
 * and at least MIN_SAMPLES times however long that takes. */
static void sample_for(struct stats *s, uint64_t *last, uint64_t ns)
{
	uint64_t end = t_now_ns() + ns;

	for (uint64_t n = 0; n < MIN_SAMPLES || t_now_ns() < end; n += 64)
		for (int i = 0; i < 64; i++)
			sample(s, last);
}

static void report(const char *what, const struct stats *s)
{
	print_message("    %s: %llu tight samples (measured, not asserted: worst "
	              "%llu ns ahead, %llu ns behind), %llu in wide brackets\n",
	              what, (unsigned long long)s->kept,
	              (unsigned long long)s->worst_ahead,
	              (unsigned long long)s->worst_behind,
	              (unsigned long long)s->skipped);
	if (s->violations)
		fail_msg("%s: %llu samples more than %u ns off; first: %llu not in "
		         "[%llu, %llu]", what, (unsigned long long)s->violations,
		         BOUND_NS, (unsigned long long)s->first_bad_ns,
		         (unsigned long long)s->first_bad_lo,
		         (unsigned long long)s->first_bad_hi);
	assert_int_equal(s->back, 0);
}

static void sleep_ns(long ns)
{
	struct timespec t = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&t, &t) != 0)
		;
}

/* Must run first: the mode is chosen once per process, and the child
 * inherits the parent's. */
static void forced_monotonic_fallback_tracks_clock_gettime(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	assert_false(g_parent_initialised);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct stats s = { 0 };
		uint64_t last = 0;

		rte_clock_init(1);
		if (rte_clock_uses_tsc())
			_exit(10);
		sample_for(&s, &last, 100000000);
		if (s.violations || s.back)
			_exit(11);
		sleep_ns(20000000);
		sample_for(&s, &last, 20000000);
		_exit(s.violations || s.back ? 12 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * A fresh process whose thread sleeps soon after calibration, when the
 * rate is known least precisely: the first timestamp after the sleep must
 * still be within the bound. Runs in children, before the parent's init.
 */
static void fresh_process_stays_close_after_an_early_sleep(void **state)
{
	static const long sleeps[] = { 50000000, 300000000 };

	(void)state;
	assert_false(g_parent_initialised);
	for (size_t i = 0; i < sizeof sleeps / sizeof *sleeps; i++) {
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (pid == 0) {
			struct stats s = { 0 };
			uint64_t last = 0;

			rte_clock_init(0);
			sample_for(&s, &last, 3000000);
			sleep_ns(sleeps[i]);
			for (int k = 0; k < 3; k++)
				sample(&s, &last);
			sample_for(&s, &last, 3000000);
			if (s.violations)
				fprintf(stderr, "    after %ld ms: %llu samples off, first "
				        "%lld ns from [%llu, %llu]\n", sleeps[i] / 1000000,
				        (unsigned long long)s.violations,
				        (long long)(s.first_bad_ns - s.first_bad_hi),
				        (unsigned long long)s.first_bad_lo,
				        (unsigned long long)s.first_bad_hi);
			_exit(s.violations || s.back ? 1 : 0);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

static void clock_stays_close_to_clock_monotonic(void **state)
{
	struct stats s = { 0 };
	uint64_t last = 0;

	(void)state;
	rte_clock_init(0);
	g_parent_initialised = 1;
	print_message("    timestamps come from %s\n",
	              rte_clock_uses_tsc() ? "the TSC" : "clock_gettime");
	/* ~1.2 s of back-to-back samples: hundreds of re-anchor periods */
	sample_for(&s, &last, 1200000000);
	report("continuous", &s);
}

static void clock_stays_close_after_sleeps(void **state)
{
	static const long sleeps[] = { 1000, 900000, 1100000, 5000000, 50000000,
	                               300000000 };
	struct stats s = { 0 };
	uint64_t last = 0;

	(void)state;
	rte_clock_init(0);
	for (size_t i = 0; i < sizeof sleeps / sizeof *sleeps; i++) {
		sample_for(&s, &last, 2000000);
		sleep_ns(sleeps[i]);
		/* the very first sample after the sleep matters most */
		for (int k = 0; k < 3; k++)
			sample(&s, &last);
		sample_for(&s, &last, 2000000);
	}
	report("around sleeps", &s);
}

struct thr {
	uint64_t n, back;
};

static void *mono_thread(void *arg)
{
	struct thr *t = arg;
	uint64_t last = rte_clock_ns(), end = t_now_ns() + 300000000;

	/* 300 ms and at least MIN_SAMPLES reads, however busy the machine */
	while (t->n < MIN_SAMPLES || t_now_ns() < end)
		for (int i = 0; i < 256; i++) {
			uint64_t v = rte_clock_ns();

			t->back += v < last;
			last = v;
			t->n++;
		}
	return NULL;
}

static void clock_never_goes_back_within_a_thread(void **state)
{
	enum { N = 4 };
	pthread_t th[N];
	struct thr t[N] = { { 0 } };

	(void)state;
	rte_clock_init(0);
	/* more threads than cores: they migrate and get preempted */
	for (int i = 0; i < N; i++)
		assert_int_equal(pthread_create(&th[i], NULL, mono_thread, &t[i]), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(t[i].back, 0);
	}
}

static void clock_init_is_idempotent(void **state)
{
	int tsc;

	(void)state;
	rte_clock_init(0);
	tsc = rte_clock_uses_tsc();
	rte_clock_init(1); /* too late: no effect */
	assert_int_equal(rte_clock_uses_tsc(), tsc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forced_monotonic_fallback_tracks_clock_gettime),
		cmocka_unit_test(fresh_process_stays_close_after_an_early_sleep),
		cmocka_unit_test(clock_stays_close_to_clock_monotonic),
		cmocka_unit_test(clock_stays_close_after_sleeps),
		cmocka_unit_test(clock_never_goes_back_within_a_thread),
		cmocka_unit_test(clock_init_is_idempotent),
	};

	return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
