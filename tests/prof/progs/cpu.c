/*
 * cpu.c - CPU-bound programs with a known call tree, for the profiler's
 * tests (tests/prof/run.sh) and benchmark (bench/prof.sh). Built -O1 with
 * frame pointers; the named functions are never inlined (spin always is).
 *
 *   cpu tree MS          ~90 % in leaf_hot, ~9 % in leaf_warm, ~1 % in
 *                        leaf_cold (all called from work), MS ms of CPU
 *   cpu fixed N          N calls of work (a fixed amount of work: the
 *                        benchmark's wall-time overhead)
 *   cpu fixed2 N         2 threads, each making N calls of work
 *   cpu threads N MS     N threads, each running `tree` for MS ms
 *   cpu churn N MS       N short threads one after another, each MS ms
 *   cpu fork MS          fork; child and parent each run `tree` MS ms
 *   cpu exec MS          run `tree` MS ms, then exec `cpu tree MS`
 *   cpu vfork N MS       one exec that fails, N vfork+exec of `cpu tree 0`,
 *                        then `tree` MS ms
 *   cpu syscalls N       a busy thread while the main thread does N rounds
 *                        of a blocking read on a pipe, accept and waitpid;
 *                        exits 3 if any of them fails with EINTR
 *   cpu eintr N          a busy thread while the main thread calls
 *                        nanosleep(1 us) and ppoll(no fd, 1 us) N times
 *                        each (timer slack 1 ns), computing a few us
 *                        between calls; prints how many returned early
 *                        with EINTR: "eintr nanosleep=A poll=B calls=N"
 *   cpu ownsig SIG       installs a handler on SIG in main, then runs
 *                        tree 300 ms, sends itself SIG and checks its
 *                        handler ran (exit 4 if not)
 *   cpu ignexec SIG MS   sets SIG to SIG_IGN and execs `cpu tree MS`
 *   cpu blocked MS HOW   a "signal thread" design: main blocks every
 *                        signal (HOW: mask, pthread_sigmask; proc,
 *                        sigprocmask), makes a thread (which inherits the
 *                        mask) and both run `tree` MS ms; each then checks
 *                        that no signal is pending (sigpending) and that
 *                        sigtimedwait(every signal, 200 ms) returns none;
 *                        a second thread made with every signal blocked by
 *                        its attribute (pthread_attr_setsigmask_np) does
 *                        the same. Then main unblocks them and runs `tree`
 *                        MS ms more (profiled again). Prints "blocked ok",
 *                        or the signal seen and exits 5
 *   cpu nap N MS         N rounds of `tree` MS ms then nap(): nanosleep
 *                        MS ms (half the wall time asleep, in nap);
 *                        prints "nap slept=NS wall=NS" (its own
 *                        measure); exits 6 if a nanosleep returned EINTR
 *   cpu writer MS        writes rte events (librte.so's API, weak) back
 *                        to back for MS ms of CPU (most samples arrive
 *                        in the middle of a write), then `tree` 200 ms
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RTE_WEAK /* rte.h declares everything weak: runs without it */
#include "rte/rte.h"

#define NOINLINE __attribute__((noinline))

static __thread volatile uint64_t g_sink; /* per thread: no race */
static int g_stop; /* atomic */

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Inlined: each leaf's samples land in the leaf itself. */
static inline __attribute__((always_inline)) void spin(unsigned n)
{
	uint64_t x = g_sink;

	for (unsigned i = 0; i < n; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	g_sink = x;
}

NOINLINE void leaf_hot(void) { spin(90000); }
NOINLINE void leaf_warm(void) { spin(9000); }
NOINLINE void leaf_cold(void) { spin(1000); }

NOINLINE void work(void)
{
	leaf_hot();
	leaf_warm();
	leaf_cold();
}

static void tree(unsigned ms)
{
	uint64_t end = cpu_ns() + (uint64_t)ms * 1000000u;

	while (cpu_ns() < end)
		for (int i = 0; i < 8; i++)
			work();
}

static void *tree_thread(void *p)
{
	tree((unsigned)(uintptr_t)p);
	return NULL;
}

static void *busy_thread(void *p)
{
	(void)p;
	while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
		work();
	return NULL;
}

static void die(const char *what)
{
	fprintf(stderr, "cpu: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void *fixed_thread(void *p)
{
	for (uintptr_t i = 0; i < (uintptr_t)p; i++)
		work();
	return NULL;
}

static int fixed(unsigned nthreads, unsigned n)
{
	pthread_t th[2];

	if (nthreads == 1) {
		fixed_thread((void *)(uintptr_t)n);
		return 0;
	}
	for (unsigned i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, fixed_thread,
		                   (void *)(uintptr_t)n))
			die("pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int threads(unsigned n, unsigned ms)
{
	pthread_t th[64];

	if (n > 64)
		n = 64;
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, tree_thread,
		                   (void *)(uintptr_t)ms))
			die("pthread_create");
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int churn(unsigned n, unsigned ms)
{
	for (unsigned i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, tree_thread,
		                   (void *)(uintptr_t)ms))
			die("pthread_create");
		pthread_join(th, NULL);
	}
	return 0;
}

static int eintr_fail(const char *what)
{
	fprintf(stderr, "cpu: %s returned EINTR\n", what);
	return 3;
}

/* One round of each blocking call the tests say must never see EINTR. */
static int syscalls(unsigned n)
{
	pthread_t th;
	int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	int rc = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (srv < 0 || bind(srv, (void *)&a, sizeof(a)) < 0 ||
	    listen(srv, 8) < 0 || getsockname(srv, (void *)&a, &al) < 0)
		die("socket");
	if (pthread_create(&th, NULL, busy_thread, NULL))
		die("pthread_create");
	for (unsigned i = 0; i < n && !rc; i++) {
		int p[2], c, st;
		char b;
		pid_t pid;

		if (pipe(p) < 0)
			die("pipe");
		/* The child burns CPU before each event, so that the main
		 * thread's own timer falls due around its calls. */
		pid = fork();
		if (pid == 0) {
			int s = socket(AF_INET, SOCK_STREAM, 0);

			spin(200000);
			if (write(p[1], "x", 1) != 1)
				_exit(5);
			spin(200000);
			if (connect(s, (void *)&a, sizeof(a)) < 0)
				_exit(5);
			spin(200000);
			_exit(0);
		}
		if (pid < 0)
			die("fork");
		spin(50000);
		if (read(p[0], &b, 1) < 0)
			rc = errno == EINTR ? eintr_fail("read") : (die("read"), 2);
		spin(50000);
		c = accept(srv, NULL, NULL);
		if (c < 0 && !rc)
			rc = errno == EINTR ? eintr_fail("accept")
			                    : (die("accept"), 2);
		if (c >= 0)
			close(c);
		spin(50000);
		if (waitpid(pid, &st, 0) < 0 && !rc)
			rc = errno == EINTR ? eintr_fail("waitpid")
			                    : (die("waitpid"), 2);
		close(p[0]);
		close(p[1]);
	}
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	return rc;
}

static int eintr(unsigned n)
{
	pthread_t th;
	unsigned ns = 0, po = 0;
	struct timespec d = {0, 1000};

	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	if (pthread_create(&th, NULL, busy_thread, NULL))
		die("pthread_create");
	for (unsigned i = 0; i < n; i++) {
		spin(2000);
		if (nanosleep(&d, NULL) < 0 && errno == EINTR)
			ns++;
		spin(2000);
		if (ppoll(NULL, 0, &d, NULL) < 0 && errno == EINTR)
			po++;
	}
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	printf("eintr nanosleep=%u poll=%u calls=%u\n", ns, po, n);
	return 0;
}

static int writer(unsigned ms)
{
	uint64_t end = cpu_ns() + (uint64_t)ms * 1000000u;
	int id = rte_register ? rte_register("cpu.blob", RTE_TYPE_CUSTOM) : -1;
	char blob[200];

	memset(blob, 'x', sizeof(blob));
	if (id < 0)
		return 1;
	while (cpu_ns() < end)
		for (int i = 0; i < 64; i++)
			rte_custom(id, blob, sizeof(blob));
	/* Then samples that the wrapping ring keeps. */
	tree(200);
	return 0;
}

static volatile sig_atomic_t g_got;

static void on_sig(int s)
{
	(void)s;
	g_got++;
}

static int ownsig(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		die("sigaction");
	tree(300);
	/* Any signal of ours from here on would be counted: only one, our
	 * own, must arrive. */
	raise(sig);
	return g_got == 1 ? 0 : 4;
}

/* The checks of `blocked`: 0, or the signal found pending or waited for. */
static int nothing_pending(void)
{
	struct timespec t = {0, 200000000};
	sigset_t all, pend;
	int sig;

	sigfillset(&all);
	if (sigpending(&pend) < 0)
		die("sigpending");
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&pend, sig) == 1)
			return sig;
	sig = sigtimedwait(&all, NULL, &t);
	if (sig < 0 && errno != EAGAIN)
		die("sigtimedwait");
	return sig < 0 ? 0 : sig;
}

static void *blocked_thread(void *p)
{
	tree((unsigned)(uintptr_t)p);
	return (void *)(intptr_t)nothing_pending();
}

static int blocked(unsigned ms, const char *how)
{
	pthread_attr_t attr;
	pthread_t t[2];
	sigset_t all;
	void *r[2];
	int sig, bad = 0;

	sigfillset(&all);
	if (!strcmp(how, "proc") ? sigprocmask(SIG_BLOCK, &all, NULL) < 0
	                         : (errno = pthread_sigmask(SIG_BLOCK, &all,
	                                                    NULL)) != 0)
		die("block");
	if ((errno = pthread_create(&t[0], NULL, blocked_thread,
	                            (void *)(uintptr_t)ms)))
		die("pthread_create");
	pthread_attr_init(&attr);
	if ((errno = pthread_attr_setsigmask_np(&attr, &all)) ||
	    (errno = pthread_create(&t[1], &attr, blocked_thread,
	                            (void *)(uintptr_t)ms)))
		die("pthread_create");
	pthread_attr_destroy(&attr);
	tree(ms);
	if ((sig = nothing_pending())) {
		printf("main saw signal %d\n", sig);
		bad = 1;
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], &r[i]);
		if (r[i]) {
			printf("thread %d saw signal %d\n", i, (int)(intptr_t)r[i]);
			bad = 1;
		}
	}
	if ((errno = pthread_sigmask(SIG_UNBLOCK, &all, NULL)))
		die("unblock");
	tree(ms);
	if (!bad)
		printf("blocked ok\n");
	return bad ? 5 : 0;
}

NOINLINE int nap(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	return nanosleep(&ts, NULL) < 0 && errno == EINTR;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Prints the wall time asleep and in all: "nap slept=NS wall=NS". */
static int naps(unsigned n, unsigned ms)
{
	uint64_t t0 = mono_ns(), slept = 0;
	int eintr = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t s;

		tree(ms);
		s = mono_ns();
		eintr |= nap(ms);
		slept += mono_ns() - s;
	}
	printf("nap slept=%" PRIu64 " wall=%" PRIu64 "\n", slept, mono_ns() - t0);
	return eintr ? 6 : 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	unsigned a = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
	unsigned b = argc > 3 ? (unsigned)atoi(argv[3]) : 0;

	if (!strcmp(m, "tree"))
		tree(a);
	else if (!strcmp(m, "fixed"))
		return fixed(1, a);
	else if (!strcmp(m, "fixed2"))
		return fixed(2, a);
	else if (!strcmp(m, "threads"))
		return threads(a, b);
	else if (!strcmp(m, "churn"))
		return churn(a, b);
	else if (!strcmp(m, "fork")) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			die("fork");
		tree(a);
		if (pid == 0)
			return 0;
		if (waitpid(pid, &st, 0) < 0 || st != 0)
			return 1;
	} else if (!strcmp(m, "exec")) {
		char ms[16];

		tree(a);
		snprintf(ms, sizeof(ms), "%u", a);
		execl("/proc/self/exe", argv[0], "tree", ms, (char *)NULL);
		die("exec");
	} else if (!strcmp(m, "vfork")) {
		execl("/nonexistent/rte-prof", "x", (char *)NULL);
		for (unsigned i = 0; i < a; i++) {
			pid_t pid = vfork();
			int st;

			if (pid == 0) {
				execl("/proc/self/exe", "cpu", "tree", "0",
				      (char *)NULL);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, &st, 0) < 0 || st != 0)
				return 1;
		}
		tree(b);
	} else if (!strcmp(m, "syscalls"))
		return syscalls(a);
	else if (!strcmp(m, "eintr"))
		return eintr(a);
	else if (!strcmp(m, "nap"))
		return naps(a, b);
	else if (!strcmp(m, "writer"))
		return writer(a);
	else if (!strcmp(m, "ownsig"))
		return ownsig((int)a);
	else if (!strcmp(m, "blocked"))
		return blocked(a, argc > 3 ? argv[3] : "mask");
	else if (!strcmp(m, "ignexec")) {
		char ms[16];

		signal((int)a, SIG_IGN);
		snprintf(ms, sizeof(ms), "%u", b);
		execl("/proc/self/exe", argv[0], "tree", ms, (char *)NULL);
		die("exec");
	} else {
		fprintf(stderr, "usage: cpu MODE ARGS (see cpu.c)\n");
		return 2;
	}
	return 0;
}
