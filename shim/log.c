/*
 * log.c - where librte.so's warning lines go (log.h): RTE_LOG, read when
 * the library is loaded:
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
 *
 * RTE_LOG is the one variable not parsed in config.c: the log sits below
 * config (config's warnings go through it), and must be read before
 * anything else of ours runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys.h"
#include "fd.h"
#include "log.h"

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

	if (rte_sys_fstat(STDERR_FILENO, &st) == 0) {
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

void rte_log_load(void)
{
	int saved = errno;

	if (!g_log.kind)
		log_init();
	errno = saved;
}

int rte_log_to_file(void)
{
	if (!g_log.kind)
		log_init();
	return g_log.kind == LOG_FILE;
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

static void vwarn(int quiet, const char *fmt, va_list ap)
{
	char buf[PATH_MAX + 256];
	int n;

	if (!g_log.kind)
		log_init();
	if (quiet && g_log.kind != LOG_FILE)
		return;
	memcpy(buf, "rte: ", 5);
	n = vsnprintf(buf + 5, sizeof(buf) - 6, fmt, ap);
	if (n < 0)
		return;
	n = 5 + (n < (int)sizeof(buf) - 6 ? n : (int)sizeof(buf) - 7);
	buf[n++] = '\n';
	rte_log_line(buf, (size_t)n);
}

void rte_warn(int *once, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	/* Relaxed: only decides who prints; nothing else is published. */
	if (!once || !__atomic_exchange_n(once, 1, __ATOMIC_RELAXED)) {
		va_start(ap, fmt);
		vwarn(0, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

void rte_note(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vwarn(1, fmt, ap);
	va_end(ap);
	errno = saved;
}
