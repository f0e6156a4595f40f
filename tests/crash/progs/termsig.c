/*
 * termsig MODE: death by, and handling of, signals whose default action
 * ends the process; the output must be the same with and without the
 * shim.
 *   termsig probe     print the disposition (DFL, IGN or handler) of
 *                     SIGHUP SIGINT SIGPIPE SIGTERM SIGUSR1 SIGUSR2, as
 *                     sigaction and signal() report it; exit 0.
 *   termsig mask      block SIGUSR1, raise it, take it with sigwaitinfo
 *                     (it must not kill), then raise SIGUSR2 (dies).
 *   termsig handler   install a SIGTERM handler, raise SIGTERM (handled),
 *                     restore SIG_DFL with signal(), print what
 *                     sigaction reports, raise SIGTERM (dies).
 *   termsig ignored   SIGHUP is ignored (by the caller): raise it, print
 *                     that it is still ignored; exit 0.
 *   termsig quit      raise SIGQUIT (dies, with a core dump if allowed).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t g_got;

static void on_sig(int sig)
{
	g_got = sig;
}

static const char *disp(void (*h)(int))
{
	return h == SIG_DFL ? "DFL" : h == SIG_IGN ? "IGN" : "handler";
}

static void probe(int sig, const char *name)
{
	struct sigaction old;
	void (*h)(int);

	sigaction(sig, NULL, &old);
	h = signal(sig, SIG_DFL);
	signal(sig, h);
	printf("%s sigaction %s signal %s\n", name, disp(old.sa_handler),
	       disp(h));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct sigaction sa;
	sigset_t set;
	siginfo_t si;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "probe")) {
		probe(SIGHUP, "SIGHUP");
		probe(SIGINT, "SIGINT");
		probe(SIGPIPE, "SIGPIPE");
		probe(SIGTERM, "SIGTERM");
		probe(SIGUSR1, "SIGUSR1");
		probe(SIGUSR2, "SIGUSR2");
		return 0;
	}
	if (!strcmp(mode, "mask")) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		raise(SIGUSR1);
		if (sigwaitinfo(&set, &si) == SIGUSR1)
			printf("took SIGUSR1 from the mask\n");
		raise(SIGUSR2);
		printf("not reached\n");
		return 1;
	}
	if (!strcmp(mode, "handler")) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sig;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		raise(SIGTERM);
		printf("handled %d\n", (int)g_got);
		printf("signal returned %s\n", disp(signal(SIGTERM, SIG_DFL)));
		sigaction(SIGTERM, NULL, &sa);
		printf("now %s\n", disp(sa.sa_handler));
		raise(SIGTERM);
		printf("not reached\n");
		return 1;
	}
	if (!strcmp(mode, "ignored")) {
		raise(SIGHUP);
		sigaction(SIGHUP, NULL, &sa);
		printf("SIGHUP still %s\n", disp(sa.sa_handler));
		return 0;
	}
	if (!strcmp(mode, "quit")) {
		raise(SIGQUIT);
		printf("not reached\n");
		return 1;
	}
	return 2;
}
