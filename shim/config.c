/*
 * config.c - the environment variables librte.so reads.
 *
 * All are read with secure_getenv(): a set-uid/set-gid program is never
 * traced through the environment (its C API calls still work with the
 * defaults). A malformed value never stops the program: it gets the
 * default and one warning line on stderr.
 * RTE_LOG is log.c's (read at load, before anything else).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir.h"
#include "config.h"
#include "rte/format.h"
#include "log.h"

/* ---- the variables ----------------------------------------------------------- */

/* Parse a whole decimal number in [lo, hi]. Returns 0, or -1 for garbage
 * (empty, sign, trailing characters, overflow, out of range). */
static int parse_uint(const char *s, size_t n, unsigned lo, unsigned hi,
                      unsigned *out)
{
	unsigned long v = 0;

	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/*
 * OCAMLRUNPARAM (or CAMLRUNPARAM, as OCaml) is a comma-separated list of
 * options "<letter>=<value>"; only e=N (ring size 2^N words) concerns us.
 * OCaml would also accept a k/M/G suffix, which makes no sense for a log2
 * and is reported like any other garbage.
 */
static void read_runparam(struct rte_config *c)
{
	const char *p = secure_getenv("OCAMLRUNPARAM");

	if (!p)
		p = secure_getenv("CAMLRUNPARAM");
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n >= 2 && p[0] == 'e' && p[1] == '=' &&
		    parse_uint(p + 2, n - 2, RTE_RING_LOG2_MIN,
		               RTE_RING_LOG2_MAX, &c->log2_words) < 0) {
			c->log2_words = RTE_RING_LOG2_DEFAULT;
			rte_warn(NULL,
			         "OCAMLRUNPARAM: e=%.*s is not a number from %u "
			         "to %u; using e=%u",
			         (int)(n - 2 > 32 ? 32 : n - 2), p + 2,
			         RTE_RING_LOG2_MIN, RTE_RING_LOG2_MAX,
			         RTE_RING_LOG2_DEFAULT);
		}
		p = end ? end + 1 : NULL;
	}
}

static void read_rings(struct rte_config *c)
{
	const char *s = secure_getenv("RTE_RINGS");

	if (s && parse_uint(s, strlen(s), 1, RTE_RINGS_MAX, &c->rings) < 0) {
		c->rings = RTE_MAX_DOMAINS_DEFAULT;
		rte_warn(NULL, "RTE_RINGS=%.32s is not a number from 1 to %u; "
		         "using %u", s, RTE_RINGS_MAX, RTE_MAX_DOMAINS_DEFAULT);
	}
}

static void read_clock(struct rte_config *c)
{
	const char *s = secure_getenv("RTE_CLOCK");

	if (!s || !*s || !strcmp(s, "auto") || !strcmp(s, "tsc"))
		return;
	if (!strcmp(s, "monotonic"))
		c->force_monotonic = 1;
	else
		rte_warn(NULL, "RTE_CLOCK=%.32s is not auto, tsc or monotonic; "
		         "using auto", s);
}

int rte_config_start_at_load(void)
{
	return secure_getenv("OCAML_RUNTIME_EVENTS_START") != NULL;
}

void rte_config_read(struct rte_config *c)
{
	const char *dir = secure_getenv("OCAML_RUNTIME_EVENTS_DIR");

	memset(c, 0, sizeof(*c));
	c->log2_words = RTE_RING_LOG2_DEFAULT;
	c->rings = RTE_MAX_DOMAINS_DEFAULT;
	c->preserve = secure_getenv("OCAML_RUNTIME_EVENTS_PRESERVE") != NULL;
	c->trace_ocaml = secure_getenv("RTE_TRACE_OCAML") != NULL;
	if (dir && *dir) {
		size_t n = strlen(dir);

		/* Too long a directory is reported when the file is made. */
		c->dir_too_long = n >= sizeof(c->dir);
		if (c->dir_too_long)
			n = sizeof(c->dir) - 1;
		memcpy(c->dir, dir, n);
		c->dir[n] = '\0';
	} else {
		/* Not OCaml's working directory: see common/format/rundir.h. */
		const char *xdg = secure_getenv("XDG_RUNTIME_DIR");

		c->dir_default = 1;
		c->dir_uid_named = !xdg || xdg[0] != '/';
		c->dir_too_long = rte_rundir_path(xdg, geteuid(), c->dir,
		                                  sizeof(c->dir)) != 0;
	}
	read_runparam(c);
	read_rings(c);
	read_clock(c);
}

unsigned rte_config_backtrace_parse(const char *s)
{
	unsigned m = RTE_BTM_CRASH;

	if (!s || !*s || !strcmp(s, "0") || !strcmp(s, "crash"))
		return m;
	if (!strcmp(s, "off") || !strcmp(s, "none"))
		return 0;
	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == 3 && !strncmp(s, "all", 3))
			m |= RTE_BTM_FORK | RTE_BTM_THREAD;
		else if (n == 4 && !strncmp(s, "fork", 4))
			m |= RTE_BTM_FORK;
		else if (n == 6 && !strncmp(s, "thread", 6))
			m |= RTE_BTM_THREAD;
		else if (!(n == 5 && !strncmp(s, "crash", 5)))
			rte_warn(NULL, "RTE_BACKTRACE: ignoring '%.*s' (crash, "
			         "fork, thread, all or off)",
			         (int)(n > 32 ? 32 : n), s);
		s += n;
		if (*s == ',')
			s++;
	}
	return m;
}

unsigned rte_config_backtrace(void)
{
	return rte_config_backtrace_parse(secure_getenv("RTE_BACKTRACE"));
}
