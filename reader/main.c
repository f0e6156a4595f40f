/*
 * main.c - rte-read: command line, inputs, the read loop, exit codes.
 *
 * The work is done elsewhere: merge.c merges the rings into one timeline
 * over the consumer library, procs.c annotates each event, filter.c picks
 * events, fmt_*.c write them. This file wires them together, follows live
 * processes and turns every failure into one line on stderr and a
 * documented exit code.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clean.h"
#include "crash.h"
#include "diff.h"
#include "inputs.h"
#include "merge.h"
#include "ocamlver.h"
#include "profile.h"
#include "rundir.h"
#include "serve.h"
#include "sinks.h"
#include "top.h"

/* Exit codes: documented in --help, rte-read(1) and README.md. */
enum {
	EX_OK = 0,
	EX_USAGE = 1,     /* bad option or argument */
	EX_NOINPUT = 2,   /* not found, cannot be opened, no ring files, --wait timed out */
	EX_BADFILE = 3,   /* not a ring file, bad header, truncated (also under us) */
	EX_CORRUPT = 4,   /* a ring's message stream is corrupt */
	EX_OUTPUT = 5,    /* cannot write the output */
	EX_KILLED = 6,    /* --follow: the process ended without ring_stop */
	EX_NOMEM = 7,     /* out of memory */
};

#define IDLE_MIN_MS 1
#define IDLE_MAX_MS 10
#define WAIT_POLL_MS 20
#define DIR_RESCAN_MS 100
#define EXEC_GRACE_MS 1000 /* after ring_stop, a live process may exec */

static const char usage_text[] =
"Usage: rte-read [OPTIONS] INPUT...\n"
"       rte-read diff [--fail-if EXPR]... [--format=json] BASE NEW\n"
"         (compare two runs; rte-read diff --help)\n"
"Read OCaml 5.2 runtime-events ring files (written by OCaml 5.2 or by\n"
"librte.so) and print their events as one timeline.\n"
"\n"
"INPUT is one of:\n"
"  PID            PID.events in -d DIR; else the first of\n"
"                 $OCAML_RUNTIME_EVENTS_DIR, librte.so's default directory\n"
"                 ($XDG_RUNTIME_DIR/rte, else /tmp/rte-UID) and the current\n"
"                 directory (OCaml's default) that has it\n"
"  FILE           a ring file (e.g. 1234.events, 1234.exec1.events)\n"
"  DIR            every *.events file in DIR: a process, its forked children\n"
"                 and its pre-exec files, merged by timestamp\n"
"Several inputs are merged into one timeline; each event carries its pid\n"
"(from the file's ring_start, else the leading digits of its name). A file\n"
"named twice is read once; devices and FIFOs are never opened (in a DIR:\n"
"skipped with a warning).\n"
"\n"
"Options:\n"
"  -f, --format=FMT     text (default), jsonl, chrome, summary, summary-json,\n"
"                       gc-stats, gc-stats-json, folded, pprof, flamegraph\n"
"  -o, --output=FILE    write to FILE instead of standard output (never an\n"
"                       input or a file in an input directory: exit 2)\n"
"  -d, --dir=DIR        directory of PID inputs\n"
"  -F, --follow         keep reading live processes until their ring_stop or\n"
"                       until they are gone (then say so, exit 6); with a DIR,\n"
"                       also pick up files that appear in it; Ctrl-C ends\n"
"                       cleanly\n"
"  -w, --wait [SECS]    wait for inputs that do not exist yet (forever, or at\n"
"                       most SECS seconds; SECS may be the next argument if\n"
"                       more follow); not for a path that is not a regular\n"
"                       file; SIGINT/SIGTERM while waiting: said, then dies\n"
"                       by the signal\n"
"  -k, --kind=LIST      only these kinds (comma-separated, repeatable): begin,\n"
"                       end, phase, counter, alloc, lifecycle, lost, user_unit,\n"
"                       user_int, user_span, user_custom, runtime, user\n"
"  -n, --name=GLOB      only events whose name matches GLOB (repeatable)\n"
"  -x, --exclude-name=GLOB  drop events whose name matches GLOB (repeatable)\n"
"                       (lost words pass name filters; use --kind to drop them)\n"
"      --since=WHEN     only events at or after WHEN: a duration after the\n"
"                       trace start (1.5s, 200ms, 30us, 10ns; no unit: s) or\n"
"                       @NS (absolute, the files' CLOCK_MONOTONIC ns)\n"
"      --until=WHEN     only events at or before WHEN (the same forms)\n"
"      --pid=PID        only process PID (repeatable)\n"
"      --thread=NAME|TID  only the thread of kernel tid TID, or whose name\n"
"                       matches the glob NAME (repeatable)\n"
"                       (these filters apply to every format)\n"
"      --wall-clock     text: wall-clock time (UTC) instead of time since\n"
"                       the trace start (right for files of this boot)\n"
"      --all            chrome: also the shim's bookkeeping events\n"
"                       (rte.thread.*, rte.module*, rte.exec_failed)\n"
"      --top=N          print the N longest runtime phases (GC pauses...)\n"
"                       and user spans instead: duration, start (as in text\n"
"                       and chrome), pid, tid, thread; with -f json as JSON\n"
"      --ocaml-version=5.x  name runtime phases and counters as OCaml 5.x\n"
"                       does (5.0, 5.1, 5.2, 5.3, 5.4dev); default: chosen\n"
"                       per file from its phase nesting (gc-stats and\n"
"                       summary say which, and how sure)\n"
"      --profile=WHICH  what folded, pprof and flamegraph write: cpu\n"
"                       (rte.sample), alloc (every sampled allocation) or\n"
"                       inuse (those still live at the end); default: cpu\n"
"                       if there are CPU samples, else alloc\n"
"      --span=NAME      profiles (those formats and the summary's profile\n"
"                       sections) keep only samples taken inside the user\n"
"                       span or runtime phase NAME\n"
"      --by-thread      folded and flamegraph: each thread its own root\n"
"  -h, --help           this help\n"
"      --clean [DIR]    remove what killed processes left in DIR (default:\n"
"                       -d DIR, else $OCAML_RUNTIME_EVENTS_DIR, else librte.so's\n"
"                       default directory): ring\n"
"                       files without ring_stop whose writer is gone, and the\n"
"                       shim's .PID.events.exec and .PID.*.events.tmp of\n"
"                       processes that are gone; one line per file removed.\n"
"                       Never a live writer's file, a finished (ring_stop)\n"
"                       one, or a name that is not a ring file's\n"
"      --dry-run        with --clean: only list what would be removed\n"
"      --serve [ADDR:]PORT  serve Prometheus metrics of the processes of\n"
"                       DIRs (on 127.0.0.1 unless ADDR is given)\n"
"      --push URL       send the metrics of finished runs to a Pushgateway\n"
"                       (both: 'rte-read --serve --help', doc/METRICS.md)\n"
"\n"
"Formats:\n"
"  text          aligned lines: time since the trace start (every process\n"
"                on one time base), delta since the previous line, pid,\n"
"                ring, thread name, kind, name, value (ends: duration)\n"
"  jsonl         one JSON object a line (stable schema, plus \"pid\")\n"
"  chrome        Chrome Trace Event JSON for Perfetto / chrome://tracing:\n"
"                a track per thread (tid), processes named by executable,\n"
"                fork and exec as flow arrows, counters as counter tracks\n"
"  summary       per process: wall time, rings, phase and span statistics\n"
"                (count, total, mean, p50, p90, p99, p99.9, max, unfinished;\n"
"                user spans matched by name), counters and ints (last =\n"
"                latest in time across rings), lifecycle, lost words\n"
"  summary-json  the summary as one JSON document\n"
"  gc-stats      per process, OCaml GC statistics as olly gc-stats gives\n"
"                them: wall, CPU (domain lifetimes) and GC time, GC % of\n"
"                CPU per domain, waits, collections, allocated words, pause\n"
"                percentiles; >= marks lower bounds (lost words); see\n"
"                doc/GC-STATS.md\n"
"  gc-stats-json the same as one JSON document\n"
"  folded        profile stacks collapsed, \"root;...;leaf VALUE\" a line\n"
"                (flamegraph.pl, speedscope); VALUE: samples, or estimated\n"
"                bytes for --profile=alloc|inuse\n"
"  pprof         gzipped profile.proto for go tool pprof: samples/count +\n"
"                cpu/nanoseconds, or alloc_objects, alloc_space,\n"
"                inuse_objects, inuse_space (write it with -o FILE)\n"
"  flamegraph    one self-contained SVG: open it in a browser (click a\n"
"                frame to zoom, Search); see doc/PROFILING.md\n"
"\n"
"Exit status:\n"
"  0  success (also when the reader of a pipe goes away)\n"
"  1  usage error\n"
"  2  input not found or cannot be opened, directory without ring files,\n"
"     --wait timed out, -o names an input\n"
"  3  not a ring file, bad header, or truncated (also while being read)\n"
"  4  corrupt message stream in a ring (the other rings are still read)\n"
"  5  cannot write the output\n"
"  6  --follow: a process ended without ring_stop (killed?)\n"
"     (text and summary say so too, but exit 0)\n"
"  7  out of memory\n"
"  128+N  killed by signal N while --wait waited for an input\n"
"With several inputs, the first failure's status is returned and the\n"
"readable inputs are still read. --clean exits 0, 1, 2 (DIR cannot be read,\n"
"a file cannot be removed) or 5.\n";

struct opts {
	const char *format, *output, *dir;
	const char *prof_span;         /* --span */
	int prof_which, prof_by_thread; /* --profile, --by-thread */
	int follow, wait;
	int clean, dry_run; /* --clean [--dry-run] */
	double wait_secs; /* < 0: forever */
	char **inputs;
	int ninputs;
	unsigned top;     /* --top N (reader/top.c), 0: not asked */
};

/* Everything the loop and the signal handlers share. */
static struct {
	struct opts o;
	rte_merge *merge;
	struct rd_procs procs;
	struct rd_filter filter;
	struct rd_out out;
	struct rd_sink *sink;
	struct rd_ctx ctx;
	struct rd_crash *crash;   /* NULL for jsonl */
	rte_merge *merge2;        /* the crash report's second pass */
	struct rd_procs procs2;
	rte_merge *volatile reading; /* the merge being read, for SIGBUS */
	int status;
	uint64_t last_stop_ms; /* --follow: when a source last ended */
	char **dirs;        /* DIR inputs, rescanned with --follow */
	size_t ndirs;
	char **paths;       /* every path added, owned here */
	size_t npaths, pathcap;
	/* Every file seen, an open-addressing hash set (idcap a power of two,
	 * at most half full; an empty slot has ino 0): a directory of
	 * 100,000 files is not checked in quadratic time. */
	struct file_id { dev_t dev; ino_t ino; } *ids;
	size_t nids, idcap;
	const char *volatile peek_path; /* file being peeked, for SIGBUS */
	volatile sig_atomic_t stop; /* the signal that asked us to stop */
	int unordered;            /* a summary: ring after ring, in runs */
} g;

/* ---- messages and status ------------------------------------------------ */

static void set_status(int code)
{
	if (!g.status)
		g.status = code;
}

static void fail_line(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail_line(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("rte-read: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	set_status(code);
}

static int exit_of(int err)
{
	switch (err) {
	case RTE_ENOENT:
	case RTE_EIO:
	case RTE_EINVAL:
		return EX_NOINPUT;
	case RTE_ENOTRING:
	case RTE_EHEADER:
	case RTE_ETRUNCATED:
		return EX_BADFILE;
	case RTE_ECORRUPT:
	case RTE_ENAME:
		return EX_CORRUPT;
	case RTE_ENOMEM:
		return EX_NOMEM;
	default:
		return EX_BADFILE;
	}
}

/* ---- signals ---------------------------------------------------------- */

static void put_err(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

/* The kernel's answer to touching a page of a mapped file that was cut
 * short: say which file and leave with the "bad file" status. */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	const char *path = g.peek_path;

	(void)sig;
	(void)si;
	(void)uc;
	if (!path && g.reading) {
		int s = rte_merge_current(g.reading);

		if (s >= 0)
			path = rte_cursor_path(rte_merge_cursor(g.reading, (unsigned)s));
	}
	rd_out_flush_raw(&g.out);
	put_err("rte-read: ");
	put_err(path ? path : "(ring file)");
	put_err(": file was truncated while being read (SIGBUS)\n");
	_exit(EX_BADFILE);
}

static void on_stop(int sig)
{
	g.stop = sig;
}

/* --wait was ended by a signal before its input appeared: say so and end
 * by the same signal, as a shell expects of an interrupted command. */
static void die_of_stop(const char *what)
{
	int sig = (int)g.stop;

	fprintf(stderr, "rte-read: %s: interrupted by signal %d (%s) while waiting for it\n",
	        what, sig, strsignal(sig));
	fflush(NULL);
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

static void setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL); /* EPIPE from write() instead */
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
	if (g.o.follow || g.o.wait) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_stop;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
}

/* ---- options -------------------------------------------------------------- */

/* One line, one program name: "rte-read: <why> (try 'rte-read --help')". */
static int usage_error(const char *fmt, const char *arg)
{
	fputs("rte-read: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (try 'rte-read --help')\n", stderr);
	return EX_USAGE;
}

/* 1 if s is a number of seconds (what --wait takes). */
static int is_secs(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	return !errno && end != s && !*end && v >= 0;
}

/* getopt_long's complaint, as our one line (opterr is 0). */
static int bad_option(int c, char **argv)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, 0 };

	if (optopt && (arg[0] != '-' || arg[1] != '-'))
		arg = shortopt; /* a short option, maybe inside "-Fx" */
	if (c == ':')
		return usage_error("option '%s' needs a value", arg);
	return usage_error("unrecognized option '%s'", arg);
}

static int parse_wait(const char *arg)
{
	char *end;

	g.o.wait = 1;
	g.o.wait_secs = -1;
	if (!arg)
		return 0;
	errno = 0;
	g.o.wait_secs = strtod(arg, &end);
	if (errno || end == arg || *end || g.o.wait_secs < 0)
		return usage_error("--wait: '%s' is not a number of seconds", arg);
	return 0;
}

/* The navigation options (--since, --until, --pid, --thread,
 * --wall-clock, --all, --top) into g.filter and g.o.top. */
static int parse_nav(int c, const char *arg)
{
	char *end;
	unsigned long n;

	switch (c) {
	case 'S':
	case 'U':
		if (rd_filter_parse_when(arg, c == 'S' ? &g.filter.since : &g.filter.until))
			return usage_error("--since/--until: '%s' is not a duration (1.5s, 200ms, 30us, 10ns) or @NS", arg);
		g.filter.nav = 1;
		return 0;
	case 'P':
		if (rd_filter_add_pid(&g.filter, arg))
			return usage_error("--pid: '%s' is not a pid (or too many)", arg);
		return 0;
	case 'T':
		if (rd_filter_add_thread(&g.filter, arg))
			return usage_error("--thread: '%s': empty or too many", arg);
		return 0;
	case 'W':
		g.filter.wall_clock = 1;
		return 0;
	case 'A':
		g.filter.all = 1;
		return 0;
	default: /* 'N' */
		errno = 0;
		n = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || n == 0 || n > 100000)
			return usage_error("--top: '%s' is not a count from 1 to 100000", arg);
		g.o.top = (unsigned)n;
		return 0;
	}
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "dir", required_argument, NULL, 'd' },
		{ "follow", no_argument, NULL, 'F' },
		{ "wait", optional_argument, NULL, 'w' },
		{ "kind", required_argument, NULL, 'k' },
		{ "name", required_argument, NULL, 'n' },
		{ "exclude-name", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ "clean", no_argument, NULL, 'C' },
		{ "dry-run", no_argument, NULL, 'D' },
		{ "ocaml-version", required_argument, NULL, 'V' },
		/* navigation (filter.h, top.c) */
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "pid", required_argument, NULL, 'P' },
		{ "thread", required_argument, NULL, 'T' },
		{ "wall-clock", no_argument, NULL, 'W' },
		{ "all", no_argument, NULL, 'A' },
		{ "top", required_argument, NULL, 'N' },
		/* profiles (profile.h): long options only */
		{ "profile", required_argument, NULL, 'p' + 256 },
		{ "span", required_argument, NULL, 's' + 256 },
		{ "by-thread", no_argument, NULL, 't' + 256 },
		{ NULL, 0, NULL, 0 },
	};
	char bad[80];
	int c;

	g.o.format = "text";
	opterr = 0; /* bad_option() says it, once */
	while ((c = getopt_long(argc, argv, ":f:o:d:Fw::k:n:x:h", lo, NULL)) != -1) {
		switch (c) {
		case 'f': g.o.format = optarg; break;
		case 'o': g.o.output = optarg; break;
		case 'd': g.o.dir = optarg; break;
		case 'F': g.o.follow = 1; break;
		case 'C': g.o.clean = 1; break;
		case 'D': g.o.dry_run = 1; break;
		case 'p' + 256:
			if ((g.o.prof_which = rd_prof_parse_which(optarg)) < 0)
				return usage_error("--profile: '%s' is not cpu, alloc or inuse", optarg);
			break;
		case 's' + 256: g.o.prof_span = optarg; break;
		case 't' + 256: g.o.prof_by_thread = 1; break;
		case 'V':
			if (rd_ocaml_force(optarg))
				return usage_error("--ocaml-version: unknown version '%s' (5.0, 5.1, 5.2, 5.3, 5.4dev)", optarg);
			break;
		case 'w':
			/* "-w 5 PID", "--wait 5 PID": a number followed by
			 * more arguments is the value; "--wait PID" (last)
			 * waits forever for PID. */
			if (!optarg && optind + 1 < argc && is_secs(argv[optind]))
				optarg = argv[optind++];
			if (parse_wait(optarg))
				return EX_USAGE;
			break;
		case 'k':
			if (rd_filter_add_kinds(&g.filter, optarg, bad, sizeof bad))
				return usage_error("--kind: unknown kind '%s'", bad);
			break;
		case 'n':
		case 'x':
			if (rd_filter_add_name(&g.filter, optarg, c == 'x'))
				return usage_error("%s: too many name filters", "--name");
			break;
		case 'S':
		case 'U':
		case 'P':
		case 'T':
		case 'W':
		case 'A':
		case 'N':
			if (parse_nav(c, optarg))
				return EX_USAGE;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(fflush(stdout) ? EX_OUTPUT : EX_OK);
		default:
			return bad_option(c, argv);
		}
	}
	g.o.inputs = argv + optind;
	g.o.ninputs = argc - optind;
	rd_prof_options(g.o.prof_which, g.o.prof_span, g.o.prof_by_thread);
	if (g.o.dry_run && !g.o.clean)
		return usage_error("%s", "--dry-run goes with --clean");
	if (g.o.clean && g.o.ninputs > 1)
		return usage_error("%s", "--clean takes one DIR");
	if (g.o.ninputs == 0 && !g.o.clean)
		return usage_error("%s", "no input: give a PID, a FILE or a DIR");
	return 0;
}

static struct rd_sink *make_sink(const char *f)
{
	if (!strcmp(f, "text"))
		return rd_sink_text();
	if (!strcmp(f, "jsonl"))
		return rd_sink_jsonl();
	if (!strcmp(f, "chrome"))
		return rd_sink_chrome();
	if (!strcmp(f, "summary"))
		return rd_sink_summary(0);
	if (!strcmp(f, "folded"))
		return rd_sink_profile(RD_PFMT_FOLDED);
	if (!strcmp(f, "pprof"))
		return rd_sink_profile(RD_PFMT_PPROF);
	if (!strcmp(f, "flamegraph"))
		return rd_sink_profile(RD_PFMT_FLAME);
	if (!strcmp(f, "summary-json"))
		return rd_sink_summary(1);
	if (!strcmp(f, "gc-stats") || !strcmp(f, "gc-stats-json"))
		return rd_sink_gcstats(f[8] != 0);
	return NULL;
}

/* ---- sources ---------------------------------------------------------- */

static char *keep_path(char *p)
{
	if (g.npaths == g.pathcap) {
		size_t cap = g.pathcap ? 2 * g.pathcap : 16;
		char **n = realloc(g.paths, cap * sizeof *n);

		if (!n) {
			free(p);
			return NULL;
		}
		g.paths = n;
		g.pathcap = cap;
	}
	return g.paths[g.npaths++] = p;
}

/* Files are told apart by device and inode, not by name: a process that
 * execs renames its file (same inode, new name) and the new image creates
 * a new file under the old name. */
static int file_id(const char *p, struct file_id *id)
{
	struct stat st;

	if (stat(p, &st) < 0)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/* The slot of id in the set: where it is, or the empty slot where it
 * would go. The set must have room (idcap > nids). */
static struct file_id *id_slot(const struct file_id *id)
{
	uint64_t h = ((uint64_t)id->ino * 0x9e3779b97f4a7c15ull) ^ (uint64_t)id->dev;
	size_t i = (size_t)(h ^ (h >> 29)) & (g.idcap - 1);

	while (g.ids[i].ino && (g.ids[i].ino != id->ino || g.ids[i].dev != id->dev))
		i = (i + 1) & (g.idcap - 1);
	return &g.ids[i];
}

static int known_id(dev_t dev, ino_t ino)
{
	struct file_id id = { dev, ino ? ino : (ino_t)-1 }; /* 0 marks empty */

	return g.idcap && id_slot(&id)->ino != 0;
}

static int known_file(const char *p)
{
	struct file_id id;

	return file_id(p, &id) == 0 && known_id(id.dev, id.ino);
}

/* Add id to the set, growing it. Returns 0 or -1 (out of memory). */
static int add_id(struct file_id id)
{
	struct file_id *slot;

	if (!id.ino)
		id.ino = (ino_t)-1;
	if (2 * (g.nids + 1) > g.idcap) {
		struct file_id *old = g.ids;
		size_t oldcap = g.idcap, cap = g.idcap ? 2 * g.idcap : 64;

		if (!(g.ids = calloc(cap, sizeof *g.ids))) {
			g.ids = old;
			return -1;
		}
		g.idcap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].ino)
				*id_slot(&old[i]) = old[i];
		free(old);
	}
	slot = id_slot(&id);
	if (!slot->ino) {
		*slot = id;
		g.nids++;
	}
	return 0;
}

/* Remember p's file as seen. Returns 0 or -1 (out of memory). */
static int remember_file(const char *p)
{
	struct file_id id;

	if (file_id(p, &id) < 0)
		return 0;
	return add_id(id);
}

/* A cursor on path, or NULL with the error in *errp and "PATH: why" in
 * msg. */
static rte_cursor *try_open(const char *path, int *errp, char *msg, size_t cap)
{
	rte_cursor *c;

	*errp = rte_cursor_open(path, &c, msg, cap);
	return *errp == RTE_OK ? c : NULL;
}

/* Add an opened cursor as a source. Returns 0 or -1 (out of memory). */
static int add_source(rte_cursor *c, const char *path)
{
	char *p = strdup(path);
	long pid;
	int src;

	if (!p || !keep_path(p) || remember_file(p) < 0) {
		rte_cursor_close(c);
		return -1;
	}
	g.peek_path = p;
	pid = rd_pid_from_ring_start(p);
	rd_filter_set_start(&g.filter, (const char *const *)&p, 1); /* trace start */
	if (rd_ocaml_choose(c, p) < 0) { /* the names of its ids */
		g.peek_path = NULL;
		rte_cursor_close(c);
		return -1;
	}
	g.peek_path = NULL;
	if (pid < 0)
		pid = rd_pid_from_name(p);
	/* Mapped again when it is read: a summary of many files maps one
	 * at a time (the merge releases each file it has read). */
	rte_cursor_release(c);
	src = rte_merge_add(g.merge, c);
	if (src < 0)
		return -1;
	if (rd_procs_add_src(&g.procs, (unsigned)src, p, pid,
	                     rte_cursor_rings(c)) < 0)
		return -1;
	return 0;
}

/* An error that --wait treats as "not there yet". */
static int transient(int err)
{
	return err == RTE_ENOENT || err == RTE_ENOTRING || err == RTE_ETRUNCATED;
}

static int waited_out(uint64_t t0)
{
	if (g.stop)
		return 1;
	return g.o.wait_secs >= 0 &&
	       (double)(rd_now_ms() - t0) >= g.o.wait_secs * 1000.0;
}

/* 1 if path exists and is not a regular file (a device, a FIFO, a
 * socket, a directory): it is never opened, and never waited for. */
static int not_regular(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* 1 if the file of cursor c was added already (the same file named twice,
 * as X and ./X, or as PID and PID.events). */
static int known_cursor(const rte_cursor *c)
{
	const struct stat *st = rte_cursor_stat(c);

	return known_id(st->st_dev, st->st_ino);
}

/* Add the opened cursor c on path unless its file is already in. */
static int add_opened(rte_cursor *c, const char *path)
{
	if (known_cursor(c)) {
		rte_cursor_close(c);
		return 0;
	}
	if (add_source(c, path) == 0)
		return 0;
	fail_line(EX_NOMEM, "out of memory");
	return -1;
}

/* Open the first of paths[0..n) that opens, waiting for one with --wait.
 * `what` names the input in messages, `hint` is added when none exists. */
static int add_first(const char *const *paths, size_t n, const char *what,
                     const char *hint)
{
	uint64_t t0 = rd_now_ms();
	char msg[700];
	int err = RTE_ENOENT;

	for (;;) {
		int last_try = !g.o.wait || waited_out(t0);

		for (size_t i = 0; i < n; i++) {
			rte_cursor *c = try_open(paths[i], &err, msg, sizeof msg);

			if (c)
				return add_opened(c, paths[i]);
			if (err != RTE_ENOENT && (!transient(err) || not_regular(paths[i]))) {
				fail_line(exit_of(err), "%s", msg);
				return -1;
			}
			if (err != RTE_ENOENT)
				break; /* being made: this one, not a later one */
		}
		if (g.stop)
			die_of_stop(what);
		if (last_try) {
			if (err != RTE_ENOENT || (!g.o.wait && !hint))
				fail_line(exit_of(err), "%s", msg);
			else
				fail_line(EX_NOINPUT, "%s: %s%s", what,
				          g.o.wait ? "did not appear in time" : "No such file or directory",
				          hint ? hint : "");
			return -1;
		}
		rd_sleep_ms(WAIT_POLL_MS);
	}
}

/* Open one file input, waiting for it with --wait. */
static int add_file(const char *path)
{
	return add_first(&path, 1, path, NULL);
}

/* Add the files of dir not added yet. *seen (if not NULL) is set to 1 if
 * a ring file that was added before is there. Returns how many were added, or -1
 * if the directory cannot be read (after saying so unless quiet). With
 * `retry`, a file that is not a complete ring file yet (a live process is
 * still creating it) is left for the next scan instead of reported. */
static int scan_dir_seen(const char *dir, int quiet, int retry, int *seen)
{
	char **list, msg[700];
	size_t n;
	int added = 0, e = rd_list_dir(dir, &list, &n);

	if (e < 0) {
		if (!quiet)
			fail_line(e == -ENOMEM ? EX_NOMEM : EX_NOINPUT, "%s: %s", dir,
			          strerror(-e));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		rte_cursor *c;
		int err;

		if (known_file(list[i])) {
			if (seen)
				*seen = 1;
			continue;
		}
		if (not_regular(list[i])) { /* once: then known */
			fprintf(stderr, "rte-read: warning: %s: not a regular file, skipped\n",
			        list[i]);
			if (remember_file(list[i]) < 0)
				set_status(EX_NOMEM);
			continue;
		}
		c = try_open(list[i], &err, msg, sizeof msg);
		if (!c) {
			if (retry && transient(err))
				continue;
			fail_line(exit_of(err), "%s", msg); /* once: now known */
			if (remember_file(list[i]) < 0)
				set_status(EX_NOMEM);
			continue;
		}
		if (known_cursor(c)) {
			rte_cursor_close(c);
			if (seen)
				*seen = 1;
		} else if (add_source(c, list[i]) == 0)
			added++;
		else
			fail_line(EX_NOMEM, "out of memory");
	}
	rd_free_list(list, n);
	return added;
}

static int scan_dir(const char *dir, int quiet, int retry)
{
	return scan_dir_seen(dir, quiet, retry, NULL);
}

/* 1 if directory dir is one of the DIR inputs already added. */
static int known_dir(const char *dir)
{
	struct stat a, b;

	if (stat(dir, &a) < 0)
		return 0;
	for (size_t i = 0; i < g.ndirs; i++)
		if (stat(g.dirs[i], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 1;
	return 0;
}

/* A DIR input: its ring files now, or with --wait once there are some. */
static int add_dir(const char *dir)
{
	uint64_t t0 = rd_now_ms();
	char **d;

	if (known_dir(dir))
		return 0; /* the same directory twice */
	for (;;) {
		int last_try = !g.o.wait || waited_out(t0);
		size_t before = g.npaths;
		int seen = 0;
		int n = scan_dir_seen(dir, !last_try, !last_try || g.o.follow, &seen);

		if (n > 0 || (n == 0 && (g.npaths > before || seen)))
			break;
		if (g.stop && g.o.wait)
			die_of_stop(dir);
		if (last_try) {
			if (n == 0)
				fail_line(EX_NOINPUT, "%s: no ring files (*.events) in this directory",
				          dir);
			return -1;
		}
		rd_sleep_ms(WAIT_POLL_MS);
	}
	d = realloc(g.dirs, (g.ndirs + 1) * sizeof *d);
	if (!d)
		return -1;
	g.dirs = d;
	g.dirs[g.ndirs++] = (char *)dir;
	return 0;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The directories where a PID input is looked for, in order: -d DIR alone
 * if given; else $OCAML_RUNTIME_EVENTS_DIR if set, librte.so's default
 * directory (common/rundir.h) and the working directory (where an OCaml
 * program writes by default). Returns how many (at most 3).
 */
static size_t pid_dirs(const char *dirs[3], char *run, size_t cap)
{
	const char *env = getenv("OCAML_RUNTIME_EVENTS_DIR");
	size_t n = 0;

	if (g.o.dir) {
		dirs[n++] = g.o.dir;
		return n;
	}
	if (env && *env)
		dirs[n++] = env;
	if (rte_rundir_path(getenv("XDG_RUNTIME_DIR"), geteuid(), run, cap) == 0 &&
	    (!n || strcmp(run, dirs[0])))
		dirs[n++] = run;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(dirs[i], "."))
			return n;
	dirs[n++] = ".";
	return n;
}

/* A PID input: PID.events in the first of pid_dirs() that has it. */
static void add_pid(const char *pid)
{
	const char *dirs[3];
	char run[4096], *paths[3] = { NULL, NULL, NULL }, what[64], hint[4096 + 600];
	size_t n = pid_dirs(dirs, run, sizeof run), len = 0;

	snprintf(what, sizeof what, "%s.events", pid);
	len += (size_t)snprintf(hint, sizeof hint, " (looked in");
	for (size_t i = 0; i < n; i++) {
		if (asprintf(&paths[i], "%s/%s.events", dirs[i], pid) < 0) {
			fail_line(EX_NOMEM, "out of memory");
			goto out;
		}
		if (len < sizeof hint)
			len += (size_t)snprintf(hint + len, sizeof hint - len, "%s %s",
			                        i ? "," : "", dirs[i]);
	}
	if (len < sizeof hint)
		snprintf(hint + len, sizeof hint - len,
		         "; is the program running with OCAML_RUNTIME_EVENTS_START=1 "
		         "under librte.so? is OCAML_RUNTIME_EVENTS_DIR the same as its?)");
	add_first((const char *const *)paths, n, n == 1 ? paths[0] : what, hint);
out:
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
}

static void add_inputs(void)
{
	for (int i = 0; i < g.o.ninputs; i++) {
		const char *in = g.o.inputs[i];

		if (rd_is_pid(in)) {
			add_pid(in);
		} else if (is_dir(in)) {
			add_dir(in);
		} else {
			add_file(in);
		}
	}
}

/* ---- the read loop ---------------------------------------------------- */

/* Pass one merged event through procs, the crash recorder, the filters
 * and the sink. */
static void deliver(const struct rte_merge_item *mi, int all)
{
	struct rd_item it;

	rd_procs_update(&g.procs, mi, &it);
	if (mi->ev->kind == RTE_EV_LOST)
		g.ctx.lost_total += mi->ev->u.lost_words;
	/* Live, every event (there is no second pass); else only the
	 * crash recorder's own, for symbolising: cheap to test. */
	if (g.crash && (g.o.follow || (mi->ev->kind == RTE_EV_USER_CUSTOM &&
	                               rd_crash_is_own(mi->ev))))
		rd_crash_update(g.crash, &it);
	it.pass = all || rd_filter_pass_item(&g.filter, &it);
	/* Spans given up on matter to a format even if the event that
	 * gave up on them is filtered out. */
	if (it.pass || it.ab[0].n || it.ab[1].n)
		g.sink->event(g.sink, &g.ctx, &it);
}

/* Unordered (a summary of finished files): run after run of one ring,
 * through the sink's fast path when nothing else needs the events.
 * Returns how many were delivered. */
static uint64_t drain_runs(int all)
{
	struct rte_merge_run run;
	struct rte_merge_item mi;
	uint64_t n = 0;
	int r, fast = all && g.sink->run && !g.o.follow;

	while ((r = rte_merge_next_run(g.merge, &run)) != 0) {
		size_t i = 0;

		if (r < 0) {
			fail_line(exit_of(r), "%s", rte_merge_errmsg(g.merge));
			continue;
		}
		n += run.n;
		for (;;) {
			if (fast)
				i += g.sink->run(g.sink, &g.ctx, run.src, run.ev + i,
				                 run.n - i);
			if (i == run.n)
				break;
			mi.ev = &run.ev[i];
			mi.src = run.src;
			mi.ts = mi.ev->kind == RTE_EV_LOST ? run.prev_ts : mi.ev->ts;
			deliver(&mi, all);
			i++;
			if (g.out.state != RD_OUT_OK || g.stop)
				return n;
		}
	}
	return n;
}

/* Deliver every event available now. Returns how many. */
static uint64_t drain(void)
{
	struct rte_merge_item mi;
	uint64_t n = 0;
	int r, all = rd_filter_all(&g.filter);

	if (g.unordered)
		return drain_runs(all);
	while ((r = rte_merge_next(g.merge, &mi)) != 0) {
		if (r < 0) {
			fail_line(exit_of(r), "%s", rte_merge_errmsg(g.merge));
			continue;
		}
		n++;
		deliver(&mi, all);
		if (g.out.state != RD_OUT_OK || g.stop)
			break;
	}
	return n;
}

/* --follow: 1 while some source may still write. Reports the ones that
 * ended without ring_stop. `alive` holds each source's liveness sampled
 * before the last drain, so nothing written before death is missed. */
static int any_live(const int *alive, int *done)
{
	int live = 0;

	for (unsigned i = 0; i < g.procs.nsrc; i++) {
		struct rd_src *s = &g.procs.src[i];

		if (done[i])
			continue;
		if (s->stopped && alive[i]) {
			/* Still mapped after ring_stop: an exec may fail and
			 * the writer write ring_start and go on. */
			live = 1;
		} else if (s->stopped) {
			done[i] = 1;
			g.last_stop_ms = rd_now_ms();
		} else if (!alive[i] && s->pid > 0) {
			done[i] = 1;
			fail_line(EX_KILLED, "%s: process %ld ended without ring_stop (killed?)",
			          s->path, s->pid);
		} else {
			live = 1;
		}
	}
	return live;
}

/* A followed file whose name now belongs to a new file (the process
 * exec'd and the new image traces again): follow the new one too.
 * Returns how many were added. */
static int reopen_replaced(void)
{
	unsigned n = g.procs.nsrc;
	int added = 0;

	for (unsigned i = 0; i < n; i++) {
		const char *path = g.procs.src[i].path;
		char msg[700];
		rte_cursor *c;
		int err;

		if (!g.procs.src[i].stopped || known_file(path) ||
		    !(c = try_open(path, &err, msg, sizeof msg)))
			continue;
		if (add_source(c, path) == 0)
			added++;
	}
	return added;
}

/* 1 if a process whose file ended is still running: it may exec. */
static int stopped_but_alive(void)
{
	for (unsigned i = 0; i < g.procs.nsrc; i++)
		if (g.procs.src[i].stopped && rd_pid_alive(g.procs.src[i].pid))
			return 1;
	return 0;
}

/* Per-source follow state, grown as sources are added: alive[] sampled
 * each round, done[] once a source can write no more. */
struct follow_state {
	int *alive, *done;
	unsigned cap;
};

static int grow_state(struct follow_state *fs)
{
	unsigned ncap = g.procs.nsrc * 2;
	int *a, *d;

	if (g.procs.nsrc <= fs->cap)
		return 0;
	a = realloc(fs->alive, ncap * sizeof *a);
	if (a)
		fs->alive = a;
	d = a ? realloc(fs->done, ncap * sizeof *d) : NULL;
	if (!d)
		return -1;
	fs->done = d;
	memset(fs->done + fs->cap, 0, (ncap - fs->cap) * sizeof *d);
	fs->cap = ncap;
	return 0;
}

/* Every source has ended: 1 to stop following, 0 to go on because new
 * files appeared (children, an exec) or may still appear (a process that
 * wrote ring_stop is still running: it may be exec'ing). */
static int follow_finished(void)
{
	size_t before = g.procs.nsrc;
	int grace = rd_now_ms() - g.last_stop_ms < EXEC_GRACE_MS;

	for (size_t d = 0; d < g.ndirs; d++)
		scan_dir(g.dirs[d], 1, grace);
	reopen_replaced();
	if (g.procs.nsrc != before)
		return 0;
	if (!grace || !stopped_but_alive())
		return 1;
	rd_sleep_ms(IDLE_MAX_MS);
	return 0;
}

/* --follow: may source i still be written? After its ring_stop, only
 * while its writer still maps it (the maps are read again). */
static int source_alive(unsigned i, int done)
{
	struct rd_src *s = &g.procs.src[i];

	if (done || !rd_src_alive(s, rte_merge_cursor(g.merge, i)))
		return 0;
	return !s->stopped || rd_writer_maps_now(&s->writer);
}

static void follow_loop(void)
{
	struct follow_state fs = { NULL, NULL, 0 };
	unsigned idle = IDLE_MIN_MS;
	uint64_t last_scan = rd_now_ms();

	for (;;) {
		uint64_t got;

		if (grow_state(&fs) < 0) {
			fail_line(EX_NOMEM, "out of memory");
			break;
		}
		for (unsigned i = 0; i < g.procs.nsrc; i++)
			fs.alive[i] = source_alive(i, fs.done[i]);
		rte_merge_refill(g.merge);
		got = drain();
		if (g.out.state != RD_OUT_OK || g.stop)
			break;
		if (!any_live(fs.alive, fs.done)) {
			if (follow_finished())
				break;
			continue;
		}
		/* Live output: what was read this round goes out now. */
		rd_out_flush(&g.out);
		if (got) {
			idle = IDLE_MIN_MS;
		} else {
			rd_sleep_ms(idle);
			idle = idle * 2 > IDLE_MAX_MS ? IDLE_MAX_MS : idle * 2;
		}
		if (g.ndirs && rd_now_ms() - last_scan >= DIR_RESCAN_MS) {
			for (size_t d = 0; d < g.ndirs; d++)
				scan_dir(g.dirs[d], 1, 1);
			last_scan = rd_now_ms();
		}
	}
	free(fs.alive);
	free(fs.done);
}

/* ---- crash reports ---------------------------------------------------- */

/*
 * A crash report shows the last events of every ring before the crash.
 * Keeping them for every event would cost the fast formats dearly, so the
 * main pass only feeds the crash recorder's own events; when it saw a
 * crash, a second pass over the same files (fresh cursors) feeds every
 * event to a new collector that writes the report. Live (--follow) there is
 * one pass that feeds everything.
 */
static struct rd_crash *crash_report(void)
{
	struct rte_merge_item mi;
	struct rd_crash *c;
	struct rd_item it;
	int r;

	if (!g.crash || g.o.follow || !rd_crash_count(g.crash, 0))
		return g.crash;
	g.merge2 = rte_merge_new();
	c = rd_crash_new();
	if (!g.merge2 || !c) {
		rd_crash_free(c);
		return g.crash;
	}
	rd_procs_init(&g.procs2);
	for (unsigned i = 0; i < g.procs.nsrc; i++) {
		const struct rd_src *s = &g.procs.src[i];
		rte_cursor *cur;
		int src;

		if (rte_cursor_open(s->path, &cur, NULL, 0) != RTE_OK ||
		    rd_ocaml_reuse(cur, s->path) < 0 ||
		    (src = rte_merge_add(g.merge2, cur)) < 0 ||
		    rd_procs_add_src(&g.procs2, (unsigned)src, s->path, s->pid,
		                     rte_cursor_rings(cur)) < 0) {
			rd_crash_free(c);
			return g.crash; /* the first pass said what was wrong */
		}
	}
	g.reading = g.merge2;
	rte_merge_refill(g.merge2);
	while ((r = rte_merge_next(g.merge2, &mi)) != 0)
		if (r > 0) {
			rd_procs_update(&g.procs2, &mi, &it);
			rd_crash_update(c, &it);
		}
	g.reading = g.merge;
	rd_crash_free(g.crash);
	return g.crash = c;
}

/* ---- main ---------------------------------------------------------------- */

/* --clean [DIR]: DIR, else -d DIR, else $OCAML_RUNTIME_EVENTS_DIR, else
 * librte.so's default directory. */
static int clean_dir(void)
{
	const char *dir = g.o.ninputs ? g.o.inputs[0] : g.o.dir;
	char run[4096];

	if (!dir)
		dir = getenv("OCAML_RUNTIME_EVENTS_DIR");
	if ((!dir || !*dir) &&
	    rte_rundir_path(getenv("XDG_RUNTIME_DIR"), geteuid(), run, sizeof run) == 0)
		dir = run;
	if (!dir || !*dir)
		dir = ".";
	return rd_clean(dir, g.o.dry_run);
}

/* 1 if st is the file or the directory of an input. */
static int is_input(const struct stat *st)
{
	struct stat d;

	if (known_id(st->st_dev, st->st_ino))
		return 1;
	for (size_t i = 0; i < g.ndirs; i++)
		if (stat(g.dirs[i], &d) == 0 && d.st_dev == st->st_dev &&
		    d.st_ino == st->st_ino)
			return 1;
	return 0;
}

/*
 * -o naming an input (the same file through any name or link) would be
 * truncated before it is read, and a new file in an input directory would
 * be read as an input: refuse both before anything is opened for writing.
 * Returns 0, or -1 after saying why.
 */
static int output_is_input(const char *out)
{
	char *copy = strdup(out);
	const char *slash;
	struct stat st;
	int bad = 0;

	if (!copy) {
		fail_line(EX_NOMEM, "out of memory");
		return -1;
	}
	if (stat(out, &st) == 0 && is_input(&st)) {
		bad = 1;
	} else {
		slash = strrchr(copy, '/');
		if (slash)
			copy[slash - copy + (slash == copy)] = '\0'; /* "/x": "/" */
		if (stat(slash ? copy : ".", &st) == 0 && is_input(&st))
			bad = 2;
	}
	free(copy);
	if (bad)
		fail_line(EX_NOINPUT, "-o %s: %s; nothing was written", out,
		          bad == 1 ? "is one of the inputs"
		                   : "is inside an input directory");
	return bad ? -1 : 0;
}

static int open_output(void)
{
	int fd = 1;

	if (g.o.output && output_is_input(g.o.output) < 0)
		return -1;
	if (g.o.output) {
		fd = open(g.o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			fail_line(EX_OUTPUT, "%s: %s", g.o.output, strerror(errno));
			return -1;
		}
	}
	if (rd_out_init(&g.out, fd, g.o.output ? g.o.output : "standard output")) {
		fail_line(EX_NOMEM, "out of memory");
		return -1;
	}
	return 0;
}

/* Flush and report an output failure; a closed pipe ends quietly. */
static int finish_output(void)
{
	int epipe;

	rd_out_fini(&g.out);
	epipe = g.out.state == RD_OUT_EPIPE;
	if (g.out.state == RD_OUT_EIO)
		fail_line(EX_OUTPUT, "%s: write error: %s", g.out.name,
		          strerror(g.out.err));
	if (g.o.output && g.out.fd >= 0 && close(g.out.fd) < 0 && !g.out.state)
		fail_line(EX_OUTPUT, "%s: %s", g.o.output, strerror(errno));
	return epipe;
}

static void report_lost(void)
{
	const char *f = g.o.format;

	if (g.ctx.lost_total && (!strcmp(f, "jsonl") || !strcmp(f, "chrome")))
		fprintf(stderr, "rte-read: warning: %llu words were lost (overwritten before they were read)\n",
		        (unsigned long long)g.ctx.lost_total);
}

/* Read every input into the sink and finish the output. */
static void run(void)
{
	g.ctx = (struct rd_ctx){ &g.out, &g.procs, &g.filter, 0, g.crash, NULL };
	if (g.sink->start)
		g.sink->start(g.sink, &g.ctx);
	if (g.o.follow) {
		follow_loop();
	} else {
		/* A summary needs each ring's order, not the timeline's. */
		if (!strncmp(g.o.format, "summary", 7) ||
		    !strncmp(g.o.format, "gc-stats", 8)) {
			rte_merge_set_unordered(g.merge, 1);
			g.unordered = 1;
		}
		rte_merge_refill(g.merge);
		drain();
		/* Files without ring_stop: killed writers (the formats say). */
		rd_procs_judge_writers(&g.procs, g.merge);
	}
	if (g.out.state == RD_OUT_OK) {
		g.ctx.report = crash_report();
		g.ctx.crash = g.crash;
		g.sink->finish(g.sink, &g.ctx);
	}
	if (finish_output())
		return; /* the reader went away: not our failure, say nothing */
	report_lost();
}

static void cleanup(void)
{
	if (g.sink)
		g.sink->destroy(g.sink);
	rd_crash_free(g.crash);
	rte_merge_free(g.merge);
	rte_merge_free(g.merge2);
	rd_procs_fini(&g.procs);
	rd_procs_fini(&g.procs2);
	rd_free_list(g.paths, g.npaths);
	free(g.ids);
	free(g.dirs);
	rd_ocaml_free();
}

int main(int argc, char **argv)
{
	int rc;

	/* --serve, --push: the Prometheus modes (serve.c), own options. */
	if (rd_serve_wanted(argc, argv))
		return rd_serve_main(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "diff")) /* reader/diff.c */
		return rd_diff_main(argc - 1, argv + 1);
	/* Large, mostly empty tables (a format's per-file caches) come
	 * from fresh zero pages instead of memset reused heap: memory stays
	 * what is used with many files (issue 12, item 13). */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024);
	rd_filter_init(&g.filter);
	rd_procs_init(&g.procs);
	rc = parse_args(argc, argv);
	if (rc)
		return rc;
	if (g.o.top && strcmp(g.o.format, "text") && strcmp(g.o.format, "json"))
		return usage_error("--top goes with --format=text or json, not '%s'", g.o.format);
	g.sink = g.o.top ? rd_sink_top(g.o.top, !strcmp(g.o.format, "json"))
	                 : make_sink(g.o.format);
	if (!g.sink) {
		if (strcmp(g.o.format, "text") && strcmp(g.o.format, "jsonl") &&
		    strcmp(g.o.format, "chrome") && strcmp(g.o.format, "summary") &&
		    strcmp(g.o.format, "summary-json") &&
		    strcmp(g.o.format, "folded") && strcmp(g.o.format, "pprof") &&
		    strcmp(g.o.format, "flamegraph") &&
		    strncmp(g.o.format, "gc-stats", 8))
			return usage_error("--format: unknown format '%s'", g.o.format);
		fail_line(EX_NOMEM, "out of memory");
		return EX_NOMEM;
	}
	setup_signals();
	if (g.o.clean)
		return clean_dir();
	g.merge = g.reading = rte_merge_new();
	if (!g.merge || (strcmp(g.o.format, "jsonl") && !(g.crash = rd_crash_new()))) {
		fail_line(EX_NOMEM, "out of memory");
		cleanup();
		return EX_NOMEM;
	}
	add_inputs();
	if (g.procs.nsrc == 0)
		set_status(EX_NOINPUT);
	else if (open_output() == 0)
		run();
	cleanup();
	return g.status;
}
