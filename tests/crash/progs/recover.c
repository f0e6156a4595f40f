/*
 * recover: programs with their own crash handlers.
 *   recover sigaction  SIGSEGV handler (sigaction, SA_SIGINFO) that leaves
 *                      with siglongjmp, three times; then SIGFPE the same
 *                      way; exits 0.
 *   recover signal     the same with a handler set by signal().
 *   recover reraise    a handler that says so, restores SIG_DFL and
 *                      raises the signal again (dies by SIGSEGV).
 *   recover exit       a handler that calls _exit(3).
 *   recover late       as sigaction, but the handlers are installed before
 *                      tracing starts (rte_start(), when librte.so is
 *                      preloaded): the shim must find and chain them.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* librte.so's, when it is preloaded; NULL otherwise. */
extern int rte_start(void) __attribute__((weak));

static sigjmp_buf g_env;
static volatile int *volatile g_null;
static volatile int g_zero, g_seven = 7;
static volatile sig_atomic_t g_info_ok;

void fault_here(int x);

void fault_here(int x)
{
	*g_null = x;
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	g_info_ok = (sig == SIGSEGV && si->si_addr == NULL) ||
	            (sig == SIGFPE && si->si_code == FPE_INTDIV);
	siglongjmp(g_env, sig);
}

static void on_plain(int sig)
{
	siglongjmp(g_env, sig);
}

static void on_reraise(int sig)
{
	static const char msg[] = "handler: re-raising\n";

	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(9);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_exit3(int sig)
{
	static const char msg[] = "handler: exiting 3\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(9);
	_exit(3);
}

static int recover_loop(void)
{
	for (int i = 0; i < 3; i++) {
		int sig = sigsetjmp(g_env, 1);

		if (sig == 0) {
			fault_here(i);
			printf("not reached\n");
			return 1;
		}
		printf("recovered from signal %d (%d), info %s\n", sig, i,
		       g_info_ok ? "ok" : "n/a");
	}
	if (sigsetjmp(g_env, 1) == 0)
		printf("%d\n", g_seven / g_zero);
	else
		printf("recovered from SIGFPE\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sigaction";
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (!strcmp(mode, "sigaction")) {
		sa.sa_sigaction = on_info;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGFPE, &sa, NULL);
		/* The old action reads back as what we set. */
		sigaction(SIGSEGV, NULL, &old);
		printf("handler reads back: %s\n",
		       old.sa_sigaction == on_info ? "yes" : "no");
		return recover_loop();
	}
	if (!strcmp(mode, "late")) {
		sa.sa_sigaction = on_info;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGFPE, &sa, NULL);
		if (rte_start)
			rte_start();
		sigaction(SIGSEGV, NULL, &old);
		printf("handler reads back: %s\n",
		       old.sa_sigaction == on_info ? "yes" : "no");
		return recover_loop();
	}
	if (!strcmp(mode, "signal")) {
		signal(SIGSEGV, on_plain);
		printf("previous of second signal(): %s\n",
		       signal(SIGSEGV, on_plain) == on_plain ? "same" : "other");
		signal(SIGFPE, on_plain);
		return recover_loop();
	}
	if (!strcmp(mode, "reraise"))
		signal(SIGSEGV, on_reraise);
	else
		signal(SIGSEGV, on_exit3);
	printf("faulting\n");
	fflush(stdout);
	fault_here(1);
	return 0;
}
