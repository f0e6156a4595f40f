/*
 * config.c - the environment variables librte.so reads.
 *
 * All are read with secure_getenv(): a set-uid/set-gid program is never
 * traced through the environment (its C API calls still work with the
 * defaults). A malformed value never stops the program: it gets the
 * default and one warning line on stderr.
 *
 * Also here: where the warning lines go (RTE_LOG), read when the library
 * is loaded:
 *   RTE_LOG=stderr (default)  fd 2, but only while it is still the file it
 *                             was at load (device and inode): a program that
 *                             closed fd 2 and reused the number for its own
 *                             data never finds our lines in it
 *   RTE_LOG=none              nowhere
 *   RTE_LOG=PATH              appended to PATH (made 0600 if missing;
 *                             opened per line, O_APPEND|O_CLOEXEC, so lines
 *                             of many processes interleave whole). A
 *                             relative PATH is taken from the working
 *                             directory at load.
 * Each line is "rte: <message>\n", written with one write().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir.h"
#include "shim.h"

/* ---- RTE_LOG ------------------------------------------------------------------ */

enum { LOG_UNSET = 0, LOG_STDERR, LOG_NONE, LOG_FILE };

static struct {
	int kind;            /* LOG_*, set once (load, or first line) */
	int err_ok;          /* fd 2 was open at load */
	dev_t dev;           /* ... and was this file */
	ino_t ino;
	char path[PATH_MAX]; /* LOG_FILE: absolute */
} g_log;

static void log_init(void)
{
	const char *s = secure_getenv("RTE_LOG");
	struct stat st;
	char cwd[PATH_MAX];
	int n;

	if (fstat(STDERR_FILENO, &st) == 0) {
		g_log.err_ok = 1;
		g_log.dev = st.st_dev;
		g_log.ino = st.st_ino;
	}
	if (!s || !*s || !strcmp(s, "stderr")) {
		g_log.kind = LOG_STDERR;
		return;
	}
	if (!strcmp(s, "none")) {
		g_log.kind = LOG_NONE;
		return;
	}
	if (s[0] == '/')
		n = snprintf(g_log.path, sizeof(g_log.path), "%s", s);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(g_log.path, sizeof(g_log.path), "%s/%s", cwd, s);
	else
		n = -1;
	/* A path we cannot spell goes nowhere (never to someone's fd 2). */
	g_log.kind = n < 0 || (size_t)n >= sizeof(g_log.path) ? LOG_NONE
	                                                       : LOG_FILE;
}

/* Before the other constructors of librte.so: the fd 2 of the start. */
__attribute__((constructor(101))) static void log_load(void)
{
	int saved = errno;

	if (!g_log.kind)
		log_init();
	errno = saved;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* nothing sensible to do: the log is gone */
		p += w;
		n -= (size_t)w;
	}
}

void rte_log_line(const char *line, size_t n)
{
	struct stat st;
	int fd;

	if (!g_log.kind) /* called before our constructor ran */
		log_init();
	switch (g_log.kind) {
	case LOG_STDERR:
		if (g_log.err_ok && fstat(STDERR_FILENO, &st) == 0 &&
		    st.st_dev == g_log.dev && st.st_ino == g_log.ino)
			write_all(STDERR_FILENO, line, n);
		break;
	case LOG_FILE:
		fd = rte_fd_high(open(g_log.path,
		                      O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
		                              O_NOCTTY,
		                      0600));
		if (fd >= 0) {
			write_all(fd, line, n);
			close(fd);
		}
		break;
	default:
		break;
	}
}

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

void rte_config_read(struct rte_config *c)
{
	const char *dir = secure_getenv("OCAML_RUNTIME_EVENTS_DIR");

	memset(c, 0, sizeof(*c));
	c->log2_words = RTE_RING_LOG2_DEFAULT;
	c->rings = RTE_MAX_DOMAINS_DEFAULT;
	c->start = secure_getenv("OCAML_RUNTIME_EVENTS_START") != NULL;
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
		/* Not OCaml's working directory: see lib/common/rundir.h. */
		c->dir_default = 1;
		c->dir_too_long =
		        rte_rundir_path(secure_getenv("XDG_RUNTIME_DIR"),
		                        geteuid(), c->dir, sizeof(c->dir)) != 0;
	}
	read_runparam(c);
	read_rings(c);
	read_clock(c);
}
