/*
 * gen_ring.c - ring files for rte-read's tests, written with the project's
 * own ring writer (common/writer/ring.h):
 *
 *   gen_ring known FILE TRUTH   a finished file of exactly known phases,
 *                               spans, counters, ints and thread names;
 *                               TRUTH gets what was written, as JSON
 *   gen_ring live DIR N [US] [stop|nostop] [DELAY_MS] [LOG2]
 *                               a live producer: after DELAY_MS creates
 *                               DIR/<pid>.events (complete before it gets
 *                               its name), writes user int "seq" = 0..N-1
 *                               pausing US microseconds every 16 events,
 *                               then ring_stop and exits (stop) or sleeps
 *                               until killed (nostop)
 *   gen_ring corrupt FILE       ring 0 holds a message of length 0
 *   gen_ring badname FILE       a user event's name slot has no NUL
 *   gen_ring multi DIR          three files of two processes, timestamps
 *                               interleaved: 100.exec1.events (pre-exec),
 *                               100.events, 200.events (no ring_start)
 *   gen_ring pct DIR TRUTH      two processes of one span, app.req, whose
 *                               run percentiles are neither one's
 *                               (301.events, 302.events); TRUTH gets
 *                               {"app.req": [every duration]}
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ring.h"

struct file {
	void *base;
	struct rte_layout l;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void create(struct file *f, const char *path, unsigned rings,
                   unsigned log2)
{
	int fd;

	if (rte_layout_compute(&f->l, rings, log2) < 0)
		die("layout");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	if (ftruncate(fd, (off_t)f->l.total_size) < 0)
		die("ftruncate");
	f->base = mmap(NULL, f->l.total_size, PROT_READ | PROT_WRITE, MAP_SHARED,
	               fd, 0);
	if (f->base == MAP_FAILED)
		die("mmap");
	close(fd);
	memcpy(f->base, &f->l.version, RTE_METADATA_BYTES);
}

static void set_name(struct file *f, unsigned id, const char *s)
{
	strcpy((char *)f->base + f->l.custom_events_offset +
	       (uint64_t)id * RTE_NAME_SLOT_BYTES, s);
}

static void w0(struct rte_ring_writer *w, int user, unsigned type,
               unsigned id, uint64_t ts)
{
	rte_ring_write0(w, rte_hdr_make(0, user, type, id), ts);
}

static void w1(struct rte_ring_writer *w, int user, unsigned type,
               unsigned id, uint64_t ts, uint64_t v)
{
	rte_ring_write1(w, rte_hdr_make(0, user, type, id), ts, v);
}

static void wcustom(struct rte_ring_writer *w, unsigned id, uint64_t ts,
                    const char *s)
{
	uint64_t p[32];
	size_t n = rte_custom_encode(s, strlen(s), p);

	rte_ring_write(w, rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, id), ts, p,
	               (unsigned)n);
}

/* ---- known ------------------------------------------------------------- */

enum { U_WORK = 0, U_IO, U_COUNT, U_TICK, U_TNAME, U_TID, U_TNAME_OF };

static void known(const char *path, const char *truth_path)
{
	struct file f;
	struct rte_ring_writer w0r, w1r;
	FILE *t = fopen(truth_path, "w");
	uint64_t ts = 1000000000ull, start, stop, phase0 = 0, phase1 = 0;
	const char *sep = "";

	if (!t)
		die(truth_path);
	create(&f, path, 4, 16);
	set_name(&f, U_WORK, "app.work");
	set_name(&f, U_IO, "app.io");
	set_name(&f, U_COUNT, "app.count");
	set_name(&f, U_TICK, "app.tick");
	set_name(&f, U_TNAME, "rte.thread.name");
	set_name(&f, U_TID, "rte.thread.tid");
	set_name(&f, U_TNAME_OF, "rte.thread.name_of");
	rte_ring_writer_attach(&w0r, f.base, &f.l, 0);
	rte_ring_writer_attach(&w1r, f.base, &f.l, 1);
	start = ts;
	w1(&w0r, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_START, ts, 4242);
	w1(&w0r, 1, RTE_UMSG_INT, U_TID, ts, 777);
	wcustom(&w0r, U_TNAME, ts, "main-thread");
	fprintf(t, "{\"pid\":4242,\"spans\":{\"app.work\":[");
	/* app.work: 1000 spans lasting 1..1000 us, 500 ns apart. */
	for (unsigned i = 1; i <= 1000; i++) {
		ts += 500;
		w0(&w0r, 1, RTE_UMSG_SPAN_BEGIN, U_WORK, ts);
		ts += (uint64_t)i * 1000;
		w0(&w0r, 1, RTE_UMSG_SPAN_END, U_WORK, ts);
		fprintf(t, "%s%u", sep, i * 1000);
		sep = ",";
	}
	/* Ring 1: a thread named "worker" doing app.io for 2 ms, 10 times,
	 * while ring 0 runs 100 minor phases of exactly 10 us that contain a
	 * minor_local_roots of 4 us, and counts. */
	fprintf(t, "],\"app.io\":[2000000,2000000,2000000,2000000,2000000,"
	           "2000000,2000000,2000000,2000000,2000000]},");
	ts += 1000;
	w1(&w1r, 0, RTE_MSG_LIFECYCLE, RTE_LC_DOMAIN_SPAWN, ts, 4242);
	w1(&w1r, 1, RTE_UMSG_INT, U_TID, ts, 778);
	wcustom(&w1r, U_TNAME, ts, "worker");
	for (unsigned i = 0; i < 10; i++) {
		w0(&w1r, 1, RTE_UMSG_SPAN_BEGIN, U_IO, ts + i * 3000000);
		w0(&w1r, 1, RTE_UMSG_SPAN_END, U_IO, ts + i * 3000000 + 2000000);
	}
	for (unsigned i = 0; i < 100; i++) {
		uint64_t b = ts + 100 + (uint64_t)i * 300000;

		w0(&w0r, 0, RTE_MSG_BEGIN, RTE_P_MINOR, b);
		w0(&w0r, 0, RTE_MSG_BEGIN, RTE_P_MINOR_LOCAL_ROOTS, b + 1000);
		w0(&w0r, 0, RTE_MSG_EXIT, RTE_P_MINOR_LOCAL_ROOTS, b + 5000);
		w0(&w0r, 0, RTE_MSG_EXIT, RTE_P_MINOR, b + 10000);
		w1(&w0r, 0, RTE_MSG_COUNTER, RTE_C_MINOR_ALLOCATED, b + 10000, i + 1);
		w1(&w0r, 1, RTE_UMSG_INT, U_COUNT, b + 10000, (uint64_t)((int64_t)i - 50));
		w0(&w0r, 1, RTE_UMSG_UNIT, U_TICK, b + 10001);
		phase0 += 10000;
	}
	/* ring 0's thread renames ring 1's */
	wcustom(&w0r, U_TNAME_OF, ts + 30000000 - 1, "1:worker-renamed");
	w1(&w1r, 0, RTE_MSG_LIFECYCLE, RTE_LC_DOMAIN_TERMINATE, ts + 30000000, 4242);
	stop = ts + 40000000;
	w0(&w0r, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_STOP, stop);
	fprintf(t, "\"phases\":{\"minor\":{\"count\":100,\"dur\":10000},"
	           "\"minor_local_roots\":{\"count\":100,\"dur\":4000}},"
	           "\"runtime_phase_ns\":%llu,\"ring1_phase_ns\":%llu,"
	           "\"wall_ns\":%llu,"
	           "\"counter\":{\"name\":\"minor_allocated\",\"last\":100,\"min\":1,\"max\":100,\"count\":100},"
	           "\"int\":{\"name\":\"app.count\",\"last\":49,\"min\":-50,\"max\":49,\"count\":100},"
	           "\"unit\":{\"name\":\"app.tick\",\"count\":100},"
	           "\"threads\":{\"0\":[\"main-thread\",777],\"1\":[\"worker-renamed\",778]},"
	           "\"chrome_threads\":{\"777\":\"main-thread (tid 777)\",\"778\":\"worker, worker-renamed (tid 778)\"},"
	           "\"lifecycle\":{\"ring_start\":1,\"ring_stop\":1,\"domain_spawn\":1,\"domain_terminate\":1}}\n",
	        (unsigned long long)phase0, (unsigned long long)phase1,
	        (unsigned long long)(stop - start));
	fclose(t);
}

/* ---- live -------------------------------------------------------------- */

static void live(int argc, char **argv)
{
	const char *dir = argv[2];
	long n = atol(argv[3]);
	long us = argc > 4 ? atol(argv[4]) : 0;
	int stop = argc > 5 ? strcmp(argv[5], "nostop") != 0 : 1;
	long delay = argc > 6 ? atol(argv[6]) : 0;
	unsigned log2 = argc > 7 ? (unsigned)atoi(argv[7]) : 12;
	char tmp[4096], final[4096];
	struct rte_ring_writer w;
	struct file f;

	if (delay)
		usleep((useconds_t)delay * 1000);
	snprintf(tmp, sizeof tmp, "%s/.%ld.tmp", dir, (long)getpid());
	snprintf(final, sizeof final, "%s/%ld.events", dir, (long)getpid());
	create(&f, tmp, 2, log2);
	set_name(&f, 0, "seq");
	rte_ring_writer_attach(&w, f.base, &f.l, 0);
	w1(&w, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_START, rte_clock_monotonic_ns(),
	   (uint64_t)getpid());
	if (rename(tmp, final) < 0)
		die("rename");
	for (long i = 0; i < n; i++) {
		w1(&w, 1, RTE_UMSG_INT, 0, rte_clock_monotonic_ns(), (uint64_t)i);
		if (us && i % 16 == 15)
			usleep((useconds_t)us);
	}
	if (!stop)
		for (;;)
			pause();
	w0(&w, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_STOP, rte_clock_monotonic_ns());
}

/* ---- hostile and multi ---------------------------------------------------- */

static void corrupt(const char *path)
{
	struct rte_ring_writer w;
	struct file f;
	uint64_t *data, tail;

	create(&f, path, 2, 10);
	rte_ring_writer_attach(&w, f.base, &f.l, 0);
	w1(&w, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_START, 1000, 1234);
	w0(&w, 0, RTE_MSG_BEGIN, RTE_P_MINOR, 1100);
	/* A zero word where the next header should be, covered by tail. */
	data = (uint64_t *)((char *)f.base + f.l.data_offset);
	tail = __atomic_load_n(w.tail_p, __ATOMIC_ACQUIRE);
	data[tail] = 0;
	data[tail + 1] = 1200;
	__atomic_store_n(w.tail_p, tail + 2, __ATOMIC_RELEASE);
	/* Ring 1 stays readable. */
	rte_ring_writer_attach(&w, f.base, &f.l, 1);
	w0(&w, 0, RTE_MSG_BEGIN, RTE_P_MAJOR, 1150);
}

static void badname(const char *path)
{
	struct rte_ring_writer w;
	struct file f;

	create(&f, path, 1, 10);
	memset((char *)f.base + f.l.custom_events_offset + 5 * RTE_NAME_SLOT_BYTES,
	       'A', RTE_NAME_SLOT_BYTES);
	rte_ring_writer_attach(&w, f.base, &f.l, 0);
	w1(&w, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_START, 1000, 1234);
	w0(&w, 1, RTE_UMSG_UNIT, 5, 1100);
}

static void one(const char *dir, const char *name, long pid, int with_start,
                uint64_t t0, uint64_t step, int n)
{
	char path[4096];
	struct rte_ring_writer w;
	struct file f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	create(&f, path, 2, 10);
	set_name(&f, 0, "step");
	rte_ring_writer_attach(&w, f.base, &f.l, 0);
	if (with_start)
		w1(&w, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_START, t0, (uint64_t)pid);
	for (int i = 1; i <= n; i++)
		w1(&w, 1, RTE_UMSG_INT, 0, t0 + (uint64_t)i * step, (uint64_t)i);
	rte_ring_writer_attach(&w, f.base, &f.l, 1);
	for (int i = 1; i <= n; i++)
		w1(&w, 1, RTE_UMSG_INT, 0, t0 + (uint64_t)i * step + 1, (uint64_t)-i);
	w0(&w, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_STOP, t0 + (uint64_t)(n + 1) * step);
}

/* Two processes of one span name whose run percentiles are neither
 * process's: pid 301 1000 spans of 1..1000 us, pid 302 10 of 5 ms. TRUTH
 * gets every duration. */
static void pct(const char *dir, const char *truth_path)
{
	static const long pids[2] = { 301, 302 };
	FILE *t = fopen(truth_path, "w");
	const char *sep = "";

	if (!t)
		die(truth_path);
	fprintf(t, "{\"app.req\":[");
	for (int k = 0; k < 2; k++) {
		char path[4096];
		struct rte_ring_writer w;
		struct file f;
		uint64_t ts = 1000000;
		unsigned n = k ? 10 : 1000;

		snprintf(path, sizeof path, "%s/%ld.events", dir, pids[k]);
		create(&f, path, 1, 16);
		set_name(&f, 0, "app.req");
		rte_ring_writer_attach(&w, f.base, &f.l, 0);
		w1(&w, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_START, ts, (uint64_t)pids[k]);
		for (unsigned i = 1; i <= n; i++) {
			uint64_t d = k ? 5000000 : (uint64_t)i * 1000;

			w0(&w, 1, RTE_UMSG_SPAN_BEGIN, 0, ts += 100);
			w0(&w, 1, RTE_UMSG_SPAN_END, 0, ts += d);
			fprintf(t, "%s%llu", sep, (unsigned long long)d);
			sep = ",";
		}
		w0(&w, 0, RTE_MSG_LIFECYCLE, RTE_LC_RING_STOP, ts + 100);
	}
	fprintf(t, "]}\n");
	fclose(t);
}

static void multi(const char *dir)
{
	/* The pre-exec file's name does not start with the pid on purpose:
	 * its pid must come from ring_start. */
	one(dir, "pre-exec-100.events", 100, 1, 1000, 10, 20);
	one(dir, "100.events", 100, 1, 1255, 10, 20);
	one(dir, "200.events", 999, 0, 1003, 7, 40);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "known"))
		known(argv[2], argv[3]);
	else if (argc >= 4 && !strcmp(argv[1], "live"))
		live(argc, argv);
	else if (argc >= 3 && !strcmp(argv[1], "corrupt"))
		corrupt(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "badname"))
		badname(argv[2]);
	else if (argc >= 4 && !strcmp(argv[1], "pct"))
		pct(argv[2], argv[3]);
	else if (argc >= 3 && !strcmp(argv[1], "multi"))
		multi(argv[2]);
	else {
		fprintf(stderr, "usage: see the comment at the top of gen_ring.c\n");
		return 2;
	}
	return 0;
}
