/*
 * ocamlver.h - which OCaml version's names rte-read uses for each file:
 * forced by --ocaml-version, else chosen from the file (rte/ocaml.h). The
 * choice is remembered per file path so that the formats can say it.
 *
 * Not thread-safe (rte-read is single-threaded).
 */
#ifndef RD_OCAMLVER_H
#define RD_OCAMLVER_H

#include "rte/ocaml.h"

/* Check a --ocaml-version argument: 0 if known, -1 if not. */
int rd_ocaml_force(const char *version);

/*
 * Choose the table for cursor c on the file at path (kept by the caller
 * for the life of the program), name c's ids with it, and remember the
 * choice. Returns 0, or -1 if out of memory (c still uses a table).
 */
int rd_ocaml_choose(rte_cursor *c, const char *path);

/* Name c's ids with the table chosen for path before (a second cursor on
 * a file), if any. Returns 0. */
int rd_ocaml_reuse(rte_cursor *c, const char *path);

/* The choice made for path (the same pointer or an equal string), or
 * NULL if none was. */
const struct rte_ocaml_choice *rd_ocaml_choice_of(const char *path);

/* "OCaml 5.2 names (sure: 812 of 812 phase nestings explained; 5.0-5.2
 * name these ids alike)" into buf. */
void rd_ocaml_describe(const struct rte_ocaml_choice *ch, char *buf, size_t cap);

void rd_ocaml_free(void);

#endif
