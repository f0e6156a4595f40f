/*
 * commands.h - rte-read's table of subcommands and of output formats (as
 * git's command table): main.c looks a word up here and does what its row
 * says; it never compares a command or format name itself. --help's list
 * of formats is printed from the same rows (rd_formats_help), so the two
 * cannot disagree.
 *
 * Not thread-safe concerns: the tables are constant.
 */
#ifndef RD_COMMANDS_H
#define RD_COMMANDS_H

#include <stdio.h>

#include "sinks.h"

/* A subcommand: a first word (`rte-read diff ...`) or an option that
 * takes the whole command line wherever it is (`--serve`, `--push`). */
struct rd_command {
	const char *name;
	int (*main)(int argc, char **argv); /* argv[0] is the word itself */
	int anywhere;                        /* an option: found anywhere */
};

/* The subcommand that argv names, or NULL (then: read INPUTs into a
 * format). */
const struct rd_command *rd_command_find(int argc, char **argv);

/* What a format needs of the read loop. */
enum {
	RD_NEED_ORDER = 1,  /* every event in timeline order (an ordered
	                       merge); without it, ring after ring (a
	                       summary of files: the merge's runs) */
	RD_NEED_CRASH = 2,  /* the crash recorder (symbols, and the second
	                       pass that writes crash reports) */
	RD_WARN_LOST = 4,   /* warn on stderr of lost words (a format that
	                       shows no total of them itself) */
	RD_WITH_TOP = 8,    /* the --top view takes this format (text, json) */
	RD_TOP_ONLY = 16,   /* only with --top */
};

struct rd_format {
	const char *name;
	/* The sink, given `arg`; NULL if out of memory. */
	struct rd_sink *(*make)(int arg);
	int arg;
	unsigned needs;     /* RD_NEED_*, RD_WARN_LOST, RD_WITH_TOP, ... */
	const char *help;   /* --help's description, lines after the first
	                       indented by 16 spaces; NULL: not listed */
};

/* The row of format `name`, or NULL if there is none. */
const struct rd_format *rd_format_find(const char *name);

/* The sink of format f, with --top n (0: none; the format must have
 * RD_WITH_TOP). NULL if out of memory. */
struct rd_sink *rd_format_sink(const struct rd_format *f, unsigned top);

/* --help: "text (default), jsonl, ..." wrapped at `width` columns, every
 * line after the first indented by `indent`; and the "Formats:" section. */
void rd_formats_names(FILE *o, unsigned indent, unsigned width);
void rd_formats_help(FILE *o);

#endif
