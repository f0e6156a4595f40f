/*
 * follow.c - the reading side of the stress test, with exact accounting.
 *
 *   follow THREADS EVENTS WRITER [noloss]
 *
 * Starts WRITER THREADS EVENTS (tests/stress/writer.c) with LD_PRELOAD set
 * to $RTE_STRESS_PRELOAD (this process is not traced; the tracing
 * variables of the environment reach the writer), waits for its ring file
 * in $OCAML_RUNTIME_EVENTS_DIR, lets it go and follows every ring with
 * rte_cursor_next() while it writes, then drains what is left after it
 * exited (the file must be preserved).
 *
 * Each writer thread's ring holds, in this order: domain_spawn,
 * rte.thread.tid, rte.thread.name (its inherited comm), EVENTS ints, and
 * domain_terminate, plus padding where a message would straddle the end.
 * Replaying that sequence gives every message's exact word position, so
 * each delivered event must be the message at the reader's position
 * (right kind, name, thread and sequence number: nothing torn, duplicated
 * or reordered), and each lost span must end exactly on a message
 * boundary; the messages it covers are the events lost. At the end each
 * ring must be accounted for up to its tail word, and for every thread
 * written = delivered + lost; with "noloss" (rings big enough for every
 * event) nothing may be lost at all. Prints the totals; exit 0 if all holds,
 * 1 if not (every failure printed), 2 on a setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rte/consumer.h"

#define MAX_THREADS 64
#define MAX_FAILS 20
#define DEADLINE_S 100

struct ring_model {
	uint64_t pos;        /* word counter of the next message */
	uint64_t idx;        /* index of the next message in the sequence */
	uint64_t last_ts;
	int owner;           /* writer thread, -1 until an event says */
	int used;
	uint64_t delivered;  /* numbered events delivered */
	uint64_t lost;       /* numbered events inside lost spans */
	uint64_t lost_other; /* other messages inside lost spans */
	uint64_t lost_words, lost_pad, spans;
};

static struct {
	long threads, events;
	pid_t pid;
	char comm[17];
	size_t comm_len;
	uint64_t size;       /* ring size in words */
	unsigned nrings;
	struct ring_model *m;
	int saw_start, saw_stop, fails, noloss;
	long written[MAX_THREADS];
	int owned[MAX_THREADS];
} g;

static void fail(const char *f, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *f, ...)
{
	va_list ap;

	if (++g.fails > MAX_FAILS)
		return;
	fputs("follow: FAIL ", stdout);
	va_start(ap, f);
	vprintf(f, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- the model of a writer thread's ring --------------------------------- */

/* Words of message `idx` of a writer ring, 0 past the end. */
static unsigned msg_len(uint64_t idx)
{
	uint64_t n = (uint64_t)g.events;

	if (idx == 2)
		return 2 + (unsigned)rte_custom_words(g.comm_len);
	return idx <= 3 + n ? 3 : 0;
}

/* Padding words the writer puts before a message of `len` words at `pos`. */
static uint64_t pad_before(uint64_t pos, unsigned len)
{
	uint64_t idx = pos & (g.size - 1);

	return idx + len > g.size ? g.size - idx : 0;
}

static int is_user(const struct rte_event *ev, enum rte_event_kind k,
                   const char *name)
{
	return ev->kind == k && ev->name && strcmp(ev->name, name) == 0;
}

static int is_lifecycle(const struct rte_event *ev, unsigned id)
{
	return ev->kind == RTE_EV_LIFECYCLE && ev->id == id;
}

/* Is `ev` the numbered event `seq` of the ring's thread? Learns the owner. */
static int numbered_ok(struct ring_model *m, const struct rte_event *ev,
                       uint64_t seq)
{
	char want[32];
	int t;

	if (ev->kind != RTE_EV_USER_INT)
		return 0;
	t = (int)((uint64_t)ev->u.value >> 40);
	if (m->owner < 0) {
		if (t < 0 || t >= g.threads || g.owned[t]++)
			return 0;
		m->owner = t;
	}
	snprintf(want, sizeof want, "stress.t%02d", m->owner);
	return t == m->owner && is_user(ev, RTE_EV_USER_INT, want) &&
	       ((uint64_t)ev->u.value & (((uint64_t)1 << 40) - 1)) == seq;
}

/* Is `ev` message `idx` of a writer ring? */
static int matches(struct ring_model *m, const struct rte_event *ev,
                   uint64_t idx)
{
	uint64_t n = (uint64_t)g.events;

	switch (idx) {
	case 0:
		return is_lifecycle(ev, RTE_LC_DOMAIN_SPAWN) && ev->u.data == g.pid;
	case 1:
		return is_user(ev, RTE_EV_USER_INT, "rte.thread.tid") && ev->u.value > 0;
	case 2:
		return is_user(ev, RTE_EV_USER_CUSTOM, "rte.thread.name") &&
		       ev->u.custom.len == g.comm_len &&
		       memcmp(ev->u.custom.bytes, g.comm, g.comm_len) == 0;
	default:
		if (idx == 3 + n)
			return is_lifecycle(ev, RTE_LC_DOMAIN_TERMINATE);
		return numbered_ok(m, ev, idx - 3);
	}
}

static void describe(const struct rte_event *ev, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s value %lld", rte_event_kind_name(ev->kind),
	         ev->name ? ev->name : "-", (long long)ev->u.value);
}

static void on_delivered(unsigned r, struct ring_model *m,
                         const struct rte_event *ev)
{
	unsigned len = msg_len(m->idx);
	char what[256];

	if (ev->ts < m->last_ts)
		fail("ring %u: timestamp went back from %llu to %llu", r,
		     (unsigned long long)m->last_ts, (unsigned long long)ev->ts);
	m->last_ts = ev->ts;
	if (len == 0 || !matches(m, ev, m->idx)) {
		describe(ev, what, sizeof what);
		fail("ring %u: word %llu: got %s, expected message %llu of the "
		     "sequence (torn, duplicated, reordered or extra)", r,
		     (unsigned long long)m->pos, what, (unsigned long long)m->idx);
		return;
	}
	m->pos += pad_before(m->pos, len) + len;
	if (m->idx >= 3 && m->idx < 3 + (uint64_t)g.events)
		m->delivered++;
	m->idx++;
}

/* Walk the model over `words` lost words from its position; returns 1 if
 * the span ends exactly on a message (or padding) boundary. */
static int walk_lost(struct ring_model *m, uint64_t words)
{
	uint64_t target = m->pos + words;

	while (m->pos < target) {
		unsigned len = msg_len(m->idx);
		uint64_t pad = len ? pad_before(m->pos, len) : 0;

		if (len == 0)
			break;
		if (pad) {
			m->pos += pad;
			m->lost_pad += pad;
			continue;
		}
		if (m->idx >= 3 && m->idx < 3 + (uint64_t)g.events)
			m->lost++;
		else
			m->lost_other++;
		m->pos += len;
		m->idx++;
	}
	return m->pos == target;
}

/*
 * A lost span of `words` words. When the reader stands at padding, it may
 * or may not have skipped the padding before it found the next message
 * overwritten (it skips padding without reporting it): the span then
 * starts after the padding. Message boundaries are at least 3 words apart
 * and padding is 1 or 2 words, so at most one reading ends on a boundary.
 */
static void on_lost(unsigned r, struct ring_model *m, uint64_t words)
{
	struct ring_model as_is, skipped;
	unsigned len = msg_len(m->idx);
	uint64_t pad = len ? pad_before(m->pos, len) : 0;

	m->spans++;
	m->lost_words += words;
	as_is = skipped = *m;
	if (walk_lost(&as_is, words)) {
		*m = as_is;
		return;
	}
	skipped.pos += pad;
	if (pad && walk_lost(&skipped, words)) {
		*m = skipped;
		return;
	}
	fail("ring %u: a lost span of %llu words from word %llu ends inside "
	     "a message (the next boundary is word %llu)", r,
	     (unsigned long long)words, (unsigned long long)m->pos,
	     (unsigned long long)as_is.pos);
	*m = as_is;
}

/* Ring 0 is the main thread's: ring_start first, ring_stop last, no loss. */
static void on_ring0(const struct rte_event *ev)
{
	if (g.saw_stop)
		fail("ring 0: an event after ring_stop");
	if (!g.saw_start && !(is_lifecycle(ev, RTE_LC_RING_START) &&
	                      ev->u.data == g.pid))
		fail("ring 0: the first event is not ring_start(%ld)", (long)g.pid);
	if (ev->kind == RTE_EV_LOST)
		fail("ring 0: %llu words lost", (unsigned long long)ev->u.lost_words);
	if (is_user(ev, RTE_EV_USER_INT, "rte.dropped"))
		fail("ring 0: rte.dropped = %lld", (long long)ev->u.value);
	g.saw_start = 1;
	g.saw_stop |= is_lifecycle(ev, RTE_LC_RING_STOP);
}

/* ---- following ------------------------------------------------------------ */

/* Read every ring until each has nothing new. Returns events read, -1 on
 * a ring error. */
static long drain(rte_cursor *c)
{
	struct rte_event ev;
	long n = 0;
	int got;

	for (unsigned r = 0; r < g.nrings; r++) {
		struct ring_model *m = &g.m[r];

		while ((got = rte_cursor_next(c, r, &ev)) == 1) {
			n++;
			m->used = 1;
			if (r == 0)
				on_ring0(&ev);
			else if (ev.kind == RTE_EV_LOST)
				on_lost(r, m, ev.u.lost_words);
			else
				on_delivered(r, m, &ev);
		}
		if (got < 0) {
			fail("%s", rte_cursor_errmsg(c));
			return -1;
		}
	}
	return n;
}

static pid_t spawn(const char *writer, int *go_fd, int *out_fd)
{
	int in[2], out[2];
	char tn[32], en[32];
	const char *pre = getenv("RTE_STRESS_PRELOAD");
	pid_t pid;

	snprintf(tn, sizeof tn, "%ld", g.threads);
	snprintf(en, sizeof en, "%ld", g.events);
	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		if (pre)
			setenv("LD_PRELOAD", pre, 1);
		execl(writer, writer, tn, en, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*go_fd = in[1];
	*out_fd = out[0];
	return pid;
}

/* Wait for the writer's file: it must never be seen half made. */
static rte_cursor *await_file(void)
{
	const char *dir = getenv("OCAML_RUNTIME_EVENTS_DIR");
	char path[4096], err[600];
	rte_cursor *c = NULL;

	snprintf(path, sizeof path, "%s/%ld.events", dir ? dir : ".", (long)g.pid);
	for (int i = 0; i < 30000; i++) {
		int r = rte_cursor_open(path, &c, err, sizeof err);

		if (r == RTE_OK)
			return c;
		if (r != RTE_ENOENT) {
			fail("opening the new file: %s", err);
			return NULL;
		}
		usleep(1000);
	}
	fail("%s did not appear within 30 s", path);
	return NULL;
}

static int follow(rte_cursor *c)
{
	time_t end = time(NULL) + DEADLINE_S;
	int st = 0;

	for (;;) {
		/* Sampled before the drain: a drain that starts after the
		 * writer exited sees everything it wrote. */
		int exited = waitpid(g.pid, &st, WNOHANG) == g.pid;
		long n = drain(c);

		if (n < 0 || exited)
			break;
		if (time(NULL) > end) {
			fail("the writer did not finish within %d s", DEADLINE_S);
			kill(g.pid, SIGKILL);
			waitpid(g.pid, &st, 0);
			return -1;
		}
		if (n == 0)
			sched_yield();
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("the writer ended with status 0x%x", st);
	return 0;
}

/* ---- the final accounting -------------------------------------------------- */

static void read_report(int fd)
{
	FILE *f = fdopen(fd, "r");
	char line[256];
	long t, n;

	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "thread %ld written %ld", &t, &n) == 2 &&
		    t >= 0 && t < g.threads)
			g.written[t] = n;
		else if (strncmp(line, "comm ", 5) == 0 &&
		         strcspn(line + 5, "\n") != g.comm_len)
			fail("the writer's comm is %s", line + 5);
	}
	fclose(f);
}

static uint64_t ring_tail(const char *path, const struct rte_layout *l,
                          unsigned r)
{
	uint64_t tail = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || pread(fd, &tail, 8, (off_t)(l->headers_offset +
	                                          r * l->ring_header_size_bytes + 8)) != 8)
		fail("cannot read the tail of ring %u", r);
	if (fd >= 0)
		close(fd);
	return tail;
}

static void account(rte_cursor *c)
{
	const struct rte_layout *l = rte_cursor_layout(c);
	uint64_t wr = 0, del = 0, lost = 0, other = 0, words = 0, pad = 0, spans = 0;
	unsigned used = 0;

	for (unsigned r = 1; r < g.nrings; r++) {
		struct ring_model *m = &g.m[r];
		uint64_t tail = ring_tail(rte_cursor_path(c), l, r);

		if (!m->used)
			continue;
		used++;
		if (m->idx != 4 + (uint64_t)g.events || m->pos != tail)
			fail("ring %u: accounted up to message %llu, word %llu; the "
			     "ring has %llu messages up to tail word %llu", r,
			     (unsigned long long)m->idx, (unsigned long long)m->pos,
			     (unsigned long long)(4 + g.events), (unsigned long long)tail);
		if (m->owner >= 0 && m->delivered + m->lost != (uint64_t)g.written[m->owner])
			fail("ring %u (thread %d): written %ld != delivered %llu + lost %llu",
			     r, m->owner, g.written[m->owner],
			     (unsigned long long)m->delivered, (unsigned long long)m->lost);
		del += m->delivered, lost += m->lost, other += m->lost_other;
		words += m->lost_words, pad += m->lost_pad, spans += m->spans;
	}
	for (long t = 0; t < g.threads; t++)
		wr += (uint64_t)g.written[t];
	if (used != (unsigned)g.threads)
		fail("%u writer rings used, expected %ld", used, g.threads);
	if (!g.saw_stop)
		fail("ring 0 has no ring_stop");
	if (g.noloss && words)
		fail("%llu words lost from rings that hold every event",
		     (unsigned long long)words);
	if (wr != del + lost)
		fail("written %llu != delivered %llu + lost %llu",
		     (unsigned long long)wr, (unsigned long long)del,
		     (unsigned long long)lost);
	printf("stress: %ld threads, ring of %llu words: written %llu, delivered "
	       "%llu, lost %llu (%llu lost words in %llu spans = 3 x %llu "
	       "numbered + %llu words of %llu other messages + %llu padding)\n",
	       g.threads, (unsigned long long)g.size, (unsigned long long)wr,
	       (unsigned long long)del, (unsigned long long)lost,
	       (unsigned long long)words, (unsigned long long)spans,
	       (unsigned long long)lost,
	       (unsigned long long)(words - 3 * lost - pad),
	       (unsigned long long)other, (unsigned long long)pad);
}

static void comm_of(const char *writer)
{
	const char *b = strrchr(writer, '/');

	snprintf(g.comm, sizeof g.comm, "%.15s", b ? b + 1 : writer);
	g.comm_len = strlen(g.comm);
}

int main(int argc, char **argv)
{
	rte_cursor *c;
	int go, out;

	g.noloss = argc == 5 && strcmp(argv[4], "noloss") == 0;
	if (argc != 4 + g.noloss || (g.threads = atol(argv[1])) < 1 ||
	    g.threads > MAX_THREADS || (g.events = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: follow THREADS(1..%d) EVENTS WRITER [noloss]\n",
		        MAX_THREADS);
		return 2;
	}
	comm_of(argv[3]);
	g.pid = spawn(argv[3], &go, &out);
	if (g.pid < 0) {
		perror("follow: cannot start the writer");
		return 2;
	}
	c = await_file();
	if (c) {
		g.nrings = rte_cursor_rings(c);
		g.size = rte_cursor_layout(c)->ring_size_elements;
		g.m = calloc(g.nrings, sizeof *g.m);
		for (unsigned r = 0; g.m && r < g.nrings; r++)
			g.m[r].owner = -1;
	}
	if (write(go, "g", 1) < 0 || !c || !g.m) {
		kill(g.pid, SIGKILL);
		waitpid(g.pid, NULL, 0);
		return 2;
	}
	close(go);
	if (follow(c) == 0) {
		read_report(out);
		account(c);
	}
	rte_cursor_close(c);
	free(g.m);
	if (g.fails)
		printf("follow: %d failure(s)\n", g.fails);
	return g.fails ? 1 : 0;
}
