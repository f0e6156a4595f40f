/*
 * prof/parse.c - the CPU profiler's settings read from the environment:
 * the rate (RTE_PROFILE) and the signal (RTE_PROFILE_SIGNAL). See
 * prof/profiler.c for what they do.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "parse.h"

unsigned rte_prof_parse_hz(const char *s)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > RTE_PROF_HZ_MAX || *s == '-') {
		rte_warn(NULL, "RTE_PROFILE: '%.32s' is not a rate from 0 to "
		         "%u Hz; profiling is off", s, RTE_PROF_HZ_MAX);
		return 0;
	}
	return (unsigned)v;
}

/* "N", "RTMIN+N", "RTMAX-N" (with or without SIG), "PROF", "VTALRM",
 * "USR1", "USR2". Returns the signal or 0. */
int rte_prof_parse_sig(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {{"PROF", SIGPROF}, {"VTALRM", SIGVTALRM},
	             {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
	char *end;
	long v;

	if (!s || !*s)
		return SIGRTMAX - 2;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].sig;
	if (!strncmp(s, "RTMIN", 5) || !strncmp(s, "RTMAX", 5)) {
		int base = s[4] == 'N' ? SIGRTMIN : SIGRTMAX;

		s += 5;
		v = *s ? strtol(s, &end, 10) : 0;
		if (*s && (*end || (*s != '+' && *s != '-')))
			return 0;
		v += base;
	} else {
		v = strtol(s, &end, 10);
		if (*end)
			return 0;
	}
	if (v >= SIGRTMIN && v <= SIGRTMAX)
		return (int)v;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (v == names[i].sig)
			return (int)v;
	return 0;
}
