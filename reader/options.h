/*
 * options.h - rte-read's options: --help's text, the parsed options, and
 * the one-line usage error. Not thread-safe (getopt_long).
 */
#ifndef RD_OPTIONS_H
#define RD_OPTIONS_H

#include <stdio.h>

#include "filter.h"

struct rd_opts {
	const char *format, *output, *dir;
	const char *prof_span;          /* --span */
	int prof_which, prof_by_thread; /* --profile, --by-thread */
	int follow, wait;
	int clean, dry_run; /* --clean [--dry-run] */
	double wait_secs; /* < 0: forever */
	char **inputs;
	int ninputs;
	unsigned top;     /* --top N (reader/top.c), 0: not asked */
};

/* Print --help's text: usage, options, the formats (from the table of
 * commands.h), exit codes. */
void rd_usage_print(FILE *o);

/*
 * Parse argv into *o (zeroed by the caller) and the filters into *f
 * (rd_filter_init'ed). --help prints rd_usage_print()'s text and exits. Returns 0,
 * or RD_EX_USAGE after saying why (rd_usage_error).
 */
int rd_options_parse(int argc, char **argv, struct rd_opts *o,
                     struct rd_filter *f);

/* "rte-read: <fmt with arg> (try 'rte-read --help')"; returns RD_EX_USAGE. */
int rd_usage_error(const char *fmt, const char *arg);

#endif
