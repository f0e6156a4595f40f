/*
 * options.c - rte-read's command line: --help's text and the options
 * (options.h). rte-read diff and --serve/--push parse their own.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ocamlver.h"
#include "options.h"
#include "ptree.h"
#include "profile.h"
#include "status.h"

/* --help in three parts around what the format table prints
 * (commands.c): the -f line's list of names, the "Formats:" section. */
static const char usage_head[] =
"Usage: rte-read [OPTIONS] INPUT...\n"
"       rte-read diff [--fail-if EXPR]... [--format=json] BASE NEW\n"
"         (compare two runs; rte-read diff --help)\n"
"       rte-read diff -f flamegraph [-o FILE] BASE NEW\n"
"         (differential flame graph of two runs' profiles, SVG; alias\n"
"         rte-read flamediff [-o FILE] BASE NEW)\n"
"Read OCaml 5.2 runtime-events ring files (written by OCaml 5.2 or by\n"
"librte.so) and print their events as one timeline.\n"
"\n"
"INPUT is one of:\n"
"  PID            PID.events in -d DIR; else the first of\n"
"                 $OCAML_RUNTIME_EVENTS_DIR, librte.so's default directory\n"
"                 ($XDG_RUNTIME_DIR/rte, else /dev/shm/rte-UID where /tmp is\n"
"                 not a tmpfs, else /tmp/rte-UID) and the current\n"
"                 directory (OCaml's default) that has it (a number that\n"
"                 names a file or directory here is that instead)\n"
"  FILE           a ring file (e.g. 1234.events, 1234.exec1.events)\n"
"  DIR            every *.events file in DIR: a process, its forked children\n"
"                 and its pre-exec files, merged by timestamp\n"
"Several inputs are merged into one timeline; each event carries its pid\n"
"(from the file's ring_start, else the leading digits of its name). A file\n"
"named twice is read once; devices and FIFOs are never opened (in a DIR:\n"
"skipped with a warning).\n"
"\n"
"Options:\n";

static const char usage_options[] =
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
"                       (these filters apply to every format; summary's\n"
"                       per-process header and ring table describe the\n"
"                       whole file)\n"
"      --wall-clock     text: wall-clock time (UTC) instead of time since\n"
"                       the trace start (right for files of this boot)\n"
"      --all            chrome: also the shim's bookkeeping events; summary:\n"
"                       a detail block for every process, not the tree\n"
"                       (rte.thread.*, rte.module*, rte.exec_failed)\n"
"      --top=N          print the N longest runtime phases (GC pauses...)\n"
"                       and user spans instead: duration, start (as in text\n"
"                       and chrome), pid, tid, thread; with -f json as JSON\n"
"      --ocaml-version=5.x  name runtime phases and counters as OCaml 5.x\n"
"                       does (5.0, 5.1, 5.2, 5.3, 5.4dev); default: chosen\n"
"                       per file from the executable of its writer while it\n"
"                       runs (/proc/PID/exe), else from its phase nesting,\n"
"                       else 5.2 (gc-stats and summary say which, and how)\n"
"      --exe=PATH       take the OCaml version from this executable (of a\n"
"                       finished process) for every file; exit 1 if PATH\n"
"                       is not an OCaml 5 program\n"
"      --profile=WHICH  what folded, pprof and flamegraph write: cpu\n"
"                       (rte.sample), alloc (every sampled allocation) or\n"
"                       inuse (those still live at the end); default: cpu\n"
"                       if there are CPU samples, else alloc\n"
"      --span=NAME      profiles (those formats and the summary's profile\n"
"                       sections) keep only samples taken inside the user\n"
"                       span or runtime phase NAME\n"
"      --by-thread      folded and flamegraph: each thread its own root\n"
"      --no-inline      profiles: no frames of the functions inlined at an\n"
"                       address (by default, where DWARF inline records\n"
"                       exist, each is a frame: outer;inlined); --inline,\n"
"                       the default, turns them back on\n"
"      --state S        profiles of RTE_PROFILE_MODE=wall: only the samples of\n"
"                       threads running (S=running) or blocked (S=blocked)\n"
"      --by exe         summary: after the process tree, a table per executable;\n"
"                       folded, flamegraph: one root per executable\n"
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
"\n";

static const char usage_exit[] =
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

void rd_usage_print(FILE *o)
{
	fputs(usage_head, o);
	fputs("  -f, --format=FMT     ", o);
	rd_formats_names(o, 23, 78);
	fputs(usage_options, o);
	rd_formats_help(o);
	fputs("\n", o);
	fputs(usage_exit, o);
}

/* One line, one program name: "rte-read: <why> (try 'rte-read --help')". */
int rd_usage_error(const char *fmt, const char *arg)
{
	fputs("rte-read: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (try 'rte-read --help')\n", stderr);
	return RD_EX_USAGE;
}

/* 1 if s names a release whose table rte has: 5.0 to 5.3, with or
 * without a patch number (5.2, 5.2.1), or 5.4dev (trunk; the 5.4.0
 * release and later are not covered: doc/GC-STATS.md). */
static int version_ok(const char *s)
{
	if (!strcmp(s, "5.4dev"))
		return 1;
	if (s[0] != '5' || s[1] != '.' || s[2] < '0' || s[2] > '3')
		return 0;
	if (!s[3])
		return 1;
	if (s[3] != '.' || !s[4])
		return 0;
	for (s += 4; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
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
		return rd_usage_error("option '%s' needs a value", arg);
	return rd_usage_error("unrecognized option '%s'", arg);
}

static int parse_wait(struct rd_opts *o, const char *arg)
{
	char *end;

	o->wait = 1;
	o->wait_secs = -1;
	if (!arg)
		return 0;
	errno = 0;
	o->wait_secs = strtod(arg, &end);
	if (errno || end == arg || *end || o->wait_secs < 0)
		return rd_usage_error("--wait: '%s' is not a number of seconds", arg);
	return 0;
}

/* The navigation options (--since, --until, --pid, --thread,
 * --wall-clock, --all, --top) into *f and o->top. */
static int parse_nav(struct rd_opts *o, struct rd_filter *f, int c, const char *arg)
{
	char *end;
	unsigned long n;

	switch (c) {
	case 'S':
	case 'U':
		if (rd_filter_parse_when(arg, c == 'S' ? &f->since : &f->until))
			return rd_usage_error("--since/--until: '%s' is not a duration (1.5s, 200ms, 30us, 10ns) or @NS", arg);
		f->nav = 1;
		return 0;
	case 'P':
		if (rd_filter_add_pid(f, arg))
			return rd_usage_error("--pid: '%s' is not a pid (or too many)", arg);
		return 0;
	case 'T':
		if (rd_filter_add_thread(f, arg))
			return rd_usage_error("--thread: '%s': empty or too many", arg);
		return 0;
	case 'W':
		f->wall_clock = 1;
		return 0;
	case 'A':
		f->all = 1;
		return 0;
	default: /* 'N' */
		errno = 0;
		n = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || n == 0 || n > 100000)
			return rd_usage_error("--top: '%s' is not a count from 1 to 100000", arg);
		o->top = (unsigned)n;
		return 0;
	}
}

int rd_options_parse(int argc, char **argv, struct rd_opts *o,
                     struct rd_filter *f)
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
		{ "exe", required_argument, NULL, 'e' + 256 },
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
		{ "state", required_argument, NULL, 'w' + 256 },
		{ "inline", no_argument, NULL, 'i' + 256 },
		{ "no-inline", no_argument, NULL, 'I' + 256 },
		{ "by", required_argument, NULL, 'b' + 256 }, /* ptree.h */
		{ NULL, 0, NULL, 0 },
	};
	char bad[80];
	int c;

	o->format = "text";
	opterr = 0; /* bad_option() says it, once */
	while ((c = getopt_long(argc, argv, ":f:o:d:Fw::k:n:x:h", lo, NULL)) != -1) {
		switch (c) {
		case 'f': o->format = optarg; break;
		case 'o': o->output = optarg; break;
		case 'd': o->dir = optarg; break;
		case 'F': o->follow = 1; break;
		case 'C': o->clean = 1; break;
		case 'D': o->dry_run = 1; break;
		case 'p' + 256:
			if ((o->prof_which = rd_prof_parse_which(optarg)) < 0)
				return rd_usage_error("--profile: '%s' is not cpu, alloc or inuse", optarg);
			break;
		case 's' + 256:
			if (!*optarg)
				return rd_usage_error("%s", "--span: give a span or phase name");
			o->prof_span = optarg;
			break;
		case 't' + 256: o->prof_by_thread = 1; break;
		case 'i' + 256: rd_prof_inline_opt = 1; break;
		case 'I' + 256: rd_prof_inline_opt = 0; break;
		case 'w' + 256:
			if ((rd_prof_state_opt = rd_prof_parse_state(optarg)) < 0)
				return rd_usage_error("--state: '%s' is not running or blocked", optarg);
			break;
		case 'b' + 256:
			if (strcmp(optarg, "exe"))
				return rd_usage_error("--by: only 'exe' ('%s')", optarg);
			rd_ptree_opts.by_exe = 1;
			break;
		case 'V':
			if (!version_ok(optarg) || rd_ocaml_force(optarg))
				return rd_usage_error("--ocaml-version: unknown version '%s' (5.0, 5.1, 5.2, 5.3, 5.4dev)", optarg);
			break;
		case 'e' + 256: {
			char why[PATH_MAX + 96];

			if (rd_ocaml_exe_option(optarg, why, sizeof why))
				return rd_usage_error("--exe: %s", why);
			break;
		}
		case 'w':
			/* "-w 5 PID", "--wait 5 PID": a number followed by
			 * more arguments is the value; "--wait PID" (last)
			 * waits forever for PID. */
			if (!optarg && optind + 1 < argc && is_secs(argv[optind]))
				optarg = argv[optind++];
			if (parse_wait(o, optarg))
				return RD_EX_USAGE;
			break;
		case 'k':
			if (rd_filter_add_kinds(f, optarg, bad, sizeof bad))
				return rd_usage_error("--kind: unknown kind '%s'", bad);
			break;
		case 'n':
		case 'x':
			if (rd_filter_add_name(f, optarg, c == 'x'))
				return rd_usage_error("%s: too many name filters", "--name");
			break;
		case 'S':
		case 'U':
		case 'P':
		case 'T':
		case 'W':
		case 'A':
		case 'N':
			if (parse_nav(o, f, c, optarg))
				return RD_EX_USAGE;
			break;
		case 'h':
			rd_usage_print(stdout);
			exit(fflush(stdout) ? RD_EX_OUTPUT : RD_EX_OK);
		default:
			return bad_option(c, argv);
		}
	}
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	rd_prof_options(o->prof_which, o->prof_span, o->prof_by_thread);
	if (f->since.set && f->until.set && f->since.abs == f->until.abs &&
	    f->since.ns > f->until.ns)
		return rd_usage_error("%s", "--since is after --until: no event can be in that window");
	if (o->dry_run && !o->clean)
		return rd_usage_error("%s", "--dry-run goes with --clean");
	if (o->clean && o->ninputs > 1)
		return rd_usage_error("%s", "--clean takes one DIR");
	if (o->ninputs == 0 && !o->clean)
		return rd_usage_error("%s", "no input: give a PID, a FILE or a DIR");
	return 0;
}
