/*
 * drain.c - rte-run's live drain (drain.h): one thread, an inotify watch
 * on the ring files' directory, one cursor and one spool per file.
 *
 * One round: take the names inotify reported (a full queue: list the
 * directory), read every ring of every file that was ever used (and the
 * next one's header) to its current end into the spools; when a round
 * read nothing, ask /proc whether each file's writer is gone (at most
 * every CHECK_MS per file, less often as it ages: check_after()), and
 * capture the files whose writer is; then wait for the directory to
 * change, at most IDLE_MS (after a round that read a little, NAP_NS; one
 * that read BUSY_WORDS or more, none). A file whose writer seems gone
 * but which still grows (a writer in another pid namespace, whose pid is
 * not the file's) is only captured at the end. The names of LIVE, and the files they open, are
 * drain_files.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "alive.h"
#include "capture.h"
#include "drain.h"
#include "drain_int.h"
#include "pack.h"
#include "rte/consumer.h"

#define IDLE_MS 1           /* the longest wait of an idle round */
#define BUSY_WORDS 4096     /* a round that read fewer words: a short nap */
#define NAP_NS 200000       /* ... of 0.2 ms (at 10 M events/s, a few
                               thousand words a ring: far from a wrap) */
#define CHECK_MS 10         /* between two liveness checks of a file, at first */
#define CHECK_MAX_MS 80     /* ... and at most (see check_after()) */
#define RESERVE ".reserve" /* in LIVE: see make_reserve() */
#define RESERVE_BYTES (2 << 20) /* a capture's first part: a spool's 1 MiB
                                 * in memory, headers and name pages */
#define DRAIN_NICE (-10)     /* the drain thread's nice value, if allowed */
#define DRAIN_SLICE_NS 100000 /* the slice the drain thread asks for */
#define PACK_NOW_BYTES (4u << 20) /* a bigger capture is packed at the end:
                                   * packing it now would keep the drain
                                   * from the rings still written */

void drain_say(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "rte-run: drain: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Everything new in t's rings into its spool. Returns the words read. */
/* t's current name in LIVE (an exec may have renamed it since): the
 * name seen last if it is still t's file, else found by inode. Returns 0,
 * or -1 if t's file has no name in LIVE any more. */
static int current_name(struct drain *d, struct tfile *t)
{
	struct stat st;
	struct dirent *e;
	DIR *dir;
	int fd, found = -1;

	if (fstatat(d->live_fd, t->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == t->dev && st.st_ino == t->ino)
		return 0;
	fd = openat(d->live_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd < 0 ? NULL : fdopendir(fd);
	while (dir && found < 0 && (e = readdir(dir)))
		if (e->d_ino == t->ino && drain_ring_name(e->d_name) &&
		    fstatat(d->live_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_dev == t->dev && st.st_ino == t->ino) {
			snprintf(t->name, sizeof t->name, "%s", e->d_name);
			found = 0;
		}
	if (dir)
		closedir(dir);
	else if (fd >= 0)
		close(fd);
	return found;
}

/* Move from (in the directory from_fd: LIVE, or OUT for a capture) into
 * OUT under its name, or NAME.dupN.events if OUT has that name already (a
 * pid reused), the name it got stored in to. Returns 0 or -1. */
static int move_out_as(struct drain *d, int from_fd, const char *from, const char *name,
                       char to[300])
{
	size_t stem = strlen(name) - 7;

	for (int n = 1; n < 1000; n++) {
		if (n == 1)
			snprintf(to, 300, "%s", name);
		else
			snprintf(to, 300, "%.*s.dup%d.events", (int)stem, name, n);
		if (renameat2(from_fd, from, d->out_fd, to, RENAME_NOREPLACE) == 0)
			return 0;
		/* A file system without RENAME_NOREPLACE: link, which never
		 * replaces either, then the old name removed. */
		if (errno == EINVAL && linkat(from_fd, from, d->out_fd, to, 0) == 0)
			return unlinkat(from_fd, from, 0), 0;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

static int move_out(struct drain *d, const char *from, const char *name)
{
	char to[300];

	return move_out_as(d, d->live_fd, from, name, to);
}

/* The reserve given up, for a capture that needs the room. */
static void drop_reserve(struct drain *d)
{
	unlinkat(d->live_fd, RESERVE, 0);
	d->reserved = 0;
}

/* Room kept on the directory's file system for writing a capture when
 * the disk is full (the spool is given back as it is copied, but the
 * first pages of the capture need room of their own). */
static void make_reserve(struct drain *d)
{
	int fd;

	if (d->final) {
		if (d->reserved)
			drop_reserve(d); /* the last captures take its room */
		return;
	}
	if (d->reserved)
		return; /* in place (every capture asks; if the command removed
		         * it, a full disk loses more) */
	fd = openat(d->live_fd, RESERVE, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (fallocate(fd, 0, 0, RESERVE_BYTES) < 0)
		unlinkat(d->live_fd, RESERVE, 0);
	else
		d->reserved = 1;
	close(fd);
}

/* 1 if LIVE's file system has less than twice the reserve free. */
static int low_space(const struct drain *d)
{
	struct statvfs v;

	return fstatvfs(d->live_fd, &v) == 0 &&
	       (uint64_t)v.f_bavail * v.f_frsize < 2 * (uint64_t)RESERVE_BYTES;
}

/* Pack OUT/name (pack.h) where it pays; a failure leaves it as it is,
 * said. */
static void pack_out(struct drain *d, const char *name)
{
	char tmp[320], err[600];
	struct stat a, b;
	int got;

	snprintf(tmp, sizeof tmp, ".%s.pack", name);
	if (fstatat(d->out_fd, name, &a, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	got = pack_capture(d->packer, d->out_fd, name, tmp, err, sizeof err);
	if (got < 0)
		drain_say("%s: not packed: %s (kept as a plain capture)", name, err);
	if (got == 1 && fstatat(d->out_fd, name, &b, AT_SYMLINK_NOFOLLOW) == 0) {
		d->st.bytes += (uint64_t)b.st_blocks * 512;
		d->st.bytes -= (uint64_t)a.st_blocks * 512;
		d->st.packed++;
	}
}

/* OUT/name packed now if small (or at the end), else at drain_stop(). */
static void pack_or_later(struct drain *d, const char *name, uint64_t bytes)
{
	if (!d->pack)
		return;
	if (d->final || bytes <= PACK_NOW_BYTES) {
		pack_out(d, name);
		return;
	}
	if (d->nlater == d->caplater) {
		size_t cap = d->caplater ? 2 * d->caplater : 16;
		char **m = realloc(d->later, cap * sizeof *m);

		if (!m)
			return; /* stays plain */
		d->later = m;
		d->caplater = cap;
	}
	if ((d->later[d->nlater] = strdup(name)))
		d->nlater++;
}

/* Write t's capture into OUT, remove its ring file; free t. A file that
 * could not be read (or captured) goes into OUT as it is. */
static void capture(struct drain *d, struct tfile *t)
{
	char tmp[64], err[600], outname[300];
	uint64_t lost, bytes = 0;
	int named, packed;

	drain_safe(t, 1);
	named = current_name(d, t) == 0;
	if (!t->c) {
		if (named && move_out(d, t->name, t->name) == 0)
			d->st.errors++;
		goto done;
	}
	cap_flush(t->sp); /* a failure counts in the losses below */
	lost = cap_lost_words(t->sp);
	d->st.words += cap_words(t->sp);
	d->st.lost += lost;
	if (cap_error(t->sp)[0])
		drain_say("%s: %s (those words are counted as lost)", t->name, cap_error(t->sp));
	/* made in OUT (LIVE's file system: LIVE is in it), where its name
	 * wakes no inotify watch of ours */
	snprintf(tmp, sizeof tmp, ".%llu.capture", (unsigned long long)t->ino);
	unlinkat(d->out_fd, tmp, 0);
	/* The disk may be full (the last flush too may have filled it):
	 * make room to write the capture. */
	if (cap_error(t->sp)[0] || low_space(d))
		drop_reserve(d);
	{
		char path[4400];

		snprintf(path, sizeof path, "%s/%s", d->out, tmp);
		if (cap_finish(t->sp, path, t->fd, rte_cursor_layout(t->c)->custom_events_offset,
		               d->pack ? d->packer : NULL, &packed, err, sizeof err) < 0) {
			t->sp = NULL;
			drain_say("%s: no capture: %s; the ring file is kept instead", t->name, err);
			d->st.lost -= lost; /* the ring file's own losses count now */
			if (named)
				move_out(d, t->name, t->name);
			d->st.errors++;
			goto done;
		}
	}
	t->sp = NULL;
	{
		struct stat st;

		if (fstatat(d->out_fd, tmp, &st, 0) == 0)
			d->st.bytes += bytes = (uint64_t)st.st_blocks * 512;
	}
	if (move_out_as(d, d->out_fd, tmp, t->name, outname) < 0) {
		drain_say("%s: cannot move its capture into place: %s", t->name, strerror(errno));
		unlinkat(d->out_fd, tmp, 0);
		if (named)
			move_out(d, t->name, t->name);
		d->st.errors++;
		goto done;
	}
	d->st.files++;
	if (named)
		unlinkat(d->live_fd, t->name, 0);
	make_reserve(d);
	if (packed == 1)
		d->st.packed++;
	else if (packed == 0 && err[0])
		drain_say("%s: not packed: %s (kept as a plain capture)", outname, err);
	else if (packed < 0)
		pack_or_later(d, outname, bytes);
done:
	cap_discard(t->sp);
	rte_cursor_close(t->c);
	free(t->failed);
	close(t->fd);
	free(t);
}

/* When t's writer is looked for next: CHECK_MS after its first checks,
 * then twice as long after every 8 (to CHECK_MAX_MS): most writers are
 * short-lived processes, captured within CHECK_MS of their end, and a
 * long-lived one (a build's shell) is not read from /proc 100 times a
 * second for nothing; it is captured at most CHECK_MAX_MS after it ends.
 * Nothing is lost meanwhile: its rings are read as before. */
static uint64_t check_after(struct tfile *t, uint64_t now)
{
	unsigned shift = t->checks / 8;
	uint64_t ms = (uint64_t)CHECK_MS << (shift < 4 ? shift : 4);

	t->checks++;
	return now + (ms < CHECK_MAX_MS ? ms : CHECK_MAX_MS);
}

/* Capture the files whose writer is gone (or all, at the end). */
static void reap(struct drain *d, int all)
{
	uint64_t now = now_ms();
	size_t k = 0;

	for (size_t i = 0; i < d->nf; i++) {
		struct tfile *t = d->f[i];
		int gone = all;

		if (!gone && t->c && now >= t->next_check) {
			t->next_check = check_after(t, now);
			gone = t->pid > 0 && !t->no_liveness &&
			       !alive_writer(t->pid, t->mdev, t->mino);
			if (gone && drain_safe(t, 1)) /* grew: the pid is not its writer's */
				gone = 0, t->no_liveness = 1;
		}
		if (!gone && !t->c && now >= t->next_check) {
			t->next_check = now + CHECK_MS;
			drain_try_open(d, t);
		}
		if (gone)
			capture(d, t);
		else
			d->f[k++] = t;
	}
	d->nf = k;
}

/*
 * Ask the scheduler (EEVDF, Linux 6.12 and later) for a short slice: a
 * waking drain then preempts a busy traced thread at once instead of
 * waiting for the end of its slice (3 ms, times the run queue's length
 * on a loaded machine: long enough for a ring to wrap). Unprivileged;
 * older kernels refuse it (EINVAL) and keep the default.
 */
static void short_slice(void)
{
	struct { /* the kernel's struct sched_attr, its first version */
		uint32_t size, sched_policy;
		uint64_t sched_flags;
		int32_t sched_nice;
		uint32_t sched_priority;
		uint64_t sched_runtime, sched_deadline, sched_period;
	} a;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.sched_policy = SCHED_OTHER;
	a.sched_nice = getpriority(PRIO_PROCESS, (id_t)gettid());
	a.sched_runtime = DRAIN_SLICE_NS;
	syscall(SYS_sched_setattr, gettid(), &a, 0);
}

/*
 * Where we may (root, CAP_SYS_NICE, an RLIMIT_RTPRIO): SCHED_FIFO at the
 * lowest real-time priority. The drain sleeps most of the time (it reads
 * faster than any writer writes, then waits in poll()); woken, it runs at
 * once instead of queueing behind every busy thread of the machine, which
 * on a loaded machine is what lets a ring wrap. The kernel's real-time
 * throttling (sched_rt_runtime_us) bounds it if it ever spun; it goes
 * back to SCHED_OTHER once the command has ended (the last reads and the
 * packing are no hurry). RTE_RUN_NO_RT (set, any value): not asked for.
 * Returns 1 if set.
 */
static int realtime(void)
{
	struct sched_param p = { .sched_priority = 1 };

	if (getenv("RTE_RUN_NO_RT"))
		return 0;
	return pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
}

static void *run(void *arg)
{
	struct drain *d = arg;

	/* Ahead of the traced threads where we may (root, CAP_SYS_NICE): a
	 * drain the scheduler leaves waiting is a ring that wraps. */
	struct sigaction sa;
	sigset_t bus;

	if (!realtime()) {
		setpriority(PRIO_PROCESS, (id_t)gettid(), DRAIN_NICE);
		short_slice();
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = drain_on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
	make_reserve(d);
	drain_scan(d);
	while (!atomic_load_explicit(&d->stop, memory_order_acquire)) {
		uint64_t got = 0;

		drain_take_events(d);
		for (size_t i = 0; i < d->nf; i++)
			got += drain_safe(d->f[i], 0);
		if (got >= BUSY_WORDS)
			continue;
		if (got) {
			/* A trickle: never a spin, which at real-time priority
			 * would take a CPU from the traced program. Not the
			 * idle wait: a writer that writes in bursts would fill
			 * more of its ring meanwhile (tried: bench/drain.py's
			 * highest lossless rate, 50 M events/s, fell to 20 in
			 * one run of two). */
			struct timespec nap = { 0, NAP_NS };

			nanosleep(&nap, NULL);
			continue;
		}
		reap(d, 0);
		if (d->ino_fd >= 0) {
			struct pollfd p = { .fd = d->ino_fd, .events = POLLIN };

			poll(&p, 1, IDLE_MS);

		} else {
			struct timespec ts = { 0, 20 * 1000000 };

			nanosleep(&ts, NULL);
		}
	}
	/* The command has ended: no hurry any more, and the packing below
	 * is work a real-time thread would take from everyone else. */
	{
		struct sched_param p0 = { .sched_priority = 0 };

		pthread_setschedparam(pthread_self(), SCHED_OTHER, &p0);
	}
	drain_take_events(d);
	drain_scan(d);
	d->final = 1; /* the reserve is given up by the capture that needs it */
	for (size_t i = 0; i < d->nf; i++)
		if (!d->f[i]->c)
			drain_try_open(d, d->f[i]);
	reap(d, 1);
	for (size_t i = 0; i < d->nlater; i++) {
		pack_out(d, d->later[i]);
		free(d->later[i]);
	}
	free(d->later);
	return NULL;
}

/* As many descriptors as we may have: one per followed file (the
 * command has its own limits already: it was forked before). */
static void more_files(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

struct drain *drain_start(const char *out, const char *live, int pack, char *err,
                          size_t errlen)
{
	struct drain *d = calloc(1, sizeof *d);
	sigset_t all, old;
	int e;

	if (d) {
		d->out_fd = d->live_fd = d->ino_fd = -1;
		d->pack = pack;
		if (pack)
			d->packer = packer_new(); /* NULL: each one says so */
	}
	if (!d || !(d->out = strdup(out)) || !(d->live = strdup(live))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	d->out_fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d->live_fd = open(live, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->out_fd < 0 || d->live_fd < 0) {
		snprintf(err, errlen, "%s: %s", d->out_fd < 0 ? out : live, strerror(errno));
		goto fail;
	}
	d->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->ino_fd >= 0 &&
	    inotify_add_watch(d->ino_fd, live, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0) {
		close(d->ino_fd);
		d->ino_fd = -1; /* listed every round instead */
	}
	more_files();
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = pthread_create(&d->thread, NULL, run, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		snprintf(err, errlen, "cannot start the drain thread: %s", strerror(e));
		goto fail;
	}
	return d;
fail:
	if (d) {
		if (d->ino_fd >= 0)
			close(d->ino_fd);
		if (d->out_fd >= 0)
			close(d->out_fd);
		if (d->live_fd >= 0)
			close(d->live_fd);
		free(d->out);
		free(d->live);
		packer_free(d->packer);
		free(d);
	}
	return NULL;
}

void drain_stop(struct drain *d, struct drain_stats *st)
{
	atomic_store_explicit(&d->stop, 1, memory_order_release);
	pthread_join(d->thread, NULL);
	if (st)
		*st = d->st;
	if (d->ino_fd >= 0)
		close(d->ino_fd);
	unlinkat(d->live_fd, RESERVE, 0);
	close(d->out_fd);
	close(d->live_fd);
	rmdir(d->live);
	free(d->f);
	free(d->out);
	free(d->live);
	packer_free(d->packer);
	free(d);
}
