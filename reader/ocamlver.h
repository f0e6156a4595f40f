/*
 * ocamlver.h - which OCaml version's names rte-read uses for each file,
 * and why. Precedence: --ocaml-version; else the executable (--exe PATH,
 * or /proc/PID/exe of the live writer of the file and the shared OCaml
 * runtime it maps); else the trace's phase nesting; else OCaml 5.2's
 * names (rte/ocaml.h). The choice is remembered per file path so that the
 * formats can say it.
 *
 * Not thread-safe (rte-read is single-threaded).
 */
#ifndef RD_OCAMLVER_H
#define RD_OCAMLVER_H

#include "rte/ocaml.h"

/* Check a --ocaml-version argument: 0 if known, -1 if not. */
int rd_ocaml_force(const char *version);

/* --exe PATH: take every file's OCaml version from this executable.
 * Returns 0, or -1 with why in msg if it is unreadable or not an OCaml 5
 * program. */
int rd_ocaml_exe_option(const char *path, char *msg, size_t cap);

enum rd_ocaml_from {
	RD_OCAML_FROM_OPTION,  /* --ocaml-version */
	RD_OCAML_FROM_EXE,     /* --exe, or the live writer's executable */
	RD_OCAML_FROM_TRACE,   /* the phase nesting */
	RD_OCAML_FROM_DEFAULT, /* nothing to judge by: 5.2 */
};

struct rd_ocaml_used {
	/* The table used and how sure: forced (--ocaml-version), sure (an
	 * executable's version string, or the nesting), likely (an
	 * executable's symbols, or the nesting), guess (the default). For an
	 * executable, nestings/explained/best_other count the trace's
	 * nestings, those the table used explains, and those explained by the
	 * best table that names the ids otherwise. */
	struct rte_ocaml_choice ch;
	enum rd_ocaml_from from;
	const char *exe;           /* the executable read, or NULL */
	struct rte_ocaml_exe exever; /* what it says (how NONE: nothing) */
	int exe_err;               /* it could not be read (rte error) */
	struct rte_ocaml_choice trace; /* the nesting's own choice */
};

/*
 * Choose the table for cursor c on the file at path (kept by the caller
 * for the life of the program), written by process pid (<= 0: unknown),
 * name c's ids with it, and remember the choice. Returns 0, or -1 if out
 * of memory (c still uses a table).
 */
int rd_ocaml_choose(rte_cursor *c, const char *path, long pid);

/*
 * The same choice, for a caller that keeps no record of it (the exporter,
 * which follows files for as long as it runs): name c's ids with it and
 * forget it. Safe to call from any one thread at a time (it reads only
 * the options set before).
 */
void rd_ocaml_name(rte_cursor *c, const char *path, long pid);

/* Name c's ids with the table chosen for path before (a second cursor on
 * a file), if any. Returns 0. */
int rd_ocaml_reuse(rte_cursor *c, const char *path);

/* The choice made for path (the same pointer or an equal string), or
 * NULL if none was. */
const struct rd_ocaml_used *rd_ocaml_choice_of(const char *path);

/* "OCaml 5.2 names (from the trace nesting, sure: 812 of 812 phase
 * nestings explained, ...)" or, when several releases name the ids seen
 * alike, "OCaml 5.3 to 5.4dev names (...)" into buf. */
void rd_ocaml_describe(const struct rd_ocaml_used *u, char *buf, size_t cap);

/* The release u names: the executable's or --ocaml-version's; from the
 * trace alone, the earliest of the releases that name every id seen
 * alike (u->ch.same_from; u->ch.same_to is the latest). The table that
 * names the events (u->ch.table) is the newest of them, or 5.2, as
 * rte_ocaml_detect() says. */
const char *rd_ocaml_release(const struct rd_ocaml_used *u);

/* "option", "executable", "trace" or "default". */
const char *rd_ocaml_from_name(enum rd_ocaml_from f);

void rd_ocaml_free(void);

#endif
