/*
 * config.h - the environment variables librte.so reads (a leaf: depends
 * only on log.h, for its warnings). Every variable but RTE_LOG (log.c) is
 * parsed here and nowhere else.
 */
#ifndef RTE_SHIM_CONFIG_H
#define RTE_SHIM_CONFIG_H

#include <limits.h>

#pragma GCC visibility push(hidden)

/* Most rings a file can have (RTE_RINGS). */
#define RTE_RINGS_MAX 4096u

struct rte_config {
	int preserve;        /* OCAML_RUNTIME_EVENTS_PRESERVE is set */
	int force_monotonic; /* RTE_CLOCK=monotonic */
	int trace_ocaml;     /* RTE_TRACE_OCAML is set */
	unsigned log2_words; /* OCAMLRUNPARAM e=N */
	unsigned rings;      /* RTE_RINGS */
	int dir_too_long;    /* OCAML_RUNTIME_EVENTS_DIR >= PATH_MAX bytes */
	int dir_default;     /* unset or empty: dir is common/format/rundir.h's */
	int dir_uid_named;   /* dir_default, named for our euid (no usable
	                        XDG_RUNTIME_DIR): not ours means planted */
	char dir[PATH_MAX];  /* OCAML_RUNTIME_EVENTS_DIR, or the default */
};

/* Read the environment into *c (defaults for anything unset); a malformed
 * value gets its default and one "rte: " warning line. Not signal-safe. */
void rte_config_read(struct rte_config *c);

/* 1 if tracing starts when the library is loaded
 * (OCAML_RUNTIME_EVENTS_START is set). */
int rte_config_start_at_load(void);

/* RTE_BACKTRACE bits */
#define RTE_BTM_CRASH 1u
#define RTE_BTM_FORK 2u
#define RTE_BTM_THREAD 4u

/* RTE_BACKTRACE as RTE_BTM_* bits: unset, empty, "0" or "crash" is
 * RTE_BTM_CRASH; "off"/"none" is 0; else a comma list of crash, fork,
 * thread, all (an unknown word gets one warning and is ignored).
 * rte_config_backtrace_parse() parses s (NULL: unset). Not signal-safe. */
unsigned rte_config_backtrace(void);
unsigned rte_config_backtrace_parse(const char *s);

#pragma GCC visibility pop

#endif
