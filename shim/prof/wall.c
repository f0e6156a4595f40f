/*
 * prof/wall.c - the wall-clock mode of the CPU profiler
 * (RTE_PROFILE_MODE=wall, wall.h).
 *
 * One sampler thread per process ("rte-wall", every signal blocked, never
 * profiled) wakes HZ times a second of wall time (CLOCK_MONOTONIC,
 * absolute deadlines: it never drifts, and skips what it missed) and
 * reads each profiled thread's state from /proc/self/task/TID/syscall:
 *
 *  - "running" (on a CPU or waiting for one): the thread is sent the
 *    profiling signal alone (rt_tgsigqueueinfo, SI_QUEUE, a per-process
 *    cookie in si_uid, the wall time the sample stands for in
 *    si_value); its handler takes the stack as in CPU mode. A thread
 *    that blocks the signal is not sent one (as in CPU mode its time is
 *    not profiled).
 *  - blocked ("NR args SP PC" in system call NR, "-1 SP PC" outside
 *    one): never signalled, so a sleeping call never sees EINTR. The
 *    caller's function (profiler.c) scans the stack from SP
 *    (btscan.c) and writes the sample, marked blocked, on the sampler's
 *    own ring with the thread's tid.
 *
 * A thread caught running just as it enters a call may still be
 * interrupted, as with the CPU clock (the state is read right before the
 * signal is sent). Slots: a state per thread, and a SENDING state the
 * sampler holds while it sends, which mask, remove and stop wait out, so
 * that once they return no signal of ours is on its way.
 *
 * The /proc descriptors, one per slot, live in a descriptor table of the
 * sampler's own (private_table(), before it opens anything): so nothing
 * it opens takes a number the program could see in /proc/self/fd, close,
 * or be handed by its next open(), and it holds no reference to a file of
 * the program's (a pipe's reader still sees its end of file). (In the
 * shared table a daemon that closes every descriptor and makes a pipe
 * could have its pipe's number taken between our open and our move of it
 * above RTE_FD_MIN, and closed.) close_range(0, ~0, CLOSE_RANGE_UNSHARE)
 * (Linux 5.9) makes the new table empty in one step; before 5.9,
 * unshare(CLONE_FILES) copies the table and every descriptor of the copy
 * is closed at once (held for those microseconds only). Where neither
 * can be done, the descriptors stay in the shared table, above
 * RTE_FD_MIN, close-on-exec, opened with raw system calls (no hook of ours
 * sees them), and checked before each use to be still the file (fstat's
 * device and inode): a number the program closed and reused is never read
 * or closed by us, but the moment between open and move remains. The
 * sampler writes nothing through a descriptor: its samples go to its
 * ring (shared memory), and a warning it would give goes nowhere
 * (RTE_LOG's stderr is not in its table). In a sanitizer's build the
 * sampler keeps a copy of fd 2, for the sanitizer's report.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fd.h"
#include "forkvars.h"
#include "real.h"
#include "wall.h"

enum { W_FREE = 0, W_TAKING, W_ON, W_MASKED, W_SENDING };

struct wslot {
	int state;     /* atomic, W_* */
	pid_t tid;
	uint64_t last; /* sampler only: ns of its previous sample */
};

/* The two tables are RTE_BIGVAR: only a wall-clock profile touches them. */
static RTE_BIGVAR struct wslot g_slot[RTE_WALL_SLOTS];
static unsigned g_top;          /* atomic: above every slot taken */
static int g_stop;              /* atomic */
static int g_sending;           /* atomic: sends in flight */
static unsigned g_hz;
static int g_sig;
static uint32_t g_cookie;
static rte_wall_blocked_fn g_blocked;
static void (*g_self)(void);    /* the sampler's first call */
/* pthread_create as the program calls it (a sanitizer's interceptor,
 * then our hook): a sanitizer knows the sampler's stack. */
static int (*g_create)(pthread_t *, const pthread_attr_t *,
                       void *(*)(void *), void *);
static pid_t g_sampler;         /* atomic: the sampler's tid */
static int g_spawning;          /* atomic: a sampler is being made */
/* The sampler's: /proc descriptors of each slot, and whose they are. */
/* Atomic, set by the sampler: 1 if its descriptors are in a table of
 * its own. */
static int g_private;
static RTE_BIGVAR struct wfd {
	int fd;      /* /proc/self/task/TID/syscall, -1: none */
	pid_t tid;   /* 0: none */
	dev_t dev;   /* what it is, checked before each use */
	ino_t ino;
} g_fd[RTE_WALL_SLOTS];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int rte_wall_spawning(void)
{
	return __atomic_load_n(&g_spawning, __ATOMIC_ACQUIRE);
}

int rte_wall_is_sampler(void)
{
	pid_t s = __atomic_load_n(&g_sampler, __ATOMIC_RELAXED);

	return s && s == gettid();
}

int rte_wall_add(int masked)
{
	unsigned top = __atomic_load_n(&g_top, __ATOMIC_RELAXED);

	for (unsigned i = 0; i < RTE_WALL_SLOTS; i++) {
		int f = W_FREE;

		if (!__atomic_compare_exchange_n(&g_slot[i].state, &f, W_TAKING,
		                                 0, __ATOMIC_ACQUIRE,
		                                 __ATOMIC_RELAXED))
			continue;
		g_slot[i].tid = gettid();
		/* Release: the tid before the state the sampler reads. */
		__atomic_store_n(&g_slot[i].state, masked ? W_MASKED : W_ON,
		                 __ATOMIC_RELEASE);
		while (top < i + 1 &&
		       !__atomic_compare_exchange_n(&g_top, &top, i + 1, 1,
		                                    __ATOMIC_RELAXED,
		                                    __ATOMIC_RELAXED))
			;
		return (int)i + 1;
	}
	return 0;
}

/* Move slot's state from ON or MASKED to `to`, waiting out a send. */
static void settle(int slot, int to)
{
	struct wslot *s;

	if (slot < 1 || slot > (int)RTE_WALL_SLOTS)
		return;
	s = &g_slot[slot - 1];
	for (;;) {
		int cur = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

		if (cur == W_SENDING) {
			sched_yield();
			continue;
		}
		if (cur != W_ON && cur != W_MASKED)
			return;
		if (__atomic_compare_exchange_n(&s->state, &cur, to, 0,
		                                __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED))
			return;
	}
}

void rte_wall_mask(int slot, int masked)
{
	settle(slot, masked ? W_MASKED : W_ON);
}

void rte_wall_remove(int slot)
{
	settle(slot, W_FREE);
}

int rte_wall_ours(const siginfo_t *si, uint64_t *ns)
{
	if (si->si_code != SI_QUEUE || si->si_uid != (uid_t)g_cookie ||
	    si->si_pid != getpid())
		return 0;
	*ns = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	return 1;
}

void rte_wall_stop(void)
{
	__atomic_store_n(&g_stop, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&g_sending, __ATOMIC_SEQ_CST))
		sched_yield();
}

/* ---- the sampler ----------------------------------------------------- */

/* 1 if slot i's descriptor is still the file we opened (the program
 * may have closed the number and reused it: then it is never touched). */
static int fd_ours(unsigned i)
{
	struct stat st;

	return g_fd[i].fd >= 0 && syscall(SYS_fstat, g_fd[i].fd, &st) == 0 &&
	       st.st_dev == g_fd[i].dev && st.st_ino == g_fd[i].ino;
}

static void fd_open(unsigned i, pid_t tid)
{
	struct stat st;
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (!__atomic_load_n(&g_private, __ATOMIC_RELAXED))
		fd = fd < 0 ? -1 : rte_fd_high(fd);
	g_fd[i].tid = tid;
	g_fd[i].fd = -1;
	if (fd >= 0 && syscall(SYS_fstat, fd, &st) == 0) {
		g_fd[i].fd = fd;
		g_fd[i].dev = st.st_dev;
		g_fd[i].ino = st.st_ino;
	} else if (fd >= 0) {
		syscall(SYS_close, fd);
	}
}

static void fd_close(unsigned i)
{
	if (fd_ours(i))
		syscall(SYS_close, g_fd[i].fd);
	g_fd[i].fd = -1;
	g_fd[i].tid = 0;
}

/* /proc/self/task/TID/syscall: "nr a1 .. a6 sp pc" (blocked in system
 * call nr), "-1 sp pc" (blocked, not in a call) or "running" (on a CPU
 * or waiting for one). Returns 1 with the fields, 0 if it runs, -1 if
 * unreadable (the thread is gone, or the descriptor not ours). */
static int thread_syscall(unsigned i, int *nr, uint64_t *sp, uint64_t *pc)
{
	char b[256], *tok[9], *save = NULL, *t;
	unsigned n = 0;
	long r;

	if (!fd_ours(i) ||
	    (r = (long)syscall(SYS_pread64, g_fd[i].fd, b, sizeof b - 1, 0)) < 0)
		return -1;
	b[r] = '\0';
	if (!strncmp(b, "running", 7))
		return 0;
	for (t = strtok_r(b, " \n", &save); t && n < 9;
	     t = strtok_r(NULL, " \n", &save))
		tok[n++] = t;
	if (n < 3)
		return -1;
	*nr = (int)strtol(tok[0], NULL, 10);
	*sp = strtoull(tok[n - 2], NULL, 16);
	*pc = strtoull(tok[n - 1], NULL, 16);
	return 1;
}

static void send_sample(struct wslot *s, uint64_t ns)
{
	siginfo_t si;
	int on = W_ON;

	__atomic_fetch_add(&g_sending, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&g_stop, __ATOMIC_SEQ_CST) &&
	    __atomic_compare_exchange_n(&s->state, &on, W_SENDING, 0,
	                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		memset(&si, 0, sizeof si);
		si.si_signo = g_sig;
		si.si_code = SI_QUEUE;
		si.si_pid = getpid();
		si.si_uid = (uid_t)g_cookie;
		si.si_value.sival_ptr = (void *)(uintptr_t)ns;
		syscall(SYS_rt_tgsigqueueinfo, getpid(), s->tid, g_sig, &si);
		__atomic_store_n(&s->state, W_ON, __ATOMIC_RELEASE);
	}
	__atomic_fetch_sub(&g_sending, 1, __ATOMIC_SEQ_CST);
}

static void sample_slot(unsigned i, uint64_t now)
{
	struct wslot *s = &g_slot[i];
	int st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE), nr = -1, r;
	uint64_t sp = 0, pc = 0, ns;

	if (st != W_ON && st != W_MASKED) {
		if (g_fd[i].tid && st == W_FREE)
			fd_close(i);
		return;
	}
	if (g_fd[i].tid != s->tid) {
		fd_close(i);
		fd_open(i, s->tid);
		s->last = now;
		return; /* its first sample one period from now */
	}
	ns = now - s->last;
	s->last = now;
	/* Running: looked at once more right before the signal (a thread
	 * that entered a call meanwhile is then not interrupted). */
	if ((r = thread_syscall(i, &nr, &sp, &pc)) == 0)
		r = thread_syscall(i, &nr, &sp, &pc);
	if (r < 0) {
		/* Gone, its tid reused by a thread now in this slot (the
		 * descriptor is the old task's), or the descriptor taken:
		 * opened again. */
		fd_close(i);
		return;
	}
	/* Blocked, in a system call or not: never signalled (a signal in
	 * a call can end it with EINTR); the sampler takes its stack. */
	if (r > 0) {
		if (g_blocked)
			g_blocked(s->tid, ns, nr, sp, pc);
		return;
	}
	if (st == W_ON)
		send_sample(s, ns);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KEEP_FD 2 /* the sanitizer reports on fd 2 */
#else
#define KEEP_FD -1
#endif

/* Close every descriptor of this thread's (private) table but KEEP_FD:
 * those /proc/thread-self/fd lists, again until none is left; without
 * /proc, every number below the descriptor limit. */
static void close_copies(void)
{
	char b[2048];
	struct rlimit rl;
	int again = 1;

	while (again) {
		long fd = syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/fd",
		                  O_RDONLY | O_DIRECTORY | O_CLOEXEC), got;

		if (fd < 0)
			break;
		again = 0;
		while ((got = syscall(SYS_getdents64, (int)fd, b, sizeof b)) > 0)
			for (long off = 0; off < got;) {
				struct dirent64 *d = (void *)(b + off);
				long n = strtol(d->d_name, NULL, 10);

				off += d->d_reclen;
				if (d->d_name[0] >= '0' && d->d_name[0] <= '9' &&
				    n != fd && n != KEEP_FD) {
					syscall(SYS_close, (int)n);
					again = 1;
				}
			}
		syscall(SYS_close, (int)fd);
		if (!again)
			return;
	}
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) != 0 ||
	    rl.rlim_cur > (1u << 20))
		rl.rlim_cur = 1u << 20;
	for (unsigned n = 0; n < rl.rlim_cur; n++)
		if ((int)n != KEEP_FD)
			syscall(SYS_close, (int)n);
}

/* Give the sampler a descriptor table of its own, empty but KEEP_FD (see
 * the top of this file): 1 if done, 0 if it shares the program's. */
static int private_table(void)
{
	if (KEEP_FD < 0 &&
	    syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) == 0)
		return 1;
	if (KEEP_FD >= 0 &&
	    syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_UNSHARE) == 0 &&
	    syscall(SYS_close_range, 0u, 1u, 0) == 0)
		return 1;
	if (syscall(SYS_unshare, CLONE_FILES) != 0)
		return 0;
	close_copies();
	return 1;
}

static void *sampler(void *arg)
{
	uint64_t period = 1000000000u / g_hz, next = mono_ns();

	(void)arg;
	__atomic_store_n(&g_private, private_table(), __ATOMIC_RELAXED);
	__atomic_store_n(&g_sampler, gettid(), __ATOMIC_RELAXED);
	if (g_self)
		g_self(); /* not profiled: armed by our hook, disarmed here */
	__atomic_store_n(&g_spawning, 0, __ATOMIC_RELEASE);
	/* The system call, not libc's prctl: that is our hook (hooks/, a
	 * layer above), which would record the name as the program's. */
	syscall(SYS_prctl, PR_SET_NAME, "rte-wall", 0, 0, 0);
	while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
		struct timespec ts;
		uint64_t now;
		unsigned top;

		next += period;
		ts.tv_sec = (time_t)(next / 1000000000u);
		ts.tv_nsec = (long)(next % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
		                       NULL) == EINTR)
			;
		now = mono_ns();
		if (now - next > 4 * period)
			next = now; /* late (a stopped process): no burst */
		top = __atomic_load_n(&g_top, __ATOMIC_RELAXED);
		for (unsigned i = 0; i < top; i++)
			sample_slot(i, now);
	}
	for (unsigned i = 0; i < RTE_WALL_SLOTS; i++)
		if (g_fd[i].tid)
			fd_close(i);
	return NULL;
}

static int spawn(void)
{
	pthread_attr_t a;
	sigset_t all, old;
	pthread_t th;
	int e;

	if (!g_create || pthread_attr_init(&a))
		return errno = ENOSYS, -1;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256 * 1024);
	sigfillset(&all);
	rte_real_sigmask(SIG_SETMASK, &all, &old);
	__atomic_store_n(&g_spawning, 1, __ATOMIC_RELEASE);
	e = g_create(&th, &a, sampler, NULL);
	if (e)
		__atomic_store_n(&g_spawning, 0, __ATOMIC_RELEASE);
	rte_real_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	return e ? (errno = e, -1) : 0;
}

int rte_wall_start(unsigned hz, int sig, rte_wall_blocked_fn blocked,
                   void (*self)(void))
{
	void *c = rte_dlsym(RTLD_DEFAULT, "pthread_create");

	memcpy(&g_create, &c, sizeof c);
	if (!g_create)
		g_create = rte_real.pthread_create;
	g_self = self;
	g_hz = hz ? hz : 1;
	g_sig = sig;
	g_blocked = blocked;
	g_cookie = (uint32_t)(mono_ns() ^ ((uint64_t)getpid() << 16)) | 1u;
	for (unsigned i = 0; i < RTE_WALL_SLOTS; i++) {
		g_fd[i].fd = -1;
		g_fd[i].tid = 0;
	}
	return spawn();
}

int rte_wall_fork_child(void)
{
	/* The parent's sampler's descriptors: in its own table, not here
	 * (forgotten); else copies here (closed). */
	for (unsigned i = 0; i < RTE_WALL_SLOTS; i++) {
		if (g_fd[i].tid && !__atomic_load_n(&g_private, __ATOMIC_RELAXED))
			fd_close(i);
		g_fd[i].fd = -1;
		g_fd[i].tid = 0;
	}
	__atomic_store_n(&g_private, 0, __ATOMIC_RELAXED);
	memset(g_slot, 0, sizeof g_slot);
	__atomic_store_n(&g_top, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g_sending, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g_sampler, 0, __ATOMIC_RELAXED);
	if (__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
		return -1;
	return spawn();
}
