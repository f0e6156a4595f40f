/*
 * rte-run-exec.c - the process-control half of rte-run.
 *
 *   rte-run-exec [-E FILE] [-D DIR [-P]] [-e NAME=VALUE]... [-t ARG]... -- COMMAND [ARG]...
 *
 * Runs COMMAND as a child with NAME=VALUE added to its environment only
 * (replacing an entry of the same name),
 * forwards the signals rte-run receives to it, waits for it, then either
 * exits with its status (no -t) or execs the program made of the -t
 * arguments with one more argument that describes how COMMAND ended:
 *
 *   exit:N:PID        COMMAND (pid PID) called exit(N)
 *   signal:N:PID      COMMAND was killed by signal N
 *   noexec:N:PID      COMMAND could not be executed (N is 126, or 127
 *                     when it was not found; the reason is on stderr)
 *
 * rte-run (a shell script) execs this program, which execs the script
 * again to read the trace: the same pid runs the whole time, so a signal a
 * harness sends to "rte-run" always reaches the process that forwards it.
 * A shell cannot do this part: its background jobs ignore SIGINT, and it
 * cannot tell a Ctrl-C the command already got from the terminal from a
 * kill aimed at rte-run alone (siginfo's si_code can).
 *
 * Forwarding: SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, unless
 * ignored when we started (then the command inherits the ignore, as it
 * would without rte-run). A signal the kernel generated (si_code
 * SI_KERNEL: the terminal's Ctrl-C, Ctrl-\ or hang-up) reached the whole
 * foreground process group, the command included, so it is not sent a
 * second time, unless the command left our process group (setsid,
 * setpgid); neither is one the command sent itself (kill(0, sig)).
 *
 * -E FILE: COMMAND's environment is read from FILE (NUL-separated
 * entries, as in /proc/PID/environ), which is then removed, instead of
 * being ours. (A file, not an inherited descriptor: every descriptor the
 * command inherits is the caller's.) rte-run passes the environment it
 * was started with this way: the
 * shell that runs rte-run drops entries whose names are not identifiers
 * (bash's exported functions, BASH_FUNC_f%%) from the commands it runs,
 * so COMMAND would not get them otherwise. Without -E, ours is used.
 *
 * -D DIR: the live drain (drain.h): once COMMAND is forked, a thread
 * follows the ring files COMMAND's tree writes in DIR/.rte-live and
 * keeps their captures in DIR; when COMMAND has ended (and nothing more
 * is forwarded to its pid), the last captures are written before the -t
 * program runs, and what the drain missed is said on standard error.
 * The drain never changes COMMAND's outcome. Its captures are packed
 * (pack.h) where it pays; -P: never (plain ring files, for consumers
 * other than librteconsumer).
 *
 * SIGPIPE: ignored here (a message written to a standard error whose
 * reader is gone fails instead of killing us, so the status and the
 * clean-up are not lost), and so in the next stage too; COMMAND gets the
 * disposition we were started with.
 *
 * Exit status without -t: COMMAND's, 128+N if it was killed by signal N,
 * 126 if it could not be executed, 127 if it was not found, 125 if this
 * program could not run it at all (bad usage, fork failed).
 *
 *   rte-run-exec --check-push URL JOB INSTANCE [NAME=VALUE]...
 *
 * rte-run's --push, --job, --instance ("": not given) and --label,
 * checked before COMMAND runs by the
 * rules rte-read --push applies at the end (common/push/pushgw.h): exit 0
 * if rte-read would take them, else 1 with the reason on standard output
 * (rte-run's usage error); 125 on bad usage.
 *
 *   rte-run-exec --tmp-root
 *
 * prints the directory rte-run makes its temporary directory in when
 * TMPDIR is unset: the root of librte.so's default directory
 * (common/format/rundir.h: /dev/shm where /tmp is not a tmpfs and
 * /dev/shm is a writable one, else /tmp), so that the ring files a
 * traced tree maps and the drain reads cost no disk, journal or
 * writeback. Exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drain.h"
#include "pushgw.h"
#include "rundir.h"

#define EX_SELF 125
#define EX_NOEXEC 126
#define EX_NOTFOUND 127

static const int fwd_sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };
#define NFWD (sizeof fwd_sigs / sizeof fwd_sigs[0])

/* The child's pid, read by the signal handler (0: no child to forward
 * to). Written only while the forwarded signals are blocked or after the
 * child is gone; volatile because the handler reads it asynchronously. */
static volatile pid_t g_child;
/* Which of fwd_sigs we installed a handler for (not ignored at start). */
static int g_handled[NFWD];
/* SIGPIPE's disposition when we started: the command's. */
static struct sigaction g_pipe_old;

struct args {
	char **env;    /* NAME=VALUE for the command, NULL-terminated */
	const char *env_file; /* -E: the command's base environment, or NULL */
	char **then;   /* the program to exec afterwards, NULL-terminated */
	char **cmd;    /* the command */
	const char *drain_dir; /* -D: drain DIR/.rte-live into DIR, or NULL */
	int plain;     /* -P: the drain's captures not packed */
	size_t nthen;
};

/*
 * Forward sig to the command, unless it has it already: a signal the
 * kernel generated for the terminal's foreground group (si_code
 * SI_KERNEL) reached the command too while it is still in our process
 * group, and one the command sent itself came from it. Async-signal-safe
 * (getpgid is a bare system call); preserves errno.
 */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	pid_t c = g_child;
	int saved = errno;

	(void)uc;
	if (c <= 0 || si->si_pid == c)
		return;
	if (si->si_code == SI_KERNEL && getpgid(c) == getpgrp())
		return;
	kill(c, sig);
	errno = saved;
}

/* Install the forwarding handlers for every signal not ignored now.
 * Returns 0 or -1 (errno set). */
static int install_handlers(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	/* No SA_RESTART: the read and the waitpid the signals can interrupt
	 * retry on EINTR themselves, and returning to user space lets a
	 * runtime that defers handlers to its next function boundary (as
	 * ThreadSanitizer's does) run this one now, not once the command has
	 * ended (a restarted waitpid never returns to it). */
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < NFWD; i++) {
		if (sigaction(fwd_sigs[i], NULL, &old) < 0)
			return -1;
		if (old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(fwd_sigs[i], &sa, NULL) < 0)
			return -1;
		g_handled[i] = 1;
	}
	return 0;
}

/* In the child, before exec: the handlers back to SIG_DFL (they would
 * become SIG_DFL at exec anyway, but a signal between the unblock and the
 * exec must not run our handler in the child). */
static void reset_handlers(void)
{
	for (size_t i = 0; i < NFWD; i++)
		if (g_handled[i])
			signal(fwd_sigs[i], SIG_DFL);
}

/* All of fd into a malloc'd buffer (NUL-terminated one past *len), then
 * fd closed. Returns NULL on a read error or out of memory. */
static char *read_all(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1), *nb;
	ssize_t r;

	while (buf) {
		if (n == cap) {
			nb = realloc(buf, 2 * cap + 1);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			buf[n] = '\0';
			*len = n;
			close(fd);
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	close(fd);
	return NULL;
}

/* 1 if entry (NAME=VALUE, or a bare NAME) has the name of setting
 * (NAME=VALUE). */
static int same_name(const char *entry, const char *setting)
{
	size_t n = (size_t)(strchr(setting, '=') - setting);

	return !strncmp(entry, setting, n) && (entry[n] == '=' || entry[n] == '\0');
}

/*
 * The command's environment: the -E entries (or ours), minus those the -e
 * settings replace, plus the settings. Built before the fork (the child
 * only execs). Returns a malloc'd NULL-terminated array, or NULL (errno
 * set) if the -E file cannot be read or memory is short. The -E file is
 * removed once read, or once it failed to be.
 */
static char **command_env(const struct args *a)
{
	extern char **environ;
	char *buf = NULL, **base = environ, **out;
	size_t len = 0, nbase = 0, nset = 0, k = 0;

	if (a->env_file) {
		int fd = open(a->env_file, O_RDONLY | O_CLOEXEC | O_NOCTTY);

		buf = fd < 0 ? NULL : read_all(fd, &len);
		unlink(a->env_file);
		if (!buf)
			return NULL;
		for (size_t i = 0; i < len; i++)
			nbase += buf[i] == '\0';
		nbase += len && buf[len - 1] != '\0';
	} else {
		while (base[nbase])
			nbase++;
	}
	while (a->env[nset])
		nset++;
	out = calloc(nbase + nset + 1, sizeof *out);
	if (!out)
		return NULL;
	for (size_t i = 0, at = 0; i < nbase; i++) {
		char *e = buf ? buf + at : base[i];
		size_t j;

		if (buf)
			at += strlen(e) + 1;
		for (j = 0; j < nset && !same_name(e, a->env[j]); j++)
			;
		if (j == nset && *e)
			out[k++] = e;
	}
	for (size_t j = 0; j < nset; j++)
		out[k++] = a->env[j];
	out[k] = NULL;
	return out; /* buf is referenced by out: kept until the exec */
}

/* The child: never returns. A failed exec writes its errno into
 * report_fd (close-on-exec: a successful exec closes it, unwritten). */
static void child(const struct args *a, char **env, const sigset_t *oldmask,
                  int report_fd)
{
	extern char **environ;
	ssize_t w;
	int e;

	reset_handlers();
	sigaction(SIGPIPE, &g_pipe_old, NULL);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	environ = env; /* execvp searches the command's own PATH */
	execvp(a->cmd[0], a->cmd);
	e = errno;
	signal(SIGPIPE, SIG_IGN); /* the message must not cost the report */
	w = write(report_fd, &e, sizeof e);
	(void)w;
	fprintf(stderr, "rte-run: %s: %s\n", a->cmd[0], strerror(e));
	_exit(e == ENOENT || e == ENOTDIR ? EX_NOTFOUND : EX_NOEXEC);
}

/* Wait for the child; returns its wait status. */
static int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror("rte-run: waitpid");
			return EX_SELF << 8;
		}
	return st;
}

static int usage(void)
{
	fputs("usage: rte-run-exec [-E FILE] [-D DIR [-P]] [-e NAME=VALUE]... [-t ARG]... -- COMMAND [ARG]...\n"
	      "       rte-run-exec --check-push URL JOB INSTANCE [NAME=VALUE]...\n"
	      "       rte-run-exec --tmp-root\n"
	      "(an internal helper of rte-run; see rte-run(1))\n", stderr);
	return EX_SELF;
}

/* --check-push URL JOB INSTANCE [NAME=VALUE]... (argv after it, argc of them):
 * see the top of this file. */
static int check_push(int argc, char **argv)
{
	struct rte_pushgw_url u;
	char why[600]; /* as rte-read's: a long URL is cut alike */

	if (argc < 3)
		return usage();
	if (rte_pushgw_url_parse(argv[0], &u, why, sizeof why) < 0) {
		printf("--push: %s\n", why);
		return 1;
	}
	if (!argv[1][0] || !rte_pushgw_value_ok(argv[1])) {
		puts("--job: want a non-empty UTF-8 name without control characters");
		return 1;
	}
	if (argv[2][0] && !rte_pushgw_value_ok(argv[2])) {
		puts("--instance: want a non-empty UTF-8 name without control characters");
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		if (!rte_pushgw_label_ok(argv[i])) {
			printf("--label: '%s': want %s\n", argv[i], RTE_PUSHGW_LABEL_RULE);
			return 1;
		}
	}
	return 0;
}

/* Split argv into the three lists, in place. Returns 0 or -1. */
static int parse(int argc, char **argv, struct args *a, char **envbuf,
                 char **thenbuf)
{
	size_t ne = 0;
	int i;

	a->nthen = 0;
	a->env_file = NULL;
	a->drain_dir = NULL;
	a->plain = 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-P")) {
			a->plain = 1;
			continue;
		}
		if (i + 1 >= argc)
			return -1;
		if (!strcmp(argv[i], "-e") && strchr(argv[i + 1], '=') &&
		    argv[i + 1][0] != '=')
			envbuf[ne++] = argv[++i];
		else if (!strcmp(argv[i], "-E") && !a->env_file)
			a->env_file = argv[++i];
		else if (!strcmp(argv[i], "-D") && !a->drain_dir)
			a->drain_dir = argv[++i];
		else if (!strcmp(argv[i], "-t"))
			thenbuf[a->nthen++] = argv[++i];
		else
			return -1;
	}
	if (i + 1 >= argc)
		return -1;
	envbuf[ne] = NULL;
	thenbuf[a->nthen] = NULL;
	a->env = envbuf;
	a->then = thenbuf;
	a->cmd = argv + i + 1;
	return 0;
}

/* 1 if the child reported a failed exec on fd (then closed). */
static int exec_failed(int fd)
{
	ssize_t n;
	int e;

	do
		n = read(fd, &e, sizeof e);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == (ssize_t)sizeof e;
}

/* -D DIR: the drain of DIR/.rte-live into DIR, started once the command
 * is forked (its thread blocks every signal). NULL without -D, or if it
 * cannot start (said; the ring files then stay in DIR/.rte-live). */
static struct drain *start_drain(const struct args *a)
{
	char live[4096], err[512];
	struct drain *d;

	if (!a->drain_dir)
		return NULL;
	snprintf(live, sizeof live, "%s/.rte-live", a->drain_dir);
	d = drain_start(a->drain_dir, live, !a->plain, err, sizeof err);
	if (!d)
		fprintf(stderr, "rte-run: no live drain: %s\n", err);
	return d;
}

/* The command is gone: the last reads, the captures, and what was lost. */
static void stop_drain(struct drain *d)
{
	struct drain_stats st;

	drain_stop(d, &st);
	if (st.lost)
		fprintf(stderr, "rte-run: the drain missed %llu words (a writer faster than the drain, "
		        "or a full disk): they are the captures' lost words\n",
		        (unsigned long long)st.lost);
	if (st.errors)
		fprintf(stderr, "rte-run: %llu ring file(s) could not be captured: kept as they are\n",
		        (unsigned long long)st.errors);
}

/* Exec the -t program with the outcome appended; returns only on error. */
static int exec_then(struct args *a, int st, pid_t pid, int noexec)
{
	char outcome[64];

	if (noexec)
		snprintf(outcome, sizeof outcome, "noexec:%d:%ld", WEXITSTATUS(st), (long)pid);
	else if (WIFSIGNALED(st))
		snprintf(outcome, sizeof outcome, "signal:%d:%ld", WTERMSIG(st), (long)pid);
	else
		snprintf(outcome, sizeof outcome, "exit:%d:%ld", WEXITSTATUS(st), (long)pid);
	a->then[a->nthen] = outcome;
	a->then[a->nthen + 1] = NULL;
	execvp(a->then[0], a->then);
	fprintf(stderr, "rte-run: %s: %s\n", a->then[0], strerror(errno));
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	char **envbuf, **thenbuf;
	sigset_t all, old;
	struct args a;
	char **env;
	pid_t pid;
	int st, noexec, report[2];
	struct sigaction ign;
	struct drain *drain;

	if (argc > 1 && !strcmp(argv[1], "--check-push"))
		return check_push(argc - 2, argv + 2);
	if (argc == 2 && !strcmp(argv[1], "--tmp-root"))
		return puts(rte_rundir_root()) < 0 ? EX_SELF : 0;
	envbuf = calloc((size_t)argc + 1, sizeof *envbuf);
	thenbuf = calloc((size_t)argc + 2, sizeof *thenbuf);
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &g_pipe_old);
	if (!envbuf || !thenbuf) {
		fputs("rte-run: out of memory\n", stderr);
		return EX_SELF;
	}
	if (parse(argc, argv, &a, envbuf, thenbuf) < 0)
		return usage();
	env = command_env(&a);
	if (!env) {
		fprintf(stderr, "rte-run: cannot read the environment to pass (%s): %s\n",
		        a.env_file ? a.env_file : "environ", strerror(errno));
		return EX_SELF;
	}
	/* Blocked from before the fork until the child's pid is known, so
	 * that no signal is lost in between: it is delivered on unblock. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (install_handlers() < 0) {
		perror("rte-run: sigaction");
		return EX_SELF;
	}
	if (pipe2(report, O_CLOEXEC) < 0) {
		perror("rte-run: pipe");
		return EX_SELF;
	}
	pid = fork();
	if (pid < 0) {
		perror("rte-run: fork");
		return EX_SELF;
	}
	if (pid == 0) {
		close(report[0]);
		child(&a, env, &old, report[1]);
	}
	close(report[1]);
	g_child = pid;
	drain = start_drain(&a);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Returns at the exec (EOF) or at its failure, long before the
	 * command ends: no deadlock with a command that waits for us. */
	noexec = exec_failed(report[0]);
	st = wait_child(pid);
	/* Its pid may be anyone's now: nothing more is forwarded to it
	 * (the last captures can take a while). */
	g_child = 0;
	if (!a.nthen) {
		if (drain)
			stop_drain(drain);
		return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	}
	/* The command is gone: stop forwarding. The signals stay blocked
	 * across the exec, so one that arrives now is delivered to the next
	 * stage (the script) once it has set its traps and can clean up,
	 * instead of killing us in between. */
	sigemptyset(&all);
	for (size_t i = 0; i < NFWD; i++)
		sigaddset(&all, fwd_sigs[i]);
	sigprocmask(SIG_BLOCK, &all, NULL);
	reset_handlers();
	if (drain)
		stop_drain(drain);
	return exec_then(&a, st, pid, noexec);
}
