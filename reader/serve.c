/*
 * serve.c - rte-read --serve (a Prometheus exporter over libmicrohttpd)
 * and rte-read --push (final metrics to a Pushgateway); see serve.h.
 *
 * --serve: the main thread discovers ring files (each DIR rescanned when
 * inotify says a name came or went in it, and every RESCAN_MS anyway; each
 * FILE or PID retried until it appears) and reads them incrementally into
 * an rd_prom (metrics.h); libmicrohttpd's own thread answers GET /metrics
 * by rendering the rd_prom. One mutex serialises the two; reading takes it
 * for a bounded number of events at a time so a scrape never waits long.
 *
 * The inputs are resolved as in every mode (rd_input_resolve, inputs.h:
 * a PID in the directories of common/format/rundir.h's search, no input
 * the default directory). Discovery repeats, in small, what discover.c
 * does for --follow (files told apart by device and inode, transient open
 * errors retried), but its files go to an rd_prom, not a merge, and are
 * forgotten when they go away (forget_stale); the exit codes are
 * rte-read's (status.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inputs.h"
#include "metrics.h"
#include "pushgw.h"
#include "serve.h"
#include "serve_int.h"
#include "status.h"
#include "vec.h"

#define SCAN_MS 250        /* FILE and PID inputs, new rings of a file */
#define ALIVE_MS 1000      /* writer liveness (/proc of every writer) */
#define RESCAN_MS 5000     /* DIRs rescanned without word from inotify */
#define IDLE_MS 50         /* sleep when nothing was read */
#define BUDGET 4096        /* events per file per lock hold: a scrape waits
                              at most a few ms per 100 busy files */

/* What the main thread and libmicrohttpd's thread share. */
static struct {
	pthread_mutex_t mu;
	rd_prom *prom;
	struct file_id { dev_t dev; ino_t ino; char *path; } *ids;
	size_t nids, idcap;
	int waiting;     /* atomic: scrapes waiting for mu */
	int watch;       /* inotify of the DIR inputs, -1 if none */
	int retry;       /* a file found was not a whole ring file yet */
	volatile sig_atomic_t stop;
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .watch = -1 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- discovery ---------------------------------------------------------- */

/*
 * Files already taken (or refused) are told apart by device and inode, not
 * by name: an exec renames a followed file (same inode, new name). An entry
 * is forgotten once its name no longer holds its inode and the file is not
 * followed any more: the inode may then be reused by a new file.
 */
static struct file_id *known(const struct stat *st)
{
	for (size_t i = 0; i < S.nids; i++)
		if (S.ids[i].dev == st->st_dev && S.ids[i].ino == st->st_ino)
			return &S.ids[i];
	return NULL;
}

static int remember(const struct stat *st, const char *path)
{
	char *p = strdup(path);

	if (!p)
		return -1;
	if (RD_VEC_ROOM(S.ids, S.idcap, S.nids, 64) < 0) {
		free(p);
		return -1;
	}
	S.ids[S.nids].dev = st->st_dev;
	S.ids[S.nids].ino = st->st_ino;
	S.ids[S.nids++].path = p;
	return 0;
}

static void forget_stale(void)
{
	size_t k = 0;

	for (size_t i = 0; i < S.nids; i++) {
		struct file_id *e = &S.ids[i];
		struct stat st;

		if ((stat(e->path, &st) < 0 || st.st_dev != e->dev ||
		     st.st_ino != e->ino) &&
		    !rd_prom_follows(S.prom, e->dev, e->ino)) {
			free(e->path);
			continue;
		}
		S.ids[k++] = *e;
	}
	S.nids = k;
}

/* Take up the file at path if it is new. With `retry`, a file that is not
 * a complete ring file yet is left for the next scan. Returns 0 or an exit
 * status (after saying why unless quiet). */
static int take(const char *path, int retry, int quiet)
{
	char msg[700], *p;
	struct file_id *e;
	struct stat st;
	rte_cursor *c;
	int err;

	if (stat(path, &st) < 0) {
		if (retry && errno == ENOENT)
			return 0;
		if (!quiet)
			fprintf(stderr, "rte-read: %s: %s\n", path, strerror(errno));
		return S_NOINPUT;
	}
	if ((e = known(&st)) != NULL) {
		struct stat old;

		if (rd_prom_follows(S.prom, st.st_dev, st.st_ino)) {
			if (strcmp(e->path, path) && (p = strdup(path))) {
				free(e->path); /* renamed (exec): its name now */
				e->path = p;
			}
			return 0;
		}
		if (stat(e->path, &old) == 0 && old.st_dev == e->dev &&
		    old.st_ino == e->ino)
			return 0; /* the same file, read or refused already */
		/* Not held by us and not under its old name: the inode is a
		 * new file's now. */
		free(e->path);
		*e = S.ids[--S.nids];
	}
	err = rte_cursor_open(path, &c, msg, sizeof msg);
	if (err != RTE_OK) {
		if (retry && (err == RTE_ENOENT || err == RTE_ENOTRING ||
		              err == RTE_ETRUNCATED)) {
			S.retry = 1; /* its directory is scanned again */
			return 0;
		}
		if (!quiet)
			fprintf(stderr, "rte-read: %s\n", msg);
		rd_prom_error(S.prom);
		return remember(&st, path) < 0 ? S_NOMEM : rd_exit_of(err);
	}
	/* Remember by the cursor's own identity: the name may move. */
	if (remember(rte_cursor_stat(c), path) < 0) {
		rte_cursor_close(c);
		return S_NOMEM;
	}
	if (rd_prom_add_file(S.prom, path, c) < 0)
		return S_NOMEM;
	return 0;
}

/* Every input once (the DIRs only with `dirs`). Returns the first
 * failure's status. */
static int take_pid(const struct rd_input *in, int retry, int quiet);

static int scan(const struct rd_input *in, int n, int retry, int quiet, int dirs)
{
	int status = 0;

	for (int i = 0; i < n; i++) {
		char **list;
		size_t k;
		int e, r;

		if (in[i].kind == RD_IN_PID) {
			r = take_pid(&in[i], retry, quiet);
			status = status ? status : r;
			continue;
		}
		if (in[i].kind == RD_IN_FILE) {
			r = take(in[i].path[0], retry, quiet);
			status = status ? status : r;
			continue;
		}
		if (!dirs)
			continue;
		e = rd_list_dir(in[i].path[0], &list, &k);
		if (e < 0) {
			if (!quiet)
				fprintf(stderr, "rte-read: %s: %s\n", in[i].path[0], strerror(-e));
			status = status ? status : S_NOINPUT;
			continue;
		}
		for (size_t j = 0; j < k; j++) {
			r = take(list[j], retry, quiet);
			status = status ? status : r;
		}
		rd_free_list(list, k);
	}
	return status;
}

/* A PID input: its file in the first directory of its search that has
 * one (rd_input_resolve: the same rule as every other mode); none yet,
 * with `retry`, is looked for again at the next scan. */
static int take_pid(const struct rd_input *in, int retry, int quiet)
{
	struct stat st;

	for (unsigned j = 0; j < in->npaths; j++)
		if (stat(in->path[j], &st) == 0)
			return take(in->path[j], retry, quiet);
	if (retry)
		return 0;
	if (!quiet)
		fprintf(stderr, "rte-read: %s.events: No such file or directory "
		        "(looked in %s)\n", in->arg, in->where);
	return S_NOINPUT;
}

/* Watch the DIR inputs for names that come or go (a ring file appears
 * whole under its name: link() or rename() of a finished temporary file).
 * Without inotify (or with too many watches) S.watch stays -1 and the
 * DIRs are rescanned every SCAN_MS. */
static void watch_dirs(const struct rd_input *in, int n)
{
	const uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
	                      IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

	S.watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	for (int i = 0; S.watch >= 0 && i < n; i++)
		if (in[i].kind == RD_IN_DIR &&
		    inotify_add_watch(S.watch, in[i].path[0], mask) < 0) {
			close(S.watch);
			S.watch = -1;
		}
}

/* 1 if a watched directory may have changed since the last call: some
 * event came (which, does not matter: the rescan finds out), or the
 * watch failed. */
static int dirs_changed(void)
{
	/* aligned for struct inotify_event; its content is not read */
	uint64_t ev[512];
	ssize_t k;
	int any = 0;

	if (S.watch < 0)
		return 1;
	while ((k = read(S.watch, ev, sizeof ev)) > 0)
		any = 1;
	if (k < 0 && errno != EAGAIN && errno != EINTR) {
		close(S.watch);
		S.watch = -1;
		return 1;
	}
	return any;
}


/* ---- HTTP --------------------------------------------------------------- */

/*
 * The memory of a scrape's body, given back by libmicrohttpd once the
 * response is sent (it sends from it: no copy) and kept for the next
 * scrape: one spare, the largest, so that a scrape writes its 5 MiB into
 * pages already mapped instead of faulting in fresh ones each time.
 */
struct body {
	char *p;
	size_t cap;
};

static struct {
	pthread_mutex_t mu;
	struct body spare;
} Bodies = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void body_take(struct rd_buf *b)
{
	pthread_mutex_lock(&Bodies.mu);
	b->p = Bodies.spare.p;
	b->cap = Bodies.spare.cap;
	Bodies.spare.p = NULL;
	Bodies.spare.cap = 0;
	pthread_mutex_unlock(&Bodies.mu);
	b->n = 0;
}

/* libmicrohttpd's free callback of a response: cls is a struct body. */
static void body_give(void *cls)
{
	struct body *x = cls;

	pthread_mutex_lock(&Bodies.mu);
	if (x->cap > Bodies.spare.cap) {
		struct body t = Bodies.spare;

		Bodies.spare = *x;
		*x = t;
	}
	pthread_mutex_unlock(&Bodies.mu);
	free(x->p);
	free(x);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code,
                             const char *text, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, "Allow", allow);
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static int wants_openmetrics(struct MHD_Connection *conn)
{
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");

	return a && strstr(a, "application/openmetrics-text") != NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
	struct rd_buf b = { 0 };
	struct MHD_Response *r;
	struct body *x;
	enum MHD_Result ret;
	uint64_t t0;
	int om, rc;

	(void)cls;
	(void)version;
	(void)upload;
	(void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		*upload_size = 0;
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
		             "only GET /metrics\n", "GET, HEAD");
	}
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n", NULL);
	om = wants_openmetrics(conn);
	body_take(&b);
	t0 = now_ns();
	/* Relaxed: only a hint to the reader (let_scrape_in); mu orders
	 * the rest. */
	__atomic_add_fetch(&S.waiting, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&S.mu);
	__atomic_sub_fetch(&S.waiting, 1, __ATOMIC_RELAXED);
	/* Only a GET delivers final values (HEAD gets no body). */
	rc = rd_prom_render(S.prom, &b, om, !strcmp(method, "GET"));
	rd_prom_scrape_took(S.prom, now_ns() - t0);
	pthread_mutex_unlock(&S.mu);
	if (rc < 0) {
		free(b.p);
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	if (!(x = malloc(sizeof *x))) {
		free(b.p);
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	x->p = b.p;
	x->cap = b.cap;
	r = MHD_create_response_from_buffer_with_free_callback_cls(b.n, b.p,
	                                                           body_give, x);
	if (!r) {
		free(b.p);
		free(x);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type",
	                        om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
	                           : "text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- modes -------------------------------------------------------------- */

/* Between two files of a poll (rd_prom_between): a scrape waiting for
 * the lock gets it now, not after the whole poll (100 busy files: some
 * ms). The mutex is not fair (this thread would take it back at once),
 * so the reader yields until the scrape has it. */
static void let_scrape_in(void *ud)
{
	(void)ud;
	if (!__atomic_load_n(&S.waiting, __ATOMIC_RELAXED))
		return;
	pthread_mutex_unlock(&S.mu);
	while (__atomic_load_n(&S.waiting, __ATOMIC_RELAXED) && !S.stop)
		sched_yield();
	pthread_mutex_lock(&S.mu);
}

static void on_stop(int sig)
{
	(void)sig;
	S.stop = 1;
}

static void setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rd_prom_catch_sigbus();
}

static int serve(const struct sopts *o, const struct rd_input *in, int nin)
{
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	uint64_t last_scan = 0, last_alive = 0, last_full = 0;
	char host[INET6_ADDRSTRLEN];
	int v6;

	for (int i = 0; i < nin; i++) {
		struct stat st;

		/* A PID's file may appear later; DIRs and FILEs must exist. */
		if (in[i].kind != RD_IN_PID && stat(in[i].path[0], &st) < 0) {
			fprintf(stderr, "rte-read: %s: %s\n", in[i].path[0], strerror(errno));
			return S_NOINPUT;
		}
	}
	if (rd_serve_parse_addr(o->serve, &ss, &v6) < 0)
		return rd_serve_usage_error("--serve: want [ADDR:]PORT, ADDR an IP address", o->serve);
	d = MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD | (v6 ? MHD_USE_IPv6 : 0),
	                     0, NULL, NULL, on_request, NULL,
	                     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
	                     MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
	                     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)16,
	                     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "rte-read: --serve %s: cannot listen there (in use?)\n",
		        o->serve);
		return S_OUTPUT;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	inet_ntop(ss.ss_family,
	          v6 ? (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
	             : (void *)&((struct sockaddr_in *)&ss)->sin_addr,
	          host, sizeof host);
	/* The port as bound (PORT 0 asks for a free one): tests read it. */
	fprintf(stderr, "rte-read: serving http://%s%s%s:%u/metrics\n",
	        v6 ? "[" : "", host, v6 ? "]" : "", info ? info->port : 0);
	watch_dirs(in, nin);
	rd_prom_between(S.prom, let_scrape_in, NULL);
	while (!S.stop) {
		uint64_t t = now_ns() / 1000000u;
		int check = t - last_scan >= SCAN_MS, more, what = 0;

		pthread_mutex_lock(&S.mu);
		rd_prom_collect(S.prom);
		if (check) {
			int dirs = S.retry || t - last_full >= RESCAN_MS || dirs_changed();

			if (dirs) {
				S.retry = 0;
				forget_stale();
				last_full = t;
			}
			scan(in, nin, 1, 1, dirs);
			last_scan = t;
			what = RD_PROM_RINGS;
			if (t - last_alive >= ALIVE_MS) {
				what |= RD_PROM_ALIVE;
				last_alive = t;
			}
		}
		more = rd_prom_poll(S.prom, BUDGET, what, 0);
		pthread_mutex_unlock(&S.mu);
		if (!more)
			rd_sleep_ms(IDLE_MS);
	}
	MHD_stop_daemon(d);
	if (S.watch >= 0)
		close(S.watch);
	free(Bodies.spare.p);
	return S_OK;
}

static int push(const struct sopts *o, const struct rd_input *in, int nin)
{
	struct rd_buf b = { 0 };
	char err[600], host[256] = "";
	const char *instance = o->instance;
	int status = scan(in, nin, 0, 0, 1);

	if (!instance) {
		if (gethostname(host, sizeof host - 1) < 0 || !host[0])
			snprintf(host, sizeof host, "localhost");
		instance = host;
	}
	if (status)
		return status;
	while (rd_prom_poll(S.prom, 0, 0, 1))
		;
	if (rd_prom_render(S.prom, &b, 0, 0) < 0) {
		free(b.p);
		fprintf(stderr, "rte-read: out of memory\n");
		return S_NOMEM;
	}
	if (rd_push(o->push, o->job, instance, o->labels, o->nlabels,
	            b.p ? b.p : "", b.n, o->timeout_s, err, sizeof err) < 0) {
		fprintf(stderr, "rte-read: --push %s\n", err);
		status = S_OUTPUT;
	}
	free(b.p);
	return status;
}

int rd_serve_main(int argc, char **argv)
{
	struct sopts o;
	struct rd_input *in;
	int rc, nin = 0;

	memset(&o, 0, sizeof o);
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(rd_serve_usage, stdout);
			return fflush(stdout) ? S_OUTPUT : S_OK;
		}
	rc = rd_serve_parse(argc, argv, &o);
	if (rc) {
		free(o.labels);
		return rc;
	}
	o.po.exporter = o.serve != NULL;
	in = rd_serve_resolve(&o, &nin);
	S.prom = rd_prom_new(&o.po);
	if (!in || !S.prom) {
		fprintf(stderr, "rte-read: out of memory\n");
		rc = S_NOMEM;
	} else {
		setup_signals();
		rc = o.serve ? serve(&o, in, nin) : push(&o, in, nin);
	}
	rd_prom_free(S.prom);
	rd_serve_free_inputs(in, nin);
	for (size_t i = 0; i < S.nids; i++)
		free(S.ids[i].path);
	free(S.ids);
	free(o.labels);
	return rc;
}
