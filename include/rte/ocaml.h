/*
 * rte/ocaml.h - the names of OCaml's runtime phase and counter ids, one
 * table per OCaml 5 version, and the choice of a table for a file.
 *
 * The file format's version word is 1 in every OCaml 5 release, but the
 * ids are not stable: 5.3 inserted major_memprof_roots after
 * major_mark_roots (every later phase moved by one) and more memprof
 * phases after it; 5.1 and 5.2, 5.3 and later appended phases and
 * counters. A reader that names ids with the wrong table prints wrong
 * names and computes wrong GC figures.
 *
 * Tables, from runtime/caml/runtime_events.h and the names of
 * otherlibs/runtime_events/runtime_events.ml of ocaml/ocaml:
 *   5.0     tag 5.0.0
 *   5.1     tags 5.1.0 and 5.1.1 (same enums)
 *   5.2     tag 5.2.0
 *   5.3     tag 5.3.0-alpha1 and branch 5.3 at 5.3.0+dev4 (same enums;
 *           the 5.3.0 release's source was not available here)
 *   5.4dev  trunk commit fd41e1ab55 (2024-10-24, 5.4.0+dev0): adds
 *           empty_minor. Later releases (5.4.0, 5.5: minor_ephe_clean,
 *           word counters) are not covered: their ids beyond these tables
 *           are printed as phase_N / counter_N, never guessed.
 *
 * Everything here is pure and thread-safe except rte_ocaml_detect(),
 * which opens its own cursor on the file (see rte/consumer.h).
 */
#ifndef RTE_OCAML_H
#define RTE_OCAML_H

#include "rte/consumer.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rte_ocaml_table {
	const char *version;   /* "5.0", "5.1", "5.2", "5.3", "5.4dev" */
	const char *source;    /* where the names were read */
	const char *const *phases;
	unsigned nphases;
	const char *const *counters;
	unsigned ncounters;
};

/* The tables, oldest first; *n gets their number. */
const struct rte_ocaml_table *rte_ocaml_tables(unsigned *n);

/* The table of "5.x" ("5.1.1" and "5.4" are accepted: the table of their
 * minor version), or NULL if none is known. */
const struct rte_ocaml_table *rte_ocaml_table(const char *version);

/* The table of OCaml 5.2, the one rte's own files use; the default. */
const struct rte_ocaml_table *rte_ocaml_default(void);

enum rte_ocaml_sure {
	RTE_OCAML_FORCED = 0, /* --ocaml-version */
	RTE_OCAML_SURE,       /* one table explains the trace, others do not */
	RTE_OCAML_LIKELY,     /* the best table, but others are close */
	RTE_OCAML_GUESS,      /* no evidence (no nested runtime phases): default */
};

struct rte_ocaml_choice {
	const struct rte_ocaml_table *table;
	enum rte_ocaml_sure sure;
	/* The oldest and newest tables that give the same names as `table` to
	 * every id seen in the file ("5.0" .. "5.2"). */
	const char *same_from, *same_to;
	uint64_t nestings, explained; /* phase nestings read, and explained by table */
	uint64_t best_other;          /* explained by the best table naming differently */
};

/*
 * Choose the table for the ring file at path: read (through a cursor of
 * its own, at most 65536 events per ring, and no more rings once 4096
 * phases begun inside another were seen: phases begun with none open do
 * not end the scan) which phase and counter ids occur and how phases
 * nest; tables that lack an id seen are
 * out; the one whose names make the most nestings a known one (minor
 * encloses minor_local_roots, stw_leader encloses minor, ...) wins; among
 * tables naming every id seen alike, 5.2 or else the newest (each names a
 * superset of the ids of the older ones, so an id beyond the part read
 * is still named). Fills
 * *out and returns RTE_OK, or a negative error if the file cannot be read
 * (then *out is the default table, RTE_OCAML_GUESS).
 */
int rte_ocaml_detect(const char *path, struct rte_ocaml_choice *out);

/* How well table t (chosen elsewhere: from the executable) fits the trace
 * that rte_ocaml_detect_fit() read. */
struct rte_ocaml_fit {
	uint64_t explained; /* phase nestings t explains (of out->nestings) */
	int covers;         /* t names every phase and counter id seen */
	int same;           /* t names every id seen as out->table does */
	int runtime_ids;    /* any runtime phase or counter id was seen */
};

/* rte_ocaml_detect(), and how table t fits the same trace (*fit, if fit is
 * not NULL; with t NULL, only runtime_ids is set). */
int rte_ocaml_detect_fit(const char *path, const struct rte_ocaml_table *t,
                         struct rte_ocaml_choice *out, struct rte_ocaml_fit *fit);

/* "sure", "likely", "guess" or "forced". */
const char *rte_ocaml_sure_name(enum rte_ocaml_sure s);

/* ---- the OCaml runtime of an executable ------------------------------- */

enum rte_ocaml_exe_how {
	RTE_OCAML_EXE_NONE = 0,
	RTE_OCAML_EXE_RUNTIME_STRING, /* "The OCaml runtime, version 5.2.0"
	                                 (bytecode runtime: ocamlrun -version) */
	RTE_OCAML_EXE_SYS_VERSION,    /* Sys.ocaml_version, found between the
	                                 symbols of Stdlib__Sys's data */
	RTE_OCAML_EXE_DATA_STRING,    /* the one string constant in .data shaped
	                                 like Sys.ocaml_version (no symbols) */
	RTE_OCAML_EXE_SYMBOLS,        /* runtime functions new in a release:
	                                 the minor version only */
};

struct rte_ocaml_exe {
	char version[48]; /* "5.2.0", "5.4.0+dev0-2024-08-25", "5.3" (symbols),
	                     "5.4 or later" (symbols) */
	enum rte_ocaml_exe_how how;
	const struct rte_ocaml_table *table; /* of version; NULL if no table
	                                        covers it (4.x, 5.5, ...) */
};

/*
 * Which OCaml runtime the ELF file at path embeds (an executable, or a
 * shared runtime: libcamlrun_shared.so, libasmrun_shared.so). What is
 * looked for, strongest first: the bytecode runtime's version string; the
 * native Sys.ocaml_version string inside Stdlib__Sys's data symbols; the
 * one such string in .data; runtime functions that appeared in one
 * release (common/consumer/ocamlexe.c has the facts and their sources). The
 * file is read, never mapped or run, with bounded reads (256 MiB at most).
 * Returns 1 and fills *out if it is an OCaml program, 0 if nothing says
 * so (not ELF64, not OCaml, OCaml without any of these), or a negative
 * error if it cannot be opened (RTE_ENOENT, RTE_EIO: also not a regular
 * file). Thread-safe.
 */
int rte_ocaml_exe_version(const char *path, struct rte_ocaml_exe *out);

/* "runtime version string", "Sys.ocaml_version", ... */
const char *rte_ocaml_exe_how_name(enum rte_ocaml_exe_how h);

/* Name the ids of c's events with table t from now on. Not thread-safe
 * with reads of c. */
void rte_cursor_use_ocaml(rte_cursor *c, const struct rte_ocaml_table *t);

#ifdef __cplusplus
}
#endif
#endif
