/*
 * prof/parse.h - RTE_PROFILE and RTE_PROFILE_SIGNAL read (prof/parse.c; a
 * leaf of prof/, for profiler.c only).
 */
#ifndef RTE_SHIM_PROF_PARSE_H
#define RTE_SHIM_PROF_PARSE_H

#pragma GCC visibility push(hidden)

#define RTE_PROF_HZ_MAX 100000u

/* RTE_PROFILE: the rate, 0 (off) when unset or empty; a bad value is one
 * warning and 0. */
unsigned rte_prof_parse_hz(const char *s);
/* RTE_PROFILE_SIGNAL: "N", "RTMIN+N", "RTMAX-N" (with or without SIG),
 * "PROF", "VTALRM", "USR1", "USR2"; unset or empty: SIGRTMAX-2. Returns
 * the signal, or 0 if s names none of them. */
int rte_prof_parse_sig(const char *s);

#pragma GCC visibility pop

#endif
