/*
 * commands.c - the table of rte-read's subcommands and output formats
 * (commands.h). To add a format: its sink (reader/fmt/), one row here.
 */
#include <string.h>

#include "commands.h"
#include "diff.h"
#include "flamediff.h"
#include "profile.h"
#include "serve.h"
#include "top.h"

/* ---- subcommands ----------------------------------------------------------- */

static const struct rd_command commands[] = {
	{ "diff", rd_diff_main, 0 },     /* reader/diff.c */
	{ "flamediff", rd_flamediff_main, 0 }, /* reader/flamediff.c */
	{ "--serve", rd_serve_main, 1 }, /* reader/serve.c: Prometheus */
	{ "--push", rd_serve_main, 1 },
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* 1 if argument a is option `opt`, alone or as "opt=VALUE". */
static int is_option(const char *a, const char *opt)
{
	size_t n = strlen(opt);

	return !strncmp(a, opt, n) && (!a[n] || a[n] == '=');
}

const struct rd_command *rd_command_find(int argc, char **argv)
{
	for (size_t c = 0; c < NCOMMANDS; c++)
		if (!commands[c].anywhere && argc > 1 && !strcmp(argv[1], commands[c].name))
			return &commands[c];
	/* The options that take the whole command line, before a "--". */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		for (size_t c = 0; c < NCOMMANDS; c++)
			if (commands[c].anywhere && is_option(argv[i], commands[c].name))
				return &commands[c];
	return NULL;
}

/* ---- formats ----------------------------------------------------------------- */

static struct rd_sink *make_text(int arg) { (void)arg; return rd_sink_text(); }
static struct rd_sink *make_jsonl(int arg) { (void)arg; return rd_sink_jsonl(); }
static struct rd_sink *make_chrome(int arg) { (void)arg; return rd_sink_chrome(); }
static struct rd_sink *make_profile(int arg) { return rd_sink_profile((enum rd_prof_fmt)arg); }

static const struct rd_format formats[] = {
	{ "text", make_text, 0, RD_NEED_ORDER | RD_NEED_CRASH | RD_WITH_TOP,
	  "aligned lines: time since the trace start (every process\n"
	  "on one time base), delta since the previous line, pid,\n"
	  "ring, thread name, kind, name, value (ends: duration)" },
	{ "json", make_text, 1, RD_NEED_ORDER | RD_NEED_CRASH | RD_WITH_TOP | RD_TOP_ONLY,
	  NULL /* --top's JSON: said under --top */ },
	{ "jsonl", make_jsonl, 0, RD_NEED_ORDER | RD_WARN_LOST,
	  "one JSON object a line (stable schema, plus \"pid\")" },
	{ "chrome", make_chrome, 0, RD_NEED_ORDER | RD_NEED_CRASH | RD_WARN_LOST,
	  "Chrome Trace Event JSON for Perfetto / chrome://tracing:\n"
	  "a track per thread (tid), processes named by executable,\n"
	  "fork and exec as flow arrows, counters as counter tracks" },
	{ "summary", rd_sink_summary, 0, RD_NEED_CRASH,
	  "per process: wall time, rings, phase and span statistics\n"
	  "(count, total, mean, p50, p90, p99, p99.9, max, unfinished;\n"
	  "user spans matched by name), counters and ints (last =\n"
	  "latest in time across rings), lifecycle, lost words" },
	{ "summary-json", rd_sink_summary, 1, RD_NEED_CRASH,
	  "the summary as one JSON document" },
	{ "gc-stats", rd_sink_gcstats, 0, RD_NEED_CRASH,
	  "per process, OCaml GC statistics as olly gc-stats gives\n"
	  "them: wall, CPU (domain lifetimes) and GC time, GC % of\n"
	  "CPU per domain, waits, collections, allocated words, pause\n"
	  "percentiles; >= marks lower bounds (lost words); see\n"
	  "doc/GC-STATS.md" },
	{ "gc-stats-json", rd_sink_gcstats, 1, RD_NEED_CRASH,
	  "the same as one JSON document" },
	{ "folded", make_profile, RD_PFMT_FOLDED, RD_NEED_ORDER | RD_NEED_CRASH,
	  "profile stacks collapsed, \"root;...;leaf VALUE\" a line\n"
	  "(flamegraph.pl, speedscope); VALUE: samples, or estimated\n"
	  "bytes for --profile=alloc|inuse" },
	{ "pprof", make_profile, RD_PFMT_PPROF, RD_NEED_ORDER | RD_NEED_CRASH,
	  "gzipped profile.proto for go tool pprof: samples/count +\n"
	  "cpu/nanoseconds, or alloc_objects, alloc_space,\n"
	  "inuse_objects, inuse_space (write it with -o FILE)" },
	{ "flamegraph", make_profile, RD_PFMT_FLAME, RD_NEED_ORDER | RD_NEED_CRASH,
	  "one self-contained SVG: open it in a browser (click a\n"
	  "frame to zoom, Search); see doc/PROFILING.md" },
};

#define NFORMATS (sizeof formats / sizeof formats[0])

const struct rd_format *rd_format_find(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

struct rd_sink *rd_format_sink(const struct rd_format *f, unsigned top)
{
	if (top)
		return rd_sink_top(top, f->arg);
	return f->make(f->arg);
}

void rd_formats_names(FILE *o, unsigned indent, unsigned width)
{
	unsigned col = indent;

	for (size_t i = 0; i < NFORMATS; i++) {
		const char *n = formats[i].name;
		unsigned len = (unsigned)strlen(n) + (i ? 0 : 10) + 1; /* " (default)," */

		if (!formats[i].help)
			continue;
		if (col > indent && col + 1 + len > width) {
			fprintf(o, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', o);
			col++;
		}
		fprintf(o, "%s%s%s", n, i ? "" : " (default)", i + 1 < NFORMATS ? "," : "");
		col += len;
	}
	fputc('\n', o);
}

void rd_formats_help(FILE *o)
{
	fputs("Formats:\n", o);
	for (size_t i = 0; i < NFORMATS; i++) {
		const char *h = formats[i].help, *nl;
		int w = (int)strlen(formats[i].name);

		if (!h)
			continue;
		fprintf(o, "  %s%*s", formats[i].name, w < 13 ? 14 - w : 1, "");
		for (; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(o, "%.*s\n%16s", (int)(nl - h), h, "");
		fprintf(o, "%s\n", h);
	}
}
