/*
 * signals.c - rte-read's signals (signals.h): SIGBUS on a ring file cut
 * short under us, SIGINT/SIGTERM that end --follow and --wait, SIGPIPE
 * ignored (EPIPE from write() instead).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "signals.h"
#include "status.h"

/* What the SIGBUS handler names; set by the reading thread only. */
static struct rd_out *out;
static const char *volatile peek_path;  /* file being peeked */
static rd_merge *volatile reading;      /* the merge being read */
static volatile sig_atomic_t stop;      /* the signal that asked us to stop */

void rd_signals_peek(const char *path)
{
	peek_path = path;
}

void rd_signals_reading(rd_merge *m)
{
	reading = m;
}

int rd_signals_stop(void)
{
	return (int)stop;
}

static void put_err(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

/* The kernel's answer to touching a page of a mapped file that was cut
 * short: say which file and leave with the "bad file" status. */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	const char *path = peek_path;

	(void)sig;
	(void)si;
	(void)uc;
	if (!path && reading) {
		int s = rd_merge_current(reading);

		if (s >= 0)
			path = rte_cursor_path(rd_merge_cursor(reading, (unsigned)s));
	}
	if (out)
		rd_out_flush_raw(out);
	put_err("rte-read: ");
	put_err(path ? path : "(ring file)");
	put_err(": file was truncated while being read (SIGBUS)\n");
	_exit(RD_EX_BADFILE);
}

static void on_stop(int sig)
{
	stop = sig;
}

/* --wait was ended by a signal before its input appeared: say so and end
 * by the same signal, as a shell expects of an interrupted command. */
void rd_die_of_stop(const char *what)
{
	int sig = (int)stop;

	fprintf(stderr, "rte-read: %s: interrupted by signal %d (%s) while waiting for it\n",
	        what, sig, strsignal(sig));
	fflush(NULL);
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

void rd_signals_setup(struct rd_out *o, int catch_stop)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL); /* EPIPE from write() instead */
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	out = o;
	sigaction(SIGBUS, &sa, NULL);
	if (catch_stop) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_stop;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
}
